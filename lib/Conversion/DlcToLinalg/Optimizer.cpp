//===- Optimizer.cpp - the fused optimizer update -------------------------===//
//
// Part of dlc-lower-to-linalg. dlc.optimizer_update becomes one elementwise
// linalg.generic per parameter that writes the parameter and its optimizer
// state in place (their tensors are the loop's destinations), with PyTorch's
// SGD (momentum, dampening, Nesterov, weight decay), Adam and AdamW formulas;
// Adam's bias corrections are computed in double precision from the step
// count. With fp16 loss scaling the gradients are unscaled, a step with an
// infinite or NaN gradient is skipped, and the scale is updated as
// torch.amp.GradScaler does. dlc.loss_scale reads the scale's state.
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

/// `base ** n` in double precision for 0 <= n < 2^32, by binary
/// exponentiation unrolled over the bits of `n` (an i64): straight-line
/// code, no libm.
Value powInt(OpBuilder &b, Location loc, double base, Value n) {
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  Value result = floatConst(b, loc, f64, 1.0);
  Value p = floatConst(b, loc, f64, base);
  Value one = arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
  for (int bit = 0; bit < 32; ++bit) {
    Value shift =
        arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(bit));
    Value set = arith::TruncIOp::create(
        b, loc, b.getI1Type(),
        arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, n, shift),
                              one));
    result = arith::SelectOp::create(
        b, loc, set, arith::MulFOp::create(b, loc, result, p), result);
    p = arith::MulFOp::create(b, loc, p, p);
  }
  return result;
}

/// A linalg.generic over tensors of one shape that updates `outs` in place
/// (they are its destinations) from `ins`; `body(ins..., outs...)` returns
/// the new values of the outs.
SmallVector<Value> updateInPlace(
    OpBuilder &b, Location loc, ValueRange ins, ValueRange outs,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  auto ty = tensorTy(outs.front());
  SmallVector<AffineMap> maps(ins.size() + outs.size(),
                              b.getMultiDimIdentityMap(ty.getRank()));
  SmallVector<utils::IteratorType> iters(ty.getRank(),
                                         utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, outs.getTypes(), ins, outs, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args));
      });
  return SmallVector<Value>(op.getResults());
}

/// The lowering of one dlc.optimizer_update: with fp16 loss scaling the
/// gradients' unscaling and overflow check, then the step count, one
/// in-place loop per parameter (SGD, or Adam and AdamW), and the loss
/// scale's update.
class OptimizerUpdateLowering {
public:
  OptimizerUpdateLowering(OptimizerUpdateOp op, PatternRewriter &b)
      : op(op), b(b), loc(op.getLoc()), cfg(op.getConfig()),
        scaled(!op.getScaler().empty()) {}

  void lower() {
    OptimizerKind kind = cfg.getAs<OptimizerKindAttr>("kind").getValue();
    Value step = op.getStep();
    Type st = tensorTy(step).getElementType();
    if (scaled)
      unscaleGradients();

    // The step count, before and after this step.
    Value oldStep = tensor::ExtractOp::create(b, loc, step, ValueRange{});
    Value newStep = keepIfSkipped(
        b, loc, oldStep,
        arith::AddFOp::create(b, loc, oldStep, floatConst(b, loc, st, 1.0)));
    Value newStepT = updateInPlace(b, loc, ValueRange{}, ValueRange{step},
                                   [&](OpBuilder &, Location, ValueRange) {
                                     return SmallVector<Value>{newStep};
                                   })[0];

    newParams.resize(op.getParams().size());
    newStates.resize(op.getStates().size());
    if (kind == OptimizerKind::sgd)
      updateSgd(oldStep, st);
    else
      updateAdam(kind, newStep);
    SmallVector<Value> results{newStepT};
    results.append(newParams);
    results.append(newStates);
    if (scaled)
      updateLossScale(results);
    b.replaceOp(op, results);
  }

private:
  double num(StringRef key) const {
    return cfg.getAs<FloatAttr>(key).getValueAsDouble();
  }

  /// Keeps the old value when the step is skipped.
  Value keepIfSkipped(OpBuilder &nb, Location l, Value oldV, Value newV) const {
    return scaled
               ? arith::SelectOp::create(nb, l, found, oldV, newV).getResult()
               : newV;
  }

  /// fp16 loss scaling: the gradients are scaled by the current scale;
  /// unscale them, and find whether any is infinite or NaN.
  void unscaleGradients() {
    Type f32 = b.getF32Type();
    Value scaleState =
        tensor::ExtractOp::create(b, loc, op.getScaler()[0], ValueRange{});
    tracker =
        tensor::ExtractOp::create(b, loc, op.getScaler()[1], ValueRange{});
    Value zero = floatConst(b, loc, f32, 0.0);
    eff = arith::SelectOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, scaleState,
                              zero),
        floatConst(b, loc, f32, num("init_scale")), scaleState);
    // PyTorch: scale.double().reciprocal().float()
    inv = arith::TruncFOp::create(
        b, loc, f32,
        arith::DivFOp::create(
            b, loc, floatConst(b, loc, b.getF64Type(), 1.0),
            arith::ExtFOp::create(b, loc, b.getF64Type(), eff)));
    Value bad = zero;
    for (Value g : op.getGrads()) {
      auto gTy = tensorTy(g);
      Value flag = reduce(
          b, loc, gTy.getShape(), allDims(gTy.getRank()), false, ValueRange{g},
          {b.getMultiDimIdentityMap(gTy.getRank())}, f32, 0.0,
          [&](OpBuilder &nb, Location l, Value acc, ValueRange a) {
            Value x = arith::MulFOp::create(nb, l, a[0], inv);
            // x - x is 0 for a finite x, NaN for an infinite or NaN one.
            Value d = arith::SubFOp::create(nb, l, x, x);
            Value nonFinite =
                arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNE, d,
                                      floatConst(nb, l, f32, 0.0));
            return arith::SelectOp::create(nb, l, nonFinite,
                                           floatConst(nb, l, f32, 1.0), acc)
                .getResult();
          });
      bad = arith::MaximumFOp::create(
          b, loc, bad, tensor::ExtractOp::create(b, loc, flag, ValueRange{}));
    }
    found = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, bad, zero);
  }

  /// SGD with momentum, dampening, Nesterov and weight decay, as
  /// torch.optim.SGD.
  void updateSgd(Value oldStep, Type st) {
    size_t n = op.getParams().size();
    double lr = num("lr"), wd = num("weight_decay");
    double momentum = num("momentum"), dampening = num("dampening");
    bool nesterov = cfg.getAs<BoolAttr>("nesterov").getValue();
    // PyTorch creates the momentum buffer from the first gradient.
    Value first = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        oldStep, floatConst(b, loc, st, 0.0));
    for (size_t i = 0; i < n; ++i) {
      SmallVector<Value> outs{op.getParams()[i]};
      if (momentum != 0.0)
        outs.push_back(op.getStates()[i]);
      SmallVector<Value> r = updateInPlace(
          b, loc, ValueRange{op.getGrads()[i]}, outs,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Type et = a[0].getType();
            auto c = [&](double v) { return floatConst(nb, l, et, v); };
            Value d = a[0], p = a[1];
            if (scaled)
              d = arith::MulFOp::create(nb, l, d, convertFloat(nb, l, inv, et));
            if (wd != 0.0)
              d = arith::AddFOp::create(nb, l, d,
                                        arith::MulFOp::create(nb, l, c(wd), p));
            SmallVector<Value> res;
            Value buf;
            if (momentum != 0.0) {
              Value old = arith::AddFOp::create(
                  nb, l, arith::MulFOp::create(nb, l, a[2], c(momentum)),
                  arith::MulFOp::create(nb, l, c(1.0 - dampening), d));
              buf = arith::SelectOp::create(nb, l, first, d, old);
              d = nesterov ? arith::AddFOp::create(
                                 nb, l, d,
                                 arith::MulFOp::create(nb, l, c(momentum), buf))
                                 .getResult()
                           : buf;
            }
            res.push_back(keepIfSkipped(
                nb, l, a[1],
                arith::AddFOp::create(
                    nb, l, p, arith::MulFOp::create(nb, l, c(-lr), d))));
            if (buf)
              res.push_back(keepIfSkipped(nb, l, a[2], buf));
            return res;
          });
      newParams[i] = r[0];
      if (momentum != 0.0)
        newStates[i] = r[1];
    }
  }

  /// Adam, or AdamW (`kind` adamw: decoupled weight decay), as
  /// torch.optim.Adam and AdamW.
  void updateAdam(OptimizerKind kind, Value newStep) {
    size_t n = op.getParams().size();
    Type f64 = b.getF64Type();
    double lr = num("lr"), wd = num("weight_decay");
    auto betas = cfg.getAs<ArrayAttr>("betas");
    double beta1 = cast<FloatAttr>(betas[0]).getValueAsDouble();
    double beta2 = cast<FloatAttr>(betas[1]).getValueAsDouble();
    double eps = num("eps");
    bool decoupled = kind == OptimizerKind::adamw;
    // Bias corrections in double precision, like PyTorch's Python floats.
    Value k = arith::FPToSIOp::create(b, loc, b.getI64Type(), newStep);
    Value one = floatConst(b, loc, f64, 1.0);
    Value bc1 = arith::SubFOp::create(b, loc, one, powInt(b, loc, beta1, k));
    Value bc2 = arith::SubFOp::create(b, loc, one, powInt(b, loc, beta2, k));
    Value negStepSize = arith::NegFOp::create(
        b, loc,
        arith::DivFOp::create(b, loc, floatConst(b, loc, f64, lr), bc1));
    Value bc2Sqrt = math::SqrtOp::create(b, loc, bc2);
    for (size_t i = 0; i < n; ++i) {
      Type et = tensorTy(op.getParams()[i]).getElementType();
      Value negStep = arith::TruncFOp::create(b, loc, et, negStepSize);
      Value bc2S = arith::TruncFOp::create(b, loc, et, bc2Sqrt);
      SmallVector<Value> r = updateInPlace(
          b, loc, ValueRange{op.getGrads()[i]},
          ValueRange{op.getParams()[i], op.getStates()[i],
                     op.getStates()[n + i]},
          [&](OpBuilder &nb, Location l, ValueRange a) {
            auto c = [&](double v) { return floatConst(nb, l, et, v); };
            auto mul = [&](Value x, Value y) {
              return arith::MulFOp::create(nb, l, x, y).getResult();
            };
            auto add = [&](Value x, Value y) {
              return arith::AddFOp::create(nb, l, x, y).getResult();
            };
            Value g = a[0], p = a[1], m = a[2], v = a[3];
            if (scaled)
              g = mul(g, convertFloat(nb, l, inv, et));
            if (decoupled)
              p = mul(p, c(1.0 - lr * wd));
            else if (wd != 0.0)
              g = add(g, mul(c(wd), p));
            // exp_avg.lerp_(grad, 1 - beta1)
            Value m2 =
                add(m, mul(c(1.0 - beta1), arith::SubFOp::create(nb, l, g, m)));
            // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)
            Value v2 = add(mul(v, c(beta2)), mul(mul(c(1.0 - beta2), g), g));
            Value denom = add(arith::DivFOp::create(
                                  nb, l, math::SqrtOp::create(nb, l, v2), bc2S),
                              c(eps));
            // param.addcdiv_(exp_avg, denom, value=-step_size)
            Value p2 =
                add(p, arith::DivFOp::create(nb, l, mul(negStep, m2), denom));
            return SmallVector<Value>{keepIfSkipped(nb, l, a[1], p2),
                                      keepIfSkipped(nb, l, a[2], m2),
                                      keepIfSkipped(nb, l, a[3], v2)};
          });
      newParams[i] = r[0];
      newStates[i] = r[1];
      newStates[n + i] = r[2];
    }
  }

  /// torch.amp.GradScaler.update with its defaults: x0.5 on an overflow,
  /// x2 after 2000 finite steps in a row. Appends the new scale, the new
  /// growth tracker and whether the step was skipped to `results`.
  void updateLossScale(SmallVector<Value> &results) {
    Type f32 = b.getF32Type();
    auto c = [&](double v) { return floatConst(b, loc, f32, v); };
    Value next = arith::AddFOp::create(b, loc, tracker, c(1.0));
    Value grow = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, next,
                                       c(2000.0));
    Value newTracker = arith::SelectOp::create(
        b, loc, found, c(0.0),
        arith::SelectOp::create(b, loc, grow, c(0.0), next));
    Value newScale = arith::SelectOp::create(
        b, loc, found, arith::MulFOp::create(b, loc, eff, c(0.5)),
        arith::SelectOp::create(
            b, loc, grow, arith::MulFOp::create(b, loc, eff, c(2.0)), eff));
    auto scalarOut = [&](Value dest, Value v) {
      return updateInPlace(b, loc, ValueRange{}, ValueRange{dest},
                           [&](OpBuilder &, Location, ValueRange) {
                             return SmallVector<Value>{v};
                           })[0];
    };
    results.push_back(scalarOut(op.getScaler()[0], newScale));
    results.push_back(scalarOut(op.getScaler()[1], newTracker));
    Type i32 = b.getI32Type();
    Value skipped = arith::ExtUIOp::create(b, loc, i32, found);
    results.push_back(tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, i32), ValueRange{skipped}));
  }

  OptimizerUpdateOp op;
  PatternRewriter &b;
  Location loc;
  DictionaryAttr cfg;
  /// Whether the gradients are loss-scaled (fp16): then `found` says
  /// whether one is infinite or NaN (the step is skipped), `inv` is
  /// 1 / scale, `eff` the scale in effect and `tracker` the growth tracker.
  bool scaled;
  Value found, inv, eff, tracker;
  SmallVector<Value> newParams, newStates;
};

struct LowerOptimizerUpdate : OpRewritePattern<OptimizerUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OptimizerUpdateOp op,
                                PatternRewriter &b) const override {
    OptimizerUpdateLowering(op, b).lower();
    return success();
  }
};

struct LowerLossScale : OpRewritePattern<LossScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LossScaleOp op,
                                PatternRewriter &b) const override {
    double init = op.getInit().convertToDouble();
    b.replaceOp(op, elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                                ValueRange{op.getState()},
                                [&](OpBuilder &nb, Location l, ValueRange a) {
                                  Type t = a[0].getType();
                                  Value unset = arith::CmpFOp::create(
                                      nb, l, arith::CmpFPredicate::OEQ, a[0],
                                      floatConst(nb, l, t, 0.0));
                                  return arith::SelectOp::create(
                                             nb, l, unset,
                                             floatConst(nb, l, t, init), a[0])
                                      .getResult();
                                }));
    return success();
  }
};

} // namespace

void mlir::dlc::lowering::populateOptimizerLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerOptimizerUpdate, LowerLossScale>(patterns.getContext());
}
