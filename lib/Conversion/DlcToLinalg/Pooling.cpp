//===- Pooling.cpp - max and average pooling and their gradients ---------===//
//
// Part of dlc-lower-to-linalg. A pool is one linalg.generic over
// (n, c, oh, kh, kw, ow) that reads the padded input through an affine map
// and reduces into the result; ow is the innermost loop, so the loop that
// convert-linalg-to-loops emits runs along a row of the result and
// vectorises. A [KH, KW] tensor that the body never reads gives the window
// dimensions their extent (like linalg's named pooling ops).
//
// The gradients gather: every input position sums, over the kernel taps,
// the gradient of the window that reads it through that tap (if any), so
// that no two iterations write the same element.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::lowering;

namespace {

/// The window of a pool: kernel, strides, padding [top, left, bottom,
/// right] and dilations, and the input's spatial size.
struct Window {
  int64_t kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, h, w;
};

template <typename OpTy>
Window windowOf(OpTy op, ArrayRef<int64_t> dilations, RankedTensorType in) {
  ArrayRef<int64_t> k = op.getKernel(), s = op.getStrides(),
                    p = op.getPadding();
  return {k[0],
          k[1],
          s[0],
          s[1],
          p[0],
          p[1],
          p[2],
          p[3],
          dilations[0],
          dilations[1],
          in.getDimSize(2),
          in.getDimSize(3)};
}

/// Windows of at most this many taps are combined in registers.
constexpr int64_t kMaxUnrolledTaps = 16;

/// The window reduction: `result[n, c, oh, ow] = combine over (kh, kw) of
/// xp[n, c, oh*sh + kh*dh, ow*sw + kw*dw]`, starting from `init`.
///
/// A small window is one all-parallel linalg.generic over the result that
/// reads every tap as an operand of its own and combines them in
/// registers: no read-modify-write of the result per tap, and a loop along
/// ow that LLVM vectorises without a data-dependent branch. A large window
/// is a reduction over (kh, kw), as is a window with a stride of 1.
Value poolReduce(
    OpBuilder &b, Location loc, Value xp, const Window &win,
    RankedTensorType accTy, double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // (With a stride of 1 the first tap's map would be a plain dimension,
  // from which linalg would take the loop's extent: the input's, not the
  // result's.)
  if (win.kh * win.kw <= kMaxUnrolledTaps && win.sh > 1 && win.sw > 1) {
    SmallVector<Value> taps;
    SmallVector<AffineMap> maps;
    for (int64_t i = 0; i < win.kh; ++i)
      for (int64_t j = 0; j < win.kw; ++j) {
        taps.push_back(xp);
        maps.push_back(AffineMap::get(4, 0,
                                      {d(0), d(1), d(2) * win.sh + i * win.dh,
                                       d(3) * win.sw + j * win.dw},
                                      ctx));
      }
    maps.push_back(b.getMultiDimIdentityMap(4));
    return linalg::GenericOp::create(
               b, loc, TypeRange{accTy}, taps,
               ValueRange{emptyTensor(b, loc, accTy)}, maps,
               SmallVector<utils::IteratorType>(4,
                                                utils::IteratorType::parallel),
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 Type t = accTy.getElementType();
                 Value r = convertFloat(nb, l, a[0], t);
                 for (Value x : a.drop_front().drop_back())
                   r = combine(nb, l, r, convertFloat(nb, l, x, t));
                 linalg::YieldOp::create(nb, l, r);
               })
        .getResult(0);
  }
  // Iteration space (n, c, oh, kh, kw, ow).
  AffineMap xMap = AffineMap::get(6, 0,
                                  {d(0), d(1), d(2) * win.sh + d(3) * win.dh,
                                   d(5) * win.sw + d(4) * win.dw},
                                  ctx);
  AffineMap kMap = AffineMap::get(6, 0, {d(3), d(4)}, ctx);
  AffineMap outMap = AffineMap::get(6, 0, {d(0), d(1), d(2), d(5)}, ctx);
  auto p = utils::IteratorType::parallel, r = utils::IteratorType::reduction;
  Value kernel = emptyTensor(
      b, loc, RankedTensorType::get({win.kh, win.kw}, accTy.getElementType()));
  return linalg::GenericOp::create(
             b, loc, TypeRange{accTy}, ValueRange{xp, kernel},
             ValueRange{filledTensor(b, loc, accTy, init)},
             SmallVector<AffineMap>{xMap, kMap, outMap},
             SmallVector<utils::IteratorType>{p, p, p, r, r, p},
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value x = convertFloat(nb, l, a[0], a[2].getType());
               linalg::YieldOp::create(nb, l, combine(nb, l, a[2], x));
             })
      .getResult(0);
}

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The divisor of an average pool's window at output position (oh, ow)
/// (index values), as a float of type `ty`: KH * KW with
/// `count_include_pad`, else the number of window elements inside the
/// input (at least 1).
Value avgDivisor(OpBuilder &b, Location loc, Value oh, Value ow,
                 const Window &win, bool countIncludePad, Type ty) {
  if (countIncludePad)
    return floatConst(b, loc, ty, static_cast<double>(win.kh * win.kw));
  auto inside = [&](Value o, int64_t s, int64_t pad, int64_t k, int64_t size) {
    Value start = arith::SubIOp::create(
        b, loc, arith::MulIOp::create(b, loc, o, cIndex(b, loc, s)),
        cIndex(b, loc, pad));
    Value end = arith::AddIOp::create(b, loc, start, cIndex(b, loc, k));
    Value lo = arith::MaxSIOp::create(b, loc, start, cIndex(b, loc, 0));
    Value hi = arith::MinSIOp::create(b, loc, end, cIndex(b, loc, size));
    return arith::SubIOp::create(b, loc, hi, lo).getResult();
  };
  Value count =
      arith::MulIOp::create(b, loc, inside(oh, win.sh, win.pt, win.kh, win.h),
                            inside(ow, win.sw, win.pl, win.kw, win.w));
  count = arith::MaxSIOp::create(b, loc, count, cIndex(b, loc, 1));
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  return arith::SIToFPOp::create(b, loc, ty, i64);
}

struct LowerMaxPool2D : OpRewritePattern<MaxPool2DOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPool2DOp op,
                                PatternRewriter &b) const override {
    auto inTy = tensorTy(op.getInput()), resTy = tensorTy(op.getResult());
    Window win = windowOf(op, op.getDilations(), inTy);
    // Padding is -inf: it never wins. A NaN in a window wins (PyTorch).
    Value xp =
        padImage(b, op.getLoc(), op.getInput(), op.getPadding(), -INFINITY);
    b.replaceOp(
        op, poolReduce(
                b, op.getLoc(), xp, win, resTy, -INFINITY,
                [](OpBuilder &nb, Location l, Value acc, Value x) {
                  // x wins if larger or NaN: NaN propagates
                  // and the first of equal values stays, as
                  // in PyTorch; a select, not maximumf,
                  // whose x86 expansion branches.
                  Value gt = arith::CmpFOp::create(
                      nb, l, arith::CmpFPredicate::UGT, x, acc);
                  return arith::SelectOp::create(nb, l, gt, x, acc).getResult();
                }));
    return success();
  }
};

struct LowerAvgPool2D : OpRewritePattern<AvgPool2DOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPool2DOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto inTy = tensorTy(op.getInput()), resTy = tensorTy(op.getResult());
    Type et = resTy.getElementType(), acc = accumulatorType(b, et);
    SmallVector<int64_t> noDilation{1, 1};
    Window win = windowOf(op, noDilation, inTy);
    bool includePad = op.getCountIncludePad();
    Value xp = padImage(b, loc, op.getInput(), op.getPadding(), 0.0);
    Value sum = poolReduce(
        b, loc, xp, win, RankedTensorType::get(resTy.getShape(), acc), 0.0,
        [](OpBuilder &nb, Location l, Value a, Value x) {
          return arith::AddFOp::create(nb, l, a, x).getResult();
        });
    // sum / divisor, the divisor computed from the position.
    AffineMap id = b.getMultiDimIdentityMap(4);
    Value y =
        linalg::GenericOp::create(
            b, loc, TypeRange{resTy}, ValueRange{sum},
            ValueRange{emptyTensor(b, loc, resTy)},
            SmallVector<AffineMap>{id, id},
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value oh = linalg::IndexOp::create(nb, l, 2);
              Value ow = linalg::IndexOp::create(nb, l, 3);
              Value div = avgDivisor(nb, l, oh, ow, win, includePad, acc);
              Value v = arith::DivFOp::create(nb, l, a[0], div);
              linalg::YieldOp::create(nb, l, convertFloat(nb, l, v, et));
            })
            .getResult(0);
    b.replaceOp(op, y);
    return success();
  }
};

/// For input position `i` (an index) and kernel tap `k`, the output
/// position whose window reads `i` through that tap, clamped into range, and
/// whether there is one: o = (i + pad - k * dilation) / stride when that
/// divides exactly and 0 <= o < outSize.
std::pair<Value, Value> windowReading(OpBuilder &b, Location loc, Value i,
                                      Value k, int64_t pad, int64_t dilation,
                                      int64_t stride, int64_t outSize) {
  Value t = arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, i, cIndex(b, loc, pad)),
      arith::MulIOp::create(b, loc, k, cIndex(b, loc, dilation)));
  Value zero = cIndex(b, loc, 0);
  Value o = arith::DivSIOp::create(b, loc, t, cIndex(b, loc, stride));
  Value valid = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, t, zero),
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq,
              arith::RemSIOp::create(b, loc, t, cIndex(b, loc, stride)), zero)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, o,
                            cIndex(b, loc, outSize)));
  return {arith::SelectOp::create(b, loc, valid, o, zero), valid};
}

/// The gradient of a pool as a gather: dx[n, c, ih, iw] = sum over the taps
/// (kh, kw) of `contribution(n, c, oh, ow, kh, kw, valid)` where (oh, ow) is
/// the window that reads (ih, iw) through the tap (clamped; `valid` says
/// whether there is one).
Value poolGradGather(
    OpBuilder &b, Location loc, RankedTensorType resTy, const Window &win,
    int64_t outH, int64_t outW,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value, Value)>
        contribution) {
  MLIRContext *ctx = b.getContext();
  Type et = resTy.getElementType(), acc = accumulatorType(b, et);
  auto accTy = RankedTensorType::get(resTy.getShape(), acc);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Iteration space (n, c, ih, iw, kh, kw).
  AffineMap kMap = AffineMap::get(6, 0, {d(4), d(5)}, ctx);
  AffineMap outMap = AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx);
  auto p = utils::IteratorType::parallel, r = utils::IteratorType::reduction;
  Value kernel =
      emptyTensor(b, loc, RankedTensorType::get({win.kh, win.kw}, acc));
  Value dx =
      linalg::GenericOp::create(
          b, loc, TypeRange{accTy}, ValueRange{kernel},
          ValueRange{filledTensor(b, loc, accTy, 0.0)},
          SmallVector<AffineMap>{kMap, outMap},
          SmallVector<utils::IteratorType>{p, p, p, p, r, r},
          [&](OpBuilder &nb, Location l, ValueRange a) {
            SmallVector<Value> idx;
            for (int64_t i = 0; i < 6; ++i)
              idx.push_back(linalg::IndexOp::create(nb, l, i));
            auto [oh, vh] = windowReading(nb, l, idx[2], idx[4], win.pt, win.dh,
                                          win.sh, outH);
            auto [ow, vw] = windowReading(nb, l, idx[3], idx[5], win.pl, win.dw,
                                          win.sw, outW);
            Value valid = arith::AndIOp::create(nb, l, vh, vw);
            Value v = contribution(
                nb, l, ValueRange{idx[0], idx[1], oh, ow, idx[4], idx[5]},
                valid, a[1]);
            linalg::YieldOp::create(
                nb, l, arith::AddFOp::create(nb, l, a[1], v).getResult());
          })
          .getResult(0);
  return convertTensor(b, loc, dx, et);
}

/// The gradient goes to each window's first maximum in row-major order
/// (PyTorch: a later element wins only if it is greater, or NaN). First the
/// position of every window's maximum (the tap kh * KW + kw, or -1 while
/// none is found: the first tap inside the input is taken even if it is
/// -inf), then the gather.
struct LowerMaxPool2DGrad : OpRewritePattern<MaxPool2DGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPool2DGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto inTy = tensorTy(op.getInput()), gTy = tensorTy(op.getGrad());
    Type et = inTy.getElementType(), acc = accumulatorType(b, et);
    Type i32 = b.getI32Type();
    Window win = windowOf(op, op.getDilations(), inTy);
    Value xp = padImage(b, loc, op.getInput(), op.getPadding(), -INFINITY);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    // Iteration space (n, c, oh, ow, kh, kw): the taps in row-major order.
    AffineMap xMap = AffineMap::get(6, 0,
                                    {d(0), d(1), d(2) * win.sh + d(4) * win.dh,
                                     d(3) * win.sw + d(5) * win.dw},
                                    ctx);
    AffineMap kMap = AffineMap::get(6, 0, {d(4), d(5)}, ctx);
    AffineMap outMap = AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx);
    auto p = utils::IteratorType::parallel, r = utils::IteratorType::reduction;
    Value kernel =
        emptyTensor(b, loc, RankedTensorType::get({win.kh, win.kw}, et));
    auto maxTy = RankedTensorType::get(gTy.getShape(), et);
    auto tapTy = RankedTensorType::get(gTy.getShape(), i32);
    Value noTap =
        arith::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(-1));
    Value taps0 = linalg::FillOp::create(b, loc, ValueRange{noTap},
                                         ValueRange{emptyTensor(b, loc, tapTy)})
                      .getResult(0);
    auto argmax = linalg::GenericOp::create(
        b, loc, TypeRange{maxTy, tapTy}, ValueRange{xp, kernel},
        ValueRange{filledTensor(b, loc, maxTy, -INFINITY), taps0},
        SmallVector<AffineMap>{xMap, kMap, outMap, outMap},
        SmallVector<utils::IteratorType>{p, p, p, p, r, r},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          Value x = a[0], best = a[2], tap = a[3];
          Value oh = linalg::IndexOp::create(nb, l, 2);
          Value ow = linalg::IndexOp::create(nb, l, 3);
          Value kh = linalg::IndexOp::create(nb, l, 4);
          Value kw = linalg::IndexOp::create(nb, l, 5);
          auto inside = [&](Value o, Value k, int64_t s, int64_t dil,
                            int64_t pad, int64_t size) {
            Value pos = arith::AddIOp::create(
                nb, l, arith::MulIOp::create(nb, l, o, cIndex(nb, l, s)),
                arith::MulIOp::create(nb, l, k, cIndex(nb, l, dil)));
            return arith::AndIOp::create(
                nb, l,
                arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, pos,
                                      cIndex(nb, l, pad)),
                arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, pos,
                                      cIndex(nb, l, pad + size)));
          };
          Value first = arith::AndIOp::create(
              nb, l,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, tap,
                                    noTap),
              arith::AndIOp::create(
                  nb, l, inside(oh, kh, win.sh, win.dh, win.pt, win.h),
                  inside(ow, kw, win.sw, win.dw, win.pl, win.w)));
          Value take = arith::OrIOp::create(
              nb, l,
              arith::OrIOp::create(
                  nb, l,
                  arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, x,
                                        best),
                  arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, x,
                                        x)),
              first);
          Value t = arith::IndexCastOp::create(
              nb, l, i32,
              arith::AddIOp::create(
                  nb, l,
                  arith::MulIOp::create(nb, l, kh, cIndex(nb, l, win.kw)), kw));
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::SelectOp::create(nb, l, take, x, best),
                         arith::SelectOp::create(nb, l, take, t, tap)});
        });
    Value taps = argmax.getResult(1);
    Value g = op.getGrad();
    int64_t kwSize = win.kw;
    b.replaceOp(op,
                poolGradGather(
                    b, loc, inTy, win, gTy.getDimSize(2), gTy.getDimSize(3),
                    [&](OpBuilder &nb, Location l, ValueRange at, Value valid,
                        Value) -> Value {
                      ValueRange pos = at.take_front(4);
                      Value tap = tensor::ExtractOp::create(nb, l, taps, pos);
                      Value gv = convertFloat(
                          nb, l, tensor::ExtractOp::create(nb, l, g, pos), acc);
                      Value mine = arith::IndexCastOp::create(
                          nb, l, i32,
                          arith::AddIOp::create(
                              nb, l,
                              arith::MulIOp::create(nb, l, at[4],
                                                    cIndex(nb, l, kwSize)),
                              at[5]));
                      Value hit = arith::AndIOp::create(
                          nb, l, valid,
                          arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                                tap, mine));
                      return arith::SelectOp::create(
                          nb, l, hit, gv, floatConst(nb, l, acc, 0.0));
                    }));
    return success();
  }
};

struct LowerAvgPool2DGrad : OpRewritePattern<AvgPool2DGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPool2DGradOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto resTy = tensorTy(op.getResult()), gTy = tensorTy(op.getGrad());
    Type acc = accumulatorType(b, resTy.getElementType());
    SmallVector<int64_t> noDilation{1, 1};
    Window win = windowOf(op, noDilation, resTy);
    bool includePad = op.getCountIncludePad();
    Value g = op.getGrad();
    b.replaceOp(op,
                poolGradGather(
                    b, loc, resTy, win, gTy.getDimSize(2), gTy.getDimSize(3),
                    [&](OpBuilder &nb, Location l, ValueRange at, Value valid,
                        Value) -> Value {
                      ValueRange pos = at.take_front(4);
                      Value gv = convertFloat(
                          nb, l, tensor::ExtractOp::create(nb, l, g, pos), acc);
                      Value div =
                          avgDivisor(nb, l, at[2], at[3], win, includePad, acc);
                      return arith::SelectOp::create(
                          nb, l, valid, arith::DivFOp::create(nb, l, gv, div),
                          floatConst(nb, l, acc, 0.0));
                    }));
    return success();
  }
};

} // namespace

void mlir::dlc::lowering::populatePoolingLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerMaxPool2D, LowerAvgPool2D, LowerMaxPool2DGrad,
               LowerAvgPool2DGrad>(patterns.getContext());
}
