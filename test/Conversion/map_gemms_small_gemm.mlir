// RUN: dlc-opt %s -dlc-map-gemms -dlc-map-to-gpu -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-map-gemms=small-gemm-fmas=0 -dlc-map-to-gpu -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: dlc-opt %s -dlc-map-gemms -split-input-file | FileCheck %s --check-prefix=LEFT

// A small fp32 GEMM (16 x 32 x 10 = 5120 multiply-adds, k <= 64) is a
// kernel of a thread per output element (2 blocks of 256), each walking k:
// dlc-map-gemms leaves it to dlc-map-to-gpu. With small-gemm-fmas=0 it is a
// cuBLASLt call.
// CHECK-LABEL: func.func @small
// CHECK-NOT: dlc_cuda_gemm
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c256{{.*}},
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c10{{.*}} step %c1
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.terminator
// CHECK-NOT: dlc_cuda_gemm
// CHECK: return
// NONE-LABEL: func.func @small
// NONE: call @dlc_cuda_gemm
// NONE-NOT: gpu.launch
// NONE: return
// LEFT-LABEL: func.func @small
// LEFT-NEXT: linalg.matmul
// LEFT-NEXT: return
func.func @small(%a: memref<16x10xf32>, %b: memref<10x32xf32>, %c: memref<16x32xf32>) attributes {dlc.entry} {
  linalg.matmul ins(%a, %b : memref<16x10xf32>, memref<10x32xf32>) outs(%c : memref<16x32xf32>)
  return
}

// -----

// k = 32 elements per output: still a thread per output, never a warp (a
// warp kernel would not fuse into one block with its neighbours).
// CHECK-LABEL: func.func @small_k32
// CHECK: gpu.launch
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step %c1
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: return
func.func @small_k32(%a: memref<16x32xf32>, %b: memref<32x1xf32>, %c: memref<16x1xf32>) attributes {dlc.entry} {
  linalg.matmul ins(%a, %b : memref<16x32xf32>, memref<32x1xf32>) outs(%c : memref<16x1xf32>)
  return
}

// -----

// cuBLASLt calls: k = 128 > 64 (4 x 4 x 128 = 2048 multiply-adds); 64 x 64
// x 16 = 65536 multiply-adds > 16384; a bf16 output (16-bit accumulation
// in a kernel, fp32 in cuBLASLt).
// CHECK-LABEL: func.func @not_small
// CHECK-NOT: gpu.launch
// CHECK-COUNT-3: call @dlc_cuda_gemm
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @not_small(%a: memref<4x128xf32>, %b: memref<128x4xf32>, %c: memref<4x4xf32>,
                     %d: memref<64x16xf32>, %e: memref<16x64xf32>, %f: memref<64x64xf32>,
                     %g: memref<4x8xbf16>, %h: memref<8x4xbf16>, %i: memref<4x4xbf16>) attributes {dlc.entry} {
  linalg.matmul ins(%a, %b : memref<4x128xf32>, memref<128x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.matmul ins(%d, %e : memref<64x16xf32>, memref<16x64xf32>) outs(%f : memref<64x64xf32>)
  linalg.matmul ins(%g, %h : memref<4x8xbf16>, memref<8x4xbf16>) outs(%i : memref<4x4xbf16>)
  return
}
