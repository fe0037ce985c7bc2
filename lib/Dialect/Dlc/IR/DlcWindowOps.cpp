//===- DlcWindowOps.cpp - Convolution and pooling ops ---------------------===//
//
// The verifiers of the ops that slide a window over an NCHW image
// (dlc.conv2d, dlc.max_pool2d, dlc.avg_pool2d) and of their gradients, and
// windowOutputSize, the output size that the frontends share with them.
//
//===----------------------------------------------------------------------===//

#include "DlcOpsUtils.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::oputils;

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
