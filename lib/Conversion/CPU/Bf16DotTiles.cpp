//===- Bf16DotTiles.cpp - bf16 matmul tiles on vdpbf16ps ------------------===//
//
// A cache tile C[mt x nt] += A[mt x kt] B[kt x nt] with bf16 A and B and an
// fp32 C, as AVX512_BF16 dot products: `vdpbf16ps acc, a, b` adds
// a[2i] b[2i] + a[2i+1] b[2i+1] to each of its 16 fp32 lanes, so B is
// packed with the two rows of each K pair interleaved (Bp[p][2n + j] =
// B[2p + j][n]) and the pair (A[m][2p], A[m][2p + 1]) is broadcast to every
// lane. A register tile keeps mr x nr/16 accumulators across the K loop.
//
// Exactness: every product of two bf16 values is exact in fp32, and each
// instruction adds the two products of a pair to the accumulator with a
// rounding after each (the order within the pair is the hardware's), as the
// widened fp32 kernel's FMAs do in their own order; what differs is that
// the instruction treats subnormal inputs and results as zero (DAZ, FTZ).
//
//===----------------------------------------------------------------------===//

#include "Bf16DotTiles.h"
#include "dlc/Dialect/Dlc/IR/DlcContracts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;

namespace {

constexpr int64_t kLanes = 16; // fp32 lanes of a zmm register

/// The static shape of a memref operand.
ArrayRef<int64_t> shapeOf(Value v) {
  return cast<MemRefType>(v.getType()).getShape();
}

Type elementOf(Value v) {
  return cast<MemRefType>(v.getType()).getElementType();
}

/// `v` (a vector or scalar of f32 or bf16) as bf16, rounded to nearest even:
/// a vector of 16 by one vcvtneps2bf16 (the dot products' instruction set),
/// a scalar tail by arith.truncf. The instruction flushes subnormal inputs to
/// zero: vdpbf16ps reads their bf16 roundings as zero anyway, except those
/// within half a bf16 step below the smallest normal, which round up to it.
Value toBf16(ImplicitLocOpBuilder &b, Value v) {
  Type bf16 = b.getBF16Type();
  Type elem = getElementTypeOrSelf(v.getType());
  if (elem == bf16)
    return v;
  auto vec = dyn_cast<VectorType>(v.getType());
  if (!vec)
    return arith::TruncFOp::create(b, bf16, v);
  auto to = VectorType::get(vec.getShape(), bf16);
  if (vec.getShape() == ArrayRef<int64_t>{kLanes})
    return x86vector::CvtPackedF32ToBF16Op::create(b, to, v);
  return arith::TruncFOp::create(b, to, v);
}

/// A for loop from 0 to `ub` by `step` whose body `body(iv)` builds (none
/// when `ub` is not positive).
scf::ForOp forLoop(ImplicitLocOpBuilder &b, int64_t ub, int64_t step,
                   function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  if (ub <= 0)
    return {};
  Value lb = arith::ConstantIndexOp::create(b, 0);
  Value hi = arith::ConstantIndexOp::create(b, ub);
  Value st = arith::ConstantIndexOp::create(b, step);
  return scf::ForOp::create(
      b, lb, hi, st, ValueRange{},
      [&](OpBuilder &nb, Location loc, Value iv, ValueRange) {
        ImplicitLocOpBuilder ib(loc, nb);
        body(ib, iv);
        scf::YieldOp::create(ib);
      });
}

Value addConst(ImplicitLocOpBuilder &b, Value v, int64_t c) {
  if (!c)
    return v;
  return arith::AddIOp::create(b, v, arith::ConstantIndexOp::create(b, c));
}

Value mulConst(ImplicitLocOpBuilder &b, Value v, int64_t c) {
  return arith::MulIOp::create(b, v, arith::ConstantIndexOp::create(b, c));
}

/// Copies the rows of `src` (rows x cols, f32 or bf16) into `dst` (rows x
/// cols rounded up to even, bf16), rounding to bf16; an odd last column is
/// padded with zero.
void packRows(ImplicitLocOpBuilder &b, Value src, Value dst) {
  int64_t rows = shapeOf(src)[0], cols = shapeOf(src)[1];
  int64_t vecCols = cols - cols % kLanes;
  auto srcVec = VectorType::get({kLanes}, elementOf(src));
  forLoop(b, rows, 1, [&](ImplicitLocOpBuilder &b, Value i) {
    forLoop(b, vecCols, kLanes, [&](ImplicitLocOpBuilder &b, Value k) {
      Value v = vector::LoadOp::create(b, srcVec, src, ValueRange{i, k});
      vector::StoreOp::create(b, toBf16(b, v), dst, ValueRange{i, k});
    });
    for (int64_t k = vecCols; k < cols; ++k) {
      Value kc = arith::ConstantIndexOp::create(b, k);
      Value v = memref::LoadOp::create(b, src, ValueRange{i, kc});
      memref::StoreOp::create(b, toBf16(b, v), dst, ValueRange{i, kc});
    }
    if (cols % 2) {
      Value kc = arith::ConstantIndexOp::create(b, cols);
      Value zero = arith::ConstantOp::create(
          b, b.getBF16Type(), b.getFloatAttr(b.getBF16Type(), 0.0));
      memref::StoreOp::create(b, zero, dst, ValueRange{i, kc});
    }
  });
}

/// Packs `src` (k x n, f32 or bf16; n a multiple of 16) into `dst` (k/2
/// rounded up x 2n, bf16) with each pair of rows interleaved; an odd last
/// row is paired with zeros. `parallel` marks the loop over the pairs as
/// independent iterations.
void packPairs(ImplicitLocOpBuilder &b, Value src, Value dst,
               bool parallel = false) {
  int64_t k = shapeOf(src)[0], n = shapeOf(src)[1];
  auto srcVec = VectorType::get({kLanes}, elementOf(src));
  auto half = VectorType::get({kLanes}, b.getBF16Type());
  auto pack = [&](ImplicitLocOpBuilder &b, Value p, bool lastOdd) {
    Value row0 = mulConst(b, p, 2);
    forLoop(b, n, kLanes, [&](ImplicitLocOpBuilder &b, Value j) {
      Value lo = toBf16(
          b, vector::LoadOp::create(b, srcVec, src, ValueRange{row0, j}));
      Value hi;
      if (lastOdd) {
        hi = arith::ConstantOp::create(
            b, half,
            DenseElementsAttr::get(half, b.getFloatAttr(b.getBF16Type(), 0.0)));
      } else {
        hi =
            toBf16(b, vector::LoadOp::create(
                          b, srcVec, src, ValueRange{addConst(b, row0, 1), j}));
      }
      Value pair = vector::InterleaveOp::create(b, lo, hi);
      vector::StoreOp::create(b, pair, dst, ValueRange{p, mulConst(b, j, 2)});
    });
  };
  scf::ForOp pairs =
      forLoop(b, k / 2, 1,
              [&](ImplicitLocOpBuilder &b, Value p) { pack(b, p, false); });
  if (pairs && parallel)
    pairs->setAttr(dlc::kIndependentIterationsAttrName, b.getUnitAttr());
  if (k % 2)
    pack(b, arith::ConstantIndexOp::create(b, k / 2), true);
}

/// The register tiles of `rows` rows starting at row `m0` of C: for each
/// `nr` columns, the accumulators are loaded from C, take one dot product
/// per K pair, and are stored back.
void emitRows(ImplicitLocOpBuilder &b, Value m0, int64_t rows, int64_t nr,
              Value aPanel, Value bPanel, Value c) {
  int64_t n = shapeOf(c)[1], pairs = shapeOf(bPanel)[0];
  int64_t vecs = nr / kLanes;
  auto accTy = VectorType::get({kLanes}, b.getF32Type());
  auto bTy = VectorType::get({2 * kLanes}, b.getBF16Type());
  auto pairTy = VectorType::get({2}, b.getBF16Type());
  auto wordTy = VectorType::get({1}, b.getI32Type());
  auto wordsTy = VectorType::get({kLanes}, b.getI32Type());
  forLoop(b, n, nr, [&](ImplicitLocOpBuilder &b, Value n0) {
    SmallVector<Value> rowIdx, colIdx;
    for (int64_t i = 0; i < rows; ++i)
      rowIdx.push_back(addConst(b, m0, i));
    for (int64_t j = 0; j < vecs; ++j)
      colIdx.push_back(addConst(b, n0, j * kLanes));
    SmallVector<Value> init;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < vecs; ++j)
        init.push_back(vector::LoadOp::create(
            b, accTy, c, ValueRange{rowIdx[i], colIdx[j]}));
    Value lb = arith::ConstantIndexOp::create(b, 0);
    Value ub = arith::ConstantIndexOp::create(b, pairs);
    Value one = arith::ConstantIndexOp::create(b, 1);
    auto loop = scf::ForOp::create(
        b, lb, ub, one, init,
        [&](OpBuilder &nb, Location loc, Value p, ValueRange accs) {
          ImplicitLocOpBuilder ib(loc, nb);
          Value bCol = mulConst(ib, n0, 2);
          SmallVector<Value> bv;
          for (int64_t j = 0; j < vecs; ++j)
            bv.push_back(vector::LoadOp::create(
                ib, bTy, bPanel, ValueRange{p, addConst(ib, bCol, j * 32)}));
          Value k = mulConst(ib, p, 2);
          SmallVector<Value> next;
          for (int64_t i = 0; i < rows; ++i) {
            Value pair = vector::LoadOp::create(ib, pairTy, aPanel,
                                                ValueRange{rowIdx[i], k});
            Value word = vector::BitCastOp::create(ib, wordTy, pair);
            Value words = vector::BroadcastOp::create(ib, wordsTy, word);
            Value a = vector::BitCastOp::create(ib, bTy, words);
            for (int64_t j = 0; j < vecs; ++j)
              next.push_back(x86vector::DotBF16Op::create(
                  ib, accTy, accs[i * vecs + j], a, bv[j]));
          }
          scf::YieldOp::create(ib, next);
        });
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < vecs; ++j)
        vector::StoreOp::create(b, loop.getResult(i * vecs + j), c,
                                ValueRange{rowIdx[i], colIdx[j]});
  });
}

} // namespace

bool mlir::dlc::canUseBf16Dot(linalg::MatmulOp op) {
  if (!op.hasPureBufferSemantics() || op.hasUserDefinedMaps())
    return false;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  for (Value v : {a, b, c}) {
    auto ty = dyn_cast<MemRefType>(v.getType());
    if (!ty || !ty.hasStaticShape() || ty.getRank() != 2)
      return false;
  }
  Type bf16 = BFloat16Type::get(op.getContext());
  return elementOf(a) == bf16 && elementOf(b) == bf16 && elementOf(c).isF32() &&
         shapeOf(c)[1] % kLanes == 0;
}

Value mlir::dlc::packBf16Pairs(OpBuilder &builder, Location loc, Value src) {
  ImplicitLocOpBuilder b(loc, builder);
  int64_t k = shapeOf(src)[0], n = shapeOf(src)[1];
  Value dst = memref::AllocOp::create(
      b, MemRefType::get({(k + 1) / 2, 2 * n}, b.getBF16Type()), ValueRange{},
      b.getI64IntegerAttr(64));
  packPairs(b, src, dst, /*parallel=*/true);
  return dst;
}

void mlir::dlc::lowerToBf16Dot(linalg::MatmulOp op, Value a, Value b,
                               Bf16DotTile tile, Value packedB) {
  ImplicitLocOpBuilder builder(op.getLoc(), op);
  Value c = op.getDpsInits()[0];
  int64_t m = shapeOf(c)[0], n = shapeOf(c)[1], k = shapeOf(a)[1];
  int64_t nr = n % tile.nr == 0 ? tile.nr : kLanes;
  int64_t mr = std::min(tile.mr, m);
  Type bf16 = builder.getBF16Type();
  auto alloc = [&](int64_t rows, int64_t cols) -> Value {
    return memref::AllocOp::create(builder, MemRefType::get({rows, cols}, bf16),
                                   ValueRange{}, builder.getI64IntegerAttr(64));
  };
  SmallVector<Value> buffers;
  // A is read in place when it is bf16 already and every pair is whole.
  Value aPanel = a;
  if (elementOf(a) != bf16 || k % 2) {
    aPanel = alloc(m, k + k % 2);
    buffers.push_back(aPanel);
    packRows(builder, a, aPanel);
  }
  Value bPanel = packedB;
  if (!bPanel) {
    bPanel = alloc((k + 1) / 2, 2 * n);
    buffers.push_back(bPanel);
    packPairs(builder, b, bPanel);
  }

  int64_t full = m - m % mr;
  forLoop(builder, full, mr, [&](ImplicitLocOpBuilder &b, Value m0) {
    emitRows(b, m0, mr, nr, aPanel, bPanel, c);
  });
  if (m % mr)
    emitRows(builder, arith::ConstantIndexOp::create(builder, full), m % mr, nr,
             aPanel, bPanel, c);
  builder.setInsertionPointAfter(op);
  for (Value buf : llvm::reverse(buffers))
    memref::DeallocOp::create(builder, buf);
  op->erase();
}
