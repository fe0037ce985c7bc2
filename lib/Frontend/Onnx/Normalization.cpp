//===- Normalization.cpp - Softmax, reductions and normalizations
//-----------===//
//
// Softmax/LogSoftmax, the reductions, LayerNormalization,
// BatchNormalization, InstanceNormalization and GroupNormalization.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

namespace dlc::onnx_import {

/// The normalisations divide by sqrt(var + epsilon): a zero, negative or
/// non-finite epsilon is the importer's error (dlc's ops verify it).
static bool validEpsilon(float eps) { return eps > 0 && std::isfinite(eps); }

LogicalResult OnnxImporter::importSoftmax(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto dim = normAxis(node, intAttr(node, "axis", -1), typeOf(*x).getRank());
  if (failed(dim))
    return failure();
  Location loc = nodeLoc(node);
  IntegerAttr d = builder.getI64IntegerAttr(*dim);
  Value r = node.op_type() == "Softmax"
                ? ddlc::SoftmaxOp::create(builder, loc, x->getType(), *x, d)
                      .getResult()
                : ddlc::LogSoftmaxOp::create(builder, loc, x->getType(), *x, d)
                      .getResult();
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importReduce(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  SmallVector<int64_t> axes;
  bool isSum = node.op_type() == "ReduceSum";
  // The axes are an input of ReduceSum from opset 13 and of the other
  // reductions from opset 18, an attribute before.
  bool axesInput = isSum || opset >= 18;
  if (axesInput && hasInput(node, 1)) {
    auto c = constInput(node, 1, "axes");
    if (failed(c))
      return failure();
    axes.assign((*c)->ints.begin(), (*c)->ints.end());
  } else if (!axesInput) {
    axes = intsAttr(node, "axes");
  }
  bool keep = intAttr(node, "keepdims", 1) != 0;
  if (axes.empty()) {
    if (axesInput && intAttr(node, "noop_with_empty_axes", 0)) {
      items[node.output(0)] = *lookup(node, 0);
      return success();
    }
    for (int64_t i = 0; i < t.getRank(); ++i)
      axes.push_back(i);
  }
  SmallVector<bool> reduced(t.getRank(), false);
  for (int64_t a : axes) {
    auto n = normAxis(node, a, t.getRank());
    if (failed(n))
      return failure();
    reduced[*n] = true;
  }
  SmallVector<int64_t> dims, shape;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (reduced[i])
      dims.push_back(i);
    if (!reduced[i])
      shape.push_back(t.getDimSize(i));
    else if (keep)
      shape.push_back(1);
  }
  auto type = RankedTensorType::get(shape, t.getElementType());
  Location loc = nodeLoc(node);
  StringRef op = node.op_type();
  Value r;
  if (isSum)
    r = ddlc::SumOp::create(builder, loc, type, *x, dims, keep);
  else if (op == "ReduceMean")
    r = ddlc::MeanOp::create(builder, loc, type, *x, dims, keep);
  else if (op == "ReduceMax")
    r = ddlc::MaxOp::create(builder, loc, type, *x, dims, keep);
  else
    r = ddlc::MinOp::create(builder, loc, type, *x, dims, keep);
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importLayerNorm(const onnx::NodeProto &node) {
  float eps = floatAttr(node, "epsilon", 1e-5f);
  if (!validEpsilon(eps))
    return nodeError(node, "epsilon " + formatNumber(eps) +
                               " must be positive and finite");
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  auto axis = normAxis(node, intAttr(node, "axis", -1), t.getRank());
  if (failed(axis))
    return failure();
  if (failed(onlyFirstOutputUsed(node)))
    return failure();
  // dlc.layer_norm normalises the last dimension: flatten the normalised
  // dimensions into one when the axis is not the last.
  int64_t inner = 1, outer = 1;
  for (int64_t i = 0; i < t.getRank(); ++i)
    (i < *axis ? outer : inner) *= t.getDimSize(i);
  Location loc = nodeLoc(node);
  Value input = *x;
  if (*axis != t.getRank() - 1) {
    auto r = reshape(node, *x, {outer, inner});
    if (failed(r))
      return failure();
    input = *r;
  }
  Type et = t.getElementType();
  auto affine = [&](int i, double def) -> FailureOr<Value> {
    if (!hasInput(node, i))
      return fill(loc, def, {inner}, et);
    auto v = tensor(node, i);
    if (failed(v))
      return failure();
    if (typeOf(*v).getNumElements() != inner) {
      nodeError(node, Twine(i == 1 ? "scale" : "bias") + " has " +
                          Twine(typeOf(*v).getNumElements()) +
                          " elements; the normalised dimensions have " +
                          Twine(inner));
      return failure();
    }
    return reshape(node, *v, {inner});
  };
  auto scale = affine(1, 1.0);
  if (failed(scale))
    return failure();
  auto bias = affine(2, 0.0);
  if (failed(bias))
    return failure();
  Value r =
      ddlc::LayerNormOp::create(builder, loc, input.getType(), input, *scale,
                                *bias, builder.getF64FloatAttr(eps));
  auto out = reshape(node, r, t.getShape());
  if (failed(out))
    return failure();
  define(node, 0, *out);
  return success();
}

LogicalResult OnnxImporter::importBatchNorm(const onnx::NodeProto &node) {
  float eps = floatAttr(node, "epsilon", 1e-5f);
  if (!validEpsilon(eps))
    return nodeError(node, "epsilon " + formatNumber(eps) +
                               " must be positive and finite");
  if (intAttr(node, "training_mode", 0))
    return nodeError(node, "training_mode = 1 is not supported; dlc imports "
                           "BatchNormalization in inference form");
  if (failed(onlyFirstOutputUsed(node)))
    return failure();
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  if (t.getRank() < 2)
    return nodeError(node, "needs an [N, C, ...] input");
  int64_t c = t.getDimSize(1);
  SmallVector<Value> params;
  for (int i = 1; i <= 4; ++i) {
    auto v = tensor(node, i);
    if (failed(v))
      return failure();
    if (typeOf(*v).getRank() != 1 || typeOf(*v).getDimSize(0) != c)
      return nodeError(node, "input " + Twine(i) + " must have " + Twine(c) +
                                 " elements (one per channel)");
    params.push_back(*v);
  }
  Value r = ddlc::BatchNormOp::create(builder, nodeLoc(node), t, *x, params[0],
                                      params[1], params[2], params[3],
                                      builder.getF64FloatAttr(eps));
  define(node, 0, r);
  return success();
}

/// InstanceNormalization and GroupNormalization (and GroupNorm as the
/// TorchScript exporter writes it, an InstanceNormalization of a
/// `[N, G, ...]` view): `x` `[N, C, d...]` is normalised over each group of
/// C/G channels and the spatial dimensions by one `dlc.layer_norm` on an
/// `[N * G, C/G * prod(d)]` view, then scaled and shifted per channel (or
/// per group: GroupNormalization before opset 21).
LogicalResult OnnxImporter::importGroupNorm(const onnx::NodeProto &node) {
  float eps = floatAttr(node, "epsilon", 1e-5f);
  if (!validEpsilon(eps))
    return nodeError(node, "epsilon " + formatNumber(eps) +
                               " must be positive and finite");
  bool instance = node.op_type() == "InstanceNormalization";
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  if (t.getRank() < 3)
    return nodeError(node, "needs an [N, C, d...] input, got rank " +
                               Twine(t.getRank()));
  int64_t n = t.getDimSize(0), c = t.getDimSize(1);
  int64_t spatial = numElements(t.getShape().drop_front(2));
  int64_t groups = instance ? c : intAttr(node, "num_groups", 0);
  if (groups < 1 || c % groups)
    return nodeError(node, "num_groups " + Twine(groups) +
                               " does not divide the " + Twine(c) +
                               " channels");
  int64_t inner = c / groups * spatial;
  // The affine parameters: one per channel, or one per group for
  // GroupNormalization before opset 21.
  int64_t per = instance || opset >= 21 ? c : groups;
  SmallVector<Value, 2> affine;
  for (int i = 1; i <= 2; ++i) {
    auto v = tensor(node, i);
    if (failed(v))
      return failure();
    if (typeOf(*v).getNumElements() != per)
      return nodeError(node, Twine(i == 1 ? "scale" : "bias") + " has " +
                                 Twine(typeOf(*v).getNumElements()) +
                                 " elements; expected " + Twine(per));
    auto col = reshape(node, *v, {per, 1});
    if (failed(col))
      return failure();
    affine.push_back(*col);
  }
  Location loc = nodeLoc(node);
  Type et = t.getElementType();
  auto rows = reshape(node, *x, {n * groups, inner});
  if (failed(rows))
    return failure();
  Value y = ddlc::LayerNormOp::create(
      builder, loc, typeOf(*rows), *rows, fill(loc, 1.0, {inner}, et),
      fill(loc, 0.0, {inner}, et), builder.getF64FloatAttr(eps));
  auto view = reshape(node, y, {n, per, n * groups * inner / (n * per)});
  if (failed(view))
    return failure();
  auto scaled = binary(node, "Mul", *view, affine[0]);
  if (failed(scaled))
    return failure();
  auto shifted = binary(node, "Add", *scaled, affine[1]);
  if (failed(shifted))
    return failure();
  auto out = reshape(node, *shifted, t.getShape());
  if (failed(out))
    return failure();
  define(node, 0, *out);
  return success();
}

} // namespace dlc::onnx_import
