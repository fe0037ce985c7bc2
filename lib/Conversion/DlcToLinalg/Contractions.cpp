//===- Contractions.cpp - linear layers, matmuls, attention ---------------===//
//
// Part of dlc-lower-to-linalg. A linear layer is a linalg.matmul against the
// transposed weight (or, up to kDotProductRows rows, dot products), a
// dlc.matmul a linalg.matmul or linalg.batch_matmul; 16-bit operands accumulate
// in fp32. Attention goes through its decomposition, whose dlc ops the pass
// lowers in turn.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "dlc/Dialect/Dlc/IR/DlcContracts.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::lowering;

namespace {

/// Up to this many rows, a linear layer is dot products, not a GEMM.
constexpr int64_t kDotProductRows = kLinearDotProductRows;

struct LowerLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto inTy = tensorTy(op.getInput()), wTy = tensorTy(op.getWeight());
    auto resTy = tensorTy(op.getResult());
    Type elemTy = resTy.getElementType();
    // 16-bit operands accumulate in fp32 (autocast's contract); the
    // epilogue rounds the result once.
    Type accElemTy = accumulatorType(b, elemTy);
    int64_t k = wTy.getDimSize(1), n = wTy.getDimSize(0);
    int64_t m = inTy.getNumElements() / k;

    // Flatten the leading dimensions: [..., K] -> [M, K].
    Value x = op.getInput();
    auto x2Ty = RankedTensorType::get({m, k}, elemTy);
    x = reshapeTo(b, loc, x, x2Ty);
    auto outTy = RankedTensorType::get({m, n}, elemTy);
    auto accTy = RankedTensorType::get({m, n}, accElemTy);

    // The tiled CPU matmul streams a row-major [K, N] right operand, and
    // the weight is [N, K]: one of the operands has to be re-laid out.
    // x W^T transposes the weight (N*K elements); (W x^T)^T transposes the
    // input and the result (M*K + M*N), the cheaper one when the batch is
    // small against the layer (a training batch against a wide layer). The
    // transpose of the result is folded into the epilogue loop.
    // A weight stored as [K, N] already (dlc-pack-weights) needs neither.
    Value packed =
        m > kDotProductRows ? matrixTransposeInput(op.getWeight()) : Value();
    bool transposeInput = !packed && m * k + m * n < n * k;
    // 16-bit operands stay 16-bit: the matmul reads them and accumulates in
    // fp32 (linalg.matmul's mixed-precision form). dlc-tile-and-vectorize
    // widens each cache tile into its packing buffer, and the CUDA lowering
    // hands them to cuBLASLt as they are.
    Value w = op.getWeight();
    Value y;
    AffineMap yMap;
    if (m <= kDotProductRows) {
      // A few rows (inference at batch 1): y[n, m] = sum_k W[n, k] x[m, k],
      // dot products along the contiguous K of both operands, which reads
      // the weight once, in its own layout. The reduction may reassociate,
      // so LLVM vectorises it along K (the tiled GEMM would run a one-column
      // tile here); the result is read transposed by the epilogue.
      auto ytTy = RankedTensorType::get({n, m}, accElemTy);
      auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
      auto fm = arith::FastMathFlagsAttr::get(
          ctx, arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
      y = linalg::GenericOp::create(
              b, loc, TypeRange{ytTy}, ValueRange{w, x},
              ValueRange{filledTensor(b, loc, ytTy, 0.0)},
              SmallVector<AffineMap>{AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                                     AffineMap::get(3, 0, {d(1), d(2)}, ctx),
                                     AffineMap::get(3, 0, {d(0), d(1)}, ctx)},
              SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                               utils::IteratorType::parallel,
                                               utils::IteratorType::reduction},
              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                Value p = arith::MulFOp::create(
                    nb, nloc, convertFloat(nb, nloc, a[0], accElemTy),
                    convertFloat(nb, nloc, a[1], accElemTy), fm);
                linalg::YieldOp::create(
                    nb, nloc,
                    arith::AddFOp::create(nb, nloc, a[2], p, fm).getResult());
              })
              .getResult(0);
      yMap = AffineMap::get(2, 0, {d(1), d(0)}, ctx);
      transposeInput = true; // the epilogue transposes the result back
    } else if (!transposeInput) {
      auto wtTy = RankedTensorType::get({k, n}, elemTy);
      Value wt = packed ? packed
                        : linalg::TransposeOp::create(b, loc, w,
                                                      emptyTensor(b, loc, wtTy),
                                                      ArrayRef<int64_t>{1, 0})
                              .getResult()[0];
      y = linalg::MatmulOp::create(b, loc, TypeRange{accTy}, ValueRange{x, wt},
                                   ValueRange{filledTensor(b, loc, accTy, 0.0)})
              .getResult(0);
      yMap = b.getMultiDimIdentityMap(2);
    } else {
      auto xtTy = RankedTensorType::get({k, m}, elemTy);
      Value xt =
          linalg::TransposeOp::create(b, loc, x, emptyTensor(b, loc, xtTy),
                                      ArrayRef<int64_t>{1, 0})
              .getResult()[0];
      auto ytTy = RankedTensorType::get({n, m}, accElemTy);
      y = linalg::MatmulOp::create(b, loc, TypeRange{ytTy}, ValueRange{w, xt},
                                   ValueRange{filledTensor(b, loc, ytTy, 0.0)})
              .getResult(0);
      yMap = AffineMap::get(
          2, 0, {getAffineDimExpr(1, ctx), getAffineDimExpr(0, ctx)}, ctx);
    }

    // Epilogue: bias and activation (and the transpose back) in one
    // elementwise loop.
    Activation act = op.getActivation();
    bool hasBias = static_cast<bool>(op.getBias());
    bool narrow = accElemTy != elemTy;
    if (hasBias || act != Activation::none || transposeInput || narrow) {
      SmallVector<Value> ins{y};
      SmallVector<AffineMap> maps{yMap};
      if (hasBias) {
        ins.push_back(op.getBias());
        maps.push_back(AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx));
      }
      maps.push_back(b.getMultiDimIdentityMap(2));
      SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
      y = linalg::GenericOp::create(
              b, loc, TypeRange{outTy}, ins,
              ValueRange{emptyTensor(b, loc, outTy)}, maps, iters,
              [&](OpBuilder &nb, Location nloc, ValueRange a) {
                Value v = a[0];
                if (hasBias)
                  v = arith::AddFOp::create(
                      nb, nloc, v, convertFloat(nb, nloc, a[1], accElemTy));
                v = applyActivation(nb, nloc, act, v);
                linalg::YieldOp::create(nb, nloc,
                                        convertFloat(nb, nloc, v, elemTy));
              })
              .getResult(0);
    }
    b.replaceOp(op, reshapeTo(b, loc, y, resTy));
    return success();
  }
};

struct LowerMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto resTy = tensorTy(op.getResult());
    Type accElemTy = accumulatorType(b, resTy.getElementType());
    auto accTy = RankedTensorType::get(resTy.getShape(), accElemTy);
    Value acc = filledTensor(b, loc, accTy, 0.0);
    // 16-bit operands accumulate in fp32 (see LowerLinear).
    Value lhs = op.getLhs(), rhs = op.getRhs();
    Value y;
    if (resTy.getRank() == 2)
      y = linalg::MatmulOp::create(b, loc, TypeRange{accTy},
                                   ValueRange{lhs, rhs}, ValueRange{acc})
              .getResult(0);
    else
      y = linalg::BatchMatmulOp::create(b, loc, TypeRange{accTy},
                                        ValueRange{lhs, rhs}, ValueRange{acc})
              .getResult(0);
    b.replaceOp(op, convertTensor(b, loc, y, resTy.getElementType()));
    return success();
  }
};

/// Through its decomposition (batched matmuls and the softmax), whose dlc
/// ops this pass then lowers in turn.
struct LowerAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(op, op.buildDecomposition(b));
    return success();
  }
};

} // namespace

void mlir::dlc::lowering::populateContractionLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerLinear, LowerMatmul, LowerAttention>(patterns.getContext());
}
