// RUN: dlc-opt %s -dlc-emulate-gpu-launches=reverse=true | FileCheck %s

// With reverse, the blocks and the threads run last to first.
// CHECK-LABEL: func.func @kernel
// CHECK: scf.for %[[B:.*]] = %c0{{.*}} to %[[GRID:c4]] step
// CHECK: %[[GL:.*]] = arith.subi %[[GRID]], %c1
// CHECK: %[[BID:.*]] = arith.subi %[[GL]], %[[B]]
// CHECK: scf.for %[[T:.*]] = %c0{{.*}} to %[[BLOCK:c256]] step
// CHECK: %[[BL:.*]] = arith.subi %[[BLOCK]], %c1
// CHECK: %[[TID:.*]] = arith.subi %[[BL]], %[[T]]
// CHECK: %[[M:.*]] = arith.muli %[[BID]], %c256
// CHECK: arith.addi %[[M]], %[[TID]]
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

// A warp reduction: the warps and their lanes too.
// CHECK-LABEL: func.func @warps
// CHECK: scf.for %[[W:.*]] = %c0{{.*}} to %[[WARPS:c2[_0-9]*]] step
// CHECK: %[[WL:.*]] = arith.subi %[[WARPS]], %c1
// CHECK: %[[WARP:.*]] = arith.subi %[[WL]], %[[W]]
// CHECK: scf.for %[[L:.*]] = %c0{{.*}} to %[[LANES:c32[_0-9]*]] step
// CHECK: %[[LL:.*]] = arith.subi %[[LANES]], %c1
// CHECK: %[[LANE:.*]] = arith.subi %[[LL]], %[[L]]
// CHECK: %[[WT:.*]] = arith.muli %[[WARP]], %[[LANES]]
// CHECK: arith.addi %[[WT]], %[[LANE]]
func.func @warps(%x: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<64xf32>
    %s = gpu.subgroup_reduce add %v uniform : (f32) -> f32
    memref.store %s, %x[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
