//===- FuseElementwise.cpp - dlc-fuse-elementwise -------------------------===//
//
// Upstream's linalg-fuse-elementwise-ops, minus one thing: a reshape is not
// folded into a contraction (matmul, batch_matmul). Folding it expands the
// matmul into a linalg.generic contraction over more dimensions, which
// dlc-tile-and-vectorize does not tile: a flatten before a linear, or the
// collapse of a convolution's im2col buffer, would make the GEMM run
// untiled and scalar. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcContracts.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCFUSEELEMENTWISEPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {
/// Rounds of the patterns over every op, at most (the greedy driver's own
/// default bound on its iterations).
constexpr int kMaxRounds = 10;

/// A matmul-like op: the one thing the tiling recognises.
bool isContraction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && linalg::isaContractionOpInterface(linalgOp);
}

struct DlcFuseElementwisePass
    : dlc::impl::DlcFuseElementwisePassBase<DlcFuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    // Upstream's default: fuse a producer into its only consumer; but not
    // into one that reads it through windows (a pool, an im2col copy:
    // `oh * s + kh`), which would recompute each element once per window
    // that covers it and read the producer's own inputs out of order.
    auto fuseOnlyUse = [](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      if (auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner()))
        return consumer.getMatchingIndexingMap(operand)
            .isProjectedPermutation();
      return true;
    };
    // A reshape next to a contraction stays where it is.
    auto foldReshape = [&](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      if (isContraction(operand->getOwner()) || isContraction(producer))
        return false;
      return fuseOnlyUse(operand);
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, fuseOnlyUse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, foldReshape);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, fuseOnlyUse);
    // Not inside loops: a recurrent layer's steps (dlc-lower-to-linalg)
    // write their results into slices of sequences threaded through the
    // loop, and the fusion patterns would replace those destinations, which
    // their payloads do not read, with new tensors, each step's then copied
    // in. For the same reason, not in pack_weights, whose results are
    // computed in the packed parameters' buffers (dlc-lower-entry-abi): a
    // 16-bit copy of a weight does not read its destination either. So the
    // ops outside loops, top-down, again after every round that changed
    // something, as the region-wide driver does.
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    bool changed = true;
    for (int round = 0; changed && round < kMaxRounds; ++round) {
      SmallVector<Operation *> ops;
      getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (op->hasAttr(dlc::kPackWeightsAttrName))
          return WalkResult::skip();
        ops.push_back(op);
        return isa<scf::ForOp>(op) ? WalkResult::skip() : WalkResult::advance();
      });
      if (failed(applyOpPatternsGreedily(ops, frozen, config, &changed)))
        break;
    }
  }
};
} // namespace
