//===- Parser.h - Parser of the .dlc format ---------------------*- C++ -*-===//
//
// A recursive-descent parser from tokens to the ModelAST. It checks only the
// syntax; it reports the first error it finds and then gives up.
//
//   file      := (statement? NEWLINE)* statement? EOF
//   statement := 'model' IDENT
//              | ('input' | 'label') IDENT ':' IDENT shape
//              | IDENT '=' expr
//              | 'output' IDENT (',' IDENT)*
//              | 'loss' expr
//              | 'optim' IDENT ('(' args? ')')?
//   expr      := NUMBER | STRING | 'true' | 'false' | IDENT
//              | IDENT '(' args? ')' | '[' (expr (',' expr)*)? ']'
//   shape     := '[' (NUMBER (',' NUMBER)*)? ']'
//   args      := arg (',' arg)*        arg := (IDENT '=')? expr
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_PARSER_H
#define DLC_FRONTEND_PARSER_H

#include "dlc/Frontend/AST.h"
#include "dlc/Frontend/Lexer.h"

#include <memory>
#include <vector>

namespace dlc {

class Parser {
public:
  Parser(std::vector<Token> tokens, DiagnosticReporter &diag);

  /// Parses the whole file; returns null after reporting a syntax error.
  std::unique_ptr<ModelAST> parseModel();

private:
  std::unique_ptr<StmtAST> parseStatement();
  std::unique_ptr<StmtAST> parseModelStmt();
  std::unique_ptr<StmtAST> parseTensorDecl();
  std::unique_ptr<StmtAST> parseBinding();
  std::unique_ptr<StmtAST> parseOutput();
  std::unique_ptr<StmtAST> parseLoss();
  std::unique_ptr<StmtAST> parseOptim();
  std::unique_ptr<StmtAST> parseUnknownStatement();
  bool parseEndOfStatement();

  ExprPtr parseExpr();
  ExprPtr parseList();
  std::unique_ptr<CallExprAST> parseCall();
  std::unique_ptr<NumberExprAST> parseNumber();

  const Token &cur() const { return tokens[pos]; }
  const Token &peek(unsigned n = 1) const;
  void consume();

  /// Reports that the current token is not what was expected; a lexer error
  /// token is reported with its own message instead.
  std::nullptr_t unexpected(const llvm::Twine &expected,
                            const llvm::Twine &hint);
  std::nullptr_t error(SrcLoc loc, const llvm::Twine &message,
                       const llvm::Twine &hint);

  std::vector<Token> tokens;
  size_t pos = 0;
  unsigned depth = 0;
  DiagnosticReporter &diag;
};

} // namespace dlc

#endif // DLC_FRONTEND_PARSER_H
