//===- SplitBatches.cpp - dlc-split-batches -------------------------------===//
//
// Runs a batched matmul, and a transpose of the last two dimensions of a
// batch, as a loop over the batch of their 2-D forms, which
// dlc-tile-and-vectorize tiles. See Passes.td.
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

/// Replaces `op` by an `scf.for` over its batch, marked as having
/// independent iterations, whose body `build` fills from the batch's views
/// of the operands (in operand order).
void splitBatch(IRRewriter &rewriter, linalg::LinalgOp op,
                function_ref<void(OpBuilder &, Location, ValueRange)> build) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  int64_t batch = cast<MemRefType>(op->getOperand(0).getType()).getDimSize(0);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value end = arith::ConstantIndexOp::create(rewriter, loc, batch);
  auto loop = scf::ForOp::create(rewriter, loc, zero, end, one);
  loop->setAttr(dlc::kIndependentIterationsAttrName, rewriter.getUnitAttr());
  rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  SmallVector<Value> views;
  for (Value v : op->getOperands())
    views.push_back(
        dlc::leadingSlice(rewriter, loc, v, loop.getInductionVar()));
  build(rewriter, loc, views);
  rewriter.eraseOp(op);
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
      if ((bmm && !bmm.hasUserDefinedMaps()) ||
          (tr && tr.getPermutation() == ArrayRef<int64_t>{0, 2, 1}))
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
      splitBatch(rewriter, op, [](OpBuilder &b, Location loc, ValueRange v) {
        linalg::TransposeOp::create(b, loc, v[0], v[1],
                                    ArrayRef<int64_t>{1, 0});
      });
    }
  }
};

} // namespace
