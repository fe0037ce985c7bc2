//===- FuseLayers.cpp - dlc-fuse-layers -----------------------------------===//
//
// Folds an activation into the dlc.linear that produces its operand when the
// activation is the linear's only user. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCFUSELAYERSPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// The activation name a unary op stands for, or "" if it is not one.
StringRef activationOf(Operation *op) {
  if (isa<ReluOp>(op))
    return "relu";
  if (isa<TanhOp>(op))
    return "tanh";
  if (isa<SigmoidOp>(op))
    return "sigmoid";
  if (auto gelu = dyn_cast<GeluOp>(op))
    return gelu.getApproximate() == "tanh" ? "gelu_tanh" : "gelu";
  return "";
}

template <typename ActOp>
struct FuseActivationIntoLinear : OpRewritePattern<ActOp> {
  using OpRewritePattern<ActOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ActOp act,
                                PatternRewriter &rewriter) const override {
    auto linear = act.getInput().template getDefiningOp<LinearOp>();
    if (!linear || linear.getActivation() != "none")
      return rewriter.notifyMatchFailure(act, "operand is not a plain linear");
    if (!linear.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(
          act, "the linear's result has another user");
    rewriter.modifyOpInPlace(linear, [&] {
      linear.setActivation(activationOf(act));
      // The fused op now stands where the activation was in the source.
      linear->setLoc(rewriter.getFusedLoc({linear.getLoc(), act.getLoc()}));
    });
    rewriter.replaceOp(act, linear.getResult());
    return success();
  }
};

struct DlcFuseLayersPass
    : dlc::impl::DlcFuseLayersPassBase<DlcFuseLayersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseActivationIntoLinear<ReluOp>,
                 FuseActivationIntoLinear<GeluOp>,
                 FuseActivationIntoLinear<TanhOp>,
                 FuseActivationIntoLinear<SigmoidOp>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
