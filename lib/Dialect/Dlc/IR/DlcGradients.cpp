//===- DlcGradients.cpp - gradient rules of the dlc ops -------------------===//
//
// DifferentiableOpInterface: the reverse-mode rule (vector-Jacobian
// product) of every differentiable dlc op, written with dlc ops. The rules
// follow PyTorch's derivative formulas (tools/autograd/derivatives.yaml) so
// that a compiled training step matches torch.autograd; dlc-build-train-step
// applies them and tests/Dialect/Dlc/gradients.mlir shows each one.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc;

namespace {

RankedTensorType tensorTy(Value v) {
  return cast<RankedTensorType>(v.getType());
}

RankedTensorType withShape(RankedTensorType like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, like.getElementType());
}

Value reshape(OpBuilder &b, Location loc, Value v, RankedTensorType to) {
  if (v.getType() == to)
    return v;
  return ReshapeOp::create(b, loc, to, v);
}

/// `v` with its dimensions permuted by `perm`.
Value transpose(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  auto ty = tensorTy(v);
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(ty.getDimSize(p));
  return TransposeOp::create(b, loc, withShape(ty, shape), v, perm);
}

/// Swaps the last two dimensions (rank 2 or 3).
Value transposeLast2(OpBuilder &b, Location loc, Value v) {
  if (tensorTy(v).getRank() == 2)
    return transpose(b, loc, v, {1, 0});
  return transpose(b, loc, v, {0, 2, 1});
}

Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto l = tensorTy(lhs), r = tensorTy(rhs);
  SmallVector<int64_t> shape(l.getShape());
  shape.back() = r.getShape().back();
  return MatmulOp::create(b, loc, withShape(l, shape), lhs, rhs);
}

/// Elementwise binary op with NumPy broadcasting; the result type is the
/// broadcast of the operands'.
template <typename OpTy>
Value binary(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto l = tensorTy(lhs), r = tensorTy(rhs);
  size_t rank = std::max(l.getRank(), r.getRank());
  SmallVector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t dl =
        i < rank - l.getRank() ? 1 : l.getDimSize(i - (rank - l.getRank()));
    int64_t dr =
        i < rank - r.getRank() ? 1 : r.getDimSize(i - (rank - r.getRank()));
    shape[i] = dl == 1 ? dr : dl;
  }
  return OpTy::create(b, loc, withShape(l, shape), lhs, rhs);
}

Value sum(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> dims,
          bool keepdim) {
  auto ty = tensorTy(v);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < ty.getRank(); ++d) {
    if (!llvm::is_contained(dims, d))
      shape.push_back(ty.getDimSize(d));
    else if (keepdim)
      shape.push_back(1);
  }
  return SumOp::create(b, loc, withShape(ty, shape), v, dims, keepdim);
}

/// Undoes NumPy broadcasting: sums the gradient `g` of a broadcast result
/// over the dimensions that `target` lacks or has with size 1.
Value sumToShape(OpBuilder &b, Location loc, Value g, RankedTensorType target) {
  auto ty = tensorTy(g);
  if (ty.getShape() == target.getShape())
    return g;
  int64_t offset = ty.getRank() - target.getRank();
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < ty.getRank(); ++d)
    if (d < offset ||
        (target.getDimSize(d - offset) == 1 && ty.getDimSize(d) != 1))
      dims.push_back(d);
  Value s = dims.empty() ? g : sum(b, loc, g, dims, /*keepdim=*/false);
  return reshape(b, loc, s, target);
}

/// Broadcasts the gradient of a reduction back over the reduced dimensions.
Value unreduce(OpBuilder &b, Location loc, Value g, RankedTensorType inputTy,
               ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept(inputTy.getShape());
  for (int64_t d : dims)
    kept[d] = 1;
  Value r = reshape(b, loc, g, withShape(inputTy, kept));
  if (r.getType() == inputTy)
    return r;
  return BroadcastToOp::create(b, loc, inputTy, r);
}

Value activationGrad(OpBuilder &b, Location loc, Value x, Value g,
                     Activation activation) {
  return ActivationGradOp::create(b, loc, x.getType(), x, g, activation);
}

} // namespace

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

SmallVector<Value> LinearOp::buildGradients(OpBuilder &b, Value g) {
  Location loc = getLoc();
  auto inTy = tensorTy(getInput()), wTy = tensorTy(getWeight());
  if (getActivation() != Activation::none) {
    // Recompute the pre-activation rather than keep it.
    Value z = LinearOp::create(b, loc, getType(), getInput(), getWeight(),
                               getBias(), Activation::none);
    g = activationGrad(b, loc, z, g, getActivation());
  }
  int64_t n = wTy.getDimSize(0), k = wTy.getDimSize(1);
  int64_t m = inTy.getNumElements() / k;
  Value x2 = reshape(b, loc, getInput(), withShape(inTy, {m, k}));
  Value g2 = reshape(b, loc, g, withShape(inTy, {m, n}));
  // y = x W^T + b:  dx = g W,  dW = g^T x,  db = sum_rows(g).
  Value dx = reshape(b, loc, matmul(b, loc, g2, getWeight()), inTy);
  Value dw = matmul(b, loc, transpose(b, loc, g2, {1, 0}), x2);
  SmallVector<Value> grads{dx, dw};
  if (getBias())
    grads.push_back(sum(b, loc, g2, {0}, /*keepdim=*/false));
  return grads;
}

SmallVector<Value> MatmulOp::buildGradients(OpBuilder &b, Value g) {
  Location loc = getLoc();
  return {matmul(b, loc, g, transposeLast2(b, loc, getRhs())),
          matmul(b, loc, transposeLast2(b, loc, getLhs()), g)};
}

//===----------------------------------------------------------------------===//
// Attention: the decomposition that the lowering and the gradient share
//===----------------------------------------------------------------------===//

namespace {

/// `v` `[B..., L, D]` as `[prod(B...), L, D]`; a rank-2 `v` as it is.
Value flattenBatch(OpBuilder &b, Location loc, Value v) {
  auto t = tensorTy(v);
  int64_t r = t.getRank();
  if (r == 2)
    return v;
  int64_t n = 1;
  for (int64_t d : t.getShape().drop_back(2))
    n *= d;
  return reshape(b, loc, v,
                 withShape(t, {n, t.getDimSize(r - 2), t.getDimSize(r - 1)}));
}

/// `v` `[N, L, D]` (or `[L, D]`) as `[batch..., L, D]`.
Value unflattenBatch(OpBuilder &b, Location loc, Value v,
                     ArrayRef<int64_t> batch) {
  auto t = tensorTy(v);
  SmallVector<int64_t> shape(batch);
  shape.append(t.getShape().take_back(2).begin(), t.getShape().end());
  return reshape(b, loc, v, withShape(t, shape));
}

/// The softmax probabilities `[B..., Lq, Lk]` of an attention op.
Value attentionProbs(OpBuilder &b, AttentionOp op) {
  Location loc = op.getLoc();
  auto qt = tensorTy(op.getQuery());
  Value q = flattenBatch(b, loc, op.getQuery());
  Value kT = transposeLast2(b, loc, flattenBatch(b, loc, op.getKey()));
  Value s =
      unflattenBatch(b, loc, matmul(b, loc, q, kT), qt.getShape().drop_back(2));
  Value scale =
      FillOp::create(b, loc, RankedTensorType::get({}, qt.getElementType()),
                     b.getF64FloatAttr(op.getScale().convertToDouble()));
  s = binary<MulOp>(b, loc, s, scale);
  if (Value mask = op.getMask())
    s = binary<AddOp>(b, loc, s, mask);
  return SoftmaxOp::create(b, loc, s.getType(), s, qt.getRank() - 1);
}

} // namespace

Value AttentionOp::buildDecomposition(OpBuilder &b, Value *probs) {
  Location loc = getLoc();
  Value p = attentionProbs(b, *this);
  if (probs)
    *probs = p;
  Value o =
      matmul(b, loc, flattenBatch(b, loc, p), flattenBatch(b, loc, getValue()));
  return reshape(b, loc, o, tensorTy(getResult()));
}

SmallVector<Value> AttentionOp::buildGradients(OpBuilder &b, Value g) {
  // With S = scale * Q K^T + M, P = softmax(S), O = P V (PyTorch's
  // _scaled_dot_product_attention_math backward):
  //   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - sum(dP * P, -1)),
  //   dQ = scale * dS K,  dK = scale * dS^T Q,  dM = dS (summed to M).
  // P is recomputed from the operands rather than kept from the forward.
  Location loc = getLoc();
  auto qt = tensorTy(getQuery());
  ArrayRef<int64_t> batch = qt.getShape().drop_back(2);
  int64_t last = qt.getRank() - 1;
  Value p = attentionProbs(b, *this);
  Value g3 = flattenBatch(b, loc, g);
  Value p3 = flattenBatch(b, loc, p);
  Value v3 = flattenBatch(b, loc, getValue());
  Value dv = matmul(b, loc, transposeLast2(b, loc, p3), g3);
  Value dp = unflattenBatch(
      b, loc, matmul(b, loc, g3, transposeLast2(b, loc, v3)), batch);
  Value rowDot = sum(b, loc, binary<MulOp>(b, loc, dp, p), {last}, true);
  Value ds = binary<MulOp>(b, loc, p, binary<SubOp>(b, loc, dp, rowDot));
  Value dmask;
  if (Value mask = getMask())
    dmask = sumToShape(b, loc, ds, tensorTy(mask));
  Value scale =
      FillOp::create(b, loc, RankedTensorType::get({}, qt.getElementType()),
                     b.getF64FloatAttr(getScale().convertToDouble()));
  Value ds3 = flattenBatch(b, loc, binary<MulOp>(b, loc, ds, scale));
  Value dq = matmul(b, loc, ds3, flattenBatch(b, loc, getKey()));
  Value dk = matmul(b, loc, transposeLast2(b, loc, ds3),
                    flattenBatch(b, loc, getQuery()));
  SmallVector<Value> grads{reshape(b, loc, dq, qt),
                           reshape(b, loc, dk, tensorTy(getKey())),
                           reshape(b, loc, dv, tensorTy(getValue()))};
  if (getMask())
    grads.push_back(dmask);
  return grads;
}

//===----------------------------------------------------------------------===//
// Recurrent layers
//===----------------------------------------------------------------------===//

namespace {

/// The gradient `g` of a result of type `ty`, or zeros when the loss does
/// not depend on that result.
Value gradOrZeros(OpBuilder &b, Location loc, Value g, Type ty) {
  return g ? g : FillOp::create(b, loc, ty, b.getF64FloatAttr(0.0)).getResult();
}

/// The hidden state every step started from, `[T, B, H]`: `h0` then `y`
/// shifted by one step (up, or down for a reverse layer).
Value previousStates(OpBuilder &b, Location loc, Value y, Value h0,
                     bool reverse) {
  auto yTy = tensorTy(y);
  int64_t t = yTy.getDimSize(0), batch = yTy.getDimSize(1),
          hidden = yTy.getDimSize(2);
  Value first = reshape(b, loc, h0, withShape(yTy, {1, batch, hidden}));
  if (t == 1)
    return first;
  auto restTy = withShape(yTy, {t - 1, batch, hidden});
  SmallVector<int64_t> offsets{reverse ? 1 : 0, 0, 0}, strides{1, 1, 1};
  Value rest = SliceOp::create(b, loc, restTy, y, offsets, strides);
  SmallVector<Value> parts{first, rest};
  if (reverse)
    std::swap(parts[0], parts[1]);
  return ConcatOp::create(b, loc, yTy, parts, 0);
}

/// The recurrent weight's gradient, sum over steps of dg_t^T h_{t-1}, as
/// one GEMM over every step; `*flat`, when given, is set to the gates'
/// gradient as `[T*B, G]`.
Value recurrentWeightGrad(OpBuilder &b, Location loc, Value gatesGrad, Value y,
                          Value h0, bool reverse, Value *flat = nullptr) {
  auto gTy = tensorTy(gatesGrad);
  int64_t rows = gTy.getDimSize(0) * gTy.getDimSize(1);
  int64_t hidden = tensorTy(y).getDimSize(2);
  Value hprev = previousStates(b, loc, y, h0, reverse);
  Value dg2 =
      reshape(b, loc, gatesGrad, withShape(gTy, {rows, gTy.getDimSize(2)}));
  Value h2 = reshape(b, loc, hprev, withShape(gTy, {rows, hidden}));
  if (flat)
    *flat = dg2;
  return matmul(b, loc, transposeLast2(b, loc, dg2), h2);
}

} // namespace

SmallVector<Value> LstmOp::buildGradients(OpBuilder &b, Value g) {
  return buildGradientsOfResults(b, {g, Value(), Value()});
}

SmallVector<Value> LstmOp::buildGradientsOfResults(OpBuilder &b,
                                                   ArrayRef<Value> grads) {
  // `gates` feeds only dlc.lstm_grad: the loss never depends on it.
  Location loc = getLoc();
  auto projTy = tensorTy(getProjection());
  Value dy = gradOrZeros(b, loc, grads[0], getY().getType());
  Value dc = gradOrZeros(b, loc, grads[1], getC().getType());
  auto bptt = LstmGradOp::create(
      b, loc,
      TypeRange{projTy, getInitialH().getType(), getInitialC().getType()}, dy,
      dc, getRecurrentWeight(), getInitialC(), getC(), getGates(),
      getReverse());
  Value dproj = bptt.getGatesGrad();
  Value dw =
      recurrentWeightGrad(b, loc, dproj, getY(), getInitialH(), getReverse());
  return {dproj, dw, bptt.getInitialHGrad(), bptt.getInitialCGrad()};
}

SmallVector<Value> GruOp::buildGradients(OpBuilder &b, Value g) {
  return buildGradientsOfResults(b, {g, Value()});
}

SmallVector<Value> GruOp::buildGradientsOfResults(OpBuilder &b,
                                                  ArrayRef<Value> grads) {
  // `gates` feeds only dlc.gru_grad: the loss never depends on it.
  Location loc = getLoc();
  auto projTy = tensorTy(getProjection());
  Value dy = gradOrZeros(b, loc, grads[0], getY().getType());
  auto bptt = GruGradOp::create(
      b, loc, TypeRange{projTy, projTy, getInitialH().getType()}, dy,
      getRecurrentWeight(), getInitialH(), getProjection(), getY(), getGates(),
      getReverse());
  // db_hh = sum_t dg_t over every step.
  Value dg2;
  Value dw = recurrentWeightGrad(b, loc, bptt.getGatesGrad(), getY(),
                                 getInitialH(), getReverse(), &dg2);
  Value db = sum(b, loc, dg2, {0}, /*keepdim=*/false);
  return {bptt.getProjectionGrad(), dw, db, bptt.getInitialHGrad()};
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

SmallVector<Value> AddOp::buildGradients(OpBuilder &b, Value g) {
  Location loc = getLoc();
  return {sumToShape(b, loc, g, tensorTy(getLhs())),
          sumToShape(b, loc, g, tensorTy(getRhs()))};
}

SmallVector<Value> SubOp::buildGradients(OpBuilder &b, Value g) {
  Location loc = getLoc();
  Value neg = NegOp::create(b, loc, g.getType(), g);
  return {sumToShape(b, loc, g, tensorTy(getLhs())),
          sumToShape(b, loc, neg, tensorTy(getRhs()))};
}

SmallVector<Value> MulOp::buildGradients(OpBuilder &b, Value g) {
  Location loc = getLoc();
  return {sumToShape(b, loc, binary<MulOp>(b, loc, g, getRhs()),
                     tensorTy(getLhs())),
          sumToShape(b, loc, binary<MulOp>(b, loc, g, getLhs()),
                     tensorTy(getRhs()))};
}

SmallVector<Value> DivOp::buildGradients(OpBuilder &b, Value g) {
  Location loc = getLoc();
  // d(a/b)/da = 1/b;  d(a/b)/db = -a/b^2 = -(a/b)/b.
  Value da = binary<DivOp>(b, loc, g, getRhs());
  Value t =
      binary<DivOp>(b, loc, binary<MulOp>(b, loc, g, getResult()), getRhs());
  Value db = NegOp::create(b, loc, t.getType(), t);
  return {sumToShape(b, loc, da, tensorTy(getLhs())),
          sumToShape(b, loc, db, tensorTy(getRhs()))};
}

SmallVector<Value> ReluOp::buildGradients(OpBuilder &b, Value g) {
  return {activationGrad(b, getLoc(), getInput(), g, Activation::relu)};
}
SmallVector<Value> TanhOp::buildGradients(OpBuilder &b, Value g) {
  return {activationGrad(b, getLoc(), getInput(), g, Activation::tanh)};
}
SmallVector<Value> SigmoidOp::buildGradients(OpBuilder &b, Value g) {
  return {activationGrad(b, getLoc(), getInput(), g, Activation::sigmoid)};
}
SmallVector<Value> GeluOp::buildGradients(OpBuilder &b, Value g) {
  return {activationGrad(b, getLoc(), getInput(), g,
                         getApproximate() == GeluApproximation::tanh
                             ? Activation::gelu_tanh
                             : Activation::gelu)};
}
SmallVector<Value> ExpOp::buildGradients(OpBuilder &b, Value g) {
  return {binary<MulOp>(b, getLoc(), g, getResult())};
}
SmallVector<Value> LogOp::buildGradients(OpBuilder &b, Value g) {
  return {binary<DivOp>(b, getLoc(), g, getInput())};
}
SmallVector<Value> SqrtOp::buildGradients(OpBuilder &b, Value g) {
  // d sqrt(x) = 1 / (2 sqrt(x)), from the result like PyTorch.
  Location loc = getLoc();
  Value twice =
      ScaleOp::create(b, loc, getType(), getResult(), b.getF64FloatAttr(2.0));
  return {binary<DivOp>(b, loc, g, twice)};
}
SmallVector<Value> ErfOp::buildGradients(OpBuilder &b, Value g) {
  // d erf(x) = 2 / sqrt(pi) * exp(-x^2), like PyTorch.
  Location loc = getLoc();
  Value x = getInput();
  Value sq = MulOp::create(b, loc, getType(), x, x);
  Value e =
      ExpOp::create(b, loc, getType(), NegOp::create(b, loc, getType(), sq));
  Value pdf =
      ScaleOp::create(b, loc, getType(), e, b.getF64FloatAttr(M_2_SQRTPI));
  return {binary<MulOp>(b, loc, g, pdf)};
}
SmallVector<Value> NegOp::buildGradients(OpBuilder &b, Value g) {
  return {NegOp::create(b, getLoc(), g.getType(), g)};
}
SmallVector<Value> ScaleOp::buildGradients(OpBuilder &b, Value g) {
  return {ScaleOp::create(b, getLoc(), g.getType(), g, getFactorAttr())};
}
SmallVector<Value> BroadcastToOp::buildGradients(OpBuilder &b, Value g) {
  return {sumToShape(b, getLoc(), g, tensorTy(getInput()))};
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

SmallVector<Value> SoftmaxOp::buildGradients(OpBuilder &b, Value g) {
  // dx = y * (g - sum(g * y, dim))
  Location loc = getLoc();
  Value y = getResult();
  int64_t dim = static_cast<int64_t>(getDim());
  Value s = sum(b, loc, binary<MulOp>(b, loc, g, y), {dim}, true);
  return {binary<MulOp>(b, loc, y, binary<SubOp>(b, loc, g, s))};
}

SmallVector<Value> LogSoftmaxOp::buildGradients(OpBuilder &b, Value g) {
  // dx = g - exp(y) * sum(g, dim)
  Location loc = getLoc();
  Value p = ExpOp::create(b, loc, getType(), getResult());
  int64_t dim = static_cast<int64_t>(getDim());
  Value s = sum(b, loc, g, {dim}, true);
  return {binary<SubOp>(b, loc, g, binary<MulOp>(b, loc, p, s))};
}

SmallVector<Value> LayerNormOp::buildGradients(OpBuilder &b, Value g) {
  auto op = LayerNormGradOp::create(
      b, getLoc(),
      TypeRange{getType(), getWeight().getType(), getBias().getType()},
      getInput(), getWeight(), g, getEpsilonAttr());
  return {op.getInputGrad(), op.getWeightGrad(), op.getBiasGrad()};
}

SmallVector<Value> BatchNormOp::buildGradients(OpBuilder &b, Value g) {
  // Inference form: y = (x - mean) * inv * scale + bias with
  // inv = 1 / sqrt(var + eps) per channel. dx = g * scale * inv,
  // dscale = sum(g * (x - mean) * inv), dbias = sum(g) over every dimension
  // but the channels. mean and var are running statistics: no gradient.
  Location loc = getLoc();
  auto inTy = tensorTy(getInput()), cTy = tensorTy(getScale());
  // [C] -> [C, 1, ..., 1], to broadcast against [N, C, ...].
  SmallVector<int64_t> chShape{cTy.getDimSize(0)};
  chShape.append(inTy.getRank() - 2, 1);
  auto chTy = withShape(cTy, chShape);
  auto perChannel = [&](Value v) { return reshape(b, loc, v, chTy); };
  Value eps = FillOp::create(b, loc, withShape(cTy, {}), getEpsilonAttr());
  Value one =
      FillOp::create(b, loc, withShape(cTy, {}), b.getF64FloatAttr(1.0));
  Value stddev =
      SqrtOp::create(b, loc, cTy, binary<AddOp>(b, loc, getVar(), eps));
  Value inv = binary<DivOp>(b, loc, one, stddev);
  Value dx = binary<MulOp>(b, loc, g,
                           perChannel(binary<MulOp>(b, loc, getScale(), inv)));
  Value xhat = binary<MulOp>(
      b, loc, binary<SubOp>(b, loc, getInput(), perChannel(getMean())),
      perChannel(inv));
  SmallVector<int64_t> dims{0};
  for (int64_t d = 2; d < inTy.getRank(); ++d)
    dims.push_back(d);
  Value dscale = sum(b, loc, binary<MulOp>(b, loc, g, xhat), dims, false);
  Value dbias = sum(b, loc, g, dims, false);
  return {dx, dscale, dbias, Value(), Value()};
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

SmallVector<Value> Conv2DOp::buildGradients(OpBuilder &b, Value g) {
  Location loc = getLoc();
  if (getActivation() != Activation::none) {
    // Recompute the pre-activation rather than keep it.
    Value z = Conv2DOp::create(
        b, loc, getType(), getInput(), getWeight(), getBias(), getStridesAttr(),
        getPaddingAttr(), getDilationsAttr(), getGroupsAttr(),
        ActivationAttr::get(getContext(), Activation::none));
    g = activationGrad(b, loc, z, g, getActivation());
  }
  Value dx = Conv2DGradInputOp::create(
      b, loc, getInput().getType(), g, getWeight(), getStridesAttr(),
      getPaddingAttr(), getDilationsAttr(), getGroupsAttr());
  Value dw = Conv2DGradWeightOp::create(
      b, loc, getWeight().getType(), getInput(), g, getStridesAttr(),
      getPaddingAttr(), getDilationsAttr(), getGroupsAttr());
  SmallVector<Value> grads{dx, dw};
  if (getBias())
    grads.push_back(sum(b, loc, g, {0, 2, 3}, /*keepdim=*/false));
  return grads;
}

SmallVector<Value> Conv2DGradInputOp::buildGradients(OpBuilder &b, Value g) {
  // The transposed convolution is linear in each operand; its adjoint in
  // `grad` is the convolution itself, and its weight gradient is the
  // convolution's weight gradient with the roles of input and output
  // gradient taken by g and `grad`.
  Location loc = getLoc();
  Value dgrad = Conv2DOp::create(
      b, loc, getGrad().getType(), g, getWeight(), Value(), getStridesAttr(),
      getPaddingAttr(), getDilationsAttr(), getGroupsAttr(),
      ActivationAttr::get(getContext(), Activation::none));
  Value dw = Conv2DGradWeightOp::create(
      b, loc, getWeight().getType(), g, getGrad(), getStridesAttr(),
      getPaddingAttr(), getDilationsAttr(), getGroupsAttr());
  return {dgrad, dw};
}

SmallVector<Value> MaxPool2DOp::buildGradients(OpBuilder &b, Value g) {
  return {MaxPool2DGradOp::create(b, getLoc(), getInput().getType(), getInput(),
                                  g, getKernelAttr(), getStridesAttr(),
                                  getPaddingAttr(), getDilationsAttr())};
}

SmallVector<Value> AvgPool2DOp::buildGradients(OpBuilder &b, Value g) {
  return {AvgPool2DGradOp::create(b, getLoc(), getInput().getType(), g,
                                  getKernelAttr(), getStridesAttr(),
                                  getPaddingAttr(), getCountIncludePadAttr())};
}

//===----------------------------------------------------------------------===//
// Shape manipulation and reductions
//===----------------------------------------------------------------------===//

SmallVector<Value> ReshapeOp::buildGradients(OpBuilder &b, Value g) {
  return {reshape(b, getLoc(), g, tensorTy(getInput()))};
}

SmallVector<Value> TransposeOp::buildGradients(OpBuilder &b, Value g) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  return {transpose(b, getLoc(), g, inverse)};
}

SmallVector<Value> ConcatOp::buildGradients(OpBuilder &b, Value g) {
  // Each input's gradient is its window of g.
  SmallVector<Value> grads;
  int64_t rank = tensorTy(g).getRank(), at = 0;
  for (Value in : getInputs()) {
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    offsets[getDim()] = at;
    at += tensorTy(in).getDimSize(getDim());
    grads.push_back(
        SliceOp::create(b, getLoc(), tensorTy(in), g, offsets, strides));
  }
  return grads;
}

SmallVector<Value> SliceOp::buildGradients(OpBuilder &b, Value g) {
  return {SliceGradOp::create(b, getLoc(), tensorTy(getInput()), g,
                              getOffsets(), getStrides())};
}

SmallVector<Value> SliceGradOp::buildGradients(OpBuilder &b, Value g) {
  return {SliceOp::create(b, getLoc(), tensorTy(getGrad()), g, getOffsets(),
                          getStrides())};
}

SmallVector<Value> WhereOp::buildGradients(OpBuilder &b, Value g) {
  // Each choice gets g where it was chosen, zero elsewhere, summed back
  // over the dimensions it was broadcast along; the condition gets none.
  auto gTy = tensorTy(g);
  Value zero =
      FillOp::create(b, getLoc(), withShape(gTy, {}), b.getF64FloatAttr(0.0));
  Value toLhs = WhereOp::create(b, getLoc(), gTy, getCondition(), g, zero);
  Value toRhs = WhereOp::create(b, getLoc(), gTy, getCondition(), zero, g);
  return {Value(), sumToShape(b, getLoc(), toLhs, tensorTy(getLhs())),
          sumToShape(b, getLoc(), toRhs, tensorTy(getRhs()))};
}

SmallVector<Value> GatherElementsOp::buildGradients(OpBuilder &b, Value g) {
  return {GatherElementsGradOp::create(b, getLoc(), tensorTy(getInput()), g,
                                       getIndices(), getAxisAttr()),
          Value()};
}

SmallVector<Value> GatherOp::buildGradients(OpBuilder &b, Value g) {
  // The indices are integers: no gradient.
  return {
      GatherGradOp::create(b, getLoc(), tensorTy(getTable()), g, getIndices()),
      Value()};
}

SmallVector<Value> SumOp::buildGradients(OpBuilder &b, Value g) {
  return {unreduce(b, getLoc(), g, tensorTy(getInput()), getDims())};
}

SmallVector<Value> MeanOp::buildGradients(OpBuilder &b, Value g) {
  auto inTy = tensorTy(getInput());
  int64_t count = 1;
  for (int64_t d : getDims())
    count *= inTy.getDimSize(d);
  Value u = unreduce(b, getLoc(), g, inTy, getDims());
  return {ScaleOp::create(b, getLoc(), inTy, u,
                          b.getF64FloatAttr(1.0 / static_cast<double>(count)))};
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

SmallVector<Value> MseLossOp::buildGradients(OpBuilder &b, Value g) {
  // d/dx = 2 (x - t) g / N (mean) or 2 (x - t) g (sum);  d/dt = -d/dx.
  Location loc = getLoc();
  auto ty = tensorTy(getInput());
  double factor = 2.0;
  if (getReduction() == LossReduction::mean)
    factor /= static_cast<double>(ty.getNumElements());
  Value d = binary<SubOp>(b, loc, getInput(), getTarget());
  Value dx = ScaleOp::create(b, loc, ty, binary<MulOp>(b, loc, d, g),
                             b.getF64FloatAttr(factor));
  return {dx, NegOp::create(b, loc, ty, dx)};
}

SmallVector<Value> CrossEntropyOp::buildGradients(OpBuilder &b, Value g) {
  Value d = CrossEntropyGradOp::create(
      b, getLoc(), getLogits().getType(), getLogits(), getLabels(), g,
      getCount(), getReductionAttr(), getIgnoreIndexAttr());
  SmallVector<Value> grads = {d, Value()};
  if (getCount())
    grads.push_back(Value()); // a count gets no gradient
  return grads;
}

SmallVector<Value> MaxOp::buildGradients(OpBuilder &b, Value g) {
  return {ExtremumGradOp::create(b, getLoc(), tensorTy(getInput()), getInput(),
                                 getResult(), g, getDims(), getKeepdim())};
}

SmallVector<Value> MinOp::buildGradients(OpBuilder &b, Value g) {
  return {ExtremumGradOp::create(b, getLoc(), tensorTy(getInput()), getInput(),
                                 getResult(), g, getDims(), getKeepdim())};
}

//===----------------------------------------------------------------------===//
// Precision
//===----------------------------------------------------------------------===//

SmallVector<Value> CastOp::buildGradients(OpBuilder &b, Value g) {
  // The gradient goes back to the input's precision (a 16-bit activation's
  // gradient is 16-bit; a master weight's is fp32).
  if (!isa<FloatType>(tensorTy(getInput()).getElementType()))
    return {Value()}; // An integer input: no gradient.
  return {CastOp::create(b, getLoc(), getInput().getType(), g)};
}
