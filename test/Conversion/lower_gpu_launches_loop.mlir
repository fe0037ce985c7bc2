// RUN: dlc-opt %s -dlc-map-gemms -dlc-map-to-gpu -dlc-plan-memory -gpu-launch-sink-index-computations -gpu-kernel-outlining -dlc-lower-gpu-launches | FileCheck %s

// A launch in a host loop (a recurrent layer's step): its parameter array
// is allocated once, at the start of the entry, not once per iteration
// (an alloca in the loop would grow the stack with every step); the
// step's offset is a parameter of its own.
// CHECK-LABEL: func.func @steps
// CHECK-NEXT: %[[ARGS:.*]] = memref.alloca() : memref<3xi64>
// CHECK-NOT: memref.alloca
// CHECK: scf.for
// CHECK-NOT: memref.alloca
// CHECK: memref.store %{{.*}}, %[[ARGS]][%{{.*}}] : memref<3xi64>
// CHECK: call @dlc_cuda_launch(%{{.*}}, %c0_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c3_i32, %{{.*}})
// CHECK: gpu.func @{{.*}}(%{{.*}}: index, %{{.*}}: memref<384xf32>, %{{.*}}: memref<4x16xf32>) kernel
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @steps(%seq: memref<6x4x16xf32>, %h: memref<4x16xf32>) attributes {dlc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %t = %c0 to %c6 step %c1 {
    %v = memref.subview %seq[%t, 0, 0] [1, 4, 16] [1, 1, 1] : memref<6x4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%v : memref<4x16xf32, strided<[16, 1], offset: ?>>) outs(%h : memref<4x16xf32>) {
    ^bb0(%a: f32, %b: f32):
      %e = math.tanh %a : f32
      linalg.yield %e : f32
    }
  }
  return
}
