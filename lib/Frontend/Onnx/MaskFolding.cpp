//===- MaskFolding.cpp - Constant folding of masks ------------------------===//
//
// OnnxImporter::foldMaskConstant: what exporters compute on masks and
// shapes with NumPy broadcasting, folded at import time when every input
// is a constant that is not a float initializer (a weight training may
// change): comparisons, logic, Mod, Where, Expand, Trilu, ConstantOfShape,
// Range, integer Casts, and the N-D data movement of masks (Reshape,
// Transpose, Squeeze, Unsqueeze, Slice, Concat, ScatterND, broadcasting
// Add, Sub and Mul). One MaskFolder folds one node, one method per op.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace dlc::onnx_import {

/// Folds one node of foldMaskConstant: reads its constant inputs and
/// defines its output as a constant.
class OnnxImporter::MaskFolder {
public:
  MaskFolder(OnnxImporter &im, const onnx::NodeProto &node, bool &folded)
      : im(im), node(node), op(node.op_type()), folded(folded) {}

  /// Folds the node if its op is one of the methods' below and its inputs
  /// are foldable constants; `folded` tells whether it did.
  LogicalResult fold();

private:
  // Large enough for a causal mask of a long sequence.
  static constexpr int64_t kMaxMask = int64_t(1) << 22;

  /// Input `i` if it is a constant that folds, else null.
  Constant *constant(int i) {
    Item *it = im.lookup(node, i);
    // A constant that some op already reads as a tensor still folds: its
    // value is known and, unless it is a float initializer (a weight
    // training may change, excluded below), never changes.
    if (!it || !it->constant || it->constant->external)
      return nullptr;
    Constant *c = it->constant.get();
    if ((c->isFloat && isTrainable(*c)) || c->numel() > kMaxMask)
      return nullptr;
    return c;
  }
  // Integers stay int64 from end to end (an INT64_MAX end of a Slice must
  // not pass through a double); only float data and float comparisons
  // compute in double.
  static double value(const Constant *c, int64_t i) {
    return c->isFloat ? c->floats[i] : double(c->ints[i]);
  }
  LogicalResult define(SmallVector<int64_t> shape,
                       std::shared_ptr<Constant> c) {
    c->shape = std::move(shape);
    im.defineConst(node, 0, std::move(c));
    folded = true;
    return success();
  }
  LogicalResult ints(SmallVector<int64_t> shape, std::vector<int64_t> v) {
    auto c = std::make_shared<Constant>();
    c->ints = std::move(v);
    return define(std::move(shape), c);
  }
  // A result made of elements of the inputs (Where, Expand, Trilu): the
  // element type of `like`, element i copied exactly from source(i), or 0
  // where source(i) gives no constant.
  LogicalResult
  copied(SmallVector<int64_t> shape, const Constant *like,
         function_ref<std::pair<const Constant *, int64_t>(int64_t)> source) {
    auto c = std::make_shared<Constant>();
    c->isFloat = like->isFloat;
    c->elementType = like->elementType;
    int64_t n = numElements(shape);
    for (int64_t i = 0; i < n; ++i) {
      auto [from, k] = source(i);
      if (c->isFloat)
        c->floats.push_back(from ? from->floats[k] : 0.0);
      else
        c->ints.push_back(from ? from->ints[k] : 0);
    }
    return define(std::move(shape), c);
  }
  static bool tooLarge(ArrayRef<int64_t> shape) {
    for (int64_t d : shape)
      if (d < 0 || d > kMaxMask)
        return true;
    return numElements(shape) > kMaxMask;
  }
  // The N-D data movement of masks built from constants (a shifted-window
  // attention mask: written region by region with ScatterND, viewed and
  // permuted into windows, compared pairwise). 1-D integer Slice, Concat,
  // Squeeze and Unsqueeze are shape arithmetic, which foldConstantNode
  // folds.
  static SmallVector<int64_t> strides(ArrayRef<int64_t> shape) {
    SmallVector<int64_t> st(shape.size(), 1);
    for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
      st[d] = st[d + 1] * shape[d + 1];
    return st;
  }
  static bool isData(const Constant *c) {
    return c->isFloat || c->shape.size() > 1;
  }

  /// Mod, the comparisons and And, Or, Xor, with broadcasting.
  LogicalResult foldBinary();
  LogicalResult foldNot();
  LogicalResult foldWhere();
  LogicalResult foldExpand();
  LogicalResult foldConstantOfShape();
  LogicalResult foldRange();
  LogicalResult foldCast();
  LogicalResult foldReshape();
  LogicalResult foldTranspose();
  LogicalResult foldSqueezeLike();
  LogicalResult foldSlice();
  LogicalResult foldConcat();
  LogicalResult foldScatterND();
  /// Add, Sub and Mul of masks, with broadcasting.
  LogicalResult foldArithmetic();
  LogicalResult foldTrilu();

  OnnxImporter &im;
  const onnx::NodeProto &node;
  StringRef op;
  bool &folded;
};

LogicalResult OnnxImporter::foldMaskConstant(const onnx::NodeProto &node,
                                             bool &folded) {
  folded = false;
  return MaskFolder(*this, node, folded).fold();
}

LogicalResult OnnxImporter::MaskFolder::fold() {
  static const llvm::StringSet<> binaryOps = {
      "Mod", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
      "And", "Or",    "Xor"};
  if (binaryOps.contains(op))
    return foldBinary();
  if (op == "Not")
    return foldNot();
  if (op == "Where")
    return foldWhere();
  if (op == "Expand")
    return foldExpand();
  if (op == "ConstantOfShape")
    return foldConstantOfShape();
  if (op == "Range")
    return foldRange();
  if (op == "Cast")
    return foldCast();
  if (op == "Reshape")
    return foldReshape();
  if (op == "Transpose")
    return foldTranspose();
  if (op == "Squeeze" || op == "Unsqueeze")
    return foldSqueezeLike();
  if (op == "Slice")
    return foldSlice();
  if (op == "Concat")
    return foldConcat();
  if (op == "ScatterND")
    return foldScatterND();
  if (op == "Add" || op == "Sub" || op == "Mul")
    return foldArithmetic();
  if (op == "Trilu")
    return foldTrilu();
  return success();
}

LogicalResult OnnxImporter::MaskFolder::foldBinary() {
  Constant *a = constant(0), *b = constant(1);
  if (!a || !b)
    return success();
  auto shape = broadcastShapes(a->shape, b->shape);
  if (!shape)
    return im.nodeError(node, "operands of shapes that do not broadcast");
  if (tooLarge(*shape))
    return success();
  bool isFloat = a->isFloat || b->isFloat;
  bool fmod = im.intAttr(node, "fmod", 0) != 0;
  int64_t n = numElements(*shape);
  std::vector<double> floats;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = broadcastOffset(i, *shape, a->shape);
    int64_t ib = broadcastOffset(i, *shape, b->shape);
    // Compares (or takes Mod of) int64 exactly, floats in double.
    auto cmp = [&](auto x, auto y) -> int64_t {
      return op == "Equal"            ? x == y
             : op == "Less"           ? x < y
             : op == "Greater"        ? x > y
             : op == "LessOrEqual"    ? x <= y
             : op == "GreaterOrEqual" ? x >= y
             : op == "And"            ? (x != 0 && y != 0)
             : op == "Or"             ? (x != 0 || y != 0)
                                      : ((x != 0) != (y != 0));
    };
    if (op != "Mod") {
      out.push_back(isFloat ? cmp(value(a, ia), value(b, ib))
                            : cmp(a->ints[ia], b->ints[ib]));
    } else if (isFloat) {
      double x = value(a, ia), y = value(b, ib);
      if (y == 0)
        return im.nodeError(node, "Mod by zero");
      double r = std::fmod(x, y);
      // fmod = 0: the sign of the divisor, as Python's %.
      if (!fmod && r != 0 && ((r < 0) != (y < 0)))
        r += y;
      floats.push_back(r);
    } else {
      int64_t x = a->ints[ia], y = b->ints[ib];
      if (y == 0)
        return im.nodeError(node, "Mod by zero");
      int64_t r = y == -1 ? 0 : x % y; // INT64_MIN % -1 overflows.
      if (!fmod && r != 0 && ((r < 0) != (y < 0)))
        r += y;
      out.push_back(r);
    }
  }
  if (op == "Mod" && isFloat) {
    auto c = std::make_shared<Constant>();
    c->isFloat = true;
    c->elementType = a->isFloat ? a->elementType : b->elementType;
    c->floats = std::move(floats);
    return define(*shape, c);
  }
  return ints(*shape, std::move(out));
}

LogicalResult OnnxImporter::MaskFolder::foldNot() {
  Constant *a = constant(0);
  if (!a || a->isFloat)
    return success();
  std::vector<int64_t> out;
  for (int64_t v : a->ints)
    out.push_back(v == 0);
  return ints(a->shape, std::move(out));
}

LogicalResult OnnxImporter::MaskFolder::foldWhere() {
  Constant *c = constant(0), *x = constant(1), *y = constant(2);
  if (!c || !x || !y || c->isFloat)
    return success();
  auto shape = broadcastShapes(c->shape, x->shape);
  if (shape)
    shape = broadcastShapes(*shape, y->shape);
  if (!shape)
    return im.nodeError(node, "operands of shapes that do not broadcast");
  if (tooLarge(*shape) || x->isFloat != y->isFloat)
    return success();
  return copied(*shape, x, [&](int64_t i) {
    return c->ints[broadcastOffset(i, *shape, c->shape)]
               ? std::make_pair(x, broadcastOffset(i, *shape, x->shape))
               : std::make_pair(y, broadcastOffset(i, *shape, y->shape));
  });
}

LogicalResult OnnxImporter::MaskFolder::foldExpand() {
  Constant *a = constant(0), *s = constant(1);
  if (!a || !s || s->isFloat)
    return success();
  SmallVector<int64_t> want(s->ints.begin(), s->ints.end());
  // One value written at the exported batch (BatchDim.cpp).
  std::optional<BatchDim> batchDim;
  std::shared_ptr<Constant> resized;
  if (!s->written && (resized = im.batchSplatConstant(*a, want, batchDim)))
    a = resized.get();
  auto shape = broadcastShapes(a->shape, want);
  if (!shape)
    return im.expandError(node, a->shape, want);
  if (tooLarge(*shape))
    return success();
  if (failed(copied(*shape, a, [&](int64_t i) {
        return std::make_pair(a, broadcastOffset(i, *shape, a->shape));
      })))
    return failure();
  if (batchDim)
    im.batchOverridden[node.output(0)] = *batchDim;
  return success();
}

LogicalResult OnnxImporter::MaskFolder::foldConstantOfShape() {
  Constant *s = constant(0);
  if (!s || s->isFloat)
    return success();
  SmallVector<int64_t> shape(s->ints.begin(), s->ints.end());
  if (tooLarge(shape))
    return success();
  // The value (float32 0 by default), repeated: a copy of its one
  // element into every position.
  auto fillValue = std::make_shared<Constant>();
  fillValue->isFloat = true;
  fillValue->elementType = im.builder.getF32Type();
  fillValue->floats = {0.0};
  if (const auto *a = im.attr(node, "value")) {
    auto c =
        im.readTensor(a->t(), "the value of ConstantOfShape", im.nodeLoc(node));
    if (failed(c))
      return failure();
    if ((*c)->numel() != 1)
      return im.nodeError(node, "value must have one element");
    fillValue = *c;
  }
  return copied(shape, fillValue.get(), [&](int64_t) {
    return std::make_pair(fillValue.get(), int64_t(0));
  });
}

LogicalResult OnnxImporter::MaskFolder::foldRange() {
  Constant *st = constant(0), *li = constant(1), *de = constant(2);
  if (!st || !li || !de || st->numel() != 1 || li->numel() != 1 ||
      de->numel() != 1)
    return success();
  double start = value(st, 0), limit = value(li, 0), delta = value(de, 0);
  if (delta == 0)
    return im.nodeError(node, "a delta of 0");
  double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (count > double(kMaxMask))
    return success();
  if (!st->isFloat) {
    // int64 exactly: start + i * delta stays between start and limit.
    std::vector<int64_t> out;
    for (int64_t i = 0; i < int64_t(count); ++i)
      out.push_back(st->ints[0] + i * de->ints[0]);
    return ints({int64_t(out.size())}, std::move(out));
  }
  auto c = std::make_shared<Constant>();
  c->isFloat = true;
  c->elementType = st->elementType;
  for (int64_t i = 0; i < int64_t(count); ++i)
    c->floats.push_back(start + double(i) * delta);
  return define({int64_t(c->floats.size())}, c);
}

LogicalResult OnnxImporter::MaskFolder::foldCast() {
  // To bool or an integer type; casts to float are foldFloatConstant's.
  Constant *a = constant(0);
  int64_t to = im.intAttr(node, "to", 0);
  if (!a || (to != onnx::TensorProto::BOOL && to != onnx::TensorProto::INT64 &&
             to != onnx::TensorProto::INT32))
    return success();
  std::vector<int64_t> out(a->numel());
  for (int64_t i = 0; i < a->numel(); ++i) {
    if (!a->isFloat) {
      out[i] = to == onnx::TensorProto::BOOL ? a->ints[i] != 0 : a->ints[i];
      continue;
    }
    double v = a->floats[i];
    if (to == onnx::TensorProto::BOOL) {
      out[i] = v != 0;
    } else if (!(std::abs(v) < 9.2233720368547758e18)) {
      return im.nodeError(node,
                          "cannot cast " + formatNumber(v) + " to an integer");
    } else {
      out[i] = int64_t(std::trunc(v));
    }
  }
  return ints(a->shape, std::move(out));
}

LogicalResult OnnxImporter::MaskFolder::foldReshape() {
  Constant *a = constant(0), *sc = constant(1);
  if (!a || !sc || sc->isFloat)
    return success();
  bool allowZero = im.intAttr(node, "allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  int64_t known = 1, infer = -1;
  for (auto [i, d] : llvm::enumerate(sc->ints)) {
    if (d == 0 && !allowZero) {
      if (i >= a->shape.size())
        return im.nodeError(node, "a 0 in the shape copies a dimension the "
                                  "input lacks");
      d = a->shape[i];
    }
    if (d == -1) {
      if (infer >= 0)
        return im.nodeError(node, "more than one -1 in the shape");
      infer = int64_t(i);
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      return im.nodeError(node, "a negative dimension in the shape");
    // Checked: a product that wrapped around to the element count was
    // taken for a match.
    if (d > 0 && known > kMaxElements / d)
      return im.nodeError(node, "cannot reshape " + Twine(a->numel()) +
                                    " elements into a shape of more than "
                                    "2^40");
    shape.push_back(d);
    known *= d;
  }
  if (infer >= 0)
    shape[infer] = known ? a->numel() / known : 0;
  int64_t total = infer >= 0 ? known * shape[infer] : known;
  if (total != a->numel())
    return im.nodeError(node, "cannot reshape " + Twine(a->numel()) +
                                  " elements into " + Twine(total));
  return copied(shape, a, [&](int64_t i) { return std::make_pair(a, i); });
}

LogicalResult OnnxImporter::MaskFolder::foldTranspose() {
  Constant *a = constant(0);
  if (!a)
    return success();
  int64_t rank = a->shape.size();
  SmallVector<int64_t> perm = im.intsAttr(node, "perm");
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  SmallVector<bool> seen(rank, false);
  if (int64_t(perm.size()) != rank)
    return im.nodeError(node, "perm must have one entry per dimension");
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return im.nodeError(node, "perm is not a permutation");
    seen[p] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(a->shape[p]);
  SmallVector<int64_t> in = strides(a->shape);
  return copied(shape, a, [&](int64_t i) {
    int64_t off = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      off += (i % shape[d]) * in[perm[d]];
      i /= shape[d];
    }
    return std::make_pair(a, off);
  });
}

LogicalResult OnnxImporter::MaskFolder::foldSqueezeLike() {
  Constant *a = constant(0);
  if (!a || !isData(a))
    return success();
  SmallVector<int64_t> axes;
  if (im.hasInput(node, 1)) {
    Constant *ax = constant(1);
    if (!ax || ax->isFloat)
      return success();
    axes.assign(ax->ints.begin(), ax->ints.end());
  } else {
    axes = im.intsAttr(node, "axes");
  }
  auto shape = im.squeezedShape(node, a->shape, axes, op == "Unsqueeze");
  if (failed(shape))
    return failure();
  return copied(*shape, a, [&](int64_t i) { return std::make_pair(a, i); });
}

LogicalResult OnnxImporter::MaskFolder::foldSlice() {
  Constant *a = constant(0);
  if (!a || !isData(a))
    return success();
  int64_t rank = a->shape.size();
  auto intsOf = [&](int i) -> std::optional<std::vector<int64_t>> {
    Constant *c = im.hasInput(node, i) ? constant(i) : nullptr;
    if (!c || c->isFloat)
      return std::nullopt;
    return c->ints;
  };
  auto starts = intsOf(1), ends = intsOf(2);
  if (!starts || !ends || starts->size() != ends->size())
    return success();
  std::vector<int64_t> axes, steps(starts->size(), 1);
  if (im.hasInput(node, 3)) {
    auto v = intsOf(3);
    if (!v)
      return success();
    axes = *v;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(int64_t(i));
  }
  if (im.hasInput(node, 4)) {
    auto v = intsOf(4);
    if (!v)
      return success();
    steps = *v;
  }
  if (axes.size() != starts->size() || steps.size() != starts->size())
    return im.nodeError(node, "starts, ends, axes and steps differ in length");
  SmallVector<int64_t> begin(rank, 0), step(rank, 1), shape(a->shape);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = im.normAxis(node, axes[i], rank);
    if (failed(ax))
      return failure();
    int64_t dim = a->shape[*ax], st = steps[i];
    if (st == 0)
      return im.nodeError(node, "a step of 0");
    // ONNX's clamping: negative values count from the end; a forward
    // window lies in [0, dim], a backward one starts in [0, dim - 1]
    // and ends in [-1, dim - 1].
    int64_t b = (*starts)[i], e = (*ends)[i];
    if (b < 0)
      b += dim;
    if (e < 0)
      e += dim;
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    int64_t mag = st == INT64_MIN ? INT64_MAX : std::abs(st);
    int64_t n = st > 0 ? (e > b ? (e - b - 1) / mag + 1 : 0)
                       : (b > e ? (b - e - 1) / mag + 1 : 0);
    begin[*ax] = b;
    step[*ax] = st;
    shape[*ax] = n;
  }
  SmallVector<int64_t> in = strides(a->shape);
  return copied(shape, a, [&](int64_t i) {
    int64_t off = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      off += (begin[d] + (i % shape[d]) * step[d]) * in[d];
      i /= shape[d];
    }
    return std::make_pair(a, off);
  });
}

LogicalResult OnnxImporter::MaskFolder::foldConcat() {
  SmallVector<Constant *> parts;
  bool data = false;
  for (int i = 0; i < node.input_size(); ++i) {
    Constant *c = constant(i);
    if (!c)
      return success();
    data = data || isData(c);
    parts.push_back(c);
  }
  if (!data || parts.empty())
    return success();
  int64_t rank = parts[0]->shape.size();
  auto axis = im.normAxis(node, im.intAttr(node, "axis", 0), rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(parts[0]->shape);
  shape[*axis] = 0;
  for (Constant *c : parts) {
    if (int64_t(c->shape.size()) != rank || c->isFloat != parts[0]->isFloat)
      return im.nodeError(node, "inputs of different ranks or types");
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && c->shape[d] != parts[0]->shape[d])
        return im.nodeError(node, "inputs differ outside the axis");
    shape[*axis] += c->shape[*axis];
  }
  return copied(shape, parts[0], [&](int64_t i) {
    SmallVector<int64_t> idx(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      idx[d] = i % shape[d];
      i /= shape[d];
    }
    for (Constant *c : parts) {
      if (idx[*axis] < c->shape[*axis]) {
        int64_t off = 0;
        SmallVector<int64_t> st = strides(c->shape);
        for (int64_t d = 0; d < rank; ++d)
          off += idx[d] * st[d];
        return std::make_pair(static_cast<const Constant *>(c), off);
      }
      idx[*axis] -= c->shape[*axis];
    }
    return std::make_pair(static_cast<const Constant *>(nullptr), int64_t(0));
  });
}

LogicalResult OnnxImporter::MaskFolder::foldScatterND() {
  // The updates may be a float initializer (the exporter's, not a
  // weight: what a mask's region is set to); the data must be folded.
  Constant *a = constant(0), *idx = constant(1), *upd = constant(2);
  if (!upd && a) {
    Item *it = im.lookup(node, 2);
    if (it && it->constant && !it->constant->external &&
        it->constant->numel() <= kMaxMask)
      upd = it->constant.get();
  }
  if (!a || !idx || !upd || idx->isFloat || idx->shape.empty())
    return success();
  if (im.stringAttr(node, "reduction", "none") != "none")
    return im.nodeError(node, "only reduction 'none' folds");
  int64_t rank = a->shape.size(), k = idx->shape.back();
  if (k < 1 || k > rank)
    return im.nodeError(node, "indices address " + Twine(k) +
                                  " dimensions of a rank-" + Twine(rank) +
                                  " tensor");
  int64_t slice = numElements(ArrayRef<int64_t>(a->shape).drop_front(k));
  int64_t count = idx->numel() / k;
  if (upd->numel() != count * slice || upd->isFloat != a->isFloat)
    return im.nodeError(node, "updates do not match the indices");
  SmallVector<int64_t> st = strides(a->shape);
  // Element i of the result comes from the last update that writes it.
  std::vector<int64_t> from(a->numel(), -1);
  for (int64_t j = 0; j < count; ++j) {
    int64_t off = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t v = idx->ints[j * k + d];
      if (v < 0)
        v += a->shape[d];
      if (v < 0 || v >= a->shape[d])
        return im.nodeError(node, "an index outside the data");
      off += v * st[d];
    }
    for (int64_t e = 0; e < slice; ++e)
      from[off + e] = j * slice + e;
  }
  return copied(a->shape, a, [&](int64_t i) {
    return from[i] < 0
               ? std::make_pair(static_cast<const Constant *>(a), i)
               : std::make_pair(static_cast<const Constant *>(upd), from[i]);
  });
}

LogicalResult OnnxImporter::MaskFolder::foldArithmetic() {
  // Broadcasting arithmetic of masks (foldFloatConstant takes equal
  // shapes and scalars; foldConstantNode the integer shape arithmetic).
  Constant *a = constant(0), *b = constant(1);
  if (!a || !b || a->isFloat != b->isFloat || (!isData(a) && !isData(b)) ||
      (a->isFloat && a->elementType != b->elementType))
    return success();
  auto shape = broadcastShapes(a->shape, b->shape);
  if (!shape)
    return im.nodeError(node, "operands of shapes that do not broadcast");
  if (tooLarge(*shape))
    return success();
  int64_t n = numElements(*shape);
  auto c = std::make_shared<Constant>();
  c->isFloat = a->isFloat;
  c->elementType = a->elementType;
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = broadcastOffset(i, *shape, a->shape);
    int64_t ib = broadcastOffset(i, *shape, b->shape);
    if (c->isFloat) {
      double x = a->floats[ia], y = b->floats[ib];
      double r = op == "Add" ? x + y : op == "Sub" ? x - y : x * y;
      APFloat f(r);
      bool lost;
      f.convert(cast<FloatType>(c->elementType).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      c->floats.push_back(f.convertToDouble());
    } else {
      int64_t x = a->ints[ia], y = b->ints[ib], r;
      bool overflow = op == "Add"   ? llvm::AddOverflow(x, y, r)
                      : op == "Sub" ? llvm::SubOverflow(x, y, r)
                                    : llvm::MulOverflow(x, y, r);
      if (overflow)
        return im.nodeError(node, "int64 overflow");
      c->ints.push_back(r);
    }
  }
  return define(*shape, c);
}

LogicalResult OnnxImporter::MaskFolder::foldTrilu() {
  Constant *a = constant(0);
  if (!a || a->shape.size() < 2)
    return success();
  int64_t k = 0;
  if (im.hasInput(node, 1)) {
    Constant *kc = constant(1);
    if (!kc || kc->isFloat || kc->numel() != 1)
      return success();
    k = kc->ints[0];
  }
  bool upper = im.intAttr(node, "upper", 1) != 0;
  int64_t rows = a->shape[a->shape.size() - 2], cols = a->shape.back();
  return copied(a->shape, a, [&](int64_t i) {
    int64_t c = i % cols, r = (i / cols) % rows;
    bool keep = upper ? c - r >= k : c - r <= k;
    return std::make_pair(keep ? a : nullptr, i);
  });
}

} // namespace dlc::onnx_import
