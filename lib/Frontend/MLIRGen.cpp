//===- MLIRGen.cpp - .dlc AST to the dlc dialect --------------------------===//
//
// The whole file is emitted, in source order, into one scratch function
// whose arguments are every `input` and `label`. `@forward` and `@loss` are
// then clones of it that return their results and drop the ops and
// arguments those results do not use. Every check happens before the op it
// guards is created, so the dlc verifiers never see a malformed op.
//
//===----------------------------------------------------------------------===//

#include "dlc/Frontend/MLIRGen.h"

#include "Suggest.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Frontend/AST.h"
#include "dlc/Frontend/ModelImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace dlc;
using namespace mlir;
using llvm::StringRef;
using llvm::Twine;

/// The largest tensor dlc accepts (2^40 elements, 4 TiB of f32): far beyond
/// any model it compiles, small enough that byte sizes and the sums of a
/// memory plan never overflow int64.
static constexpr int64_t kMaxElements = int64_t(1) << 40;

static const char *const kIntTensorHint =
    "integer tensors (i64, i32) can only be cross_entropy labels or outputs";

static const StringRef kDtypes[] = {"f32", "f16", "bf16", "f64", "i64", "i32"};

//===----------------------------------------------------------------------===//
// The op table
//===----------------------------------------------------------------------===//

namespace {

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

constexpr ParamSpec kUnaryParams[] = {{"x", ArgKind::Tensor, true, false, ""}};
constexpr ParamSpec kGeluParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"approximate", ArgKind::String, false, true, "\"none\""}};
constexpr ParamSpec kBinaryParams[] = {
    {"a", ArgKind::Operand, true, false, ""},
    {"b", ArgKind::Operand, true, false, ""}};
constexpr ParamSpec kLinearParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"out", ArgKind::Int, true, false, ""},
    {"name", ArgKind::LayerName, true, true, "NAME"},
    {"bias", ArgKind::Bool, false, true, "true"},
    {"in", ArgKind::Int, false, true, "IN"}};
constexpr ParamSpec kMatmulParams[] = {{"a", ArgKind::Tensor, true, false, ""},
                                       {"b", ArgKind::Tensor, true, false, ""}};
constexpr ParamSpec kSoftmaxParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"dim", ArgKind::Int, false, false, "-1"}};
constexpr ParamSpec kLayerNormParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"name", ArgKind::LayerName, true, true, "NAME"},
    {"eps", ArgKind::Float, false, true, "1e-5"}};
constexpr ParamSpec kConv2dParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"out", ArgKind::Int, true, false, ""},
    {"kernel_size", ArgKind::IntList, true, false, ""},
    {"stride", ArgKind::IntList, false, false, "1"},
    {"padding", ArgKind::IntList, false, false, "0"},
    {"dilation", ArgKind::IntList, false, false, "1"},
    {"groups", ArgKind::Int, false, false, "1"},
    {"name", ArgKind::LayerName, true, true, "NAME"},
    {"bias", ArgKind::Bool, false, true, "true"},
    {"in", ArgKind::Int, false, true, "IN"}};
constexpr ParamSpec kMaxPool2dParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"kernel_size", ArgKind::IntList, true, false, ""},
    {"stride", ArgKind::IntList, false, false, "kernel_size"},
    {"padding", ArgKind::IntList, false, false, "0"},
    {"dilation", ArgKind::IntList, false, false, "1"}};
constexpr ParamSpec kAvgPool2dParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"kernel_size", ArgKind::IntList, true, false, ""},
    {"stride", ArgKind::IntList, false, false, "kernel_size"},
    {"padding", ArgKind::IntList, false, false, "0"},
    {"count_include_pad", ArgKind::Bool, false, true, "true"}};
constexpr ParamSpec kBatchNorm2dParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"name", ArgKind::LayerName, true, true, "NAME"},
    {"eps", ArgKind::Float, false, true, "1e-5"}};
constexpr ParamSpec kReshapeParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"shape", ArgKind::IntList, true, false, ""}};
constexpr ParamSpec kFlattenParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"start_dim", ArgKind::Int, false, false, "1"},
    {"end_dim", ArgKind::Int, false, false, "-1"}};
constexpr ParamSpec kTransposeParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"dim0", ArgKind::Int, true, false, ""},
    {"dim1", ArgKind::Int, true, false, ""}};
constexpr ParamSpec kPermuteParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"dims", ArgKind::IntList, true, false, ""}};
constexpr ParamSpec kReduceParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"dims", ArgKind::IntList, false, false, "[...]"},
    {"keepdim", ArgKind::Bool, false, false, "false"}};
constexpr ParamSpec kMseLossParams[] = {
    {"input", ArgKind::Tensor, true, false, ""},
    {"target", ArgKind::Tensor, true, false, ""},
    {"reduction", ArgKind::String, false, true, "\"mean\""}};
constexpr ParamSpec kCrossEntropyParams[] = {
    {"logits", ArgKind::Tensor, true, false, ""},
    {"labels", ArgKind::Tensor, true, false, ""},
    {"reduction", ArgKind::String, false, true, "\"mean\""}};

const OpSpec kOps[] = {
    {"relu", OpKind::Unary, kUnaryParams},
    {"tanh", OpKind::Unary, kUnaryParams},
    {"sigmoid", OpKind::Unary, kUnaryParams},
    {"exp", OpKind::Unary, kUnaryParams},
    {"log", OpKind::Unary, kUnaryParams},
    {"sqrt", OpKind::Unary, kUnaryParams},
    {"erf", OpKind::Unary, kUnaryParams},
    {"neg", OpKind::Unary, kUnaryParams},
    {"gelu", OpKind::Gelu, kGeluParams},
    {"add", OpKind::Binary, kBinaryParams},
    {"sub", OpKind::Binary, kBinaryParams},
    {"mul", OpKind::Binary, kBinaryParams},
    {"div", OpKind::Binary, kBinaryParams},
    {"linear", OpKind::Linear, kLinearParams},
    {"matmul", OpKind::Matmul, kMatmulParams},
    {"softmax", OpKind::Softmax, kSoftmaxParams},
    {"log_softmax", OpKind::Softmax, kSoftmaxParams},
    {"layer_norm", OpKind::LayerNorm, kLayerNormParams},
    {"conv2d", OpKind::Conv2d, kConv2dParams},
    {"max_pool2d", OpKind::Pool2d, kMaxPool2dParams},
    {"avg_pool2d", OpKind::Pool2d, kAvgPool2dParams},
    {"batch_norm2d", OpKind::BatchNorm2d, kBatchNorm2dParams},
    {"reshape", OpKind::Reshape, kReshapeParams},
    {"flatten", OpKind::Flatten, kFlattenParams},
    {"transpose", OpKind::Transpose, kTransposeParams},
    {"permute", OpKind::Permute, kPermuteParams},
    {"sum", OpKind::Reduce, kReduceParams},
    {"mean", OpKind::Reduce, kReduceParams},
    {"mse_loss", OpKind::MseLoss, kMseLossParams},
    {"cross_entropy", OpKind::CrossEntropy, kCrossEntropyParams},
};

const OpSpec *lookupOp(StringRef name) {
  for (const OpSpec &spec : kOps)
    if (name == spec.name)
      return &spec;
  return nullptr;
}

llvm::SmallVector<StringRef> opNames() {
  llvm::SmallVector<StringRef> names;
  for (const OpSpec &spec : kOps)
    names.push_back(spec.name);
  return names;
}

/// "linear(x, out, name=NAME, bias=true, in=IN)".
std::string usage(const OpSpec &spec) {
  std::string s = "usage: " + std::string(spec.name) + "(";
  for (auto [i, p] : llvm::enumerate(spec.params)) {
    if (i > 0)
      s += ", ";
    s += p.name;
    if (!p.required || p.keywordOnly)
      s += "=" + std::string(p.display);
  }
  return s + ")";
}

//===----------------------------------------------------------------------===//
// Formatting helpers
//===----------------------------------------------------------------------===//

std::string dtypeName(Type type) {
  StringRef name = mlir::dlc::elementTypeName(type);
  if (!name.empty())
    return name.str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i > 0)
      s += ", ";
    s += std::to_string(d);
  }
  return s + "]";
}

/// "f32[8, 784]", the notation of `input` statements.
std::string typeStr(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return dtypeName(tensor.getElementType()) + shapeStr(tensor.getShape());
}

std::string typeStr(Value value) { return typeStr(value.getType()); }

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

std::string lineStr(SrcLoc loc) { return "line " + std::to_string(loc.line); }

/// How a non-tensor argument reads in a message.
std::string describe(const ExprAST &expr) {
  if (auto *num = dyn_cast<NumberExprAST>(&expr))
    return num->getSpelling().str();
  if (auto *str = dyn_cast<StringExprAST>(&expr))
    return "\"" + str->getValue().str() + "\"";
  if (auto *b = dyn_cast<BoolExprAST>(&expr))
    return b->getValue() ? "true" : "false";
  if (auto *name = dyn_cast<NameExprAST>(&expr))
    return "'" + name->getName().str() + "'";
  if (isa<ListExprAST>(&expr))
    return "a list";
  return "a call to '" + cast<CallExprAST>(&expr)->getCallee().str() + "'";
}

/// Number of elements of a static shape, or -1 when it exceeds kMaxElements.
int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || llvm::MulOverflow(n, d, n) || n > kMaxElements)
      return -1;
  return n;
}

/// A layer name is an identifier, or dot-separated words in quotes
/// ("encoder.fc1") to match a nested PyTorch module.
bool isValidLayerName(StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  llvm::SmallVector<StringRef> parts;
  name.split(parts, '.');
  return llvm::all_of(parts, [](StringRef part) {
    return !part.empty() && llvm::all_of(part, [](char c) {
      return llvm::isAlnum(c) || c == '_';
    });
  });
}

/// Returned by MLIRGenImpl::error(): converts to the failure value of every
/// result type used below, so that `return error(...);` works everywhere.
struct Failed {
  operator Value() const { return {}; }
  operator LogicalResult() const { return failure(); }
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
  Location loc(SrcLoc l) { return FileLineColLoc::get(file, l.line, l.col); }
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
  func::FuncOp buildEntry(StringRef name,
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
                         StringRef init, double bound);

  MLIRContext &ctx;
  OpBuilder builder;
  StringAttr file;
  const ImportOptions &options;
  DiagnosticReporter &diag;

  ModuleOp module;
  /// The scratch function that holds the whole graph.
  func::FuncOp graph;
  Block *body = nullptr;

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

} // namespace

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> MLIRGenImpl::generate(const ModelAST &model) {
  if (model.statements.empty())
    return error({1, 1}, "file contains no model",
                 "start the file with a line like 'model digits'");
  modelStmt = dyn_cast<ModelStmtAST>(model.statements.front().get());
  if (!modelStmt)
    return error(model.statements.front()->loc(),
                 "expected 'model NAME' as the first statement",
                 "start the file with a line like 'model digits'");

  if (options.batch && (*options.batch < 1 || *options.batch > kMaxElements))
    return error(modelStmt->loc(),
                 "--batch must be a positive integer, got " +
                     Twine(*options.batch),
                 "pass the batch size, e.g. --batch 32");

  for (const auto &stmt : model.statements) {
    StringRef name;
    SrcLoc l;
    if (auto *decl = dyn_cast<TensorDeclStmtAST>(stmt.get())) {
      name = decl->getName();
      l = decl->getNameLoc();
    } else if (auto *bind = dyn_cast<BindStmtAST>(stmt.get())) {
      name = bind->getName();
      l = bind->loc();
    } else {
      continue;
    }
    firstBinding.try_emplace(name, l);
  }

  OwningOpRef<ModuleOp> owned(
      ModuleOp::create(loc(modelStmt->loc()), modelStmt->getName()));
  module = *owned;
  module->setAttr("dlc.model", builder.getStringAttr(modelStmt->getName()));

  builder.setInsertionPointToEnd(module.getBody());
  graph = func::FuncOp::create(builder, loc(modelStmt->loc()), "__dlc_graph",
                               builder.getFunctionType({}, {}));
  body = graph.addEntryBlock();
  builder.setInsertionPointToEnd(body);

  for (const auto &stmt : llvm::drop_begin(model.statements)) {
    currentStmt = stmt.get();
    if (failed(emitStatement(*stmt)))
      return nullptr;
  }

  if (!outputStmt)
    return error(modelStmt->loc(), "model has no 'output' statement",
                 "add a line like 'output logits' that names the values to "
                 "return");

  // Give the scratch function its real signature, then derive the entries.
  llvm::SmallVector<Type> argTypes;
  for (auto &arg : arguments)
    argTypes.push_back(arg.second);
  graph.setFunctionType(builder.getFunctionType(argTypes, {}));
  for (auto [i, arg] : llvm::enumerate(arguments))
    graph.setArgAttr(i, mlir::dlc::kNameAttrName,
                     builder.getStringAttr(arg.first));

  func::FuncOp forward = buildEntry("forward", outputs, outputStmt->loc());
  forward->setAttr(mlir::dlc::kEntryAttrName, builder.getUnitAttr());
  if (lossValue) {
    func::FuncOp loss =
        buildEntry("loss", {{"loss", lossValue}}, lossStmt->loc());
    loss->setAttr("dlc.loss", builder.getUnitAttr());
  }
  graph.erase();

  if (optimizer)
    module->setAttr("dlc.optimizer", optimizer);
  return owned;
}

func::FuncOp
MLIRGenImpl::buildEntry(StringRef name,
                        llvm::ArrayRef<std::pair<std::string, Value>> results,
                        SrcLoc returnLoc) {
  IRMapping mapping;
  auto fn = cast<func::FuncOp>(graph->clone(mapping));
  module.push_back(fn);
  fn.setSymName(name);

  Block &block = fn.front();
  llvm::SmallVector<Value> values;
  llvm::SmallVector<Type> types;
  for (auto &result : results) {
    values.push_back(mapping.lookup(result.second));
    types.push_back(result.second.getType());
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&block);
  Operation *ret = func::ReturnOp::create(builder, loc(returnLoc), values);

  // Drop what the results do not use: every op here is pure, and walking
  // backwards sees each op after all of its users.
  for (Operation *op = ret->getPrevNode(); op;) {
    Operation *prev = op->getPrevNode();
    if (op->use_empty())
      op->erase();
    op = prev;
  }
  llvm::BitVector unused(block.getNumArguments());
  for (BlockArgument arg : block.getArguments())
    if (arg.use_empty())
      unused.set(arg.getArgNumber());
  (void)fn.eraseArguments(unused);

  fn.setFunctionType(builder.getFunctionType(fn.getArgumentTypes(), types));
  for (auto [i, result] : llvm::enumerate(results))
    fn.setResultAttr(i, mlir::dlc::kNameAttrName,
                     builder.getStringAttr(result.first));
  return fn;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

LogicalResult MLIRGenImpl::emitStatement(const StmtAST &stmt) {
  switch (stmt.getKind()) {
  case StmtAST::Stmt_Model:
    return error(stmt.loc(), "duplicate 'model' statement",
                 "the model is already named '" + modelStmt->getName() +
                     "' at " + lineStr(modelStmt->loc()));
  case StmtAST::Stmt_TensorDecl:
    return emitTensorDecl(cast<TensorDeclStmtAST>(stmt));
  case StmtAST::Stmt_Bind: {
    auto &bind = cast<BindStmtAST>(stmt);
    if (failed(checkNotBound(bind.getName(), bind.loc())))
      return failure();
    Value value = emitExpr(bind.getValue());
    if (!value)
      return failure();
    symbols[bind.getName()] = {value, bind.loc()};
    return success();
  }
  case StmtAST::Stmt_Output:
    return emitOutput(cast<OutputStmtAST>(stmt));
  case StmtAST::Stmt_Loss:
    return emitLoss(cast<LossStmtAST>(stmt));
  case StmtAST::Stmt_Optim:
    if (failed(
            checkUnique(optimStmt, stmt, "optim", "a model has one optimizer")))
      return failure();
    optimizer = buildOptimizer(cast<OptimStmtAST>(stmt).getCall());
    return success(optimizer != nullptr);
  }
  return failure();
}

LogicalResult MLIRGenImpl::checkUnique(const StmtAST *&first,
                                       const StmtAST &stmt, StringRef keyword,
                                       const Twine &hint) {
  if (first)
    return error(stmt.loc(),
                 "duplicate '" + keyword + "' statement (the first is at " +
                     lineStr(first->loc()) + ")",
                 hint);
  first = &stmt;
  return success();
}

LogicalResult MLIRGenImpl::checkNotBound(StringRef name, SrcLoc l) {
  auto it = symbols.find(name);
  if (it == symbols.end())
    return success();
  return error(
      l, "name '" + name + "' is already bound at " + lineStr(it->second.loc),
      "every name is bound once; choose a new name such as '" + name + "2'");
}

LogicalResult MLIRGenImpl::emitTensorDecl(const TensorDeclStmtAST &decl) {
  if (failed(checkNotBound(decl.getName(), decl.getNameLoc())))
    return failure();

  StringRef dtype = decl.getDtype();
  Type elementType = llvm::StringSwitch<Type>(dtype)
                         .Case("f32", builder.getF32Type())
                         .Case("f16", builder.getF16Type())
                         .Case("bf16", builder.getBF16Type())
                         .Case("f64", builder.getF64Type())
                         .Case("i64", builder.getI64Type())
                         .Case("i32", builder.getI32Type())
                         .Default(Type());
  if (!elementType) {
    return error(
        decl.getDtypeLoc(), "unknown dtype '" + dtype + "'",
        didYouMeanThen(dtype, kDtypes, "the dtypes are " + joinWords(kDtypes)));
  }

  llvm::SmallVector<int64_t> shape;
  for (const auto &dim : decl.getDims()) {
    if (!dim->isInteger())
      return error(dim->loc(),
                   "dimension must be a positive integer, got " +
                       dim->getSpelling(),
                   "shapes are static, e.g. f32[64, 784]");
    if (!dim->getIntValue() || *dim->getIntValue() > kMaxElements)
      return error(dim->loc(),
                   "dimension " + dim->getSpelling() + " is too large",
                   "a tensor has at most 2^40 elements");
    if (*dim->getIntValue() < 1)
      return error(dim->loc(),
                   "dimension must be positive, got " + dim->getSpelling(),
                   "every dimension is at least 1; a scalar is written f32[]");
    shape.push_back(*dim->getIntValue());
  }
  if (options.batch && !shape.empty())
    shape[0] = *options.batch;

  RankedTensorType type = makeType(decl.getDtypeLoc(), shape, elementType);
  if (!type)
    return failure();
  Value arg = body->addArgument(type, loc(decl.getNameLoc()));
  arguments.push_back({decl.getName().str(), type});
  symbols[decl.getName()] = {arg, decl.getNameLoc()};
  return success();
}

LogicalResult MLIRGenImpl::emitOutput(const OutputStmtAST &output) {
  if (failed(checkUnique(outputStmt, output, "output",
                         "list every output in one statement, e.g. 'output "
                         "logits, probs'")))
    return failure();
  llvm::StringMap<SrcLoc> seen;
  for (const auto &entry : output.getNames()) {
    if (!seen.try_emplace(entry.name, entry.loc).second)
      return error(entry.loc,
                   "'" + entry.name + "' is listed twice in 'output'",
                   "each output is returned once");
    Value value = lookupName(entry.name, entry.loc);
    if (!value)
      return failure();
    outputs.push_back({entry.name, value});
  }
  return success();
}

LogicalResult MLIRGenImpl::emitLoss(const LossStmtAST &loss) {
  if (failed(checkUnique(lossStmt, loss, "loss",
                         "a model has one loss; "
                         "add several with add(a, b)")))
    return failure();
  Value value = emitExpr(loss.getValue());
  if (!value)
    return failure();
  RankedTensorType type = tensorType(value);
  if (type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
    return error(loss.getValue().loc(),
                 "the loss must be a 0-d float tensor, got " + typeStr(type),
                 "reduce it to a scalar, e.g. with mean(...), sum(...), "
                 "cross_entropy(...) or mse_loss(...)");
  lossValue = value;
  return success();
}

DictionaryAttr MLIRGenImpl::buildOptimizer(const CallExprAST &call) {
  static const StringRef kinds[] = {"sgd", "adam", "adamw"};
  StringRef kind = call.getCallee();
  if (!llvm::is_contained(kinds, kind))
    return error(
        call.loc(), "unknown optimizer '" + kind + "'",
        didYouMeanThen(kind, kinds, "the optimizers are " + joinWords(kinds)));
  if (!call.getArgs().empty())
    return error(call.getArgs().front()->loc(),
                 "optimizer hyper-parameters are passed by keyword",
                 "e.g. 'optim " + kind + "(lr=0.01)'");

  bool isSgd = kind == "sgd";
  llvm::SmallVector<StringRef> valid;
  if (isSgd)
    valid = {"lr", "momentum", "dampening", "weight_decay", "nesterov"};
  else
    valid = {"lr", "betas", "eps", "weight_decay", "amsgrad"};

  // PyTorch's defaults; SGD has no default learning rate.
  std::optional<double> lr;
  if (!isSgd)
    lr = 1e-3;
  double momentum = 0.0, dampening = 0.0, eps = 1e-8;
  double weightDecay = kind == "adamw" ? 1e-2 : 0.0;
  double betas[2] = {0.9, 0.999};
  bool nesterov = false, amsgrad = false;
  SrcLoc nesterovLoc = call.loc();

  llvm::StringMap<SrcLoc> seen;
  for (const KeywordArg &kw : call.getKeywordArgs()) {
    StringRef key = kw.name;
    const ExprAST &value = *kw.value;
    if (!llvm::is_contained(valid, key))
      return error(kw.loc,
                   "'" + kind + "' has no hyper-parameter '" + key + "'",
                   didYouMeanThen(key, valid,
                                  "the hyper-parameters of " + kind.str() +
                                      " are " + joinWords(valid)));
    if (!seen.try_emplace(key, kw.loc).second)
      return error(kw.loc, "hyper-parameter '" + key + "' is given twice",
                   "give each hyper-parameter once");

    auto number = [&]() -> std::optional<double> {
      if (auto *num = dyn_cast<NumberExprAST>(&value)) {
        if (num->getValue() < 0)
          return error(value.loc(),
                       "hyper-parameter '" + key + "' must not be negative",
                       "PyTorch rejects negative values");
        return num->getValue();
      }
      return error(value.loc(),
                   "hyper-parameter '" + key + "' must be a number, got " +
                       describe(value),
                   "e.g. " + key + "=0.01");
    };
    auto boolean = [&]() -> std::optional<bool> {
      if (auto *b = dyn_cast<BoolExprAST>(&value))
        return b->getValue();
      return error(value.loc(),
                   "hyper-parameter '" + key + "' must be true or false, got " +
                       describe(value),
                   "e.g. " + key + "=true");
    };

    std::optional<double> d;
    std::optional<bool> b;
    if (key == "lr") {
      if (!(d = number()))
        return {};
      lr = *d;
    } else if (key == "momentum") {
      if (!(d = number()))
        return {};
      momentum = *d;
    } else if (key == "dampening") {
      if (!(d = number()))
        return {};
      dampening = *d;
    } else if (key == "weight_decay") {
      if (!(d = number()))
        return {};
      weightDecay = *d;
    } else if (key == "eps") {
      if (!(d = number()))
        return {};
      eps = *d;
    } else if (key == "nesterov") {
      if (!(b = boolean()))
        return {};
      nesterov = *b;
      nesterovLoc = kw.loc;
    } else if (key == "amsgrad") {
      if (!(b = boolean()))
        return {};
      amsgrad = *b;
      // Accepting it would train plain Adam under the AMSGrad name.
      if (amsgrad)
        return error(kw.loc, "amsgrad=true is not supported",
                     "dlc trains with Adam's update; drop amsgrad or write "
                     "amsgrad=false");
    } else if (key == "betas") {
      auto *list = dyn_cast<ListExprAST>(&value);
      const char *hint = "e.g. betas=[0.9, 0.999], each in [0, 1)";
      if (!list || list->getElements().size() != 2)
        return error(value.loc(), "'betas' must be a list of two numbers",
                     hint);
      for (unsigned i = 0; i < 2; ++i) {
        const ExprAST &element = *list->getElements()[i];
        auto *num = dyn_cast<NumberExprAST>(&element);
        if (!num || num->getValue() < 0 || num->getValue() >= 1)
          return error(element.loc(),
                       "each beta must be a number in [0, 1), got " +
                           describe(element),
                       hint);
        betas[i] = num->getValue();
      }
    }
  }

  if (!lr)
    return error(call.loc(), "'sgd' needs a learning rate",
                 "PyTorch's SGD has no default learning rate; write e.g. "
                 "'optim sgd(lr=0.01)'");
  if (nesterov && (momentum <= 0 || dampening != 0))
    return error(nesterovLoc, "nesterov needs momentum > 0 and dampening = 0",
                 "e.g. 'optim sgd(lr=0.01, momentum=0.9, nesterov=true)'");

  llvm::SmallVector<NamedAttribute> attrs;
  auto addF64 = [&](StringRef name, double v) {
    attrs.push_back(builder.getNamedAttr(name, builder.getF64FloatAttr(v)));
  };
  attrs.push_back(builder.getNamedAttr("kind", builder.getStringAttr(kind)));
  addF64("lr", *lr);
  addF64("weight_decay", weightDecay);
  if (isSgd) {
    addF64("momentum", momentum);
    addF64("dampening", dampening);
    attrs.push_back(
        builder.getNamedAttr("nesterov", builder.getBoolAttr(nesterov)));
  } else {
    attrs.push_back(builder.getNamedAttr(
        "betas", builder.getArrayAttr({builder.getF64FloatAttr(betas[0]),
                                       builder.getF64FloatAttr(betas[1])})));
    addF64("eps", eps);
    attrs.push_back(
        builder.getNamedAttr("amsgrad", builder.getBoolAttr(amsgrad)));
  }
  return builder.getDictionaryAttr(attrs);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Value MLIRGenImpl::emitExpr(const ExprAST &expr) {
  switch (expr.getKind()) {
  case ExprAST::Expr_Name:
    return lookupName(cast<NameExprAST>(expr).getName(), expr.loc());
  case ExprAST::Expr_Call:
    return emitCall(cast<CallExprAST>(expr));
  case ExprAST::Expr_Number:
    return error(expr.loc(), "a number is not a tensor",
                 "numbers can only be operands of add, sub, mul and div, "
                 "e.g. mul(x, 0.5)");
  default:
    return error(expr.loc(), "expected a tensor, got " + describe(expr),
                 "a tensor is a name bound earlier or a call like relu(x)");
  }
}

Value MLIRGenImpl::lookupName(StringRef name, SrcLoc l) {
  auto it = symbols.find(name);
  if (it != symbols.end())
    return it->second.value;

  auto later = firstBinding.find(name);
  if (later != firstBinding.end()) {
    if (currentStmt && later->second.line == currentStmt->loc().line)
      return error(l, "'" + name + "' is used in its own definition",
                   "bind '" + name + "' from values bound earlier");
    return error(l,
                 "'" + name + "' is used before it is bound at " +
                     lineStr(later->second),
                 "move this statement below " + lineStr(later->second));
  }
  auto layer = layers.find(name);
  if (layer != layers.end())
    return error(l, "'" + name + "' is a layer name, not a value",
                 "bind the layer's result to a name, e.g. 'h = linear(x, "
                 "256, name=" +
                     name + ")', and use that name");
  if (lookupOp(name))
    return error(l, "'" + name + "' is an op, not a value",
                 "call it, e.g. " + name + "(x)");

  llvm::SmallVector<StringRef> bound;
  for (auto &entry : symbols)
    bound.push_back(entry.getKey());
  llvm::sort(bound);
  return error(l, "unknown name '" + name + "'",
               didYouMean(name, bound,
                          "bind it first with '" + name.str() +
                              " = EXPR', or declare it with 'input " +
                              name.str() + ": f32[...]'"));
}

Value MLIRGenImpl::emitCall(const CallExprAST &ast) {
  const OpSpec *spec = lookupOp(ast.getCallee());
  if (!spec) {
    StringRef callee = ast.getCallee();
    llvm::SmallVector<StringRef> names = opNames();
    std::string hint;
    if (callee == "sgd" || callee == "adam" || callee == "adamw")
      hint = "optimizers belong in an 'optim' statement, e.g. 'optim " +
             callee.str() + "(lr=0.01)'";
    else
      hint = didYouMean(callee, names, "the ops are " + joinWords(names));
    return error(ast.loc(), "unknown op '" + callee + "'", hint);
  }

  Call c{ast, *spec, {}};
  if (failed(bindArgs(c)))
    return {};
  switch (spec->kind) {
  case OpKind::Unary:
    return emitUnary(c);
  case OpKind::Gelu:
    return emitGelu(c);
  case OpKind::Binary:
    return emitBinary(c);
  case OpKind::Linear:
    return emitLinear(c);
  case OpKind::Matmul:
    return emitMatmul(c);
  case OpKind::Softmax:
    return emitSoftmax(c);
  case OpKind::LayerNorm:
    return emitLayerNorm(c);
  case OpKind::Conv2d:
    return emitConv2d(c);
  case OpKind::Pool2d:
    return emitPool2d(c);
  case OpKind::BatchNorm2d:
    return emitBatchNorm2d(c);
  case OpKind::Reshape:
    return emitReshape(c);
  case OpKind::Flatten:
    return emitFlatten(c);
  case OpKind::Transpose:
    return emitTranspose(c);
  case OpKind::Permute:
    return emitPermute(c);
  case OpKind::Reduce:
    return emitReduce(c);
  case OpKind::MseLoss:
    return emitMseLoss(c);
  case OpKind::CrossEntropy:
    return emitCrossEntropy(c);
  }
  return {};
}

LogicalResult MLIRGenImpl::bindArgs(Call &c) {
  llvm::ArrayRef<ParamSpec> params = c.spec.params;
  c.args.assign(params.size(), nullptr);
  StringRef op = c.name();

  unsigned next = 0;
  for (const ExprPtr &arg : c.ast.getArgs()) {
    while (next < params.size() && params[next].keywordOnly)
      ++next;
    if (next == params.size()) {
      unsigned maxPositional = llvm::count_if(
          params, [](const ParamSpec &p) { return !p.keywordOnly; });
      size_t given = c.ast.getArgs().size();
      return error(arg->loc(),
                   "'" + op + "' takes " + Twine(maxPositional) +
                       " positional argument" +
                       (maxPositional == 1 ? "" : "s") + " but " +
                       Twine(given) + (given == 1 ? " was" : " were") +
                       " given",
                   usage(c.spec));
    }
    c.args[next++] = arg.get();
  }

  for (const KeywordArg &kw : c.ast.getKeywordArgs()) {
    const auto *param = llvm::find_if(
        params, [&](const ParamSpec &p) { return kw.name == p.name; });
    if (param == params.end()) {
      llvm::SmallVector<StringRef> names;
      for (const ParamSpec &p : params)
        names.push_back(p.name);
      return error(kw.loc, "'" + op + "' has no argument '" + kw.name + "'",
                   didYouMeanThen(kw.name, names, usage(c.spec)));
    }
    unsigned index = param - params.begin();
    if (c.args[index])
      return error(kw.loc,
                   "argument '" + kw.name + "' of '" + op + "' is given twice",
                   usage(c.spec));
    c.args[index] = kw.value.get();
  }

  for (auto [i, p] : llvm::enumerate(params)) {
    if (!p.required || c.args[i])
      continue;
    if (p.kind == ArgKind::LayerName)
      return error(c.loc(), "'" + op + "' needs a layer name",
                   "add name=NAME; the layer's parameters are then "
                   "NAME.weight and NAME.bias");
    return error(c.loc(),
                 "'" + op + "' is missing its argument '" + p.name + "'",
                 usage(c.spec));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

Failed MLIRGenImpl::argError(Call &c, unsigned i, const Twine &expected) {
  return error(c.argLoc(i),
               "'" + c.name() + "' expects " + expected + " for '" +
                   c.paramName(i) + "', got " + describe(*c.arg(i)),
               usage(c.spec));
}

Value MLIRGenImpl::tensorArg(Call &c, unsigned i) {
  const ExprAST &expr = *c.arg(i);
  if (isa<NumberExprAST>(expr))
    return error(expr.loc(),
                 "'" + c.name() + "' expects a tensor for '" + c.paramName(i) +
                     "', got the number " + describe(expr),
                 "numbers can only be operands of add, sub, mul and div");
  if (!isa<NameExprAST, CallExprAST>(expr))
    return argError(c, i, "a tensor");
  return emitExpr(expr);
}

Value MLIRGenImpl::floatTensorArg(Call &c, unsigned i) {
  Value value = tensorArg(c, i);
  if (!value)
    return {};
  if (isa<FloatType>(tensorType(value).getElementType()))
    return value;
  std::string got = typeStr(value);
  if (auto *name = dyn_cast<NameExprAST>(c.arg(i)))
    got = "'" + name->getName().str() + "' of type " + got;
  return error(c.argLoc(i),
               "'" + c.name() + "' expects a float tensor for '" +
                   c.paramName(i) + "', got " + got,
               kIntTensorHint);
}

std::optional<Operand> MLIRGenImpl::operandArg(Call &c, unsigned i) {
  if (auto *number = dyn_cast<NumberExprAST>(c.arg(i)))
    return Operand{Value(), number};
  Value value = floatTensorArg(c, i);
  if (!value)
    return std::nullopt;
  return Operand{value, nullptr};
}

std::optional<int64_t> MLIRGenImpl::intArg(Call &c, unsigned i,
                                           int64_t defaultValue) {
  const ExprAST *expr = c.arg(i);
  if (!expr)
    return defaultValue;
  auto *number = dyn_cast<NumberExprAST>(expr);
  if (!number || !number->isInteger())
    return argError(c, i, "an integer");
  if (!number->getIntValue())
    return error(expr->loc(),
                 "integer " + number->getSpelling() + " is too large",
                 usage(c.spec));
  return *number->getIntValue();
}

std::optional<double> MLIRGenImpl::floatArg(Call &c, unsigned i,
                                            double defaultValue) {
  const ExprAST *expr = c.arg(i);
  if (!expr)
    return defaultValue;
  if (auto *number = dyn_cast<NumberExprAST>(expr))
    return number->getValue();
  return argError(c, i, "a number");
}

std::optional<bool> MLIRGenImpl::boolArg(Call &c, unsigned i,
                                         bool defaultValue) {
  const ExprAST *expr = c.arg(i);
  if (!expr)
    return defaultValue;
  if (auto *b = dyn_cast<BoolExprAST>(expr))
    return b->getValue();
  return argError(c, i, "true or false");
}

std::optional<std::string>
MLIRGenImpl::stringArg(Call &c, unsigned i, StringRef defaultValue,
                       llvm::ArrayRef<StringRef> allowed) {
  const ExprAST *expr = c.arg(i);
  if (!expr)
    return defaultValue.str();
  std::string choices;
  for (auto [k, a] : llvm::enumerate(allowed))
    choices += (k == 0                    ? "\""
                : k + 1 == allowed.size() ? " or \""
                                          : ", \"") +
               a.str() + "\"";
  if (auto *name = dyn_cast<NameExprAST>(expr))
    return error(expr->loc(),
                 "'" + c.name() + "' expects a string for '" + c.paramName(i) +
                     "', got the name " + describe(*expr),
                 "write it in quotes: " + c.paramName(i) + "=\"" +
                     name->getName() + "\"");
  auto *str = dyn_cast<StringExprAST>(expr);
  if (!str)
    return argError(c, i, choices);
  if (!llvm::is_contained(allowed, str->getValue()))
    return error(expr->loc(),
                 "'" + c.name() + "' expects " + choices + " for '" +
                     c.paramName(i) + "', got " + describe(*expr),
                 didYouMeanThen(str->getValue(), allowed, usage(c.spec)));
  return str->getValue().str();
}

std::optional<std::string> MLIRGenImpl::layerNameArg(Call &c, unsigned i) {
  const ExprAST *expr = c.arg(i);
  StringRef name;
  if (auto *id = dyn_cast<NameExprAST>(expr))
    name = id->getName();
  else if (auto *str = dyn_cast<StringExprAST>(expr))
    name = str->getValue();
  else
    return argError(c, i, "a layer name");
  if (!isValidLayerName(name))
    return error(expr->loc(), "invalid layer name " + describe(*expr),
                 "a layer name is an identifier like fc1, or dotted words in "
                 "quotes like \"encoder.fc1\"");
  return name.str();
}

std::optional<llvm::SmallVector<IntElement>>
MLIRGenImpl::intListArg(Call &c, unsigned i) {
  const ExprAST *expr = c.arg(i);
  llvm::SmallVector<const ExprAST *> elements;
  if (auto *list = dyn_cast<ListExprAST>(expr)) {
    for (const ExprPtr &element : list->getElements())
      elements.push_back(element.get());
  } else if (isa<NumberExprAST>(expr)) {
    elements.push_back(expr);
  } else {
    return argError(c, i, "a list of integers");
  }

  llvm::SmallVector<IntElement> result;
  for (const ExprAST *element : elements) {
    auto *number = dyn_cast<NumberExprAST>(element);
    if (!number || !number->isInteger())
      return error(element->loc(),
                   "'" + c.name() + "' expects integers in '" + c.paramName(i) +
                       "', got " + describe(*element),
                   usage(c.spec));
    if (!number->getIntValue())
      return error(element->loc(),
                   "integer " + number->getSpelling() + " is too large",
                   usage(c.spec));
    result.push_back({*number->getIntValue(), element->loc()});
  }
  return result;
}

/// Maps a dimension index in [-rank, rank) to [0, rank). `what` names it in
/// the message: "dim=" for an argument, "dim " for an element of a list.
std::optional<int64_t> MLIRGenImpl::normalizeDim(Call &c, SrcLoc l,
                                                 StringRef what, int64_t dim,
                                                 Value input) {
  int64_t rank = tensorType(input).getRank();
  if (rank == 0)
    return error(l,
                 "'" + c.name() + "' needs a tensor of rank 1 or more, got " +
                     typeStr(input),
                 usage(c.spec));
  if (dim < -rank || dim >= rank)
    return error(l,
                 "'" + c.name() + "' " + what + Twine(dim) +
                     " is out of range for " + typeStr(input),
                 "valid dims are " + Twine(-rank) + " to " + Twine(rank - 1));
  return dim < 0 ? dim + rank : dim;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

RankedTensorType MLIRGenImpl::makeType(SrcLoc l, llvm::ArrayRef<int64_t> shape,
                                       Type elementType) {
  if (numElements(shape) < 0)
    return error(l,
                 "a tensor of shape " + dtypeName(elementType) +
                     shapeStr(shape) + " has too many elements",
                 "dlc supports tensors of up to 2^40 elements");
  return RankedTensorType::get(shape, elementType);
}

Value MLIRGenImpl::makeScalar(const NumberExprAST &number, Type elementType) {
  auto floatType = cast<FloatType>(elementType);
  llvm::APFloat value(number.getValue());
  bool losesInfo = false;
  llvm::APFloat::opStatus status =
      value.convert(floatType.getFloatSemantics(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  if (status & llvm::APFloat::opOverflow)
    return error(number.loc(),
                 "number " + number.getSpelling() + " overflows " +
                     dtypeName(elementType),
                 "use a smaller constant, or a wider dtype for the inputs");
  auto type = RankedTensorType::get({}, elementType);
  auto attr =
      DenseElementsAttr::get(type, llvm::ArrayRef<llvm::APFloat>(value));
  return arith::ConstantOp::create(builder, loc(number.loc()), attr)
      .getResult();
}

LogicalResult MLIRGenImpl::claimLayer(StringRef name, SrcLoc l) {
  auto [it, inserted] = layers.try_emplace(name, l);
  if (inserted)
    return success();
  return error(
      l, "layer name '" + name + "' is already used at " + lineStr(it->second),
      "every layer needs its own name; its parameters are '" + name +
          ".weight' and '" + name + ".bias'");
}

Value MLIRGenImpl::declareParameter(Call &c, StringRef name,
                                    RankedTensorType type, StringRef init,
                                    double bound) {
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(graph);
    mlir::dlc::ParameterOp::create(builder, loc(c.loc()), name, type, init,
                                   llvm::APFloat(bound), mlir::dlc::kRoleWeight,
                                   /*value=*/nullptr);
  }
  return mlir::dlc::ParamOp::create(builder, loc(c.loc()), type, name)
      .getResult();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

Value MLIRGenImpl::emitUnary(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  Location l = loc(c.loc());
  StringRef op = c.name();
  if (op == "relu")
    return mlir::dlc::ReluOp::create(builder, l, x).getResult();
  if (op == "tanh")
    return mlir::dlc::TanhOp::create(builder, l, x).getResult();
  if (op == "sigmoid")
    return mlir::dlc::SigmoidOp::create(builder, l, x).getResult();
  if (op == "exp")
    return mlir::dlc::ExpOp::create(builder, l, x).getResult();
  if (op == "log")
    return mlir::dlc::LogOp::create(builder, l, x).getResult();
  if (op == "sqrt")
    return mlir::dlc::SqrtOp::create(builder, l, x).getResult();
  if (op == "erf")
    return mlir::dlc::ErfOp::create(builder, l, x).getResult();
  return mlir::dlc::NegOp::create(builder, l, x).getResult();
}

Value MLIRGenImpl::emitGelu(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<std::string> approximate =
      stringArg(c, 1, "none", {"none", "tanh"});
  if (!approximate)
    return {};
  return mlir::dlc::GeluOp::create(builder, loc(c.loc()), x, *approximate)
      .getResult();
}

Value MLIRGenImpl::emitBinary(Call &c) {
  std::optional<Operand> a = operandArg(c, 0);
  if (!a)
    return {};
  std::optional<Operand> b = operandArg(c, 1);
  if (!b)
    return {};
  if (!a->value && !b->value)
    return error(c.loc(), "'" + c.name() + "' needs a tensor operand",
                 "both operands are numbers; write the result as a number");

  Type elementType;
  llvm::SmallVector<int64_t> shape;
  if (a->value && b->value) {
    RankedTensorType ta = tensorType(a->value), tb = tensorType(b->value);
    if (ta.getElementType() != tb.getElementType())
      return error(c.loc(),
                   "'" + c.name() + "' operands have different dtypes: " +
                       typeStr(ta) + " and " + typeStr(tb),
                   "dlc does not convert dtypes; give the inputs one dtype");
    elementType = ta.getElementType();
    // NumPy broadcasting: align on the right; 1 or a missing dim stretches.
    llvm::ArrayRef<int64_t> sa = ta.getShape(), sb = tb.getShape();
    size_t rank = std::max(sa.size(), sb.size());
    for (size_t i = 0; i < rank; ++i) {
      int64_t da = i < rank - sa.size() ? 1 : sa[i - (rank - sa.size())];
      int64_t db = i < rank - sb.size() ? 1 : sb[i - (rank - sb.size())];
      if (da != db && da != 1 && db != 1)
        return error(c.loc(),
                     "'" + c.name() + "' cannot broadcast " + typeStr(ta) +
                         " and " + typeStr(tb),
                     "shapes are aligned on the right; each pair of "
                     "dimensions must be equal or one of them 1");
      shape.push_back(da == 1 ? db : da);
    }
  } else {
    RankedTensorType t = tensorType(a->value ? a->value : b->value);
    elementType = t.getElementType();
    shape.assign(t.getShape().begin(), t.getShape().end());
  }
  RankedTensorType resultType = makeType(c.loc(), shape, elementType);
  if (!resultType)
    return {};

  for (Operand *operand : {&*a, &*b}) {
    if (operand->value)
      continue;
    operand->value = makeScalar(*operand->number, elementType);
    if (!operand->value)
      return {};
  }

  Location l = loc(c.loc());
  StringRef op = c.name();
  if (op == "add")
    return mlir::dlc::AddOp::create(builder, l, resultType, a->value, b->value)
        .getResult();
  if (op == "sub")
    return mlir::dlc::SubOp::create(builder, l, resultType, a->value, b->value)
        .getResult();
  if (op == "mul")
    return mlir::dlc::MulOp::create(builder, l, resultType, a->value, b->value)
        .getResult();
  return mlir::dlc::DivOp::create(builder, l, resultType, a->value, b->value)
      .getResult();
}

Value MLIRGenImpl::emitLinear(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<int64_t> out = intArg(c, 1, 0);
  if (!out)
    return {};
  std::optional<std::string> name = layerNameArg(c, 2);
  if (!name)
    return {};
  std::optional<bool> hasBias = boolArg(c, 3, true);
  if (!hasBias)
    return {};
  std::optional<int64_t> in = intArg(c, 4, 0);
  if (!in)
    return {};

  RankedTensorType xType = tensorType(x);
  if (xType.getRank() == 0)
    return error(c.argLoc(0),
                 "'linear' expects an input of rank 1 or more, got " +
                     typeStr(xType),
                 "linear maps the last dimension of its input");
  if (*out < 1 || *out > kMaxElements)
    return error(c.argLoc(1),
                 "'linear' needs a positive number of output features, got " +
                     Twine(*out),
                 usage(c.spec));
  int64_t inFeatures = xType.getShape().back();
  if (c.arg(4) && *in != inFeatures)
    return error(c.loc(),
                 "'linear' expects the input's last dimension to be in=" +
                     Twine(*in) + ", got " + typeStr(xType),
                 "the input has " + Twine(inFeatures) +
                     " features; fix in= or the value that feeds this layer");
  if (failed(claimLayer(*name, c.argLoc(2))))
    return {};

  Type elementType = xType.getElementType();
  RankedTensorType weightType =
      makeType(c.loc(), {*out, inFeatures}, elementType);
  llvm::SmallVector<int64_t> shape(xType.getShape());
  shape.back() = *out;
  RankedTensorType resultType = makeType(c.loc(), shape, elementType);
  if (!weightType || !resultType)
    return {};

  // PyTorch's default: kaiming_uniform_(a=sqrt(5)) on the weight and the
  // bias both reduce to U(-1/sqrt(in), 1/sqrt(in)).
  double bound = 1.0 / std::sqrt(static_cast<double>(inFeatures));
  Value weight =
      declareParameter(c, *name + ".weight", weightType, "uniform", bound);
  Value bias;
  if (*hasBias)
    bias = declareParameter(c, *name + ".bias",
                            RankedTensorType::get({*out}, elementType),
                            "uniform", bound);
  return mlir::dlc::LinearOp::create(builder, loc(c.loc()), resultType, x,
                                     weight, bias)
      .getResult();
}

Value MLIRGenImpl::emitMatmul(Call &c) {
  Value a = floatTensorArg(c, 0);
  if (!a)
    return {};
  Value b = floatTensorArg(c, 1);
  if (!b)
    return {};
  RankedTensorType ta = tensorType(a), tb = tensorType(b);
  if (ta.getElementType() != tb.getElementType())
    return error(c.loc(),
                 "'matmul' operands have different dtypes: " + typeStr(ta) +
                     " and " + typeStr(tb),
                 "dlc does not convert dtypes; give the inputs one dtype");
  int64_t rank = ta.getRank();
  if (rank != tb.getRank() || (rank != 2 && rank != 3))
    return error(c.loc(),
                 "'matmul' needs two rank-2 or two rank-3 operands, got " +
                     typeStr(ta) + " and " + typeStr(tb),
                 "matmul multiplies [M, K] x [K, N], or a batch [B, M, K] x "
                 "[B, K, N]");
  if (rank == 3 && ta.getDimSize(0) != tb.getDimSize(0))
    return error(c.loc(),
                 "'matmul' batch dimensions differ: " + typeStr(ta) + " and " +
                     typeStr(tb),
                 "both operands need the same batch size B");
  int64_t k = ta.getDimSize(rank - 1);
  if (k != tb.getDimSize(rank - 2))
    return error(c.loc(),
                 "'matmul' inner dimensions differ: " + typeStr(ta) + " x " +
                     typeStr(tb),
                 "[M, K] x [K, N] needs a's last dimension (" + Twine(k) +
                     ") to equal b's second-to-last (" +
                     Twine(tb.getDimSize(rank - 2)) +
                     "); transpose(b, -1, -2) swaps b's last two dimensions");
  llvm::SmallVector<int64_t> shape(ta.getShape());
  shape.back() = tb.getShape().back();
  RankedTensorType resultType = makeType(c.loc(), shape, ta.getElementType());
  if (!resultType)
    return {};
  return mlir::dlc::MatmulOp::create(builder, loc(c.loc()), resultType, a, b)
      .getResult();
}

Value MLIRGenImpl::emitSoftmax(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<int64_t> dim = intArg(c, 1, -1);
  if (!dim)
    return {};
  std::optional<int64_t> d = normalizeDim(c, c.argLoc(1), "dim=", *dim, x);
  if (!d)
    return {};
  IntegerAttr dimAttr = builder.getI64IntegerAttr(*d);
  if (c.name() == "softmax")
    return mlir::dlc::SoftmaxOp::create(builder, loc(c.loc()), x.getType(), x,
                                        dimAttr)
        .getResult();
  return mlir::dlc::LogSoftmaxOp::create(builder, loc(c.loc()), x.getType(), x,
                                         dimAttr)
      .getResult();
}

Value MLIRGenImpl::emitLayerNorm(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<std::string> name = layerNameArg(c, 1);
  if (!name)
    return {};
  std::optional<double> eps = floatArg(c, 2, 1e-5);
  if (!eps)
    return {};
  RankedTensorType xType = tensorType(x);
  if (xType.getRank() == 0)
    return error(c.argLoc(0),
                 "'layer_norm' expects an input of rank 1 or more, got " +
                     typeStr(xType),
                 "layer_norm normalises over the last dimension");
  if (!(*eps > 0))
    return error(c.argLoc(2),
                 "'layer_norm' needs a positive eps, got " +
                     describe(*c.arg(2)),
                 "eps keeps the division stable, e.g. eps=1e-5");
  if (failed(claimLayer(*name, c.argLoc(1))))
    return {};

  auto paramType =
      RankedTensorType::get({xType.getShape().back()}, xType.getElementType());
  Value weight = declareParameter(c, *name + ".weight", paramType, "ones", 0.0);
  Value bias = declareParameter(c, *name + ".bias", paramType, "zeros", 0.0);
  return mlir::dlc::LayerNormOp::create(builder, loc(c.loc()), xType, x, weight,
                                        bias, builder.getF64FloatAttr(*eps))
      .getResult();
}

Value MLIRGenImpl::imageArg(Call &c, unsigned i) {
  Value x = floatTensorArg(c, i);
  if (!x)
    return {};
  if (tensorType(x).getRank() != 4)
    return error(c.argLoc(i),
                 "'" + c.name() +
                     "' expects an image batch [N, C, H, W], got " + typeStr(x),
                 "conv2d, max_pool2d, avg_pool2d and batch_norm2d take NCHW "
                 "tensors; reshape(x, [N, C, H, W]) makes one");
  return x;
}

/// A size argument of a convolution or pool: an integer or a list of 1 or
/// 2 ([h, w]) positive integers, returned as [h, w]; with `padding`, also 4
/// ([top, left, bottom, right]), non-negative, returned as those four.
std::optional<llvm::SmallVector<int64_t>>
MLIRGenImpl::sizesArg(Call &c, unsigned i, llvm::ArrayRef<int64_t> defaultValue,
                      bool padding) {
  if (!c.arg(i))
    return llvm::SmallVector<int64_t>(defaultValue);
  std::optional<llvm::SmallVector<IntElement>> list = intListArg(c, i);
  if (!list)
    return std::nullopt;
  const char *forms = padding ? "an integer, [h, w] or [top, left, bottom, "
                                "right]"
                              : "an integer or [h, w]";
  size_t n = list->size();
  if (n != 1 && n != 2 && !(padding && n == 4))
    return error(c.argLoc(i),
                 "'" + c.name() + "' expects " + forms + " for '" +
                     c.paramName(i) + "', got " + Twine(n) + " numbers",
                 usage(c.spec));
  for (const IntElement &e : *list)
    if ((padding ? e.value < 0 : e.value < 1) ||
        e.value > mlir::dlc::kMaxWindowAttr)
      return error(e.loc,
                   "'" + c.name() + "' needs " +
                       (padding ? "non-negative" : "positive") +
                       " sizes of "
                       "at most " +
                       Twine(mlir::dlc::kMaxWindowAttr) + " in '" +
                       c.paramName(i) + "', got " + Twine(e.value),
                   usage(c.spec));
  llvm::SmallVector<int64_t> v;
  for (const IntElement &e : *list)
    v.push_back(e.value);
  if (n == 1)
    v.push_back(v[0]);
  if (padding && v.size() == 2)
    v.append({v[0], v[1]});
  return v;
}

/// The [N, C, OH, OW] result of a window op on `x`, or an error at the call
/// when the window does not fit.
static std::optional<std::pair<int64_t, int64_t>>
windowResult(RankedTensorType x, llvm::ArrayRef<int64_t> kernel,
             llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
             llvm::ArrayRef<int64_t> dilation) {
  int64_t oh =
      mlir::dlc::windowOutputSize(x.getDimSize(2), kernel[0], stride[0],
                                  padding[0], padding[2], dilation[0]);
  int64_t ow =
      mlir::dlc::windowOutputSize(x.getDimSize(3), kernel[1], stride[1],
                                  padding[1], padding[3], dilation[1]);
  if (oh < 1 || ow < 1)
    return std::nullopt;
  return std::make_pair(oh, ow);
}

Value MLIRGenImpl::emitConv2d(Call &c) {
  Value x = imageArg(c, 0);
  if (!x)
    return {};
  std::optional<int64_t> out = intArg(c, 1, 0);
  if (!out)
    return {};
  auto kernel = sizesArg(c, 2, {}, false);
  if (!kernel)
    return {};
  auto stride = sizesArg(c, 3, {1, 1}, false);
  if (!stride)
    return {};
  auto padding = sizesArg(c, 4, {0, 0, 0, 0}, true);
  if (!padding)
    return {};
  auto dilation = sizesArg(c, 5, {1, 1}, false);
  if (!dilation)
    return {};
  std::optional<int64_t> groups = intArg(c, 6, 1);
  if (!groups)
    return {};
  std::optional<std::string> name = layerNameArg(c, 7);
  if (!name)
    return {};
  std::optional<bool> hasBias = boolArg(c, 8, true);
  if (!hasBias)
    return {};
  std::optional<int64_t> in = intArg(c, 9, 0);
  if (!in)
    return {};

  RankedTensorType xType = tensorType(x);
  int64_t channels = xType.getDimSize(1);
  if (*out < 1 || *out > kMaxElements)
    return error(c.argLoc(1),
                 "'conv2d' needs a positive number of output channels, got " +
                     Twine(*out),
                 usage(c.spec));
  if (c.arg(9) && *in != channels)
    return error(c.loc(),
                 "'conv2d' expects an input with in=" + Twine(*in) +
                     " channels, got " + typeStr(xType),
                 "the input has " + Twine(channels) +
                     " channels (dimension 1 of [N, C, H, W]); fix in= or "
                     "the value that feeds this layer");
  if (*groups < 1 || channels % *groups != 0 || *out % *groups != 0)
    return error(c.argLoc(6),
                 "'conv2d' cannot split " + Twine(channels) + " input and " +
                     Twine(*out) + " output channels into " + Twine(*groups) +
                     " groups",
                 "groups must divide both the input's channels and out");
  auto size = windowResult(xType, *kernel, *stride, *padding, *dilation);
  if (!size)
    return error(
        c.loc(),
        "'conv2d' kernel " + Twine((*kernel)[0]) + "x" + Twine((*kernel)[1]) +
            " does not fit the padded " +
            Twine(xType.getDimSize(2) + (*padding)[0] + (*padding)[2]) + "x" +
            Twine(xType.getDimSize(3) + (*padding)[1] + (*padding)[3]) +
            " image of " + typeStr(xType),
        "use a smaller kernel_size or dilation, or more padding");
  if (failed(claimLayer(*name, c.argLoc(7))))
    return {};

  Type elementType = xType.getElementType();
  int64_t perGroup = channels / *groups;
  RankedTensorType weightType = makeType(
      c.loc(), {*out, perGroup, (*kernel)[0], (*kernel)[1]}, elementType);
  RankedTensorType resultType =
      makeType(c.loc(), {xType.getDimSize(0), *out, size->first, size->second},
               elementType);
  if (!weightType || !resultType)
    return {};
  // PyTorch's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the weight
  // and the bias, fan_in = C/groups * KH * KW.
  double bound =
      1.0 /
      std::sqrt(static_cast<double>(perGroup * (*kernel)[0] * (*kernel)[1]));
  Value weight =
      declareParameter(c, *name + ".weight", weightType, "uniform", bound);
  Value bias;
  if (*hasBias)
    bias = declareParameter(c, *name + ".bias",
                            RankedTensorType::get({*out}, elementType),
                            "uniform", bound);
  return mlir::dlc::Conv2DOp::create(
             builder, loc(c.loc()), resultType, x, weight, bias,
             builder.getDenseI64ArrayAttr(*stride),
             builder.getDenseI64ArrayAttr(*padding),
             builder.getDenseI64ArrayAttr(*dilation),
             builder.getI64IntegerAttr(*groups), builder.getStringAttr("none"))
      .getResult();
}

Value MLIRGenImpl::emitPool2d(Call &c) {
  bool isMax = c.name() == "max_pool2d";
  Value x = imageArg(c, 0);
  if (!x)
    return {};
  auto kernel = sizesArg(c, 1, {}, false);
  if (!kernel)
    return {};
  // PyTorch's default stride is the kernel size.
  auto stride = sizesArg(c, 2, *kernel, false);
  if (!stride)
    return {};
  auto padding = sizesArg(c, 3, {0, 0, 0, 0}, true);
  if (!padding)
    return {};
  llvm::SmallVector<int64_t> dilation{1, 1};
  bool countIncludePad = true;
  if (isMax) {
    auto d = sizesArg(c, 4, {1, 1}, false);
    if (!d)
      return {};
    dilation = *d;
  } else {
    std::optional<bool> include = boolArg(c, 4, true);
    if (!include)
      return {};
    countIncludePad = *include;
  }
  // PyTorch's rule, so that no window lies in the padding alone.
  for (int64_t i = 0; i < 4; ++i) {
    int64_t k = (*kernel)[i % 2], dil = dilation[i % 2];
    int64_t effective = (k - 1) * dil + 1;
    if ((*padding)[i] > effective / 2)
      return error(c.argLoc(3),
                   "'" + c.name() + "' padding " + Twine((*padding)[i]) +
                       " is more than half the kernel size " + Twine(effective),
                   "like PyTorch, a pool's padding must be at most "
                   "kernel_size / 2");
  }
  RankedTensorType xType = tensorType(x);
  auto size = windowResult(xType, *kernel, *stride, *padding, dilation);
  if (!size)
    return error(
        c.loc(),
        "'" + c.name() + "' kernel " + Twine((*kernel)[0]) + "x" +
            Twine((*kernel)[1]) + " does not fit the padded " +
            Twine(xType.getDimSize(2) + (*padding)[0] + (*padding)[2]) + "x" +
            Twine(xType.getDimSize(3) + (*padding)[1] + (*padding)[3]) +
            " image of " + typeStr(xType),
        "use a smaller kernel_size, or more padding");
  auto resultType = RankedTensorType::get(
      {xType.getDimSize(0), xType.getDimSize(1), size->first, size->second},
      xType.getElementType());
  Location l = loc(c.loc());
  if (isMax)
    return mlir::dlc::MaxPool2DOp::create(
               builder, l, resultType, x, builder.getDenseI64ArrayAttr(*kernel),
               builder.getDenseI64ArrayAttr(*stride),
               builder.getDenseI64ArrayAttr(*padding),
               builder.getDenseI64ArrayAttr(dilation))
        .getResult();
  return mlir::dlc::AvgPool2DOp::create(builder, l, resultType, x,
                                        builder.getDenseI64ArrayAttr(*kernel),
                                        builder.getDenseI64ArrayAttr(*stride),
                                        builder.getDenseI64ArrayAttr(*padding),
                                        builder.getBoolAttr(countIncludePad))
      .getResult();
}

Value MLIRGenImpl::emitBatchNorm2d(Call &c) {
  Value x = imageArg(c, 0);
  if (!x)
    return {};
  std::optional<std::string> name = layerNameArg(c, 1);
  if (!name)
    return {};
  std::optional<double> eps = floatArg(c, 2, 1e-5);
  if (!eps)
    return {};
  if (!(*eps > 0))
    return error(c.argLoc(2),
                 "'batch_norm2d' needs a positive eps, got " +
                     describe(*c.arg(2)),
                 "eps keeps the division stable, e.g. eps=1e-5");
  if (failed(claimLayer(*name, c.argLoc(1))))
    return {};
  RankedTensorType xType = tensorType(x);
  auto paramType =
      RankedTensorType::get({xType.getDimSize(1)}, xType.getElementType());
  // nn.BatchNorm2d's state_dict names and initial values.
  Value weight = declareParameter(c, *name + ".weight", paramType, "ones", 0.0);
  Value bias = declareParameter(c, *name + ".bias", paramType, "zeros", 0.0);
  Value mean =
      declareParameter(c, *name + ".running_mean", paramType, "zeros", 0.0);
  Value var =
      declareParameter(c, *name + ".running_var", paramType, "ones", 0.0);
  return mlir::dlc::BatchNormOp::create(builder, loc(c.loc()), xType, x, weight,
                                        bias, mean, var,
                                        builder.getF64FloatAttr(*eps))
      .getResult();
}

Value MLIRGenImpl::emitReshape(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<llvm::SmallVector<IntElement>> dims = intListArg(c, 1);
  if (!dims)
    return {};

  RankedTensorType xType = tensorType(x);
  int64_t total = xType.getNumElements();
  llvm::SmallVector<int64_t> shape;
  std::optional<size_t> inferred;
  int64_t known = 1;
  bool tooLarge = false;
  for (auto [i, dim] : llvm::enumerate(*dims)) {
    shape.push_back(dim.value);
    if (dim.value == -1) {
      if (inferred)
        return error(dim.loc, "only one dimension of 'reshape' can be -1",
                     "-1 stands for the one dimension that is inferred");
      inferred = i;
      continue;
    }
    if (dim.value < 1)
      return error(dim.loc,
                   "'reshape' dimensions must be positive or -1, got " +
                       Twine(dim.value),
                   usage(c.spec));
    if (llvm::MulOverflow(known, dim.value, known) || known > kMaxElements)
      tooLarge = true;
  }

  std::string from = typeStr(xType) + " (" + std::to_string(total) +
                     " element" + (total == 1 ? "" : "s") + ")";
  std::string into = shapeStr(shape);
  if (!tooLarge && inferred) {
    if (total % known != 0)
      return error(c.loc(), "cannot reshape " + from + " into " + into,
                   Twine(total) + " is not a multiple of " + Twine(known));
    shape[*inferred] = total / known;
  } else if (tooLarge || known != total) {
    return error(c.loc(),
                 "cannot reshape " + from + " into " + into +
                     (tooLarge ? std::string(" (too many elements)")
                               : " (" + std::to_string(known) + " elements)"),
                 "the new shape must have as many elements; one dimension "
                 "may be -1 to infer it");
  }
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  return mlir::dlc::ReshapeOp::create(builder, loc(c.loc()), resultType, x)
      .getResult();
}

Value MLIRGenImpl::emitFlatten(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<int64_t> start = intArg(c, 1, 1);
  if (!start)
    return {};
  std::optional<int64_t> end = intArg(c, 2, -1);
  if (!end)
    return {};

  RankedTensorType xType = tensorType(x);
  llvm::ArrayRef<int64_t> in = xType.getShape();
  llvm::SmallVector<int64_t> shape;
  if (in.empty()) {
    // Like torch.flatten, a 0-d tensor becomes [1]; dims 0 and -1 exist.
    const std::pair<unsigned, int64_t> dims[] = {{1, *start}, {2, *end}};
    for (auto [i, dim] : dims)
      if (dim != 0 && dim != -1)
        return error(c.argLoc(i),
                     "'flatten' " + c.paramName(i) + "=" + Twine(dim) +
                         " is out of range for " + typeStr(xType),
                     "a 0-d tensor has dims -1 and 0");
    shape.push_back(1);
  } else {
    std::optional<int64_t> s =
        normalizeDim(c, c.argLoc(1), "start_dim=", *start, x);
    if (!s)
      return {};
    std::optional<int64_t> e =
        normalizeDim(c, c.argLoc(2), "end_dim=", *end, x);
    if (!e)
      return {};
    if (*s > *e)
      return error(c.loc(),
                   "'flatten' start_dim " + Twine(*start) +
                       " comes after end_dim " + Twine(*end) + " for " +
                       typeStr(xType),
                   "start_dim must not come after end_dim");
    int64_t merged = 1;
    for (int64_t i = 0; i < xType.getRank(); ++i) {
      if (i < *s || i > *e)
        shape.push_back(in[i]);
      else
        merged *= in[i];
      if (i == *e)
        shape.push_back(merged);
    }
  }
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  return mlir::dlc::ReshapeOp::create(builder, loc(c.loc()), resultType, x)
      .getResult();
}

Value MLIRGenImpl::emitTranspose(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<int64_t> dim0 = intArg(c, 1, 0);
  if (!dim0)
    return {};
  std::optional<int64_t> dim1 = intArg(c, 2, 0);
  if (!dim1)
    return {};
  std::optional<int64_t> d0 = normalizeDim(c, c.argLoc(1), "dim0=", *dim0, x);
  if (!d0)
    return {};
  std::optional<int64_t> d1 = normalizeDim(c, c.argLoc(2), "dim1=", *dim1, x);
  if (!d1)
    return {};

  RankedTensorType xType = tensorType(x);
  llvm::SmallVector<int64_t> perm =
      llvm::to_vector(llvm::seq<int64_t>(0, xType.getRank()));
  std::swap(perm[*d0], perm[*d1]);
  llvm::SmallVector<int64_t> shape(xType.getShape());
  std::swap(shape[*d0], shape[*d1]);
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  return mlir::dlc::TransposeOp::create(builder, loc(c.loc()), resultType, x,
                                        perm)
      .getResult();
}

Value MLIRGenImpl::emitPermute(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  std::optional<llvm::SmallVector<IntElement>> dims = intListArg(c, 1);
  if (!dims)
    return {};
  RankedTensorType xType = tensorType(x);
  int64_t rank = xType.getRank();
  if (static_cast<int64_t>(dims->size()) != rank)
    return error(c.argLoc(1),
                 "'permute' needs " + Twine(rank) + " dims for " +
                     typeStr(xType) + ", got " + Twine(dims->size()),
                 "list every dimension once, e.g. permute(x, [2, 0, 1]) for "
                 "a rank-3 tensor");

  llvm::SmallVector<int64_t> perm, shape;
  for (const IntElement &dim : *dims) {
    std::optional<int64_t> d = normalizeDim(c, dim.loc, "dim ", dim.value, x);
    if (!d)
      return {};
    if (llvm::is_contained(perm, *d))
      return error(dim.loc,
                   "dim " + Twine(dim.value) + " appears twice in 'permute'",
                   "list every dimension once");
    perm.push_back(*d);
    shape.push_back(xType.getDimSize(*d));
  }
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  return mlir::dlc::TransposeOp::create(builder, loc(c.loc()), resultType, x,
                                        perm)
      .getResult();
}

Value MLIRGenImpl::emitReduce(Call &c) {
  Value x = floatTensorArg(c, 0);
  if (!x)
    return {};
  RankedTensorType xType = tensorType(x);
  llvm::SmallVector<int64_t> dims;
  if (c.arg(1)) {
    std::optional<llvm::SmallVector<IntElement>> list = intListArg(c, 1);
    if (!list)
      return {};
    if (list->empty())
      return error(c.argLoc(1), "'" + c.name() + "' needs at least one dim",
                   "omit dims to reduce over all dimensions");
    for (const IntElement &dim : *list) {
      std::optional<int64_t> d = normalizeDim(c, dim.loc, "dim ", dim.value, x);
      if (!d)
        return {};
      if (llvm::is_contained(dims, *d))
        return error(dim.loc,
                     "dim " + Twine(dim.value) + " appears twice in '" +
                         c.name() + "'",
                     "list every dimension once");
      dims.push_back(*d);
    }
    llvm::sort(dims);
  } else {
    dims = llvm::to_vector(llvm::seq<int64_t>(0, xType.getRank()));
  }
  std::optional<bool> keepdim = boolArg(c, 2, false);
  if (!keepdim)
    return {};

  llvm::SmallVector<int64_t> shape;
  for (int64_t d = 0; d < xType.getRank(); ++d) {
    if (!llvm::is_contained(dims, d))
      shape.push_back(xType.getDimSize(d));
    else if (*keepdim)
      shape.push_back(1);
  }
  auto resultType = RankedTensorType::get(shape, xType.getElementType());
  if (c.name() == "sum")
    return mlir::dlc::SumOp::create(builder, loc(c.loc()), resultType, x, dims,
                                    *keepdim)
        .getResult();
  return mlir::dlc::MeanOp::create(builder, loc(c.loc()), resultType, x, dims,
                                   *keepdim)
      .getResult();
}

Value MLIRGenImpl::emitMseLoss(Call &c) {
  Value input = floatTensorArg(c, 0);
  if (!input)
    return {};
  Value target = floatTensorArg(c, 1);
  if (!target)
    return {};
  std::optional<std::string> reduction =
      stringArg(c, 2, "mean", {"mean", "sum"});
  if (!reduction)
    return {};
  RankedTensorType ti = tensorType(input), tt = tensorType(target);
  if (ti != tt)
    return error(c.loc(),
                 "'mse_loss' needs input and target of one type, got " +
                     typeStr(ti) + " and " + typeStr(tt),
                 "mse_loss does not broadcast; the prediction and the target "
                 "must have the same shape and dtype");
  auto resultType = RankedTensorType::get({}, ti.getElementType());
  return mlir::dlc::MseLossOp::create(builder, loc(c.loc()), resultType, input,
                                      target, *reduction)
      .getResult();
}

Value MLIRGenImpl::emitCrossEntropy(Call &c) {
  Value logits = floatTensorArg(c, 0);
  if (!logits)
    return {};
  Value labels = tensorArg(c, 1);
  if (!labels)
    return {};
  std::optional<std::string> reduction =
      stringArg(c, 2, "mean", {"mean", "sum"});
  if (!reduction)
    return {};

  RankedTensorType tl = tensorType(logits), ty = tensorType(labels);
  if (tl.getRank() != 2)
    return error(c.argLoc(0),
                 "'cross_entropy' expects logits of shape [N, C], got " +
                     typeStr(tl),
                 "one row of class scores per example");
  std::string got = typeStr(ty);
  if (auto *name = dyn_cast<NameExprAST>(c.arg(1)))
    got = "'" + name->getName().str() + "' of type " + got;
  if (!isa<IntegerType>(ty.getElementType()))
    return error(c.argLoc(1),
                 "'cross_entropy' expects integer class indices for "
                 "'labels', got " +
                     got,
                 "declare the labels as integers, e.g. 'label y: i64[" +
                     Twine(tl.getDimSize(0)) + "]'");
  if (ty.getRank() != 1 || ty.getDimSize(0) != tl.getDimSize(0))
    return error(c.argLoc(1),
                 "'cross_entropy' expects labels of shape [" +
                     Twine(tl.getDimSize(0)) + "] for logits " + typeStr(tl) +
                     ", got " + got,
                 "there is one class index per row of the logits");
  auto resultType = RankedTensorType::get({}, tl.getElementType());
  return mlir::dlc::CrossEntropyOp::create(builder, loc(c.loc()), resultType,
                                           logits, labels, *reduction)
      .getResult();
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

namespace dlc {
OwningOpRef<ModuleOp> mlirGen(MLIRContext &ctx, const ModelAST &model,
                              StringRef fileName, const ImportOptions &options,
                              DiagnosticReporter &diag) {
  return MLIRGenImpl(ctx, fileName, options, diag).generate(model);
}
} // namespace dlc
