//===- DlcOps.cpp - dlc dialect operations --------------------------------===//
//
// Verifiers, folders and canonicalisation patterns of the dlc ops. Verifier
// messages name the offending shapes so that a user reading a diagnostic on
// their model description knows which operand is wrong.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc;

namespace {
/// Prints a shape as `[a, b, c]` for diagnostics.
std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}
RankedTensorType tensorTy(Value v) {
  return cast<RankedTensorType>(v.getType());
}
} // namespace

StringRef mlir::dlc::elementTypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF64())
    return "f64";
  if (t.isSignlessInteger(64))
    return "i64";
  if (t.isSignlessInteger(32))
    return "i32";
  if (t.isSignlessInteger(8))
    return "i8";
  return "";
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

LogicalResult ParameterOp::verify() {
  StringRef init = getInit();
  if (init != "uniform" && init != "zeros" && init != "ones" && init != "data")
    return emitOpError("has unknown init '")
           << init << "'; expected 'uniform', 'zeros', 'ones' or 'data'";
  if ((init == "data") != bool(getValueAttr()))
    return emitOpError(init == "data"
                           ? "with init 'data' needs a 'value' attribute"
                           : "has a 'value' attribute but init is not 'data'");
  if (ElementsAttr value = getValueAttr()) {
    if (value.getType() != getType())
      return emitOpError("value type ")
             << value.getType() << " does not match the parameter's type "
             << getType();
    if (!isa<DenseElementsAttr, DenseResourceElementsAttr>(value))
      return emitOpError("value must be a dense or dense_resource attribute");
  }
  if (!getTensorType().hasStaticShape())
    return emitOpError("must have a static shape");
  if (getBound().convertToDouble() < 0)
    return emitOpError("has a negative bound");
  if (getRole() != kRoleWeight && getRole() != kRoleConstant &&
      getRole() != kRoleOptimizerState)
    return emitOpError("has unknown role '")
           << getRole()
           << "'; expected 'weight', 'constant' or 'optimizer_state'";
  return success();
}

LogicalResult ParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!param)
    return emitOpError("refers to '")
           << getName() << "', which is not a dlc.parameter";
  if (param.getType() != getType())
    return emitOpError("result type ")
           << getType() << " does not match the parameter's type "
           << param.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

static bool isKnownActivation(StringRef act) {
  return llvm::is_contained(
      {"none", "relu", "gelu", "gelu_tanh", "tanh", "sigmoid"}, act);
}

LogicalResult LinearOp::verify() {
  auto in = tensorTy(getInput()), w = tensorTy(getWeight()),
       out = tensorTy(getResult());
  if (in.getRank() < 1)
    return emitOpError("input must have rank >= 1");
  if (w.getRank() != 2)
    return emitOpError("weight must be [out, in], got ")
           << shapeStr(w.getShape());
  int64_t inF = in.getShape().back(), outF = w.getDimSize(0);
  if (w.getDimSize(1) != inF)
    return emitOpError("weight ")
           << shapeStr(w.getShape()) << " expects " << w.getDimSize(1)
           << " input features but the input " << shapeStr(in.getShape())
           << " has " << inF;
  if (getBias()) {
    auto b = tensorTy(getBias());
    if (b.getRank() != 1 || b.getDimSize(0) != outF)
      return emitOpError("bias must be [")
             << outF << "], got " << shapeStr(b.getShape());
    if (b.getElementType() != in.getElementType())
      return emitOpError("bias element type must match the input's");
  }
  if (w.getElementType() != in.getElementType() ||
      out.getElementType() != in.getElementType())
    return emitOpError("input, weight and result must have one element type");
  SmallVector<int64_t> expected(in.getShape());
  expected.back() = outF;
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be ")
           << shapeStr(expected) << ", got " << shapeStr(out.getShape());
  if (!isKnownActivation(getActivation()))
    return emitOpError("has unknown activation '") << getActivation() << "'";
  return success();
}

LogicalResult MatmulOp::verify() {
  auto a = tensorTy(getLhs()), b = tensorTy(getRhs()),
       c = tensorTy(getResult());
  if (a.getRank() != b.getRank() || (a.getRank() != 2 && a.getRank() != 3))
    return emitOpError("operands must both be rank 2 or both rank 3, got ")
           << shapeStr(a.getShape()) << " and " << shapeStr(b.getShape());
  if (a.getElementType() != b.getElementType() ||
      c.getElementType() != a.getElementType())
    return emitOpError("operands and result must have one element type");
  int64_t r = a.getRank();
  if (r == 3 && a.getDimSize(0) != b.getDimSize(0))
    return emitOpError("batch dimensions differ: ")
           << shapeStr(a.getShape()) << " and " << shapeStr(b.getShape());
  if (a.getDimSize(r - 1) != b.getDimSize(r - 2))
    return emitOpError("inner dimensions differ: ")
           << shapeStr(a.getShape()) << " x " << shapeStr(b.getShape());
  SmallVector<int64_t> expected(a.getShape());
  expected.back() = b.getShape().back();
  if (c.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be ")
           << shapeStr(expected) << ", got " << shapeStr(c.getShape());
  return success();
}

static FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                       ArrayRef<int64_t> b);

LogicalResult AttentionOp::verify() {
  auto q = tensorTy(getQuery()), k = tensorTy(getKey()),
       v = tensorTy(getValue()), o = tensorTy(getResult());
  int64_t r = q.getRank();
  if (r < 2 || k.getRank() != r || v.getRank() != r)
    return emitOpError("query, key and value must have one rank of at least "
                       "2, got ")
           << shapeStr(q.getShape()) << ", " << shapeStr(k.getShape())
           << " and " << shapeStr(v.getShape());
  Type elem = q.getElementType();
  if (k.getElementType() != elem || v.getElementType() != elem ||
      o.getElementType() != elem)
    return emitOpError("query, key, value and result must have one element "
                       "type");
  ArrayRef<int64_t> batch = q.getShape().drop_back(2);
  if (k.getShape().drop_back(2) != batch || v.getShape().drop_back(2) != batch)
    return emitOpError("batch dimensions differ: ")
           << shapeStr(q.getShape()) << ", " << shapeStr(k.getShape())
           << " and " << shapeStr(v.getShape());
  int64_t lq = q.getDimSize(r - 2), lk = k.getDimSize(r - 2);
  if (k.getDimSize(r - 1) != q.getDimSize(r - 1))
    return emitOpError("query and key must have one feature size, got ")
           << shapeStr(q.getShape()) << " and " << shapeStr(k.getShape());
  if (v.getDimSize(r - 2) != lk)
    return emitOpError("key and value must have one sequence length, got ")
           << shapeStr(k.getShape()) << " and " << shapeStr(v.getShape());
  SmallVector<int64_t> scores(batch);
  scores.append({lq, lk});
  if (Value mask = getMask()) {
    auto m = tensorTy(mask);
    if (m.getElementType() != elem)
      return emitOpError("mask element type must match the query's");
    auto b = broadcastShapes(m.getShape(), scores);
    if (failed(b) || ArrayRef<int64_t>(*b) != ArrayRef<int64_t>(scores))
      return emitOpError("mask ")
             << shapeStr(m.getShape()) << " does not broadcast to the scores "
             << shapeStr(scores);
  }
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be finite");
  SmallVector<int64_t> expected(batch);
  expected.append({lq, v.getDimSize(r - 1)});
  if (o.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be ")
           << shapeStr(expected) << ", got " << shapeStr(o.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// NumPy broadcasting of two static shapes; fails when a pair of dimensions
/// is neither equal nor 1.
static FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                       ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

static LogicalResult verifyBinary(Operation *op) {
  auto a = tensorTy(op->getOperand(0)), b = tensorTy(op->getOperand(1)),
       c = tensorTy(op->getResult(0));
  if (a.getElementType() != b.getElementType() ||
      c.getElementType() != a.getElementType())
    return op->emitOpError(
               "operands and result must have one element type, got ")
           << a.getElementType() << " and " << b.getElementType();
  auto shape = broadcastShapes(a.getShape(), b.getShape());
  if (failed(shape))
    return op->emitOpError("operand shapes ")
           << shapeStr(a.getShape()) << " and " << shapeStr(b.getShape())
           << " do not broadcast";
  if (c.getShape() != ArrayRef<int64_t>(*shape))
    return op->emitOpError("result must be ")
           << shapeStr(*shape) << ", got " << shapeStr(c.getShape());
  return success();
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be 'none' or 'tanh', got '")
           << getApproximate() << "'";
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

static LogicalResult verifyDim(Operation *op, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError("dim ")
           << dim << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyDim(*this, getDim(), tensorTy(getInput()).getRank());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyDim(*this, getDim(), tensorTy(getInput()).getRank());
}

LogicalResult LayerNormOp::verify() {
  auto in = tensorTy(getInput());
  if (in.getRank() < 1)
    return emitOpError("input must have rank >= 1");
  int64_t d = in.getShape().back();
  for (Value v : {getWeight(), getBias()}) {
    auto t = tensorTy(v);
    if (t.getRank() != 1 || t.getDimSize(0) != d ||
        t.getElementType() != in.getElementType())
      return emitOpError("weight and bias must be [")
             << d << "] of " << in.getElementType() << ", got " << t;
  }
  if (getEpsilon().convertToDouble() <= 0)
    return emitOpError("epsilon must be positive");
  return success();
}

LogicalResult BatchNormOp::verify() {
  auto in = tensorTy(getInput());
  if (in.getRank() < 2)
    return emitOpError("input must be [N, C, ...], got ")
           << shapeStr(in.getShape());
  int64_t c = in.getDimSize(1);
  StringRef names[] = {"scale", "bias", "mean", "var"};
  Value values[] = {getScale(), getBias(), getMean(), getVar()};
  for (auto [name, v] : llvm::zip(names, values)) {
    auto t = tensorTy(v);
    if (t.getRank() != 1 || t.getDimSize(0) != c ||
        t.getElementType() != in.getElementType())
      return emitOpError() << name << " must be [" << c << "] of "
                           << in.getElementType() << " (one per channel of "
                           << shapeStr(in.getShape()) << "), got " << t;
  }
  if (getEpsilon().convertToDouble() <= 0)
    return emitOpError("epsilon must be positive");
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

int64_t mlir::dlc::windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                    int64_t padBefore, int64_t padAfter,
                                    int64_t dilation) {
  if (stride < 1 || kernel < 1 || dilation < 1)
    return 0;
  std::optional<int64_t> padded = llvm::checkedAdd(in, padBefore);
  if (padded)
    padded = llvm::checkedAdd(*padded, padAfter);
  std::optional<int64_t> reach = llvm::checkedMul(dilation, kernel - 1);
  if (!padded || !reach || *padded - 1 < *reach)
    return 0;
  return (*padded - 1 - *reach) / stride + 1;
}

/// Checks the window attributes shared by convolutions and pools: `kernel`
/// (when given) and `strides` and `dilations` are two positive sizes
/// [h, w], `padding` four non-negative ones [top, left, bottom, right].
static LogicalResult verifyWindowAttrs(Operation *op,
                                       std::optional<ArrayRef<int64_t>> kernel,
                                       ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> padding,
                                       ArrayRef<int64_t> dilations) {
  auto positivePair = [&](StringRef name,
                          ArrayRef<int64_t> v) -> LogicalResult {
    if (v.size() != 2 || v[0] < 1 || v[1] < 1 || v[0] > kMaxWindowAttr ||
        v[1] > kMaxWindowAttr)
      return op->emitOpError(name)
             << " must be two positive sizes [h, w] of at most "
             << kMaxWindowAttr << ", got " << shapeStr(v);
    return success();
  };
  if (kernel && failed(positivePair("kernel", *kernel)))
    return failure();
  if (failed(positivePair("strides", strides)) ||
      failed(positivePair("dilations", dilations)))
    return failure();
  if (padding.size() != 4 || llvm::any_of(padding, [](int64_t p) {
        return p < 0 || p > kMaxWindowAttr;
      }))
    return op->emitOpError("padding must be four non-negative sizes [top, "
                           "left, bottom, right] of at most ")
           << kMaxWindowAttr << ", got " << shapeStr(padding);
  return success();
}

/// Checks that `out` is the [N, outChannels, OH, OW] that a window of
/// `kernel` makes of the [N, C, H, W] input `in`, and that both are NCHW
/// tensors of one element type.
static LogicalResult
verifyWindowShapes(Operation *op, RankedTensorType in, ArrayRef<int64_t> kernel,
                   ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
                   ArrayRef<int64_t> dilations, int64_t outChannels,
                   RankedTensorType out, StringRef inName, StringRef outName) {
  if (in.getRank() != 4)
    return op->emitOpError(inName)
           << " must be [N, C, H, W], got " << shapeStr(in.getShape());
  if (out.getElementType() != in.getElementType())
    return op->emitOpError(inName)
           << " and " << outName << " must have one element type, got "
           << in.getElementType() << " and " << out.getElementType();
  int64_t oh = windowOutputSize(in.getDimSize(2), kernel[0], strides[0],
                                padding[0], padding[2], dilations[0]);
  int64_t ow = windowOutputSize(in.getDimSize(3), kernel[1], strides[1],
                                padding[1], padding[3], dilations[1]);
  if (oh < 1 || ow < 1)
    return op->emitOpError("the ")
           << kernel[0] << "x" << kernel[1] << " window (dilations "
           << shapeStr(dilations) << ") does not fit the "
           << in.getDimSize(2) + padding[0] + padding[2] << "x"
           << in.getDimSize(3) + padding[1] + padding[3]
           << " padded image of the " << inName << " "
           << shapeStr(in.getShape());
  SmallVector<int64_t> expected{in.getDimSize(0), outChannels, oh, ow};
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError(outName) << " must be " << shapeStr(expected)
                                    << ", got " << shapeStr(out.getShape());
  return success();
}

/// The weight of a convolution against its input [N, C, H, W]: [O,
/// C/groups, KH, KW] with O a multiple of `groups`.
static LogicalResult verifyConvWeight(Operation *op, RankedTensorType in,
                                      RankedTensorType w, int64_t groups) {
  if (groups < 1)
    return op->emitOpError("groups must be positive, got ") << groups;
  if (w.getRank() != 4)
    return op->emitOpError("weight must be [O, C/groups, KH, KW], got ")
           << shapeStr(w.getShape());
  if (w.getElementType() != in.getElementType())
    return op->emitOpError("weight and input must have one element type");
  if (in.getRank() == 4) {
    int64_t c = in.getDimSize(1);
    if (c % groups != 0)
      return op->emitOpError("the input's ")
             << c << " channels do not split into " << groups << " groups";
    if (w.getDimSize(1) != c / groups)
      return op->emitOpError("weight ")
             << shapeStr(w.getShape()) << " expects " << w.getDimSize(1)
             << " input channels per group, but the input "
             << shapeStr(in.getShape()) << " has " << c << " channels in "
             << groups << (groups == 1 ? " group" : " groups");
  }
  if (w.getDimSize(0) % groups != 0)
    return op->emitOpError("the weight's ")
           << w.getDimSize(0) << " output channels do not split into " << groups
           << " groups";
  return success();
}

LogicalResult Conv2DOp::verify() {
  auto in = tensorTy(getInput()), w = tensorTy(getWeight());
  if (failed(verifyWindowAttrs(*this, std::nullopt, getStrides(), getPadding(),
                               getDilations())) ||
      failed(verifyConvWeight(*this, in, w, getGroups())))
    return failure();
  int64_t o = w.getDimSize(0);
  if (getBias()) {
    auto b = tensorTy(getBias());
    if (b.getRank() != 1 || b.getDimSize(0) != o ||
        b.getElementType() != in.getElementType())
      return emitOpError("bias must be [")
             << o << "] of " << in.getElementType() << ", got " << b;
  }
  if (failed(verifyWindowShapes(*this, in, w.getShape().drop_front(2),
                                getStrides(), getPadding(), getDilations(), o,
                                tensorTy(getResult()), "input", "result")))
    return failure();
  if (!isKnownActivation(getActivation()))
    return emitOpError("has unknown activation '") << getActivation() << "'";
  return success();
}

/// A pool (or its gradient): the window attributes, and `kernel` sliding
/// over `in` to give `out`, the channels passing through.
static LogicalResult
verifyPool(Operation *op, RankedTensorType in, ArrayRef<int64_t> kernel,
           ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
           ArrayRef<int64_t> dilations, RankedTensorType out, StringRef inName,
           StringRef outName) {
  if (failed(verifyWindowAttrs(op, kernel, strides, padding, dilations)))
    return failure();
  return verifyWindowShapes(op, in, kernel, strides, padding, dilations,
                            in.getRank() == 4 ? in.getDimSize(1) : 0, out,
                            inName, outName);
}

/// Average pools have no dilation.
static constexpr int64_t kNoDilation[] = {1, 1};

LogicalResult MaxPool2DOp::verify() {
  return verifyPool(*this, tensorTy(getInput()), getKernel(), getStrides(),
                    getPadding(), getDilations(), tensorTy(getResult()),
                    "input", "result");
}

LogicalResult AvgPool2DOp::verify() {
  return verifyPool(*this, tensorTy(getInput()), getKernel(), getStrides(),
                    getPadding(), kNoDilation, tensorTy(getResult()), "input",
                    "result");
}

LogicalResult Conv2DGradInputOp::verify() {
  auto in = tensorTy(getResult()), w = tensorTy(getWeight());
  if (failed(verifyWindowAttrs(*this, std::nullopt, getStrides(), getPadding(),
                               getDilations())) ||
      failed(verifyConvWeight(*this, in, w, getGroups())))
    return failure();
  return verifyWindowShapes(*this, in, w.getShape().drop_front(2), getStrides(),
                            getPadding(), getDilations(), w.getDimSize(0),
                            tensorTy(getGrad()), "result", "grad");
}

LogicalResult Conv2DGradWeightOp::verify() {
  auto in = tensorTy(getInput()), w = tensorTy(getResult());
  if (failed(verifyWindowAttrs(*this, std::nullopt, getStrides(), getPadding(),
                               getDilations())) ||
      failed(verifyConvWeight(*this, in, w, getGroups())))
    return failure();
  return verifyWindowShapes(*this, in, w.getShape().drop_front(2), getStrides(),
                            getPadding(), getDilations(), w.getDimSize(0),
                            tensorTy(getGrad()), "input", "grad");
}

LogicalResult MaxPool2DGradOp::verify() {
  return verifyPool(*this, tensorTy(getInput()), getKernel(), getStrides(),
                    getPadding(), getDilations(), tensorTy(getGrad()), "input",
                    "grad");
}

LogicalResult AvgPool2DGradOp::verify() {
  return verifyPool(*this, tensorTy(getResult()), getKernel(), getStrides(),
                    getPadding(), kNoDilation, tensorTy(getGrad()), "result",
                    "grad");
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = tensorTy(getInput()), out = tensorTy(getResult());
  if (in.getElementType() != out.getElementType())
    return emitOpError("must keep the element type");
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return emitOpError("needs static shapes");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << shapeStr(in.getShape()) << " (" << in.getNumElements()
           << " elements) into " << shapeStr(out.getShape()) << " ("
           << out.getNumElements() << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

namespace {
/// reshape(reshape(x)) -> reshape(x)
struct FoldReshapeChain : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getInput());
    return success();
  }
};

/// transpose(transpose(x, p), q) -> transpose(x, p o q)
struct FoldTransposeChain : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    ArrayRef<int64_t> p = inner.getPermutation(), q = op.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t i : q)
      composed.push_back(p[i]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getInput(),
                                             composed);
    return success();
  }
};
} // namespace

/// The inputs of `v` joined along `dim`: those of a concat along `dim`
/// used only here, else `v` itself.
static void appendConcatInputs(Value v, int64_t dim,
                               SmallVectorImpl<Value> &out) {
  auto concat = v.getDefiningOp<ConcatOp>();
  if (concat && v.hasOneUse() && static_cast<int64_t>(concat.getDim()) == dim)
    llvm::append_range(out, concat.getInputs());
  else
    out.push_back(v);
}

static Value concatAlong(PatternRewriter &rewriter, Location loc, Value a,
                         Value b, int64_t dim) {
  SmallVector<Value> inputs;
  appendConcatInputs(a, dim, inputs);
  appendConcatInputs(b, dim, inputs);
  auto ta = cast<RankedTensorType>(a.getType());
  SmallVector<int64_t> shape(ta.getShape());
  shape[dim] += cast<RankedTensorType>(b.getType()).getDimSize(dim);
  return ConcatOp::create(rewriter, loc,
                          RankedTensorType::get(shape, ta.getElementType()),
                          inputs, dim);
}

namespace {

/// slice_grad(a) + slice_grad(b) -> slice_grad(concat(a, b)) when the two
/// unit-stride windows of one tensor lie side by side along one dimension
/// (the gradients of the slices an unrolled recurrent op or a split
/// takes); a window that covers the whole tensor is the concat itself.
/// Exact: each element is one window's value plus zeros.
struct JoinAdjacentSliceGrads : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto x = op.getLhs().getDefiningOp<SliceGradOp>();
    auto y = op.getRhs().getDefiningOp<SliceGradOp>();
    if (!x || !y || !op.getLhs().hasOneUse() || !op.getRhs().hasOneUse() ||
        x.getType() != op.getType() || y.getType() != op.getType())
      return failure();
    auto unit = [](ArrayRef<int64_t> s) {
      return llvm::all_of(s, [](int64_t v) { return v == 1; });
    };
    if (!unit(x.getStrides()) || !unit(y.getStrides()))
      return failure();
    auto tx = cast<RankedTensorType>(x.getGrad().getType());
    auto ty = cast<RankedTensorType>(y.getGrad().getType());
    ArrayRef<int64_t> ox = x.getOffsets(), oy = y.getOffsets();
    int64_t rank = tx.getRank(), dim = -1;
    for (int64_t d = 0; d < rank; ++d) {
      if (ox[d] == oy[d] && tx.getDimSize(d) == ty.getDimSize(d))
        continue;
      if (dim >= 0)
        return failure();
      dim = d;
    }
    if (dim < 0)
      return failure();
    // First and second window along `dim`.
    SliceGradOp first = x, second = y;
    if (oy[dim] + ty.getDimSize(dim) == ox[dim])
      std::swap(first, second);
    auto tf = cast<RankedTensorType>(first.getGrad().getType());
    if (first.getOffsets()[dim] + tf.getDimSize(dim) !=
        second.getOffsets()[dim])
      return failure();
    Value joined = concatAlong(rewriter, op.getLoc(), first.getGrad(),
                               second.getGrad(), dim);
    if (joined.getType() == op.getType()) {
      rewriter.replaceOp(op, joined);
      return success();
    }
    rewriter.replaceOpWithNewOp<SliceGradOp>(op, op.getType(), joined,
                                             first.getOffsetsAttr(),
                                             first.getStridesAttr());
    return success();
  }
};

/// matmul(a1, b1) + matmul(a2, b2) -> matmul(concat(a1, a2, 1),
/// concat(b1, b2, 0)) for rank-2 products of one shape where one inner
/// dimension is small: one GEMM over the joined inner dimension instead of
/// thin GEMMs and the sums between them (the weight gradient of a layer an
/// unrolled recurrent op applies at every step). The sum is rounded once
/// per GEMM block instead of once per product.
struct JoinMatmulSum : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  static constexpr int64_t kThinInner = 128;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto x = op.getLhs().getDefiningOp<MatmulOp>();
    auto y = op.getRhs().getDefiningOp<MatmulOp>();
    if (!x || !y || !op.getLhs().hasOneUse() || !op.getRhs().hasOneUse() ||
        x.getType() != op.getType() || y.getType() != op.getType() ||
        cast<RankedTensorType>(op.getType()).getRank() != 2)
      return failure();
    int64_t kx = cast<RankedTensorType>(x.getLhs().getType()).getDimSize(1);
    int64_t ky = cast<RankedTensorType>(y.getLhs().getType()).getDimSize(1);
    if (std::min(kx, ky) > kThinInner)
      return failure();
    Location loc = op.getLoc();
    Value a = concatAlong(rewriter, loc, x.getLhs(), y.getLhs(), 1);
    Value b = concatAlong(rewriter, loc, x.getRhs(), y.getRhs(), 0);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), a, b);
    return success();
  }
};

} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<JoinAdjacentSliceGrads, JoinMatmulSum>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldReshapeChain>(context);
}

LogicalResult ConcatOp::verify() {
  auto out = cast<RankedTensorType>(getType());
  int64_t rank = out.getRank(), dim = getDim();
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  if (dim < 0 || dim >= rank)
    return emitOpError("dim ") << dim << " is out of range for rank " << rank;
  int64_t total = 0;
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != rank || t.getElementType() != out.getElementType())
      return emitOpError("input ")
             << i << " must be a rank-" << rank << " tensor of "
             << out.getElementType() << ", got " << t;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && t.getDimSize(d) != out.getDimSize(d))
        return emitOpError("input ")
               << i << " has shape " << shapeStr(t.getShape())
               << ", which does not match the result "
               << shapeStr(out.getShape()) << " outside dim " << dim;
    total += t.getDimSize(dim);
  }
  if (total != out.getDimSize(dim))
    return emitOpError("the inputs add up to ")
           << total << " along dim " << dim << ", the result has "
           << out.getDimSize(dim);
  return success();
}

/// Checks that a window of `window`'s shape at `offsets` with `strides`
/// lies inside `full`, both of one rank and element type.
static LogicalResult verifyWindow(Operation *op, RankedTensorType full,
                                  RankedTensorType window,
                                  ArrayRef<int64_t> offsets,
                                  ArrayRef<int64_t> strides) {
  int64_t rank = full.getRank();
  if (window.getRank() != rank ||
      window.getElementType() != full.getElementType())
    return op->emitOpError("the window ")
           << window << " and the tensor " << full
           << " must have one rank and element type";
  if (int64_t(offsets.size()) != rank || int64_t(strides.size()) != rank)
    return op->emitOpError("needs ")
           << rank << " offsets and strides, got " << offsets.size() << " and "
           << strides.size();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = window.getDimSize(d), in = full.getDimSize(d);
    if (offsets[d] < 0 || strides[d] == 0)
      return op->emitOpError("dim ")
             << d << ": offset " << offsets[d] << " must be non-negative and "
             << "stride " << strides[d] << " non-zero";
    // The last element, offset + (size - 1) * stride, lies in [0, in) too
    // (a negative stride walks backwards from the offset).
    int64_t room = strides[d] > 0 ? (in - 1 - offsets[d]) / strides[d]
                                  : offsets[d] / -strides[d];
    if (size > 0 && (offsets[d] >= in || size - 1 > room))
      return op->emitOpError("dim ")
             << d << ": a window of " << size << " at offset " << offsets[d]
             << " with stride " << strides[d] << " does not fit in " << in;
  }
  return success();
}

LogicalResult SliceOp::verify() {
  return verifyWindow(*this, cast<RankedTensorType>(getInput().getType()),
                      cast<RankedTensorType>(getType()), getOffsets(),
                      getStrides());
}

LogicalResult SliceGradOp::verify() {
  return verifyWindow(*this, cast<RankedTensorType>(getType()),
                      cast<RankedTensorType>(getGrad().getType()), getOffsets(),
                      getStrides());
}

/// Checks that `rows` is the shape that gathering `table` by `indices`
/// gives (the indices' shape, then the table's trailing dimensions).
static LogicalResult verifyGatherShapes(Operation *op, RankedTensorType table,
                                        RankedTensorType indices,
                                        RankedTensorType rows) {
  if (table.getRank() < 1)
    return op->emitOpError("the table must have at least one dimension");
  SmallVector<int64_t> want(indices.getShape());
  want.append(table.getShape().begin() + 1, table.getShape().end());
  if (rows.getShape() != ArrayRef<int64_t>(want) ||
      rows.getElementType() != table.getElementType())
    return op->emitOpError("gathering ")
           << table << " by " << indices << " gives "
           << RankedTensorType::get(want, table.getElementType()) << ", not "
           << rows;
  return success();
}

/// Checks that every operand broadcasts (NumPy rules) to the result's shape.
static LogicalResult verifyBroadcastOperands(Operation *op,
                                             RankedTensorType out) {
  for (Value v : op->getOperands()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() > out.getRank())
      return op->emitOpError("operand ")
             << t << " has a higher rank than the result " << out;
    int64_t offset = out.getRank() - t.getRank();
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (t.getDimSize(d) != 1 && t.getDimSize(d) != out.getDimSize(d + offset))
        return op->emitOpError("operand ")
               << t << " does not broadcast to the result " << out;
  }
  return success();
}

LogicalResult WhereOp::verify() {
  auto out = cast<RankedTensorType>(getType());
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  if (lhs.getElementType() != out.getElementType() ||
      rhs.getElementType() != out.getElementType())
    return emitOpError("the choices and the result must have one element "
                       "type, got ")
           << lhs.getElementType() << ", " << rhs.getElementType() << " and "
           << out.getElementType();
  return verifyBroadcastOperands(*this, out);
}

LogicalResult CompareOp::verify() {
  Type lhs = getElementTypeOrSelf(getLhs().getType());
  Type rhs = getElementTypeOrSelf(getRhs().getType());
  if (lhs != rhs)
    return emitOpError("the operands must have one element type, got ")
           << lhs << " and " << rhs;
  if (!isa<FloatType, IntegerType>(lhs))
    return emitOpError("compares floats or integers, not ") << lhs;
  return verifyBroadcastOperands(*this, cast<RankedTensorType>(getType()));
}

LogicalResult LogicalOp::verify() {
  return verifyBroadcastOperands(*this, cast<RankedTensorType>(getType()));
}

LogicalResult GatherOp::verify() {
  return verifyGatherShapes(*this, cast<RankedTensorType>(getTable().getType()),
                            cast<RankedTensorType>(getIndices().getType()),
                            cast<RankedTensorType>(getType()));
}

LogicalResult GatherGradOp::verify() {
  return verifyGatherShapes(*this, cast<RankedTensorType>(getType()),
                            cast<RankedTensorType>(getIndices().getType()),
                            cast<RankedTensorType>(getGrad().getType()));
}

/// The shapes of dlc.gather_elements (and of its gradient, whose result is
/// the input): one rank, the indices' shape the input's but along `axis`.
static LogicalResult verifyGatherElements(Operation *op, RankedTensorType input,
                                          RankedTensorType indices,
                                          RankedTensorType elements,
                                          int64_t axis) {
  int64_t rank = input.getRank();
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is not a dimension of " << input;
  if (indices.getRank() != rank)
    return op->emitOpError("the indices ")
           << indices << " must have the rank of " << input;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.getDimSize(d) != input.getDimSize(d))
      return op->emitOpError("the indices ")
             << indices << " must match " << input << " but along axis "
             << axis;
  if (elements.getShape() != indices.getShape() ||
      elements.getElementType() != input.getElementType())
    return op->emitOpError("gathering ")
           << input << " by " << indices << " gives "
           << RankedTensorType::get(indices.getShape(), input.getElementType())
           << ", not " << elements;
  return success();
}

LogicalResult GatherElementsOp::verify() {
  return verifyGatherElements(*this, tensorTy(getInput()),
                              tensorTy(getIndices()), tensorTy(getResult()),
                              getAxis());
}

LogicalResult GatherElementsGradOp::verify() {
  return verifyGatherElements(*this, tensorTy(getResult()),
                              tensorTy(getIndices()), tensorTy(getGrad()),
                              getAxis());
}

LogicalResult TransposeOp::verify() {
  auto in = tensorTy(getInput()), out = tensorTy(getResult());
  ArrayRef<int64_t> perm = getPermutation();
  if ((int64_t)perm.size() != in.getRank())
    return emitOpError("permutation has ")
           << perm.size() << " entries for a rank-" << in.getRank() << " input";
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError("permutation ")
             << shapeStr(perm) << " is not a permutation of 0.."
             << in.getRank() - 1;
    seen[p] = true;
    expected.push_back(in.getDimSize(p));
  }
  if (out.getElementType() != in.getElementType() ||
      out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be ")
           << shapeStr(expected) << " of " << in.getElementType();
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if ((int64_t)i != p)
      return {};
  return getInput();
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldTransposeChain>(context);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static LogicalResult verifyReduction(Operation *op, ArrayRef<int64_t> dims,
                                     bool keepdim) {
  auto in = tensorTy(op->getOperand(0)), out = tensorTy(op->getResult(0));
  if (out.getElementType() != in.getElementType())
    return op->emitOpError("must keep the element type");
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= in.getRank())
      return op->emitOpError("dim ")
             << dims[i] << " is out of range for rank " << in.getRank();
    if (i > 0 && dims[i] <= dims[i - 1])
      return op->emitOpError("dims must be sorted and unique, got ")
             << shapeStr(dims);
  }
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!llvm::is_contained(dims, d))
      expected.push_back(in.getDimSize(d));
    else if (keepdim)
      expected.push_back(1);
  }
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("result must be ")
           << shapeStr(expected) << ", got " << shapeStr(out.getShape());
  return success();
}

LogicalResult SumOp::verify() {
  return verifyReduction(*this, getDims(), getKeepdim());
}
LogicalResult MeanOp::verify() {
  return verifyReduction(*this, getDims(), getKeepdim());
}
LogicalResult MaxOp::verify() {
  return verifyReduction(*this, getDims(), getKeepdim());
}
LogicalResult MinOp::verify() {
  return verifyReduction(*this, getDims(), getKeepdim());
}
LogicalResult ExtremumGradOp::verify() {
  auto in = tensorTy(getInput());
  ArrayRef<int64_t> dims = getDims();
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0 || dims[i] >= in.getRank() ||
        (i > 0 && dims[i] <= dims[i - 1]))
      return emitOpError("dims must be sorted, unique and in range for rank ")
             << in.getRank() << ", got " << shapeStr(dims);
  SmallVector<int64_t> reduced;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!llvm::is_contained(getDims(), d))
      reduced.push_back(in.getDimSize(d));
    else if (getKeepdim())
      reduced.push_back(1);
  }
  for (Value v : {getExtremum(), getGrad()})
    if (tensorTy(v).getShape() != ArrayRef<int64_t>(reduced))
      return emitOpError("extremum and grad must be ")
             << shapeStr(reduced) << ", got "
             << shapeStr(tensorTy(v).getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

static LogicalResult verifyReductionKind(Operation *op, StringRef r) {
  if (r != "mean" && r != "sum")
    return op->emitOpError("reduction must be 'mean' or 'sum', got '")
           << r << "'";
  return success();
}

LogicalResult MseLossOp::verify() {
  auto a = tensorTy(getInput()), b = tensorTy(getTarget());
  if (a != b)
    return emitOpError("input and target must have the same type, got ")
           << a << " and " << b;
  if (tensorTy(getResult()).getElementType() != a.getElementType())
    return emitOpError("result must be a scalar of ") << a.getElementType();
  return verifyReductionKind(*this, getReduction());
}

/// Logits [N, C] and labels [N], as cross-entropy and its gradient take.
static LogicalResult verifyLogitsAndLabels(Operation *op, Value logitsValue,
                                           Value labelsValue) {
  auto logits = tensorTy(logitsValue), labels = tensorTy(labelsValue);
  if (logits.getRank() != 2)
    return op->emitOpError("logits must be [N, C], got ")
           << shapeStr(logits.getShape());
  if (labels.getRank() != 1 || labels.getDimSize(0) != logits.getDimSize(0))
    return op->emitOpError("labels must be [")
           << logits.getDimSize(0) << "] class indices, got "
           << shapeStr(labels.getShape());
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(verifyLogitsAndLabels(*this, getLogits(), getLabels())))
    return failure();
  auto logits = tensorTy(getLogits());
  if (tensorTy(getResult()).getElementType() != logits.getElementType())
    return emitOpError("result must be a scalar of ")
           << logits.getElementType();
  return verifyReductionKind(*this, getReduction());
}

//===----------------------------------------------------------------------===//
// Helpers of the training step
//===----------------------------------------------------------------------===//

LogicalResult FillOp::verify() {
  if (!tensorTy(getResult()).hasStaticShape())
    return emitOpError("must have a static shape");
  if (auto it = dyn_cast<IntegerType>(tensorTy(getResult()).getElementType())) {
    double v = getValue().convertToDouble();
    double limit =
        std::min(std::ldexp(1.0, 53), std::ldexp(1.0, int(it.getWidth()) - 1));
    bool isBool = it.getWidth() == 1;
    if (v != std::trunc(v) ||
        (isBool ? (v != 0 && v != 1) : (v < -limit || v >= limit)))
      return emitOpError("value ")
             << v << " is not an integer that " << it
             << " holds (and a double represents exactly)";
  }
  return success();
}

LogicalResult BroadcastToOp::verify() {
  auto in = tensorTy(getInput()), out = tensorTy(getResult());
  if (in.getElementType() != out.getElementType())
    return emitOpError("must keep the element type");
  auto shape = broadcastShapes(in.getShape(), out.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != out.getShape())
    return emitOpError("cannot broadcast ")
           << shapeStr(in.getShape()) << " to " << shapeStr(out.getShape());
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult ActivationGradOp::verify() {
  if (getActivation() == "none" || !isKnownActivation(getActivation()))
    return emitOpError("has unknown activation '") << getActivation() << "'";
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  if (failed(verifyLogitsAndLabels(*this, getLogits(), getLabels())))
    return failure();
  auto logits = tensorTy(getLogits());
  if (tensorTy(getGrad()).getElementType() != logits.getElementType())
    return emitOpError("grad must be a scalar of ") << logits.getElementType();
  return verifyReductionKind(*this, getReduction());
}

LogicalResult LayerNormGradOp::verify() {
  auto x = tensorTy(getInput()), w = tensorTy(getWeight());
  if (x.getRank() < 1 || w.getRank() != 1 ||
      w.getDimSize(0) != x.getShape().back())
    return emitOpError("weight must be [")
           << (x.getRank() ? x.getShape().back() : 0) << "], got "
           << shapeStr(w.getShape());
  if (w.getElementType() != x.getElementType())
    return emitOpError("weight and input must have one element type");
  return success();
}

unsigned OptimizerUpdateOp::statesPerParam(DictionaryAttr config) {
  auto kind = config.getAs<StringAttr>("kind");
  if (!kind)
    return 0;
  if (kind.getValue() == "adam" || kind.getValue() == "adamw")
    return 2;
  auto momentum = config.getAs<FloatAttr>("momentum");
  return momentum && momentum.getValueAsDouble() != 0.0 ? 1 : 0;
}

LogicalResult OptimizerUpdateOp::verify() {
  DictionaryAttr config = getConfig();
  auto kind = config.getAs<StringAttr>("kind");
  if (!kind || !llvm::is_contained({"sgd", "adam", "adamw"}, kind.getValue()))
    return emitOpError("config needs kind = \"sgd\", \"adam\" or \"adamw\"");
  SmallVector<StringRef> needed{"lr", "weight_decay"};
  if (kind.getValue() == "sgd")
    needed.append({"momentum", "dampening"});
  else
    needed.append({"eps"});
  for (StringRef key : needed)
    if (!config.getAs<FloatAttr>(key))
      return emitOpError("config needs a float '") << key << "'";
  if (kind.getValue() == "sgd" && !config.getAs<BoolAttr>("nesterov"))
    return emitOpError("config needs a bool 'nesterov'");
  if (kind.getValue() != "sgd") {
    auto betas = config.getAs<ArrayAttr>("betas");
    if (!betas || betas.size() != 2 ||
        !llvm::all_of(betas, [](Attribute a) { return isa<FloatAttr>(a); }))
      return emitOpError("config needs 'betas', two floats");
    if (auto amsgrad = config.getAs<BoolAttr>("amsgrad");
        amsgrad && amsgrad.getValue())
      return emitOpError("amsgrad is not supported");
  }
  if (!getScaler().empty() && getScaler().size() != 2)
    return emitOpError("scaler takes the scale and the growth tracker");
  if (!getScaler().empty() && !config.getAs<FloatAttr>("init_scale"))
    return emitOpError("config needs a float 'init_scale' with a scaler");
  size_t n = getParams().size();
  if (getGrads().size() != n)
    return emitOpError("has ")
           << n << " params but " << getGrads().size() << " grads";
  unsigned per = statesPerParam(config);
  if (getStates().size() != per * n)
    return emitOpError("needs ") << per * n << " state tensors (" << per
                                 << " per param), got " << getStates().size();
  for (size_t i = 0; i < n; ++i) {
    Type t = getParams()[i].getType();
    if (getGrads()[i].getType() != t)
      return emitOpError("grad ")
             << i << " has type " << getGrads()[i].getType() << ", its param "
             << t;
    for (unsigned k = 0; k < per; ++k)
      if (getStates()[k * n + i].getType() != t)
        return emitOpError("state ")
               << k * n + i << " has type " << getStates()[k * n + i].getType()
               << ", its param " << t;
  }
  return success();
}

LogicalResult OptimizerUpdateOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  inferred.push_back(adaptor.getStep().getType());
  for (Value v : adaptor.getParams())
    inferred.push_back(v.getType());
  for (Value v : adaptor.getStates())
    inferred.push_back(v.getType());
  if (!adaptor.getScaler().empty()) {
    for (Value v : adaptor.getScaler())
      inferred.push_back(v.getType());
    inferred.push_back(RankedTensorType::get(
        {}, IntegerType::get(adaptor.getStep().getContext(), 32)));
  }
  return success();
}

LogicalResult AssignOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!param)
    return emitOpError("refers to '")
           << getName() << "', which is not a dlc.parameter";
  if (param.getType() != getValue().getType())
    return emitOpError("value type ")
           << getValue().getType() << " does not match the parameter's type "
           << param.getType();
  return success();
}

LogicalResult CastOp::verify() {
  auto in = tensorTy(getInput()), out = tensorTy(getResult());
  if (in.getShape() != out.getShape())
    return emitOpError("must keep the shape: ")
           << shapeStr(in.getShape()) << " to " << shapeStr(out.getShape());
  if (isa<IntegerType>(out.getElementType()) &&
      !isa<IntegerType>(in.getElementType()))
    return emitOpError("converts integers to integers, not ")
           << in.getElementType() << " to " << out.getElementType();
  return success();
}

LogicalResult IntArithOp::verify() {
  Type lhs = getElementTypeOrSelf(getLhs().getType());
  if (lhs != getElementTypeOrSelf(getRhs().getType()) ||
      lhs != getElementTypeOrSelf(getType()))
    return emitOpError("operands and result must have one element type");
  return verifyBroadcastOperands(*this, cast<RankedTensorType>(getType()));
}

LogicalResult CumSumOp::verify() {
  int64_t rank = tensorTy(getInput()).getRank();
  auto axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ")
           << axis << " is not a dimension of " << getInput().getType();
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // x -> wider -> x is exact: fold the round trip.
  if (auto inner = getInput().getDefiningOp<CastOp>())
    if (inner.getInput().getType() == getType() &&
        tensorTy(inner.getResult()).getElementTypeBitWidth() >
            tensorTy(getResult()).getElementTypeBitWidth())
      return inner.getInput();
  return {};
}

#include "dlc/Dialect/Dlc/IR/DlcInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dlc/Dialect/Dlc/IR/DlcOps.cpp.inc"
