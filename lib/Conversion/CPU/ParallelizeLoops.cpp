//===- ParallelizeLoops.cpp - dlc-parallelize-loops -----------------------===//
//
// Splits the large linalg ops that are not matmuls along their first
// parallel loop into the tiles of an scf.forall, so that they run on the
// thread pool like the matmuls' cache tiles, and runs the loops marked as
// having independent iterations as scf.foralls. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcContracts.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCPARALLELIZELOOPSPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// Whether loop `dim` indexes every operand of `maps` only as a whole
/// subscript (`d1` in `(d0 floordiv 49, d1)`), so that a tile of its range
/// reads and writes exactly the subview that tiling computes. A subscript
/// like `d0 floordiv 49` or `d0 mod 7` (an im2col copy) does not tile.
bool onlyAsItself(ArrayRef<AffineMap> maps, unsigned dim) {
  return llvm::all_of(maps, [&](AffineMap map) {
    return llvm::all_of(map.getResults(), [&](AffineExpr e) {
      return !e.isFunctionOfDim(dim) ||
             e == getAffineDimExpr(dim, e.getContext());
    });
  });
}

/// Whether a subscript of `maps` decreases along a loop (`-d2 + 2`, the
/// flipped weight of a convolution's input gradient). Tiling computes the
/// slice of every subscript from its loops' first and last values, which
/// for a decreasing one is a slice of one element, and the tiled op would
/// not verify.
bool anyDecreasing(ArrayRef<AffineMap> maps) {
  return llvm::any_of(maps, [](AffineMap map) {
    return llvm::any_of(map.getResults(), [](AffineExpr e) {
      bool negative = false;
      e.walk([&](AffineExpr sub) {
        auto mul = dyn_cast<AffineBinaryOpExpr>(sub);
        if (!mul || mul.getKind() != AffineExprKind::Mul)
          return;
        for (AffineExpr side : {mul.getLHS(), mul.getRHS()})
          if (auto c = dyn_cast<AffineConstantExpr>(side);
              c && c.getValue() < 0)
            negative = true;
      });
      return negative;
    });
  });
}

/// The tile sizes that split `op` into between 2 and `chunks` full tiles
/// along its first parallel loop whose range allows it (a divisor of the
/// range, so that every tile has the same static shape), or none when the
/// op is too small, has no such loop or a dynamic range.
SmallVector<int64_t> chunkSizes(linalg::LinalgOp op, int64_t minIterations,
                                int64_t chunks) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t points = 1;
  for (int64_t r : ranges) {
    if (ShapedType::isDynamic(r))
      return {};
    points *= r;
  }
  if (points < minIterations)
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (anyDecreasing(maps))
    return {};
  for (auto [i, range] : llvm::enumerate(ranges)) {
    if (iterators[i] != utils::IteratorType::parallel || !onlyAsItself(maps, i))
      continue;
    for (int64_t size = llvm::divideCeil(range, chunks); size <= range / 2;
         ++size) {
      if (range % size)
        continue;
      SmallVector<int64_t> sizes(i + 1, 0);
      sizes[i] = size;
      return sizes;
    }
  }
  return {};
}

/// `loop`, an scf.for whose iterations are independent (see
/// kIndependentIterationsAttrName), as an scf.forall over the same range.
LogicalResult toForall(IRRewriter &rewriter, scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitError("internal error: a loop of independent iterations "
                          "still carries values after bufferization");
  rewriter.setInsertionPoint(loop);
  auto forall = scf::ForallOp::create(
      rewriter, loop.getLoc(), {getAsOpFoldResult(loop.getLowerBound())},
      {getAsOpFoldResult(loop.getUpperBound())},
      {getAsOpFoldResult(loop.getStep())}, ValueRange{}, std::nullopt);
  rewriter.eraseOp(loop.getBody()->getTerminator());
  rewriter.inlineBlockBefore(loop.getBody(), forall.getTerminator(),
                             {forall.getInductionVar(0)});
  rewriter.eraseOp(loop);
  return success();
}

struct DlcParallelizeLoopsPass
    : dlc::impl::DlcParallelizeLoopsPassBase<DlcParallelizeLoopsPass> {
  using DlcParallelizeLoopsPassBase::DlcParallelizeLoopsPassBase;
  void runOnOperation() override {
    if (chunks < 2)
      return;
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<linalg::LinalgOp> ops;
    for (Operation &op : func.getBody().getOps()) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
      // Matmuls have their own cache tiles (dlc-tile-and-vectorize).
      if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
          isa<linalg::MatmulOp>(op) || !isa<TilingInterface>(op))
        continue;
      ops.push_back(linalgOp);
    }
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<int64_t> sizes = chunkSizes(op, minIterations, chunks);
      if (sizes.empty())
        continue;
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op->emitError("internal error: cannot split this op into parallel "
                      "tiles");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
    SmallVector<scf::ForOp> independent;
    func.walk([&](scf::ForOp loop) {
      if (loop->hasAttr(dlc::kIndependentIterationsAttrName))
        independent.push_back(loop);
    });
    for (scf::ForOp loop : independent)
      if (failed(toForall(rewriter, loop)))
        return signalPassFailure();
  }
};

} // namespace
