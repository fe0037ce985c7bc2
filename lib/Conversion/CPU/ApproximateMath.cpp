//===- ApproximateMath.cpp - dlc-approximate-math -------------------------===//
//
// Expands transcendental math ops into polynomial approximations so that the
// generated object needs no libm. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCAPPROXIMATEMATHPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {
struct DlcApproximateMathPass
    : dlc::impl::DlcApproximateMathPassBase<DlcApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Compute 16-bit math in f32 first, then approximate the f32 forms.
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
