// RUN: dlc-opt %s --dlc-share-repeated-loops --split-input-file | FileCheck %s

// Two nests alike on other buffers: one shared function, internal and not
// inlined, its constants inside; disjoint buffers make its arguments
// llvm.noalias. A nest that occurs once stays.
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[W1:[a-z0-9]+]]: memref<16xf32> {llvm.noalias}, %[[W2:[a-z0-9]+]]: memref<16xf32> {llvm.noalias}, %[[WS:[a-z0-9]+]]: memref<256xi8> {llvm.noalias}
// CHECK: %[[V1:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<256xi8> to memref<16xf32>
// CHECK: %[[V2:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<256xi8> to memref<16xf32>
// CHECK: call @dlc_shared_loop_0(%[[W1]], %[[V1]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK: call @dlc_shared_loop_0(%[[W2]], %[[V2]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK: scf.for
// CHECK: return
// CHECK: func.func private @dlc_shared_loop_0(%{{.*}}: memref<16xf32> {llvm.noalias}, %{{.*}}: memref<16xf32> {llvm.noalias})
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: scf.for
// CHECK-NOT: func.func
func.func @layers(%w1: memref<16xf32> {llvm.noalias}, %w2: memref<16xf32> {llvm.noalias},
                  %ws: memref<256xi8> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %v1 = memref.view %ws[%c0][] : memref<256xi8> to memref<16xf32>
  %v2 = memref.view %ws[%c64][] : memref<256xi8> to memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %w1[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %v1[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %w2[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %v2[%i] : memref<16xf32>
  }
  // Another constant: another computation, once.
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %w2[%i] : memref<16xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %v2[%i] : memref<16xf32>
  }
  return
}

// -----

// Overlapping views of the workspace: shared, but the arguments may alias.
// CHECK-LABEL: func.func @overlap(
// CHECK-COUNT-2: call @dlc_shared_loop_0(
// CHECK: func.func private @dlc_shared_loop_0(%{{.*}}: memref<16xf32>, %{{.*}}: memref<16xf32>)
func.func @overlap(%ws: memref<256xi8> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %a = memref.view %ws[%c0][] : memref<256xi8> to memref<16xf32>
  %b = memref.view %ws[%c32][] : memref<256xi8> to memref<16xf32>
  %c = memref.view %ws[%c64][] : memref<256xi8> to memref<16xf32>
  %d = memref.view %ws[%c128][] : memref<256xi8> to memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %c[%i] : memref<16xf32>
    memref.store %x, %d[%i] : memref<16xf32>
  }
  // a and b overlap (bytes 0-63 and 32-95).
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    memref.store %x, %b[%i] : memref<16xf32>
  }
  return
}

// -----

// Alike nests, once in each function (a forward entry and the training
// step's forward): they stay.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: call
// CHECK: scf.for
// CHECK-LABEL: func.func @train(
// CHECK-NOT: call
// CHECK: scf.for
// CHECK-NOT: dlc_shared_loop
func.func @forward(%a: memref<16xf32> {llvm.noalias}, %b: memref<16xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    memref.store %x, %b[%i] : memref<16xf32>
  }
  return
}
func.func @train(%a: memref<16xf32> {llvm.noalias}, %b: memref<16xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    memref.store %x, %b[%i] : memref<16xf32>
  }
  return
}

// -----

// One buffer read twice is not two buffers read once; a result is
// returned; a memref of dynamic shape cannot be passed.
// CHECK-LABEL: func.func @patterns(
// CHECK: %[[S:.*]] = call @dlc_shared_loop_0(%arg0, %arg1) : (memref<16xf32>, memref<16xf32>) -> f32
// CHECK: call @dlc_shared_loop_0(%arg2, %arg1)
// CHECK: call @dlc_shared_loop_1(%arg0)
// CHECK: call @dlc_shared_loop_1(%arg2)
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: return %[[S]]
// CHECK: func.func private @dlc_shared_loop_0({{.*}}) -> f32
// CHECK: func.func private @dlc_shared_loop_1(%{{[a-z0-9]+}}: memref<16xf32> {llvm.noalias}) -> f32
func.func @patterns(%a: memref<16xf32> {llvm.noalias}, %b: memref<16xf32> {llvm.noalias},
                    %c: memref<16xf32> {llvm.noalias}, %d: memref<?xf32> {llvm.noalias}) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %s0 = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<16xf32>
    %y = memref.load %b[%i] : memref<16xf32>
    %p = arith.mulf %x, %y : f32
    %n = arith.addf %acc, %p : f32
    scf.yield %n : f32
  }
  %s1 = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %c[%i] : memref<16xf32>
    %y = memref.load %b[%i] : memref<16xf32>
    %p = arith.mulf %x, %y : f32
    %n = arith.addf %acc, %p : f32
    scf.yield %n : f32
  }
  %s2 = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<16xf32>
    %y = memref.load %a[%i] : memref<16xf32>
    %p = arith.mulf %x, %y : f32
    %n = arith.addf %acc, %p : f32
    scf.yield %n : f32
  }
  %s3 = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %c[%i] : memref<16xf32>
    %y = memref.load %c[%i] : memref<16xf32>
    %p = arith.mulf %x, %y : f32
    %n = arith.addf %acc, %p : f32
    scf.yield %n : f32
  }
  %s4 = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %d[%i] : memref<?xf32>
    %n = arith.addf %acc, %x : f32
    scf.yield %n : f32
  }
  %s5 = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %d[%i] : memref<?xf32>
    %n = arith.addf %acc, %x : f32
    scf.yield %n : f32
  }
  %t0 = arith.addf %s0, %s1 : f32
  %t1 = arith.addf %s2, %s3 : f32
  %t2 = arith.addf %s4, %s5 : f32
  %t3 = arith.addf %t0, %t1 : f32
  %t = arith.addf %t3, %t2 : f32
  return %s0 : f32
}
