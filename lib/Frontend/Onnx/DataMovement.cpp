//===- DataMovement.cpp - Data movement on values
//---------------------------===//
//
// Concat, Slice, Split, Gather, Expand and Where on tensors computed at run
// time (their constant forms are folded: Folding.cpp).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace dlc::onnx_import {

//===----------------------------------------------------------------------===//
// Data movement on values (what foldConstantNode could not fold)
//===----------------------------------------------------------------------===//

Value OnnxImporter::sliceAlong(Location loc, Value x, int64_t axis,
                               int64_t start, int64_t size, int64_t step) {
  auto t = typeOf(x);
  if (start == 0 && step == 1 && size == t.getDimSize(axis))
    return x;
  SmallVector<int64_t> shape(t.getShape()), offsets(t.getRank(), 0),
      strides(t.getRank(), 1);
  shape[axis] = size;
  offsets[axis] = start;
  strides[axis] = step;
  return ddlc::SliceOp::create(builder, loc,
                               RankedTensorType::get(shape, t.getElementType()),
                               x, offsets, strides);
}

LogicalResult OnnxImporter::importConcat(const onnx::NodeProto &node) {
  SmallVector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    if (!hasInput(node, i))
      return nodeError(node, "input " + Twine(i) + " is absent");
    auto v = tensor(node, i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty())
    return nodeError(node, "needs at least one input");
  auto first = typeOf(inputs[0]);
  auto axis = normAxis(node, intAttr(node, "axis", 0), first.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (auto [i, v] : llvm::enumerate(inputs)) {
    auto t = typeOf(v);
    bool fits = t.getRank() == first.getRank() &&
                t.getElementType() == first.getElementType();
    for (int64_t d = 0; fits && d < t.getRank(); ++d)
      fits = d == *axis || t.getDimSize(d) == first.getDimSize(d);
    if (!fits)
      return nodeError(node, "input " + Twine(i) +
                                 " does not match input 0 "
                                 "outside axis " +
                                 Twine(*axis));
    shape[*axis] += t.getDimSize(*axis);
  }
  define(node, 0,
         ddlc::ConcatOp::create(
             builder, nodeLoc(node),
             RankedTensorType::get(shape, first.getElementType()), inputs,
             *axis));
  return success();
}

LogicalResult OnnxImporter::importSlice(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  int64_t rank = t.getRank();
  auto ints =
      [&](int i, const char *what,
          std::vector<int64_t> dflt) -> FailureOr<std::vector<int64_t>> {
    if (!hasInput(node, i))
      return dflt;
    auto c = constInput(node, i, what);
    if (failed(c))
      return failure();
    if ((*c)->isFloat)
      return nodeError(node, Twine(what) + " must be integers"), failure();
    return (*c)->ints;
  };
  auto starts = ints(1, "starts", {});
  auto ends = ints(2, "ends", {});
  if (failed(starts) || failed(ends))
    return failure();
  std::vector<int64_t> defaultAxes;
  for (size_t i = 0; i < starts->size(); ++i)
    defaultAxes.push_back(int64_t(i));
  auto axes = ints(3, "axes", defaultAxes);
  auto steps = ints(4, "steps", std::vector<int64_t>(starts->size(), 1));
  if (failed(axes) || failed(steps))
    return failure();
  size_t n = starts->size();
  if (ends->size() != n || axes->size() != n || steps->size() != n)
    return nodeError(node, "starts, ends, axes and steps must have one "
                           "length");
  SmallVector<int64_t> offsets(rank, 0), strides(rank, 1), shape(t.getShape());
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    auto axis = normAxis(node, (*axes)[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return nodeError(node, "axis " + Twine(*axis) + " is sliced twice");
    seen[*axis] = true;
    int64_t dim = t.getDimSize(*axis), step = (*steps)[i];
    if (step == 0)
      return nodeError(node, "a step of 0");
    // ONNX adds dim to negative starts and ends, then clamps them into
    // [0, dim] for a positive step and [-1, dim - 1] for a negative one
    // (ends of INT64_MAX or INT64_MIN mean "to the end").
    auto clampIndex = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0)
        v = v < -dim ? -1 : v + dim;
      return std::clamp(v, lo, hi);
    };
    int64_t s = step > 0 ? clampIndex((*starts)[i], 0, dim)
                         : clampIndex((*starts)[i], 0, dim - 1);
    int64_t e = step > 0 ? clampIndex((*ends)[i], 0, dim)
                         : clampIndex((*ends)[i], -1, dim - 1);
    int64_t size = step > 0 ? (e > s ? (e - s - 1) / step + 1 : 0)
                            : (s > e ? (s - e - 1) / -step + 1 : 0);
    offsets[*axis] = size ? s : 0;
    strides[*axis] = step;
    shape[*axis] = size;
  }
  Value r = *x;
  if (shape != SmallVector<int64_t>(t.getShape()) ||
      llvm::any_of(strides, [](int64_t v) { return v != 1; }))
    r = ddlc::SliceOp::create(builder, nodeLoc(node),
                              RankedTensorType::get(shape, t.getElementType()),
                              *x, offsets, strides);
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importSplit(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  auto axis = normAxis(node, intAttr(node, "axis", 0), t.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = t.getDimSize(*axis), parts = node.output_size();
  SmallVector<int64_t> sizes;
  if (hasInput(node, 1)) {
    auto c = constInput(node, 1, "split");
    if (failed(c))
      return failure();
    sizes.assign((*c)->ints.begin(), (*c)->ints.end());
  } else if (SmallVector<int64_t> a = intsAttr(node, "split"); !a.empty()) {
    sizes = a; // Opsets before 13.
  } else {
    // Equal parts; from opset 18, `num_outputs` parts of ceil(dim / n),
    // the last one smaller.
    int64_t n = opset >= 18 ? intAttr(node, "num_outputs", parts) : parts;
    if (n != parts || n < 1)
      return nodeError(node, "num_outputs (" + Twine(n) + ") must be the " +
                                 "number of outputs (" + Twine(parts) + ")");
    int64_t each = (dim + n - 1) / n;
    if (opset < 18 && dim % n)
      return nodeError(node, "cannot split " + Twine(dim) + " into " +
                                 Twine(n) + " equal parts");
    for (int64_t k = 0, left = dim; k < n; ++k, left -= each)
      sizes.push_back(std::min(each, std::max<int64_t>(left, 0)));
  }
  if (int64_t(sizes.size()) != parts)
    return nodeError(node, "split has " + Twine(sizes.size()) + " sizes for " +
                               Twine(parts) + " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > dim)
      return nodeError(node, "a split size of " + Twine(s));
    total += s;
  }
  if (total != dim)
    return nodeError(node, "the split sizes add up to " + Twine(total) +
                               ", not " + Twine(dim));
  for (int64_t k = 0, at = 0; k < parts; at += sizes[k], ++k)
    if (!node.output(k).empty())
      define(node, k, sliceAlong(nodeLoc(node), *x, *axis, at, sizes[k], 1));
  return success();
}

/// What a gather by constant indices selected: slices of one tensor, each
/// of size 1 along `axis`, joined along it and viewed as `shape` (zeros of
/// `shape` when there are none).
Value OnnxImporter::joinSlices(Location loc, ArrayRef<Value> parts,
                               int64_t axis, ArrayRef<int64_t> shape,
                               Type elementType) {
  auto type = RankedTensorType::get(shape, elementType);
  if (parts.empty())
    return fill(loc, 0.0, shape, elementType);
  Value joined = parts[0];
  if (parts.size() > 1) {
    SmallVector<int64_t> catShape(typeOf(parts[0]).getShape());
    catShape[axis] = int64_t(parts.size());
    joined = ddlc::ConcatOp::create(
        builder, loc, RankedTensorType::get(catShape, elementType), parts,
        axis);
  }
  if (typeOf(joined) != type)
    joined = ddlc::ReshapeOp::create(builder, loc, type, joined);
  return joined;
}

LogicalResult OnnxImporter::importGather(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  auto axis = normAxis(node, intAttr(node, "axis", 0), t.getRank());
  if (failed(axis))
    return failure();
  Item *idxItem = lookup(node, 1);
  if (!idxItem)
    return nodeError(node, "needs input 1 (indices)");
  if (idxItem->value) {
    // Indices computed at run time (token ids): an embedding lookup.
    auto it = dyn_cast<RankedTensorType>(idxItem->value.getType());
    if (!it || !it.getElementType().isSignlessInteger())
      return nodeError(node, "the indices must be integers");
    if (!isa<FloatType>(t.getElementType()))
      return nodeError(node, "dlc gathers rows of float tensors only");
    // Along another axis k: that axis moved to the front, its rows gathered,
    // and the index dimensions moved back to k (x[:, ids], a gather of
    // columns); the transposes are differentiable like the gather.
    Location loc = nodeLoc(node);
    int64_t rank = t.getRank(), k = *axis, q = it.getRank();
    SmallVector<int64_t> toFront{k}, frontShape{t.getDimSize(k)};
    for (int64_t d = 0; d < rank; ++d)
      if (d != k) {
        toFront.push_back(d);
        frontShape.push_back(t.getDimSize(d));
      }
    Value table = *x;
    if (k != 0)
      table = ddlc::TransposeOp::create(
          builder, loc, RankedTensorType::get(frontShape, t.getElementType()),
          table, builder.getDenseI64ArrayAttr(toFront));
    SmallVector<int64_t> shape(it.getShape());
    shape.append(frontShape.begin() + 1, frontShape.end());
    Value r = ddlc::GatherOp::create(
        builder, loc, RankedTensorType::get(shape, t.getElementType()), table,
        idxItem->value);
    if (k != 0) {
      // [idx..., d_0..d_{k-1}, d_{k+1}...] -> [d_0..d_{k-1}, idx..., ...]
      SmallVector<int64_t> perm, outShape;
      for (int64_t d = 0; d < k; ++d)
        perm.push_back(q + d);
      for (int64_t d = 0; d < q; ++d)
        perm.push_back(d);
      for (int64_t d = q + k; d < int64_t(shape.size()); ++d)
        perm.push_back(d);
      for (int64_t p : perm)
        outShape.push_back(shape[p]);
      r = ddlc::TransposeOp::create(
          builder, loc, RankedTensorType::get(outShape, t.getElementType()), r,
          builder.getDenseI64ArrayAttr(perm));
    }
    define(node, 0, r);
    return success();
  }
  if (!idxItem->constant || idxItem->constant->isFloat)
    return nodeError(node, "the indices must be integers");
  // Constant indices (the q/k/v selections of a packed projection): one
  // slice per index, joined along the axis, viewed in the result's shape.
  const Constant &idx = *idxItem->constant;
  int64_t dim = t.getDimSize(*axis);
  Location loc = nodeLoc(node);
  SmallVector<Value> parts;
  for (int64_t i : idx.ints) {
    if (i < -dim || i >= dim)
      return nodeError(node, "index " + Twine(i) +
                                 " is out of range for a "
                                 "dimension of " +
                                 Twine(dim));
    parts.push_back(sliceAlong(loc, *x, *axis, i < 0 ? i + dim : i, 1, 1));
  }
  SmallVector<int64_t> shape(t.getShape().take_front(*axis));
  shape.append(idx.shape.begin(), idx.shape.end());
  shape.append(t.getShape().begin() + *axis + 1, t.getShape().end());
  define(node, 0, joinSlices(loc, parts, *axis, shape, t.getElementType()));
  return success();
}

/// GatherElements (torch.gather) by run-time integer indices.
LogicalResult OnnxImporter::importGatherElements(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  auto axis = normAxis(node, intAttr(node, "axis", 0), t.getRank());
  if (failed(axis))
    return failure();
  Item *idxItem = lookup(node, 1);
  if (!idxItem)
    return nodeError(node, "needs input 1 (indices)");
  if (!idxItem->value)
    return nodeError(node, "the indices must be computed at run time (a "
                           "graph input or a value); constant indices are "
                           "not supported");
  auto it = typeOf(idxItem->value);
  if (!it.getElementType().isSignlessInteger() ||
      it.getElementType().isInteger(1))
    return nodeError(node, "the indices must be integers");
  if (!isa<FloatType>(t.getElementType()))
    return nodeError(node, "dlc gathers elements of float tensors only");
  if (it.getRank() != t.getRank())
    return nodeError(node, "the indices have rank " + Twine(it.getRank()) +
                               ", the data rank " + Twine(t.getRank()));
  for (int64_t d = 0; d < t.getRank(); ++d)
    if (d != *axis && it.getDimSize(d) != t.getDimSize(d))
      return nodeError(node, "the indices' dimension " + Twine(d) + " (" +
                                 Twine(it.getDimSize(d)) +
                                 ") differs from the data's (" +
                                 Twine(t.getDimSize(d)) +
                                 "); dlc needs them equal but along the axis");
  define(node, 0,
         ddlc::GatherElementsOp::create(
             builder, nodeLoc(node),
             RankedTensorType::get(it.getShape(), t.getElementType()), *x,
             idxItem->value, builder.getI64IntegerAttr(*axis)));
  return success();
}

/// GatherND with constant indices and batch_dims 0 (what PyTorch's dynamo
/// exporter writes for an adaptive average pool whose output does not
/// divide its input): the leading k dimensions of the data are viewed as
/// one, and each index tuple selects one slice of it, as Gather does.
LogicalResult OnnxImporter::importGatherND(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  if (intAttr(node, "batch_dims", 0) != 0)
    return nodeError(node, "only batch_dims = 0 is supported");
  Item *idxItem = lookup(node, 1);
  if (idxItem && idxItem->value) {
    // Run-time index tuples of one entry ([..., 1]: the dynamo exporter's
    // x[:, ids], after a transpose): rows of the data, as Gather takes them.
    auto it = typeOf(idxItem->value), t = typeOf(*x);
    if (!it.getElementType().isSignlessInteger() ||
        it.getElementType().isInteger(1) || it.getRank() < 1 ||
        it.getShape().back() != 1) {
      auto d = nodeError(node, "run-time indices must be integer tuples of "
                               "one entry ([..., 1])");
      d.attachNote() << "hint: longer tuples are supported as constants";
      return d;
    }
    if (!isa<FloatType>(t.getElementType()))
      return nodeError(node, "dlc gathers rows of float tensors only");
    auto rows = reshape(node, idxItem->value, it.getShape().drop_back());
    if (failed(rows))
      return failure();
    SmallVector<int64_t> shape(it.getShape().drop_back());
    shape.append(t.getShape().begin() + 1, t.getShape().end());
    define(node, 0,
           ddlc::GatherOp::create(
               builder, nodeLoc(node),
               RankedTensorType::get(shape, t.getElementType()), *x, *rows));
    return success();
  }
  if (!idxItem || !idxItem->constant || idxItem->constant->isFloat ||
      idxItem->constant->external) {
    auto d = nodeError(node, "the indices must be an integer constant, or "
                             "tuples of one entry computed at run time");
    d.attachNote() << "hint: dlc gathers by run-time indices with Gather "
                      "(along any axis)";
    return d;
  }
  const Constant &idx = *idxItem->constant;
  auto t = typeOf(*x);
  int64_t rank = t.getRank();
  if (idx.shape.empty())
    return nodeError(node, "the indices must have rank 1 or more");
  int64_t k = idx.shape.back();
  if (k < 1 || k > rank)
    return nodeError(node, "index tuples of " + Twine(k) +
                               " entries for a rank-" + Twine(rank) +
                               " tensor");
  ArrayRef<int64_t> lead = t.getShape().take_front(k);
  SmallVector<int64_t> viewShape{numElements(lead)};
  viewShape.append(t.getShape().begin() + k, t.getShape().end());
  auto view = reshape(node, *x, viewShape);
  if (failed(view))
    return failure();
  Location loc = nodeLoc(node);
  int64_t count = idx.numel() / k;
  if (count > 65536)
    return nodeError(node, Twine(count) +
                               " index tuples are more than dlc gathers "
                               "(65536)");
  SmallVector<Value> parts;
  for (int64_t j = 0; j < count; ++j) {
    int64_t row = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t v = idx.ints[j * k + d], dim = lead[d];
      if (v < -dim || v >= dim)
        return nodeError(node, "index " + Twine(v) +
                                   " is out of range for "
                                   "a dimension of " +
                                   Twine(dim));
      row = row * dim + (v < 0 ? v + dim : v);
    }
    parts.push_back(sliceAlong(loc, *view, 0, row, 1, 1));
  }
  SmallVector<int64_t> shape(idx.shape.begin(), idx.shape.end() - 1);
  shape.append(t.getShape().begin() + k, t.getShape().end());
  define(node, 0, joinSlices(loc, parts, 0, shape, t.getElementType()));
  return success();
}

InFlightDiagnostic OnnxImporter::expandError(const onnx::NodeProto &node,
                                             ArrayRef<int64_t> shape,
                                             ArrayRef<int64_t> want) {
  auto str = [](ArrayRef<int64_t> dims) {
    return "[" +
           llvm::join(llvm::map_range(
                          dims, [](int64_t d) { return std::to_string(d); }),
                      ", ") +
           "]";
  };
  auto d = nodeError(node, "cannot expand a tensor of shape " + str(shape) +
                               " to " + str(want));
  if (!batchOverridden.empty() && exportedBatch > 1 &&
      llvm::is_contained(shape, exportedBatch))
    noteExportedBatch(d, "the tensor holds the batch the model was "
                         "exported with (" +
                             Twine(exportedBatch) + "); ");
  return d;
}

LogicalResult OnnxImporter::importExpand(const onnx::NodeProto &node) {
  Item *in = lookup(node, 0);
  if (!in || in->pendingPad)
    return tensor(node, 0); // fails, saying why
  auto shapeIn = constInput(node, 1, "shape");
  if (failed(shapeIn))
    return failure();
  if ((*shapeIn)->isFloat)
    return nodeError(node, "the shape must be integers");
  SmallVector<int64_t> want((*shapeIn)->ints.begin(), (*shapeIn)->ints.end());
  // A constant of one value written at the exported batch (TorchScript's
  // zero initial state), expanded to a computed shape, is that value at the
  // new batch: only that one is materialized.
  std::optional<BatchDim> batchDim;
  Item resized{Value(), nullptr, std::nullopt};
  if (!(*shapeIn)->written && in->constant)
    resized.constant = batchSplatConstant(*in->constant, want, batchDim);
  auto x = resized.constant ? materialize(node.input(0), resized, nodeLoc(node))
                            : tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  if (!isa<FloatType>(t.getElementType()))
    return nodeError(node, "dlc expands float tensors only");
  // A static export's shape holds the exported batch: the new one instead.
  if ((*shapeIn)->written)
    batchExpandShape(t.getShape(), want, batchDim);
  auto shape = broadcastShapes(t.getShape(), want);
  if (!shape || llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return expandError(node, t.getShape(), want);
  Value r = *x;
  if (ArrayRef<int64_t>(*shape) != t.getShape())
    r = ddlc::BroadcastToOp::create(
        builder, nodeLoc(node),
        RankedTensorType::get(*shape, t.getElementType()), *x);
  define(node, 0, r);
  if (batchDim)
    batchOverridden[node.output(0)] = *batchDim;
  return success();
}

/// Tile: x [A, B] repeated [r0, r1] is x viewed as [1, A, 1, B], broadcast
/// to [r0, A, r1, B] and viewed as [r0 A, r1 B] (whole copies, outermost
/// first, as ONNX and numpy.tile order them).
LogicalResult OnnxImporter::importTile(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto reps = constInput(node, 1, "repeats");
  if (failed(reps))
    return failure();
  auto t = typeOf(*x);
  int64_t rank = t.getRank();
  if ((*reps)->isFloat || int64_t((*reps)->ints.size()) != rank)
    return nodeError(node, "repeats must be " + Twine(rank) + " integers");
  if (!isa<FloatType>(t.getElementType()))
    return nodeError(node, "dlc tiles float tensors only");
  SmallVector<int64_t> split, spread, tiled;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t r = (*reps)->ints[d], n = t.getDimSize(d);
    if (r < 1 || r > kMaxElements / std::max<int64_t>(1, n))
      return nodeError(node, "a repeat count of " + Twine(r));
    split.append({1, n});
    spread.append({r, n});
    tiled.push_back(r * n);
  }
  if (numElements(tiled) > kMaxElements)
    return nodeError(node, "the result is too large");
  Location loc = nodeLoc(node);
  Type et = t.getElementType();
  Value r = *x;
  if (tiled != SmallVector<int64_t>(t.getShape())) {
    r = ddlc::ReshapeOp::create(builder, loc, RankedTensorType::get(split, et),
                                r);
    r = ddlc::BroadcastToOp::create(builder, loc,
                                    RankedTensorType::get(spread, et), r);
    r = ddlc::ReshapeOp::create(builder, loc, RankedTensorType::get(tiled, et),
                                r);
  }
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importWhere(const onnx::NodeProto &node) {
  Item *c = lookup(node, 0);
  if (!c)
    return nodeError(node, "needs input 0 (the condition)");
  Value cond;
  if (c->value) {
    cond = c->value;
  } else if (c->constant && !c->constant->isFloat) {
    // A constant mask (a causal triu) enters as a float tensor of 0 and 1,
    // a constant that no gradient reaches.
    const Constant &k = *c->constant;
    auto m = maskTensor(node.input(0) + ".mask", k.shape,
                        std::vector<double>(k.ints.begin(), k.ints.end()),
                        nodeLoc(node));
    if (failed(m))
      return failure();
    cond = *m;
  } else {
    auto v = tensor(node, 0);
    if (failed(v))
      return failure();
    cond = *v;
  }
  auto a = tensor(node, 1);
  auto bv = tensor(node, 2);
  if (failed(a) || failed(bv))
    return failure();
  auto ta = typeOf(*a), tb = typeOf(*bv);
  if (ta.getElementType() != tb.getElementType())
    return nodeError(node, "the two choices have different element types");
  auto shape = broadcastShapes(typeOf(cond).getShape(), ta.getShape());
  if (shape)
    shape = broadcastShapes(*shape, tb.getShape());
  if (!shape)
    return nodeError(node, "the operands do not broadcast to one shape");
  define(
      node, 0,
      ddlc::WhereOp::create(builder, nodeLoc(node),
                            RankedTensorType::get(*shape, ta.getElementType()),
                            cond, *a, *bv));
  return success();
}

} // namespace dlc::onnx_import
