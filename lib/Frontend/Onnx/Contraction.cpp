//===- Contraction.cpp - Gemm and MatMul
//------------------------------------===//
//
// Gemm becomes dlc.linear; MatMul dlc.matmul, batched and broadcast.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace dlc::onnx_import {

LogicalResult OnnxImporter::importGemm(const onnx::NodeProto &node) {
  auto a = tensor(node, 0);
  if (failed(a))
    return failure();
  auto b = tensor(node, 1);
  if (failed(b))
    return failure();
  if (typeOf(*a).getRank() != 2 || typeOf(*b).getRank() != 2)
    return nodeError(node, "Gemm needs rank-2 operands, not " +
                               Twine(typeOf(*a).getRank()) + " and " +
                               Twine(typeOf(*b).getRank()));
  Location loc = nodeLoc(node);
  auto transpose = [&](Value v) -> Value {
    auto t = typeOf(v);
    auto type = RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)},
                                      t.getElementType());
    return ddlc::TransposeOp::create(builder, loc, type, v,
                                     ArrayRef<int64_t>{1, 0});
  };
  Value x = intAttr(node, "transA", 0) ? transpose(*a) : *a;
  // dlc.linear takes the weight as [out, in], which is B with transB = 1.
  Value w = intAttr(node, "transB", 0) ? *b : transpose(*b);
  auto tx = typeOf(x), tw = typeOf(w);
  if (tx.getDimSize(1) != tw.getDimSize(1))
    return nodeError(node, "inner dimensions differ (" +
                               Twine(tx.getDimSize(1)) + " vs " +
                               Twine(tw.getDimSize(1)) + ")");
  int64_t m = tx.getDimSize(0), n = tw.getDimSize(0);
  auto resultType = RankedTensorType::get({m, n}, tx.getElementType());
  float alpha = floatAttr(node, "alpha", 1.0f);
  float beta = floatAttr(node, "beta", 1.0f);
  if (alpha != 1.0f)
    x = ddlc::ScaleOp::create(builder, loc, x, builder.getF64FloatAttr(alpha));

  Value bias, rest;
  if (hasInput(node, 2) && beta != 0.0f) {
    auto c = tensor(node, 2);
    if (failed(c))
      return failure();
    Value cv = *c;
    if (beta != 1.0f)
      cv = ddlc::ScaleOp::create(builder, loc, cv,
                                 builder.getF64FloatAttr(beta));
    ArrayRef<int64_t> cs = typeOf(cv).getShape();
    bool isBias = (cs.size() == 1 && cs[0] == n) ||
                  (cs.size() == 2 && cs[0] == 1 && cs[1] == n);
    if (isBias) {
      auto r = reshape(node, cv, {n});
      if (failed(r))
        return failure();
      bias = *r;
    } else {
      rest = cv;
    }
  }
  Value y = ddlc::LinearOp::create(builder, loc, resultType, x, w, bias);
  if (rest) {
    auto r = binary(node, "Add", y, rest);
    if (failed(r))
      return failure();
    if (typeOf(*r).getShape() != resultType.getShape())
      return nodeError(node, "C does not broadcast to the result shape");
    y = *r;
  }
  define(node, 0, y);
  return success();
}

LogicalResult OnnxImporter::importMatMul(const onnx::NodeProto &node) {
  auto a = tensor(node, 0);
  if (failed(a))
    return failure();
  auto b = tensor(node, 1);
  if (failed(b))
    return failure();
  auto ta = typeOf(*a), tb = typeOf(*b);
  ArrayRef<int64_t> sa = ta.getShape(), sb = tb.getShape();
  Type et = ta.getElementType();
  Location loc = nodeLoc(node);
  if (sa.size() < 2 || sb.size() < 2)
    return nodeError(node, "rank-1 operands are not supported (ranks " +
                               Twine(sa.size()) + " and " + Twine(sb.size()) +
                               ")");
  int64_t m = sa[sa.size() - 2], k = sa.back();
  int64_t k2 = sb[sb.size() - 2], n = sb.back();
  if (k != k2)
    return nodeError(node, "inner dimensions differ (" + Twine(k) + " vs " +
                               Twine(k2) + ")");
  Value r;
  if (sb.size() == 2) {
    // [..., M, K] x [K, N]: one GEMM over all leading dimensions.
    int64_t rows = ta.getNumElements() / k;
    auto a2 = reshape(node, *a, {rows, k});
    if (failed(a2))
      return failure();
    Value mm = ddlc::MatmulOp::create(
        builder, loc, RankedTensorType::get({rows, n}, et), *a2, *b);
    SmallVector<int64_t> shape(sa.begin(), sa.end());
    shape.back() = n;
    auto out = reshape(node, mm, shape);
    if (failed(out))
      return failure();
    r = *out;
  } else {
    // One batched matmul over the batch dimensions, broadcast (NumPy rules)
    // when they differ: [M, K] x [B, K, N], [B, 1, M, K] x [H, K, N], ...
    ArrayRef<int64_t> ba = sa.drop_back(2), bb = sb.drop_back(2);
    size_t rank = std::max(ba.size(), bb.size());
    SmallVector<int64_t> bshape(rank);
    int64_t batch = 1;
    for (size_t i = 0; i < rank; ++i) {
      int64_t da = i < rank - ba.size() ? 1 : ba[i - (rank - ba.size())];
      int64_t db = i < rank - bb.size() ? 1 : bb[i - (rank - bb.size())];
      if (da != db && da != 1 && db != 1)
        return nodeError(node, "batch dimensions do not broadcast (dimension " +
                                   Twine(i) + ": " + Twine(da) + " vs " +
                                   Twine(db) + ")");
      bshape[i] = da == 1 ? db : da;
      batch *= bshape[i];
    }
    auto expand = [&](Value v, int64_t rows, int64_t cols) -> Value {
      SmallVector<int64_t> full(bshape);
      full.push_back(rows);
      full.push_back(cols);
      if (typeOf(v).getShape() == ArrayRef<int64_t>(full))
        return v;
      return ddlc::BroadcastToOp::create(builder, loc,
                                         RankedTensorType::get(full, et), v);
    };
    auto a3 = reshape(node, expand(*a, m, k), {batch, m, k});
    auto b3 = reshape(node, expand(*b, k, n), {batch, k, n});
    if (failed(a3) || failed(b3))
      return failure();
    Value mm = ddlc::MatmulOp::create(
        builder, loc, RankedTensorType::get({batch, m, n}, et), *a3, *b3);
    SmallVector<int64_t> shape(bshape);
    shape.push_back(m);
    shape.push_back(n);
    auto out = reshape(node, mm, shape);
    if (failed(out))
      return failure();
    r = *out;
  }
  define(node, 0, r);
  return success();
}

} // namespace dlc::onnx_import
