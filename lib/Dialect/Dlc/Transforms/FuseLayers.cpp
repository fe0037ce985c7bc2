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

/// The activation a unary op stands for, or none if it is not one.
Activation activationOf(Operation *op) {
  if (isa<ReluOp>(op))
    return Activation::relu;
  if (isa<TanhOp>(op))
    return Activation::tanh;
  if (isa<SigmoidOp>(op))
    return Activation::sigmoid;
  if (auto gelu = dyn_cast<GeluOp>(op))
    return gelu.getApproximate() == GeluApproximation::tanh
               ? Activation::gelu_tanh
               : Activation::gelu;
  return Activation::none;
}

template <typename LayerOp, typename ActOp>
struct FuseActivationIntoLayer : OpRewritePattern<ActOp> {
  using OpRewritePattern<ActOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ActOp act,
                                PatternRewriter &rewriter) const override {
    auto layer = act.getInput().template getDefiningOp<LayerOp>();
    if (!layer || layer.getActivation() != Activation::none)
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
