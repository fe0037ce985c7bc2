//===- Lexer.cpp - Tokenizer of the .dlc format ---------------------------===//

#include "dlc/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"

using namespace dlc;

static bool isIdentStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }

std::vector<Token> Lexer::lexAll() {
  std::vector<Token> tokens;
  while (true) {
    tokens.push_back(lexToken());
    TokenKind kind = tokens.back().kind;
    if (kind == TokenKind::Eof || kind == TokenKind::Error)
      return tokens;
  }
}

void Lexer::advance() {
  if (cur >= end)
    return;
  if (*cur == '\n') {
    ++line;
    col = 1;
  } else {
    ++col;
  }
  ++cur;
}

Token Lexer::makeToken(TokenKind kind, const char *start, SrcLoc loc) const {
  Token tok;
  tok.kind = kind;
  tok.text = llvm::StringRef(start, cur - start);
  tok.loc = loc;
  return tok;
}

Token Lexer::makeError(SrcLoc loc, std::string message,
                       std::string hint) const {
  Token tok;
  tok.kind = TokenKind::Error;
  tok.loc = loc;
  tok.message = std::move(message);
  tok.hint = std::move(hint);
  return tok;
}

Token Lexer::lexToken() {
  // Skip blanks and comments; newlines are tokens.
  while (!atEnd()) {
    char c = *cur;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      advance();
    } else if (c == '#') {
      while (!atEnd() && *cur != '\n')
        advance();
    } else {
      break;
    }
  }

  SrcLoc loc{line, col};
  const char *start = cur;
  if (atEnd())
    return makeToken(TokenKind::Eof, start, loc);

  char c = *cur;
  if (c == '\n') {
    advance();
    return makeToken(TokenKind::Newline, start, loc);
  }
  if (isIdentStart(c))
    return lexIdentifier();
  if (llvm::isDigit(c) || (c == '.' && llvm::isDigit(peekChar(1))) ||
      (c == '-' && (llvm::isDigit(peekChar(1)) ||
                    (peekChar(1) == '.' && llvm::isDigit(peekChar(2))))))
    return lexNumber();
  if (c == '"')
    return lexString();

  TokenKind punct;
  switch (c) {
  case '=':
    punct = TokenKind::Equal;
    break;
  case ':':
    punct = TokenKind::Colon;
    break;
  case ',':
    punct = TokenKind::Comma;
    break;
  case '(':
    punct = TokenKind::LParen;
    break;
  case ')':
    punct = TokenKind::RParen;
    break;
  case '[':
    punct = TokenKind::LBracket;
    break;
  case ']':
    punct = TokenKind::RBracket;
    break;
  default: {
    unsigned char uc = static_cast<unsigned char>(c);
    if (uc < 0x21 || uc > 0x7e) {
      std::string message = "unexpected byte 0x";
      message += llvm::hexdigit(uc >> 4);
      message += llvm::hexdigit(uc & 0xf);
      return makeError(loc, message,
                       "a .dlc file is plain ASCII text; non-ASCII text is "
                       "allowed only in comments and strings");
    }
    std::string message = "unexpected character '";
    message += c;
    message += "'";
    std::string hint;
    if (c == '-')
      hint = "negative numbers are written like -2.5; use sub(a, b) or "
             "neg(x) for arithmetic";
    else if (c == '+' || c == '*' || c == '/')
      hint = "there are no operators; use add, sub, mul or div";
    else if (c == '\'')
      hint = "strings use double quotes, e.g. \"tanh\"";
    else if (c == '.')
      hint = "names are made of letters, digits and '_'; a parameter is "
             "named by its layer, e.g. name=fc1";
    else
      hint = "names are made of letters, digits and '_'; '#' starts a "
             "comment";
    return makeError(loc, message, hint);
  }
  }
  advance();
  return makeToken(punct, start, loc);
}

Token Lexer::lexIdentifier() {
  SrcLoc loc{line, col};
  const char *start = cur;
  while (!atEnd() && isIdentChar(*cur))
    advance();
  return makeToken(TokenKind::Identifier, start, loc);
}

Token Lexer::lexNumber() {
  SrcLoc loc{line, col};
  const char *start = cur;
  bool valid = true;
  if (*cur == '-')
    advance();
  while (!atEnd() && llvm::isDigit(*cur))
    advance();
  if (!atEnd() && *cur == '.') {
    advance();
    if (atEnd() || !llvm::isDigit(*cur))
      valid = false;
    while (!atEnd() && llvm::isDigit(*cur))
      advance();
  }
  if (valid && !atEnd() && (*cur == 'e' || *cur == 'E')) {
    advance();
    if (!atEnd() && (*cur == '+' || *cur == '-'))
      advance();
    if (atEnd() || !llvm::isDigit(*cur))
      valid = false;
    while (!atEnd() && llvm::isDigit(*cur))
      advance();
  }
  // A number runs into a name or another '.', as in `3x` or `1.2.3`.
  if (!atEnd() && (isIdentChar(*cur) || *cur == '.'))
    valid = false;
  if (!valid) {
    while (!atEnd() &&
           (isIdentChar(*cur) || *cur == '.' || *cur == '+' || *cur == '-'))
      advance();
    return makeError(loc,
                     "invalid number '" +
                         llvm::StringRef(start, cur - start).str() + "'",
                     "numbers look like 784, -1, 0.5 or 1e-3");
  }
  return makeToken(TokenKind::Number, start, loc);
}

Token Lexer::lexString() {
  SrcLoc loc{line, col};
  advance(); // opening quote
  const char *start = cur;
  while (!atEnd() && *cur != '"' && *cur != '\n')
    advance();
  if (atEnd() || *cur != '"')
    return makeError(loc, "unterminated string",
                     "close the string with '\"' on the same line");
  Token tok = makeToken(TokenKind::String, start, loc);
  advance(); // closing quote
  return tok;
}
