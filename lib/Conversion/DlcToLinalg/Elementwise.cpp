//===- Elementwise.cpp - elementwise ops and their gradients --------------===//
//
// Part of dlc-lower-to-linalg. Each op is one elementwise linalg.generic with
// NumPy broadcasting in its indexing maps (`elementwise`): the binary and unary
// arithmetic, the activations, fills and scales, broadcasts, the activations'
// gradients with PyTorch's formulas, and the casts between element types.
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

template <typename SrcOp, typename ArithOp>
struct LowerBinary : OpRewritePattern<SrcOp> {
  using OpRewritePattern<SrcOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SrcOp op, PatternRewriter &b) const override {
    Value y =
        elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                    ValueRange{op.getLhs(), op.getRhs()},
                    [](OpBuilder &nb, Location loc, ValueRange a) -> Value {
                      return ArithOp::create(nb, loc, a[0], a[1]);
                    });
    b.replaceOp(op, y);
    return success();
  }
};

/// Unary ops: `fn(builder, loc, x)` computes one element.
template <typename SrcOp> struct LowerUnary : OpRewritePattern<SrcOp> {
  using Fn = Value (*)(OpBuilder &, Location, Value, SrcOp);
  LowerUnary(MLIRContext *ctx, Fn fn) : OpRewritePattern<SrcOp>(ctx), fn(fn) {}
  LogicalResult matchAndRewrite(SrcOp op, PatternRewriter &b) const override {
    Value y = elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                          ValueRange{op.getInput()},
                          [&](OpBuilder &nb, Location loc, ValueRange a) {
                            return fn(nb, loc, a[0], op);
                          });
    b.replaceOp(op, y);
    return success();
  }
  Fn fn;
};

template <typename OpTy>
Value activationFn(OpBuilder &b, Location l, Value x, OpTy) {
  if constexpr (std::is_same_v<OpTy, ReluOp>)
    return applyActivation(b, l, Activation::relu, x);
  else if constexpr (std::is_same_v<OpTy, TanhOp>)
    return applyActivation(b, l, Activation::tanh, x);
  else
    return applyActivation(b, l, Activation::sigmoid, x);
}

Value geluFn(OpBuilder &b, Location l, Value x, GeluOp op) {
  return applyActivation(b, l,
                         op.getApproximate() == GeluApproximation::tanh
                             ? Activation::gelu_tanh
                             : Activation::gelu,
                         x);
}
Value expFn(OpBuilder &b, Location l, Value x, ExpOp) {
  return math::ExpOp::create(b, l, x);
}
Value logFn(OpBuilder &b, Location l, Value x, LogOp) {
  return math::LogOp::create(b, l, x);
}
Value sqrtFn(OpBuilder &b, Location l, Value x, SqrtOp) {
  return math::SqrtOp::create(b, l, x);
}
Value erfFn(OpBuilder &b, Location l, Value x, ErfOp) {
  return math::ErfOp::create(b, l, x);
}
Value negFn(OpBuilder &b, Location l, Value x, NegOp) {
  return arith::NegFOp::create(b, l, x);
}

struct LowerFill : OpRewritePattern<FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FillOp op, PatternRewriter &b) const override {
    b.replaceOp(op, filledTensor(b, op.getLoc(), tensorTy(op.getResult()),
                                 op.getValue().convertToDouble()));
    return success();
  }
};

struct LowerScale : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp op, PatternRewriter &b) const override {
    b.replaceOp(op, scale(b, op.getLoc(), op.getInput(),
                          op.getFactor().convertToDouble()));
    return success();
  }
};

struct LowerBroadcastTo : OpRewritePattern<BroadcastToOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastToOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(op, elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                                ValueRange{op.getInput()},
                                [](OpBuilder &, Location, ValueRange a) {
                                  return a[0];
                                }));
    return success();
  }
};

/// `g * f'(x)` for the activation `act`, with PyTorch's formulas.
Value activationGradient(OpBuilder &b, Location loc, Activation act, Value x,
                         Value g) {
  Type t = x.getType();
  auto c = [&](double v) { return floatConst(b, loc, t, v); };
  auto mul = [&](Value l, Value r) {
    return arith::MulFOp::create(b, loc, l, r).getResult();
  };
  auto add = [&](Value l, Value r) {
    return arith::AddFOp::create(b, loc, l, r).getResult();
  };
  auto sub = [&](Value l, Value r) {
    return arith::SubFOp::create(b, loc, l, r).getResult();
  };
  if (act == Activation::relu) {
    Value pos =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, c(0.0));
    return arith::SelectOp::create(b, loc, pos, g, c(0.0));
  }
  if (act == Activation::tanh) {
    Value y = math::TanhOp::create(b, loc, x);
    return mul(g, sub(c(1.0), mul(y, y)));
  }
  if (act == Activation::sigmoid) {
    Value y = applyActivation(b, loc, Activation::sigmoid, x);
    return mul(mul(g, sub(c(1.0), y)), y);
  }
  if (act == Activation::gelu) {
    Value cdf = mul(
        c(0.5), add(c(1.0), math::ErfOp::create(b, loc, mul(x, c(M_SQRT1_2)))));
    Value pdf = mul(c(M_2_SQRTPI * M_SQRT1_2 * 0.5),
                    math::ExpOp::create(b, loc, mul(c(-0.5), mul(x, x))));
    return mul(g, add(cdf, mul(x, pdf)));
  }
  // gelu_tanh
  const double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, kKappa = 0.044715;
  Value xSq = mul(x, x);
  Value inner = mul(c(kBeta), add(x, mul(c(kKappa), mul(xSq, x))));
  Value th = math::TanhOp::create(b, loc, inner);
  Value left = mul(c(0.5), x), right = add(c(1.0), th);
  Value leftD = mul(c(0.5), right);
  Value rightD = mul(mul(mul(left, sub(c(1.0), mul(th, th))), c(kBeta)),
                     add(c(1.0), mul(c(3.0 * kKappa), xSq)));
  return mul(g, add(leftD, rightD));
}

struct LowerActivationGrad : OpRewritePattern<ActivationGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ActivationGradOp op,
                                PatternRewriter &b) const override {
    Activation act = op.getActivation();
    b.replaceOp(op, elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                                ValueRange{op.getInput(), op.getGrad()},
                                [&](OpBuilder &nb, Location l, ValueRange a) {
                                  return activationGradient(nb, l, act, a[0],
                                                            a[1]);
                                }));
    return success();
  }
};

struct LowerCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op, PatternRewriter &b) const override {
    auto inTy = tensorTy(op.getInput()), outTy = tensorTy(op.getResult());
    if (auto it = dyn_cast<IntegerType>(inTy.getElementType())) {
      // Integers to float: a bool (i1) is unsigned, the others signed.
      AffineMap id = b.getMultiDimIdentityMap(inTy.getRank());
      Value r =
          linalg::GenericOp::create(
              b, op.getLoc(), TypeRange{outTy}, ValueRange{op.getInput()},
              ValueRange{emptyTensor(b, op.getLoc(), outTy)},
              SmallVector<AffineMap>{id, id},
              SmallVector<utils::IteratorType>(inTy.getRank(),
                                               utils::IteratorType::parallel),
              [&](OpBuilder &nb, Location l, ValueRange a) {
                Type et = outTy.getElementType();
                Value v;
                if (auto ot = dyn_cast<IntegerType>(et))
                  // Integers: a bool zero-extends, the others sign-extend
                  // or truncate (wrapping, as C and PyTorch do).
                  v = ot.getWidth() < it.getWidth()
                          ? arith::TruncIOp::create(nb, l, et, a[0]).getResult()
                      : ot.getWidth() == it.getWidth() ? a[0]
                      : it.getWidth() == 1
                          ? arith::ExtUIOp::create(nb, l, et, a[0]).getResult()
                          : arith::ExtSIOp::create(nb, l, et, a[0]).getResult();
                else
                  v = it.getWidth() == 1
                          ? arith::UIToFPOp::create(nb, l, et, a[0]).getResult()
                          : arith::SIToFPOp::create(nb, l, et, a[0])
                                .getResult();
                linalg::YieldOp::create(nb, l, v);
              })
              .getResult(0);
      b.replaceOp(op, r);
      return success();
    }
    b.replaceOp(op, convertTensor(b, op.getLoc(), op.getInput(),
                                  outTy.getElementType()));
    return success();
  }
};

} // namespace

void mlir::dlc::lowering::populateElementwiseLoweringPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<LowerBinary<AddOp, arith::AddFOp>, LowerBinary<SubOp, arith::SubFOp>,
           LowerBinary<MulOp, arith::MulFOp>, LowerBinary<DivOp, arith::DivFOp>,
           LowerFill, LowerScale, LowerBroadcastTo, LowerActivationGrad,
           LowerCast>(ctx);
  patterns.add<LowerUnary<ReluOp>>(ctx, activationFn<ReluOp>);
  patterns.add<LowerUnary<TanhOp>>(ctx, activationFn<TanhOp>);
  patterns.add<LowerUnary<SigmoidOp>>(ctx, activationFn<SigmoidOp>);
  patterns.add<LowerUnary<GeluOp>>(ctx, geluFn);
  patterns.add<LowerUnary<ExpOp>>(ctx, expFn);
  patterns.add<LowerUnary<LogOp>>(ctx, logFn);
  patterns.add<LowerUnary<SqrtOp>>(ctx, sqrtFn);
  patterns.add<LowerUnary<ErfOp>>(ctx, erfFn);
  patterns.add<LowerUnary<NegOp>>(ctx, negFn);
}
