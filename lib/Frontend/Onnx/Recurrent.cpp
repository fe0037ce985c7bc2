//===- Recurrent.cpp - LSTM, GRU and RNN ----------------------------------===//
//
// ONNX's LSTM, GRU and RNN. One dlc.linear projects the inputs of every step
// at once; an LSTM direction is then one dlc.lstm and a GRU direction with
// linear_before_reset (PyTorch's) one dlc.gru (their gate rows reordered to
// PyTorch's), which lower to a loop over the steps and have their own
// backpropagation through time. RNN and ONNX's other GRU are unrolled over
// their sequence, which dlc knows when it compiles: each step is one
// dlc.linear of the previous hidden state and the cell's elementwise
// update, and training differentiates the unrolled steps. Either way the
// values each step keeps for the backward pass are in the memory plan like
// any other.
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

/// Unrolls one LSTM, GRU or RNN node: checks its attributes and inputs,
/// builds the steps of each direction and defines the node's outputs.
class OnnxImporter::RecurrentUnroller {
public:
  RecurrentUnroller(OnnxImporter &im, const onnx::NodeProto &node)
      : im(im), builder(im.builder), node(node), loc(im.nodeLoc(node)),
        lstm(node.op_type() == "LSTM"), plain(node.op_type() == "RNN"),
        numGates(lstm    ? 4
                 : plain ? 1
                         : 3) {}

  LogicalResult unroll();

private:
  /// The attributes: layout, hidden_size, direction, the activations and
  /// the features dlc does not support.
  LogicalResult readAttributes();
  /// The input as a [T, B, I] sequence, and sequence_lens.
  LogicalResult readSequence();
  /// W, R, B, initial_h and initial_c, with their shapes checked.
  LogicalResult readWeights();
  FailureOr<Value> expectShape(int i, ArrayRef<int64_t> shape, StringRef what);
  /// Whether input `i` (an initial state) is a float initializer of zeros
  /// that nothing has made a parameter yet: the zero state PyTorch starts
  /// from when no state is given, which the dynamo exporter writes as a
  /// constant-folded initializer. It is left out, not trained.
  bool zeroStateConstant(int i);
  /// Unrolls direction `d` over the steps of `flatSeq` ([T * B, I]) and
  /// appends its Y, Y_h and Y_c.
  LogicalResult unrollDirection(int64_t d, Value flatSeq);
  /// Direction `d` of an LSTM: its input projection, then one dlc.lstm.
  LogicalResult lstmDirection(int64_t d, Value flatSeq);
  /// Direction `d` of a GRU with linear_before_reset (PyTorch's): its input
  /// projection, then one dlc.gru.
  LogicalResult gruDirection(int64_t d, Value flatSeq);
  /// One step of each cell from `xt`, the step's input projection, and the
  /// recurrent weights `rd` and bias `rb` of the direction: updates the
  /// hidden state `hv` (and an LSTM's cell state `cv`).
  LogicalResult rnnStep(Value xt, Value rd, Value rb, Value &hv);
  LogicalResult lstmStep(Value xt, Value rd, Value rb, Value &hv, Value &cv);
  /// A GRU step; without linear_before_reset, R and its bias come split
  /// into the z/r rows (`rZr`, `rbZr`) and the h rows (`rH`, `rbH`).
  LogicalResult gruStep(Value xt, Value rd, Value rb, Value rZr, Value rbZr,
                        Value rH, Value rbH, Value &hv);
  /// Y, Y_h and Y_c of every direction joined, in the node's layout.
  void defineOutputs();

  RankedTensorType rowsTy(int64_t rows, int64_t cols) {
    return RankedTensorType::get({rows, cols}, et);
  }
  FailureOr<Value> bin(StringRef op, Value a, Value c) {
    return im.binary(node, op, a, c);
  }
  // One direction's slice of a [D, ...] tensor, without the D.
  FailureOr<Value> perDirection(Value v, int64_t d, ArrayRef<int64_t> shape) {
    return im.reshape(node, im.sliceAlong(loc, v, 0, d, 1, 1), shape);
  }
  Value cols(Value v, int64_t start, int64_t size) {
    return im.sliceAlong(loc, v, im.typeOf(v).getRank() - 1, start, size, 1);
  }
  Value linear(Value in, Value weight, Value bias) {
    auto it = im.typeOf(in), wt = im.typeOf(weight);
    return ddlc::LinearOp::create(builder, loc,
                                  rowsTy(it.getDimSize(0), wt.getDimSize(0)),
                                  in, weight, bias);
  }
  Value sigmoid(Value v) { return ddlc::SigmoidOp::create(builder, loc, v); }
  Value tanh(Value v) { return ddlc::TanhOp::create(builder, loc, v); }
  Value join(ArrayRef<Value> parts, int64_t axis) {
    if (parts.size() == 1)
      return parts[0];
    SmallVector<int64_t> shape(im.typeOf(parts[0]).getShape());
    shape[axis] = 0;
    for (Value p : parts)
      shape[axis] += im.typeOf(p).getDimSize(axis);
    return ddlc::ConcatOp::create(
        builder, loc, RankedTensorType::get(shape, et), parts, axis);
  }

  OnnxImporter &im;
  OpBuilder &builder;
  const onnx::NodeProto &node;
  Location loc;
  const bool lstm, plain;
  const int64_t numGates;
  // Attributes.
  int64_t layout = 0, hidden = 0, numDir = 1;
  std::string direction;
  bool relu = false, linearBeforeReset = false;
  // The input, [T, B, I] in `seq`.
  Value x, seq;
  Type et;
  int64_t steps = 0, batch = 0, inputSize = 0;
  // The weights, biases and initial states of every direction.
  Value w, r, b, h0, c0;
  // Y, Y_h and Y_c of each direction.
  SmallVector<Value> ys, yhs, ycs;
  // Whether the input holds the overridden batch where the layer reads it
  // (OnnxImporter::batchOverridden): then so do the outputs.
  bool xHoldsBatch = false;
};

LogicalResult OnnxImporter::importRecurrent(const onnx::NodeProto &node) {
  return RecurrentUnroller(*this, node).unroll();
}

LogicalResult OnnxImporter::RecurrentUnroller::unroll() {
  auto input = im.tensor(node, 0);
  if (failed(input))
    return failure();
  x = *input;
  auto tx = im.typeOf(x);
  if (tx.getRank() != 3)
    return im.nodeError(node, "needs a rank-3 input, got rank " +
                                  Twine(tx.getRank()));
  if (failed(readAttributes()) || failed(readSequence()) ||
      failed(readWeights()))
    return failure();
  auto flatSeq = im.reshape(node, seq, {steps * batch, inputSize});
  if (failed(flatSeq))
    return failure();
  for (int64_t d = 0; d < numDir; ++d)
    if (failed(unrollDirection(d, *flatSeq)))
      return failure();
  defineOutputs();
  return success();
}

LogicalResult OnnxImporter::RecurrentUnroller::readAttributes() {
  linearBeforeReset =
      !lstm && !plain && im.intAttr(node, "linear_before_reset", 0);
  layout = im.intAttr(node, "layout", 0);
  if (layout != 0 && layout != 1)
    return im.nodeError(node, "layout must be 0 or 1");
  hidden = im.intAttr(node, "hidden_size", 0);
  if (hidden < 1 || hidden > (int64_t(1) << 24))
    return im.nodeError(node, "needs a positive hidden_size");
  direction = im.stringAttr(node, "direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return im.nodeError(node, "direction '" + direction + "' is unknown");
  numDir = direction == "bidirectional" ? 2 : 1;
  // RNN: tanh (the default) or relu (nn.RNN(nonlinearity='relu')), one
  // for every direction.
  if (const auto *a = im.attr(node, "activations"); a && plain) {
    std::vector<std::string> acts(a->strings().begin(), a->strings().end());
    relu = !acts.empty() && StringRef(acts[0]).equals_insensitive("Relu");
    bool ok = int64_t(acts.size()) == numDir;
    for (const std::string &act : acts)
      ok = ok && StringRef(act).equals_insensitive(relu ? "Relu" : "Tanh");
    if (!ok)
      return im.nodeError(node, "RNN activations must be Tanh or Relu, the "
                                "same for every direction");
  } else if (a) {
    std::vector<std::string> acts(a->strings().begin(), a->strings().end());
    if (!defaultActivations(acts, lstm, numDir)) {
      auto d = im.nodeError(node, "only the default activations are supported");
      d.attachNote() << "hint: PyTorch's nn.LSTM and nn.GRU export them";
      return d;
    }
  }
  if (im.attr(node, "clip"))
    return im.nodeError(node, "'clip' is not supported");
  if (lstm && im.intAttr(node, "input_forget", 0))
    return im.nodeError(node, "input_forget = 1 is not supported");
  if (lstm && im.hasInput(node, 7))
    return im.nodeError(node, "peephole weights (input P) are not supported");
  return success();
}

LogicalResult OnnxImporter::RecurrentUnroller::readSequence() {
  // [T, B, I] (layout 0) or [B, T, I] (layout 1).
  auto tx = im.typeOf(x);
  et = tx.getElementType();
  seq = x;
  if (layout == 1)
    seq = ddlc::TransposeOp::create(
        builder, loc,
        RankedTensorType::get(
            {tx.getDimSize(1), tx.getDimSize(0), tx.getDimSize(2)}, et),
        x, ArrayRef<int64_t>{1, 0, 2});
  auto ts = im.typeOf(seq);
  steps = ts.getDimSize(0);
  batch = ts.getDimSize(1);
  inputSize = ts.getDimSize(2);
  // --batch, and a data-parallel rank's share of the batch, set dimension 0
  // of the graph's inputs: with layout 0 that is this layer's time axis
  // (PyTorch's batch_first=False), which would be cut, not the batch.
  auto carried = im.batchOverridden.find(node.input(0));
  if (carried != im.batchOverridden.end() &&
      carried->second.dim == (layout == 0 ? 1 : 0) && carried->second.alone()) {
    // The batch where the layer reads it: so are its outputs' batches.
    xHoldsBatch = true;
  } else if (layout == 0 && carried != im.batchOverridden.end() &&
             carried->second.dim == 0) {
    auto d = im.nodeError(node, "reads dimension 0 of its input as the "
                                "sequence (layout 0: [steps, batch, "
                                "features]), but --batch or data-parallel "
                                "training set it as the batch (" +
                                    Twine(steps) + ")");
    d.attachNote() << "hint: give the input's shape with --input-shape "
                      "NAME=STEPS,BATCH,FEATURES, and export batch-first "
                      "(batch_first=True) to train data-parallel: dlc splits "
                      "dimension 0 of every input over the ranks";
    return d;
  }
  // Only RNNs and ONNX's other GRU are unrolled.
  if ((plain || (!lstm && !linearBeforeReset)) && steps > 4096)
    return im.nodeError(node, "a sequence of " + Twine(steps) +
                                  " steps is longer than dlc unrolls (4096)");
  if (im.hasInput(node, 4)) {
    // sequence_lens: only a constant that keeps every sequence whole.
    Item *item = im.lookup(node, 4);
    bool full = item && item->constant && !item->constant->isFloat &&
                item->constant->numel() == batch &&
                llvm::all_of(item->constant->ints,
                             [&](int64_t n) { return n == steps; });
    if (!full) {
      auto d = im.nodeError(node, "sequence_lens must be a constant of " +
                                      Twine(steps) + " for every sequence");
      d.attachNote() << "hint: dlc compiles whole sequences; pad them to one "
                        "length and export without pack_padded_sequence";
      return d;
    }
  }
  return success();
}

FailureOr<Value>
OnnxImporter::RecurrentUnroller::expectShape(int i, ArrayRef<int64_t> shape,
                                             StringRef what) {
  auto v = im.tensor(node, i);
  if (failed(v))
    return failure();
  if (im.typeOf(*v).getShape() != shape) {
    std::string s;
    for (int64_t d : shape)
      s += (s.empty() ? "" : "x") + std::to_string(d);
    im.nodeError(node, what + " must be " + s);
    return failure();
  }
  if (im.typeOf(*v).getElementType() != et) {
    im.nodeError(node, what + " must have the input's element type");
    return failure();
  }
  return *v;
}

bool OnnxImporter::RecurrentUnroller::zeroStateConstant(int i) {
  Item *item = im.lookup(node, i);
  if (!item || item->value || !item->constant)
    return false;
  const Constant &c = *item->constant;
  return c.isFloat && !c.external && !c.initializer.empty() &&
         llvm::all_of(c.floats, [](double v) { return v == 0.0; });
}

LogicalResult OnnxImporter::RecurrentUnroller::readWeights() {
  int64_t gh = numGates * hidden;
  auto wv = expectShape(1, {numDir, gh, inputSize}, "W");
  if (failed(wv))
    return failure();
  w = *wv;
  auto rv = expectShape(2, {numDir, gh, hidden}, "R");
  if (failed(rv))
    return failure();
  r = *rv;
  if (im.hasInput(node, 3)) {
    auto v = expectShape(3, {numDir, 2 * gh}, "B");
    if (failed(v))
      return failure();
    b = *v;
  }
  if (im.hasInput(node, 5) && !zeroStateConstant(5)) {
    auto v = expectShape(5, {numDir, batch, hidden}, "initial_h");
    if (failed(v))
      return failure();
    h0 = *v;
  }
  if (lstm && im.hasInput(node, 6) && !zeroStateConstant(6)) {
    auto v = expectShape(6, {numDir, batch, hidden}, "initial_c");
    if (failed(v))
      return failure();
    c0 = *v;
  }
  return success();
}

LogicalResult OnnxImporter::RecurrentUnroller::lstmDirection(int64_t d,
                                                             Value flatSeq) {
  int64_t gh = 4 * hidden;
  // ONNX's gate rows i, o, f, c in PyTorch's order i, f, g (= c), o.
  auto reorder = [&](Value v) {
    return join({im.sliceAlong(loc, v, 0, 0, hidden, 1),
                 im.sliceAlong(loc, v, 0, 2 * hidden, 2 * hidden, 1),
                 im.sliceAlong(loc, v, 0, hidden, hidden, 1)},
                0);
  };
  auto wd = perDirection(w, d, {gh, inputSize});
  auto rd = perDirection(r, d, {gh, hidden});
  if (failed(wd) || failed(rd))
    return failure();
  // Both biases add to the gates: one bias for the projection.
  Value bias;
  if (b) {
    auto bd = perDirection(b, d, {2 * gh});
    if (failed(bd))
      return failure();
    auto sum = bin("Add", im.sliceAlong(loc, *bd, 0, 0, gh, 1),
                   im.sliceAlong(loc, *bd, 0, gh, gh, 1));
    if (failed(sum))
      return failure();
    bias = reorder(*sum);
  }
  auto proj =
      im.reshape(node, linear(flatSeq, reorder(*wd), bias), {steps, batch, gh});
  if (failed(proj))
    return failure();
  auto state = [&](Value init) -> FailureOr<Value> {
    if (!init)
      return im.fill(loc, 0.0, {batch, hidden}, et);
    return perDirection(init, d, {batch, hidden});
  };
  auto h = state(h0), c = state(c0);
  if (failed(h) || failed(c))
    return failure();
  bool reverse = direction == "reverse" || d == 1;
  auto seqTy = RankedTensorType::get({steps, batch, hidden}, et);
  auto cell = ddlc::LstmOp::create(builder, loc,
                                   TypeRange{seqTy, seqTy, im.typeOf(*proj)},
                                   *proj, reorder(*rd), *h, *c, reverse);
  // The final states are the last step computed.
  int64_t last = reverse ? 0 : steps - 1;
  auto ys4 = im.reshape(node, cell.getY(), {steps, 1, batch, hidden});
  if (failed(ys4))
    return failure();
  ys.push_back(*ys4);
  yhs.push_back(im.sliceAlong(loc, cell.getY(), 0, last, 1, 1));
  ycs.push_back(im.sliceAlong(loc, cell.getC(), 0, last, 1, 1));
  return success();
}

LogicalResult OnnxImporter::RecurrentUnroller::gruDirection(int64_t d,
                                                            Value flatSeq) {
  int64_t gh = 3 * hidden;
  // ONNX's gate rows z, r, h in PyTorch's order r, z, n (= h).
  auto reorder = [&](Value v) {
    return join({im.sliceAlong(loc, v, 0, hidden, hidden, 1),
                 im.sliceAlong(loc, v, 0, 0, hidden, 1),
                 im.sliceAlong(loc, v, 0, 2 * hidden, hidden, 1)},
                0);
  };
  auto wd = perDirection(w, d, {gh, inputSize});
  auto rd = perDirection(r, d, {gh, hidden});
  if (failed(wd) || failed(rd))
    return failure();
  Value inBias, recBias;
  if (b) {
    auto bd = perDirection(b, d, {2 * gh});
    if (failed(bd))
      return failure();
    inBias = reorder(im.sliceAlong(loc, *bd, 0, 0, gh, 1));
    recBias = reorder(im.sliceAlong(loc, *bd, 0, gh, gh, 1));
  } else {
    recBias = im.fill(loc, 0.0, {gh}, et);
  }
  auto proj = im.reshape(node, linear(flatSeq, reorder(*wd), inBias),
                         {steps, batch, gh});
  if (failed(proj))
    return failure();
  FailureOr<Value> h =
      h0 ? perDirection(h0, d, {batch, hidden})
         : FailureOr<Value>(im.fill(loc, 0.0, {batch, hidden}, et));
  if (failed(h))
    return failure();
  bool reverse = direction == "reverse" || d == 1;
  auto cell = ddlc::GruOp::create(
      builder, loc,
      TypeRange{RankedTensorType::get({steps, batch, hidden}, et),
                im.typeOf(*proj)},
      *proj, reorder(*rd), recBias, *h, reverse);
  auto ys4 = im.reshape(node, cell.getY(), {steps, 1, batch, hidden});
  if (failed(ys4))
    return failure();
  ys.push_back(*ys4);
  yhs.push_back(
      im.sliceAlong(loc, cell.getY(), 0, reverse ? 0 : steps - 1, 1, 1));
  return success();
}

LogicalResult OnnxImporter::RecurrentUnroller::unrollDirection(int64_t d,
                                                               Value flatSeq) {
  if (lstm)
    return lstmDirection(d, flatSeq);
  if (!plain && linearBeforeReset)
    return gruDirection(d, flatSeq);
  int64_t gh = numGates * hidden;
  bool reverse = direction == "reverse" || d == 1;
  auto wd = perDirection(w, d, {gh, inputSize});
  auto rd = perDirection(r, d, {gh, hidden});
  if (failed(wd) || failed(rd))
    return failure();
  Value wb, rb;
  if (b) {
    auto bd = perDirection(b, d, {2 * gh});
    if (failed(bd))
      return failure();
    wb = im.sliceAlong(loc, *bd, 0, 0, gh, 1);
    rb = im.sliceAlong(loc, *bd, 0, gh, gh, 1);
  }
  // Every step's input projection in one GEMM: [T * B, G * H].
  Value proj = linear(flatSeq, *wd, wb);
  auto state = [&](Value init) -> FailureOr<Value> {
    if (!init)
      return im.fill(loc, 0.0, {batch, hidden}, et);
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
    rZr = im.sliceAlong(loc, *rd, 0, 0, 2 * hidden, 1);
    rH = im.sliceAlong(loc, *rd, 0, 2 * hidden, hidden, 1);
    if (rb) {
      rbZr = im.sliceAlong(loc, rb, 0, 0, 2 * hidden, 1);
      rbH = im.sliceAlong(loc, rb, 0, 2 * hidden, hidden, 1);
    }
  }
  SmallVector<Value> outs(steps);
  for (int64_t i = 0; i < steps; ++i) {
    int64_t t = reverse ? steps - 1 - i : i;
    Value xt = im.sliceAlong(loc, proj, 0, t * batch, batch, 1);
    LogicalResult stepped = plain ? rnnStep(xt, *rd, rb, hv)
                            : lstm
                                ? lstmStep(xt, *rd, rb, hv, cv)
                                : gruStep(xt, *rd, rb, rZr, rbZr, rH, rbH, hv);
    if (failed(stepped))
      return failure();
    auto step = im.reshape(node, hv, {1, 1, batch, hidden});
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
  auto yh = im.reshape(node, hv, {1, batch, hidden});
  if (failed(yh))
    return failure();
  yhs.push_back(*yh);
  if (lstm) {
    auto yc = im.reshape(node, cv, {1, batch, hidden});
    if (failed(yc))
      return failure();
    ycs.push_back(*yc);
  }
  return success();
}

LogicalResult OnnxImporter::RecurrentUnroller::rnnStep(Value xt, Value rd,
                                                       Value rb, Value &hv) {
  auto pre = bin("Add", xt, linear(hv, rd, rb));
  if (failed(pre))
    return failure();
  hv = relu ? ddlc::ReluOp::create(builder, loc, *pre).getResult() : tanh(*pre);
  return success();
}

LogicalResult OnnxImporter::RecurrentUnroller::lstmStep(Value xt, Value rd,
                                                        Value rb, Value &hv,
                                                        Value &cv) {
  // Gates in ONNX's order i, o, f, c.
  auto g = bin("Add", xt, linear(hv, rd, rb));
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
  return success();
}

LogicalResult OnnxImporter::RecurrentUnroller::gruStep(Value xt, Value rd,
                                                       Value rb, Value rZr,
                                                       Value rbZr, Value rH,
                                                       Value rbH, Value &hv) {
  // Gates in ONNX's order z, r, h.
  // The recurrent GEMM: every gate's rows of R with linear_before_reset,
  // else only z's and r's (h's comes after the reset gate).
  Value rec = linearBeforeReset ? linear(hv, rd, rb) : linear(hv, rZr, rbZr);
  auto zs = bin("Add", cols(xt, 0, hidden), cols(rec, 0, hidden));
  auto rs = bin("Add", cols(xt, hidden, hidden), cols(rec, hidden, hidden));
  if (failed(zs) || failed(rs))
    return failure();
  Value z = sigmoid(*zs), rg = sigmoid(*rs);
  // linear_before_reset: r (h R_h + Rb_h); else (r h) R_h + Rb_h.
  auto gated =
      bin("Mul", rg, linearBeforeReset ? cols(rec, 2 * hidden, hidden) : hv);
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
  return success();
}

void OnnxImporter::RecurrentUnroller::defineOutputs() {
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
    if (!node.output(i).empty() && results[i]) {
      im.define(node, i, results[i]);
      if (xHoldsBatch)
        im.batchOverridden[node.output(i)] =
            BatchDim{layout == 1 ? 0 : (i == 0 ? 2 : 1)};
    }
}

} // namespace dlc::onnx_import
