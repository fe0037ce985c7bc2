//===- UnrollRecurrent.cpp - dlc-unroll-recurrent -------------------------===//
//
// Writes out the steps of every dlc.lstm, dlc.gru and their gradients with
// dlc ops, for the CUDA pipeline. See Passes.td for the contract; the
// equations are the ops' (DlcOps.td).
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCUNROLLRECURRENTPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// Builds the per-step dlc ops of one recurrent op at the builder's
/// insertion point.
struct Steps {
  Steps(OpBuilder &b, Location loc, RankedTensorType gatesTy, bool reverse,
        int64_t numGates)
      : b(b), loc(loc), elem(gatesTy.getElementType()),
        steps(gatesTy.getDimSize(0)), batch(gatesTy.getDimSize(1)),
        hidden(gatesTy.getDimSize(2) / numGates), reverse(reverse) {}

  RankedTensorType type(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, elem);
  }
  /// The steps in the order the forward pass computes them.
  SmallVector<int64_t> order() const {
    SmallVector<int64_t> ts;
    for (int64_t i = 0; i < steps; ++i)
      ts.push_back(reverse ? steps - 1 - i : i);
    return ts;
  }
  /// Step `t` of a [T, B, N] sequence, [B, N].
  Value step(Value seq, int64_t t) const {
    int64_t n = cast<RankedTensorType>(seq.getType()).getDimSize(2);
    Value s =
        SliceOp::create(b, loc, type({1, batch, n}), seq,
                        ArrayRef<int64_t>{t, 0, 0}, ArrayRef<int64_t>{1, 1, 1});
    return ReshapeOp::create(b, loc, type({batch, n}), s);
  }
  /// Gate `k`'s columns of a [B, 4H] value.
  Value gate(Value v, int64_t k) const {
    return SliceOp::create(b, loc, type({batch, hidden}), v,
                           ArrayRef<int64_t>{0, k * hidden},
                           ArrayRef<int64_t>{1, 1});
  }
  /// The per-step values `parts` ([B, N], indexed by step) as a [T, B, N]
  /// sequence.
  Value join(ArrayRef<Value> parts) const {
    int64_t n = cast<RankedTensorType>(parts[0].getType()).getDimSize(1);
    SmallVector<Value> rows;
    for (Value p : parts)
      rows.push_back(ReshapeOp::create(b, loc, type({1, batch, n}), p));
    if (rows.size() == 1)
      return rows[0];
    return ConcatOp::create(b, loc, type({steps, batch, n}), rows, 0);
  }

  Value add(Value x, Value y) const {
    return AddOp::create(b, loc, x.getType(), x, y);
  }
  Value sub(Value x, Value y) const {
    return SubOp::create(b, loc, x.getType(), x, y);
  }
  Value mul(Value x, Value y) const {
    return MulOp::create(b, loc, x.getType(), x, y);
  }
  Value sigmoid(Value x) const { return SigmoidOp::create(b, loc, x); }
  Value tanh(Value x) const { return TanhOp::create(b, loc, x); }
  Value ones() const {
    return FillOp::create(b, loc, type({batch, hidden}),
                          b.getF64FloatAttr(1.0));
  }
  /// 1 - x * x and x (1 - x): the slopes of tanh and the sigmoid.
  Value tanhSlope(Value x) const { return sub(ones(), mul(x, x)); }
  Value sigmoidSlope(Value x) const { return mul(x, sub(ones(), x)); }

  OpBuilder &b;
  Location loc;
  Type elem;
  int64_t steps, batch, hidden;
  bool reverse;
};

void unroll(LstmOp op) {
  OpBuilder b(op);
  Steps s(b, op.getLoc(), cast<RankedTensorType>(op.getGates().getType()),
          op.getReverse(), 4);
  Value h = op.getInitialH(), c = op.getInitialC();
  SmallVector<Value> ys(s.steps), cs(s.steps), gates(s.steps);
  for (int64_t t : s.order()) {
    Value rec = LinearOp::create(b, s.loc, s.type({s.batch, 4 * s.hidden}), h,
                                 op.getRecurrentWeight(), Value());
    Value a = s.add(s.step(op.getProjection(), t), rec);
    Value i = s.sigmoid(s.gate(a, 0)), f = s.sigmoid(s.gate(a, 1));
    Value g = s.tanh(s.gate(a, 2)), o = s.sigmoid(s.gate(a, 3));
    c = s.add(s.mul(f, c), s.mul(i, g));
    h = s.mul(o, s.tanh(c));
    ys[t] = h;
    cs[t] = c;
    gates[t] = a;
  }
  op.getY().replaceAllUsesWith(s.join(ys));
  op.getC().replaceAllUsesWith(s.join(cs));
  op.getGates().replaceAllUsesWith(s.join(gates));
  op.erase();
}

void unroll(LstmGradOp op) {
  OpBuilder b(op);
  Steps s(b, op.getLoc(), cast<RankedTensorType>(op.getGates().getType()),
          op.getReverse(), 4);
  SmallVector<int64_t> order = s.order();
  Value dh = s.step(op.getYGrad(), order.back());
  Value carry = FillOp::create(b, s.loc, s.type({s.batch, s.hidden}),
                               b.getF64FloatAttr(0.0));
  SmallVector<Value> dGates(s.steps);
  for (size_t n = order.size(); n-- > 0;) {
    int64_t t = order[n];
    Value a = s.step(op.getGates(), t);
    Value i = s.sigmoid(s.gate(a, 0)), f = s.sigmoid(s.gate(a, 1));
    Value g = s.tanh(s.gate(a, 2)), o = s.sigmoid(s.gate(a, 3));
    Value tc = s.tanh(s.step(op.getC(), t));
    Value cPrev = n == 0 ? op.getInitialC() : s.step(op.getC(), order[n - 1]);
    Value dc = s.add(s.add(s.step(op.getCGrad(), t), carry),
                     s.mul(s.mul(dh, o), s.tanhSlope(tc)));
    Value parts[] = {s.mul(s.mul(dc, g), s.sigmoidSlope(i)),
                     s.mul(s.mul(dc, cPrev), s.sigmoidSlope(f)),
                     s.mul(s.mul(dc, i), s.tanhSlope(g)),
                     s.mul(s.mul(dh, tc), s.sigmoidSlope(o))};
    dGates[t] = ConcatOp::create(b, s.loc, a.getType(), parts, 1);
    carry = s.mul(dc, f);
    Value rec = MatmulOp::create(b, s.loc, s.type({s.batch, s.hidden}),
                                 dGates[t], op.getRecurrentWeight());
    dh = n == 0 ? rec : s.add(s.step(op.getYGrad(), order[n - 1]), rec);
  }
  op.getGatesGrad().replaceAllUsesWith(s.join(dGates));
  op.getInitialHGrad().replaceAllUsesWith(dh);
  op.getInitialCGrad().replaceAllUsesWith(carry);
  op.erase();
}

/// r, z and n of a GRU step from its projection `p` and recurrent
/// pre-activations `g` ([B, 3H]).
struct GruGates {
  GruGates(const Steps &s, Value p, Value g)
      : r(s.sigmoid(s.add(s.gate(p, 0), s.gate(g, 0)))),
        z(s.sigmoid(s.add(s.gate(p, 1), s.gate(g, 1)))),
        n(s.tanh(s.add(s.gate(p, 2), s.mul(r, s.gate(g, 2))))) {}
  Value r, z, n;
};

void unroll(GruOp op) {
  OpBuilder b(op);
  Steps s(b, op.getLoc(), cast<RankedTensorType>(op.getGates().getType()),
          op.getReverse(), 3);
  Value h = op.getInitialH();
  SmallVector<Value> ys(s.steps), gates(s.steps);
  for (int64_t t : s.order()) {
    Value g = LinearOp::create(b, s.loc, s.type({s.batch, 3 * s.hidden}), h,
                               op.getRecurrentWeight(), op.getRecurrentBias());
    GruGates gg(s, s.step(op.getProjection(), t), g);
    h = s.add(s.mul(s.sub(h, gg.n), gg.z), gg.n);
    ys[t] = h;
    gates[t] = g;
  }
  op.getY().replaceAllUsesWith(s.join(ys));
  op.getGates().replaceAllUsesWith(s.join(gates));
  op.erase();
}

void unroll(GruGradOp op) {
  OpBuilder b(op);
  Steps s(b, op.getLoc(), cast<RankedTensorType>(op.getGates().getType()),
          op.getReverse(), 3);
  SmallVector<int64_t> order = s.order();
  Value dh = s.step(op.getYGrad(), order.back());
  SmallVector<Value> dProj(s.steps), dGates(s.steps);
  for (size_t n = order.size(); n-- > 0;) {
    int64_t t = order[n];
    Value g = s.step(op.getGates(), t);
    GruGates gg(s, s.step(op.getProjection(), t), g);
    Value hPrev = n == 0 ? op.getInitialH() : s.step(op.getY(), order[n - 1]);
    Value dn = s.mul(s.mul(dh, s.sub(s.ones(), gg.z)), s.tanhSlope(gg.n));
    Value dr = s.mul(s.mul(dn, s.gate(g, 2)), s.sigmoidSlope(gg.r));
    Value dz = s.mul(s.mul(dh, s.sub(hPrev, gg.n)), s.sigmoidSlope(gg.z));
    Value pParts[] = {dr, dz, dn}, gParts[] = {dr, dz, s.mul(dn, gg.r)};
    dProj[t] = ConcatOp::create(b, s.loc, g.getType(), pParts, 1);
    dGates[t] = ConcatOp::create(b, s.loc, g.getType(), gParts, 1);
    Value rec = s.add(s.mul(dh, gg.z),
                      MatmulOp::create(b, s.loc, s.type({s.batch, s.hidden}),
                                       dGates[t], op.getRecurrentWeight()));
    dh = n == 0 ? rec : s.add(s.step(op.getYGrad(), order[n - 1]), rec);
  }
  op.getProjectionGrad().replaceAllUsesWith(s.join(dProj));
  op.getGatesGrad().replaceAllUsesWith(s.join(dGates));
  op.getInitialHGrad().replaceAllUsesWith(dh);
  op.erase();
}

struct DlcUnrollRecurrentPass
    : dlc::impl::DlcUnrollRecurrentPassBase<DlcUnrollRecurrentPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<LstmOp, LstmGradOp, GruOp, GruGradOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      TypeSwitch<Operation *>(op).Case<LstmOp, LstmGradOp, GruOp, GruGradOp>(
          [](auto recurrent) { unroll(recurrent); });
  }
};

} // namespace
