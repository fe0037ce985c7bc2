//===- Lexer.h - Tokenizer of the .dlc format -------------------*- C++ -*-===//
//
// Splits a `.dlc` buffer into tokens with their line and column. Newlines are
// tokens (one statement per line); `#` comments and other whitespace are
// skipped. A malformed token becomes an Error token that carries the message
// and hint; lexing stops there.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_LEXER_H
#define DLC_FRONTEND_LEXER_H

#include "dlc/Frontend/AST.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace dlc {

enum class TokenKind {
  Identifier, // [A-Za-z_][A-Za-z0-9_]*
  Number,     // 784, -1, 0.5, .5, 1e-3
  String,     // "tanh" (text excludes the quotes)
  Equal,      // =
  Colon,      // :
  Comma,      // ,
  LParen,     // (
  RParen,     // )
  LBracket,   // [
  RBracket,   // ]
  Newline,
  Eof,
  Error,
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  /// The token's spelling (for a string, without the quotes).
  llvm::StringRef text;
  SrcLoc loc;
  /// For Error tokens: what is wrong, and how to fix it.
  std::string message;
  std::string hint;

  bool is(TokenKind k) const { return kind == k; }
};

class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer)
      : cur(buffer.begin()), end(buffer.end()) {
    // Skip a UTF-8 byte order mark; columns still count its bytes, like
    // llvm::SourceMgr does.
    if (buffer.starts_with("\xEF\xBB\xBF"))
      for (int i = 0; i < 3; ++i)
        advance();
  }

  /// Lexes the whole buffer. The last token is Eof, or an Error token.
  std::vector<Token> lexAll();

private:
  Token lexToken();
  Token lexIdentifier();
  Token lexNumber();
  Token lexString();
  Token makeToken(TokenKind kind, const char *start, SrcLoc loc) const;
  Token makeError(SrcLoc loc, std::string message, std::string hint) const;
  void advance();
  char peekChar(unsigned n = 0) const { return cur + n < end ? cur[n] : '\0'; }
  bool atEnd(unsigned n = 0) const { return cur + n >= end; }

  const char *cur;
  const char *end;
  unsigned line = 1;
  unsigned col = 1;
};

} // namespace dlc

#endif // DLC_FRONTEND_LEXER_H
