//===- Bf16DotTiles.h - bf16 matmul tiles on vdpbf16ps ----------*- C++ -*-===//
//
// The native bf16 path of dlc-tile-and-vectorize: a cache-tile matmul with
// bf16 operands and an fp32 accumulator becomes packed bf16 panels and a
// register tile of AVX512_BF16 dot products (x86vector.avx512.dot).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CONVERSION_CPU_BF16DOTTILES_H
#define DLC_CONVERSION_CPU_BF16DOTTILES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::dlc {

/// Register tile of the dot-product kernel: `mr` rows of C, `nr` columns (a
/// multiple of 16: one zmm accumulator holds 16 fp32 columns).
struct Bf16DotTile {
  int64_t mr = 8;
  int64_t nr = 32;
};

/// Whether the cache-tile matmul `op` (static, bufferized) can run the dot
/// product kernel: bf16 A and B, fp32 C, and an N tile that `tile.nr` (or,
/// failing that, 16) divides.
bool canUseBf16Dot(linalg::MatmulOp op);

/// Replaces the cache-tile matmul `op` (C += A B) by the dot-product kernel.
/// `a` and `b` are what the A and B tiles are read from: `op`'s operands,
/// or the same views of the fp32 values that autocast rounded them from,
/// which are then rounded to bf16 (to nearest even, as arith.truncf) while
/// they are packed. B is packed per tile into pair-interleaved rows
/// (`[k/2][n][2]`, what vdpbf16ps multiplies), A only when it must be
/// rounded or its K is odd; the pair of A elements that a dot product
/// needs is broadcast from its row.
/// `packedB`, when given, is B's tile already packed that way (a block of
/// packBf16Pairs' buffer), and B is not packed again.
void lowerToBf16Dot(linalg::MatmulOp op, Value a, Value b, Bf16DotTile tile,
                    Value packedB = {});

/// Packs the whole `[K, N]` buffer `src` (f32 or bf16, N a multiple of 16)
/// into a new `[ceil(K/2), 2N]` bf16 buffer of interleaved row pairs, at
/// `builder`'s insertion point, rounding as lowerToBf16Dot does. Its pairs
/// of rows are independent iterations (dlc-parallelize-loops runs them on
/// the thread pool). The caller deallocates the buffer.
Value packBf16Pairs(OpBuilder &builder, Location loc, Value src);

} // namespace mlir::dlc

#endif // DLC_CONVERSION_CPU_BF16DOTTILES_H
