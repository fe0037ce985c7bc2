//===- FuseLayers.cpp - dlc-fuse-layers -----------------------------------===//
//
// Folds an activation into the dlc.linear or dlc.conv2d that produces its
// operand when the activation is the layer's only user. See Passes.td for the
// contract.
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

template <typename LayerOp, typename ActOp>
struct FuseActivationIntoLayer : OpRewritePattern<ActOp> {
  using OpRewritePattern<ActOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ActOp act,
                                PatternRewriter &rewriter) const override {
    auto layer = act.getInput().template getDefiningOp<LayerOp>();
    if (!layer || layer.getActivation() != "none")
      return rewriter.notifyMatchFailure(act, "operand is not a plain layer");
    if (!layer.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(act,
                                         "the layer's result has another user");
    rewriter.modifyOpInPlace(layer, [&] {
      layer.setActivation(activationOf(act));
      // The fused op now stands where the activation was in the source.
      layer->setLoc(rewriter.getFusedLoc({layer.getLoc(), act.getLoc()}));
    });
    rewriter.replaceOp(act, layer.getResult());
    return success();
  }
};

struct DlcFuseLayersPass : dlc::impl::DlcFuseLayersPassBase<DlcFuseLayersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseActivationIntoLayer<LinearOp, ReluOp>,
                 FuseActivationIntoLayer<LinearOp, GeluOp>,
                 FuseActivationIntoLayer<LinearOp, TanhOp>,
                 FuseActivationIntoLayer<LinearOp, SigmoidOp>,
                 FuseActivationIntoLayer<Conv2DOp, ReluOp>,
                 FuseActivationIntoLayer<Conv2DOp, GeluOp>,
                 FuseActivationIntoLayer<Conv2DOp, TanhOp>,
                 FuseActivationIntoLayer<Conv2DOp, SigmoidOp>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
