//===- Folding.cpp - Constant folding of shapes and scalars ---------------===//
//
// The arithmetic exporters leave on constants: integer shape arithmetic,
// masks (comparisons, logic, Where, Trilu, ...) and float scalars, folded
// at import time so that only data reaches the IR. This file folds the
// shapes and the float scalars; MaskFolding.cpp folds the masks.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace dlc::onnx_import {

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

LogicalResult OnnxImporter::foldConstantNode(const onnx::NodeProto &node,
                                             bool &folded) {
  StringRef op = node.op_type();
  folded = false;
  auto constant = [&](int i) -> Constant * {
    Item *it = lookup(node, i);
    return it && it->constant && !it->value ? it->constant.get() : nullptr;
  };
  auto intConst = [&](int i) -> Constant * {
    Constant *c = constant(i);
    return c && !c->isFloat ? c : nullptr;
  };
  auto result = [&](SmallVector<int64_t> shape, std::vector<int64_t> ints) {
    auto c = std::make_shared<Constant>();
    c->shape = std::move(shape);
    c->ints = std::move(ints);
    defineConst(node, 0, c);
    folded = true;
    return success();
  };

  if (op == "Shape") {
    // Every shape is static: Shape is always a constant.
    Item *in = lookup(node, 0);
    if (!in)
      return nodeError(node, "needs one input");
    SmallVector<int64_t> shape;
    if (in->value)
      shape.assign(typeOf(in->value).getShape().begin(),
                   typeOf(in->value).getShape().end());
    else if (in->constant)
      shape = in->constant->shape;
    else
      return success();
    int64_t rank = shape.size();
    int64_t start = intAttr(node, "start", 0), end = intAttr(node, "end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    std::vector<int64_t> dims;
    for (int64_t i = start; i < end; ++i)
      dims.push_back(shape[i]);
    return result({int64_t(dims.size())}, dims);
  }
  if (op == "Constant" || node.input_size() == 0)
    return success();
  if (failed(foldFloatConstant(node, folded)))
    return failure();
  if (folded)
    return success();
  if (failed(foldMaskConstant(node, folded)))
    return failure();
  if (folded)
    return success();
  // The ops below fold when every input is an int64 constant.
  for (int i = 0; i < node.input_size(); ++i)
    if (hasInput(node, i) && !intConst(i))
      return success();
  Constant *a = intConst(0);
  if (!a)
    return success();
  int64_t rank = a->shape.size();

  if (op == "Identity")
    return result(a->shape, a->ints);
  if (op == "Cast") {
    int64_t to = intAttr(node, "to", 0);
    if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32)
      return success();
    return result(a->shape, a->ints);
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    Constant *b = intConst(1);
    if (!b)
      return success();
    if (a->numel() != b->numel() && a->numel() != 1 && b->numel() != 1)
      return nodeError(node, "integer operands of different sizes");
    // A one-element operand broadcasts, also against an empty one.
    const Constant *big = a;
    if (a->numel() == 1 &&
        (b->numel() != 1 || b->shape.size() > a->shape.size()))
      big = b;
    std::vector<int64_t> out(big->numel());
    for (int64_t i = 0; i < big->numel(); ++i) {
      int64_t x = a->ints[a->numel() == 1 ? 0 : i];
      int64_t y = b->ints[b->numel() == 1 ? 0 : i];
      if (op == "Div" && y == 0)
        return nodeError(node, "integer division by zero");
      std::optional<int64_t> r = op == "Add"   ? llvm::checkedAdd(x, y)
                                 : op == "Sub" ? llvm::checkedSub(x, y)
                                 : op == "Mul" ? llvm::checkedMul(x, y)
                                 : (x == INT64_MIN && y == -1)
                                     ? std::nullopt
                                     : std::optional<int64_t>(x / y);
      if (!r)
        return nodeError(node, "integer overflow in " + op + " of " + Twine(x) +
                                   " and " + Twine(y));
      out[i] = *r;
    }
    return result(big->shape, out);
  }
  if (op == "ReduceProd") {
    // torch.var/std with a dynamic batch: the element count of a shape.
    SmallVector<int64_t> axes = intsAttr(node, "axes");
    if (Constant *c = intConst(1))
      axes.assign(c->ints.begin(), c->ints.end());
    if (rank != 1 && !axes.empty() && int64_t(axes.size()) != rank)
      return nodeError(node, "dlc folds ReduceProd of integer tensors over "
                             "all dimensions only");
    int64_t p = 1;
    for (int64_t v : a->ints) {
      std::optional<int64_t> r = llvm::checkedMul(p, v);
      if (!r)
        return nodeError(node, "integer overflow in ReduceProd");
      p = *r;
    }
    bool keep = intAttr(node, "keepdims", 1) != 0;
    return result(keep ? SmallVector<int64_t>(rank, 1) : SmallVector<int64_t>(),
                  {p});
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    SmallVector<int64_t> axes;
    if (Constant *c = intConst(1))
      axes.assign(c->ints.begin(), c->ints.end());
    else
      axes = intsAttr(node, "axes");
    SmallVector<int64_t> shape;
    if (op == "Unsqueeze") {
      auto s = squeezedShape(node, a->shape, axes, /*unsqueeze=*/true);
      if (failed(s))
        return failure();
      shape = *s;
    } else {
      for (int64_t i = 0; i < rank; ++i)
        if (a->shape[i] != 1 ||
            (!axes.empty() && !llvm::is_contained(axes, i) &&
             !llvm::is_contained(axes, i - rank)))
          shape.push_back(a->shape[i]);
    }
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (n != a->numel())
      return nodeError(node, "invalid axes");
    return result(shape, a->ints);
  }
  if (op == "Concat") {
    std::vector<int64_t> out;
    for (int i = 0; i < node.input_size(); ++i) {
      Constant *c = intConst(i);
      if (!c)
        return nodeError(node, "input " + Twine(i) + " is absent");
      if (c->shape.size() != 1)
        return nodeError(node, "dlc folds Concat of 1-D integer tensors only");
      out.insert(out.end(), c->ints.begin(), c->ints.end());
    }
    return result({int64_t(out.size())}, out);
  }
  if (op == "Gather") {
    Constant *idx = intConst(1);
    if (!idx || rank != 1 || intAttr(node, "axis", 0) != 0)
      return nodeError(node, "dlc folds Gather of a 1-D integer tensor along "
                             "axis 0 only");
    std::vector<int64_t> out;
    for (int64_t i : idx->ints) {
      if (i < -a->numel() || i >= a->numel())
        return nodeError(node, "index " + Twine(i) + " is out of range");
      out.push_back(a->ints[i < 0 ? i + a->numel() : i]);
    }
    return result(idx->shape, out);
  }
  if (op == "Slice") {
    if (rank != 1)
      return nodeError(node, "dlc folds Slice of 1-D integer tensors only");
    Constant *starts = intConst(1), *ends = intConst(2);
    Constant *steps = intConst(4);
    if (!starts || !ends || starts->numel() != 1 || ends->numel() != 1)
      return nodeError(node, "dlc folds Slice with one constant start and end");
    int64_t n = a->numel();
    int64_t step = steps && steps->numel() == 1 ? steps->ints[0] : 1;
    if (step != 1)
      return nodeError(node, "dlc folds Slice with step 1 only");
    int64_t s = starts->ints[0], e = ends->ints[0];
    s = std::clamp<int64_t>(s < 0 ? s + n : s, 0, n);
    e = std::clamp<int64_t>(e < 0 ? e + n : e, 0, n);
    std::vector<int64_t> out;
    for (int64_t i = s; i < e; ++i)
      out.push_back(a->ints[i]);
    return result({int64_t(out.size())}, out);
  }
  return success();
}

LogicalResult OnnxImporter::foldFloatConstant(const onnx::NodeProto &node,
                                              bool &folded) {
  // Float arithmetic on constants that are not parameters: a Cast of a
  // folded dimension, Constant nodes. Exporters emit it around shapes, e.g.
  // `q @ k.T * (C // h) ** -0.5` or torch.var's `n / (n - 1)` with a dynamic
  // batch. Each result is rounded to its element type, as ONNX computes.
  StringRef op = node.op_type();
  folded = false;
  auto constant = [&](int i) -> Constant * {
    Item *it = lookup(node, i);
    return it && it->constant ? it->constant.get() : nullptr;
  };
  auto floatConst = [&](int i) -> Constant * {
    Constant *c = constant(i);
    return c && c->isFloat && c->initializer.empty() ? c : nullptr;
  };
  auto round = [](Type et, double v) {
    APFloat f(v);
    bool lost;
    f.convert(cast<FloatType>(et).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  };
  auto result = [&](Type et, SmallVector<int64_t> shape,
                    std::vector<double> floats) {
    auto c = std::make_shared<Constant>();
    c->isFloat = true;
    c->elementType = et;
    c->shape = std::move(shape);
    for (double &v : floats)
      v = round(et, v);
    c->floats = std::move(floats);
    defineConst(node, 0, c);
    folded = true;
    return success();
  };
  // Small constants only: anything larger is computed by the model.
  constexpr int64_t kMaxFolded = 4096;

  if (op == "Cast") {
    Constant *a = constant(0);
    if (!a || (a->isFloat && !a->initializer.empty()) ||
        a->numel() > kMaxFolded)
      return success();
    Type et;
    switch (intAttr(node, "to", 0)) {
    case onnx::TensorProto::FLOAT:
      et = builder.getF32Type();
      break;
    case onnx::TensorProto::FLOAT16:
      et = builder.getF16Type();
      break;
    case onnx::TensorProto::BFLOAT16:
      et = builder.getBF16Type();
      break;
    default:
      return success(); // int casts fold below
    }
    std::vector<double> out =
        a->isFloat ? a->floats
                   : std::vector<double>(a->ints.begin(), a->ints.end());
    return result(et, a->shape, out);
  }
  bool unary = op == "Sqrt" || op == "Neg";
  bool binary =
      op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow";
  if (!unary && !binary)
    return success();
  Constant *a = floatConst(0);
  if (!a || a->numel() > kMaxFolded)
    return success();
  if (unary) {
    std::vector<double> out = a->floats;
    for (double &v : out)
      v = op == "Sqrt" ? std::sqrt(v) : -v;
    return result(a->elementType, a->shape, out);
  }
  Constant *b = constant(1);
  if (!b || (b->isFloat && !b->initializer.empty()) ||
      (!b->isFloat && op != "Pow") || b->numel() > kMaxFolded ||
      (b->isFloat && b->elementType != a->elementType))
    return success();
  // Equal shapes or a scalar operand; anything else is left to the model.
  SmallVector<int64_t> shape;
  if (a->shape == b->shape)
    shape = a->shape;
  else if (b->numel() == 1 && b->shape.size() <= a->shape.size())
    shape = a->shape;
  else if (a->numel() == 1 && a->shape.size() <= b->shape.size())
    shape = b->shape;
  else
    return success();
  std::vector<double> out(a->numel() == 1 ? b->numel() : a->numel());
  for (size_t i = 0; i < out.size(); ++i) {
    double x = a->floats[a->numel() == 1 ? 0 : i];
    double y = b->isFloat ? b->floats[b->numel() == 1 ? 0 : i]
                          : double(b->ints[b->numel() == 1 ? 0 : i]);
    out[i] = op == "Add"   ? x + y
             : op == "Sub" ? x - y
             : op == "Mul" ? x * y
             : op == "Div" ? x / y
                           : std::pow(x, y);
  }
  return result(a->elementType, shape, out);
}

} // namespace dlc::onnx_import
