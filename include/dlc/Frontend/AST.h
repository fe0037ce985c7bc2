//===- AST.h - Abstract syntax tree of the .dlc format ----------*- C++ -*-===//
//
// The parser turns a `.dlc` file into a ModelAST: a list of statements whose
// expressions are names, numbers, strings, booleans, lists and calls. Every
// node carries the line and column of its first token. The AST is purely
// syntactic; MLIRGen checks names, arities, shapes and dtypes.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_AST_H
#define DLC_FRONTEND_AST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Casting.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlc {

/// A position in the source file; both are 1-based, columns count bytes.
struct SrcLoc {
  unsigned line = 1;
  unsigned col = 1;
};

/// Receives the frontend's errors. Every error comes with a hint that tells
/// the user how to fix it.
class DiagnosticReporter {
public:
  virtual ~DiagnosticReporter() = default;
  virtual void error(SrcLoc loc, const llvm::Twine &message,
                     const llvm::Twine &hint) = 0;
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class ExprAST {
public:
  enum ExprKind {
    Expr_Number,
    Expr_String,
    Expr_Bool,
    Expr_Name,
    Expr_List,
    Expr_Call,
  };

  ExprAST(ExprKind kind, SrcLoc loc) : kind(kind), location(loc) {}
  virtual ~ExprAST() = default;

  ExprKind getKind() const { return kind; }
  SrcLoc loc() const { return location; }

private:
  const ExprKind kind;
  SrcLoc location;
};

using ExprPtr = std::unique_ptr<ExprAST>;

/// A number literal: `784`, `-1`, `0.5`, `1e-3`.
class NumberExprAST : public ExprAST {
public:
  NumberExprAST(SrcLoc loc, llvm::StringRef spelling, bool isInteger,
                std::optional<int64_t> intValue, double value)
      : ExprAST(Expr_Number, loc), spelling(spelling.str()), integer(isInteger),
        intValue(intValue), value(value) {}

  llvm::StringRef getSpelling() const { return spelling; }
  /// True when written without a fraction or exponent.
  bool isInteger() const { return integer; }
  /// The value of an integer literal; empty when it does not fit in int64.
  std::optional<int64_t> getIntValue() const { return intValue; }
  /// The value as a double (integers included).
  double getValue() const { return value; }

  static bool classof(const ExprAST *e) { return e->getKind() == Expr_Number; }

private:
  std::string spelling;
  bool integer;
  std::optional<int64_t> intValue;
  double value;
};

/// A string literal: `"tanh"` (the value excludes the quotes).
class StringExprAST : public ExprAST {
public:
  StringExprAST(SrcLoc loc, llvm::StringRef value)
      : ExprAST(Expr_String, loc), value(value.str()) {}
  llvm::StringRef getValue() const { return value; }
  static bool classof(const ExprAST *e) { return e->getKind() == Expr_String; }

private:
  std::string value;
};

/// `true` or `false`.
class BoolExprAST : public ExprAST {
public:
  BoolExprAST(SrcLoc loc, bool value) : ExprAST(Expr_Bool, loc), value(value) {}
  bool getValue() const { return value; }
  static bool classof(const ExprAST *e) { return e->getKind() == Expr_Bool; }

private:
  bool value;
};

/// A bare identifier: a bound value, or a layer name in `name=fc1`.
class NameExprAST : public ExprAST {
public:
  NameExprAST(SrcLoc loc, llvm::StringRef name)
      : ExprAST(Expr_Name, loc), name(name.str()) {}
  llvm::StringRef getName() const { return name; }
  static bool classof(const ExprAST *e) { return e->getKind() == Expr_Name; }

private:
  std::string name;
};

/// `[e0, e1, ...]`.
class ListExprAST : public ExprAST {
public:
  ListExprAST(SrcLoc loc, std::vector<ExprPtr> elements)
      : ExprAST(Expr_List, loc), elements(std::move(elements)) {}
  const std::vector<ExprPtr> &getElements() const { return elements; }
  static bool classof(const ExprAST *e) { return e->getKind() == Expr_List; }

private:
  std::vector<ExprPtr> elements;
};

/// A `key=value` argument of a call.
struct KeywordArg {
  std::string name;
  SrcLoc loc;
  ExprPtr value;
};

/// `callee(arg, ..., key=value, ...)`; positional arguments come first.
class CallExprAST : public ExprAST {
public:
  CallExprAST(SrcLoc loc, llvm::StringRef callee, std::vector<ExprPtr> args,
              std::vector<KeywordArg> kwargs)
      : ExprAST(Expr_Call, loc), callee(callee.str()), args(std::move(args)),
        kwargs(std::move(kwargs)) {}
  llvm::StringRef getCallee() const { return callee; }
  const std::vector<ExprPtr> &getArgs() const { return args; }
  const std::vector<KeywordArg> &getKeywordArgs() const { return kwargs; }
  static bool classof(const ExprAST *e) { return e->getKind() == Expr_Call; }

private:
  std::string callee;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class StmtAST {
public:
  enum StmtKind {
    Stmt_Model,
    Stmt_TensorDecl,
    Stmt_Bind,
    Stmt_Output,
    Stmt_Loss,
    Stmt_Optim,
  };

  StmtAST(StmtKind kind, SrcLoc loc) : kind(kind), location(loc) {}
  virtual ~StmtAST() = default;

  StmtKind getKind() const { return kind; }
  /// The location of the statement's first token.
  SrcLoc loc() const { return location; }

private:
  const StmtKind kind;
  SrcLoc location;
};

/// `model NAME`.
class ModelStmtAST : public StmtAST {
public:
  ModelStmtAST(SrcLoc loc, llvm::StringRef name, SrcLoc nameLoc)
      : StmtAST(Stmt_Model, loc), name(name.str()), nameLoc(nameLoc) {}
  llvm::StringRef getName() const { return name; }
  SrcLoc getNameLoc() const { return nameLoc; }
  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Model; }

private:
  std::string name;
  SrcLoc nameLoc;
};

/// `input NAME: DTYPE[D0, ...]` or `label NAME: DTYPE[D0, ...]`.
class TensorDeclStmtAST : public StmtAST {
public:
  TensorDeclStmtAST(SrcLoc loc, bool isLabel, llvm::StringRef name,
                    SrcLoc nameLoc, llvm::StringRef dtype, SrcLoc dtypeLoc,
                    std::vector<std::unique_ptr<NumberExprAST>> dims)
      : StmtAST(Stmt_TensorDecl, loc), label(isLabel), name(name.str()),
        nameLoc(nameLoc), dtype(dtype.str()), dtypeLoc(dtypeLoc),
        dims(std::move(dims)) {}
  bool isLabel() const { return label; }
  llvm::StringRef getName() const { return name; }
  SrcLoc getNameLoc() const { return nameLoc; }
  llvm::StringRef getDtype() const { return dtype; }
  SrcLoc getDtypeLoc() const { return dtypeLoc; }
  const std::vector<std::unique_ptr<NumberExprAST>> &getDims() const {
    return dims;
  }
  static bool classof(const StmtAST *s) {
    return s->getKind() == Stmt_TensorDecl;
  }

private:
  bool label;
  std::string name;
  SrcLoc nameLoc;
  std::string dtype;
  SrcLoc dtypeLoc;
  std::vector<std::unique_ptr<NumberExprAST>> dims;
};

/// `NAME = EXPR`; the statement's location is the name's.
class BindStmtAST : public StmtAST {
public:
  BindStmtAST(SrcLoc loc, llvm::StringRef name, ExprPtr value)
      : StmtAST(Stmt_Bind, loc), name(name.str()), value(std::move(value)) {}
  llvm::StringRef getName() const { return name; }
  const ExprAST &getValue() const { return *value; }
  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Bind; }

private:
  std::string name;
  ExprPtr value;
};

/// `output NAME, NAME, ...`.
class OutputStmtAST : public StmtAST {
public:
  struct Entry {
    std::string name;
    SrcLoc loc;
  };
  OutputStmtAST(SrcLoc loc, std::vector<Entry> names)
      : StmtAST(Stmt_Output, loc), names(std::move(names)) {}
  const std::vector<Entry> &getNames() const { return names; }
  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Output; }

private:
  std::vector<Entry> names;
};

/// `loss EXPR`.
class LossStmtAST : public StmtAST {
public:
  LossStmtAST(SrcLoc loc, ExprPtr value)
      : StmtAST(Stmt_Loss, loc), value(std::move(value)) {}
  const ExprAST &getValue() const { return *value; }
  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Loss; }

private:
  ExprPtr value;
};

/// `optim KIND(key=value, ...)`; the call's callee is the optimizer kind.
class OptimStmtAST : public StmtAST {
public:
  OptimStmtAST(SrcLoc loc, std::unique_ptr<CallExprAST> call)
      : StmtAST(Stmt_Optim, loc), call(std::move(call)) {}
  const CallExprAST &getCall() const { return *call; }
  static bool classof(const StmtAST *s) { return s->getKind() == Stmt_Optim; }

private:
  std::unique_ptr<CallExprAST> call;
};

/// A whole `.dlc` file.
struct ModelAST {
  std::vector<std::unique_ptr<StmtAST>> statements;
};

} // namespace dlc

#endif // DLC_FRONTEND_AST_H
