//===- LowerMathToNvptx.cpp - dlc-lower-math-to-nvptx ---------------------===//
//
// The math ops that dlc-approximate-math leaves in kernels become NVPTX
// instructions (through LLVM intrinsics) instead of libdevice calls, so that
// compiling a model needs no CUDA toolkit. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCLOWERMATHTONVPTXPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// `op` as a call of the NVVM intrinsic `<name>.f` (f32) or `<name>.d`
/// (f64).
template <typename MathOp> struct ToNvvmIntrinsic : OpRewritePattern<MathOp> {
  ToNvvmIntrinsic(MLIRContext *ctx, StringRef name)
      : OpRewritePattern<MathOp>(ctx), name(name) {}
  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &b) const override {
    Type t = op.getType();
    if (!t.isF32() && !t.isF64())
      return failure();
    std::string intrinsic = name + (t.isF32() ? ".f" : ".d");
    b.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, t, b.getStringAttr(intrinsic), op->getOperands());
    return success();
  }
  std::string name;
};

/// |x|: the sign bit cleared.
struct AbsToBits : OpRewritePattern<math::AbsFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::AbsFOp op,
                                PatternRewriter &b) const override {
    auto t = dyn_cast<FloatType>(op.getType());
    if (!t)
      return failure();
    unsigned width = t.getWidth();
    Type intTy = b.getIntegerType(width);
    Location loc = op.getLoc();
    Value bits = arith::BitcastOp::create(b, loc, intTy, op.getOperand());
    Value mask = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(intTy, APInt::getSignedMaxValue(width)));
    Value cleared = arith::AndIOp::create(b, loc, bits, mask);
    b.replaceOpWithNewOp<arith::BitcastOp>(op, t, cleared);
    return success();
  }
};

struct FmaToIntrinsic : OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &b) const override {
    if (!isa<FloatType>(op.getType()))
      return failure();
    b.replaceOpWithNewOp<LLVM::FMAOp>(op, op.getA(), op.getB(), op.getC());
    return success();
  }
};

struct DlcLowerMathToNvptxPass
    : dlc::impl::DlcLowerMathToNvptxPassBase<DlcLowerMathToNvptxPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<AbsToBits, FmaToIntrinsic>(ctx);
    patterns.add<ToNvvmIntrinsic<math::SqrtOp>>(ctx, "llvm.nvvm.sqrt.rn");
    patterns.add<ToNvvmIntrinsic<math::FloorOp>>(ctx, "llvm.nvvm.floor");
    patterns.add<ToNvvmIntrinsic<math::CeilOp>>(ctx, "llvm.nvvm.ceil");
    FrozenRewritePatternSet frozen(std::move(patterns));
    WalkResult result = getOperation().walk([&](gpu::GPUModuleOp m) {
      if (failed(applyPatternsGreedily(m, frozen)))
        return WalkResult::interrupt();
      // Anything else would become a libdevice call.
      WalkResult left = m.walk([](Operation *op) {
        if (isa<math::MathDialect>(op->getDialect())) {
          op->emitOpError("has no NVPTX lowering without libdevice; "
                          "dlc-approximate-math should have expanded it");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      return left;
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
