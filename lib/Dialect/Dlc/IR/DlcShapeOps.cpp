//===- DlcShapeOps.cpp - Shape manipulation ops ---------------------------===//
//
// The verifiers, folders and canonicalisation patterns of the ops that move
// data without computing on it (reshape, concat, slice, gather,
// gather_elements, transpose and their gradients) and of the broadcasting
// selections and comparisons (where, compare, logical); also the add
// patterns that join the gradients of adjacent slices and sums of thin
// matmuls with a concat.
//
//===----------------------------------------------------------------------===//

#include "DlcOpsUtils.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::oputils;

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = tensorTy(getInput()), out = tensorTy(getResult());
  if (in.getElementType() != out.getElementType())
    return emitOpError("must keep the element type");
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return emitOpError("needs static shapes");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << shapeStr(in.getShape()) << " (" << in.getNumElements()
           << " elements) into " << shapeStr(out.getShape()) << " ("
           << out.getNumElements() << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

namespace {
/// reshape(reshape(x)) -> reshape(x)
struct FoldReshapeChain : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getInput());
    return success();
  }
};

/// transpose(transpose(x, p), q) -> transpose(x, p o q)
struct FoldTransposeChain : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    ArrayRef<int64_t> p = inner.getPermutation(), q = op.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t i : q)
      composed.push_back(p[i]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getInput(),
                                             composed);
    return success();
  }
};
} // namespace

/// The inputs of `v` joined along `dim`: those of a concat along `dim`
/// used only here, else `v` itself.
static void appendConcatInputs(Value v, int64_t dim,
                               SmallVectorImpl<Value> &out) {
  auto concat = v.getDefiningOp<ConcatOp>();
  if (concat && v.hasOneUse() && static_cast<int64_t>(concat.getDim()) == dim)
    llvm::append_range(out, concat.getInputs());
  else
    out.push_back(v);
}

static Value concatAlong(PatternRewriter &rewriter, Location loc, Value a,
                         Value b, int64_t dim) {
  SmallVector<Value> inputs;
  appendConcatInputs(a, dim, inputs);
  appendConcatInputs(b, dim, inputs);
  auto ta = cast<RankedTensorType>(a.getType());
  SmallVector<int64_t> shape(ta.getShape());
  shape[dim] += cast<RankedTensorType>(b.getType()).getDimSize(dim);
  return ConcatOp::create(rewriter, loc,
                          RankedTensorType::get(shape, ta.getElementType()),
                          inputs, dim);
}

namespace {

/// slice_grad(a) + slice_grad(b) -> slice_grad(concat(a, b)) when the two
/// unit-stride windows of one tensor lie side by side along one dimension
/// (the gradients of the slices an unrolled recurrent op or a split
/// takes); a window that covers the whole tensor is the concat itself.
/// Exact: each element is one window's value plus zeros.
struct JoinAdjacentSliceGrads : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto x = op.getLhs().getDefiningOp<SliceGradOp>();
    auto y = op.getRhs().getDefiningOp<SliceGradOp>();
    if (!x || !y || !op.getLhs().hasOneUse() || !op.getRhs().hasOneUse() ||
        x.getType() != op.getType() || y.getType() != op.getType())
      return failure();
    auto unit = [](ArrayRef<int64_t> s) {
      return llvm::all_of(s, [](int64_t v) { return v == 1; });
    };
    if (!unit(x.getStrides()) || !unit(y.getStrides()))
      return failure();
    auto tx = cast<RankedTensorType>(x.getGrad().getType());
    auto ty = cast<RankedTensorType>(y.getGrad().getType());
    ArrayRef<int64_t> ox = x.getOffsets(), oy = y.getOffsets();
    int64_t rank = tx.getRank(), dim = -1;
    for (int64_t d = 0; d < rank; ++d) {
      if (ox[d] == oy[d] && tx.getDimSize(d) == ty.getDimSize(d))
        continue;
      if (dim >= 0)
        return failure();
      dim = d;
    }
    if (dim < 0)
      return failure();
    // First and second window along `dim`.
    SliceGradOp first = x, second = y;
    if (oy[dim] + ty.getDimSize(dim) == ox[dim])
      std::swap(first, second);
    auto tf = cast<RankedTensorType>(first.getGrad().getType());
    if (first.getOffsets()[dim] + tf.getDimSize(dim) !=
        second.getOffsets()[dim])
      return failure();
    Value joined = concatAlong(rewriter, op.getLoc(), first.getGrad(),
                               second.getGrad(), dim);
    if (joined.getType() == op.getType()) {
      rewriter.replaceOp(op, joined);
      return success();
    }
    rewriter.replaceOpWithNewOp<SliceGradOp>(op, op.getType(), joined,
                                             first.getOffsetsAttr(),
                                             first.getStridesAttr());
    return success();
  }
};

/// matmul(a1, b1) + matmul(a2, b2) -> matmul(concat(a1, a2, 1),
/// concat(b1, b2, 0)) for rank-2 products of one shape where one inner
/// dimension is small: one GEMM over the joined inner dimension instead of
/// thin GEMMs and the sums between them (the weight gradient of a layer an
/// unrolled recurrent op applies at every step). The sum is rounded once
/// per GEMM block instead of once per product.
struct JoinMatmulSum : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  static constexpr int64_t kThinInner = 128;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto x = op.getLhs().getDefiningOp<MatmulOp>();
    auto y = op.getRhs().getDefiningOp<MatmulOp>();
    if (!x || !y || !op.getLhs().hasOneUse() || !op.getRhs().hasOneUse() ||
        x.getType() != op.getType() || y.getType() != op.getType() ||
        cast<RankedTensorType>(op.getType()).getRank() != 2)
      return failure();
    int64_t kx = cast<RankedTensorType>(x.getLhs().getType()).getDimSize(1);
    int64_t ky = cast<RankedTensorType>(y.getLhs().getType()).getDimSize(1);
    if (std::min(kx, ky) > kThinInner)
      return failure();
    Location loc = op.getLoc();
    Value a = concatAlong(rewriter, loc, x.getLhs(), y.getLhs(), 1);
    Value b = concatAlong(rewriter, loc, x.getRhs(), y.getRhs(), 0);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), a, b);
    return success();
  }
};

} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<JoinAdjacentSliceGrads, JoinMatmulSum>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldReshapeChain>(context);
}

LogicalResult ConcatOp::verify() {
  auto out = cast<RankedTensorType>(getType());
  int64_t rank = out.getRank(), dim = getDim();
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  if (dim < 0 || dim >= rank)
    return emitOpError("dim ") << dim << " is out of range for rank " << rank;
  int64_t total = 0;
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != rank || t.getElementType() != out.getElementType())
      return emitOpError("input ")
             << i << " must be a rank-" << rank << " tensor of "
             << out.getElementType() << ", got " << t;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && t.getDimSize(d) != out.getDimSize(d))
        return emitOpError("input ")
               << i << " has shape " << shapeStr(t.getShape())
               << ", which does not match the result "
               << shapeStr(out.getShape()) << " outside dim " << dim;
    total += t.getDimSize(dim);
  }
  if (total != out.getDimSize(dim))
    return emitOpError("the inputs add up to ")
           << total << " along dim " << dim << ", the result has "
           << out.getDimSize(dim);
  return success();
}

/// Checks that a window of `window`'s shape at `offsets` with `strides`
/// lies inside `full`, both of one rank and element type.
static LogicalResult verifyWindow(Operation *op, RankedTensorType full,
                                  RankedTensorType window,
                                  ArrayRef<int64_t> offsets,
                                  ArrayRef<int64_t> strides) {
  int64_t rank = full.getRank();
  if (window.getRank() != rank ||
      window.getElementType() != full.getElementType())
    return op->emitOpError("the window ")
           << window << " and the tensor " << full
           << " must have one rank and element type";
  if (int64_t(offsets.size()) != rank || int64_t(strides.size()) != rank)
    return op->emitOpError("needs ")
           << rank << " offsets and strides, got " << offsets.size() << " and "
           << strides.size();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = window.getDimSize(d), in = full.getDimSize(d);
    if (offsets[d] < 0 || strides[d] == 0)
      return op->emitOpError("dim ")
             << d << ": offset " << offsets[d] << " must be non-negative and "
             << "stride " << strides[d] << " non-zero";
    // The last element, offset + (size - 1) * stride, lies in [0, in) too
    // (a negative stride walks backwards from the offset).
    int64_t room = strides[d] > 0 ? (in - 1 - offsets[d]) / strides[d]
                                  : offsets[d] / -strides[d];
    if (size > 0 && (offsets[d] >= in || size - 1 > room))
      return op->emitOpError("dim ")
             << d << ": a window of " << size << " at offset " << offsets[d]
             << " with stride " << strides[d] << " does not fit in " << in;
  }
  return success();
}

LogicalResult SliceOp::verify() {
  return verifyWindow(*this, cast<RankedTensorType>(getInput().getType()),
                      cast<RankedTensorType>(getType()), getOffsets(),
                      getStrides());
}

namespace {

/// A unit-stride window of a tensor that is whole in every dimension but
/// `dim`: elements [offset, offset + size) along `dim`.
struct Band {
  int64_t offset, size;
};

/// `op`'s window as a band along `dim`, if it is one.
std::optional<Band> bandAlong(SliceOp op, int64_t dim) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto out = cast<RankedTensorType>(op.getType());
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (op.getStrides()[d] != 1)
      return std::nullopt;
    if (d != dim &&
        (op.getOffsets()[d] != 0 || out.getDimSize(d) != in.getDimSize(d)))
      return std::nullopt;
  }
  return Band{op.getOffsets()[dim], out.getDimSize(dim)};
}

/// Elements [offset, offset + size) of `v` along `dim`: `v` itself when
/// that is all of it, else a new slice.
Value bandOf(PatternRewriter &rewriter, Location loc, Value v, int64_t dim,
             int64_t offset, int64_t size) {
  auto type = cast<RankedTensorType>(v.getType());
  if (offset == 0 && size == type.getDimSize(dim))
    return v;
  SmallVector<int64_t> shape(type.getShape()), offsets(type.getRank(), 0),
      strides(type.getRank(), 1);
  shape[dim] = size;
  offsets[dim] = offset;
  return SliceOp::create(rewriter, loc, type.clone(shape), v, offsets, strides);
}

/// slice(concat(a, b, c)) -> the parts of a, b and c the band covers,
/// joined (one part: itself).
struct SliceOfConcat : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto concat = op.getInput().getDefiningOp<ConcatOp>();
    if (!concat)
      return failure();
    int64_t dim = concat.getDim();
    std::optional<Band> band = bandAlong(op, dim);
    if (!band)
      return failure();
    SmallVector<Value> parts;
    int64_t start = 0, end = band->offset + band->size;
    for (Value in : concat.getInputs()) {
      int64_t size = cast<RankedTensorType>(in.getType()).getDimSize(dim);
      int64_t from = std::max(start, band->offset);
      int64_t to = std::min(start + size, end);
      if (from < to)
        parts.push_back(
            bandOf(rewriter, op.getLoc(), in, dim, from - start, to - from));
      start += size;
    }
    if (parts.size() == 1)
      rewriter.replaceOp(op, parts.front());
    else
      rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getType(), parts, dim);
    return success();
  }
};

/// concat(slice(x, [a, b)), slice(x, [b, c))) -> slice(x, [a, c)) for
/// bands of one tensor along the concat's dimension that lie side by side.
struct JoinAdjacentBands : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    int64_t dim = op.getDim();
    SmallVector<Value> inputs;
    bool joined = false;
    for (Value in : op.getInputs()) {
      auto slice = in.getDefiningOp<SliceOp>();
      auto last =
          inputs.empty() ? SliceOp() : inputs.back().getDefiningOp<SliceOp>();
      std::optional<Band> band, before;
      if (slice && last && slice.getInput() == last.getInput()) {
        band = bandAlong(slice, dim);
        before = bandAlong(last, dim);
      }
      if (band && before && before->offset + before->size == band->offset) {
        inputs.back() = bandOf(rewriter, op.getLoc(), slice.getInput(), dim,
                               before->offset, before->size + band->size);
        joined = true;
        continue;
      }
      inputs.push_back(in);
    }
    if (!joined)
      return failure();
    if (inputs.size() == 1)
      rewriter.replaceOp(op, inputs.front());
    else
      rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getType(), inputs, dim);
    return success();
  }
};

} // namespace

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getInput().getType() != getType())
    return {};
  for (auto [offset, stride] : llvm::zip_equal(getOffsets(), getStrides()))
    if (offset != 0 || stride != 1)
      return {};
  return getInput();
}

void SliceOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<SliceOfConcat>(context);
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

void ConcatOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<JoinAdjacentBands>(context);
}

LogicalResult SliceGradOp::verify() {
  return verifyWindow(*this, cast<RankedTensorType>(getType()),
                      cast<RankedTensorType>(getGrad().getType()), getOffsets(),
                      getStrides());
}

/// Checks that `rows` is the shape that gathering `table` by `indices`
/// gives (the indices' shape, then the table's trailing dimensions).
static LogicalResult verifyGatherShapes(Operation *op, RankedTensorType table,
                                        RankedTensorType indices,
                                        RankedTensorType rows) {
  if (table.getRank() < 1)
    return op->emitOpError("the table must have at least one dimension");
  SmallVector<int64_t> want(indices.getShape());
  want.append(table.getShape().begin() + 1, table.getShape().end());
  if (rows.getShape() != ArrayRef<int64_t>(want) ||
      rows.getElementType() != table.getElementType())
    return op->emitOpError("gathering ")
           << table << " by " << indices << " gives "
           << RankedTensorType::get(want, table.getElementType()) << ", not "
           << rows;
  return success();
}

/// Checks that every operand broadcasts (NumPy rules) to the result's shape.
LogicalResult oputils::verifyBroadcastOperands(Operation *op,
                                               RankedTensorType out) {
  for (Value v : op->getOperands()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() > out.getRank())
      return op->emitOpError("operand ")
             << t << " has a higher rank than the result " << out;
    int64_t offset = out.getRank() - t.getRank();
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (t.getDimSize(d) != 1 && t.getDimSize(d) != out.getDimSize(d + offset))
        return op->emitOpError("operand ")
               << t << " does not broadcast to the result " << out;
  }
  return success();
}

LogicalResult WhereOp::verify() {
  auto out = cast<RankedTensorType>(getType());
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  if (lhs.getElementType() != out.getElementType() ||
      rhs.getElementType() != out.getElementType())
    return emitOpError("the choices and the result must have one element "
                       "type, got ")
           << lhs.getElementType() << ", " << rhs.getElementType() << " and "
           << out.getElementType();
  return verifyBroadcastOperands(*this, out);
}

LogicalResult CompareOp::verify() {
  Type lhs = getElementTypeOrSelf(getLhs().getType());
  Type rhs = getElementTypeOrSelf(getRhs().getType());
  if (lhs != rhs)
    return emitOpError("the operands must have one element type, got ")
           << lhs << " and " << rhs;
  if (!isa<FloatType, IntegerType>(lhs))
    return emitOpError("compares floats or integers, not ") << lhs;
  return verifyBroadcastOperands(*this, cast<RankedTensorType>(getType()));
}

LogicalResult LogicalOp::verify() {
  return verifyBroadcastOperands(*this, cast<RankedTensorType>(getType()));
}

LogicalResult GatherOp::verify() {
  return verifyGatherShapes(*this, cast<RankedTensorType>(getTable().getType()),
                            cast<RankedTensorType>(getIndices().getType()),
                            cast<RankedTensorType>(getType()));
}

LogicalResult GatherGradOp::verify() {
  return verifyGatherShapes(*this, cast<RankedTensorType>(getType()),
                            cast<RankedTensorType>(getIndices().getType()),
                            cast<RankedTensorType>(getGrad().getType()));
}

/// The shapes of dlc.gather_elements (and of its gradient, whose result is
/// the input): one rank, the indices' shape the input's but along `axis`.
static LogicalResult verifyGatherElements(Operation *op, RankedTensorType input,
                                          RankedTensorType indices,
                                          RankedTensorType elements,
                                          int64_t axis) {
  int64_t rank = input.getRank();
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is not a dimension of " << input;
  if (indices.getRank() != rank)
    return op->emitOpError("the indices ")
           << indices << " must have the rank of " << input;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.getDimSize(d) != input.getDimSize(d))
      return op->emitOpError("the indices ")
             << indices << " must match " << input << " but along axis "
             << axis;
  if (elements.getShape() != indices.getShape() ||
      elements.getElementType() != input.getElementType())
    return op->emitOpError("gathering ")
           << input << " by " << indices << " gives "
           << RankedTensorType::get(indices.getShape(), input.getElementType())
           << ", not " << elements;
  return success();
}

LogicalResult GatherElementsOp::verify() {
  return verifyGatherElements(*this, tensorTy(getInput()),
                              tensorTy(getIndices()), tensorTy(getResult()),
                              getAxis());
}

LogicalResult GatherElementsGradOp::verify() {
  return verifyGatherElements(*this, tensorTy(getResult()),
                              tensorTy(getIndices()), tensorTy(getGrad()),
                              getAxis());
}

LogicalResult TransposeOp::verify() {
  auto in = tensorTy(getInput()), out = tensorTy(getResult());
  ArrayRef<int64_t> perm = getPermutation();
  if ((int64_t)perm.size() != in.getRank())
    return emitOpError("permutation has ")
           << perm.size() << " entries for a rank-" << in.getRank() << " input";
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError("permutation ")
             << shapeStr(perm) << " is not a permutation of 0.."
             << in.getRank() - 1;
    seen[p] = true;
    expected.push_back(in.getDimSize(p));
  }
  if (out.getElementType() != in.getElementType() ||
      out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be ")
           << shapeStr(expected) << " of " << in.getElementType();
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if ((int64_t)i != p)
      return {};
  return getInput();
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldTransposeChain>(context);
}
