// RUN: dlc-opt %s -dlc-map-to-gpu -split-input-file -verify-diagnostics

// A loop whose carried value the host would compute from device memory
// (a loop without one stays on the host, its body mapped: map_to_gpu.mlir).
func.func @host_loop(%x: memref<4xf32>) attributes {dlc.entry} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'scf.for' op cannot run in a CUDA entry: its loop-carried values would be computed on the host}}
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<4xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  memref.store %sum, %x[%c0] : memref<4xf32>
  return
}

// -----

func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.entry} {
  // expected-error @+1 {{'linalg.generic' op must be bufferized before dlc-map-to-gpu}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%x : tensor<4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %o : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
