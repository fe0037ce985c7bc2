//===- Parser.cpp - Parser of the .dlc format -----------------------------===//

#include "dlc/Frontend/Parser.h"

#include "Suggest.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Error.h"

using namespace dlc;
using llvm::StringRef;
using llvm::Twine;

/// Deeper nesting than this is reported instead of risking the stack.
static constexpr unsigned kMaxExprDepth = 100;

static const char *const kStatementHint =
    "statements are 'model NAME', 'input NAME: DTYPE[...]', 'label NAME: "
    "DTYPE[...]', 'NAME = EXPR', 'output NAME, ...', 'loss EXPR' and 'optim "
    "KIND(...)'";

static const char *const kExprHint =
    "an expression is a name, a number, a string, a list like [1, 2] or a "
    "call like relu(x)";

static std::string describe(const Token &tok) {
  switch (tok.kind) {
  case TokenKind::Newline:
    return "end of line";
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::String:
    return "string \"" + tok.text.str() + "\"";
  default:
    return "'" + tok.text.str() + "'";
  }
}

static std::string where(SrcLoc loc) {
  return "line " + std::to_string(loc.line) + ", column " +
         std::to_string(loc.col);
}

namespace {
struct DepthGuard {
  explicit DepthGuard(unsigned &depth) : depth(depth) { ++depth; }
  ~DepthGuard() { --depth; }
  unsigned &depth;
};
} // namespace

Parser::Parser(std::vector<Token> tokens, DiagnosticReporter &diag)
    : tokens(std::move(tokens)), diag(diag) {
  if (this->tokens.empty())
    this->tokens.push_back(Token());
}

const Token &Parser::peek(unsigned n) const {
  return tokens[std::min(pos + n, tokens.size() - 1)];
}

void Parser::consume() {
  if (pos + 1 < tokens.size())
    ++pos;
}

std::nullptr_t Parser::error(SrcLoc loc, const Twine &message,
                             const Twine &hint) {
  diag.error(loc, message, hint);
  return nullptr;
}

std::nullptr_t Parser::unexpected(const Twine &expected, const Twine &hint) {
  const Token &tok = cur();
  if (tok.is(TokenKind::Error))
    return error(tok.loc, tok.message, tok.hint);
  return error(tok.loc, "expected " + expected + ", got " + describe(tok),
               hint);
}

std::unique_ptr<ModelAST> Parser::parseModel() {
  auto model = std::make_unique<ModelAST>();
  while (true) {
    if (cur().is(TokenKind::Newline)) {
      consume();
      continue;
    }
    if (cur().is(TokenKind::Eof))
      return model;
    std::unique_ptr<StmtAST> stmt = parseStatement();
    if (!stmt)
      return nullptr;
    model->statements.push_back(std::move(stmt));
  }
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

std::unique_ptr<StmtAST> Parser::parseStatement() {
  if (!cur().is(TokenKind::Identifier))
    return unexpected("a statement", kStatementHint);

  std::unique_ptr<StmtAST> stmt;
  StringRef keyword = cur().text;
  if (peek().is(TokenKind::Equal))
    stmt = parseBinding();
  else if (keyword == "model")
    stmt = parseModelStmt();
  else if (keyword == "input" || keyword == "label")
    stmt = parseTensorDecl();
  else if (keyword == "output")
    stmt = parseOutput();
  else if (keyword == "loss")
    stmt = parseLoss();
  else if (keyword == "optim")
    stmt = parseOptim();
  else
    return parseUnknownStatement();

  if (!stmt || !parseEndOfStatement())
    return nullptr;
  return stmt;
}

std::unique_ptr<StmtAST> Parser::parseUnknownStatement() {
  static const StringRef keywords[] = {"model",  "input", "label",
                                       "output", "loss",  "optim"};
  const Token &word = cur();
  StringRef best = closestMatch(word.text, keywords);
  if (!best.empty())
    return error(word.loc, "unknown statement '" + word.text + "'",
                 "did you mean '" + best + "'?");
  std::string name = word.text.str();
  consume();
  return unexpected("'=' after '" + name + "'", "bind a value with '" + name +
                                                    " = EXPR'; " +
                                                    kStatementHint);
}

bool Parser::parseEndOfStatement() {
  const Token &tok = cur();
  if (tok.is(TokenKind::Newline)) {
    consume();
    return true;
  }
  if (tok.is(TokenKind::Eof))
    return true;
  if (tok.is(TokenKind::RParen) || tok.is(TokenKind::RBracket)) {
    error(tok.loc, "unmatched '" + tok.text + "'",
          "remove it, or add the '" +
              Twine(tok.is(TokenKind::RParen) ? "(" : "[") + "' it closes");
    return false;
  }
  unexpected("end of line", "put each statement on its own line");
  return false;
}

std::unique_ptr<StmtAST> Parser::parseModelStmt() {
  SrcLoc loc = cur().loc;
  consume(); // 'model'
  if (!cur().is(TokenKind::Identifier))
    return unexpected("the model's name after 'model'",
                      "write e.g. 'model digits'; the name is an identifier "
                      "that prefixes the generated C symbols");
  const Token &name = cur();
  consume();
  return std::make_unique<ModelStmtAST>(loc, name.text, name.loc);
}

std::unique_ptr<StmtAST> Parser::parseTensorDecl() {
  SrcLoc loc = cur().loc;
  bool isLabel = cur().text == "label";
  std::string keyword = cur().text.str();
  std::string hint = "write '" + keyword +
                     " NAME: DTYPE[D0, D1, ...]', e.g. '" + keyword +
                     " x: f32[64, 784]'";
  consume();

  if (!cur().is(TokenKind::Identifier))
    return unexpected("a name after '" + keyword + "'", hint);
  const Token &name = cur();
  consume();
  if (!cur().is(TokenKind::Colon))
    return unexpected("':' after '" + name.text + "'", hint);
  consume();
  if (!cur().is(TokenKind::Identifier))
    return unexpected("a dtype after ':'",
                      "dtypes are f32, f16, bf16, f64, i64 and i32");
  const Token &dtype = cur();
  consume();
  if (!cur().is(TokenKind::LBracket))
    return unexpected("'[' after the dtype",
                      "write the shape in brackets, e.g. f32[64, 784]; a "
                      "scalar is f32[]");
  SrcLoc open = cur().loc;
  consume();

  std::vector<std::unique_ptr<NumberExprAST>> dims;
  if (cur().is(TokenKind::RBracket)) {
    consume();
  } else {
    while (true) {
      if (!cur().is(TokenKind::Number))
        return unexpected(
            "a dimension",
            "dimensions are positive integers, e.g. f32[64, 784]");
      std::unique_ptr<NumberExprAST> dim = parseNumber();
      if (!dim)
        return nullptr;
      dims.push_back(std::move(dim));
      if (cur().is(TokenKind::Comma)) {
        consume();
        continue;
      }
      if (cur().is(TokenKind::RBracket)) {
        consume();
        break;
      }
      if (cur().is(TokenKind::Newline) || cur().is(TokenKind::Eof))
        return error(cur().loc, "missing ']' to close the shape",
                     "the '[' at " + where(open) + " is not closed");
      return unexpected("',' or ']' in the shape",
                        "separate dimensions with ',', e.g. f32[64, 784]");
    }
  }
  return std::make_unique<TensorDeclStmtAST>(loc, isLabel, name.text, name.loc,
                                             dtype.text, dtype.loc,
                                             std::move(dims));
}

std::unique_ptr<StmtAST> Parser::parseBinding() {
  const Token &name = cur();
  if (name.text == "true" || name.text == "false")
    return error(name.loc, "'" + name.text + "' cannot be bound",
                 "true and false are reserved words; choose another name");
  consume(); // name
  consume(); // '='
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<BindStmtAST>(name.loc, name.text, std::move(value));
}

std::unique_ptr<StmtAST> Parser::parseOutput() {
  SrcLoc loc = cur().loc;
  consume(); // 'output'
  std::vector<OutputStmtAST::Entry> names;
  while (true) {
    if (!cur().is(TokenKind::Identifier))
      return unexpected(names.empty() ? "a name after 'output'"
                                      : "a name after ','",
                        "list the values to return, e.g. 'output logits, "
                        "probs'");
    names.push_back({cur().text.str(), cur().loc});
    consume();
    if (!cur().is(TokenKind::Comma))
      break;
    consume();
  }
  return std::make_unique<OutputStmtAST>(loc, std::move(names));
}

std::unique_ptr<StmtAST> Parser::parseLoss() {
  SrcLoc loc = cur().loc;
  consume(); // 'loss'
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<LossStmtAST>(loc, std::move(value));
}

std::unique_ptr<StmtAST> Parser::parseOptim() {
  SrcLoc loc = cur().loc;
  consume(); // 'optim'
  if (!cur().is(TokenKind::Identifier))
    return unexpected("an optimizer after 'optim'",
                      "e.g. 'optim adam(lr=1e-3)'; the optimizers are sgd, "
                      "adam and adamw");
  std::unique_ptr<CallExprAST> call;
  if (peek().is(TokenKind::LParen)) {
    call = parseCall();
    if (!call)
      return nullptr;
  } else {
    call = std::make_unique<CallExprAST>(cur().loc, cur().text,
                                         std::vector<ExprPtr>(),
                                         std::vector<KeywordArg>());
    consume();
  }
  return std::make_unique<OptimStmtAST>(loc, std::move(call));
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr Parser::parseExpr() {
  DepthGuard guard(depth);
  if (depth > kMaxExprDepth)
    return error(cur().loc, "expression is nested too deeply",
                 "split it over several 'NAME = EXPR' lines");

  const Token &tok = cur();
  switch (tok.kind) {
  case TokenKind::Number:
    return parseNumber();
  case TokenKind::String: {
    auto str = std::make_unique<StringExprAST>(tok.loc, tok.text);
    consume();
    return str;
  }
  case TokenKind::LBracket:
    return parseList();
  case TokenKind::Identifier: {
    if (peek().is(TokenKind::LParen))
      return parseCall();
    ExprPtr result;
    if (tok.text == "true" || tok.text == "false")
      result = std::make_unique<BoolExprAST>(tok.loc, tok.text == "true");
    else
      result = std::make_unique<NameExprAST>(tok.loc, tok.text);
    consume();
    return result;
  }
  default:
    return unexpected("an expression", kExprHint);
  }
}

std::unique_ptr<NumberExprAST> Parser::parseNumber() {
  const Token &tok = cur();
  StringRef text = tok.text;
  bool isInteger = text.find_first_of(".eE") == StringRef::npos;
  std::optional<int64_t> intValue;
  int64_t parsed;
  if (isInteger && !text.getAsInteger(10, parsed))
    intValue = parsed;

  llvm::APFloat value(llvm::APFloat::IEEEdouble());
  auto status =
      value.convertFromString(text, llvm::APFloat::rmNearestTiesToEven);
  if (!status) {
    llvm::consumeError(status.takeError());
    return error(tok.loc, "invalid number '" + text + "'",
                 "numbers look like 784, -1, 0.5 or 1e-3");
  }
  if (*status & llvm::APFloat::opOverflow)
    return error(tok.loc, "number '" + text + "' is out of range",
                 "numbers must fit in a 64-bit float");
  auto number = std::make_unique<NumberExprAST>(
      tok.loc, text, isInteger, intValue, value.convertToDouble());
  consume();
  return number;
}

ExprPtr Parser::parseList() {
  SrcLoc open = cur().loc;
  consume(); // '['
  std::vector<ExprPtr> elements;
  if (cur().is(TokenKind::RBracket)) {
    consume();
    return std::make_unique<ListExprAST>(open, std::move(elements));
  }
  while (true) {
    ExprPtr element = parseExpr();
    if (!element)
      return nullptr;
    elements.push_back(std::move(element));
    if (cur().is(TokenKind::Comma)) {
      consume();
      continue;
    }
    if (cur().is(TokenKind::RBracket)) {
      consume();
      return std::make_unique<ListExprAST>(open, std::move(elements));
    }
    if (cur().is(TokenKind::Newline) || cur().is(TokenKind::Eof))
      return error(cur().loc, "missing ']' to close the list",
                   "the '[' at " + where(open) +
                       " is not closed; a statement must fit on one line");
    return unexpected("',' or ']' in the list",
                      "separate list elements with ',', e.g. [0, 1]");
  }
}

std::unique_ptr<CallExprAST> Parser::parseCall() {
  const Token &name = cur();
  consume(); // callee
  SrcLoc open = cur().loc;
  consume(); // '('

  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;
  if (cur().is(TokenKind::RParen)) {
    consume();
    return std::make_unique<CallExprAST>(name.loc, name.text, std::move(args),
                                         std::move(kwargs));
  }
  while (true) {
    if (cur().is(TokenKind::Newline) || cur().is(TokenKind::Eof))
      break;
    if (cur().is(TokenKind::Identifier) && peek().is(TokenKind::Equal)) {
      KeywordArg kwarg;
      kwarg.name = cur().text.str();
      kwarg.loc = cur().loc;
      consume(); // name
      consume(); // '='
      kwarg.value = parseExpr();
      if (!kwarg.value)
        return nullptr;
      kwargs.push_back(std::move(kwarg));
    } else {
      TokenKind k = cur().kind;
      bool startsExpr = k == TokenKind::Identifier || k == TokenKind::Number ||
                        k == TokenKind::String || k == TokenKind::LBracket;
      if (!kwargs.empty() && startsExpr)
        return error(cur().loc, "positional argument after a keyword argument",
                     "put positional arguments first, e.g. linear(x, 256, "
                     "name=fc1)");
      ExprPtr arg = parseExpr();
      if (!arg)
        return nullptr;
      args.push_back(std::move(arg));
    }
    if (cur().is(TokenKind::Comma)) {
      consume();
      continue;
    }
    if (cur().is(TokenKind::RParen)) {
      consume();
      return std::make_unique<CallExprAST>(name.loc, name.text, std::move(args),
                                           std::move(kwargs));
    }
    if (cur().is(TokenKind::Newline) || cur().is(TokenKind::Eof))
      break;
    return unexpected("',' or ')' after an argument of '" + name.text + "'",
                      "separate arguments with ','");
  }
  return error(cur().loc,
               "missing ')' to close the call to '" + name.text + "'",
               "the '(' at " + where(open) +
                   " is not closed; a statement must fit on one line");
}
