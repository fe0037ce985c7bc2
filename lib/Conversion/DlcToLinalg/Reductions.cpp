//===- Reductions.cpp - sums, means, extrema and their gradients ----------===//
//
// Part of dlc-lower-to-linalg. dlc.sum and dlc.mean are a reduction
// linalg.generic over the reduced dimensions (`reduce`), the mean scaled after
// it; dlc.max and dlc.min reduce from -inf (+inf) with maximumf (minimumf),
// which propagates NaN as PyTorch's amax and amin do; their gradient spreads g
// evenly over the ties, counted by a reduction of its own.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::lowering;

namespace {

template <typename SrcOp, bool IsMean>
struct LowerReduction : OpRewritePattern<SrcOp> {
  using OpRewritePattern<SrcOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SrcOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto ty = tensorTy(op.getInput());
    Value y = sumOver(b, loc, op.getInput(), op.getDims(), op.getKeepdim());
    if (IsMean) {
      int64_t count = 1;
      for (int64_t d : op.getDims())
        count *= ty.getDimSize(d);
      y = scale(b, loc, y, 1.0 / static_cast<double>(count));
    }
    b.replaceOp(op, y);
    return success();
  }
};

/// dlc.max and dlc.min: a reduction from -inf (+inf) with maximumf
/// (minimumf), which propagates NaN as PyTorch's amax/amin do.
template <typename SrcOp, bool IsMax>
struct LowerExtremum : OpRewritePattern<SrcOp> {
  using OpRewritePattern<SrcOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SrcOp op, PatternRewriter &b) const override {
    auto ty = tensorTy(op.getInput());
    Value y = reduce(
        b, op.getLoc(), ty.getShape(), op.getDims(), op.getKeepdim(),
        ValueRange{op.getInput()}, {b.getMultiDimIdentityMap(ty.getRank())},
        ty.getElementType(), IsMax ? -INFINITY : INFINITY,
        [](OpBuilder &nb, Location l, Value acc, ValueRange a) -> Value {
          if (IsMax)
            return arith::MaximumFOp::create(nb, l, acc, a[0]);
          return arith::MinimumFOp::create(nb, l, acc, a[0]);
        });
    b.replaceOp(op, y);
    return success();
  }
};

/// The map reading a reduction's result (`dims` reduced, kept as size 1
/// with `keepdim`) from the input's iteration space of `rank` loops.
static AffineMap reducedMap(MLIRContext *ctx, int64_t rank,
                            ArrayRef<int64_t> dims, bool keepdim) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(dims, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
    else if (keepdim)
      exprs.push_back(getAffineConstantExpr(0, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// g / ties where the input equals its group's extremum, 0 elsewhere; ties
/// counted by a reduction of its own.
struct LowerExtremumGrad : OpRewritePattern<ExtremumGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExtremumGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto ty = tensorTy(op.getInput());
    Type et = ty.getElementType();
    int64_t rank = ty.getRank();
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap red = reducedMap(ctx, rank, op.getDims(), op.getKeepdim());
    auto hit = [&](OpBuilder &nb, Location l, Value x, Value m) -> Value {
      return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, x, m);
    };
    Value ties = reduce(
        b, loc, ty.getShape(), op.getDims(), op.getKeepdim(),
        ValueRange{op.getInput(), op.getExtremum()}, {id, red}, et, 0.0,
        [&](OpBuilder &nb, Location l, Value acc, ValueRange a) -> Value {
          Value one = arith::SelectOp::create(nb, l, hit(nb, l, a[0], a[1]),
                                              floatConst(nb, l, et, 1.0),
                                              floatConst(nb, l, et, 0.0));
          return arith::AddFOp::create(nb, l, acc, one);
        });
    Value r =
        linalg::GenericOp::create(
            b, loc, TypeRange{ty},
            ValueRange{op.getInput(), op.getExtremum(), op.getGrad(), ties},
            ValueRange{emptyTensor(b, loc, ty)},
            SmallVector<AffineMap>{id, red, red, red, id},
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value share = arith::DivFOp::create(nb, l, a[2], a[3]);
              linalg::YieldOp::create(
                  nb, l,
                  arith::SelectOp::create(nb, l, hit(nb, l, a[0], a[1]), share,
                                          floatConst(nb, l, et, 0.0))
                      .getResult());
            })
            .getResult(0);
    b.replaceOp(op, r);
    return success();
  }
};

} // namespace

void mlir::dlc::lowering::populateReductionLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerReduction<SumOp, false>, LowerReduction<MeanOp, true>,
               LowerExtremum<MaxOp, true>, LowerExtremum<MinOp, false>,
               LowerExtremumGrad>(patterns.getContext());
}
