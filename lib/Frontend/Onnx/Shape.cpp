//===- Shape.cpp - Shape ops on values
//--------------------------------------===//
//
// Flatten, Reshape, Squeeze/Unsqueeze, Transpose and Constant nodes.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace dlc::onnx_import {

LogicalResult OnnxImporter::importFlatten(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  int64_t rank = t.getRank();
  int64_t axis = intAttr(node, "axis", 1);
  if (axis < -rank || axis > rank)
    return nodeError(node, "axis " + Twine(axis) +
                               " is out of range for rank " + Twine(rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= t.getDimSize(i);
  auto r = reshape(node, *x, {outer, inner});
  if (failed(r))
    return failure();
  define(node, 0, *r);
  return success();
}

LogicalResult OnnxImporter::importReshape(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto shapeC = constInput(node, 1, "the target shape");
  if (failed(shapeC))
    return failure();
  if ((*shapeC)->isFloat || (*shapeC)->shape.size() != 1)
    return nodeError(node, "the target shape must be a 1-D int64 tensor");
  auto t = typeOf(*x);
  bool allowZero = intAttr(node, "allowzero", 0) != 0;
  // A static export's target holds the exported batch: the new one instead.
  SmallVector<int64_t> target((*shapeC)->ints.begin(), (*shapeC)->ints.end());
  std::optional<BatchDim> batchDim;
  // Only a shape stored in the file: one computed from the graph's shapes
  // during the import already holds the new batch.
  if ((*shapeC)->written)
    batchReshapeTarget(node.input(0), t.getShape(), allowZero, target,
                       batchDim);
  SmallVector<int64_t> shape;
  int inferred = -1;
  int64_t known = 1;
  for (auto [i, d] : llvm::enumerate(target)) {
    if (d == 0 && !allowZero) {
      if (int64_t(i) >= t.getRank())
        return nodeError(node, "target dimension " + Twine(i) +
                                   " copies a dimension the input lacks");
      d = t.getDimSize(i);
    } else if (d == -1) {
      if (inferred >= 0)
        return nodeError(node, "the target shape has more than one -1");
      inferred = i;
      shape.push_back(1);
      continue;
    } else if (d <= 0) {
      return nodeError(node, "invalid target dimension " + Twine(d));
    }
    if (d > kMaxElements || known > kMaxElements / d)
      return nodeError(node, "the target shape is too large");
    known *= d;
    shape.push_back(d);
  }
  if (inferred >= 0) {
    if (t.getNumElements() % known != 0)
      return nodeError(
          node, "cannot infer the -1 dimension: " + Twine(t.getNumElements()) +
                    " elements do not divide by " + Twine(known));
    shape[inferred] = t.getNumElements() / known;
  }
  if (!batchDim && inferred < 0 && known != t.getNumElements() &&
      batchOverridden.contains(node.input(0))) {
    auto d = nodeError(node, "cannot reshape " + Twine(t.getNumElements()) +
                                 " elements into " + Twine(known) +
                                 ": its target shape holds the batch the "
                                 "model was exported with, mixed with "
                                 "other dimensions");
    noteExportedBatch(d);
    return d;
  }
  auto r = reshape(node, *x, shape);
  if (failed(r))
    return failure();
  define(node, 0, *r);
  if (batchDim)
    batchOverridden[node.output(0)] = *batchDim;
  return success();
}

/// The shape Unsqueeze (`unsqueeze`) or Squeeze gives `shape` with `axes`
/// (ONNX's: negative axes count from the end of the result for Unsqueeze,
/// of the input for Squeeze; Squeeze without axes drops every 1).
FailureOr<SmallVector<int64_t>>
OnnxImporter::squeezedShape(const onnx::NodeProto &node,
                            ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                            bool unsqueeze) {
  int64_t inRank = shape.size();
  SmallVector<int64_t> out;
  if (unsqueeze) {
    int64_t rank = inRank + int64_t(axes.size());
    SmallVector<bool> isNew(rank, false);
    for (int64_t a : axes) {
      auto n = normAxis(node, a, rank);
      if (failed(n))
        return failure();
      if (isNew[*n]) {
        nodeError(node, "axis " + Twine(a) + " is given twice");
        return failure();
      }
      isNew[*n] = true;
    }
    int64_t src = 0;
    for (int64_t i = 0; i < rank; ++i)
      out.push_back(isNew[i] ? 1 : shape[src++]);
    return out;
  }
  SmallVector<bool> drop(inRank, axes.empty());
  for (int64_t a : axes) {
    auto n = normAxis(node, a, inRank);
    if (failed(n))
      return failure();
    if (shape[*n] != 1) {
      nodeError(node, "cannot squeeze dimension " + Twine(*n) + " of size " +
                          Twine(shape[*n]));
      return failure();
    }
    drop[*n] = true;
  }
  for (int64_t i = 0; i < inRank; ++i)
    if (!drop[i] || shape[i] != 1)
      out.push_back(shape[i]);
  return out;
}

LogicalResult OnnxImporter::importSqueezeLike(const onnx::NodeProto &node) {
  // Float tensors here; int64 constants are folded earlier.
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  SmallVector<int64_t> axes;
  if (hasInput(node, 1)) {
    auto c = constInput(node, 1, "axes");
    if (failed(c))
      return failure();
    axes.assign((*c)->ints.begin(), (*c)->ints.end());
  } else {
    axes = intsAttr(node, "axes");
  }
  auto shape =
      squeezedShape(node, t.getShape(), axes, node.op_type() == "Unsqueeze");
  if (failed(shape))
    return failure();
  auto r = reshape(node, *x, *shape);
  if (failed(r))
    return failure();
  define(node, 0, *r);
  return success();
}

LogicalResult OnnxImporter::importTranspose(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  int64_t rank = t.getRank();
  SmallVector<int64_t> perm = intsAttr(node, "perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (int64_t(perm.size()) != rank)
    return nodeError(node, "perm has " + Twine(perm.size()) +
                               " entries for a rank-" + Twine(rank) + " input");
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t &p : perm) {
    if (p < 0)
      p += rank;
    if (p < 0 || p >= rank || seen[p])
      return nodeError(node, "perm is not a permutation");
    seen[p] = true;
    shape.push_back(t.getDimSize(p));
  }
  Value r = ddlc::TransposeOp::create(
      builder, nodeLoc(node), RankedTensorType::get(shape, t.getElementType()),
      *x, perm);
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importConstant(const onnx::NodeProto &node) {
  auto c = std::make_shared<Constant>();
  if (const auto *a = attr(node, "value")) {
    auto t = readTensor(a->t(), "the value of node '" + nodeName(node) + "'",
                        nodeLoc(node));
    if (failed(t))
      return failure();
    c = *t;
  } else if (const auto *a = attr(node, "value_float")) {
    c->isFloat = true;
    c->elementType = builder.getF32Type();
    c->floats = {a->f()};
  } else if (const auto *a = attr(node, "value_floats")) {
    c->isFloat = true;
    c->elementType = builder.getF32Type();
    c->floats.assign(a->floats().begin(), a->floats().end());
    c->shape = {int64_t(c->floats.size())};
  } else if (const auto *a = attr(node, "value_int")) {
    c->ints = {a->i()};
  } else if (const auto *a = attr(node, "value_ints")) {
    c->ints.assign(a->ints().begin(), a->ints().end());
    c->shape = {int64_t(c->ints.size())};
  } else {
    return nodeError(node, "needs a 'value', 'value_float(s)' or "
                           "'value_int(s)' attribute");
  }
  c->written = true;
  defineConst(node, 0, c);
  return success();
}

LogicalResult OnnxImporter::importCast(const onnx::NodeProto &node) {
  // Constants were folded (Folding.cpp): this is a value.
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  Type to;
  switch (intAttr(node, "to", 0)) {
  case onnx::TensorProto::FLOAT:
    to = builder.getF32Type();
    break;
  case onnx::TensorProto::FLOAT16:
    to = builder.getF16Type();
    break;
  case onnx::TensorProto::BFLOAT16:
    to = builder.getBF16Type();
    break;
  case onnx::TensorProto::INT64:
    to = builder.getI64Type();
    break;
  case onnx::TensorProto::INT32:
    to = builder.getI32Type();
    break;
  case onnx::TensorProto::BOOL:
    to = builder.getI1Type();
    break;
  default:
    return nodeError(node, "a Cast to " +
                               onnxTypeName(int32_t(intAttr(node, "to", 0))) +
                               " is not supported");
  }
  if (to == t.getElementType()) {
    define(node, 0, *x);
    return success();
  }
  if (to.isInteger(1)) {
    // To bool: non-zero is true (NaN too, as in ONNX and PyTorch).
    define(node, 0, nonZero(nodeLoc(node), *x));
    return success();
  }
  if (isa<IntegerType>(to) && isa<IntegerType>(t.getElementType())) {
    // Integers (a bool mask, int32 positions) to another integer type.
    define(node, 0,
           ddlc::CastOp::create(builder, nodeLoc(node),
                                RankedTensorType::get(t.getShape(), to), *x));
    return success();
  }
  if (!isa<FloatType>(to))
    return nodeError(node, "a Cast of " +
                               (isa<FloatType>(t.getElementType())
                                    ? Twine("float")
                                    : Twine("integer")) +
                               " values to an integer type is not supported")
           << "; dlc computes masks and indices as constants or from the "
              "model's integer inputs";
  define(node, 0,
         ddlc::CastOp::create(builder, nodeLoc(node),
                              RankedTensorType::get(t.getShape(), to), *x));
  return success();
}

LogicalResult OnnxImporter::importShapeOps(const onnx::NodeProto &node) {
  // Reached only when foldConstantNode could not fold: the op reads a
  // float tensor's data (Shape is always folded: shapes are static).
  return nodeError(node, "is supported only on tensors known at compile "
                         "time (the int64 shape arithmetic around Reshape)");
}

} // namespace dlc::onnx_import
