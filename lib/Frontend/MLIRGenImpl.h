//===- MLIRGenImpl.h - The .dlc AST to dlc dialect generator ---*- C++ -*-===//
//
// The state of MLIRGen and what its files share: the op table's types, the
// formatting helpers of the messages, and the class MLIRGenImpl, whose
// members are defined by topic:
//   MLIRGen.cpp         the module, the statements and the expressions;
//   MLIRGenCalls.cpp    the op table, binding a call's arguments to the op's
//                       parameters and reading each argument;
//   MLIRGenLayers.cpp   the elementwise ops and the layers (linear, matmul,
//                       softmax, normalisations, convolution, pools);
//   MLIRGenRecurrent.cpp the recurrent layers (lstm, gru);
//   MLIRGenShapes.cpp   reshape, flatten, transpose, permute, sum and mean;
//   MLIRGenTraining.cpp the loss statement, the losses and the optimizer.
// Private to lib/Frontend.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_FRONTEND_MLIRGENIMPL_H
#define DLC_LIB_FRONTEND_MLIRGENIMPL_H

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Frontend/AST.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace dlc {
struct ImportOptions;

namespace mlirgen {

using llvm::StringRef;
using llvm::Twine;
using mlir::DictionaryAttr;
using mlir::Location;
using mlir::LogicalResult;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OpBuilder;
using mlir::OwningOpRef;
using mlir::RankedTensorType;
using mlir::StringAttr;
using mlir::Type;
using mlir::Value;

/// The largest tensor dlc accepts (2^40 elements, 4 TiB of f32): far beyond
/// any model it compiles, small enough that byte sizes and the sums of a
/// memory plan never overflow int64.
inline constexpr int64_t kMaxElements = int64_t(1) << 40;

//===----------------------------------------------------------------------===//
// The op table (MLIRGenCalls.cpp)
//===----------------------------------------------------------------------===//

/// What an argument of a call must be.
enum class ArgKind {
  Tensor,    // an expression producing a tensor
  Operand,   // a tensor or a number (elementwise binary ops)
  Int,       // an integer literal
  Float,     // a number literal
  Bool,      // true or false
  String,    // a string literal
  LayerName, // an identifier (or a dotted name in quotes)
  IntList,   // [i, j, ...] (or a single integer)
};

struct ParamSpec {
  const char *name;
  ArgKind kind;
  bool required;
  /// Can only be passed as `name=value`.
  bool keywordOnly;
  /// How the usage line shows an optional or keyword argument.
  const char *display;
};

enum class OpKind {
  Unary,
  Gelu,
  Binary,
  Linear,
  Matmul,
  Softmax,
  LayerNorm,
  Conv2d,
  Pool2d,
  BatchNorm2d,
  Recurrent,
  Reshape,
  Flatten,
  Transpose,
  Permute,
  Reduce,
  MseLoss,
  CrossEntropy,
};

struct OpSpec {
  const char *name;
  OpKind kind;
  llvm::ArrayRef<ParamSpec> params;
};

/// The op called `name`, or null.
const OpSpec *lookupOp(StringRef name);
/// The names of every op, in the table's order.
llvm::SmallVector<StringRef> opNames();
/// "usage: linear(x, out, name=NAME, bias=true, in=IN)".
std::string usage(const OpSpec &spec);

//===----------------------------------------------------------------------===//
// Formatting helpers (MLIRGen.cpp)
//===----------------------------------------------------------------------===//

std::string dtypeName(Type type);
std::string shapeStr(llvm::ArrayRef<int64_t> shape);
/// "f32[8, 784]", the notation of `input` statements.
std::string typeStr(Type type);
std::string typeStr(Value value);
RankedTensorType tensorType(Value value);
std::string lineStr(SrcLoc loc);
/// How a non-tensor argument reads in a message.
std::string describe(const ExprAST &expr);

//===----------------------------------------------------------------------===//
// A call and its arguments
//===----------------------------------------------------------------------===//

/// Returned by MLIRGenImpl::error(): converts to the failure value of every
/// result type used below, so that `return error(...);` works everywhere.
struct Failed {
  operator Value() const { return {}; }
  operator LogicalResult() const { return mlir::failure(); }
  operator RankedTensorType() const { return {}; }
  operator Type() const { return {}; }
  operator DictionaryAttr() const { return {}; }
  operator OwningOpRef<ModuleOp>() const { return nullptr; }
  template <typename T> operator std::optional<T>() const {
    return std::nullopt;
  }
};

/// A call being emitted: its AST, its op, and its arguments matched to the
/// op's parameters (null where absent).
struct Call {
  const CallExprAST &ast;
  const OpSpec &spec;
  llvm::SmallVector<const ExprAST *, 6> args;

  StringRef name() const { return spec.name; }
  SrcLoc loc() const { return ast.loc(); }
  const ExprAST *arg(unsigned i) const { return args[i]; }
  SrcLoc argLoc(unsigned i) const {
    return args[i] ? args[i]->loc() : ast.loc();
  }
  StringRef paramName(unsigned i) const { return spec.params[i].name; }
};

/// An operand of an elementwise binary op: a tensor or a number.
struct Operand {
  Value value;
  const NumberExprAST *number = nullptr;
};

/// An element of an integer list argument.
struct IntElement {
  int64_t value;
  SrcLoc loc;
};

//===----------------------------------------------------------------------===//
// MLIRGenImpl
//===----------------------------------------------------------------------===//

class MLIRGenImpl {
public:
  MLIRGenImpl(MLIRContext &ctx, StringRef fileName,
              const ImportOptions &options, DiagnosticReporter &diag)
      : ctx(ctx), builder(&ctx), file(StringAttr::get(&ctx, fileName)),
        options(options), diag(diag) {}

  OwningOpRef<ModuleOp> generate(const ModelAST &model);

private:
  Location loc(SrcLoc l) {
    return mlir::FileLineColLoc::get(file, l.line, l.col);
  }
  Failed error(SrcLoc l, const Twine &message, const Twine &hint) {
    diag.error(l, message, hint);
    return {};
  }

  // Statements.
  LogicalResult emitStatement(const StmtAST &stmt);
  LogicalResult emitTensorDecl(const TensorDeclStmtAST &decl);
  LogicalResult emitOutput(const OutputStmtAST &output);
  LogicalResult emitLoss(const LossStmtAST &loss);
  DictionaryAttr buildOptimizer(const CallExprAST &call);
  LogicalResult checkNotBound(StringRef name, SrcLoc l);
  LogicalResult checkUnique(const StmtAST *&first, const StmtAST &stmt,
                            StringRef keyword, const Twine &hint);
  mlir::func::FuncOp
  buildEntry(StringRef name,
             llvm::ArrayRef<std::pair<std::string, Value>> results,
             SrcLoc returnLoc);

  // Expressions.
  Value emitExpr(const ExprAST &expr);
  Value lookupName(StringRef name, SrcLoc l);
  Value emitCall(const CallExprAST &call);
  LogicalResult bindArgs(Call &call);

  Value emitUnary(Call &c);
  Value emitGelu(Call &c);
  Value emitBinary(Call &c);
  Value emitLinear(Call &c);
  Value emitMatmul(Call &c);
  Value emitSoftmax(Call &c);
  Value emitLayerNorm(Call &c);
  Value emitConv2d(Call &c);
  Value emitPool2d(Call &c);
  Value emitBatchNorm2d(Call &c);
  Value emitRecurrent(Call &c);
  Value emitReshape(Call &c);
  Value emitFlatten(Call &c);
  Value emitTranspose(Call &c);
  Value emitPermute(Call &c);
  Value emitReduce(Call &c);
  Value emitMseLoss(Call &c);
  Value emitCrossEntropy(Call &c);

  // Arguments.
  Value tensorArg(Call &c, unsigned i);
  Value floatTensorArg(Call &c, unsigned i);
  std::optional<Operand> operandArg(Call &c, unsigned i);
  std::optional<int64_t> intArg(Call &c, unsigned i, int64_t defaultValue);
  std::optional<double> floatArg(Call &c, unsigned i, double defaultValue);
  std::optional<bool> boolArg(Call &c, unsigned i, bool defaultValue);
  std::optional<std::string> stringArg(Call &c, unsigned i,
                                       StringRef defaultValue,
                                       llvm::ArrayRef<StringRef> allowed);
  /// A string argument naming one of `allowed` by its spelling in the IR
  /// (`"tanh"` for GeluApproximation::tanh), as stringArg reads it.
  template <typename EnumT>
  std::optional<EnumT> enumArg(Call &c, unsigned i, EnumT defaultValue,
                               llvm::ArrayRef<EnumT> allowed) {
    llvm::SmallVector<StringRef> names;
    for (EnumT e : allowed)
      names.push_back(mlir::dlc::stringifyEnum(e));
    std::optional<std::string> name =
        stringArg(c, i, mlir::dlc::stringifyEnum(defaultValue), names);
    if (!name)
      return std::nullopt;
    return mlir::dlc::symbolizeEnum<EnumT>(*name);
  }
  std::optional<std::string> layerNameArg(Call &c, unsigned i);
  std::optional<llvm::SmallVector<IntElement>> intListArg(Call &c, unsigned i);
  std::optional<llvm::SmallVector<int64_t>>
  sizesArg(Call &c, unsigned i, llvm::ArrayRef<int64_t> defaultValue,
           bool padding);
  Value imageArg(Call &c, unsigned i);
  Failed argError(Call &c, unsigned i, const Twine &expected);
  std::optional<int64_t> normalizeDim(Call &c, SrcLoc l, StringRef what,
                                      int64_t dim, Value input);

  // Helpers.
  RankedTensorType makeType(SrcLoc l, llvm::ArrayRef<int64_t> shape,
                            Type elementType);
  Value makeScalar(const NumberExprAST &number, Type elementType);
  LogicalResult claimLayer(StringRef name, SrcLoc l);
  Value declareParameter(Call &c, StringRef name, RankedTensorType type,
                         mlir::dlc::ParameterInit init, double bound);

  MLIRContext &ctx;
  OpBuilder builder;
  StringAttr file;
  const ImportOptions &options;
  DiagnosticReporter &diag;

  ModuleOp module;
  /// The scratch function that holds the whole graph.
  mlir::func::FuncOp graph;
  mlir::Block *body = nullptr;

  struct Binding {
    Value value;
    SrcLoc loc;
  };
  llvm::StringMap<Binding> symbols;
  /// Where each name of the file is first bound, to tell a name used too
  /// early from an unknown one.
  llvm::StringMap<SrcLoc> firstBinding;
  /// Layer name -> location of its `name=`.
  llvm::StringMap<SrcLoc> layers;
  /// The inputs and labels, in declaration order (the graph's arguments).
  llvm::SmallVector<std::pair<std::string, Type>> arguments;

  const ModelStmtAST *modelStmt = nullptr;
  const StmtAST *outputStmt = nullptr;
  const StmtAST *lossStmt = nullptr;
  const StmtAST *optimStmt = nullptr;
  /// The statement being emitted.
  const StmtAST *currentStmt = nullptr;
  llvm::SmallVector<std::pair<std::string, Value>> outputs;
  Value lossValue;
  DictionaryAttr optimizer;
};

} // namespace mlirgen
} // namespace dlc

#endif // DLC_LIB_FRONTEND_MLIRGENIMPL_H
