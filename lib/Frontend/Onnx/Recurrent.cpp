//===- Recurrent.cpp - LSTM and GRU
//------------------------------------------===//
//
// ONNX's LSTM, GRU and RNN, unrolled over their sequence, which dlc knows when
// it compiles: one dlc.linear projects the inputs of every step at once, then
// each step is one dlc.linear of the previous hidden state and the cell's
// elementwise update. Training differentiates the unrolled steps
// (backpropagation through time), and the values each step keeps for the
// backward pass are in the memory plan like any other.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace dlc::onnx_import {

namespace {

/// The default activations of each LSTM or GRU cell, per direction.
bool defaultActivations(ArrayRef<std::string> acts, bool lstm,
                        int64_t numDirections) {
  SmallVector<StringRef> expected;
  for (int64_t d = 0; d < numDirections; ++d) {
    expected.push_back("Sigmoid");
    expected.push_back("Tanh");
    if (lstm)
      expected.push_back("Tanh");
  }
  if (acts.size() != expected.size())
    return false;
  for (auto [a, e] : llvm::zip(acts, expected))
    if (!StringRef(a).equals_insensitive(e))
      return false;
  return true;
}

} // namespace

LogicalResult OnnxImporter::importRecurrent(const onnx::NodeProto &node) {
  bool lstm = node.op_type() == "LSTM";
  bool plain = node.op_type() == "RNN";
  int64_t numGates = lstm ? 4 : plain ? 1 : 3;
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto tx = typeOf(*x);
  if (tx.getRank() != 3)
    return nodeError(node,
                     "needs a rank-3 input, got rank " + Twine(tx.getRank()));
  int64_t layout = intAttr(node, "layout", 0);
  if (layout != 0 && layout != 1)
    return nodeError(node, "layout must be 0 or 1");
  int64_t hidden = intAttr(node, "hidden_size", 0);
  if (hidden < 1 || hidden > (int64_t(1) << 24))
    return nodeError(node, "needs a positive hidden_size");
  std::string direction = stringAttr(node, "direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return nodeError(node, "direction '" + direction + "' is unknown");
  int64_t numDir = direction == "bidirectional" ? 2 : 1;
  // RNN: tanh (the default) or relu (nn.RNN(nonlinearity='relu')), one
  // for every direction.
  bool relu = false;
  if (const auto *a = attr(node, "activations"); a && plain) {
    std::vector<std::string> acts(a->strings().begin(), a->strings().end());
    relu = !acts.empty() && StringRef(acts[0]).equals_insensitive("Relu");
    bool ok = int64_t(acts.size()) == numDir;
    for (const std::string &act : acts)
      ok = ok && StringRef(act).equals_insensitive(relu ? "Relu" : "Tanh");
    if (!ok)
      return nodeError(node, "RNN activations must be Tanh or Relu, the "
                             "same for every direction");
  } else if (a) {
    std::vector<std::string> acts(a->strings().begin(), a->strings().end());
    if (!defaultActivations(acts, lstm, numDir)) {
      auto d = nodeError(node, "only the default activations are supported");
      d.attachNote() << "hint: PyTorch's nn.LSTM and nn.GRU export them";
      return d;
    }
  }
  if (attr(node, "clip"))
    return nodeError(node, "'clip' is not supported");
  if (lstm && intAttr(node, "input_forget", 0))
    return nodeError(node, "input_forget = 1 is not supported");
  if (lstm && hasInput(node, 7))
    return nodeError(node, "peephole weights (input P) are not supported");

  // [T, B, I] (layout 0) or [B, T, I] (layout 1).
  Location loc = nodeLoc(node);
  Type et = tx.getElementType();
  Value seq = *x;
  if (layout == 1)
    seq = ddlc::TransposeOp::create(
        builder, loc,
        RankedTensorType::get(
            {tx.getDimSize(1), tx.getDimSize(0), tx.getDimSize(2)}, et),
        *x, ArrayRef<int64_t>{1, 0, 2});
  auto ts = typeOf(seq);
  int64_t steps = ts.getDimSize(0), batch = ts.getDimSize(1),
          inputSize = ts.getDimSize(2);
  if (steps > 4096)
    return nodeError(node, "a sequence of " + Twine(steps) +
                               " steps is longer than dlc unrolls (4096)");
  if (hasInput(node, 4)) {
    // sequence_lens: only a constant that keeps every sequence whole.
    Item *item = lookup(node, 4);
    bool full = item && item->constant && !item->constant->isFloat &&
                item->constant->numel() == batch &&
                llvm::all_of(item->constant->ints,
                             [&](int64_t n) { return n == steps; });
    if (!full) {
      auto d = nodeError(node, "sequence_lens must be a constant of " +
                                   Twine(steps) + " for every sequence");
      d.attachNote() << "hint: dlc compiles whole sequences; pad them to one "
                        "length and export without pack_padded_sequence";
      return d;
    }
  }

  int64_t gh = numGates * hidden;
  auto expectShape = [&](int i, ArrayRef<int64_t> shape,
                         StringRef what) -> FailureOr<Value> {
    auto v = tensor(node, i);
    if (failed(v))
      return failure();
    if (typeOf(*v).getShape() != shape) {
      std::string s;
      for (int64_t d : shape)
        s += (s.empty() ? "" : "x") + std::to_string(d);
      nodeError(node, what + " must be " + s);
      return failure();
    }
    if (typeOf(*v).getElementType() != et) {
      nodeError(node, what + " must have the input's element type");
      return failure();
    }
    return *v;
  };
  auto w = expectShape(1, {numDir, gh, inputSize}, "W");
  if (failed(w))
    return failure();
  auto r = expectShape(2, {numDir, gh, hidden}, "R");
  if (failed(r))
    return failure();
  Value b, h0, c0;
  if (hasInput(node, 3)) {
    auto v = expectShape(3, {numDir, 2 * gh}, "B");
    if (failed(v))
      return failure();
    b = *v;
  }
  if (hasInput(node, 5)) {
    auto v = expectShape(5, {numDir, batch, hidden}, "initial_h");
    if (failed(v))
      return failure();
    h0 = *v;
  }
  if (lstm && hasInput(node, 6)) {
    auto v = expectShape(6, {numDir, batch, hidden}, "initial_c");
    if (failed(v))
      return failure();
    c0 = *v;
  }
  bool linearBeforeReset =
      !lstm && !plain && intAttr(node, "linear_before_reset", 0);

  auto rowsTy = [&](int64_t rows, int64_t cols) {
    return RankedTensorType::get({rows, cols}, et);
  };
  auto bin = [&](StringRef op, Value a, Value c) -> FailureOr<Value> {
    return binary(node, op, a, c);
  };
  // One direction's slice of a [D, ...] tensor, without the D.
  auto perDirection = [&](Value v, int64_t d,
                          ArrayRef<int64_t> shape) -> FailureOr<Value> {
    return reshape(node, sliceAlong(loc, v, 0, d, 1, 1), shape);
  };
  auto cols = [&](Value v, int64_t start, int64_t size) {
    return sliceAlong(loc, v, typeOf(v).getRank() - 1, start, size, 1);
  };
  auto linear = [&](Value in, Value weight, Value bias) -> Value {
    auto it = typeOf(in), wt = typeOf(weight);
    return ddlc::LinearOp::create(builder, loc,
                                  rowsTy(it.getDimSize(0), wt.getDimSize(0)),
                                  in, weight, bias);
  };
  auto sigmoid = [&](Value v) -> Value {
    return ddlc::SigmoidOp::create(builder, loc, v);
  };
  auto tanh = [&](Value v) -> Value {
    return ddlc::TanhOp::create(builder, loc, v);
  };

  auto flatSeq = reshape(node, seq, {steps * batch, inputSize});
  if (failed(flatSeq))
    return failure();
  SmallVector<Value> ys, yhs, ycs;
  for (int64_t d = 0; d < numDir; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    auto wd = perDirection(*w, d, {gh, inputSize});
    auto rd = perDirection(*r, d, {gh, hidden});
    if (failed(wd) || failed(rd))
      return failure();
    Value wb, rb;
    if (b) {
      auto bd = perDirection(b, d, {2 * gh});
      if (failed(bd))
        return failure();
      wb = sliceAlong(loc, *bd, 0, 0, gh, 1);
      rb = sliceAlong(loc, *bd, 0, gh, gh, 1);
    }
    // Every step's input projection in one GEMM: [T * B, G * H].
    Value proj = linear(*flatSeq, *wd, wb);
    auto state = [&](Value init) -> FailureOr<Value> {
      if (!init)
        return fill(loc, 0.0, {batch, hidden}, et);
      return perDirection(init, d, {batch, hidden});
    };
    auto h = state(h0);
    if (failed(h))
      return failure();
    Value hv = *h, cv;
    if (lstm) {
      auto c = state(c0);
      if (failed(c))
        return failure();
      cv = *c;
    }
    // GRU without linear_before_reset applies the reset gate before the
    // candidate's recurrent GEMM: split R into the z/r and h parts.
    Value rZr, rH, rbZr, rbH;
    if (!lstm && !plain && !linearBeforeReset) {
      rZr = sliceAlong(loc, *rd, 0, 0, 2 * hidden, 1);
      rH = sliceAlong(loc, *rd, 0, 2 * hidden, hidden, 1);
      if (rb) {
        rbZr = sliceAlong(loc, rb, 0, 0, 2 * hidden, 1);
        rbH = sliceAlong(loc, rb, 0, 2 * hidden, hidden, 1);
      }
    }
    SmallVector<Value> outs(steps);
    for (int64_t i = 0; i < steps; ++i) {
      int64_t t = reverse ? steps - 1 - i : i;
      Value xt = sliceAlong(loc, proj, 0, t * batch, batch, 1);
      if (plain) {
        auto pre = bin("Add", xt, linear(hv, *rd, rb));
        if (failed(pre))
          return failure();
        hv = relu ? ddlc::ReluOp::create(builder, loc, *pre).getResult()
                  : tanh(*pre);
      } else if (lstm) {
        // Gates in ONNX's order i, o, f, c.
        auto g = bin("Add", xt, linear(hv, *rd, rb));
        if (failed(g))
          return failure();
        Value in = sigmoid(cols(*g, 0, hidden));
        Value out = sigmoid(cols(*g, hidden, hidden));
        Value forget = sigmoid(cols(*g, 2 * hidden, hidden));
        Value cand = tanh(cols(*g, 3 * hidden, hidden));
        auto kept = bin("Mul", forget, cv);
        auto added = bin("Mul", in, cand);
        if (failed(kept) || failed(added))
          return failure();
        auto c = bin("Add", *kept, *added);
        if (failed(c))
          return failure();
        cv = *c;
        auto hn = bin("Mul", out, tanh(cv));
        if (failed(hn))
          return failure();
        hv = *hn;
      } else {
        // Gates in ONNX's order z, r, h.
        // The recurrent GEMM: every gate's rows of R with linear_before_reset,
        // else only z's and r's (h's comes after the reset gate).
        Value rec =
            linearBeforeReset ? linear(hv, *rd, rb) : linear(hv, rZr, rbZr);
        auto zs = bin("Add", cols(xt, 0, hidden), cols(rec, 0, hidden));
        auto rs =
            bin("Add", cols(xt, hidden, hidden), cols(rec, hidden, hidden));
        if (failed(zs) || failed(rs))
          return failure();
        Value z = sigmoid(*zs), rg = sigmoid(*rs);
        // linear_before_reset: r (h R_h + Rb_h); else (r h) R_h + Rb_h.
        auto gated = bin(
            "Mul", rg, linearBeforeReset ? cols(rec, 2 * hidden, hidden) : hv);
        if (failed(gated))
          return failure();
        Value recH = linearBeforeReset ? *gated : linear(*gated, rH, rbH);
        auto n = bin("Add", cols(xt, 2 * hidden, hidden), recH);
        if (failed(n))
          return failure();
        Value cand = tanh(*n);
        // h' = (1 - z) n + z h, as PyTorch computes it: (h - n) z + n.
        auto diff = bin("Sub", hv, cand);
        if (failed(diff))
          return failure();
        auto scaled = bin("Mul", *diff, z);
        if (failed(scaled))
          return failure();
        auto hn = bin("Add", *scaled, cand);
        if (failed(hn))
          return failure();
        hv = *hn;
      }
      auto step = reshape(node, hv, {1, 1, batch, hidden});
      if (failed(step))
        return failure();
      outs[t] = *step;
    }
    ys.push_back(steps == 1
                     ? outs[0]
                     : ddlc::ConcatOp::create(
                           builder, loc,
                           RankedTensorType::get({steps, 1, batch, hidden}, et),
                           outs, 0)
                           .getResult());
    auto yh = reshape(node, hv, {1, batch, hidden});
    if (failed(yh))
      return failure();
    yhs.push_back(*yh);
    if (lstm) {
      auto yc = reshape(node, cv, {1, batch, hidden});
      if (failed(yc))
        return failure();
      ycs.push_back(*yc);
    }
  }
  auto join = [&](ArrayRef<Value> parts, int64_t axis) -> Value {
    if (parts.size() == 1)
      return parts[0];
    SmallVector<int64_t> shape(typeOf(parts[0]).getShape());
    shape[axis] *= int64_t(parts.size());
    return ddlc::ConcatOp::create(
        builder, loc, RankedTensorType::get(shape, et), parts, axis);
  };
  // Y: [T, D, B, H], or [B, T, D, H] with layout 1; Y_h, Y_c: [D, B, H],
  // or [B, D, H].
  Value y = join(ys, 1);
  Value yh = join(yhs, 0);
  Value yc = lstm ? join(ycs, 0) : Value();
  if (layout == 1) {
    y = ddlc::TransposeOp::create(
        builder, loc, RankedTensorType::get({batch, steps, numDir, hidden}, et),
        y, ArrayRef<int64_t>{2, 0, 1, 3});
    auto swap = [&](Value v) -> Value {
      return ddlc::TransposeOp::create(
          builder, loc, RankedTensorType::get({batch, numDir, hidden}, et), v,
          ArrayRef<int64_t>{1, 0, 2});
    };
    yh = swap(yh);
    if (yc)
      yc = swap(yc);
  }
  Value results[] = {y, yh, yc};
  for (int i = 0; i < node.output_size() && i < 3; ++i)
    if (!node.output(i).empty() && results[i])
      define(node, i, results[i]);
  return success();
}

} // namespace dlc::onnx_import
