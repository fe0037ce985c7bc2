//===- DlcToLinalg.cpp - dlc-lower-to-linalg ------------------------------===//
//
// Lowers dlc compute ops to destination-style linalg ops on tensors. Every
// lowering is built from three helpers: an elementwise linalg.generic with
// NumPy broadcasting in its indexing maps, a reduction linalg.generic over a
// set of dimensions, and the contractions. See Passes.td for the contract.
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
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCLOWERTOLINALGPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

// The helpers shared with the other lowering files (LoweringUtils.h).
namespace mlir::dlc::lowering {

RankedTensorType tensorTy(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value floatConst(OpBuilder &b, Location loc, Type ty, double v) {
  return arith::ConstantOp::create(b, loc, ty, b.getFloatAttr(ty, v));
}

/// The accumulator type of a contraction: fp32 for 16-bit operands.
Type accumulatorType(OpBuilder &b, Type elem) {
  return elem.getIntOrFloatBitWidth() < 32 ? b.getF32Type() : elem;
}

/// `v` converted to the float type `to` (extended or rounded).
Value convertFloat(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType ty) {
  return tensor::EmptyOp::create(b, loc, ty.getShape(), ty.getElementType());
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType ty,
                   double value) {
  Value init = emptyTensor(b, loc, ty);
  Type et = ty.getElementType();
  Value c = isa<IntegerType>(et)
                ? arith::ConstantOp::create(
                      b, loc, b.getIntegerAttr(et, static_cast<int64_t>(value)))
                      .getResult()
                : floatConst(b, loc, et, value);
  return linalg::FillOp::create(b, loc, ValueRange{c}, ValueRange{init})
      .getResult(0);
}

/// The indexing map that reads an operand of `shape` broadcast (NumPy rules)
/// into an iteration space of `resultShape`.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape) {
  int64_t r = resultShape.size(), offset = r - shape.size();
  SmallVector<AffineExpr> exprs;
  for (int64_t j = 0, e = shape.size(); j < e; ++j) {
    int64_t i = j + offset;
    if (shape[j] == 1 && resultShape[i] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(i, ctx));
  }
  return AffineMap::get(r, 0, exprs, ctx);
}

/// An elementwise linalg.generic producing `resultTy` from `inputs`, which
/// broadcast into it. `body` computes one element from the input elements.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultTy,
                  ValueRange inputs, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(
        broadcastMap(ctx, tensorTy(in).getShape(), resultTy.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultTy.getRank()));
  SmallVector<utils::IteratorType> iters(resultTy.getRank(),
                                         utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{resultTy}, inputs,
      ValueRange{emptyTensor(b, loc, resultTy)}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // 16-bit floats compute in fp32 and round the result once, like
        // PyTorch's CPU kernels (and no 16-bit math reaches LLVM).
        Type elem = resultTy.getElementType();
        bool widen = isa<FloatType>(elem) && elem.getIntOrFloatBitWidth() < 32;
        SmallVector<Value> in;
        for (Value a : args.drop_back())
          in.push_back(widen && isa<FloatType>(a.getType()) &&
                               a.getType().getIntOrFloatBitWidth() < 32
                           ? convertFloat(nb, nloc, a, nb.getF32Type())
                           : a);
        Value v = body(nb, nloc, in);
        if (widen && isa<FloatType>(v.getType()))
          v = convertFloat(nb, nloc, v, elem);
        linalg::YieldOp::create(nb, nloc, v);
      });
  return op.getResult(0);
}

/// A reduction linalg.generic over `dims` of the first input's iteration
/// space. `inputs` all have the iteration space's shape or broadcast into it
/// (a reduced-away operand like a row maximum is passed with `keptShape`
/// semantics by `inputMaps`). `combine(acc, inputs...)` returns the new
/// accumulator. The result drops the reduced dimensions (or keeps them with
/// size 1 when `keepdim`).
Value reduce(
    OpBuilder &b, Location loc, ArrayRef<int64_t> space, ArrayRef<int64_t> dims,
    bool keepdim, ValueRange inputs, ArrayRef<AffineMap> inputMaps, Type elemTy,
    double initValue,
    function_ref<Value(OpBuilder &, Location, Value, ValueRange)> combine) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = space.size();
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(dims, d);
    iters.push_back(reduced ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
    if (!reduced) {
      outShape.push_back(space[d]);
      outExprs.push_back(getAffineDimExpr(d, ctx));
    } else if (keepdim) {
      outShape.push_back(1);
      outExprs.push_back(getAffineConstantExpr(0, ctx));
    }
  }
  auto outTy = RankedTensorType::get(outShape, elemTy);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(AffineMap::get(rank, 0, outExprs, ctx));
  Value init = filledTensor(b, loc, outTy, initValue);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{outTy}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value acc = args.back();
        linalg::YieldOp::create(nb, nloc,
                                combine(nb, nloc, acc, args.drop_back()));
      });
  return op.getResult(0);
}

/// The dimensions 0 .. n-1 (all of a rank-n tensor, or its leading ones).
SmallVector<int64_t> allDims(int64_t n) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < n; ++d)
    dims.push_back(d);
  return dims;
}

/// The sum of `x` over `dims`.
Value sumOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims,
              bool keepdim) {
  auto ty = tensorTy(x);
  return reduce(b, loc, ty.getShape(), dims, keepdim, ValueRange{x},
                {b.getMultiDimIdentityMap(ty.getRank())}, ty.getElementType(),
                0.0, [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                  return arith::AddFOp::create(nb, l, acc, a[0]).getResult();
                });
}

/// Map reading a tensor that has `space` minus `dim` (a row statistic) from
/// the iteration space `space`.
AffineMap dropDimMap(MLIRContext *ctx, int64_t rank, int64_t dim) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// Row-major reshape between static shapes as views: collapse to 1-D, then
/// expand to the result (both bufferize to memref views, never a copy).
Value reshapeTo(OpBuilder &b, Location loc, Value v, RankedTensorType to) {
  auto from = tensorTy(v);
  if (from == to)
    return v;
  Type et = from.getElementType();
  auto flatTy = RankedTensorType::get({from.getNumElements()}, et);
  if (from.getRank() == 0)
    v = tensor::ExpandShapeOp::create(b, loc, flatTy, v,
                                      ArrayRef<ReassociationIndices>{});
  else if (from.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t d = 0; d < from.getRank(); ++d)
      all.push_back(d);
    v = tensor::CollapseShapeOp::create(b, loc, flatTy, v,
                                        ArrayRef<ReassociationIndices>{all});
  }
  if (to.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, to, v,
                                           ArrayRef<ReassociationIndices>{});
  if (to.getRank() == 1)
    return v;
  ReassociationIndices all;
  for (int64_t d = 0; d < to.getRank(); ++d)
    all.push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, to, v,
                                       ArrayRef<ReassociationIndices>{all});
}

/// Applies a named activation to one element.
Value applyActivation(OpBuilder &b, Location loc, StringRef act, Value x) {
  Type t = x.getType();
  if (act == "none")
    return x;
  if (act == "relu") {
    // x < 0 ? 0 : x, PyTorch's relu to the bit: NaN and -0 pass through.
    // A compare and a select vectorise to a blend; arith.maximumf's
    // expansion on x86 (no native IEEE maximum) branches on the data.
    Value zero = floatConst(b, loc, t, 0.0);
    Value neg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    return arith::SelectOp::create(b, loc, neg, zero, x);
  }
  if (act == "tanh")
    return math::TanhOp::create(b, loc, x);
  if (act == "sigmoid") {
    Value one = floatConst(b, loc, t, 1.0);
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, one,
                                 arith::AddFOp::create(b, loc, one, e));
  }
  Value half = floatConst(b, loc, t, 0.5), one = floatConst(b, loc, t, 1.0);
  Value inner;
  if (act == "gelu") {
    Value s =
        arith::MulFOp::create(b, loc, x, floatConst(b, loc, t, M_SQRT1_2));
    inner = math::ErfOp::create(b, loc, s);
  } else { // gelu_tanh
    Value x3 =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, floatConst(b, loc, t, 0.044715), x3));
    Value k = floatConst(b, loc, t, std::sqrt(2.0 / M_PI));
    inner =
        math::TanhOp::create(b, loc, arith::MulFOp::create(b, loc, k, poly));
  }
  Value hx = arith::MulFOp::create(b, loc, half, x);
  return arith::MulFOp::create(b, loc, hx,
                               arith::AddFOp::create(b, loc, one, inner));
}

/// `v` with its elements converted to the float type `elem`, extended or
/// rounded (a no-op when they are of that type).
Value convertTensor(OpBuilder &b, Location loc, Value v, Type elem) {
  auto ty = tensorTy(v);
  if (ty.getElementType() == elem)
    return v;
  return elementwise(b, loc, RankedTensorType::get(ty.getShape(), elem),
                     ValueRange{v},
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       return convertFloat(nb, l, a[0], elem);
                     });
}

} // namespace mlir::dlc::lowering

using namespace mlir::dlc::lowering;

namespace {

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// Up to this many rows, a linear layer is dot products, not a GEMM.
constexpr int64_t kDotProductRows = 4;

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
    bool transposeInput = m * k + m * n < n * k;
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
      Value wt =
          linalg::TransposeOp::create(b, loc, w, emptyTensor(b, loc, wtTy),
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
    StringRef act = op.getActivation();
    bool hasBias = static_cast<bool>(op.getBias());
    bool narrow = accElemTy != elemTy;
    if (hasBias || act != "none" || transposeInput || narrow) {
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

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename SrcOp, typename ArithOp>
struct LowerBinary : OpRewritePattern<SrcOp> {
  using OpRewritePattern<SrcOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SrcOp op, PatternRewriter &b) const override {
    Value y =
        elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                    ValueRange{op.getLhs(), op.getRhs()},
                    [](OpBuilder &nb, Location loc, ValueRange a) -> Value {
                      return ArithOp::create(nb, loc, a[0], a[1]);
                    });
    b.replaceOp(op, y);
    return success();
  }
};

/// Unary ops: `fn(builder, loc, x)` computes one element.
template <typename SrcOp> struct LowerUnary : OpRewritePattern<SrcOp> {
  using Fn = Value (*)(OpBuilder &, Location, Value, SrcOp);
  LowerUnary(MLIRContext *ctx, Fn fn) : OpRewritePattern<SrcOp>(ctx), fn(fn) {}
  LogicalResult matchAndRewrite(SrcOp op, PatternRewriter &b) const override {
    Value y = elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                          ValueRange{op.getInput()},
                          [&](OpBuilder &nb, Location loc, ValueRange a) {
                            return fn(nb, loc, a[0], op);
                          });
    b.replaceOp(op, y);
    return success();
  }
  Fn fn;
};

//===----------------------------------------------------------------------===//
// Softmax, log-softmax, layer norm
//===----------------------------------------------------------------------===//

/// Row maximum and sum(exp(x - max)) along `dim`; both drop `dim`.
std::pair<Value, Value> maxAndSumExp(OpBuilder &b, Location loc, Value x,
                                     int64_t dim) {
  MLIRContext *ctx = b.getContext();
  auto ty = tensorTy(x);
  int64_t rank = ty.getRank();
  Type et = ty.getElementType();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  Value max =
      reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{x}, {id}, et,
             -INFINITY, [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
               return arith::MaximumFOp::create(nb, l, acc, a[0]).getResult();
             });
  Value sum = reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{x, max},
                     {id, dropDimMap(ctx, rank, dim)}, et, 0.0,
                     [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                       Value e = math::ExpOp::create(
                           nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                       return arith::AddFOp::create(nb, l, acc, e).getResult();
                     });
  return {max, sum};
}

/// An elementwise generic over `x`'s shape whose extra inputs are row
/// statistics that drop `dim`.
Value rowwise(OpBuilder &b, Location loc, Value x, int64_t dim,
              ValueRange stats, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  auto ty = tensorTy(x);
  int64_t rank = ty.getRank();
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  for (size_t i = 0; i < stats.size(); ++i)
    maps.push_back(dropDimMap(ctx, rank, dim));
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<Value> ins{x};
  ins.append(stats.begin(), stats.end());
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{ty}, ins, ValueRange{emptyTensor(b, loc, ty)},
             maps, iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc,
                                       body(nb, nloc, args.drop_back()));
             })
      .getResult(0);
}

struct LowerSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    int64_t dim = op.getDim();
    auto [max, sum] = maxAndSumExp(b, loc, op.getInput(), dim);
    Value y = rowwise(b, loc, op.getInput(), dim, ValueRange{max, sum},
                      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        Value e = math::ExpOp::create(
                            nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                        return arith::DivFOp::create(nb, l, e, a[2]);
                      });
    b.replaceOp(op, y);
    return success();
  }
};

struct LowerLogSoftmax : OpRewritePattern<LogSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LogSoftmaxOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    int64_t dim = op.getDim();
    auto [max, sum] = maxAndSumExp(b, loc, op.getInput(), dim);
    Value y = rowwise(b, loc, op.getInput(), dim, ValueRange{max, sum},
                      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        Value shifted =
                            arith::SubFOp::create(nb, l, a[0], a[1]);
                        return arith::SubFOp::create(
                            nb, l, shifted, math::LogOp::create(nb, l, a[2]));
                      });
    b.replaceOp(op, y);
    return success();
  }
};

/// Row statistics of layer normalisation over the last dimension of `x`:
/// the mean and 1 / sqrt(biased variance + eps), one value per row.
std::pair<Value, Value> layerNormStats(OpBuilder &b, Location loc, Value x,
                                       double eps) {
  MLIRContext *ctx = b.getContext();
  auto ty = tensorTy(x);
  int64_t rank = ty.getRank(), dim = rank - 1;
  Type et = ty.getElementType();
  double invD = 1.0 / static_cast<double>(ty.getShape().back());
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap row = dropDimMap(ctx, rank, dim);
  Value sum = sumOver(b, loc, x, {dim}, false);
  auto rowTy = tensorTy(sum);
  Value mean = elementwise(
      b, loc, rowTy, ValueRange{sum},
      [&](OpBuilder &nb, Location l, ValueRange a) {
        return arith::MulFOp::create(nb, l, a[0], floatConst(nb, l, et, invD))
            .getResult();
      });
  Value sq = reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{x, mean},
                    {id, row}, et, 0.0,
                    [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                      Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                      return arith::AddFOp::create(
                                 nb, l, acc, arith::MulFOp::create(nb, l, d, d))
                          .getResult();
                    });
  Value rstd = elementwise(
      b, loc, rowTy, ValueRange{sq},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value var =
            arith::MulFOp::create(nb, l, a[0], floatConst(nb, l, et, invD));
        Value s = math::SqrtOp::create(
            nb, l,
            arith::AddFOp::create(nb, l, var, floatConst(nb, l, et, eps)));
        return arith::DivFOp::create(nb, l, floatConst(nb, l, et, 1.0), s);
      });
  return {mean, rstd};
}

struct LowerLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = op.getInput();
    auto ty = tensorTy(x);
    int64_t rank = ty.getRank(), dim = rank - 1;
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap row = dropDimMap(ctx, rank, dim);
    auto [mean, rstd] =
        layerNormStats(b, loc, x, op.getEpsilon().convertToDouble());
    // y = (x - mean) * rstd * weight + bias
    AffineMap last = AffineMap::get(rank, 0, {getAffineDimExpr(dim, ctx)}, ctx);
    SmallVector<AffineMap> maps{id, row, row, last, last, id};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value y = linalg::GenericOp::create(
                  b, loc, TypeRange{ty},
                  ValueRange{x, mean, rstd, op.getWeight(), op.getBias()},
                  ValueRange{emptyTensor(b, loc, ty)}, maps, iters,
                  [](OpBuilder &nb, Location l, ValueRange a) {
                    Value n = arith::MulFOp::create(
                        nb, l, arith::SubFOp::create(nb, l, a[0], a[1]), a[2]);
                    Value v = arith::AddFOp::create(
                        nb, l, arith::MulFOp::create(nb, l, n, a[3]), a[4]);
                    linalg::YieldOp::create(nb, l, v);
                  })
                  .getResult(0);
    b.replaceOp(op, y);
    return success();
  }
};

/// Inference batch norm as PyTorch's CPU kernel computes it: per channel
/// alpha = scale / sqrt(var + eps) and beta = bias - mean * alpha (a loop
/// over C), then y = x * alpha + beta in one elementwise loop, which
/// linalg-fuse-elementwise-ops merges with the convolution's epilogue and a
/// following activation.
struct LowerBatchNorm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto ty = tensorTy(op.getInput());
    Type et = ty.getElementType(), acc = accumulatorType(b, et);
    int64_t rank = ty.getRank(), c = ty.getDimSize(1);
    double eps = op.getEpsilon().convertToDouble();
    auto chTy = RankedTensorType::get({c}, acc);
    AffineMap id1 = b.getMultiDimIdentityMap(1);
    auto coeffs = linalg::GenericOp::create(
        b, loc, TypeRange{chTy, chTy},
        ValueRange{op.getScale(), op.getBias(), op.getMean(), op.getVar()},
        ValueRange{emptyTensor(b, loc, chTy), emptyTensor(b, loc, chTy)},
        SmallVector<AffineMap>(6, id1),
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          auto in = [&](int i) { return convertFloat(nb, l, a[i], acc); };
          Value s = math::SqrtOp::create(
              nb, l,
              arith::AddFOp::create(nb, l, in(3), floatConst(nb, l, acc, eps)));
          Value inv =
              arith::DivFOp::create(nb, l, floatConst(nb, l, acc, 1.0), s);
          Value alpha = arith::MulFOp::create(nb, l, inv, in(0));
          Value beta = arith::SubFOp::create(
              nb, l, in(1), arith::MulFOp::create(nb, l, in(2), alpha));
          linalg::YieldOp::create(nb, l, ValueRange{alpha, beta});
        });
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap channel =
        AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value y =
        linalg::GenericOp::create(
            b, loc, TypeRange{ty},
            ValueRange{op.getInput(), coeffs.getResult(0), coeffs.getResult(1)},
            ValueRange{emptyTensor(b, loc, ty)},
            SmallVector<AffineMap>{id, channel, channel, id}, iters,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value x = convertFloat(nb, l, a[0], acc);
              Value v = arith::AddFOp::create(
                  nb, l, arith::MulFOp::create(nb, l, x, a[1]), a[2]);
              linalg::YieldOp::create(nb, l, convertFloat(nb, l, v, et));
            })
            .getResult(0);
    b.replaceOp(op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

struct LowerReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(
        op, reshapeTo(b, op.getLoc(), op.getInput(), tensorTy(op.getResult())));
    return success();
  }
};

struct LowerTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &b) const override {
    auto resTy = tensorTy(op.getResult());
    Value init = emptyTensor(b, op.getLoc(), resTy);
    Value y = linalg::TransposeOp::create(b, op.getLoc(), op.getInput(), init,
                                          op.getPermutation())
                  .getResult()[0];
    b.replaceOp(op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

/// Multiplies every element of `v` by `factor`.
Value scale(OpBuilder &b, Location loc, Value v, double factor) {
  Type et = tensorTy(v).getElementType();
  return elementwise(b, loc, tensorTy(v), ValueRange{v},
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       return arith::MulFOp::create(
                                  nb, l, a[0], floatConst(nb, l, et, factor))
                           .getResult();
                     });
}

template <typename SrcOp, bool IsMean>
struct LowerReduction : OpRewritePattern<SrcOp> {
  using OpRewritePattern<SrcOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SrcOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto ty = tensorTy(op.getInput());
    Value y = sumOver(b, loc, op.getInput(), op.getDims(), op.getKeepdim());
    if (IsMean) {
      int64_t count = 1;
      for (int64_t d : op.getDims())
        count *= ty.getDimSize(d);
      y = scale(b, loc, y, 1.0 / static_cast<double>(count));
    }
    b.replaceOp(op, y);
    return success();
  }
};

/// dlc.max and dlc.min: a reduction from -inf (+inf) with maximumf
/// (minimumf), which propagates NaN as PyTorch's amax/amin do.
template <typename SrcOp, bool IsMax>
struct LowerExtremum : OpRewritePattern<SrcOp> {
  using OpRewritePattern<SrcOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SrcOp op, PatternRewriter &b) const override {
    auto ty = tensorTy(op.getInput());
    Value y = reduce(
        b, op.getLoc(), ty.getShape(), op.getDims(), op.getKeepdim(),
        ValueRange{op.getInput()}, {b.getMultiDimIdentityMap(ty.getRank())},
        ty.getElementType(), IsMax ? -INFINITY : INFINITY,
        [](OpBuilder &nb, Location l, Value acc, ValueRange a) -> Value {
          if (IsMax)
            return arith::MaximumFOp::create(nb, l, acc, a[0]);
          return arith::MinimumFOp::create(nb, l, acc, a[0]);
        });
    b.replaceOp(op, y);
    return success();
  }
};

/// The map reading a reduction's result (`dims` reduced, kept as size 1
/// with `keepdim`) from the input's iteration space of `rank` loops.
static AffineMap reducedMap(MLIRContext *ctx, int64_t rank,
                            ArrayRef<int64_t> dims, bool keepdim) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(dims, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
    else if (keepdim)
      exprs.push_back(getAffineConstantExpr(0, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// g / ties where the input equals its group's extremum, 0 elsewhere; ties
/// counted by a reduction of its own.
struct LowerExtremumGrad : OpRewritePattern<ExtremumGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExtremumGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto ty = tensorTy(op.getInput());
    Type et = ty.getElementType();
    int64_t rank = ty.getRank();
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap red = reducedMap(ctx, rank, op.getDims(), op.getKeepdim());
    auto hit = [&](OpBuilder &nb, Location l, Value x, Value m) -> Value {
      return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, x, m);
    };
    Value ties = reduce(
        b, loc, ty.getShape(), op.getDims(), op.getKeepdim(),
        ValueRange{op.getInput(), op.getExtremum()}, {id, red}, et, 0.0,
        [&](OpBuilder &nb, Location l, Value acc, ValueRange a) -> Value {
          Value one = arith::SelectOp::create(nb, l, hit(nb, l, a[0], a[1]),
                                              floatConst(nb, l, et, 1.0),
                                              floatConst(nb, l, et, 0.0));
          return arith::AddFOp::create(nb, l, acc, one);
        });
    Value r =
        linalg::GenericOp::create(
            b, loc, TypeRange{ty},
            ValueRange{op.getInput(), op.getExtremum(), op.getGrad(), ties},
            ValueRange{emptyTensor(b, loc, ty)},
            SmallVector<AffineMap>{id, red, red, red, id},
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value share = arith::DivFOp::create(nb, l, a[2], a[3]);
              linalg::YieldOp::create(
                  nb, l,
                  arith::SelectOp::create(nb, l, hit(nb, l, a[0], a[1]), share,
                                          floatConst(nb, l, et, 0.0))
                      .getResult());
            })
            .getResult(0);
    b.replaceOp(op, r);
    return success();
  }
};

struct LowerMseLoss : OpRewritePattern<MseLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MseLossOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto ty = tensorTy(op.getInput());
    AffineMap id = b.getMultiDimIdentityMap(ty.getRank());
    Value y =
        reduce(b, loc, ty.getShape(), allDims(ty.getRank()), false,
               ValueRange{op.getInput(), op.getTarget()}, {id, id},
               ty.getElementType(), 0.0,
               [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                 Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                 return arith::AddFOp::create(
                            nb, l, acc, arith::MulFOp::create(nb, l, d, d))
                     .getResult();
               });
    if (op.getReduction() == "mean")
      y = scale(b, loc, y, 1.0 / static_cast<double>(ty.getNumElements()));
    b.replaceOp(op, y);
    return success();
  }
};

/// The column of an integer class label, clamped into [0, C) so that a
/// bad label cannot read out of bounds.
Value labelColumn(OpBuilder &b, Location l, Value label, int64_t c) {
  Type lt = label.getType();
  Value lo = arith::ConstantOp::create(b, l, lt, b.getIntegerAttr(lt, 0));
  Value hi = arith::ConstantOp::create(b, l, lt, b.getIntegerAttr(lt, c - 1));
  Value lab =
      arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, label, lo), hi);
  return arith::IndexCastOp::create(b, l, b.getIndexType(), lab);
}

/// Whether `label` is the ignore index.
Value isIgnored(OpBuilder &b, Location l, Value label, int64_t ignore) {
  Type lt = label.getType();
  return arith::CmpIOp::create(
      b, l, arith::CmpIPredicate::eq, label,
      arith::ConstantOp::create(b, l, lt, b.getIntegerAttr(lt, ignore)));
}

/// The number of labels (a 0-d tensor of `et`) that are not `ignore`.
Value countLabels(OpBuilder &b, Location loc, Value labels, Type et,
                  int64_t ignore) {
  int64_t n = tensorTy(labels).getDimSize(0);
  AffineMap d0 = AffineMap::get(1, 0, {getAffineDimExpr(0, b.getContext())},
                                b.getContext());
  return reduce(b, loc, {n}, {0}, false, ValueRange{labels}, {d0}, et, 0.0,
                [&](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                  Value one = arith::SelectOp::create(
                      nb, l, isIgnored(nb, l, a[0], ignore),
                      floatConst(nb, l, et, 0.0), floatConst(nb, l, et, 1.0));
                  return arith::AddFOp::create(nb, l, acc, one).getResult();
                });
}

struct LowerCrossEntropy : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value logits = op.getLogits();
    auto ty = tensorTy(logits);
    Type et = ty.getElementType();
    int64_t n = ty.getDimSize(0), c = ty.getDimSize(1);
    int64_t ignore = op.getIgnoreIndex();
    auto [max, sum] = maxAndSumExp(b, loc, logits, 1);
    // loss = sum_n (max[n] + log(sum[n]) - logits[n, label[n]]) over the
    // rows whose label is not ignore_index
    AffineMap d0 = AffineMap::get(1, 0, {getAffineDimExpr(0, ctx)}, ctx);
    Value y = reduce(
        b, loc, {n}, {0}, false, ValueRange{max, sum, op.getLabels()},
        {d0, d0, d0}, et, 0.0,
        [&](OpBuilder &nb, Location l, Value acc, ValueRange a) -> Value {
          Value row = linalg::IndexOp::create(nb, l, 0);
          Value col = labelColumn(nb, l, a[2], c);
          Value picked =
              tensor::ExtractOp::create(nb, l, logits, ValueRange{row, col});
          Value lse = arith::AddFOp::create(nb, l, a[0],
                                            math::LogOp::create(nb, l, a[1]));
          // acc + (ignored ? 0 : term): one addf into the accumulator,
          // which a warp reduction can share.
          Value term = arith::SelectOp::create(
              nb, l, isIgnored(nb, l, a[2], ignore), floatConst(nb, l, et, 0.0),
              arith::SubFOp::create(nb, l, lse, picked));
          return arith::AddFOp::create(nb, l, acc, term);
        });
    if (op.getReduction() == "mean")
      y = elementwise(
          b, loc, tensorTy(y),
          ValueRange{y, countLabels(b, loc, op.getLabels(), et, ignore)},
          [](OpBuilder &nb, Location l, ValueRange a) -> Value {
            return arith::DivFOp::create(nb, l, a[0], a[1]);
          });
    b.replaceOp(op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Unary element functions
//===----------------------------------------------------------------------===//

template <typename OpTy>
Value activationFn(OpBuilder &b, Location l, Value x, OpTy) {
  if constexpr (std::is_same_v<OpTy, ReluOp>)
    return applyActivation(b, l, "relu", x);
  else if constexpr (std::is_same_v<OpTy, TanhOp>)
    return applyActivation(b, l, "tanh", x);
  else
    return applyActivation(b, l, "sigmoid", x);
}

Value geluFn(OpBuilder &b, Location l, Value x, GeluOp op) {
  return applyActivation(
      b, l, op.getApproximate() == "tanh" ? "gelu_tanh" : "gelu", x);
}
Value expFn(OpBuilder &b, Location l, Value x, ExpOp) {
  return math::ExpOp::create(b, l, x);
}
Value logFn(OpBuilder &b, Location l, Value x, LogOp) {
  return math::LogOp::create(b, l, x);
}
Value sqrtFn(OpBuilder &b, Location l, Value x, SqrtOp) {
  return math::SqrtOp::create(b, l, x);
}
Value erfFn(OpBuilder &b, Location l, Value x, ErfOp) {
  return math::ErfOp::create(b, l, x);
}
Value negFn(OpBuilder &b, Location l, Value x, NegOp) {
  return arith::NegFOp::create(b, l, x);
}

//===----------------------------------------------------------------------===//
// Training: gradient ops and the optimizer update
//===----------------------------------------------------------------------===//

struct LowerFill : OpRewritePattern<FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FillOp op, PatternRewriter &b) const override {
    b.replaceOp(op, filledTensor(b, op.getLoc(), tensorTy(op.getResult()),
                                 op.getValue().convertToDouble()));
    return success();
  }
};

struct LowerScale : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp op, PatternRewriter &b) const override {
    b.replaceOp(op, scale(b, op.getLoc(), op.getInput(),
                          op.getFactor().convertToDouble()));
    return success();
  }
};

struct LowerBroadcastTo : OpRewritePattern<BroadcastToOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastToOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(op, elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                                ValueRange{op.getInput()},
                                [](OpBuilder &, Location, ValueRange a) {
                                  return a[0];
                                }));
    return success();
  }
};

/// `g * f'(x)` for the activation `act`, with PyTorch's formulas.
Value activationGradient(OpBuilder &b, Location loc, StringRef act, Value x,
                         Value g) {
  Type t = x.getType();
  auto c = [&](double v) { return floatConst(b, loc, t, v); };
  auto mul = [&](Value l, Value r) {
    return arith::MulFOp::create(b, loc, l, r).getResult();
  };
  auto add = [&](Value l, Value r) {
    return arith::AddFOp::create(b, loc, l, r).getResult();
  };
  auto sub = [&](Value l, Value r) {
    return arith::SubFOp::create(b, loc, l, r).getResult();
  };
  if (act == "relu") {
    Value pos =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, c(0.0));
    return arith::SelectOp::create(b, loc, pos, g, c(0.0));
  }
  if (act == "tanh") {
    Value y = math::TanhOp::create(b, loc, x);
    return mul(g, sub(c(1.0), mul(y, y)));
  }
  if (act == "sigmoid") {
    Value y = applyActivation(b, loc, "sigmoid", x);
    return mul(mul(g, sub(c(1.0), y)), y);
  }
  if (act == "gelu") {
    Value cdf = mul(
        c(0.5), add(c(1.0), math::ErfOp::create(b, loc, mul(x, c(M_SQRT1_2)))));
    Value pdf = mul(c(M_2_SQRTPI * M_SQRT1_2 * 0.5),
                    math::ExpOp::create(b, loc, mul(c(-0.5), mul(x, x))));
    return mul(g, add(cdf, mul(x, pdf)));
  }
  // gelu_tanh
  const double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, kKappa = 0.044715;
  Value xSq = mul(x, x);
  Value inner = mul(c(kBeta), add(x, mul(c(kKappa), mul(xSq, x))));
  Value th = math::TanhOp::create(b, loc, inner);
  Value left = mul(c(0.5), x), right = add(c(1.0), th);
  Value leftD = mul(c(0.5), right);
  Value rightD = mul(mul(mul(left, sub(c(1.0), mul(th, th))), c(kBeta)),
                     add(c(1.0), mul(c(3.0 * kKappa), xSq)));
  return mul(g, add(leftD, rightD));
}

struct LowerActivationGrad : OpRewritePattern<ActivationGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ActivationGradOp op,
                                PatternRewriter &b) const override {
    StringRef act = op.getActivation();
    b.replaceOp(op, elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                                ValueRange{op.getInput(), op.getGrad()},
                                [&](OpBuilder &nb, Location l, ValueRange a) {
                                  return activationGradient(nb, l, act, a[0],
                                                            a[1]);
                                }));
    return success();
  }
};

struct LowerCrossEntropyGrad : OpRewritePattern<CrossEntropyGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value logits = op.getLogits();
    auto ty = tensorTy(logits);
    Type et = ty.getElementType();
    int64_t c = ty.getDimSize(1);
    int64_t ignore = op.getIgnoreIndex();
    // The factor: g, divided by the rows counted for a mean.
    Value factor = op.getGrad();
    if (op.getReduction() == "mean")
      factor = elementwise(
          b, loc, tensorTy(factor),
          ValueRange{factor, countLabels(b, loc, op.getLabels(), et, ignore)},
          [](OpBuilder &nb, Location l, ValueRange a) -> Value {
            return arith::DivFOp::create(nb, l, a[0], a[1]);
          });
    auto [max, sum] = maxAndSumExp(b, loc, logits, 1);
    AffineMap id = b.getMultiDimIdentityMap(2);
    AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    AffineMap scalar = AffineMap::get(2, 0, {}, ctx);
    SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
    // (softmax(x) - onehot(label)) * factor, zero on ignored rows
    Value y =
        linalg::GenericOp::create(
            b, loc, TypeRange{ty},
            ValueRange{logits, max, sum, op.getLabels(), factor},
            ValueRange{emptyTensor(b, loc, ty)},
            SmallVector<AffineMap>{id, row, row, row, scalar, id}, iters,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value e = math::ExpOp::create(
                  nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
              Value p = arith::DivFOp::create(nb, l, e, a[2]);
              Value labIdx = labelColumn(nb, l, a[3], c);
              Value col = linalg::IndexOp::create(nb, l, 1);
              Value hit = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                                col, labIdx);
              Value onehot = arith::SelectOp::create(
                  nb, l, hit, floatConst(nb, l, et, 1.0),
                  floatConst(nb, l, et, 0.0));
              Value v = arith::MulFOp::create(
                  nb, l, arith::SubFOp::create(nb, l, p, onehot), a[4]);
              v = arith::SelectOp::create(nb, l, isIgnored(nb, l, a[3], ignore),
                                          floatConst(nb, l, et, 0.0), v);
              linalg::YieldOp::create(nb, l, v);
            })
            .getResult(0);
    b.replaceOp(op, y);
    return success();
  }
};

struct LowerLayerNormGrad : OpRewritePattern<LayerNormGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = op.getInput(), w = op.getWeight(), g = op.getGrad();
    auto ty = tensorTy(x);
    int64_t rank = ty.getRank(), dim = rank - 1;
    Type et = ty.getElementType();
    double invD = 1.0 / static_cast<double>(ty.getShape().back());
    auto [mean, rstd] =
        layerNormStats(b, loc, x, op.getEpsilon().convertToDouble());
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap row = dropDimMap(ctx, rank, dim);
    AffineMap last = AffineMap::get(rank, 0, {getAffineDimExpr(dim, ctx)}, ctx);
    auto xhat = [](OpBuilder &nb, Location l, Value xv, Value m, Value r) {
      return arith::MulFOp::create(nb, l, arith::SubFOp::create(nb, l, xv, m),
                                   r)
          .getResult();
    };
    // Per row: s1 = sum(g * w), s2 = sum(g * w * xhat).
    Value s1 = reduce(
        b, loc, ty.getShape(), {dim}, false, ValueRange{g, w}, {id, last}, et,
        0.0, [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
          return arith::AddFOp::create(nb, l, acc,
                                       arith::MulFOp::create(nb, l, a[0], a[1]))
              .getResult();
        });
    Value s2 =
        reduce(b, loc, ty.getShape(), {dim}, false,
               ValueRange{x, mean, rstd, g, w}, {id, row, row, id, last}, et,
               0.0, [&](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                 Value dy = arith::MulFOp::create(nb, l, a[3], a[4]);
                 return arith::AddFOp::create(
                            nb, l, acc,
                            arith::MulFOp::create(
                                nb, l, dy, xhat(nb, l, a[0], a[1], a[2])))
                     .getResult();
               });
    // dx = rstd * (dy - s1/D - xhat * s2/D)
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value dx =
        linalg::GenericOp::create(
            b, loc, TypeRange{ty}, ValueRange{x, mean, rstd, g, w, s1, s2},
            ValueRange{emptyTensor(b, loc, ty)},
            SmallVector<AffineMap>{id, row, row, id, last, row, row, id}, iters,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value xh = xhat(nb, l, a[0], a[1], a[2]);
              Value dy = arith::MulFOp::create(nb, l, a[3], a[4]);
              Value k = floatConst(nb, l, et, invD);
              Value t = arith::SubFOp::create(
                  nb, l, dy, arith::MulFOp::create(nb, l, a[5], k));
              t = arith::SubFOp::create(
                  nb, l, t,
                  arith::MulFOp::create(nb, l, xh,
                                        arith::MulFOp::create(nb, l, a[6], k)));
              linalg::YieldOp::create(
                  nb, l, arith::MulFOp::create(nb, l, a[2], t).getResult());
            })
            .getResult(0);
    // Weight and bias gradients: sums over every leading dimension.
    SmallVector<int64_t> leading = allDims(dim);
    Value dw =
        reduce(b, loc, ty.getShape(), leading, false,
               ValueRange{x, mean, rstd, g}, {id, row, row, id}, et, 0.0,
               [&](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                 return arith::AddFOp::create(
                            nb, l, acc,
                            arith::MulFOp::create(
                                nb, l, a[3], xhat(nb, l, a[0], a[1], a[2])))
                     .getResult();
               });
    Value db = sumOver(b, loc, g, leading, false);
    b.replaceOp(op, ValueRange{dx, dw, db});
    return success();
  }
};

/// `base ** n` in double precision for 0 <= n < 2^32, by binary
/// exponentiation unrolled over the bits of `n` (an i64): straight-line
/// code, no libm.
Value powInt(OpBuilder &b, Location loc, double base, Value n) {
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  Value result = floatConst(b, loc, f64, 1.0);
  Value p = floatConst(b, loc, f64, base);
  Value one = arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
  for (int bit = 0; bit < 32; ++bit) {
    Value shift =
        arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(bit));
    Value set = arith::TruncIOp::create(
        b, loc, b.getI1Type(),
        arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, n, shift),
                              one));
    result = arith::SelectOp::create(
        b, loc, set, arith::MulFOp::create(b, loc, result, p), result);
    p = arith::MulFOp::create(b, loc, p, p);
  }
  return result;
}

/// A linalg.generic over tensors of one shape that updates `outs` in place
/// (they are its destinations) from `ins`; `body(ins..., outs...)` returns
/// the new values of the outs.
SmallVector<Value> updateInPlace(
    OpBuilder &b, Location loc, ValueRange ins, ValueRange outs,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  auto ty = tensorTy(outs.front());
  SmallVector<AffineMap> maps(ins.size() + outs.size(),
                              b.getMultiDimIdentityMap(ty.getRank()));
  SmallVector<utils::IteratorType> iters(ty.getRank(),
                                         utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, outs.getTypes(), ins, outs, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args));
      });
  return SmallVector<Value>(op.getResults());
}

struct LowerOptimizerUpdate : OpRewritePattern<OptimizerUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OptimizerUpdateOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    DictionaryAttr cfg = op.getConfig();
    StringRef kind = cfg.getAs<StringAttr>("kind").getValue();
    auto num = [&](StringRef key) {
      return cfg.getAs<FloatAttr>(key).getValueAsDouble();
    };
    Type f64 = b.getF64Type();
    Value step = op.getStep();
    Type st = tensorTy(step).getElementType();

    // fp16 loss scaling: the gradients are scaled by the current scale;
    // unscale them, and find whether any is infinite or NaN.
    bool scaled = !op.getScaler().empty();
    Value found, inv, eff, tracker;
    if (scaled) {
      Type f32 = b.getF32Type();
      Value scaleState =
          tensor::ExtractOp::create(b, loc, op.getScaler()[0], ValueRange{});
      tracker =
          tensor::ExtractOp::create(b, loc, op.getScaler()[1], ValueRange{});
      Value zero = floatConst(b, loc, f32, 0.0);
      eff = arith::SelectOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, scaleState,
                                zero),
          floatConst(b, loc, f32, num("init_scale")), scaleState);
      // PyTorch: scale.double().reciprocal().float()
      inv = arith::TruncFOp::create(
          b, loc, f32,
          arith::DivFOp::create(
              b, loc, floatConst(b, loc, b.getF64Type(), 1.0),
              arith::ExtFOp::create(b, loc, b.getF64Type(), eff)));
      Value bad = zero;
      for (Value g : op.getGrads()) {
        auto gTy = tensorTy(g);
        Value flag = reduce(
            b, loc, gTy.getShape(), allDims(gTy.getRank()), false,
            ValueRange{g}, {b.getMultiDimIdentityMap(gTy.getRank())}, f32, 0.0,
            [&](OpBuilder &nb, Location l, Value acc, ValueRange a) {
              Value x = arith::MulFOp::create(nb, l, a[0], inv);
              // x - x is 0 for a finite x, NaN for an infinite or NaN one.
              Value d = arith::SubFOp::create(nb, l, x, x);
              Value nonFinite =
                  arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNE, d,
                                        floatConst(nb, l, f32, 0.0));
              return arith::SelectOp::create(nb, l, nonFinite,
                                             floatConst(nb, l, f32, 1.0), acc)
                  .getResult();
            });
        bad = arith::MaximumFOp::create(
            b, loc, bad, tensor::ExtractOp::create(b, loc, flag, ValueRange{}));
      }
      found =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, bad, zero);
    }
    // Keeps the old value when the step is skipped.
    auto keepIfSkipped = [&](OpBuilder &nb, Location l, Value oldV,
                             Value newV) -> Value {
      return scaled
                 ? arith::SelectOp::create(nb, l, found, oldV, newV).getResult()
                 : newV;
    };

    // The step count, before and after this step.
    Value oldStep = tensor::ExtractOp::create(b, loc, step, ValueRange{});
    Value newStep = keepIfSkipped(
        b, loc, oldStep,
        arith::AddFOp::create(b, loc, oldStep, floatConst(b, loc, st, 1.0)));
    Value newStepT = updateInPlace(b, loc, ValueRange{}, ValueRange{step},
                                   [&](OpBuilder &, Location, ValueRange) {
                                     return SmallVector<Value>{newStep};
                                   })[0];

    size_t n = op.getParams().size();
    SmallVector<Value> newParams(n), newStates(op.getStates().size());
    double lr = num("lr"), wd = num("weight_decay");
    if (kind == "sgd") {
      double momentum = num("momentum"), dampening = num("dampening");
      bool nesterov = cfg.getAs<BoolAttr>("nesterov").getValue();
      // PyTorch creates the momentum buffer from the first gradient.
      Value first = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          oldStep, floatConst(b, loc, st, 0.0));
      for (size_t i = 0; i < n; ++i) {
        SmallVector<Value> outs{op.getParams()[i]};
        if (momentum != 0.0)
          outs.push_back(op.getStates()[i]);
        SmallVector<Value> r = updateInPlace(
            b, loc, ValueRange{op.getGrads()[i]}, outs,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Type et = a[0].getType();
              auto c = [&](double v) { return floatConst(nb, l, et, v); };
              Value d = a[0], p = a[1];
              if (scaled)
                d = arith::MulFOp::create(nb, l, d,
                                          convertFloat(nb, l, inv, et));
              if (wd != 0.0)
                d = arith::AddFOp::create(
                    nb, l, d, arith::MulFOp::create(nb, l, c(wd), p));
              SmallVector<Value> res;
              Value buf;
              if (momentum != 0.0) {
                Value old = arith::AddFOp::create(
                    nb, l, arith::MulFOp::create(nb, l, a[2], c(momentum)),
                    arith::MulFOp::create(nb, l, c(1.0 - dampening), d));
                buf = arith::SelectOp::create(nb, l, first, d, old);
                d = nesterov
                        ? arith::AddFOp::create(
                              nb, l, d,
                              arith::MulFOp::create(nb, l, c(momentum), buf))
                              .getResult()
                        : buf;
              }
              res.push_back(keepIfSkipped(
                  nb, l, a[1],
                  arith::AddFOp::create(
                      nb, l, p, arith::MulFOp::create(nb, l, c(-lr), d))));
              if (buf)
                res.push_back(keepIfSkipped(nb, l, a[2], buf));
              return res;
            });
        newParams[i] = r[0];
        if (momentum != 0.0)
          newStates[i] = r[1];
      }
    } else {
      auto betas = cfg.getAs<ArrayAttr>("betas");
      double beta1 = cast<FloatAttr>(betas[0]).getValueAsDouble();
      double beta2 = cast<FloatAttr>(betas[1]).getValueAsDouble();
      double eps = num("eps");
      bool decoupled = kind == "adamw";
      // Bias corrections in double precision, like PyTorch's Python floats.
      Value k = arith::FPToSIOp::create(b, loc, b.getI64Type(), newStep);
      Value one = floatConst(b, loc, f64, 1.0);
      Value bc1 = arith::SubFOp::create(b, loc, one, powInt(b, loc, beta1, k));
      Value bc2 = arith::SubFOp::create(b, loc, one, powInt(b, loc, beta2, k));
      Value negStepSize = arith::NegFOp::create(
          b, loc,
          arith::DivFOp::create(b, loc, floatConst(b, loc, f64, lr), bc1));
      Value bc2Sqrt = math::SqrtOp::create(b, loc, bc2);
      for (size_t i = 0; i < n; ++i) {
        Type et = tensorTy(op.getParams()[i]).getElementType();
        Value negStep = arith::TruncFOp::create(b, loc, et, negStepSize);
        Value bc2S = arith::TruncFOp::create(b, loc, et, bc2Sqrt);
        SmallVector<Value> r = updateInPlace(
            b, loc, ValueRange{op.getGrads()[i]},
            ValueRange{op.getParams()[i], op.getStates()[i],
                       op.getStates()[n + i]},
            [&](OpBuilder &nb, Location l, ValueRange a) {
              auto c = [&](double v) { return floatConst(nb, l, et, v); };
              auto mul = [&](Value x, Value y) {
                return arith::MulFOp::create(nb, l, x, y).getResult();
              };
              auto add = [&](Value x, Value y) {
                return arith::AddFOp::create(nb, l, x, y).getResult();
              };
              Value g = a[0], p = a[1], m = a[2], v = a[3];
              if (scaled)
                g = mul(g, convertFloat(nb, l, inv, et));
              if (decoupled)
                p = mul(p, c(1.0 - lr * wd));
              else if (wd != 0.0)
                g = add(g, mul(c(wd), p));
              // exp_avg.lerp_(grad, 1 - beta1)
              Value m2 = add(
                  m, mul(c(1.0 - beta1), arith::SubFOp::create(nb, l, g, m)));
              // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)
              Value v2 = add(mul(v, c(beta2)), mul(mul(c(1.0 - beta2), g), g));
              Value denom =
                  add(arith::DivFOp::create(
                          nb, l, math::SqrtOp::create(nb, l, v2), bc2S),
                      c(eps));
              // param.addcdiv_(exp_avg, denom, value=-step_size)
              Value p2 =
                  add(p, arith::DivFOp::create(nb, l, mul(negStep, m2), denom));
              return SmallVector<Value>{keepIfSkipped(nb, l, a[1], p2),
                                        keepIfSkipped(nb, l, a[2], m2),
                                        keepIfSkipped(nb, l, a[3], v2)};
            });
        newParams[i] = r[0];
        newStates[i] = r[1];
        newStates[n + i] = r[2];
      }
    }
    SmallVector<Value> results{newStepT};
    results.append(newParams);
    results.append(newStates);
    if (scaled) {
      // torch.amp.GradScaler.update with its defaults: x0.5 on an overflow,
      // x2 after 2000 finite steps in a row.
      Type f32 = b.getF32Type();
      auto c = [&](double v) { return floatConst(b, loc, f32, v); };
      Value next = arith::AddFOp::create(b, loc, tracker, c(1.0));
      Value grow = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                         next, c(2000.0));
      Value newTracker = arith::SelectOp::create(
          b, loc, found, c(0.0),
          arith::SelectOp::create(b, loc, grow, c(0.0), next));
      Value newScale = arith::SelectOp::create(
          b, loc, found, arith::MulFOp::create(b, loc, eff, c(0.5)),
          arith::SelectOp::create(
              b, loc, grow, arith::MulFOp::create(b, loc, eff, c(2.0)), eff));
      auto scalarOut = [&](Value dest, Value v) {
        return updateInPlace(b, loc, ValueRange{}, ValueRange{dest},
                             [&](OpBuilder &, Location, ValueRange) {
                               return SmallVector<Value>{v};
                             })[0];
      };
      results.push_back(scalarOut(op.getScaler()[0], newScale));
      results.push_back(scalarOut(op.getScaler()[1], newTracker));
      Type i32 = b.getI32Type();
      Value skipped = arith::ExtUIOp::create(b, loc, i32, found);
      results.push_back(tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, i32), ValueRange{skipped}));
    }
    b.replaceOp(op, results);
    return success();
  }
};

struct LowerLossScale : OpRewritePattern<LossScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LossScaleOp op,
                                PatternRewriter &b) const override {
    double init = op.getInit().convertToDouble();
    b.replaceOp(op, elementwise(b, op.getLoc(), tensorTy(op.getResult()),
                                ValueRange{op.getState()},
                                [&](OpBuilder &nb, Location l, ValueRange a) {
                                  Type t = a[0].getType();
                                  Value unset = arith::CmpFOp::create(
                                      nb, l, arith::CmpFPredicate::OEQ, a[0],
                                      floatConst(nb, l, t, 0.0));
                                  return arith::SelectOp::create(
                                             nb, l, unset,
                                             floatConst(nb, l, t, init), a[0])
                                      .getResult();
                                }));
    return success();
  }
};

struct LowerCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op, PatternRewriter &b) const override {
    auto inTy = tensorTy(op.getInput()), outTy = tensorTy(op.getResult());
    if (auto it = dyn_cast<IntegerType>(inTy.getElementType())) {
      // Integers to float: a bool (i1) is unsigned, the others signed.
      AffineMap id = b.getMultiDimIdentityMap(inTy.getRank());
      Value r =
          linalg::GenericOp::create(
              b, op.getLoc(), TypeRange{outTy}, ValueRange{op.getInput()},
              ValueRange{emptyTensor(b, op.getLoc(), outTy)},
              SmallVector<AffineMap>{id, id},
              SmallVector<utils::IteratorType>(inTy.getRank(),
                                               utils::IteratorType::parallel),
              [&](OpBuilder &nb, Location l, ValueRange a) {
                Type et = outTy.getElementType();
                Value v;
                if (auto ot = dyn_cast<IntegerType>(et))
                  // Integers: a bool zero-extends, the others sign-extend
                  // or truncate (wrapping, as C and PyTorch do).
                  v = ot.getWidth() < it.getWidth()
                          ? arith::TruncIOp::create(nb, l, et, a[0]).getResult()
                      : ot.getWidth() == it.getWidth() ? a[0]
                      : it.getWidth() == 1
                          ? arith::ExtUIOp::create(nb, l, et, a[0]).getResult()
                          : arith::ExtSIOp::create(nb, l, et, a[0]).getResult();
                else
                  v = it.getWidth() == 1
                          ? arith::UIToFPOp::create(nb, l, et, a[0]).getResult()
                          : arith::SIToFPOp::create(nb, l, et, a[0])
                                .getResult();
                linalg::YieldOp::create(nb, l, v);
              })
              .getResult(0);
      b.replaceOp(op, r);
      return success();
    }
    b.replaceOp(op, convertTensor(b, op.getLoc(), op.getInput(),
                                  outTy.getElementType()));
    return success();
  }
};

/// A host-boundary transfer has no code of its own: the runtime stages the
/// entry's inputs and outputs (docs/gpu.md). Anything else would need a
/// copy between devices inside the entry, which no placement produces.
struct LowerTransfer : OpRewritePattern<TransferOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransferOp op,
                                PatternRewriter &b) const override {
    Value input = op.getInput();
    bool fromArgument =
        isa<BlockArgument>(input) &&
        isa<func::FuncOp>(input.getParentBlock()->getParentOp());
    bool toReturn = llvm::all_of(op->getUsers(), [](Operation *user) {
      return isa<func::ReturnOp>(user);
    });
    if (!fromArgument && !toReturn)
      return op.emitOpError("moves a value inside the entry; only transfers "
                            "of entry arguments and results can be lowered");
    b.replaceOp(op, input);
    return success();
  }
};

struct DlcLowerToLinalgPass
    : dlc::impl::DlcLowerToLinalgPassBase<DlcLowerToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<
        LowerLinear, LowerMatmul, LowerAttention, LowerSoftmax, LowerLogSoftmax,
        LowerLayerNorm, LowerReshape, LowerTranspose, LowerMseLoss,
        LowerCrossEntropy, LowerReduction<SumOp, false>,
        LowerReduction<MeanOp, true>, LowerExtremum<MaxOp, true>,
        LowerExtremum<MinOp, false>, LowerExtremumGrad,
        LowerBinary<AddOp, arith::AddFOp>, LowerBinary<SubOp, arith::SubFOp>,
        LowerBinary<MulOp, arith::MulFOp>, LowerBinary<DivOp, arith::DivFOp>,
        LowerFill, LowerScale, LowerBroadcastTo, LowerActivationGrad,
        LowerCrossEntropyGrad, LowerLayerNormGrad, LowerOptimizerUpdate,
        LowerCast, LowerLossScale, LowerBatchNorm, LowerTransfer>(ctx);
    patterns.add<LowerUnary<ReluOp>>(ctx, activationFn<ReluOp>);
    patterns.add<LowerUnary<TanhOp>>(ctx, activationFn<TanhOp>);
    patterns.add<LowerUnary<SigmoidOp>>(ctx, activationFn<SigmoidOp>);
    patterns.add<LowerUnary<GeluOp>>(ctx, geluFn);
    patterns.add<LowerUnary<ExpOp>>(ctx, expFn);
    patterns.add<LowerUnary<LogOp>>(ctx, logFn);
    patterns.add<LowerUnary<SqrtOp>>(ctx, sqrtFn);
    patterns.add<LowerUnary<ErfOp>>(ctx, erfFn);
    patterns.add<LowerUnary<NegOp>>(ctx, negFn);
    populateConvolutionLoweringPatterns(patterns);
    populatePoolingLoweringPatterns(patterns);
    populateDataMovementLoweringPatterns(patterns);

    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect>();
    target.addIllegalDialect<DlcDialect>();
    target.addLegalOp<ParamOp, ParameterOp, AssignOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
