// RUN: dlc-opt %s -dlc-map-gemms -dlc-map-to-gpu -dlc-plan-memory -gpu-launch-sink-index-computations -gpu-kernel-outlining -dlc-lower-gpu-launches | FileCheck %s

// Two kernels, outlined into modules of their own, end up in one
// gpu.module, named after their modules; each launch is a runtime call with
// a host array of 8-byte parameters; the context moves behind the
// workspace that dlc-plan-memory appended.
// CHECK: module attributes {dlc.cuda_kernels = ["[[K0:.*]]", "[[K1:.*]]"]
// CHECK-LABEL: func.func @entry
// CHECK-SAME: %{{.*}}: memref<64xi8> {dlc.name = "workspace", llvm.noalias}, %[[CTX:arg[0-9]+]]: !llvm.ptr {dlc.name = "cuda_ctx"})
// CHECK-NOT: gpu.launch_func
// CHECK: %[[ARGS:.*]] = memref.alloca() : memref<2xi64>
// CHECK: memref.store %{{.*}}, %[[ARGS]][%{{.*}}] : memref<2xi64>
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[ARGS]]
// CHECK: %[[PI:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK: call @dlc_cuda_launch(%[[CTX]], %c0_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i32, %[[PI]])
// CHECK: call @dlc_cuda_launch(%[[CTX]], %c1_i32, %{{.*}}, %c2_i32{{.*}}, %{{.*}})
// CHECK: gpu.module @dlc_kernels
// CHECK: gpu.func @[[K0]](%{{.*}}: memref<16xf32>, %{{.*}}: memref<16xf32>) kernel
// CHECK: gpu.func @[[K1]](%{{.*}}: memref<16xf32>, %{{.*}}: memref<16xf32>) kernel
// CHECK: func.func private @dlc_cuda_launch(!llvm.ptr, i32, i64, i64, i64, i64, i64, i64, i32, i64)
// CHECK-NOT: gpu.module
#id = affine_map<(d0) -> (d0)>
func.func @entry(%x: memref<16xf32>, %y: memref<16xf32>) attributes {dlc.entry} {
  %t = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%t : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}
