//===- LoweringUtils.cpp - helpers of dlc-lower-to-linalg -----------------===//
//
// The builders that every lowering of dlc-lower-to-linalg is made of
// (LoweringUtils.h): element constants and conversions, empty and filled
// tensors, an elementwise linalg.generic with NumPy broadcasting in its
// indexing maps, a reduction linalg.generic over a set of dimensions,
// reshapes as views, and the activations.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;

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

/// Applies an activation to one element.
Value applyActivation(OpBuilder &b, Location loc, Activation act, Value x) {
  Type t = x.getType();
  if (act == Activation::none)
    return x;
  if (act == Activation::relu) {
    // x < 0 ? 0 : x, PyTorch's relu to the bit: NaN and -0 pass through.
    // A compare and a select vectorise to a blend; arith.maximumf's
    // expansion on x86 (no native IEEE maximum) branches on the data.
    Value zero = floatConst(b, loc, t, 0.0);
    Value neg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    return arith::SelectOp::create(b, loc, neg, zero, x);
  }
  if (act == Activation::tanh)
    return math::TanhOp::create(b, loc, x);
  if (act == Activation::sigmoid) {
    Value one = floatConst(b, loc, t, 1.0);
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, one,
                                 arith::AddFOp::create(b, loc, one, e));
  }
  Value half = floatConst(b, loc, t, 0.5), one = floatConst(b, loc, t, 1.0);
  Value inner;
  if (act == Activation::gelu) {
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

/// Row maximum and sum(exp(x - max)) along `dim`; both drop `dim`.
std::pair<Value, Value> maxAndSumExp(OpBuilder &b, Location loc, Value x,
                                     int64_t dim, Value *exps) {
  MLIRContext *ctx = b.getContext();
  auto ty = tensorTy(x);
  int64_t rank = ty.getRank();
  Type et = ty.getElementType();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap row = dropDimMap(ctx, rank, dim);
  Value max =
      reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{x}, {id}, et,
             -INFINITY, [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
               return arith::MaximumFOp::create(nb, l, acc, a[0]).getResult();
             });
  auto shiftedExp = [](OpBuilder &nb, Location l, Value v, Value m) -> Value {
    return math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, v, m));
  };
  if (!exps)
    return {max,
            reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{x, max},
                   {id, row}, et, 0.0,
                   [&](OpBuilder &nb, Location l, Value acc, ValueRange a) {
                     Value e = shiftedExp(nb, l, a[0], a[1]);
                     return arith::AddFOp::create(nb, l, acc, e).getResult();
                   })};
  // The exponentials once, in an elementwise loop of their own (LLVM
  // vectorises it; inside the sum's loop they would be scalar, as the sum
  // is kept in order), then their sum: the same values, in the same order.
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  *exps = linalg::GenericOp::create(
              b, loc, TypeRange{ty}, ValueRange{x, max},
              ValueRange{emptyTensor(b, loc, ty)},
              SmallVector<AffineMap>{id, row, id}, iters,
              [&](OpBuilder &nb, Location l, ValueRange a) {
                linalg::YieldOp::create(nb, l, shiftedExp(nb, l, a[0], a[1]));
              })
              .getResult(0);
  Value sum =
      reduce(b, loc, ty.getShape(), {dim}, false, ValueRange{*exps}, {id}, et,
             0.0, [](OpBuilder &nb, Location l, Value acc, ValueRange a) {
               return arith::AddFOp::create(nb, l, acc, a[0]).getResult();
             });
  return {max, sum};
}

} // namespace mlir::dlc::lowering
