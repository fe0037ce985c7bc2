//===- MLIRGenCalls.cpp - The op table and the arguments of a call -------===//
//
// What every op of the model format takes (the op table: each parameter's
// kind, whether it is required or keyword-only, and how the usage line
// shows it), binding the arguments of a call to those parameters, reading
// each argument with a message that names the op, the parameter and what
// was given, and the helpers the ops share to make types, scalars and
// parameters.
//
//===----------------------------------------------------------------------===//

#include "MLIRGenImpl.h"
#include "Suggest.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace dlc;
using namespace ::dlc::mlirgen;
using namespace mlir;
using llvm::StringRef;
using llvm::Twine;

static const char *const kIntTensorHint =
    "integer tensors (i64, i32) can only be cross_entropy labels or outputs";

//===----------------------------------------------------------------------===//
// The op table
//===----------------------------------------------------------------------===//

namespace {

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
constexpr ParamSpec kRecurrentParams[] = {
    {"x", ArgKind::Tensor, true, false, ""},
    {"hidden", ArgKind::Int, true, false, ""},
    {"name", ArgKind::LayerName, true, true, "NAME"},
    {"layers", ArgKind::Int, false, true, "1"},
    {"bidirectional", ArgKind::Bool, false, true, "false"},
    {"batch_first", ArgKind::Bool, false, true, "false"},
    {"last", ArgKind::Bool, false, true, "false"},
    {"bias", ArgKind::Bool, false, true, "true"}};
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
    {"lstm", OpKind::Recurrent, kRecurrentParams},
    {"gru", OpKind::Recurrent, kRecurrentParams},
    {"reshape", OpKind::Reshape, kReshapeParams},
    {"flatten", OpKind::Flatten, kFlattenParams},
    {"transpose", OpKind::Transpose, kTransposeParams},
    {"permute", OpKind::Permute, kPermuteParams},
    {"sum", OpKind::Reduce, kReduceParams},
    {"mean", OpKind::Reduce, kReduceParams},
    {"mse_loss", OpKind::MseLoss, kMseLossParams},
    {"cross_entropy", OpKind::CrossEntropy, kCrossEntropyParams},
};

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

} // namespace

namespace dlc::mlirgen {

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

} // namespace dlc::mlirgen

//===----------------------------------------------------------------------===//
// Binding arguments to parameters
//===----------------------------------------------------------------------===//

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
                                    RankedTensorType type,
                                    mlir::dlc::ParameterInit init,
                                    double bound) {
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(graph);
    mlir::dlc::ParameterOp::create(builder, loc(c.loc()), name, type, init,
                                   llvm::APFloat(bound),
                                   mlir::dlc::ParameterRole::weight,
                                   /*value=*/nullptr, /*shard_of=*/nullptr,
                                   /*shard_ranks=*/nullptr);
  }
  return mlir::dlc::ParamOp::create(builder, loc(c.loc()), type, name)
      .getResult();
}
