// RUN: dlc-opt %s -dlc-tile-and-vectorize -split-input-file | FileCheck %s

// A 128x256x64 matmul: 64x256x64 cache tiles, 8x32x1 register tiles, the
// contraction lowered to FMAs on 16-wide vectors with the accumulator tile
// hoisted out of the k loop.
// CHECK-LABEL: func.func @square
// CHECK: scf.for
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.matmul
func.func @square(%a: memref<128x64xf32>, %b: memref<64x256xf32>, %c: memref<128x256xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x256xf32>) outs(%c : memref<128x256xf32>)
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
