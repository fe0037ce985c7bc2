//===- DlcToLinalg.cpp - dlc-lower-to-linalg ------------------------------===//
//
// Lowers dlc compute ops to destination-style linalg ops on tensors. The
// patterns live with their op family, one file each (Contractions.cpp,
// Elementwise.cpp, Normalization.cpp, Reductions.cpp, Losses.cpp,
// Optimizer.cpp, Convolution.cpp, Pooling.cpp, DataMovement.cpp,
// Recurrent.cpp), built from the helpers of LoweringUtils.h; this file
// collects them into the pass. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCLOWERTOLINALGPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::lowering;

namespace {

struct DlcLowerToLinalgPass
    : dlc::impl::DlcLowerToLinalgPassBase<DlcLowerToLinalgPass> {
  using DlcLowerToLinalgPassBase::DlcLowerToLinalgPassBase;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    populateContractionLoweringPatterns(patterns);
    populateElementwiseLoweringPatterns(patterns);
    populateNormalizationLoweringPatterns(patterns);
    populateReductionLoweringPatterns(patterns);
    populateLossLoweringPatterns(patterns);
    populateOptimizerLoweringPatterns(patterns);
    populateConvolutionLoweringPatterns(patterns);
    populatePoolingLoweringPatterns(patterns);
    populateDataMovementLoweringPatterns(patterns);
    populateRecurrentLoweringPatterns(patterns, recurrentBlocks);

    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           scf::SCFDialect,
                           bufferization::BufferizationDialect>();
    target.addIllegalDialect<DlcDialect>();
    target.addLegalOp<ParamOp, ParameterOp, AssignOp, AllReduceOp,
                      ReduceScatterOp, AllGatherOp, ShardOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
