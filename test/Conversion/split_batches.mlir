// RUN: dlc-opt %s --pass-pipeline='builtin.module(func.func(dlc-split-batches))' -split-input-file | FileCheck %s
// RUN: dlc-opt %s --pass-pipeline='builtin.module(func.func(dlc-split-batches),dlc-tile-and-vectorize{vector-bits=512},func.func(dlc-parallelize-loops))' -split-input-file | FileCheck %s --check-prefix=TILED

// Attention's scores: a matmul per batch on rank-reduced views of the
// batch, in a loop whose iterations are independent.
// CHECK-LABEL: func.func @scores
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[Q:.*]] = memref.subview %arg0[%[[B]], 0, 0] [1, 128, 64] [1, 1, 1] : memref<32x128x64xf32> to memref<128x64xf32, strided<[64, 1], offset: ?>>
// CHECK: %[[K:.*]] = memref.subview %arg1[%[[B]], 0, 0] [1, 64, 128] [1, 1, 1] : memref<32x64x128xf32> to memref<64x128xf32, strided<[128, 1], offset: ?>>
// CHECK: %[[S:.*]] = memref.subview %arg2[%[[B]], 0, 0] [1, 128, 128] [1, 1, 1] : memref<32x128x128xf32> to memref<128x128xf32, strided<[128, 1], offset: ?>>
// CHECK: linalg.matmul ins(%[[Q]], %[[K]] : {{.*}}) outs(%[[S]] : {{.*}})
// CHECK-NEXT: } {dlc.independent_iterations}
// CHECK-NOT: linalg.batch_matmul
// Tiled and vectorised like any matmul (an 8 x 32 register tile kept in
// registers over K), the batches on the thread pool.
// TILED-LABEL: func.func @scores
// TILED: scf.forall (%{{.*}}) in (32) {
// TILED-NOT: linalg.batch_matmul
// TILED-NOT: linalg.matmul
// TILED: scf.for {{.*}} iter_args({{.*}}) -> (vector<8x32xf32>)
// TILED: vector.fma {{.*}} : vector<32xf32>
func.func @scores(%q: memref<32x128x64xf32>, %kt: memref<32x64x128xf32>, %s: memref<32x128x128xf32>) {
  linalg.batch_matmul ins(%q, %kt : memref<32x128x64xf32>, memref<32x64x128xf32>) outs(%s : memref<32x128x128xf32>)
  return
}

// -----

// 16-bit operands accumulating in fp32 keep their types.
// CHECK-LABEL: func.func @mixed
// CHECK: scf.for
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<16x8xbf16, {{.*}}>, memref<8x32xbf16, {{.*}}>) outs(%{{.*}} : memref<16x32xf32, {{.*}}>)
func.func @mixed(%a: memref<4x16x8xbf16>, %b: memref<4x8x32xbf16>, %c: memref<4x16x32xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x16x8xbf16>, memref<4x8x32xbf16>) outs(%c : memref<4x16x32xf32>)
  return
}

// -----

// The key transposed per batch: a loop of 2-D transposes, which the tiling
// turns into 16 x 16 register transposes.
// CHECK-LABEL: func.func @transpose_last_two
// CHECK: scf.for %[[B:.*]] =
// CHECK: %[[X:.*]] = memref.subview %arg0[%[[B]], 0, 0] [1, 128, 64] [1, 1, 1]
// CHECK: %[[Y:.*]] = memref.subview %arg1[%[[B]], 0, 0] [1, 64, 128] [1, 1, 1]
// CHECK: linalg.transpose ins(%[[X]] : {{.*}}) outs(%[[Y]] : {{.*}}) permutation = [1, 0]
// CHECK-NEXT: } {dlc.independent_iterations}
// TILED-LABEL: func.func @transpose_last_two
// TILED: scf.forall (%{{.*}}) in (32) {
// TILED-NOT: linalg.transpose
// TILED: vector.shuffle
func.func @transpose_last_two(%x: memref<32x128x64xf32>, %y: memref<32x64x128xf32>) {
  linalg.transpose ins(%x : memref<32x128x64xf32>) outs(%y : memref<32x64x128xf32>) permutation = [0, 2, 1]
  return
}

// -----

// The keys transposed per head from the projection's [S, H, D] layout:
// the loop runs over the output's heads, each transposing the [S, D]
// columns of its head in the input read as [S, H * D], then tiled like the
// above (rows and shuffles) instead of gathering a column per vector.
// CHECK-LABEL: func.func @transpose_heads
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [128, 512], strides: [512, 1] : memref<128x8x64xf32> to memref<128x512xf32>
// CHECK: scf.for %[[H:.*]] =
// CHECK: %[[COL:.*]] = arith.muli %[[H]], %{{.*}} : index
// CHECK: %[[X:.*]] = memref.subview %[[FLAT]][0, %[[COL]]] [128, 64] [1, 1] : memref<128x512xf32> to memref<128x64xf32, strided<[512, 1], offset: ?>>
// CHECK: %[[Y:.*]] = memref.subview %arg1[%[[H]], 0, 0] [1, 64, 128] [1, 1, 1] : memref<8x64x128xf32> to memref<64x128xf32, strided<[128, 1], offset: ?>>
// CHECK: linalg.transpose ins(%[[X]] : {{.*}}) outs(%[[Y]] : {{.*}}) permutation = [1, 0]
// CHECK-NEXT: } {dlc.independent_iterations}
// TILED-LABEL: func.func @transpose_heads
// TILED: scf.forall (%{{.*}}) in (8) {
// TILED-NOT: linalg.transpose
// TILED: vector.transfer_read {{.*}} : memref<128x512xf32>, vector<16x16xf32>
// TILED: vector.shuffle
func.func @transpose_heads(%x: memref<128x8x64xf32>, %y: memref<8x64x128xf32>) {
  linalg.transpose ins(%x : memref<128x8x64xf32>) outs(%y : memref<8x64x128xf32>) permutation = [1, 2, 0]
  return
}

// -----

// Left as they are: permutations that keep the innermost dimension (a
// copy of rows) or move it into the batch, the heads' transpose of a view
// that is not a whole buffer, a batch_matmul with transposed maps, a
// dynamic shape, tensors (before bufferization).
// CHECK-LABEL: func.func @left
// CHECK-NOT: scf.for
// CHECK: linalg.transpose {{.*}} permutation = [1, 0, 2]
// CHECK: linalg.transpose {{.*}} permutation = [2, 1, 0]
// CHECK: linalg.transpose {{.*}} permutation = [1, 2, 0]
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
// CHECK: linalg.batch_matmul
func.func @left(%x: memref<32x128x64xf32>, %y: memref<128x32x64xf32>, %z: memref<64x128x32xf32>,
                %xs: memref<128x8x64xf32, strided<[1024, 64, 1]>>, %ys: memref<8x64x128xf32>,
                %a: memref<4x16x8xf32>, %bt: memref<4x32x8xf32>, %c: memref<4x16x32xf32>,
                %d: memref<?x16x8xf32>, %e: memref<?x8x32xf32>, %f: memref<?x16x32xf32>,
                %ta: tensor<4x16x8xf32>, %tb: tensor<4x8x32xf32>, %tc: tensor<4x16x32xf32>) -> tensor<4x16x32xf32> {
  linalg.transpose ins(%x : memref<32x128x64xf32>) outs(%y : memref<128x32x64xf32>) permutation = [1, 0, 2]
  linalg.transpose ins(%x : memref<32x128x64xf32>) outs(%z : memref<64x128x32xf32>) permutation = [2, 1, 0]
  linalg.transpose ins(%xs : memref<128x8x64xf32, strided<[1024, 64, 1]>>) outs(%ys : memref<8x64x128xf32>) permutation = [1, 2, 0]
  linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%a, %bt : memref<4x16x8xf32>, memref<4x32x8xf32>) outs(%c : memref<4x16x32xf32>)
  linalg.batch_matmul ins(%d, %e : memref<?x16x8xf32>, memref<?x8x32xf32>) outs(%f : memref<?x16x32xf32>)
  %r = linalg.batch_matmul ins(%ta, %tb : tensor<4x16x8xf32>, tensor<4x8x32xf32>) outs(%tc : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  return %r : tensor<4x16x32xf32>
}
