// RUN: dlc-opt %s -dlc-map-gemms -dlc-map-to-gpu -dlc-fuse-kernels=max-param-bytes=16 -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-map-gemms -dlc-map-to-gpu "-dlc-fuse-kernels=one-block=0 max-param-bytes=16" -split-input-file | FileCheck %s --check-prefix=SIDE
// RUN: dlc-opt %s -dlc-map-gemms -dlc-map-to-gpu -dlc-fuse-kernels -split-input-file | FileCheck %s --check-prefix=ANY

// A fused kernel takes at most max-param-bytes of parameters, 8 bytes for
// each value its body uses from outside: with 16, two buffers. Three
// independent kernels of a buffer each: the first two share a launch (one
// block, or side by side), the third has its own. Without the budget
// (4096 bytes), one launch.
// CHECK-LABEL: func.func @three_buffers
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg0
// CHECK: memref.store %{{.*}}, %arg1
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// SIDE-LABEL: func.func @three_buffers
// SIDE-COUNT-2: gpu.launch
// SIDE-NOT: gpu.launch
// ANY-LABEL: func.func @three_buffers
// ANY-COUNT-1: gpu.launch
// ANY-NOT: gpu.launch
#v = affine_map<(d0) -> (d0)>
func.func @three_buffers(%a: memref<300xf32>, %b: memref<300xf32>, %c: memref<300xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%a : memref<300xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%b : memref<300xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%c : memref<300xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Two kernels over the same points (the second reads the first's output
// element by element) share one thread space unless their three buffers
// overflow the budget.
// CHECK-LABEL: func.func @same_points
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
// SIDE-LABEL: func.func @same_points
// SIDE-COUNT-2: gpu.launch
// SIDE-NOT: gpu.launch
// ANY-LABEL: func.func @same_points
// ANY-COUNT-1: gpu.launch
// ANY-NOT: gpu.launch
#v = affine_map<(d0) -> (d0)>
func.func @same_points(%x: memref<3000xf32>, %t: memref<3000xf32>, %y: memref<3000xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : memref<3000xf32>) outs(%t : memref<3000xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.exp %i : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%t : memref<3000xf32>) outs(%y : memref<3000xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.sin %i : f32
    linalg.yield %e : f32
  }
  return
}
