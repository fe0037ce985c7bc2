// RUN: dlc-opt %s -split-input-file -dlc-emulate-gpu-launches -verify-diagnostics | FileCheck %s

// A launch becomes a loop over the blocks around a loop over the threads;
// the ids are the loop indices.
// CHECK-LABEL: func.func @kernel
// CHECK-NOT: gpu.launch
// CHECK: scf.for %[[B:.*]] = %c0 to %c4 step %c1{{.*}} {
// CHECK-NEXT: scf.for %[[T:.*]] = %c0 to %c256 step %c1{{.*}} {
// CHECK-NEXT: %[[M:.*]] = arith.muli %[[B]], %c256
// CHECK-NEXT: %[[I:.*]] = arith.addi %[[M]], %[[T]]
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[I]]]
func.func @kernel(%y: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %v = arith.constant 2.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %m = arith.muli %bx, %sx : index
    %i = arith.addi %m, %tx : index
    memref.store %v, %y[%i] : memref<1024xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @two_dimensional(%y: memref<4x4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{is not a one-dimensional synchronous launch}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c4, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}
