//===- VectorizeCopies.cpp - dlc-vectorize-copies -------------------------===//
//
// Rewrites the linalg copies whose innermost loop reads the input at a
// constant stride and writes the output contiguously (a convolution's
// im2col gather) into loops of vector loads, shuffles and stores. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <optional>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCVECTORIZECOPIESPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// Largest stride of the input along the row that is read as one wide
/// load and a shuffle (a convolution's stride; 4 x 16 lanes of fp32 is
/// four zmm registers).
constexpr int64_t kMaxStride = 4;

/// Whether `expr` uses `dim` inside a floordiv, ceildiv or mod.
bool dimUnderDivision(AffineExpr expr, unsigned dim) {
  bool found = false;
  expr.walk([&](AffineExpr e) {
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (bin && bin.getKind() != AffineExprKind::Add &&
        bin.getKind() != AffineExprKind::Mul && e.isFunctionOfDim(dim))
      found = true;
  });
  return found;
}

/// The constant stride of `expr` along `dim` (expr = stride * dim + an
/// expression of the other dims), or none.
std::optional<int64_t> strideAlong(AffineExpr expr, unsigned dim,
                                   unsigned numDims) {
  if (dimUnderDivision(expr, dim))
    return std::nullopt;
  MLIRContext *ctx = expr.getContext();
  SmallVector<AffineExpr> at0, at1;
  for (unsigned d = 0; d < numDims; ++d) {
    at0.push_back(d == dim ? getAffineConstantExpr(0, ctx)
                           : getAffineDimExpr(d, ctx));
    at1.push_back(d == dim ? getAffineConstantExpr(1, ctx)
                           : getAffineDimExpr(d, ctx));
  }
  AffineExpr diff = simplifyAffineExpr(
      expr.replaceDims(at1) - expr.replaceDims(at0), numDims, 0);
  auto c = dyn_cast<AffineConstantExpr>(diff);
  if (!c)
    return std::nullopt;
  return c.getValue();
}

/// A copy this pass rewrites: `out[d0, ..., dn] = in[f(d0, ..., dn)]`,
/// every loop parallel, the output indexed by the identity, the last loop
/// (the row) only in the input's last subscript, at `stride`.
struct Copy {
  linalg::GenericOp op;
  SmallVector<int64_t> ranges;
  int64_t stride;
  int64_t lanes;
};

std::optional<Copy> matchCopy(linalg::GenericOp op, unsigned vectorBits) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() == 0 ||
      op.getNumReductionLoops() != 0)
    return std::nullopt;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 1 ||
      body.getTerminator()->getOperand(0) != body.getArgument(0))
    return std::nullopt;
  auto inTy = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto outTy = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!inTy || !outTy || inTy.getElementType() != outTy.getElementType() ||
      !inTy.isLastDimUnitStride() || !outTy.isLastDimUnitStride())
    return std::nullopt;
  unsigned bits = inTy.getElementTypeBitWidth();
  if (!inTy.getElementType().isIntOrFloat() || (bits != 32 && bits != 64))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges.back() < 2)
    return std::nullopt;
  AffineMap inMap = op.getIndexingMapsArray()[0];
  if (!op.getIndexingMapsArray()[1].isIdentity() || inMap.getNumResults() == 0)
    return std::nullopt;
  unsigned row = op.getNumLoops() - 1;
  ArrayRef<AffineExpr> subscripts = inMap.getResults();
  for (AffineExpr e : subscripts.drop_back())
    if (e.isFunctionOfDim(row))
      return std::nullopt;
  std::optional<int64_t> stride =
      strideAlong(subscripts.back(), row, op.getNumLoops());
  if (!stride || *stride < 1 || *stride > kMaxStride)
    return std::nullopt;
  return Copy{op, ranges, *stride, int64_t(vectorBits / bits)};
}

/// `count` true lanes of `lanes`, then false.
Value firstLanes(OpBuilder &b, Location loc, int64_t lanes, int64_t count) {
  return vector::ConstantMaskOp::create(b, loc,
                                        VectorType::get({lanes}, b.getI1Type()),
                                        ArrayRef<int64_t>{count});
}

/// `count` elements of the row from `index` on, as a vector of `lanes`
/// (the lanes past `count` zero): one load of the elements that the
/// stride spans, masked to the last one read, and a shuffle that keeps
/// every `stride`-th.
Value loadRow(OpBuilder &b, Location loc, const Copy &copy, Value input,
              ValueRange indices, int64_t count) {
  Type elem = cast<MemRefType>(input.getType()).getElementType();
  int64_t wide = copy.lanes * copy.stride;
  auto wideTy = VectorType::get({wide}, elem);
  Value loaded;
  int64_t span = (count - 1) * copy.stride + 1;
  if (span == wide) {
    loaded = vector::LoadOp::create(b, loc, wideTy, input, indices);
  } else {
    Value zeros = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(b.getZeroAttr(wideTy)));
    loaded = vector::MaskedLoadOp::create(
        b, loc, wideTy, input, indices, firstLanes(b, loc, wide, span), zeros);
  }
  if (copy.stride == 1)
    return loaded;
  SmallVector<int64_t> picks;
  for (int64_t i = 0; i < copy.lanes; ++i)
    picks.push_back(i * copy.stride);
  return vector::ShuffleOp::create(b, loc, loaded, loaded, picks);
}

void rewrite(const Copy &copy) {
  linalg::GenericOp op = copy.op;
  Location loc = op.getLoc();
  OpBuilder b(op);
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value zero = index(0), one = index(1);
  unsigned row = op.getNumLoops() - 1;
  SmallVector<Value> ivs;
  for (unsigned d = 0; d < row; ++d) {
    auto loop = scf::ForOp::create(b, loc, zero, index(copy.ranges[d]), one);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }
  Value input = op.getDpsInputs()[0], output = op.getDpsInits()[0];
  AffineMap inMap = op.getIndexingMapsArray()[0];
  // One stretch of `count` elements of the row from `col` on.
  auto copyStretch = [&](Value col, int64_t count) {
    SmallVector<Value> operands(ivs);
    operands.push_back(col);
    SmallVector<Value> inIndices;
    for (unsigned r = 0; r < inMap.getNumResults(); ++r)
      inIndices.push_back(affine::AffineApplyOp::create(
          b, loc, inMap.getSubMap({r}), operands));
    Value v = loadRow(b, loc, copy, input, inIndices, count);
    if (count == copy.lanes)
      vector::StoreOp::create(b, loc, v, output, operands);
    else
      vector::MaskedStoreOp::create(b, loc, output, operands,
                                    firstLanes(b, loc, copy.lanes, count), v);
  };
  int64_t length = copy.ranges[row];
  int64_t full = length - length % copy.lanes;
  if (full) {
    auto loop =
        scf::ForOp::create(b, loc, zero, index(full), index(copy.lanes));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    copyStretch(loop.getInductionVar(), copy.lanes);
  }
  if (length % copy.lanes)
    copyStretch(index(full), length % copy.lanes);
  op->erase();
}

struct DlcVectorizeCopiesPass
    : dlc::impl::DlcVectorizeCopiesPassBase<DlcVectorizeCopiesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (vectorBits < 64)
      return;
    SmallVector<Copy> copies;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Copy> copy = matchCopy(op, vectorBits))
        copies.push_back(*copy);
    });
    for (const Copy &copy : copies)
      rewrite(copy);
  }
};

} // namespace
