// RUN: dlc-opt %s -split-input-file -dlc-lower-math-to-nvptx -verify-diagnostics | FileCheck %s

// Inside kernels only: the host function keeps its math ops.
// CHECK-LABEL: func.func @host
// CHECK: math.sqrt
// CHECK-LABEL: gpu.func @kernel
// CHECK: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.sqrt.rn.d"(%{{.*}}) : (f64) -> f64
// CHECK: llvm.call_intrinsic "llvm.nvvm.floor.f"(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ceil.d"(%{{.*}}) : (f64) -> f64
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[ABS:.*]] = arith.andi %[[BITS]], %c2147483647_i32 : i32
// CHECK: arith.bitcast %[[ABS]] : i32 to f32
// CHECK-NOT: math.
module attributes {gpu.container_module} {
  func.func @host(%x: f32) -> f32 {
    %y = math.sqrt %x : f32
    return %y : f32
  }
  gpu.module @kernels {
    gpu.func @kernel(%x: f32, %d: f64, %out: memref<6xf32>, %outd: memref<2xf64>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %a = math.fma %x, %x, %x : f32
      %s = math.sqrt %x : f32
      %sd = math.sqrt %d : f64
      %f = math.floor %x : f32
      %cd = math.ceil %d : f64
      %b = math.absf %x : f32
      memref.store %a, %out[%c0] : memref<6xf32>
      memref.store %s, %out[%c1] : memref<6xf32>
      memref.store %f, %out[%c2] : memref<6xf32>
      memref.store %b, %out[%c3] : memref<6xf32>
      memref.store %sd, %outd[%c0] : memref<2xf64>
      memref.store %cd, %outd[%c1] : memref<2xf64>
      gpu.return
    }
  }
}

// -----

// A transcendental op left unexpanded would need libdevice.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%x: f32, %out: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'math.exp' op has no NVPTX lowering without libdevice}}
      %e = math.exp %x : f32
      memref.store %e, %out[%c0] : memref<1xf32>
      gpu.return
    }
  }
}
