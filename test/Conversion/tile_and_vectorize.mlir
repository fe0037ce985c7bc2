// RUN: dlc-opt %s -dlc-tile-and-vectorize=register-tile=8,32 -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-tile-and-vectorize -split-input-file | FileCheck %s --check-prefix=WIDE
// RUN: dlc-opt %s -dlc-tile-and-vectorize="register-tile=8,32 pack-panels=false" -split-input-file | FileCheck %s --check-prefix=INPLACE

// A 128x256x64 matmul with the AVX-512 schedule and 8 x 32 register tiles
// (those of an N that is no multiple of 64): cache tiles in parallel
// (scf.forall; N is split so that there are at least 4), 8x32x1 register
// tiles, the contraction lowered to FMAs with the accumulator tile carried
// through the k loop. B's rows lie 2 KiB apart (a view of a wider buffer:
// in L1 they would evict each other) and both M tiles read every cache
// tile of B, so B is first copied whole into eight 64 x 32 micro-panels, a
// row of 32 floats at a time, before the parallel loop (its rows on the
// thread pool), and the register tiles of each cache tile read their
// panels from there.
// CHECK-LABEL: func.func @square
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x64x32xf32>
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[COL:.*]] = arith.muli %[[J]]
// CHECK: %[[ROW:.*]] = vector.load %arg1[%[[K]], %[[COL]]] : memref<64x256xf32, strided<[512, 1]>>, vector<32xf32>
// CHECK: vector.store %[[ROW]], %[[P]][%[[J]], %[[K]], %c0] : memref<8x64x32xf32>, vector<32xf32>
// CHECK: } {dlc.independent_iterations}
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
// CHECK-NOT: memref.alloc
// CHECK: %[[FIRST:.*]] = arith.divui %{{.*}}, %c32
// CHECK: scf.for %[[J2:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[PANEL:.*]] = arith.addi %[[FIRST]], %[[J2]]
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.transfer_read %[[P]][%[[PANEL]], %{{.*}}, %c0]{{.*}} : memref<8x64x32xf32>, vector<1x32xf32>
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: }
// CHECK: memref.dealloc %[[P]]
// CHECK-NOT: linalg.matmul
// By default, N a multiple of 64 takes 6 x 64 register tiles (24 zmm
// accumulators), B in 64-wide micro-panels; the 64-row M tile runs ten of
// them and a peeled 4 x 64 tile.
// WIDE-LABEL: func.func @square
// WIDE: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x64x64xf32>
// WIDE: vector.store %{{.*}}, %[[P]][%{{.*}}, %{{.*}}, %c0] : memref<4x64x64xf32>, vector<64xf32>
// WIDE: scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
// WIDE: scf.for %{{.*}} = %c0 to %c60 step %c6
// WIDE: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<6x64xf32>)
// WIDE-COUNT-6: vector.fma {{.*}} : vector<64xf32>
// WIDE: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4x64xf32>)
// WIDE-COUNT-4: vector.fma {{.*}} : vector<64xf32>
// WIDE: memref.dealloc %[[P]]
// pack-panels=false reads B in place.
// INPLACE-LABEL: func.func @square
// INPLACE: scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
// INPLACE-NOT: memref.alloc
// INPLACE: scf.for {{.*}} iter_args
// INPLACE: vector.fma {{.*}} : vector<32xf32>
// INPLACE-NOT: linalg.matmul
// INPLACE: return
// With the AVX2 schedule (one 128-row tile in M, so N in 2 tiles of 128) the
// B panel is first copied into an aligned, contiguous buffer, and the
// register tile is 3 x 32 (12 ymm accumulators; the 128 rows as 42 tiles
// and a peeled 2 x 32).
// AVX2-LABEL: func.func @square
// AVX2: scf.forall (%{{.*}}) in (2)
// AVX2: %[[SRC:.*]] = memref.subview %arg1[0, %{{.*}}] [64, 128] [1, 1]
// AVX2: %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32768xi8>
// AVX2: %[[PANEL:.*]] = memref.view %[[BUF]]{{.*}} to memref<64x128xf32>
// AVX2: linalg.copy ins(%[[SRC]] : {{.*}}) outs(%[[PANEL]]
// AVX2: scf.for %{{.*}} = %c0 to %c126 step %c3
// AVX2: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<3x32xf32>)
// AVX2-COUNT-3: vector.fma {{.*}} : vector<32xf32>
// AVX2: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<2x32xf32>)
// AVX2: memref.dealloc %[[BUF]]
func.func @square(%a: memref<128x64xf32>, %b: memref<64x256xf32, strided<[512, 1]>>, %c: memref<128x256xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x256xf32, strided<[512, 1]>>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// The same matmul with B's rows 1 KiB apart (contiguous): they spread over
// four groups of L1 sets, and B is read in place, not copied into panels.
// CHECK-LABEL: func.func @near_rows
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
// CHECK-NOT: memref.alloc
// CHECK: vector.transfer_read %arg1
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: return
func.func @near_rows(%a: memref<128x64xf32>, %b: memref<64x256xf32>, %c: memref<128x256xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x256xf32>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// One tile in M: each cache tile of B (rows 2 KiB apart) is read by one
// cache tile of the matmul, too few rows to pay for a copy into panels:
// B is read in place.
// CHECK-LABEL: func.func @one_row_tile
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK-NOT: memref.alloc
// CHECK: vector.transfer_read %arg1{{.*}} : memref<64x256xf32, strided<[512, 1]>>, vector<1x32xf32>
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: memref.alloc
func.func @one_row_tile(%a: memref<64x64xf32>, %b: memref<64x256xf32, strided<[512, 1]>>, %c: memref<64x256xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x256xf32, strided<[512, 1]>>) outs(%c : memref<64x256xf32>)
  return
}

// -----

// A B of 128 MiB (over 64) is not copied whole: each cache tile is packed
// where it is read.
// CHECK-LABEL: func.func @large_rhs
// CHECK: scf.forall
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<16x256x32xf32>
// CHECK-NOT: memref<256x4096x32xf32>
func.func @large_rhs(%a: memref<128x4096xf32>, %b: memref<4096x8192xf32>, %c: memref<128x8192xf32>) {
  linalg.matmul ins(%a, %b : memref<128x4096xf32>, memref<4096x8192xf32>) outs(%c : memref<128x8192xf32>)
  return
}

// -----

// A large weight times a small batch's [K, 64] (B 2 MiB, over L2): N is one
// cache tile, so every M tile reads all of B. The M tiles are 256 rows
// (8 of them, still enough for the threads) instead of 64, and the K tiles
// 512 deep instead of 128.
// WIDE-LABEL: func.func @skinny_large_rhs
// WIDE: scf.forall (%{{.*}}) in (8)
// WIDE: scf.for %{{.*}} = %c0 to %c8192 step %c512
// WIDE: scf.for %{{.*}} = %c0 to %c252 step %c6
// WIDE: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<6x64xf32>)
// WIDE-NOT: linalg.matmul
func.func @skinny_large_rhs(%a: memref<2048x8192xf32>, %b: memref<8192x64xf32>, %c: memref<2048x64xf32>) {
  linalg.matmul ins(%a, %b : memref<2048x8192xf32>, memref<8192x64xf32>) outs(%c : memref<2048x64xf32>)
  return
}

// -----

// The same product with B of 1 MiB, which L2 holds, keeps 64-row M tiles
// and 128-deep K tiles; so does one whose taller M tiles would leave fewer
// than 4 of them (M = 512: 8 tiles of 64).
// WIDE-LABEL: func.func @skinny_small_rhs
// WIDE: scf.forall (%{{.*}}) in (32)
// WIDE: scf.for %{{.*}} = %c0 to %c4096 step %c128
// WIDE-LABEL: func.func @skinny_few_rows
// WIDE: scf.forall (%{{.*}}) in (4)
// WIDE: scf.for %{{.*}} = %c0 to %c8192 step %c512
func.func @skinny_small_rhs(%a: memref<2048x4096xf32>, %b: memref<4096x64xf32>, %c: memref<2048x64xf32>) {
  linalg.matmul ins(%a, %b : memref<2048x4096xf32>, memref<4096x64xf32>) outs(%c : memref<2048x64xf32>)
  return
}
func.func @skinny_few_rows(%a: memref<512x8192xf32>, %b: memref<8192x64xf32>, %c: memref<512x64xf32>) {
  linalg.matmul ins(%a, %b : memref<512x8192xf32>, memref<8192x64xf32>) outs(%c : memref<512x64xf32>)
  return
}

// -----

// N = 10 has no multiple-of-8 divisor: the register tile is 8 x 10, still
// full, still vectorised.
// CHECK-LABEL: func.func @narrow
// CHECK: vector.fma {{.*}} : vector<10xf32>
// CHECK-NOT: linalg.matmul
func.func @narrow(%a: memref<64x256xf32>, %b: memref<256x10xf32>, %c: memref<64x10xf32>) {
  linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x10xf32>) outs(%c : memref<64x10xf32>)
  return
}

// -----

// Tensors (not yet bufferized) are left alone.
// CHECK-LABEL: func.func @tensors
// CHECK: linalg.matmul
func.func @tensors(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// With 256-bit vectors (AVX2) an fp32 register tile is 3 x 32 where N is a
// multiple of 32 (64 rows: 21 tiles and a peeled 1 x 32), else 4 x 16.
// RUN: dlc-opt %s -dlc-tile-and-vectorize=vector-bits=256 -split-input-file | FileCheck %s --check-prefix=AVX2
// AVX2-LABEL: func.func @avx2
// AVX2: scf.for %{{.*}} = %c0 to %c63 step %c3
// AVX2: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<3x32xf32>)
// AVX2-COUNT-3: vector.fma {{.*}} : vector<32xf32>
// AVX2: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<1x32xf32>)
func.func @avx2(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// AVX2-LABEL: func.func @avx2_n48
// AVX2: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4x16xf32>)
// AVX2: vector.fma {{.*}} : vector<16xf32>
// AVX2-NOT: vector<32xf32>
// AVX2: return
func.func @avx2_n48(%a: memref<64x64xf32>, %b: memref<64x48xf32>, %c: memref<64x48xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x48xf32>) outs(%c : memref<64x48xf32>)
  return
}

// -----

// A 2-D transpose whose dimensions are multiples of the tile (a linear's
// weight) is tiled and vectorised; the 8x8 tiles of AVX2 become shuffles.
// RUN: dlc-opt %s -dlc-tile-and-vectorize=vector-bits=256 -split-input-file | FileCheck %s --check-prefix=TR
// TR-LABEL: func.func @transpose
// TR: scf.for
// TR: vector.shuffle
// TR-NOT: linalg.transpose
func.func @transpose(%w: memref<16x24xf32>, %t: memref<24x16xf32>) {
  linalg.transpose ins(%w : memref<16x24xf32>) outs(%t : memref<24x16xf32>) permutation = [1, 0]
  return
}

// -----

// A transpose with a dimension that is not a multiple of 8 stays a loop nest.
// TR-LABEL: func.func @transpose_odd
// TR: linalg.transpose
func.func @transpose_odd(%w: memref<10x24xf32>, %t: memref<24x10xf32>) {
  linalg.transpose ins(%w : memref<10x24xf32>) outs(%t : memref<24x10xf32>) permutation = [1, 0]
  return
}

// -----

// A register tile of 6 rows does not divide the 128-row cache tile: the M
// loop is peeled into 21 full tiles of 6 rows and a remainder of 2, both
// vectorised.
// RUN: dlc-opt %s -dlc-tile-and-vectorize="vector-bits=256 register-tile=6,16" -split-input-file | FileCheck %s --check-prefix=PEEL
// PEEL-LABEL: func.func @peeled
// PEEL: scf.for %{{.*}} = %c0 to %c126 step %c6
// PEEL: vector.fma {{.*}} : vector<16xf32>
// PEEL: scf.for %{{.*}} = %c0 to %c64 step %c16
// PEEL: vector.fma {{.*}} : vector<16xf32>
// PEEL-NOT: linalg.matmul
func.func @peeled(%a: memref<128x64xf32>, %b: memref<64x256xf32>, %c: memref<128x256xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x256xf32>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// 16-bit operands accumulating in fp32: each cache tile of A and of B is
// widened into an aligned fp32 packing buffer inside the tile loops (B is
// not also promoted), and the register tile is the fp32 kernel.
// AVX2-LABEL: func.func @bf16
// AVX2: scf.forall (%{{.*}}) in (4)
// AVX2: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x64xf32>
// AVX2: linalg.generic {{.*}} ins(%arg0 : memref<128x64xbf16>) outs(%[[A]] : memref<128x64xf32>)
// AVX2: arith.extf %{{.*}} : bf16 to f32
// AVX2: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
// AVX2: linalg.generic {{.*}} ins(%{{.*}} : memref<64x64xbf16, strided<[256, 1], offset: ?>>) outs(%[[B]] : memref<64x64xf32>)
// AVX2-NOT: linalg.copy
// AVX2: vector.fma {{.*}} : vector<16xf32>
// AVX2-NOT: bf16
// AVX2: memref.dealloc %[[B]]
// AVX2: memref.dealloc %[[A]]
func.func @bf16(%a: memref<128x64xbf16>, %b: memref<64x256xbf16>, %c: memref<128x256xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xbf16>, memref<64x256xbf16>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// autocast's cast of a weight that only the matmul reads is not stored:
// the packing reads the fp32 weight and rounds it (truncf, then extf), the
// bits the cast would have stored; the copy and its buffer are gone, and
// the function records their bytes for the memory report.
// AVX2-LABEL: func.func @rounded_in_packing
// AVX2-SAME: dlc.packed_cast_bytes = 16384 : i64
// AVX2-NOT: memref<128x64xbf16>
// AVX2: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x64xf32>
// AVX2: linalg.generic {{.*}} ins(%arg0 : memref<128x64xf32>) outs(%[[A]] : memref<128x64xf32>)
// AVX2: arith.truncf %{{.*}} : f32 to bf16
// AVX2: arith.extf %{{.*}} : bf16 to f32
// AVX2: vector.fma
func.func @rounded_in_packing(%w: memref<128x64xf32>, %b: memref<64x256xbf16>, %c: memref<128x256xf32>) {
  %w16 = memref.alloc() : memref<128x64xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : memref<128x64xf32>) outs(%w16 : memref<128x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  linalg.matmul ins(%w16, %b : memref<128x64xbf16>, memref<64x256xbf16>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// The weight changes between the cast and the matmul: the stored copy is
// what the matmul must read, and it stays.
// AVX2-LABEL: func.func @written_after_cast
// AVX2-NOT: dlc.packed_cast_bytes
// AVX2: memref.alloc() : memref<128x64xbf16>
// AVX2: linalg.fill
// AVX2: linalg.generic {{.*}} ins(%{{.*}} : memref<128x64xbf16{{.*}}>) outs(%{{.*}} : memref<128x64xf32>)
func.func @written_after_cast(%w: memref<128x64xf32>, %b: memref<64x256xbf16>, %c: memref<128x256xf32>) {
  %w16 = memref.alloc() : memref<128x64xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : memref<128x64xf32>) outs(%w16 : memref<128x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%w : memref<128x64xf32>)
  linalg.matmul ins(%w16, %b : memref<128x64xbf16>, memref<64x256xbf16>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// A reshaped operand (`reshape(x, [64, 16])` then `linear`: a collapse_shape
// and an expand_shape of the input) is read through one reinterpret_cast
// (which canonicalisation then takes straight from the input):
// fold_memref_alias_ops never converged on the register tiles' reads of an
// expand_shape, and the compiler hung here.
// AVX2-LABEL: func.func @reshaped_operand
// AVX2-SAME: (%[[X:.*]]: memref<32x32xf32>
// AVX2-NOT: memref.expand_shape
// AVX2: %[[A:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [64, 16], strides: [16, 1] : memref<32x32xf32> to memref<64x16xf32>
// AVX2-NOT: memref.expand_shape
// AVX2: vector.transfer_read %[[A]]
// AVX2: vector.fma
// AVX2: return
func.func @reshaped_operand(%x: memref<32x32xf32>, %w: memref<16x8xf32>, %c: memref<64x8xf32>) {
  %flat = memref.collapse_shape %x [[0, 1]] : memref<32x32xf32> into memref<1024xf32>
  %a = memref.expand_shape %flat [[0, 1]] output_shape [64, 16] : memref<1024xf32> into memref<64x16xf32>
  linalg.matmul ins(%a, %w : memref<64x16xf32>, memref<16x8xf32>) outs(%c : memref<64x8xf32>)
  return
}

// -----

// A recurrent step: the matmul accumulates into the step's slice of a
// buffer that a view elsewhere in the function also reads (MLIR's hoisting
// refuses such buffers). The accumulator tile still lives in registers
// across the k loop: read before it, carried, written after it.
// CHECK-LABEL: func.func @step_slice
// CHECK: scf.for %[[T:.*]] = %c0 to %c4
// CHECK: %[[ACC:.*]] = vector.transfer_read %[[G:.*]][%[[T]], %{{.*}}, %{{.*}}]
// CHECK: %[[TILE:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK-NOT: vector.transfer_write
// CHECK: vector.fma
// CHECK-NOT: vector.transfer_write
// CHECK: scf.yield
// CHECK: vector.transfer_write %[[TILE]], %[[G]][%[[T]], %{{.*}}, %{{.*}}]
// CHECK: memref.subview %[[G]]
func.func @step_slice(%h: memref<8x64xf32>, %w: memref<64x32xf32>, %g: memref<4x8x32xf32>, %out: memref<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %t = %c0 to %c4 step %c1 {
    %s = memref.subview %g[%t, 0, 0] [1, 8, 32] [1, 1, 1] : memref<4x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    linalg.matmul ins(%h, %w : memref<8x64xf32>, memref<64x32xf32>) outs(%s : memref<8x32xf32, strided<[32, 1], offset: ?>>)
    %v = memref.subview %g[%t, 0, 0] [1, 8, 32] [1, 1, 1] : memref<4x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    linalg.copy ins(%v : memref<8x32xf32, strided<[32, 1], offset: ?>>) outs(%out : memref<8x32xf32>)
  }
  return
}

// -----

// The same, but the matmul's A operand is a view of the buffer it writes:
// the tile is not hoisted.
// CHECK-LABEL: func.func @may_alias
// CHECK-NOT: iter_args
// CHECK: vector.transfer_write
// CHECK: return
func.func @may_alias(%w: memref<64x32xf32>, %g: memref<4x8x64xf32>, %out: memref<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %t = %c0 to %c4 step %c1 {
    %h = memref.subview %g[%t, 0, 0] [1, 8, 64] [1, 1, 1] : memref<4x8x64xf32> to memref<8x64xf32, strided<[64, 1], offset: ?>>
    %s = memref.subview %g[%t, 0, 0] [1, 8, 32] [1, 1, 1] : memref<4x8x64xf32> to memref<8x32xf32, strided<[64, 1], offset: ?>>
    linalg.matmul ins(%h, %w : memref<8x64xf32, strided<[64, 1], offset: ?>>, memref<64x32xf32>) outs(%s : memref<8x32xf32, strided<[64, 1], offset: ?>>)
    %v = memref.subview %g[%t, 0, 0] [1, 8, 32] [1, 1, 1] : memref<4x8x64xf32> to memref<8x32xf32, strided<[64, 1], offset: ?>>
    linalg.copy ins(%v : memref<8x32xf32, strided<[64, 1], offset: ?>>) outs(%out : memref<8x32xf32>)
  }
  return
}

// -----

// A B whose rows are not contiguous (a transposed view) is not copied into
// panels (the copy loads rows as vectors): it is read in place.
// CHECK-LABEL: func.func @strided_rhs
// CHECK-NOT: memref.alloc
// CHECK: vector.fma
// CHECK: return
func.func @strided_rhs(%a: memref<64x64xf32>, %b: memref<64x128xf32, strided<[1, 64]>>, %c: memref<64x128xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x128xf32, strided<[1, 64]>>) outs(%c : memref<64x128xf32>)
  return
}

// -----

// A B read through a collapse_shape (an im2col buffer [C*KH*KW, N, OH, OW]
// as [C*KH*KW, N*OH*OW]) and copied into panels (two M tiles read it) is
// read through one reinterpret_cast of its buffer: folded into the copy's
// loads, the collapse would divide every column index back into
// (N, OH, OW).
// CHECK-LABEL: func.func @collapsed_rhs
// CHECK: %[[B:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [32, 512], strides: [512, 1]
// CHECK-NOT: memref.collapse_shape
// CHECK-NOT: affine.delinearize_index
// CHECK: vector.load %[[B]]
// CHECK-NOT: affine.delinearize_index
// CHECK: return
func.func @collapsed_rhs(%a: memref<128x32xf32>, %b4: memref<32x2x4x64xf32>, %c: memref<128x512xf32>) {
  %b = memref.collapse_shape %b4 [[0], [1, 2, 3]] : memref<32x2x4x64xf32> into memref<32x512xf32>
  linalg.matmul ins(%a, %b : memref<128x32xf32>, memref<32x512xf32>) outs(%c : memref<128x512xf32>)
  return
}

// -----

// An N that is no multiple of 64 keeps the 8 x 32 register tile.
// WIDE-LABEL: func.func @n96
// WIDE: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>)
// WIDE-NOT: vector<6x64xf32>
// WIDE: return
func.func @n96(%a: memref<128x64xf32>, %b: memref<64x96xf32>, %c: memref<128x96xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x96xf32>) outs(%c : memref<128x96xf32>)
  return
}

// -----

// Fewer than 32 rows (a recurrent layer's block of 8, at every step) read
// B in place: each element copied would serve 8 FMAs.
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT: memref.alloc
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: return
// WIDE-LABEL: func.func @few_rows
// WIDE-NOT: memref.alloc
// WIDE: vector.fma {{.*}} : vector<64xf32>
// WIDE: return
func.func @few_rows(%a: memref<8x128xf32>, %b: memref<128x512xf32>, %c: memref<8x512xf32>) {
  linalg.matmul ins(%a, %b : memref<8x128xf32>, memref<128x512xf32>) outs(%c : memref<8x512xf32>)
  return
}
