//===- MLIRGenLayers.cpp - Elementwise ops and layers ---------------------===//
//
// The calls of the model format that compute: the unary and binary
// elementwise ops (with NumPy broadcasting and number operands), gelu,
// linear, matmul, softmax and log_softmax, layer_norm, conv2d, the 2-D
// pools and batch_norm2d. Each checks its arguments' shapes and dtypes
// before it creates its op, and declares the parameters of a layer.
//
//===----------------------------------------------------------------------===//

#include "MLIRGenImpl.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include <cmath>

using namespace dlc;
using namespace ::dlc::mlirgen;
using namespace mlir;
using llvm::StringRef;
using llvm::Twine;
using mlir::dlc::GeluApproximation;
using mlir::dlc::ParameterInit;

//===----------------------------------------------------------------------===//
// Elementwise ops and layers
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
  std::optional<GeluApproximation> approximate =
      enumArg(c, 1, GeluApproximation::none,
              {GeluApproximation::none, GeluApproximation::tanh});
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
  Value weight = declareParameter(c, *name + ".weight", weightType,
                                  ParameterInit::uniform, bound);
  Value bias;
  if (*hasBias)
    bias = declareParameter(c, *name + ".bias",
                            RankedTensorType::get({*out}, elementType),
                            ParameterInit::uniform, bound);
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
  Value weight = declareParameter(c, *name + ".weight", paramType,
                                  ParameterInit::ones, 0.0);
  Value bias = declareParameter(c, *name + ".bias", paramType,
                                ParameterInit::zeros, 0.0);
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
  Value weight = declareParameter(c, *name + ".weight", weightType,
                                  ParameterInit::uniform, bound);
  Value bias;
  if (*hasBias)
    bias = declareParameter(c, *name + ".bias",
                            RankedTensorType::get({*out}, elementType),
                            ParameterInit::uniform, bound);
  return mlir::dlc::Conv2DOp::create(builder, loc(c.loc()), resultType, x,
                                     weight, bias,
                                     builder.getDenseI64ArrayAttr(*stride),
                                     builder.getDenseI64ArrayAttr(*padding),
                                     builder.getDenseI64ArrayAttr(*dilation),
                                     builder.getI64IntegerAttr(*groups),
                                     builder.getAttr<mlir::dlc::ActivationAttr>(
                                         mlir::dlc::Activation::none))
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
  Value weight = declareParameter(c, *name + ".weight", paramType,
                                  ParameterInit::ones, 0.0);
  Value bias = declareParameter(c, *name + ".bias", paramType,
                                ParameterInit::zeros, 0.0);
  Value mean = declareParameter(c, *name + ".running_mean", paramType,
                                ParameterInit::zeros, 0.0);
  Value var = declareParameter(c, *name + ".running_var", paramType,
                               ParameterInit::ones, 0.0);
  return mlir::dlc::BatchNormOp::create(builder, loc(c.loc()), xType, x, weight,
                                        bias, mean, var,
                                        builder.getF64FloatAttr(*eps))
      .getResult();
}
