//===- SplitBatches.cpp - dlc-split-batches -------------------------------===//
//
// Runs a batched matmul, and a transpose of two dimensions of a batch, as a
// loop over the batch of their 2-D forms, which dlc-tile-and-vectorize
// tiles. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/BufferViews.h"
#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcContracts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCSPLITBATCHESPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// Whether `op` works on static buffers whose dimension 0 is the batch.
bool isStaticBatched(linalg::LinalgOp op) {
  return op.hasPureBufferSemantics() &&
         llvm::all_of(op->getOperands(), [](Value v) {
           auto ty = dyn_cast<MemRefType>(v.getType());
           return ty && ty.hasStaticShape() && ty.getRank() >= 3;
         });
}

/// The dimension of a rank-3 transpose's input that its output's dimension
/// 0 reads, for the transposes split into 2-D ones: 0 for `[0, 2, 1]` (a
/// batch of matrices), 1 for `[1, 2, 0]` on an identity-layout input
/// (`[S, H, D] -> [H, D, S]`, attention's keys transposed per head); none
/// otherwise.
std::optional<int64_t> transposeBatchDim(linalg::TransposeOp tr) {
  ArrayRef<int64_t> p = tr.getPermutation();
  if (p == ArrayRef<int64_t>{0, 2, 1})
    return 0;
  // splitHeads reads the input as a matrix: its layout must be the identity.
  if (p == ArrayRef<int64_t>{1, 2, 0} &&
      cast<MemRefType>(tr.getInput().getType()).getLayout().isIdentity())
    return 1;
  return std::nullopt;
}

/// An `scf.for` over [0, n) at the rewriter's insertion point, marked as
/// having independent iterations; the rewriter is left inside its body.
scf::ForOp independentLoop(IRRewriter &rewriter, Location loc, int64_t n) {
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value end = arith::ConstantIndexOp::create(rewriter, loc, n);
  auto loop = scf::ForOp::create(rewriter, loc, zero, end, one);
  loop->setAttr(dlc::kIndependentIterationsAttrName, rewriter.getUnitAttr());
  rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  return loop;
}

/// Replaces `op` by an `scf.for` over its batch, marked as having
/// independent iterations, whose body `build` fills from the batch's views
/// of the operands (in operand order).
void splitBatch(IRRewriter &rewriter, linalg::LinalgOp op,
                function_ref<void(OpBuilder &, Location, ValueRange)> build) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  int64_t batch = cast<MemRefType>(op->getOperand(0).getType()).getDimSize(0);
  scf::ForOp loop = independentLoop(rewriter, loc, batch);
  SmallVector<Value> views;
  for (Value v : op->getOperands())
    views.push_back(
        dlc::leadingSlice(rewriter, loc, v, loop.getInductionVar()));
  build(rewriter, loc, views);
  rewriter.eraseOp(op);
}

/// `[S, H, D] -> [H, D, S]` (permutation `[1, 2, 0]`) as a loop over the
/// heads of 2-D transposes of `[S, D]` slices. The input is read as the
/// `[S, H * D]` matrix it is, through a reinterpret_cast: a slice of
/// dimension 1 of the 3-D buffer, folded into the tile's vector reads,
/// would make them reads along a dimension that skips one, which the
/// transfer lowering cannot turn into rows and shuffles (it gathered).
void splitHeads(IRRewriter &rewriter, linalg::TransposeOp tr) {
  auto inTy = cast<MemRefType>(tr.getInput().getType());
  int64_t s = inTy.getDimSize(0), h = inTy.getDimSize(1),
          d = inTy.getDimSize(2);
  Location loc = tr.getLoc();
  rewriter.setInsertionPoint(tr);
  auto flatTy = MemRefType::get({s, h * d}, inTy.getElementType());
  Value flat =
      memref::ReinterpretCastOp::create(rewriter, loc, flatTy, tr.getInput(),
                                        /*offset=*/0, {s, h * d}, {h * d, 1});
  scf::ForOp loop = independentLoop(rewriter, loc, h);
  Value head = loop.getInductionVar();
  Value col = arith::MulIOp::create(
      rewriter, loc, head, arith::ConstantIndexOp::create(rewriter, loc, d));
  Value x = memref::SubViewOp::create(
      rewriter, loc, flat,
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0), col},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(s),
                             rewriter.getIndexAttr(d)},
      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                             rewriter.getIndexAttr(1)});
  Value y = dlc::leadingSlice(rewriter, loc, tr.getInit(), head);
  linalg::TransposeOp::create(rewriter, loc, x, y, ArrayRef<int64_t>{1, 0});
  rewriter.eraseOp(tr);
}

struct DlcSplitBatchesPass
    : dlc::impl::DlcSplitBatchesPassBase<DlcSplitBatchesPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
      auto tr = dyn_cast<linalg::TransposeOp>(op.getOperation());
      if (!isStaticBatched(op))
        return;
      if ((bmm && !bmm.hasUserDefinedMaps()) || (tr && transposeBatchDim(tr)))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      if (isa<linalg::BatchMatmulOp>(op)) {
        splitBatch(rewriter, op, [](OpBuilder &b, Location loc, ValueRange v) {
          linalg::MatmulOp::create(b, loc, TypeRange{}, v.take_front(2),
                                   v.drop_front(2));
        });
        continue;
      }
      auto tr = cast<linalg::TransposeOp>(op);
      if (*transposeBatchDim(tr) == 0) {
        splitBatch(rewriter, op, [](OpBuilder &b, Location loc, ValueRange v) {
          linalg::TransposeOp::create(b, loc, v[0], v[1],
                                      ArrayRef<int64_t>{1, 0});
        });
        continue;
      }
      splitHeads(rewriter, tr);
    }
  }
};

} // namespace
