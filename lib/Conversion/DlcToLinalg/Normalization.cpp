//===- Normalization.cpp - softmaxes and normalisations -------------------===//
//
// Part of dlc-lower-to-linalg. Softmax (the row maximum, the exponentials,
// their sum, then the quotients) and log-softmax (the row maximum and the sum
// of exponentials, then one elementwise loop over the row statistics) along
// a dimension, layer normalisation and its gradient (row mean and
// inverse standard deviation), and inference batch normalisation (a loop over
// the channels, then one elementwise loop).
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

/// An elementwise generic over `x`'s shape whose extra inputs are row
/// statistics that drop `dim`.
Value rowwise(OpBuilder &b, Location loc, Value x, int64_t dim,
              ValueRange stats, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  auto ty = tensorTy(x);
  int64_t rank = ty.getRank();
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  for (size_t i = 0; i < stats.size(); ++i)
    maps.push_back(dropDimMap(ctx, rank, dim));
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<Value> ins{x};
  ins.append(stats.begin(), stats.end());
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{ty}, ins, ValueRange{emptyTensor(b, loc, ty)},
             maps, iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc,
                                       body(nb, nloc, args.drop_back()));
             })
      .getResult(0);
}

struct LowerSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    int64_t dim = op.getDim();
    Value exps;
    Value sum = maxAndSumExp(b, loc, op.getInput(), dim, &exps).second;
    Value y = rowwise(b, loc, exps, dim, ValueRange{sum},
                      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        return arith::DivFOp::create(nb, l, a[0], a[1]);
                      });
    b.replaceOp(op, y);
    return success();
  }
};

struct LowerLogSoftmax : OpRewritePattern<LogSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LogSoftmaxOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    int64_t dim = op.getDim();
    auto [max, sum] = maxAndSumExp(b, loc, op.getInput(), dim);
    Value y = rowwise(b, loc, op.getInput(), dim, ValueRange{max, sum},
                      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        Value shifted =
                            arith::SubFOp::create(nb, l, a[0], a[1]);
                        return arith::SubFOp::create(
                            nb, l, shifted, math::LogOp::create(nb, l, a[2]));
                      });
    b.replaceOp(op, y);
    return success();
  }
};

/// Row statistics of layer normalisation over the last dimension of `x`:
/// the mean and 1 / sqrt(biased variance + eps), one value per row.
std::pair<Value, Value> layerNormStats(OpBuilder &b, Location loc, Value x,
                                       double eps) {
  MLIRContext *ctx = b.getContext();
  auto ty = tensorTy(x);
  int64_t rank = ty.getRank(), dim = rank - 1;
  Type et = ty.getElementType();
  double invD = 1.0 / static_cast<double>(ty.getShape().back());
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap row = dropDimMap(ctx, rank, dim);
  Value sum = sumOver(b, loc, x, {dim}, false);
  auto rowTy = tensorTy(sum);
  Value mean = elementwise(
      b, loc, rowTy, ValueRange{sum},
      [&](OpBuilder &nb, Location l, ValueRange a) {
        return arith::MulFOp::create(nb, l, a[0], floatConst(nb, l, et, invD))
            .getResult();
      });
  Value sq = reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{x, mean},
                    {id, row}, et, 0.0,
                    [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                      Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                      return arith::AddFOp::create(
                                 nb, l, acc, arith::MulFOp::create(nb, l, d, d))
                          .getResult();
                    });
  Value rstd = elementwise(
      b, loc, rowTy, ValueRange{sq},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value var =
            arith::MulFOp::create(nb, l, a[0], floatConst(nb, l, et, invD));
        Value s = math::SqrtOp::create(
            nb, l,
            arith::AddFOp::create(nb, l, var, floatConst(nb, l, et, eps)));
        return arith::DivFOp::create(nb, l, floatConst(nb, l, et, 1.0), s);
      });
  return {mean, rstd};
}

struct LowerLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = op.getInput();
    auto ty = tensorTy(x);
    int64_t rank = ty.getRank(), dim = rank - 1;
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap row = dropDimMap(ctx, rank, dim);
    auto [mean, rstd] =
        layerNormStats(b, loc, x, op.getEpsilon().convertToDouble());
    // y = (x - mean) * rstd * weight + bias
    AffineMap last = AffineMap::get(rank, 0, {getAffineDimExpr(dim, ctx)}, ctx);
    SmallVector<AffineMap> maps{id, row, row, last, last, id};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value y = linalg::GenericOp::create(
                  b, loc, TypeRange{ty},
                  ValueRange{x, mean, rstd, op.getWeight(), op.getBias()},
                  ValueRange{emptyTensor(b, loc, ty)}, maps, iters,
                  [](OpBuilder &nb, Location l, ValueRange a) {
                    Value n = arith::MulFOp::create(
                        nb, l, arith::SubFOp::create(nb, l, a[0], a[1]), a[2]);
                    Value v = arith::AddFOp::create(
                        nb, l, arith::MulFOp::create(nb, l, n, a[3]), a[4]);
                    linalg::YieldOp::create(nb, l, v);
                  })
                  .getResult(0);
    b.replaceOp(op, y);
    return success();
  }
};

/// Inference batch norm as PyTorch's CPU kernel computes it: per channel
/// alpha = scale / sqrt(var + eps) and beta = bias - mean * alpha (a loop
/// over C), then y = x * alpha + beta in one elementwise loop, which
/// linalg-fuse-elementwise-ops merges with the convolution's epilogue and a
/// following activation.
struct LowerBatchNorm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto ty = tensorTy(op.getInput());
    Type et = ty.getElementType(), acc = accumulatorType(b, et);
    int64_t rank = ty.getRank(), c = ty.getDimSize(1);
    double eps = op.getEpsilon().convertToDouble();
    auto chTy = RankedTensorType::get({c}, acc);
    AffineMap id1 = b.getMultiDimIdentityMap(1);
    auto coeffs = linalg::GenericOp::create(
        b, loc, TypeRange{chTy, chTy},
        ValueRange{op.getScale(), op.getBias(), op.getMean(), op.getVar()},
        ValueRange{emptyTensor(b, loc, chTy), emptyTensor(b, loc, chTy)},
        SmallVector<AffineMap>(6, id1),
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          auto in = [&](int i) { return convertFloat(nb, l, a[i], acc); };
          Value s = math::SqrtOp::create(
              nb, l,
              arith::AddFOp::create(nb, l, in(3), floatConst(nb, l, acc, eps)));
          Value inv =
              arith::DivFOp::create(nb, l, floatConst(nb, l, acc, 1.0), s);
          Value alpha = arith::MulFOp::create(nb, l, inv, in(0));
          Value beta = arith::SubFOp::create(
              nb, l, in(1), arith::MulFOp::create(nb, l, in(2), alpha));
          linalg::YieldOp::create(nb, l, ValueRange{alpha, beta});
        });
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap channel =
        AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value y =
        linalg::GenericOp::create(
            b, loc, TypeRange{ty},
            ValueRange{op.getInput(), coeffs.getResult(0), coeffs.getResult(1)},
            ValueRange{emptyTensor(b, loc, ty)},
            SmallVector<AffineMap>{id, channel, channel, id}, iters,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value x = convertFloat(nb, l, a[0], acc);
              Value v = arith::AddFOp::create(
                  nb, l, arith::MulFOp::create(nb, l, x, a[1]), a[2]);
              linalg::YieldOp::create(nb, l, convertFloat(nb, l, v, et));
            })
            .getResult(0);
    b.replaceOp(op, y);
    return success();
  }
};

struct LowerLayerNormGrad : OpRewritePattern<LayerNormGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = op.getInput(), w = op.getWeight(), g = op.getGrad();
    auto ty = tensorTy(x);
    int64_t rank = ty.getRank(), dim = rank - 1;
    Type et = ty.getElementType();
    double invD = 1.0 / static_cast<double>(ty.getShape().back());
    auto [mean, rstd] =
        layerNormStats(b, loc, x, op.getEpsilon().convertToDouble());
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap row = dropDimMap(ctx, rank, dim);
    AffineMap last = AffineMap::get(rank, 0, {getAffineDimExpr(dim, ctx)}, ctx);
    auto xhat = [](OpBuilder &nb, Location l, Value xv, Value m, Value r) {
      return arith::MulFOp::create(nb, l, arith::SubFOp::create(nb, l, xv, m),
                                   r)
          .getResult();
    };
    // Per row: s1 = sum(g * w), s2 = sum(g * w * xhat).
    Value s1 = reduce(
        b, loc, ty.getShape(), {dim}, false, ValueRange{g, w}, {id, last}, et,
        0.0, [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
          return arith::AddFOp::create(nb, l, acc,
                                       arith::MulFOp::create(nb, l, a[0], a[1]))
              .getResult();
        });
    Value s2 =
        reduce(b, loc, ty.getShape(), {dim}, false,
               ValueRange{x, mean, rstd, g, w}, {id, row, row, id, last}, et,
               0.0, [&](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                 Value dy = arith::MulFOp::create(nb, l, a[3], a[4]);
                 return arith::AddFOp::create(
                            nb, l, acc,
                            arith::MulFOp::create(
                                nb, l, dy, xhat(nb, l, a[0], a[1], a[2])))
                     .getResult();
               });
    // dx = rstd * (dy - s1/D - xhat * s2/D)
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value dx =
        linalg::GenericOp::create(
            b, loc, TypeRange{ty}, ValueRange{x, mean, rstd, g, w, s1, s2},
            ValueRange{emptyTensor(b, loc, ty)},
            SmallVector<AffineMap>{id, row, row, id, last, row, row, id}, iters,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value xh = xhat(nb, l, a[0], a[1], a[2]);
              Value dy = arith::MulFOp::create(nb, l, a[3], a[4]);
              Value k = floatConst(nb, l, et, invD);
              Value t = arith::SubFOp::create(
                  nb, l, dy, arith::MulFOp::create(nb, l, a[5], k));
              t = arith::SubFOp::create(
                  nb, l, t,
                  arith::MulFOp::create(nb, l, xh,
                                        arith::MulFOp::create(nb, l, a[6], k)));
              linalg::YieldOp::create(
                  nb, l, arith::MulFOp::create(nb, l, a[2], t).getResult());
            })
            .getResult(0);
    // Weight and bias gradients: sums over every leading dimension.
    SmallVector<int64_t> leading = allDims(dim);
    Value dw =
        reduce(b, loc, ty.getShape(), leading, false,
               ValueRange{x, mean, rstd, g}, {id, row, row, id}, et, 0.0,
               [&](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                 return arith::AddFOp::create(
                            nb, l, acc,
                            arith::MulFOp::create(
                                nb, l, a[3], xhat(nb, l, a[0], a[1], a[2])))
                     .getResult();
               });
    Value db = sumOver(b, loc, g, leading, false);
    b.replaceOp(op, ValueRange{dx, dw, db});
    return success();
  }
};

} // namespace

void mlir::dlc::lowering::populateNormalizationLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerSoftmax, LowerLogSoftmax, LowerLayerNorm, LowerBatchNorm,
               LowerLayerNormGrad>(patterns.getContext());
}
