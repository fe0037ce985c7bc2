// RUN: dlc-opt %s -split-input-file -dlc-lower-warp-reductions -verify-diagnostics | FileCheck %s

// A warp's sum: five shuffles, lane i taking lane i xor 1, 2, 4, 8 and 16,
// each combined after the lane's own value.
// CHECK-LABEL: gpu.func @sum
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle xor %[[X:.*]], %c1_i32, %c32_i32 : f32
// CHECK: %[[A1:.*]] = arith.addf %[[X]], %[[S1]] : f32
// CHECK: %[[S2:.*]], %{{.*}} = gpu.shuffle xor %[[A1]], %c2_i32, %c32_i32 : f32
// CHECK: %[[A2:.*]] = arith.addf %[[A1]], %[[S2]] : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32, %c32_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32, %c32_i32
// CHECK: %[[S5:.*]], %{{.*}} = gpu.shuffle xor %[[A4:.*]], %c16_i32, %c32_i32 : f32
// CHECK: %[[A5:.*]] = arith.addf %[[A4]], %[[S5]] : f32
// CHECK: memref.store %[[A5]]
gpu.module @kernels {
  gpu.func @sum(%x: memref<32xf32>) kernel {
    %t = gpu.thread_id x
    %v = memref.load %x[%t] : memref<32xf32>
    %s = gpu.subgroup_reduce add %v uniform : (f32) -> f32
    memref.store %s, %x[%t] : memref<32xf32>
    gpu.return
  }
}

// -----

// A max combines with maximumf, NaN-propagating like the CPU code.
// CHECK-LABEL: gpu.func @max
// CHECK-COUNT-5: arith.maximumf
// CHECK-NOT: gpu.subgroup_reduce
gpu.module @kernels {
  gpu.func @max(%x: memref<32xf32>) kernel {
    %t = gpu.thread_id x
    %v = memref.load %x[%t] : memref<32xf32>
    %s = gpu.subgroup_reduce maximumf %v uniform : (f32) -> f32
    memref.store %s, %x[%t] : memref<32xf32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @wide(%x: memref<32xf64>) kernel {
    %t = gpu.thread_id x
    %v = memref.load %x[%t] : memref<32xf64>
    // expected-error @+1 {{is not a reduction of 32-bit values over the whole warp}}
    %s = gpu.subgroup_reduce add %v uniform : (f64) -> f64
    memref.store %s, %x[%t] : memref<32xf64>
    gpu.return
  }
}
