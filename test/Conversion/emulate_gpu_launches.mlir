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

// -----

// A warp reduction: per block, the threads run the body up to the
// reduction one after the other (warp by warp, lane by lane) and leave
// their values in a buffer, whose warps are combined as the GPU's
// butterfly (lane l with lane l xor 1, 2, 4, 8, 16); then the threads run
// the rest, the lane index recomputed for each.
// CHECK-LABEL: func.func @warp_sum
// CHECK-NOT: gpu.launch
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: %[[VALUES:.*]] = memref.alloca() : memref<2x32xf32>
// CHECK: %[[NEXT:.*]] = memref.alloca() : memref<2x32xf32>
// CHECK: scf.for %[[B:.*]] = %c0{{.*}} to %c2{{.*}} step
// CHECK: scf.for %[[W:.*]] = %c0{{.*}} to %c2{{.*}} step
// CHECK: scf.for %[[L:.*]] = %c0{{.*}} to %c32{{.*}} step
// CHECK: %[[WT:.*]] = arith.muli %[[W]], %c32
// CHECK: %[[T:.*]] = arith.addi %[[WT]], %[[L]]
// CHECK: %[[I0:.*]] = arith.addi %{{.*}}, %[[T]]
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[I0]]]
// CHECK: memref.store %[[V]], %[[VALUES]][%[[W]], %[[L]]]
// CHECK: scf.for %[[W1:.*]] = %c0{{.*}} to %c2
// CHECK: scf.for %[[I:.*]] = %c0{{.*}} to %c32
// CHECK: %[[OWN:.*]] = memref.load %[[VALUES]][%[[W1]], %[[I]]]
// CHECK: %[[J:.*]] = arith.xori %[[I]], %c1
// CHECK: %[[OTHER:.*]] = memref.load %[[VALUES]][%[[W1]], %[[J]]]
// CHECK: %[[S:.*]] = arith.addf %[[OWN]], %[[OTHER]]
// CHECK: memref.store %[[S]], %[[NEXT]][%[[W1]], %[[I]]]
// CHECK: memref.copy %[[NEXT]], %[[VALUES]]
// CHECK-COUNT-4: arith.xori
// CHECK: scf.for %[[W2:.*]] = %c0{{.*}} to %c2
// CHECK: scf.for %[[L2:.*]] = %c0{{.*}} to %c32
// CHECK: %[[T2:.*]] = arith.addi %{{.*}}, %[[L2]]
// CHECK: %[[R:.*]] = memref.load %[[VALUES]][%[[W2]], %[[L2]]]
// CHECK: %[[LANE:.*]] = arith.remui %[[T2]], %c32
// CHECK: arith.cmpi eq, %[[LANE]]
// CHECK: memref.store %[[R]]
func.func @warp_sum(%x: memref<128xf32>, %y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %m = arith.muli %bx, %sx : index
    %i = arith.addi %m, %tx : index
    %v = memref.load %x[%i] : memref<128xf32>
    %lane = arith.remui %tx, %c32 : index
    %s = gpu.subgroup_reduce add %v uniform : (f32) -> f32
    %first = arith.cmpi eq, %lane, %c0 : index
    scf.if %first {
      %w = arith.divui %i, %c32 : index
      memref.store %s, %y[%w] : memref<4xf32>
    }
    gpu.terminator
  }
  return
}

// -----

func.func @nested_warp_reduction(%x: memref<32xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{has a warp operation or barrier that is not a gpu.subgroup_reduce of the whole warp or a gpu.barrier at the top level of the kernel}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    scf.if %c {
      %v = memref.load %x[%tx] : memref<32xf32>
      %s = gpu.subgroup_reduce add %v uniform : (f32) -> f32
      memref.store %s, %x[%tx] : memref<32xf32>
    }
    gpu.terminator
  }
  return
}

// -----

func.func @value_across_reduction(%x: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{is used across a warp reduction or barrier but is not pure}}
    %v = memref.load %x[%tx] : memref<32xf32>
    %s = gpu.subgroup_reduce add %v uniform : (f32) -> f32
    %t = arith.addf %s, %v : f32
    memref.store %t, %x[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}


// -----

// A barrier: every thread of the block runs the first part before any runs
// the second.
// CHECK-LABEL: func.func @barrier
// CHECK-NOT: gpu.barrier
// CHECK: scf.for %[[B:.*]] = %c0{{.*}} to %c1{{.*}} step
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// CHECK: }
// CHECK: }
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
func.func @barrier(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %v = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %v, %x[%tx] : memref<64xf32>
    gpu.barrier
    %j = arith.subi %c63, %tx : index
    %w = memref.load %x[%j] : memref<64xf32>
    memref.store %w, %y[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
