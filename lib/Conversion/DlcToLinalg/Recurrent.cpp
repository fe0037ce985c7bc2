//===- Recurrent.cpp - LSTM and GRU layers and their gradients -----------===//
//
// Part of dlc-lower-to-linalg. A dlc.lstm becomes an scf.for over its steps;
// each step is one linalg.matmul of the current hidden state with W_hh^T
// (transposed once, before the loop), accumulated in place into the step's
// slice of the input projection, which thereby becomes the saved
// pre-activations, and one elementwise linalg.generic for the cell update,
// writing h_t and c_t into their slices of the results and over the current
// states. dlc.lstm_grad runs the steps backwards: one generic per gate for
// the cell's gradient, then one matmul carrying the hidden state's gradient
// to the step before. Everything lives in the results and in tensors
// threaded through the loop as iteration arguments, every write in place
// into a slice that the step extracted from the value it writes back to, so
// bufferization places it all in buffers of the function body, which the
// memory planner then assigns. A batch of at least 16 rows runs as blocks
// of rows (RowBlocks), each the whole loop over the steps on its rows, the
// iterations of a loop that dlc-parallelize-loops runs in parallel: the
// rows of a recurrent layer never meet. Nothing is peeled off the loop: the
// steps outside it would meet dlc-fuse-elementwise, which replaces
// destinations that a payload does not read (it leaves loop bodies alone).
// A dlc.gru and
// its dlc.gru_grad are the same loops with the GRU's cell; the GRU's steps
// save the recurrent pre-activations (h W_hh^T + b_hh), which the reset
// gate multiplies.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "dlc/Dialect/Dlc/IR/DlcContracts.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::lowering;

namespace {

/// The shapes of a recurrent op and the builders of its steps' slices.
struct Sequence {
  Sequence(OpBuilder &b, Location loc, RankedTensorType gatesTy, bool reverse,
           int64_t numGates)
      : b(b), loc(loc), elem(gatesTy.getElementType()),
        steps(gatesTy.getDimSize(0)), batch(gatesTy.getDimSize(1)),
        hidden(gatesTy.getDimSize(2) / numGates), reverse(reverse) {}

  RankedTensorType type(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, elem);
  }
  Value index(int64_t i) const {
    return arith::ConstantIndexOp::create(b, loc, i);
  }
  /// The step that iteration `i` of the forward order computes.
  Value forwardStep(Value i) const {
    if (!reverse)
      return i;
    return arith::SubIOp::create(b, loc, index(steps - 1), i);
  }
  /// The step computed before step `t` (whose state it reads).
  Value stepBefore(Value t) const {
    return reverse ? arith::AddIOp::create(b, loc, t, index(1)).getResult()
                   : arith::SubIOp::create(b, loc, t, index(1)).getResult();
  }
  /// Iteration `i` of a backward loop: the step it differentiates (the
  /// forward order reversed), whether that is the first forward step, and
  /// the step before it (itself for the first, whose initial states the
  /// caller selects instead).
  std::tuple<Value, Value, Value> backwardStep(Value i) const {
    Value t = forwardStep(arith::SubIOp::create(b, loc, index(steps - 1), i));
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i,
                                        index(steps - 1));
    Value prev = arith::SelectOp::create(b, loc, first, t, stepBefore(t));
    return {t, first, prev};
  }
  /// The last step the forward pass computes.
  int64_t lastStep() const { return reverse ? 0 : steps - 1; }

  /// The recurrent weight `w` ([G*H, H]) transposed, [H, G*H]: what every
  /// step's recurrent GEMM multiplies the state by, laid out once.
  Value transposedWeight(Value w) const {
    // A weight stored transposed (dlc-pack-weights) is read as it is.
    if (Value stored = matrixTransposeInput(w))
      return stored;
    auto wTy = tensorTy(w);
    return linalg::TransposeOp::create(
               b, loc, w,
               emptyTensor(b, loc,
                           type({wTy.getDimSize(1), wTy.getDimSize(0)})),
               ArrayRef<int64_t>{1, 0})
        .getResult()[0];
  }

  /// Columns [col, col + width) of step `t` of `seq` ([T, B, N]), [B, width].
  Value slice(Value seq, Value t, int64_t col, int64_t width) const {
    SmallVector<OpFoldResult> offsets{t, b.getIndexAttr(0),
                                      b.getIndexAttr(col)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(batch),
                                    b.getIndexAttr(width)};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, loc, type({batch, width}), seq,
                                          offsets, sizes, strides);
  }
  /// Columns [col, col + width) of `v` ([B, N]).
  Value columns(Value v, int64_t col, int64_t width) const {
    SmallVector<OpFoldResult> offsets{b.getIndexAttr(0), b.getIndexAttr(col)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(batch),
                                    b.getIndexAttr(width)};
    SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, loc, type({batch, width}), v,
                                          offsets, sizes, strides);
  }
  Value step(Value seq, Value t) const {
    return slice(seq, t, 0, tensorTy(seq).getDimSize(2));
  }
  /// `v` ([B, width]) written back as columns [col, col + width) of step
  /// `t` of `seq`.
  Value insert(Value v, Value seq, Value t, int64_t col = 0) const {
    SmallVector<OpFoldResult> offsets{t, b.getIndexAttr(0),
                                      b.getIndexAttr(col)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(batch),
                                    b.getIndexAttr(tensorTy(v).getDimSize(1))};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    return tensor::InsertSliceOp::create(b, loc, v, seq, offsets, sizes,
                                         strides);
  }
  /// The four gates' columns of step `t` of a [T, B, 4H] sequence.
  SmallVector<Value> gates(Value seq, Value t) const {
    SmallVector<Value> g;
    for (int64_t k = 0; k < 4; ++k)
      g.push_back(slice(seq, t, k * hidden, hidden));
    return g;
  }

  /// `acc` + `lhs` x `rhs` (linalg.matmul accumulates into its init).
  Value matmulInto(Value lhs, Value rhs, Value acc) const {
    return linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                    ValueRange{lhs, rhs}, ValueRange{acc})
        .getResult(0);
  }

  /// An elementwise linalg.generic over [B, H]: `body` gets the elements of
  /// `inputs` then the current elements of `outputs` and returns the new
  /// ones.
  SmallVector<Value>
  cellLoop(ValueRange inputs, ValueRange outputs,
           function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
               body) const {
    SmallVector<AffineMap> maps(inputs.size() + outputs.size(),
                                b.getMultiDimIdentityMap(2));
    SmallVector<utils::IteratorType> iterators(2,
                                               utils::IteratorType::parallel);
    auto op = linalg::GenericOp::create(
        b, loc, TypeRange(outputs), inputs, outputs, maps, iterators,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
        });
    return SmallVector<Value>(op.getResults());
  }

  /// `from` copied into `to`.
  Value copy(Value from, Value to) const {
    return linalg::CopyOp::create(b, loc, from, to).getResult(0);
  }

  /// A tensor written step by step in place: a bufferization.alloc_tensor,
  /// which, unlike tensor.empty, neither CSE merges with another nor
  /// canonicalization folds into the slices written.
  Value buffer(RankedTensorType ty) const {
    return bufferization::AllocTensorOp::create(b, loc, ty, ValueRange{});
  }

  /// A counted loop over the steps [from, to) of the forward order (its
  /// induction variable), threading `inits` through `body`.
  SmallVector<Value>
  loop(int64_t from, int64_t to, ValueRange inits,
       function_ref<SmallVector<Value>(Value, ValueRange)> body) const {
    if (from >= to)
      return SmallVector<Value>(inits);
    auto forOp = scf::ForOp::create(
        b, loc, index(from), index(to), index(1), inits,
        [&](OpBuilder &nb, Location nloc, Value iv, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          scf::YieldOp::create(b, nloc, body(iv, args));
        });
    return SmallVector<Value>(forOp.getResults());
  }

  OpBuilder &b;
  Location loc;
  Type elem;
  int64_t steps, batch, hidden;
  bool reverse;
};

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  return applyActivation(b, loc, Activation::sigmoid, x);
}
Value tanhOf(OpBuilder &b, Location loc, Value x) {
  return math::TanhOp::create(b, loc, x);
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}
Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}
/// 1 - x * x: the derivative of tanh from its value.
Value oneMinusSquare(OpBuilder &b, Location loc, Value x) {
  return arith::SubFOp::create(b, loc, floatConst(b, loc, x.getType(), 1.0),
                               mul(b, loc, x, x));
}
/// x (1 - x): the derivative of the sigmoid from its value.
Value sigmoidSlope(OpBuilder &b, Location loc, Value x) {
  return mul(
      b, loc, x,
      arith::SubFOp::create(b, loc, floatConst(b, loc, x.getType(), 1.0), x));
}

/// How a recurrent layer's batch splits into blocks of rows that run their
/// steps in parallel: the rows never meet in a step (the recurrent GEMM
/// multiplies each row of the state by the shared weight), so each block
/// runs the whole loop over the steps as one iteration of a loop over the
/// blocks, marked independent for dlc-parallelize-loops: the thread pool
/// forks once per layer instead of once per step.
struct RowBlocks {
  /// At most `maxBlocks` equal blocks of at least `kMinRows` rows (one
  /// register tile of the AVX-512 matmul kernel), or one block.
  RowBlocks(int64_t batch, int64_t maxBlocks) : rows(batch) {
    for (int64_t n = std::min(maxBlocks, batch / kMinRows); n > 1; --n)
      if (batch % n == 0) {
        count = n;
        rows = batch / n;
        return;
      }
  }

  /// Runs `body` on each block: it gets a function that takes the block's
  /// rows of a sequence [T, B, N] or state [B, N], and the block's rows of
  /// `outs`, and returns their new values, which are written back in
  /// place. One block runs on the whole tensors.
  SmallVector<Value>
  run(OpBuilder &b, Location loc, ValueRange outs,
      function_ref<SmallVector<Value>(function_ref<Value(Value)>, ValueRange)>
          body) const {
    if (count == 1)
      return body([](Value v) { return v; }, outs);
    auto forOp =
        scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                           arith::ConstantIndexOp::create(b, loc, count),
                           arith::ConstantIndexOp::create(b, loc, 1), outs);
    forOp->setAttr(kIndependentIterationsAttrName, b.getUnitAttr());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    Value first =
        arith::MulIOp::create(b, loc, forOp.getInductionVar(),
                              arith::ConstantIndexOp::create(b, loc, rows));
    // Offsets, sizes and strides of the block's rows of `v`.
    auto place = [&](Value v) {
      auto type = tensorTy(v);
      int64_t batchDim = type.getRank() - 2;
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
          sizes, strides(type.getRank(), b.getIndexAttr(1));
      for (int64_t d : type.getShape())
        sizes.push_back(b.getIndexAttr(d));
      offsets[batchDim] = first;
      sizes[batchDim] = b.getIndexAttr(rows);
      return std::tuple{offsets, sizes, strides};
    };
    auto rowsOf = [&](Value v) -> Value {
      auto [offsets, sizes, strides] = place(v);
      return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
    };
    SmallVector<Value> blockOuts;
    for (Value out : forOp.getRegionIterArgs())
      blockOuts.push_back(rowsOf(out));
    SmallVector<Value> results = body(rowsOf, blockOuts), yields;
    for (auto [result, dest] :
         llvm::zip_equal(results, forOp.getRegionIterArgs())) {
      auto [offsets, sizes, strides] = place(dest);
      yields.push_back(tensor::InsertSliceOp::create(b, loc, result, dest,
                                                     offsets, sizes, strides));
    }
    scf::YieldOp::create(b, loc, yields);
    return SmallVector<Value>(forOp.getResults());
  }

  static constexpr int64_t kMinRows = 8;
  int64_t count = 1, rows;
};

struct LowerLstm : OpRewritePattern<LstmOp> {
  LowerLstm(MLIRContext *ctx, int64_t maxBlocks)
      : OpRewritePattern(ctx), maxBlocks(maxBlocks) {}

  /// Step `t`: accumulates h_{t-1} W_hh^T into the step's pre-activations
  /// and writes h_t and c_t into their sequences and over the current
  /// states. `state` is (gates, y, c, h, c_cur), returned updated. The
  /// sequences' previous steps are not read: with the step a loop
  /// variable, bufferization could not tell them from the step written and
  /// would copy.
  static SmallVector<Value> step(const Sequence &s, Value wt, Value t,
                                 ValueRange state) {
    Value gates = state[0], y = state[1], c = state[2], h = state[3],
          cCur = state[4];
    Value a = s.matmulInto(h, wt, s.step(gates, t));
    SmallVector<Value> inputs;
    for (int64_t k = 0; k < 4; ++k)
      inputs.push_back(s.columns(a, k * s.hidden, s.hidden));
    SmallVector<Value> hc = s.cellLoop(
        inputs, {s.step(y, t), s.step(c, t), h, cCur},
        [&](OpBuilder &b, Location loc, ValueRange e) -> SmallVector<Value> {
          Value i = sigmoid(b, loc, e[0]), f = sigmoid(b, loc, e[1]);
          Value g = tanhOf(b, loc, e[2]), o = sigmoid(b, loc, e[3]);
          Value cNew = add(b, loc, mul(b, loc, f, e[7]), mul(b, loc, i, g));
          Value hNew = mul(b, loc, o, tanhOf(b, loc, cNew));
          return {hNew, cNew, hNew, cNew};
        });
    return {s.insert(a, gates, t), s.insert(hc[0], y, t), s.insert(hc[1], c, t),
            hc[2], hc[3]};
  }

  LogicalResult matchAndRewrite(LstmOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Sequence whole(b, loc, tensorTy(op.getProjection()), op.getReverse(), 4);
    Value wt = whole.transposedWeight(op.getRecurrentWeight());
    auto stateTy = whole.type({whole.batch, whole.hidden});
    SmallVector<Value> state{
        op.getProjection(), whole.buffer(tensorTy(op.getY())),
        whole.buffer(tensorTy(op.getC())),
        whole.copy(op.getInitialH(), whole.buffer(stateTy)),
        whole.copy(op.getInitialC(), whole.buffer(stateTy))};
    state = RowBlocks(whole.batch, maxBlocks)
                .run(b, loc, state, [&](auto, ValueRange init) {
                  Sequence s(b, loc, tensorTy(init[0]), op.getReverse(), 4);
                  return s.loop(0, s.steps, init, [&](Value i, ValueRange st) {
                    return step(s, wt, s.forwardStep(i), st);
                  });
                });
    b.replaceOp(op, {state[1], state[2], state[0]});
    return success();
  }

  int64_t maxBlocks;
};

struct LowerLstmGrad : OpRewritePattern<LstmGradOp> {
  LowerLstmGrad(MLIRContext *ctx, int64_t maxBlocks)
      : OpRewritePattern(ctx), maxBlocks(maxBlocks) {}

  /// The gradient of step `t`'s cell. `state` is (dGates, dh, carry, dc):
  /// `dh` is the gradient of h_t, `carry` that of c_t through the next
  /// step; `dc` receives c_t's whole gradient. Writes the step's
  /// pre-activation gradients into `dGates` and the gradient of c_{t-1}
  /// through this step into `carry`, and returns the state. One generic
  /// per gate, each writing its columns of the step: a generic writing all
  /// four would need four slices of `dGates` at once, which bufferization
  /// cannot keep in place (each write back would seem to clobber the
  /// others).
  /// `gates`, `cSeq` and `cGrad` are the layer's (or its block's rows')
  /// sequences.
  static SmallVector<Value> cell(const Sequence &s, Value gates, Value cSeq,
                                 Value cGrad, Value t, Value cPrev,
                                 ValueRange state) {
    int64_t h = s.hidden;
    Value dGates = state[0], dh = state[1], carry = state[2], dc = state[3];
    SmallVector<Value> a = s.gates(gates, t);
    Value c = s.step(cSeq, t);
    using Body = function_ref<Value(OpBuilder &, Location, ValueRange)>;
    auto one = [&](ValueRange inputs, Value out, Body body) {
      return s
          .cellLoop(inputs, {out},
                    [&](OpBuilder &b, Location loc, ValueRange e)
                        -> SmallVector<Value> { return {body(b, loc, e)}; })
          .front();
    };
    // The gate's columns of the step, computed by `body`.
    auto gate = [&](int64_t k, ValueRange inputs, Body body) {
      Value r = one(inputs, s.slice(dGates, t, k * h, h), body);
      dGates = s.insert(r, dGates, t, k * h);
    };
    // dc = c_grad[t] + carry + dh * o * (1 - tanh(c_t)^2).
    dc = one({a[3], c, dh, s.step(cGrad, t), carry}, dc,
             [](OpBuilder &b, Location loc, ValueRange e) {
               Value o = sigmoid(b, loc, e[0]);
               Value tc = tanhOf(b, loc, e[1]);
               return add(b, loc, add(b, loc, e[3], e[4]),
                          mul(b, loc, mul(b, loc, e[2], o),
                              oneMinusSquare(b, loc, tc)));
             });
    gate(0, {a[0], a[2], dc}, [](OpBuilder &b, Location loc, ValueRange e) {
      Value i = sigmoid(b, loc, e[0]), g = tanhOf(b, loc, e[1]);
      return mul(b, loc, mul(b, loc, e[2], g), sigmoidSlope(b, loc, i));
    });
    // The forget gate also carries dc * f to c_{t-1}.
    SmallVector<Value> df = s.cellLoop(
        {a[1], cPrev, dc}, {s.slice(dGates, t, h, h), carry},
        [](OpBuilder &b, Location loc, ValueRange e) -> SmallVector<Value> {
          Value f = sigmoid(b, loc, e[0]);
          return {mul(b, loc, mul(b, loc, e[2], e[1]), sigmoidSlope(b, loc, f)),
                  mul(b, loc, e[2], f)};
        });
    dGates = s.insert(df[0], dGates, t, h);
    carry = df[1];
    gate(2, {a[0], a[2], dc}, [](OpBuilder &b, Location loc, ValueRange e) {
      Value i = sigmoid(b, loc, e[0]), g = tanhOf(b, loc, e[1]);
      return mul(b, loc, mul(b, loc, e[2], i), oneMinusSquare(b, loc, g));
    });
    gate(3, {a[3], c, dh}, [](OpBuilder &b, Location loc, ValueRange e) {
      Value o = sigmoid(b, loc, e[0]), tc = tanhOf(b, loc, e[1]);
      return mul(b, loc, mul(b, loc, e[2], tc), sigmoidSlope(b, loc, o));
    });
    return {dGates, dh, carry, dc};
  }

  LogicalResult matchAndRewrite(LstmGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Sequence whole(b, loc, tensorTy(op.getGates()), op.getReverse(), 4);
    auto stateTy = whole.type({whole.batch, whole.hidden});
    Value w = op.getRecurrentWeight();
    Value last = whole.index(whole.lastStep());
    // The last step's h_t gets only y's gradient, c_t only c's.
    Value dh =
        whole.copy(whole.step(op.getYGrad(), last), whole.buffer(stateTy));
    Value carry =
        linalg::FillOp::create(b, loc, floatConst(b, loc, whole.elem, 0.0),
                               whole.buffer(stateTy))
            .getResult(0);
    SmallVector<Value> state{whole.buffer(tensorTy(op.getGatesGrad())), dh,
                             carry, whole.buffer(stateTy)};
    Value zeros = filledTensor(b, loc, stateTy, 0.0);
    // Last step to first: the cell's gradient, then the gradient of
    // h_{t-1}: its own in y plus dGates_t W_hh. The first step reads the
    // initial c and leaves the initial states' gradients.
    auto rows = [&](function_ref<Value(Value)> rowsOf, ValueRange init) {
      Sequence s(b, loc, tensorTy(init[0]), op.getReverse(), 4);
      Value gates = rowsOf(op.getGates()), c = rowsOf(op.getC()),
            yGrad = rowsOf(op.getYGrad()), cGrad = rowsOf(op.getCGrad()),
            c0 = rowsOf(op.getInitialC()), noGrad = rowsOf(zeros);
      return s.loop(0, s.steps, init, [&](Value i, ValueRange st) {
        auto [t, first, prev] = s.backwardStep(i);
        Value cPrev =
            arith::SelectOp::create(b, loc, first, c0, s.step(c, prev));
        SmallVector<Value> next = cell(s, gates, c, cGrad, t, cPrev, st);
        Value dyPrev =
            arith::SelectOp::create(b, loc, first, noGrad, s.step(yGrad, prev));
        next[1] = s.matmulInto(s.step(next[0], t), w, s.copy(dyPrev, next[1]));
        return next;
      });
    };
    state = RowBlocks(whole.batch, maxBlocks).run(b, loc, state, rows);
    Value dGates = state[0], dh0 = state[1], dc0 = state[2];
    b.replaceOp(op, {dGates, dh0, dc0});
    return success();
  }

  int64_t maxBlocks;
};

/// r, z and n of a GRU step from the elements of its projection's and
/// recurrent pre-activations' columns (p_r, g_r, p_z, g_z, p_n, g_n).
struct GruGates {
  GruGates(OpBuilder &b, Location loc, ValueRange e)
      : r(sigmoid(b, loc, add(b, loc, e[0], e[1]))),
        z(sigmoid(b, loc, add(b, loc, e[2], e[3]))),
        n(tanhOf(b, loc, add(b, loc, e[4], mul(b, loc, r, e[5])))) {}
  Value r, z, n;
};

/// The six column blocks p_r, g_r, p_z, g_z, p_n, g_n of step `t`.
SmallVector<Value> gruInputs(const Sequence &s, Value proj, Value gates,
                             Value t) {
  SmallVector<Value> in;
  for (int64_t k = 0; k < 3; ++k) {
    in.push_back(s.slice(proj, t, k * s.hidden, s.hidden));
    in.push_back(s.slice(gates, t, k * s.hidden, s.hidden));
  }
  return in;
}

struct LowerGru : OpRewritePattern<GruOp> {
  LowerGru(MLIRContext *ctx, int64_t maxBlocks)
      : OpRewritePattern(ctx), maxBlocks(maxBlocks) {}

  /// Step `t`: the recurrent pre-activations h W_hh^T + b_hh into the
  /// step's slice of `gates`, then h_t into y and over the current state.
  /// `state` is (gates, y, h); `proj` is the layer's (or the rows')
  /// input projection, `bias` b_hh.
  static SmallVector<Value> step(const Sequence &s, Value proj, Value bias,
                                 Value wt, Value t, ValueRange state) {
    OpBuilder &b = s.b;
    Value gates = state[0], y = state[1], h = state[2];
    auto id = b.getMultiDimIdentityMap(2);
    auto cols = AffineMap::get(2, 0, {b.getAffineDimExpr(1)}, b.getContext());
    Value slot = s.step(gates, t);
    Value biased =
        linalg::GenericOp::create(
            b, s.loc, TypeRange{slot.getType()}, ValueRange{bias},
            ValueRange{slot}, ArrayRef<AffineMap>{cols, id},
            SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
            [](OpBuilder &nb, Location nloc, ValueRange e) {
              linalg::YieldOp::create(nb, nloc, e[0]);
            })
            .getResult(0);
    Value g = s.matmulInto(h, wt, biased);
    SmallVector<Value> inputs;
    for (int64_t k = 0; k < 3; ++k) {
      inputs.push_back(s.slice(proj, t, k * s.hidden, s.hidden));
      inputs.push_back(s.columns(g, k * s.hidden, s.hidden));
    }
    SmallVector<Value> hy = s.cellLoop(
        inputs, {s.step(y, t), h},
        [](OpBuilder &b, Location loc, ValueRange e) -> SmallVector<Value> {
          GruGates gg(b, loc, e);
          Value hNew =
              add(b, loc,
                  mul(b, loc, arith::SubFOp::create(b, loc, e[7], gg.n), gg.z),
                  gg.n);
          return {hNew, hNew};
        });
    return {s.insert(g, gates, t), s.insert(hy[0], y, t), hy[1]};
  }

  LogicalResult matchAndRewrite(GruOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Sequence whole(b, loc, tensorTy(op.getProjection()), op.getReverse(), 3);
    Value wt = whole.transposedWeight(op.getRecurrentWeight());
    SmallVector<Value> state{
        whole.buffer(tensorTy(op.getGates())),
        whole.buffer(tensorTy(op.getY())),
        whole.copy(op.getInitialH(),
                   whole.buffer(whole.type({whole.batch, whole.hidden})))};
    auto rows = [&](function_ref<Value(Value)> rowsOf, ValueRange init) {
      Sequence s(b, loc, tensorTy(init[0]), op.getReverse(), 3);
      Value proj = rowsOf(op.getProjection());
      return s.loop(0, s.steps, init, [&](Value i, ValueRange st) {
        return step(s, proj, op.getRecurrentBias(), wt, s.forwardStep(i), st);
      });
    };
    state = RowBlocks(whole.batch, maxBlocks).run(b, loc, state, rows);
    b.replaceOp(op, {state[1], state[0]});
    return success();
  }

  int64_t maxBlocks;
};

struct LowerGruGrad : OpRewritePattern<GruGradOp> {
  LowerGruGrad(MLIRContext *ctx, int64_t maxBlocks)
      : OpRewritePattern(ctx), maxBlocks(maxBlocks) {}

  /// The operands a step of the backward loop reads: the layer's (or the
  /// rows') sequences and initial state, and the recurrent weight.
  struct Operands {
    Value yGrad, w, h0, proj, y, gates, zeros;
  };

  /// Iteration `i`: the gradients of step `t`'s pre-activations into its
  /// slices of `dProj` and `dGates`, then dh_{t-1}. `state` is (dProj,
  /// dGates, dh). Each gradient column block of the step is one generic
  /// (see LowerLstmGrad::cell); the first step reads h0 and adds no y
  /// gradient to dh0.
  static SmallVector<Value> step(const Sequence &s, const Operands &x, Value i,
                                 ValueRange state) {
    OpBuilder &b = s.b;
    Location loc = s.loc;
    int64_t h = s.hidden;
    auto [t, first, prev] = s.backwardStep(i);
    Value hPrev =
        arith::SelectOp::create(b, loc, first, x.h0, s.step(x.y, prev));
    Value dProj = state[0], dGates = state[1], dh = state[2];
    SmallVector<Value> inputs = gruInputs(s, x.proj, x.gates, t);
    inputs.append({dh, hPrev});
    // Which gradient a block holds: 0 dr, 1 dz, 2 dn (the projection's),
    // 3 dn r (the recurrent n's).
    auto block = [&](Value seq, int64_t col, int which) {
      Value r =
          s.cellLoop(
               inputs, {s.slice(seq, t, col * h, h)},
               [&](OpBuilder &b, Location loc,
                   ValueRange e) -> SmallVector<Value> {
                 GruGates gg(b, loc, e);
                 Value dh = e[6], hp = e[7];
                 Value one = floatConst(b, loc, dh.getType(), 1.0);
                 Value dn = mul(
                     b, loc,
                     mul(b, loc, dh, arith::SubFOp::create(b, loc, one, gg.z)),
                     oneMinusSquare(b, loc, gg.n));
                 if (which == 0)
                   return {mul(b, loc, mul(b, loc, dn, e[5]),
                               sigmoidSlope(b, loc, gg.r))};
                 if (which == 1)
                   return {mul(
                       b, loc,
                       mul(b, loc, dh, arith::SubFOp::create(b, loc, hp, gg.n)),
                       sigmoidSlope(b, loc, gg.z))};
                 return {which == 2 ? dn : mul(b, loc, dn, gg.r)};
               })
              .front();
      return s.insert(r, seq, t, col * h);
    };
    dProj = block(dProj, 0, 0);
    dProj = block(dProj, 1, 1);
    dProj = block(dProj, 2, 2);
    dGates = block(dGates, 0, 0);
    dGates = block(dGates, 1, 1);
    dGates = block(dGates, 2, 3);
    // dh_{t-1} = y_grad[t-1] + dh z + dGates_t W_hh.
    Value dyPrev =
        arith::SelectOp::create(b, loc, first, x.zeros, s.step(x.yGrad, prev));
    SmallVector<Value> zIn{inputs[2], inputs[3], dyPrev};
    dh = s.cellLoop(zIn, {dh},
                    [](OpBuilder &b, Location loc,
                       ValueRange e) -> SmallVector<Value> {
                      Value z = sigmoid(b, loc, add(b, loc, e[0], e[1]));
                      return {add(b, loc, e[2], mul(b, loc, e[3], z))};
                    })
             .front();
    dh = s.matmulInto(s.step(dGates, t), x.w, dh);
    return {dProj, dGates, dh};
  }

  LogicalResult matchAndRewrite(GruGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Sequence whole(b, loc, tensorTy(op.getGates()), op.getReverse(), 3);
    auto stateTy = whole.type({whole.batch, whole.hidden});
    Value last = whole.index(whole.lastStep());
    Value zeros = filledTensor(b, loc, stateTy, 0.0);
    SmallVector<Value> state{
        whole.buffer(tensorTy(op.getProjectionGrad())),
        whole.buffer(tensorTy(op.getGatesGrad())),
        whole.copy(whole.step(op.getYGrad(), last), whole.buffer(stateTy))};
    // Last step to first.
    auto rows = [&](function_ref<Value(Value)> rowsOf, ValueRange init) {
      Sequence s(b, loc, tensorTy(init[1]), op.getReverse(), 3);
      Operands x{rowsOf(op.getYGrad()),
                 op.getRecurrentWeight(),
                 rowsOf(op.getInitialH()),
                 rowsOf(op.getProjection()),
                 rowsOf(op.getY()),
                 rowsOf(op.getGates()),
                 rowsOf(zeros)};
      return s.loop(0, s.steps, init,
                    [&](Value i, ValueRange st) { return step(s, x, i, st); });
    };
    state = RowBlocks(whole.batch, maxBlocks).run(b, loc, state, rows);
    b.replaceOp(op, {state[0], state[1], state[2]});
    return success();
  }

  int64_t maxBlocks;
};

} // namespace

void mlir::dlc::lowering::populateRecurrentLoweringPatterns(
    RewritePatternSet &patterns, int64_t maxRowBlocks) {
  patterns.add<LowerLstm, LowerLstmGrad, LowerGru, LowerGruGrad>(
      patterns.getContext(), maxRowBlocks);
}
