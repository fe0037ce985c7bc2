// RUN: dlc-opt %s -dlc-tile-and-vectorize=bf16-dot=true -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-tile-and-vectorize -split-input-file | FileCheck %s --check-prefix=WIDEN

// bf16 x bf16 -> fp32 with AVX512_BF16: B is packed with the rows of every
// K pair interleaved (64 x 256 -> 32 x 512), once before the parallel loop
// since both M tiles read it (its pairs are independent iterations); each
// cache tile reads its block of the pairs and A in place, and the 8 x 32
// register tile takes one vdpbf16ps per K pair on 16 accumulators, the A
// pair broadcast as one 32-bit word.
// CHECK-LABEL: func.func @dot
// CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x512xbf16>
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1
// CHECK: %[[R0:.*]] = vector.load %arg1{{.*}} : memref<64x256xbf16>, vector<16xbf16>
// CHECK: %[[R1:.*]] = vector.load %arg1{{.*}} : memref<64x256xbf16>, vector<16xbf16>
// CHECK: vector.interleave %[[R0]], %[[R1]] : vector<16xbf16> -> vector<32xbf16>
// CHECK: } {dlc.independent_iterations}
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
// CHECK-NOT: memref.alloc
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c8
// CHECK: %{{.*}}:16 = scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args
// CHECK: vector.load %[[B]]{{.*}} : memref<32x512xbf16>, vector<32xbf16>
// CHECK: %[[PAIR:.*]] = vector.load %arg0{{.*}} : memref<128x64xbf16>, vector<2xbf16>
// CHECK: %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[WORDS:.*]] = vector.broadcast %[[WORD]] : vector<1xi32> to vector<16xi32>
// CHECK: %[[A:.*]] = vector.bitcast %[[WORDS]] : vector<16xi32> to vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.*}}, %[[A]], %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-15: x86vector.avx512.dot
// CHECK: scf.yield
// CHECK: memref.dealloc %[[B]]
// CHECK-NOT: vector.fma
// CHECK-NOT: linalg.matmul
// Without the option: the widened fp32 kernel.
// WIDEN-LABEL: func.func @dot
// WIDEN: arith.extf %{{.*}} : bf16 to f32
// WIDEN: vector.fma
// WIDEN-NOT: x86vector
func.func @dot(%a: memref<128x64xbf16>, %b: memref<64x256xbf16>, %c: memref<128x256xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xbf16>, memref<64x256xbf16>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// A single M tile: each cache tile packs its own B block (64 x 128 ->
// 32 x 256) inside the parallel loop (over N alone).
// CHECK-LABEL: func.func @one_m_tile
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x256xbf16>
// CHECK: vector.interleave
// CHECK: vector.load %[[B]]{{.*}} : memref<32x256xbf16>, vector<32xbf16>
// CHECK: x86vector.avx512.dot
// CHECK: memref.dealloc %[[B]]
func.func @one_m_tile(%a: memref<64x64xbf16>, %b: memref<64x256xbf16>, %c: memref<64x256xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xbf16>, memref<64x256xbf16>) outs(%c : memref<64x256xf32>)
  return
}

// -----

// An odd K (37): A is packed into rows of 38 with a zero last column, B
// (packed once for both M tiles) into 19 pairs, the last one paired with
// zeros. M = 70 makes cache tiles of 35 rows: 4 register tiles of 8 rows,
// then one of 3.
// CHECK-LABEL: func.func @odd_k
// CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<19x64xbf16>
// CHECK: scf.for %{{.*}} = %c0 to %c18 step %c1
// CHECK: vector.interleave
// CHECK: %[[LAST:.*]] = vector.load %arg1[%c36, %{{.*}}] : memref<37x32xbf16>, vector<16xbf16>
// CHECK: vector.interleave %[[LAST]], %{{.*}} : vector<16xbf16> -> vector<32xbf16>
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<35x38xbf16>
// CHECK: memref.store %{{.*}}, %[[A]][%{{.*}}, %c37] : memref<35x38xbf16>
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c8
// CHECK: %{{.*}}:16 = scf.for %{{.*}} = %c0 to %c19 step %c1 iter_args
// CHECK: %{{.*}}:6 = scf.for %{{.*}} = %c0 to %c19 step %c1 iter_args
// CHECK-COUNT-6: x86vector.avx512.dot
// CHECK: memref.dealloc %[[A]]
// CHECK: memref.dealloc %[[B]]
func.func @odd_k(%a: memref<70x37xbf16>, %b: memref<37x32xbf16>, %c: memref<70x32xf32>) {
  linalg.matmul ins(%a, %b : memref<70x37xbf16>, memref<37x32xbf16>) outs(%c : memref<70x32xf32>)
  return
}

// -----

// autocast's casts of a weight and an input that only the matmul reads: A
// and B are packed from the fp32 values, rounded 16 at a time by
// vcvtneps2bf16 (round to nearest even, as the casts did), and the bf16
// copies are gone.
// CHECK-LABEL: func.func @rounded
// CHECK-SAME: dlc.packed_cast_bytes = 49152 : i64
// CHECK-NOT: memref<128x64xbf16>
// CHECK-NOT: memref<64x256xbf16>
// CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x512xbf16>
// CHECK: %[[X:.*]] = vector.load %arg1{{.*}} : memref<64x256xf32>, vector<16xf32>
// CHECK: x86vector.avx512.cvt.packed.f32_to_bf16 %[[X]] : vector<16xf32> -> vector<16xbf16>
// CHECK: scf.forall
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x64xbf16>
// CHECK: %[[W:.*]] = vector.load %arg0{{.*}} : memref<128x64xf32>, vector<16xf32>
// CHECK: %[[R:.*]] = x86vector.avx512.cvt.packed.f32_to_bf16 %[[W]] : vector<16xf32> -> vector<16xbf16>
// CHECK: vector.store %[[R]], %[[A]]
// CHECK: x86vector.avx512.dot
func.func @rounded(%w: memref<128x64xf32>, %x: memref<64x256xf32>, %c: memref<128x256xf32>) {
  %w16 = memref.alloc() : memref<128x64xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : memref<128x64xf32>) outs(%w16 : memref<128x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  %x16 = memref.alloc() : memref<64x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<64x256xf32>) outs(%x16 : memref<64x256xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  linalg.matmul ins(%w16, %x16 : memref<128x64xbf16>, memref<64x256xbf16>) outs(%c : memref<128x256xf32>)
  memref.dealloc %x16 : memref<64x256xbf16>
  memref.dealloc %w16 : memref<128x64xbf16>
  return
}

// -----

// What the dot-product kernel does not take runs the widened fp32 kernel:
// an N that is not a multiple of 16, fp16 operands.
// CHECK-LABEL: func.func @narrow_n
// CHECK-NOT: x86vector
// CHECK: vector.fma
func.func @narrow_n(%a: memref<64x64xbf16>, %b: memref<64x24xbf16>, %c: memref<64x24xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xbf16>, memref<64x24xbf16>) outs(%c : memref<64x24xf32>)
  return
}
// CHECK-LABEL: func.func @fp16
// CHECK-NOT: x86vector
// CHECK: vector.fma
func.func @fp16(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>)
  return
}
