//===- Convolution.cpp - dlc.conv2d and its gradients to linalg ----------===//
//
// Part of dlc-lower-to-linalg. A convolution with one group is an im2col
// followed by one matmul, so that it runs on the tiled, vectorised GEMM of
// dlc-tile-and-vectorize:
//
//   col[C*KH*KW, N*OH*OW]  = the input's patches (a copy that reads the
//                            zero-padded input through an affine map)
//   y[O, N*OH*OW]          = weight[O, C*KH*KW] x col  (linalg.matmul; the
//                            weight is used in its own layout)
//   result[N, O, OH, OW]   = act(y + bias), read transposed in one epilogue
//
// (or y^T = col^T weight^T when N*OH*OW is no multiple of 16 and O is, so
// that the register tiles stay full vectors wide).
//
// Grouped convolutions are a direct linalg.generic (correct, not tuned).
// The input gradient is the transposed convolution: the result's gradient
// spread out by the strides and padded, convolved with the flipped weight
// through the same path; the weight gradient is one matmul of the gradient
// with the input's patches.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::lowering;

/// A copy of the [N, C, H, W] tensor `x` into a tensor of `ty` at
/// (offsetH, offsetW), every (strideH, strideW) along H and W, starting from
/// x's element (firstH, firstW) and taking at most `count` of them along
/// each dimension; the elements of `ty` not written are `value`
/// (placeWindow, with N and C passed through).
static Value placeImage(OpBuilder &b, Location loc, Value x,
                        RankedTensorType ty, ArrayRef<int64_t> offset,
                        ArrayRef<int64_t> stride, ArrayRef<int64_t> first,
                        ArrayRef<int64_t> count, double value) {
  int64_t n = ty.getDimSize(0), c = ty.getDimSize(1);
  return placeWindow(b, loc, x, ty, {0, 0, offset[0], offset[1]},
                     {1, 1, stride[0], stride[1]}, {0, 0, first[0], first[1]},
                     {n, c, count[0], count[1]}, value);
}

Value mlir::dlc::lowering::padImage(OpBuilder &b, Location loc, Value x,
                                    ArrayRef<int64_t> padding, double value) {
  if (llvm::all_of(padding, [](int64_t p) { return p == 0; }))
    return x;
  auto ty = tensorTy(x);
  SmallVector<int64_t> shape(ty.getShape());
  shape[2] += padding[0] + padding[2];
  shape[3] += padding[1] + padding[3];
  return placeImage(b, loc, x,
                    RankedTensorType::get(shape, ty.getElementType()),
                    {padding[0], padding[1]}, {1, 1}, {0, 0},
                    {ty.getDimSize(2), ty.getDimSize(3)}, value);
}

namespace {

/// Up to this many input taps (C * KH * KW), a convolution is computed
/// directly rather than as im2col + GEMM.
constexpr int64_t kMaxDirectTaps = 16;

/// The GEMM of a convolution has the output positions as its columns when
/// they are a multiple of this (one AVX-512 vector of fp32), else the
/// channels when those are.
constexpr int64_t kChannelColumnsWidth = 16;

/// The attributes of a convolution.
struct ConvAttrs {
  SmallVector<int64_t> strides, padding, dilations;
  int64_t groups;
};

template <typename OpTy> ConvAttrs convAttrs(OpTy op) {
  return {SmallVector<int64_t>(op.getStrides()),
          SmallVector<int64_t>(op.getPadding()),
          SmallVector<int64_t>(op.getDilations()),
          static_cast<int64_t>(op.getGroups())};
}

SmallVector<utils::IteratorType> parallelIters(int64_t n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

/// A linalg.generic that copies `src`, read through `srcMap`, into a new
/// tensor of `ty` (the iteration space).
Value gather(OpBuilder &b, Location loc, Value src, AffineMap srcMap,
             RankedTensorType ty) {
  return linalg::GenericOp::create(
             b, loc, TypeRange{ty}, ValueRange{src},
             ValueRange{emptyTensor(b, loc, ty)},
             SmallVector<AffineMap>{srcMap,
                                    b.getMultiDimIdentityMap(ty.getRank())},
             parallelIters(ty.getRank()),
             [](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, a[0]);
             })
      .getResult(0);
}

/// A plain matmul [M, K] x [K, N] into a zero-filled accumulator.
Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto l = tensorTy(lhs), r = tensorTy(rhs);
  auto accTy = RankedTensorType::get({l.getDimSize(0), r.getDimSize(1)},
                                     l.getElementType());
  return linalg::MatmulOp::create(b, loc, TypeRange{accTy},
                                  ValueRange{lhs, rhs},
                                  ValueRange{filledTensor(b, loc, accTy, 0.0)})
      .getResult(0);
}

/// `input * stride + tap * dilation` along one spatial dimension, the
/// position a kernel tap reads in the padded image.
AffineExpr windowExpr(AffineExpr out, AffineExpr tap, int64_t stride,
                      int64_t dilation) {
  return out * stride + tap * dilation;
}

/// The convolution of `x` [N, C, H, W] with `w` [O, C/groups, KH, KW], plus
/// `bias` [O] (may be null), through `act`, as `resTy` [N, O, OH, OW].
Value conv2d(OpBuilder &b, Location loc, Value x, Value w, Value bias,
             const ConvAttrs &attrs, Activation act, RankedTensorType resTy) {
  MLIRContext *ctx = b.getContext();
  auto xTy = tensorTy(x), wTy = tensorTy(w);
  Type et = resTy.getElementType(), acc = accumulatorType(b, et);
  int64_t n = xTy.getDimSize(0), c = xTy.getDimSize(1);
  int64_t o = wTy.getDimSize(0), cg = wTy.getDimSize(1);
  int64_t kh = wTy.getDimSize(2), kw = wTy.getDimSize(3);
  int64_t oh = resTy.getDimSize(2), ow = resTy.getDimSize(3);
  int64_t sh = attrs.strides[0], sw = attrs.strides[1];
  int64_t dh = attrs.dilations[0], dw = attrs.dilations[1];
  // 16-bit operands run the fp32 kernel (see LowerLinear).
  x = convertTensor(b, loc, x, acc);
  w = convertTensor(b, loc, w, acc);
  Value xp = padImage(b, loc, x, attrs.padding, 0.0);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };

  // The epilogue's iteration space: (n, o, oh*OW + ow) for the matmul
  // path, (n, o, oh, ow) for the direct one.
  Value y;
  AffineMap yMap;
  RankedTensorType epiTy = resTy;
  if (attrs.groups == 1 && c * kh * kw <= kMaxDirectTaps) {
    // Few input taps (a first layer on 1-3 channels): every output element
    // sums its C*KH*KW products in registers, one all-parallel loop nest
    // over the result in which LLVM vectorises along ow. Each tap is a
    // strided view of the padded input ([N, OH, OW], so that every map is
    // a projected permutation and the loop extents come from the result),
    // each weight a scalar broadcast along the output channel. The taps
    // are summed in the order of the GEMM path's K loop (c, kh, kw).
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    auto tapTy = RankedTensorType::get({n, oh, ow}, acc);
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) {
          SmallVector<OpFoldResult> offsets{
              b.getIndexAttr(0), b.getIndexAttr(ci), b.getIndexAttr(i * dh),
              b.getIndexAttr(j * dw)};
          SmallVector<OpFoldResult> sizes{b.getIndexAttr(n), b.getIndexAttr(1),
                                          b.getIndexAttr(oh),
                                          b.getIndexAttr(ow)};
          // A stride along a dimension of one output is never taken: 1.
          SmallVector<OpFoldResult> strides{b.getIndexAttr(1),
                                            b.getIndexAttr(1),
                                            b.getIndexAttr(oh == 1 ? 1 : sh),
                                            b.getIndexAttr(ow == 1 ? 1 : sw)};
          // The channel is dropped by a collapse, not by a rank-reducing
          // slice: with other unit dimensions (a batch of one, an output
          // of one row) the reduced view's dropped dimension is ambiguous,
          // and MLIR 22's SubViewOp::getDroppedDims crashed on it.
          auto viewTy = RankedTensorType::get({n, 1, oh, ow}, acc);
          Value view = tensor::ExtractSliceOp::create(b, loc, viewTy, xp,
                                                      offsets, sizes, strides);
          ins.push_back(tensor::CollapseShapeOp::create(
              b, loc, tapTy, view,
              ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}}));
          maps.push_back(AffineMap::get(4, 0, {d(0), d(2), d(3)}, ctx));
          ins.push_back(w);
          maps.push_back(AffineMap::get(4, 0,
                                        {d(1), getAffineConstantExpr(ci, ctx),
                                         getAffineConstantExpr(i, ctx),
                                         getAffineConstantExpr(j, ctx)},
                                        ctx));
        }
    maps.push_back(b.getMultiDimIdentityMap(4));
    auto accTy = RankedTensorType::get({n, o, oh, ow}, acc);
    y = linalg::GenericOp::create(
            b, loc, TypeRange{accTy}, ins,
            ValueRange{emptyTensor(b, loc, accTy)}, maps, parallelIters(4),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value sum = floatConst(nb, l, acc, 0.0);
              for (size_t t = 0; t + 1 < a.size(); t += 2)
                sum = arith::AddFOp::create(
                    nb, l, sum, arith::MulFOp::create(nb, l, a[t], a[t + 1]));
              linalg::YieldOp::create(nb, l, sum);
            })
            .getResult(0);
    yMap = b.getMultiDimIdentityMap(4);
  } else if (attrs.groups == 1) {
    // col[r, p] = xp[n, c, oh*sh + kh*dh, ow*sw + kw*dw] with the patch
    // index r = (c, kh, kw) and the output position p = (n, oh, ow)
    // flattened.
    //
    // The copy iterates over (r, n, oh, ow), so that only the outermost
    // index is divided (the inner loops walk a row of the input), and its
    // result is collapsed to the GEMM's shape; dlc-fuse-elementwise keeps
    // that reshape out of the matmul.
    int64_t q = oh * ow, kk = kh * kw;
    // The register tiles are one or two vectors of the GEMM's columns wide,
    // and each must divide them: when the output positions are no multiple
    // of 16 (a batch of 8 7x7 images has 392) but the channels are, the
    // GEMM is y^T = col^T w^T, whose columns are the channels, instead of
    // running 8-wide tiles. Its rows are then (n, oh, ow).
    bool channelColumns =
        (n * q) % kChannelColumnsWidth != 0 && o % kChannelColumnsWidth == 0;
    // The weight [O, C, KH, KW] as the GEMM's [O, C*KH*KW]: a view.
    auto collapseWeight = [&] {
      return tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get({o, c * kk}, acc), w,
          SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    };
    if (channelColumns) {
      // The copy iterates (n, oh, ow, c, kh, kw), collapsed to [N*OH*OW,
      // C*KH*KW], so that no subscript divides a patch index.
      AffineMap patchMap =
          AffineMap::get(6, 0,
                         {d(0), d(3), windowExpr(d(1), d(4), sh, dh),
                          windowExpr(d(2), d(5), sw, dw)},
                         ctx);
      Value col6 = gather(b, loc, xp, patchMap,
                          RankedTensorType::get({n, oh, ow, c, kh, kw}, acc));
      Value colT = tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get({n * q, c * kk}, acc), col6,
          SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
      auto w2TTy = RankedTensorType::get({c * kk, o}, acc);
      Value w2T = linalg::TransposeOp::create(b, loc, collapseWeight(),
                                              emptyTensor(b, loc, w2TTy),
                                              ArrayRef<int64_t>{1, 0})
                      .getResult()[0];
      y = matmul(b, loc, colT, w2T);
      yMap = AffineMap::get(3, 0, {d(0) * q + d(2), d(1)}, ctx);
    } else {
      AffineExpr r = d(0);
      AffineMap xMap =
          AffineMap::get(4, 0,
                         {d(1), r.floorDiv(kk),
                          windowExpr(d(2), (r % kk).floorDiv(kw), sh, dh),
                          windowExpr(d(3), r % kw, sw, dw)},
                         ctx);
      Value col4 = gather(b, loc, xp, xMap,
                          RankedTensorType::get({c * kk, n, oh, ow}, acc));
      Value col = tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get({c * kk, n * q}, acc), col4,
          SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
      Value w2 = collapseWeight();
      y = matmul(b, loc, w2, col);
      yMap = AffineMap::get(3, 0, {d(1), d(0) * q + d(2)}, ctx);
    }
    epiTy = RankedTensorType::get({n, o, q}, et);
  } else {
    // y[n, o, oh, ow] += xp[n, g*Cg + ci, oh*sh + kh*dh, ow*sw + kw*dw]
    //                    * w[o, ci, kh, kw]   with g = o / (O / groups),
    // iterated as (n, o, ci, kh, kw, oh, ow) so that the inner loop runs
    // along a row of the output.
    int64_t og = o / attrs.groups;
    AffineMap xMap = AffineMap::get(7, 0,
                                    {d(0), d(1).floorDiv(og) * cg + d(2),
                                     windowExpr(d(5), d(3), sh, dh),
                                     windowExpr(d(6), d(4), sw, dw)},
                                    ctx);
    AffineMap wMap = AffineMap::get(7, 0, {d(1), d(2), d(3), d(4)}, ctx);
    AffineMap outMap = AffineMap::get(7, 0, {d(0), d(1), d(5), d(6)}, ctx);
    auto r = utils::IteratorType::reduction, p = utils::IteratorType::parallel;
    auto accTy = RankedTensorType::get({n, o, oh, ow}, acc);
    y = linalg::GenericOp::create(
            b, loc, TypeRange{accTy}, ValueRange{xp, w},
            ValueRange{filledTensor(b, loc, accTy, 0.0)},
            SmallVector<AffineMap>{xMap, wMap, outMap},
            SmallVector<utils::IteratorType>{p, p, r, r, r, p, p},
            [](OpBuilder &nb, Location l, ValueRange a) {
              Value m = arith::MulFOp::create(nb, l, a[0], a[1]);
              linalg::YieldOp::create(
                  nb, l, arith::AddFOp::create(nb, l, a[2], m).getResult());
            })
            .getResult(0);
    yMap = b.getMultiDimIdentityMap(4);
  }

  // Epilogue: bias, activation, rounding and the transpose back to NCHW in
  // one elementwise loop (nothing to do for a plain grouped convolution).
  bool hasBias = static_cast<bool>(bias);
  if (!hasBias && act == Activation::none && acc == et && yMap.isIdentity())
    return y;
  int64_t rank = epiTy.getRank();
  SmallVector<Value> ins{y};
  SmallVector<AffineMap> maps{yMap};
  if (hasBias) {
    ins.push_back(bias);
    maps.push_back(AffineMap::get(rank, 0, {d(1)}, ctx));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value out =
      linalg::GenericOp::create(
          b, loc, TypeRange{epiTy}, ins, ValueRange{emptyTensor(b, loc, epiTy)},
          maps, parallelIters(rank),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value v = a[0];
            if (hasBias)
              v = arith::AddFOp::create(nb, l, v,
                                        convertFloat(nb, l, a[1], acc));
            v = applyActivation(nb, l, act, v);
            linalg::YieldOp::create(nb, l, convertFloat(nb, l, v, et));
          })
          .getResult(0);
  if (epiTy == resTy)
    return out;
  return tensor::ExpandShapeOp::create(
      b, loc, resTy, out, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

struct LowerConv2D : OpRewritePattern<Conv2DOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2DOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(op, conv2d(b, op.getLoc(), op.getInput(), op.getWeight(),
                           op.getBias(), convAttrs(op), op.getActivation(),
                           tensorTy(op.getResult())));
    return success();
  }
};

/// Where the gradient of output position `o` (of `outSize`) lands in the
/// input gradient's padded, spread-out image of length `len`: the output
/// range [first, first + count) is placed from `offset` on, every `stride`.
struct Spread {
  int64_t first, count, offset;
};
Spread spread(int64_t outSize, int64_t len, int64_t kernel, int64_t stride,
              int64_t padBefore, int64_t dilation) {
  // Output position o lands at o * stride + (kernel - 1) * dilation -
  // padBefore; positions outside [0, len) are never read.
  int64_t shift = (kernel - 1) * dilation - padBefore;
  int64_t first = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  int64_t lastPos = len - 1 - shift;
  int64_t last = lastPos < 0 ? -1 : std::min(outSize - 1, lastPos / stride);
  return {first, std::max<int64_t>(0, last - first + 1),
          first * stride + shift};
}

/// dx = the convolution of the gradient, spread out by the strides and
/// padded, with the weight flipped in space and with its channel roles
/// swapped, at stride 1.
struct LowerConv2DGradInput : OpRewritePattern<Conv2DGradInputOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2DGradInputOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    ConvAttrs attrs = convAttrs(op);
    Value g = op.getGrad(), w = op.getWeight();
    auto gTy = tensorTy(g), wTy = tensorTy(w), resTy = tensorTy(op.getResult());
    Type et = gTy.getElementType();
    int64_t n = gTy.getDimSize(0), o = gTy.getDimSize(1);
    int64_t c = resTy.getDimSize(1), cg = wTy.getDimSize(1);
    int64_t kh = wTy.getDimSize(2), kw = wTy.getDimSize(3);
    int64_t og = o / attrs.groups;
    int64_t lenH = resTy.getDimSize(2) + (kh - 1) * attrs.dilations[0];
    int64_t lenW = resTy.getDimSize(3) + (kw - 1) * attrs.dilations[1];
    Spread sh = spread(gTy.getDimSize(2), lenH, kh, attrs.strides[0],
                       attrs.padding[0], attrs.dilations[0]);
    Spread sw = spread(gTy.getDimSize(3), lenW, kw, attrs.strides[1],
                       attrs.padding[1], attrs.dilations[1]);
    if (sh.count == 0 || sw.count == 0) {
      // No output position sees the input (every window lies in padding).
      b.replaceOp(op, filledTensor(b, loc, resTy, 0.0));
      return success();
    }
    // The gradient rows and columns that land inside the image, spread out.
    Value spreadG =
        placeImage(b, loc, g, RankedTensorType::get({n, o, lenH, lenW}, et),
                   {sh.offset, sw.offset}, attrs.strides, {sh.first, sw.first},
                   {sh.count, sw.count}, 0.0);

    // wt[cc, o', kh, kw] = w[(cc / Cg) * Og + o', cc % Cg, KH-1-kh, KW-1-kw]
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineExpr wo = d(0).floorDiv(cg) * og + d(1), wc = d(0) % cg;
    if (attrs.groups == 1) {
      wo = d(1);
      wc = d(0);
    }
    AffineMap wMap =
        AffineMap::get(4, 0, {wo, wc, -d(2) + (kh - 1), -d(3) + (kw - 1)}, ctx);
    Value wt =
        gather(b, loc, w, wMap, RankedTensorType::get({c, og, kh, kw}, et));
    ConvAttrs flipped{{1, 1}, {0, 0, 0, 0}, attrs.dilations, attrs.groups};
    b.replaceOp(op, conv2d(b, loc, spreadG, wt, Value(), flipped,
                           Activation::none, resTy));
    return success();
  }
};

/// dw[o, ci, kh, kw] = sum over n, oh, ow of g[n, o, oh, ow] * the input
/// under tap (kh, kw): with one group, g as [O, N*OH*OW] times the input's
/// patches as [N*OH*OW, C*KH*KW].
struct LowerConv2DGradWeight : OpRewritePattern<Conv2DGradWeightOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2DGradWeightOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    ConvAttrs attrs = convAttrs(op);
    auto gTy = tensorTy(op.getGrad()), resTy = tensorTy(op.getResult());
    Type et = resTy.getElementType(), acc = accumulatorType(b, et);
    int64_t n = gTy.getDimSize(0), o = gTy.getDimSize(1);
    int64_t oh = gTy.getDimSize(2), ow = gTy.getDimSize(3);
    int64_t c = tensorTy(op.getInput()).getDimSize(1);
    int64_t cg = resTy.getDimSize(1), kh = resTy.getDimSize(2),
            kw = resTy.getDimSize(3);
    int64_t sh = attrs.strides[0], sw = attrs.strides[1];
    int64_t dh = attrs.dilations[0], dw = attrs.dilations[1];
    Value x = convertTensor(b, loc, op.getInput(), acc);
    Value g = convertTensor(b, loc, op.getGrad(), acc);
    Value xp = padImage(b, loc, x, attrs.padding, 0.0);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Value dwAcc;
    if (attrs.groups == 1) {
      // gT[o, p] = g[n, o, oh, ow] and colT[p, r] = the patch element r =
      // (c, kh, kw) of output position p = (n, oh, ow); generics, not
      // reshapes, around the matmul (see conv2d).
      int64_t q = oh * ow, kk = kh * kw;
      AffineExpr p = d(0), r = d(1);
      AffineMap xMap = AffineMap::get(
          2, 0,
          {p.floorDiv(q), r.floorDiv(kk),
           windowExpr((p % q).floorDiv(ow), (r % kk).floorDiv(kw), sh, dh),
           windowExpr(p % ow, r % kw, sw, dw)},
          ctx);
      Value colT =
          gather(b, loc, xp, xMap, RankedTensorType::get({n * q, c * kk}, acc));
      AffineMap gMap = AffineMap::get(
          2, 0, {d(1).floorDiv(q), d(0), (d(1) % q).floorDiv(ow), d(1) % ow},
          ctx);
      Value gT =
          gather(b, loc, g, gMap, RankedTensorType::get({o, n * q}, acc));
      Value mm = matmul(b, loc, gT, colT);
      // dw[o, c, kh, kw] = mm[o, (c, kh, kw)], rounded to the weight's type.
      AffineMap mmMap =
          AffineMap::get(4, 0, {d(0), d(1) * kk + d(2) * kw + d(3)}, ctx);
      Value dw =
          linalg::GenericOp::create(
              b, loc, TypeRange{resTy}, ValueRange{mm},
              ValueRange{emptyTensor(b, loc, resTy)},
              SmallVector<AffineMap>{mmMap, b.getMultiDimIdentityMap(4)},
              parallelIters(4),
              [&](OpBuilder &nb, Location l, ValueRange a) {
                linalg::YieldOp::create(nb, l, convertFloat(nb, l, a[0], et));
              })
              .getResult(0);
      b.replaceOp(op, dw);
      return success();
    } else {
      // Iterated as (o, ci, kh, kw, n, oh, ow).
      int64_t og = o / attrs.groups;
      AffineMap xMap = AffineMap::get(7, 0,
                                      {d(4), d(0).floorDiv(og) * cg + d(1),
                                       windowExpr(d(5), d(2), sh, dh),
                                       windowExpr(d(6), d(3), sw, dw)},
                                      ctx);
      AffineMap gMap = AffineMap::get(7, 0, {d(4), d(0), d(5), d(6)}, ctx);
      AffineMap outMap = AffineMap::get(7, 0, {d(0), d(1), d(2), d(3)}, ctx);
      auto r = utils::IteratorType::reduction,
           p = utils::IteratorType::parallel;
      auto accTy = RankedTensorType::get(resTy.getShape(), acc);
      dwAcc =
          linalg::GenericOp::create(
              b, loc, TypeRange{accTy}, ValueRange{xp, g},
              ValueRange{filledTensor(b, loc, accTy, 0.0)},
              SmallVector<AffineMap>{xMap, gMap, outMap},
              SmallVector<utils::IteratorType>{p, p, p, p, r, r, r},
              [](OpBuilder &nb, Location l, ValueRange a) {
                Value m = arith::MulFOp::create(nb, l, a[0], a[1]);
                linalg::YieldOp::create(
                    nb, l, arith::AddFOp::create(nb, l, a[2], m).getResult());
              })
              .getResult(0);
    }
    b.replaceOp(op, convertTensor(b, loc, dwAcc, et));
    return success();
  }
};

} // namespace

void mlir::dlc::lowering::populateConvolutionLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerConv2D, LowerConv2DGradInput, LowerConv2DGradWeight>(
      patterns.getContext());
}
