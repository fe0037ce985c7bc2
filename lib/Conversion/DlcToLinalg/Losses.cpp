//===- Losses.cpp - losses and their gradients ----------------------------===//
//
// Part of dlc-lower-to-linalg. The mean squared error is an elementwise loop
// and a sum; cross entropy over integer class labels (with PyTorch's ignore
// index and label smoothing) reads each row's log-softmax at its label, its
// gradient is softmax minus the (smoothed) one-hot label, both divided by the
// number of labels that count.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::lowering;

namespace {

struct LowerMseLoss : OpRewritePattern<MseLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MseLossOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto ty = tensorTy(op.getInput());
    AffineMap id = b.getMultiDimIdentityMap(ty.getRank());
    Value y =
        reduce(b, loc, ty.getShape(), allDims(ty.getRank()), false,
               ValueRange{op.getInput(), op.getTarget()}, {id, id},
               ty.getElementType(), 0.0,
               [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                 Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                 return arith::AddFOp::create(
                            nb, l, acc, arith::MulFOp::create(nb, l, d, d))
                     .getResult();
               });
    if (op.getReduction() == LossReduction::mean)
      y = scale(b, loc, y, 1.0 / static_cast<double>(ty.getNumElements()));
    b.replaceOp(op, y);
    return success();
  }
};

/// The column of an integer class label, clamped into [0, C) so that a
/// bad label cannot read out of bounds.
Value labelColumn(OpBuilder &b, Location l, Value label, int64_t c) {
  Type lt = label.getType();
  Value lo = arith::ConstantOp::create(b, l, lt, b.getIntegerAttr(lt, 0));
  Value hi = arith::ConstantOp::create(b, l, lt, b.getIntegerAttr(lt, c - 1));
  Value lab =
      arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, label, lo), hi);
  return arith::IndexCastOp::create(b, l, b.getIndexType(), lab);
}

/// Whether `label` is the ignore index.
Value isIgnored(OpBuilder &b, Location l, Value label, int64_t ignore) {
  Type lt = label.getType();
  return arith::CmpIOp::create(
      b, l, arith::CmpIPredicate::eq, label,
      arith::ConstantOp::create(b, l, lt, b.getIntegerAttr(lt, ignore)));
}

/// The number of labels (a 0-d tensor of `et`) that are not `ignore`.
Value countLabels(OpBuilder &b, Location loc, Value labels, Type et,
                  int64_t ignore) {
  int64_t n = tensorTy(labels).getDimSize(0);
  AffineMap d0 = AffineMap::get(1, 0, {getAffineDimExpr(0, b.getContext())},
                                b.getContext());
  return reduce(b, loc, {n}, {0}, false, ValueRange{labels}, {d0}, et, 0.0,
                [&](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                  Value one = arith::SelectOp::create(
                      nb, l, isIgnored(nb, l, a[0], ignore),
                      floatConst(nb, l, et, 0.0), floatConst(nb, l, et, 1.0));
                  return arith::AddFOp::create(nb, l, acc, one).getResult();
                });
}

/// The divisor of a mean cross entropy (`op`, the loss or its gradient):
/// its `count` when it has one, else its own rows' count.
template <typename CrossEntropyLike>
Value meanDivisor(OpBuilder &b, Location loc, CrossEntropyLike op, Type et) {
  if (Value count = op.getCount())
    return count;
  return countLabels(b, loc, op.getLabels(), et, op.getIgnoreIndex());
}

struct LowerCrossEntropy : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value logits = op.getLogits();
    auto ty = tensorTy(logits);
    Type et = ty.getElementType();
    int64_t n = ty.getDimSize(0), c = ty.getDimSize(1);
    int64_t ignore = op.getIgnoreIndex();
    auto [max, sum] = maxAndSumExp(b, loc, logits, 1);
    // loss = sum_n (max[n] + log(sum[n]) - logits[n, label[n]]) over the
    // rows whose label is not ignore_index
    AffineMap d0 = AffineMap::get(1, 0, {getAffineDimExpr(0, ctx)}, ctx);
    Value y = reduce(
        b, loc, {n}, {0}, false, ValueRange{max, sum, op.getLabels()},
        {d0, d0, d0}, et, 0.0,
        [&](OpBuilder &nb, Location l, Value acc, ValueRange a) -> Value {
          Value row = linalg::IndexOp::create(nb, l, 0);
          Value col = labelColumn(nb, l, a[2], c);
          Value picked =
              tensor::ExtractOp::create(nb, l, logits, ValueRange{row, col});
          Value lse = arith::AddFOp::create(nb, l, a[0],
                                            math::LogOp::create(nb, l, a[1]));
          // acc + (ignored ? 0 : term): one addf into the accumulator,
          // which a warp reduction can share.
          Value term = arith::SelectOp::create(
              nb, l, isIgnored(nb, l, a[2], ignore), floatConst(nb, l, et, 0.0),
              arith::SubFOp::create(nb, l, lse, picked));
          return arith::AddFOp::create(nb, l, acc, term);
        });
    if (op.getReduction() == LossReduction::mean)
      y = elementwise(b, loc, tensorTy(y),
                      ValueRange{y, meanDivisor(b, loc, op, et)},
                      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        return arith::DivFOp::create(nb, l, a[0], a[1]);
                      });
    b.replaceOp(op, y);
    return success();
  }
};

struct LowerCrossEntropyGrad : OpRewritePattern<CrossEntropyGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value logits = op.getLogits();
    auto ty = tensorTy(logits);
    Type et = ty.getElementType();
    int64_t c = ty.getDimSize(1);
    int64_t ignore = op.getIgnoreIndex();
    // The factor: g, divided by the rows counted for a mean.
    Value factor = op.getGrad();
    if (op.getReduction() == LossReduction::mean)
      factor =
          elementwise(b, loc, tensorTy(factor),
                      ValueRange{factor, meanDivisor(b, loc, op, et)},
                      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        return arith::DivFOp::create(nb, l, a[0], a[1]);
                      });
    auto [max, sum] = maxAndSumExp(b, loc, logits, 1);
    AffineMap id = b.getMultiDimIdentityMap(2);
    AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    AffineMap scalar = AffineMap::get(2, 0, {}, ctx);
    SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
    // (softmax(x) - onehot(label)) * factor, zero on ignored rows
    Value y =
        linalg::GenericOp::create(
            b, loc, TypeRange{ty},
            ValueRange{logits, max, sum, op.getLabels(), factor},
            ValueRange{emptyTensor(b, loc, ty)},
            SmallVector<AffineMap>{id, row, row, row, scalar, id}, iters,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value e = math::ExpOp::create(
                  nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
              Value p = arith::DivFOp::create(nb, l, e, a[2]);
              Value labIdx = labelColumn(nb, l, a[3], c);
              Value col = linalg::IndexOp::create(nb, l, 1);
              Value hit = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                                col, labIdx);
              Value onehot = arith::SelectOp::create(
                  nb, l, hit, floatConst(nb, l, et, 1.0),
                  floatConst(nb, l, et, 0.0));
              Value v = arith::MulFOp::create(
                  nb, l, arith::SubFOp::create(nb, l, p, onehot), a[4]);
              v = arith::SelectOp::create(nb, l, isIgnored(nb, l, a[3], ignore),
                                          floatConst(nb, l, et, 0.0), v);
              linalg::YieldOp::create(nb, l, v);
            })
            .getResult(0);
    b.replaceOp(op, y);
    return success();
  }
};

struct LowerCountLabels : OpRewritePattern<CountLabelsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CountLabelsOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(op, countLabels(b, op.getLoc(), op.getLabels(),
                                tensorTy(op.getResult()).getElementType(),
                                op.getIgnoreIndex()));
    return success();
  }
};

} // namespace

void mlir::dlc::lowering::populateLossLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerMseLoss, LowerCrossEntropy, LowerCrossEntropyGrad,
               LowerCountLabels>(patterns.getContext());
}
