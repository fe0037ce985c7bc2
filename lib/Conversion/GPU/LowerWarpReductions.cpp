//===- LowerWarpReductions.cpp - dlc-lower-warp-reductions ----------------===//
//
// Lowers the warp reductions of dlc-map-to-gpu (gpu.subgroup_reduce) to
// butterflies of warp shuffles, which convert-gpu-to-nvvm turns into
// shfl.sync. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCLOWERWARPREDUCTIONSPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// The width of one shuffle.
constexpr unsigned kShuffleBits = 32;

struct DlcLowerWarpReductionsPass
    : dlc::impl::DlcLowerWarpReductionsPassBase<DlcLowerWarpReductionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateGpuLowerSubgroupReduceToShufflePatterns(patterns, dlc::kWarpSize,
                                                    kShuffleBits);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult left = getOperation().walk([](gpu::SubgroupReduceOp op) {
      op.emitOpError("is not a reduction of 32-bit values over the whole "
                     "warp; dlc-lower-warp-reductions cannot lower it");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
