// RUN: dlc-opt %s --pass-pipeline='builtin.module(func.func(dlc-vectorize-copies),canonicalize)' -split-input-file | FileCheck %s
// RUN: dlc-opt %s --pass-pipeline='builtin.module(func.func(dlc-vectorize-copies{vector-bits=256}),canonicalize)' -split-input-file | FileCheck %s --check-prefix=AVX2

#im2col = affine_map<(d0, d1, d2, d3) -> (d1, d0 floordiv 49, d2 * 2 + (d0 mod 49) floordiv 7, d3 * 2 + d0 mod 7)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A 7x7 convolution's im2col copy at stride 2 (ResNet-18's first layer):
// rows of 20 output positions read every other input element. Each 16
// lanes are one load of the 31 elements they span, masked after the last,
// and a shuffle of the even lanes; the last 4 a load of 7 elements and a
// store of 4 lanes.
// CHECK-LABEL: func.func @im2col_stride2
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<32xf32>
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[OH:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[M31:.*]] = vector.constant_mask [31] : vector<32xi1>
// CHECK: %[[W:.*]] = vector.maskedload %arg0[%[[N]], %{{.*}}, %{{.*}}, %{{.*}}], %[[M31]], %[[ZERO]] : memref<2x3x46x46xf32>, vector<32xi1>, vector<32xf32> into vector<32xf32>
// CHECK: %[[V:.*]] = vector.shuffle %[[W]], %[[W]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: vector.store %[[V]], %arg1[%[[R]], %[[N]], %[[OH]], %c0] : memref<147x2x20x20xf32>, vector<16xf32>
// CHECK: %[[M7:.*]] = vector.constant_mask [7] : vector<32xi1>
// CHECK: %[[T:.*]] = vector.maskedload %arg0[{{.*}}], %[[M7]], %[[ZERO]]
// CHECK: %[[TV:.*]] = vector.shuffle %[[T]], %[[T]] [0, 2, 4
// CHECK: %[[M4:.*]] = vector.constant_mask [4] : vector<16xi1>
// CHECK: vector.maskedstore %arg1[%[[R]], %[[N]], %[[OH]], %c16], %[[M4]], %[[TV]]
// CHECK-NOT: linalg.generic
// With 256-bit vectors, 8 lanes: two full steps of 15 elements' span, and
// a tail of 4.
// AVX2-LABEL: func.func @im2col_stride2
// AVX2: scf.for %{{.*}} = %c0 to %c16 step %c8
// AVX2: vector.constant_mask [15] : vector<16xi1>
// AVX2: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// AVX2: vector.constant_mask [7] : vector<16xi1>
// AVX2: vector.constant_mask [4] : vector<8xi1>
func.func @im2col_stride2(%x: memref<2x3x46x46xf32>, %col: memref<147x2x20x20xf32>) {
  linalg.generic {indexing_maps = [#im2col, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x3x46x46xf32>) outs(%col : memref<147x2x20x20xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#im2col = affine_map<(d0, d1, d2, d3) -> (d1, d0 floordiv 9, d2 + (d0 mod 9) floordiv 3, d3 + d0 mod 3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// At stride 1, a row of 32 is two plain vector loads and stores, from a
// view of the tile a thread copies (as dlc-parallelize-loops leaves it).
// CHECK-LABEL: func.func @im2col_stride1
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c16
// CHECK: %[[V:.*]] = vector.load %arg0[{{.*}}] : memref<1x8x34x34xf32, strided<[9248, 1156, 34, 1], offset: ?>>, vector<16xf32>
// CHECK: vector.store %[[V]], %{{.*}} : memref<72x1x32x32xf32, strided<[1024, 1024, 32, 1], offset: ?>>, vector<16xf32>
// CHECK-NOT: vector.shuffle
// CHECK-NOT: vector.masked
// CHECK-NOT: linalg.generic
func.func @im2col_stride1(%x: memref<1x8x34x34xf32, strided<[9248, 1156, 34, 1], offset: ?>>, %col: memref<72x1x32x32xf32, strided<[1024, 1024, 32, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#im2col, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<1x8x34x34xf32, strided<[9248, 1156, 34, 1], offset: ?>>) outs(%col : memref<72x1x32x32xf32, strided<[1024, 1024, 32, 1], offset: ?>>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// Left alone: the row's dim under a division (the channels-last im2col,
// whose row is the patch index), a transposed output, a body that computes,
// a stride of 5, and 16-bit elements.
#chlast = affine_map<(d0, d1, d2, d3) -> (d0, d3 floordiv 9, d1 + (d3 mod 9) floordiv 3, d2 + d3 mod 3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#s5 = affine_map<(d0, d1) -> (d0, d1 * 5)>
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: vector.
func.func @left_alone(%x: memref<2x8x10x10xf32>, %col: memref<2x8x8x72xf32>,
                      %a: memref<16x16xf32>, %b: memref<16x16xf32>,
                      %c: memref<16x80xf32>, %h: memref<16x16xbf16>, %h2: memref<16x16xbf16>) {
  linalg.generic {indexing_maps = [#chlast, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x8x10x10xf32>) outs(%col : memref<2x8x8x72xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id2, #tr], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#s5, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<16x80xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<16x16xbf16>) outs(%h2 : memref<16x16xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    linalg.yield %v : bf16
  }
  return
}
