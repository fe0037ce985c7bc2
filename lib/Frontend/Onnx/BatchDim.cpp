//===- BatchDim.cpp - Following the overridden batch through a graph ------===//
//
// `--batch` (and a data-parallel rank's share of the batch) changes
// dimension 0 of every graph input. An export with static shapes (PyTorch
// 2.x's dynamo exporter, by default) also writes the exported batch into
// the constant targets of its Reshape and Expand nodes (`x.view(B, -1)`,
// `cls_token.expand(B, -1, -1)`). The importer follows where each value
// holds the batch (BatchDim: its dimension, and what a reshape merged into
// that dimension around it) through the ops that keep it, and gives those
// targets the new batch where every batch's elements keep their places.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/Support/MathExtras.h"

namespace dlc::onnx_import {

namespace {

/// Axis `a` of a rank-`rank` tensor, normalized; -1 when out of range.
int64_t norm(int64_t a, int64_t rank) {
  if (a < 0)
    a += rank;
  return a >= 0 && a < rank ? a : -1;
}

bool contains(ArrayRef<int64_t> axes, int64_t rank, int64_t dim) {
  return llvm::any_of(axes, [&](int64_t a) { return norm(a, rank) == dim; });
}

/// How many of `axes` (normalized to `rank`) are below `dim`.
int64_t countBelow(ArrayRef<int64_t> axes, int64_t rank, int64_t dim) {
  return llvm::count_if(axes, [&](int64_t a) {
    int64_t n = norm(a, rank);
    return n >= 0 && n < dim;
  });
}

} // namespace

void OnnxImporter::traceBatchDim(const onnx::NodeProto &node) {
  if (batchOverridden.empty() || node.output_size() == 0)
    return;
  auto batchOf = [&](int i) -> std::optional<BatchDim> {
    if (i >= node.input_size())
      return std::nullopt;
    auto it = batchOverridden.find(node.input(i));
    if (it == batchOverridden.end())
      return std::nullopt;
    return it->second;
  };
  auto shapeOf =
      [&](const std::string &name) -> std::optional<ArrayRef<int64_t>> {
    auto it = items.find(name);
    if (it == items.end())
      return std::nullopt;
    if (!it->second.value)
      return it->second.constant
                 ? std::optional<ArrayRef<int64_t>>(it->second.constant->shape)
                 : std::nullopt;
    auto type = dyn_cast<RankedTensorType>(it->second.value.getType());
    if (!type)
      return std::nullopt;
    return type.getShape();
  };
  // Input `i`'s rank; -1 when it is absent or not known.
  auto rankOf = [&](int i) -> int64_t {
    if (i >= node.input_size())
      return -1;
    auto shape = shapeOf(node.input(i));
    return shape ? int64_t(shape->size()) : -1;
  };
  auto outRankOf = [&]() -> int64_t {
    auto shape = shapeOf(node.output(0));
    return shape ? int64_t(shape->size()) : -1;
  };
  // Constant axes: an input (Slice's 4th, the 2nd of Squeeze, Unsqueeze
  // and the reductions from opset 13 or 18) or the `axes` attribute.
  auto axesOf = [&](int input) -> std::optional<SmallVector<int64_t>> {
    if (input < node.input_size() && !node.input(input).empty()) {
      Item *item = lookup(node, input);
      if (!item || !item->constant || item->constant->isFloat)
        return std::nullopt;
      return SmallVector<int64_t>(item->constant->ints.begin(),
                                  item->constant->ints.end());
    }
    for (const auto &a : node.attribute())
      if (a.name() == "axes")
        return intsAttr(node, "axes");
    return std::nullopt;
  };
  StringRef op = node.op_type();
  int64_t outRank = outRankOf();
  int64_t inRank = rankOf(0);
  std::optional<BatchDim> in = batchOf(0), out;
  if (op == "Gather") {
    // The indices' dimensions replace the gathered axis.
    int64_t axis = norm(intAttr(node, "axis", 0), inRank);
    int64_t idxRank = rankOf(1);
    if (auto idx = batchOf(1); idx && axis >= 0)
      out = BatchDim{axis + idx->dim, idx->outer, idx->inner};
    else if (in && axis >= 0 && idxRank >= 0 && in->dim != axis)
      out = BatchDim{in->dim < axis ? in->dim : in->dim + idxRank - 1,
                     in->outer, in->inner};
  } else if (op == "Transpose") {
    SmallVector<int64_t> perm = intsAttr(node, "perm");
    if (perm.empty())
      for (int64_t d = inRank - 1; d >= 0; --d)
        perm.push_back(d);
    if (in)
      for (auto [i, p] : llvm::enumerate(perm))
        if (p == in->dim)
          out = BatchDim{int64_t(i), in->outer, in->inner};
  } else if (llvm::is_contained(
                 {"Cast",      "Identity", "Dropout", "Relu",     "LeakyRelu",
                  "Tanh",      "Sigmoid",  "Gelu",    "Erf",      "Neg",
                  "Abs",       "Exp",      "Log",     "Sqrt",     "Reciprocal",
                  "Clip",      "Elu",      "Selu",    "Softplus", "HardSigmoid",
                  "HardSwish", "Mish",     "PRelu"},
                 op)) {
    out = in;
  } else if (llvm::is_contained(
                 {"Softmax", "LogSoftmax", "Hardmax", "LayerNormalization"},
                 op)) {
    // Normalized along their axis, which is not the batch.
    int64_t axis = norm(intAttr(node, "axis", -1), inRank);
    if (in && in->dim != axis && (op != "LayerNormalization" || in->dim < axis))
      out = in;
  } else if (llvm::is_contained({"BatchNormalization", "InstanceNormalization",
                                 "GroupNormalization", "LRN", "Conv",
                                 "ConvTranspose", "MaxPool", "AveragePool",
                                 "LpPool", "GlobalAveragePool", "GlobalMaxPool",
                                 "Resize", "Upsample", "DepthToSpace",
                                 "SpaceToDepth"},
                                op)) {
    // Images: N stays first.
    if (in && in->dim == 0)
      out = in;
  } else if (op == "Gemm") {
    if (in && in->dim == (intAttr(node, "transA", 0) ? 1 : 0))
      out = BatchDim{0, in->outer, in->inner};
  } else if (op == "MatMul") {
    // A's rows or batch dimensions; B's batch dimensions.
    std::optional<BatchDim> b = batchOf(1);
    int64_t bRank = rankOf(1);
    if (in && inRank >= 2 && in->dim != inRank - 1)
      out = BatchDim{in->dim + outRank - inRank, in->outer, in->inner};
    else if (b && bRank >= 3 && b->dim < bRank - 2)
      out = BatchDim{b->dim + outRank - bRank, b->outer, b->inner};
  } else if (op == "Flatten") {
    auto shape = node.input_size() > 0 ? shapeOf(node.input(0)) : std::nullopt;
    int64_t axis = intAttr(node, "axis", 1);
    if (axis < 0)
      axis += inRank;
    if (in && shape && axis >= 0 && axis <= inRank) {
      // The batch merges with the other dimensions of its side.
      bool first = in->dim < axis;
      BatchDim b{first ? 0 : 1, in->outer, in->inner};
      bool fits = true;
      for (int64_t d = first ? 0 : axis; d < (first ? axis : inRank); ++d)
        if (d != in->dim)
          fits = fits && !llvm::MulOverflow(d < in->dim ? b.outer : b.inner,
                                            (*shape)[d],
                                            d < in->dim ? b.outer : b.inner);
      if (fits)
        out = b;
    }
  } else if (op == "Concat" || op == "Split") {
    int64_t axis = norm(intAttr(node, "axis", 0), inRank);
    for (int i = 0; i < node.input_size() && !out; ++i)
      if (auto b = batchOf(i); b && b->dim != axis && rankOf(i) == outRank)
        out = b;
  } else if (op == "Slice") {
    if (auto axes = axesOf(3); in && axes && !contains(*axes, inRank, in->dim))
      out = in;
  } else if (op == "Squeeze") {
    if (auto axes = axesOf(1);
        in && axes && !axes->empty() && !contains(*axes, inRank, in->dim))
      out = BatchDim{in->dim - countBelow(*axes, inRank, in->dim), in->outer,
                     in->inner};
  } else if (op == "Unsqueeze") {
    if (auto axes = axesOf(1); in && axes) {
      // The input's dimensions fill the result's positions not in `axes`.
      int64_t src = 0;
      for (int64_t d = 0; d < outRank && !out; ++d)
        if (!contains(*axes, outRank, d) && src++ == in->dim)
          out = BatchDim{d, in->outer, in->inner};
    }
  } else if (op.starts_with("Reduce") || op == "ArgMax" || op == "ArgMin") {
    bool keep = intAttr(node, "keepdims", 1) != 0;
    std::optional<SmallVector<int64_t>> axes;
    if (op.starts_with("Arg"))
      axes = SmallVector<int64_t>{intAttr(node, "axis", 0)};
    else
      axes = axesOf(1);
    if (in && axes && !axes->empty() && !contains(*axes, inRank, in->dim))
      out = BatchDim{keep ? in->dim
                          : in->dim - countBelow(*axes, inRank, in->dim),
                     in->outer, in->inner};
  } else if (llvm::is_contained({"Add", "Sub", "Mul", "Div", "Pow", "Where",
                                 "Max", "Min", "Mod", "Equal", "Less",
                                 "Greater", "And", "Or"},
                                op)) {
    // Broadcasting keeps the dimensions of an operand of the result's rank.
    for (int i = 0; i < node.input_size() && !out; ++i)
      if (outRank >= 0 && rankOf(i) == outRank)
        out = batchOf(i);
  }
  if (!out)
    return;
  // Split: every part keeps the batch.
  int outputs = op == "Split" ? node.output_size() : 1;
  for (int i = 0; i < outputs; ++i)
    if (!node.output(i).empty())
      batchOverridden.try_emplace(node.output(i), *out);
}

void OnnxImporter::noteExportedBatch(InFlightDiagnostic &d, const Twine &why) {
  d.attachNote() << "hint: " << why
                 << "--batch and data-parallel training change the batch; "
                    "export with a dynamic batch dimension "
                    "(torch.onnx.export(..., dynamic_shapes=...)) or keep the "
                    "exported batch";
}

void OnnxImporter::batchReshapeTarget(const std::string &input,
                                      ArrayRef<int64_t> inputShape,
                                      bool allowZero,
                                      SmallVectorImpl<int64_t> &target,
                                      std::optional<BatchDim> &result) {
  auto it = batchOverridden.find(input);
  int64_t b0 = exportedBatch;
  if (it == batchOverridden.end() || !options.batch || b0 <= 0)
    return;
  const BatchDim &in = it->second;
  int64_t b1 = *options.batch, rank = inputShape.size();
  if (in.dim >= rank)
    return;
  // Products of the target's dimensions (anything a file says) overflow:
  // false then, and the target stays as it is.
  auto mul = [](int64_t &acc, int64_t v) {
    return v > 0 && !llvm::MulOverflow(acc, v, acc);
  };
  // The input as exported, in row-major order: P elements before the
  // batch's digit, S after it.
  SmallVector<int64_t> exported(inputShape.begin(), inputShape.end());
  int64_t digit = in.outer;
  if (!mul(digit, b0) || !mul(digit, in.inner))
    return;
  exported[in.dim] = digit;
  int64_t p = in.outer, s = in.inner;
  for (int64_t j = 0; j < rank; ++j)
    if (j != in.dim && !mul(j < in.dim ? p : s, exported[j]))
      return;
  // The target as exported: 0 copies a dimension (without allowzero), -1
  // takes what is left.
  SmallVector<int64_t> t(target.begin(), target.end());
  int64_t known = 1, inferred = -1;
  for (auto [j, d] : llvm::enumerate(t)) {
    if (d == 0 && !allowZero && int64_t(j) < rank)
      d = exported[j];
    if (d == -1 && inferred < 0) {
      inferred = j;
      continue;
    }
    if (!mul(known, d))
      return;
  }
  int64_t total = p, pb = p;
  if (!mul(total, b0) || !mul(total, s) || !mul(pb, b0))
    return;
  if (inferred >= 0) {
    if (total % known != 0)
      return;
    t[inferred] = total / known;
  } else if (known != total) {
    return;
  }
  // The target dimension that holds the batch's digit: each batch's
  // elements keep their places when it is outer x batch x inner there,
  // with the P elements before it and the S after it. Every product below
  // is at most `total`.
  int64_t before = 1;
  for (size_t j = 0; j < t.size(); ++j) {
    if (before * t[j] < pb) {
      before *= t[j];
      continue;
    }
    if (p % before != 0 || t[j] % ((p / before) * b0) != 0)
      return;
    int64_t outer = p / before, inner = t[j] / (outer * b0);
    int64_t after = 1;
    for (size_t r = j + 1; r < t.size(); ++r)
      after *= t[r];
    int64_t dim = outer;
    if (inner * after != s || !mul(dim, b1) || !mul(dim, inner))
      return;
    for (size_t r = 0; r < t.size(); ++r)
      target[r] = r == j ? dim : t[r];
    result = BatchDim{int64_t(j), outer, inner};
    return;
  }
}

void OnnxImporter::batchExpandShape(ArrayRef<int64_t> inputShape,
                                    SmallVectorImpl<int64_t> &shape,
                                    std::optional<BatchDim> &result) {
  // An exported batch of 1 cannot be told from a broadcast of 1.
  if (batchOverridden.empty() || !options.batch || exportedBatch < 2 ||
      shape.empty() || shape[0] != exportedBatch)
    return;
  int64_t rank = inputShape.size(), lead = int64_t(shape.size()) - rank;
  if (lead < 0 || (lead == 0 && inputShape[0] != 1))
    return;
  shape[0] = *options.batch;
  result = BatchDim{};
}

std::shared_ptr<Constant>
OnnxImporter::batchSplatConstant(const Constant &c, ArrayRef<int64_t> shape,
                                 std::optional<BatchDim> &result) {
  if (batchOverridden.empty() || !options.batch || exportedBatch < 2 ||
      *options.batch == exportedBatch || !c.written || !c.isFloat ||
      !c.initializer.empty() || c.external || c.floats.empty() ||
      llvm::any_of(c.floats, [&](double v) { return v != c.floats[0]; }))
    return nullptr;
  int64_t rank = c.shape.size(), lead = int64_t(shape.size()) - rank;
  if (lead < 0)
    return nullptr;
  SmallVector<int64_t> resized(c.shape);
  int64_t batchDim = -1;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t have = c.shape[i], want = shape[lead + i];
    if (have == want)
      continue;
    // Before broadcasting: an Expand to a new batch of 1 would keep the
    // exported batch.
    if (have == exportedBatch && want == *options.batch && batchDim < 0) {
      resized[i] = want;
      batchDim = lead + i;
      continue;
    }
    if (have != 1 && want != 1)
      return nullptr;
  }
  if (batchDim < 0)
    return nullptr;
  auto out = std::make_shared<Constant>(c);
  out->shape = resized;
  out->floats.assign(out->floats.size() / exportedBatch * *options.batch,
                     c.floats[0]);
  result = BatchDim{batchDim};
  return out;
}

} // namespace dlc::onnx_import
