//===- DlcToLinalg.cpp - dlc-lower-to-linalg ------------------------------===//
//
// Lowers dlc compute ops to destination-style linalg ops on tensors. Every
// lowering is built from three helpers: an elementwise linalg.generic with
// NumPy broadcasting in its indexing maps, a reduction linalg.generic over a
// set of dimensions, and the contractions. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
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

namespace {

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

RankedTensorType tensorTy(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value floatConst(OpBuilder &b, Location loc, Type ty, double v) {
  return arith::ConstantOp::create(b, loc, ty, b.getFloatAttr(ty, v));
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType ty) {
  return tensor::EmptyOp::create(b, loc, ty.getShape(), ty.getElementType());
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType ty,
                   double value) {
  Value init = emptyTensor(b, loc, ty);
  Value c = floatConst(b, loc, ty.getElementType(), value);
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
    maps.push_back(broadcastMap(ctx, tensorTy(in).getShape(),
                                resultTy.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultTy.getRank()));
  SmallVector<utils::IteratorType> iters(resultTy.getRank(),
                                         utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{resultTy}, inputs,
      ValueRange{emptyTensor(b, loc, resultTy)}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = body(nb, nloc, args.drop_back());
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
Value reduce(OpBuilder &b, Location loc, ArrayRef<int64_t> space,
             ArrayRef<int64_t> dims, bool keepdim, ValueRange inputs,
             ArrayRef<AffineMap> inputMaps, Type elemTy, double initValue,
             function_ref<Value(OpBuilder &, Location, Value, ValueRange)>
                 combine) {
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
  if (act == "relu")
    return arith::MaximumFOp::create(b, loc, x, floatConst(b, loc, t, 0.0));
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
    Value s = arith::MulFOp::create(b, loc, x,
                                    floatConst(b, loc, t, M_SQRT1_2));
    inner = math::ErfOp::create(b, loc, s);
  } else { // gelu_tanh
    Value x3 = arith::MulFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, floatConst(b, loc, t, 0.044715), x3));
    Value k = floatConst(b, loc, t, std::sqrt(2.0 / M_PI));
    inner = math::TanhOp::create(b, loc,
                                 arith::MulFOp::create(b, loc, k, poly));
  }
  Value hx = arith::MulFOp::create(b, loc, half, x);
  return arith::MulFOp::create(b, loc, hx,
                               arith::AddFOp::create(b, loc, one, inner));
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

struct LowerLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto inTy = tensorTy(op.getInput()), wTy = tensorTy(op.getWeight());
    auto resTy = tensorTy(op.getResult());
    Type elemTy = resTy.getElementType();
    int64_t k = wTy.getDimSize(1), n = wTy.getDimSize(0);
    int64_t m = inTy.getNumElements() / k;

    // Flatten the leading dimensions: [..., K] -> [M, K].
    Value x = op.getInput();
    auto x2Ty = RankedTensorType::get({m, k}, elemTy);
    x = reshapeTo(b, loc, x, x2Ty);

    // [N, K] -> [K, N]: the layout the tiled CPU matmul streams.
    auto wtTy = RankedTensorType::get({k, n}, elemTy);
    Value wt = linalg::TransposeOp::create(b, loc, op.getWeight(),
                                           emptyTensor(b, loc, wtTy),
                                           ArrayRef<int64_t>{1, 0})
                   .getResult()[0];
    auto accTy = RankedTensorType::get({m, n}, elemTy);
    Value acc = filledTensor(b, loc, accTy, 0.0);
    Value y = linalg::MatmulOp::create(b, loc, TypeRange{accTy},
                                       ValueRange{x, wt}, ValueRange{acc})
                  .getResult(0);

    // Epilogue: bias and activation in one elementwise loop.
    StringRef act = op.getActivation();
    if (op.getBias() || act != "none") {
      SmallVector<Value> ins{y};
      if (op.getBias())
        ins.push_back(op.getBias());
      bool hasBias = static_cast<bool>(op.getBias());
      y = elementwise(b, loc, accTy, ins,
                      [&](OpBuilder &nb, Location nloc, ValueRange a) {
                        Value v = a[0];
                        if (hasBias)
                          v = arith::AddFOp::create(nb, nloc, v, a[1]);
                        return applyActivation(nb, nloc, act, v);
                      });
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
    Value acc = filledTensor(b, loc, resTy, 0.0);
    Value y;
    if (resTy.getRank() == 2)
      y = linalg::MatmulOp::create(b, loc, TypeRange{resTy},
                                   ValueRange{op.getLhs(), op.getRhs()},
                                   ValueRange{acc})
              .getResult(0);
    else
      y = linalg::BatchMatmulOp::create(b, loc, TypeRange{resTy},
                                        ValueRange{op.getLhs(), op.getRhs()},
                                        ValueRange{acc})
              .getResult(0);
    b.replaceOp(op, y);
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
    Value y = elementwise(
        b, op.getLoc(), tensorTy(op.getResult()),
        ValueRange{op.getLhs(), op.getRhs()},
        [](OpBuilder &nb, Location loc, ValueRange a) -> Value {
          return ArithOp::create(nb, loc, a[0], a[1]);
        });
    b.replaceOp(op, y);
    return success();
  }
};

/// Unary ops: `fn(builder, loc, x)` computes one element.
template <typename SrcOp>
struct LowerUnary : OpRewritePattern<SrcOp> {
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
  Value max = reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{x}, {id},
                     et, -INFINITY,
                     [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                       return arith::MaximumFOp::create(nb, l, acc, a[0])
                           .getResult();
                     });
  Value sum = reduce(
      b, loc, ty.getShape(), {dim}, false, ValueRange{x, max},
      {id, dropDimMap(ctx, rank, dim)}, et, 0.0,
      [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
        Value e = math::ExpOp::create(nb, l,
                                      arith::SubFOp::create(nb, l, a[0], a[1]));
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
                        Value shifted = arith::SubFOp::create(nb, l, a[0], a[1]);
                        return arith::SubFOp::create(
                            nb, l, shifted, math::LogOp::create(nb, l, a[2]));
                      });
    b.replaceOp(op, y);
    return success();
  }
};

struct LowerLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = op.getInput();
    auto ty = tensorTy(x);
    int64_t rank = ty.getRank(), dim = rank - 1;
    Type et = ty.getElementType();
    double invD = 1.0 / static_cast<double>(ty.getShape().back());
    double eps = op.getEpsilon().convertToDouble();
    AffineMap id = b.getMultiDimIdentityMap(rank);
    AffineMap row = dropDimMap(ctx, rank, dim);

    Value sum = reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{x},
                       {id}, et, 0.0,
                       [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                         return arith::AddFOp::create(nb, l, acc, a[0])
                             .getResult();
                       });
    auto rowTy = tensorTy(sum);
    Value mean = elementwise(b, loc, rowTy, ValueRange{sum},
                             [&](OpBuilder &nb, Location l, ValueRange a) {
                               return arith::MulFOp::create(
                                          nb, l, a[0],
                                          floatConst(nb, l, et, invD))
                                   .getResult();
                             });
    Value sq = reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{x, mean},
                      {id, row}, et, 0.0,
                      [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                        Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                        return arith::AddFOp::create(
                                   nb, l, acc,
                                   arith::MulFOp::create(nb, l, d, d))
                            .getResult();
                      });
    // rstd = 1 / sqrt(var + eps), one value per row.
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
    // y = (x - mean) * rstd * weight + bias
    AffineMap last =
        AffineMap::get(rank, 0, {getAffineDimExpr(dim, ctx)}, ctx);
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

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

struct LowerReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(op, reshapeTo(b, op.getLoc(), op.getInput(),
                              tensorTy(op.getResult())));
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
    Value y = reduce(b, loc, ty.getShape(), op.getDims(), op.getKeepdim(),
                     ValueRange{op.getInput()},
                     {b.getMultiDimIdentityMap(ty.getRank())},
                     ty.getElementType(), 0.0,
                     [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                       return arith::AddFOp::create(nb, l, acc, a[0])
                           .getResult();
                     });
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

SmallVector<int64_t> allDims(int64_t rank) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    dims.push_back(d);
  return dims;
}

struct LowerMseLoss : OpRewritePattern<MseLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MseLossOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto ty = tensorTy(op.getInput());
    AffineMap id = b.getMultiDimIdentityMap(ty.getRank());
    Value y = reduce(b, loc, ty.getShape(), allDims(ty.getRank()), false,
                     ValueRange{op.getInput(), op.getTarget()}, {id, id},
                     ty.getElementType(), 0.0,
                     [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                       Value d = arith::SubFOp::create(nb, l, a[0], a[1]);
                       return arith::AddFOp::create(
                                  nb, l, acc,
                                  arith::MulFOp::create(nb, l, d, d))
                           .getResult();
                     });
    if (op.getReduction() == "mean")
      y = scale(b, loc, y, 1.0 / static_cast<double>(ty.getNumElements()));
    b.replaceOp(op, y);
    return success();
  }
};

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
    auto [max, sum] = maxAndSumExp(b, loc, logits, 1);
    // loss = sum_n (max[n] + log(sum[n]) - logits[n, label[n]])
    AffineMap d0 = AffineMap::get(1, 0, {getAffineDimExpr(0, ctx)}, ctx);
    Value y = reduce(
        b, loc, {n}, {0}, false, ValueRange{max, sum, op.getLabels()},
        {d0, d0, d0}, et, 0.0,
        [&](OpBuilder &nb, Location l, Value acc, ValueRange a) -> Value {
          Value row = linalg::IndexOp::create(nb, l, 0);
          // Clamp the label into [0, C) so a bad label cannot read out of
          // bounds.
          Type lt = a[2].getType();
          Value lo = arith::ConstantOp::create(nb, l, lt,
                                               nb.getIntegerAttr(lt, 0));
          Value hi = arith::ConstantOp::create(nb, l, lt,
                                               nb.getIntegerAttr(lt, c - 1));
          Value lab = arith::MinSIOp::create(
              nb, l, arith::MaxSIOp::create(nb, l, a[2], lo), hi);
          Value col = arith::IndexCastOp::create(nb, l, nb.getIndexType(), lab);
          Value picked = tensor::ExtractOp::create(nb, l, logits,
                                                   ValueRange{row, col});
          Value lse = arith::AddFOp::create(nb, l, a[0],
                                            math::LogOp::create(nb, l, a[1]));
          return arith::AddFOp::create(
              nb, l, acc, arith::SubFOp::create(nb, l, lse, picked));
        });
    if (op.getReduction() == "mean")
      y = scale(b, loc, y, 1.0 / static_cast<double>(n));
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
  return applyActivation(b, l, op.getApproximate() == "tanh" ? "gelu_tanh"
                                                             : "gelu",
                         x);
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
Value negFn(OpBuilder &b, Location l, Value x, NegOp) {
  return arith::NegFOp::create(b, l, x);
}

struct DlcLowerToLinalgPass
    : dlc::impl::DlcLowerToLinalgPassBase<DlcLowerToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<LowerLinear, LowerMatmul, LowerSoftmax, LowerLogSoftmax,
                 LowerLayerNorm, LowerReshape, LowerTranspose, LowerMseLoss,
                 LowerCrossEntropy, LowerReduction<SumOp, false>,
                 LowerReduction<MeanOp, true>,
                 LowerBinary<AddOp, arith::AddFOp>,
                 LowerBinary<SubOp, arith::SubFOp>,
                 LowerBinary<MulOp, arith::MulFOp>,
                 LowerBinary<DivOp, arith::DivFOp>>(ctx);
    patterns.add<LowerUnary<ReluOp>>(ctx, activationFn<ReluOp>);
    patterns.add<LowerUnary<TanhOp>>(ctx, activationFn<TanhOp>);
    patterns.add<LowerUnary<SigmoidOp>>(ctx, activationFn<SigmoidOp>);
    patterns.add<LowerUnary<GeluOp>>(ctx, geluFn);
    patterns.add<LowerUnary<ExpOp>>(ctx, expFn);
    patterns.add<LowerUnary<LogOp>>(ctx, logFn);
    patterns.add<LowerUnary<SqrtOp>>(ctx, sqrtFn);
    patterns.add<LowerUnary<NegOp>>(ctx, negFn);

    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect>();
    target.addIllegalDialect<DlcDialect>();
    target.addLegalOp<ParamOp, ParameterOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
