// RUN: dlc-opt %s -split-input-file -dlc-lower-to-linalg --canonicalize --cse | FileCheck %s
// RUN: dlc-opt %s -split-input-file -dlc-lower-to-linalg="recurrent-blocks=2" --canonicalize --cse | FileCheck %s --check-prefix=TWO
// RUN: dlc-opt %s -split-input-file -dlc-lower-to-linalg="recurrent-blocks=1" --canonicalize --cse | FileCheck %s --check-prefix=ONE
// RUN: dlc-opt %s -split-input-file -dlc-lower-to-linalg --dlc-fuse-elementwise --canonicalize --cse --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --cse --canonicalize | FileCheck %s --check-prefix=BUF
// The rows of a recurrent layer's batch never meet, so dlc-lower-to-linalg
// splits a batch into up to `recurrent-blocks` (4) equal blocks of at least
// 8 rows: an scf.for over the blocks, marked dlc.independent_iterations,
// whose iteration takes its block's rows of every sequence and state, runs
// the loop over the steps on them and writes them back. Bufferized, the
// blocks still write in place: nothing is allocated or copied inside.

// 24 rows: 3 blocks of 8 (2 with recurrent-blocks=2: 12 rows each).
// CHECK-LABEL: func.func @lstm
// CHECK: %[[R:.*]]:5 = scf.for %[[B:.*]] = %c0 to %c3 step %c1 iter_args(%[[G:.*]] = %arg0, %[[Y:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}, %[[H:.*]] = %{{.*}}, %[[CC:.*]] = %{{.*}})
// CHECK: %[[FIRST:.*]] = arith.muli %[[B]], %c8 : index
// CHECK: %[[GB:.*]] = tensor.extract_slice %[[G]][0, %[[FIRST]], 0] [3, 8, 16] [1, 1, 1] : tensor<3x24x16xf32> to tensor<3x8x16xf32>
// CHECK: %[[YB:.*]] = tensor.extract_slice %[[Y]][0, %[[FIRST]], 0] [3, 8, 4] [1, 1, 1]
// CHECK: %[[CB:.*]] = tensor.extract_slice %[[C]][0, %[[FIRST]], 0] [3, 8, 4] [1, 1, 1]
// CHECK: %[[HB:.*]] = tensor.extract_slice %[[H]][%[[FIRST]], 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
// CHECK: %[[CCB:.*]] = tensor.extract_slice %[[CC]][%[[FIRST]], 0] [8, 4] [1, 1]
// CHECK: %[[S:.*]]:5 = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %[[GB]], %{{.*}} = %[[YB]], %{{.*}} = %[[CB]], %{{.*}} = %[[HB]], %{{.*}} = %[[CCB]]) -> (tensor<3x8x16xf32>, tensor<3x8x4xf32>, tensor<3x8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: %[[GW:.*]] = tensor.insert_slice %[[S]]#0 into %[[G]][0, %[[FIRST]], 0] [3, 8, 16] [1, 1, 1]
// CHECK: %[[YW:.*]] = tensor.insert_slice %[[S]]#1 into %[[Y]][0, %[[FIRST]], 0] [3, 8, 4] [1, 1, 1]
// CHECK: %[[CW:.*]] = tensor.insert_slice %[[S]]#2 into %[[C]][0, %[[FIRST]], 0] [3, 8, 4] [1, 1, 1]
// CHECK: %[[HW:.*]] = tensor.insert_slice %[[S]]#3 into %[[H]][%[[FIRST]], 0] [8, 4] [1, 1]
// CHECK: %[[CCW:.*]] = tensor.insert_slice %[[S]]#4 into %[[CC]][%[[FIRST]], 0] [8, 4] [1, 1]
// CHECK: scf.yield %[[GW]], %[[YW]], %[[CW]], %[[HW]], %[[CCW]]
// CHECK: } {dlc.independent_iterations}
// CHECK: return %[[R]]#1, %[[R]]#2, %[[R]]#0
// TWO-LABEL: func.func @lstm
// TWO: scf.for %{{.*}} = %c0 to %c2 step %c1
// TWO: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0] [3, 12, 16] [1, 1, 1]
// TWO: } {dlc.independent_iterations}
// ONE-LABEL: func.func @lstm
// ONE-NOT: dlc.independent_iterations
// ONE: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<24x4xf32>, tensor<4x16xf32>)
// ONE-NOT: dlc.independent_iterations
// ONE: return
// BUF-LABEL: func.func @lstm
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: linalg.matmul
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: } {dlc.independent_iterations}
func.func @lstm(%x: tensor<3x24x16xf32>, %w: tensor<16x4xf32>, %h: tensor<24x4xf32>, %c: tensor<24x4xf32>) -> (tensor<3x24x4xf32>, tensor<3x24x4xf32>, tensor<3x24x16xf32>) {
  %y, %cs, %g = dlc.lstm %x, %w, %h, %c : (tensor<3x24x16xf32>, tensor<16x4xf32>, tensor<24x4xf32>, tensor<24x4xf32>) -> (tensor<3x24x4xf32>, tensor<3x24x4xf32>, tensor<3x24x16xf32>)
  return %y, %cs, %g : tensor<3x24x4xf32>, tensor<3x24x4xf32>, tensor<3x24x16xf32>
}

// -----

// Backward, 16 rows: 2 blocks of 8. The sequences and the initial c it only
// reads are sliced to the block's rows too; the weight is shared.
// CHECK-LABEL: func.func @lstm_grad
// CHECK: scf.for %[[B:.*]] = %c0 to %c2 step %c1 iter_args
// CHECK: %[[FIRST:.*]] = arith.muli %[[B]], %c8 : index
// CHECK-DAG: %[[GATES:.*]] = tensor.extract_slice %arg5[0, %[[FIRST]], 0] [3, 8, 16] [1, 1, 1]
// CHECK-DAG: %[[C:.*]] = tensor.extract_slice %arg4[0, %[[FIRST]], 0] [3, 8, 4] [1, 1, 1]
// CHECK-DAG: %[[DY:.*]] = tensor.extract_slice %arg0[0, %[[FIRST]], 0] [3, 8, 4] [1, 1, 1]
// CHECK-DAG: %[[DC:.*]] = tensor.extract_slice %arg1[0, %[[FIRST]], 0] [3, 8, 4] [1, 1, 1]
// CHECK-DAG: %[[C0:.*]] = tensor.extract_slice %arg3[%[[FIRST]], 0] [8, 4] [1, 1]
// CHECK: scf.for
// CHECK: arith.select %{{.*}}, %[[C0]], %{{.*}} : tensor<8x4xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %arg2 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: } {dlc.independent_iterations}
// BUF-LABEL: func.func @lstm_grad
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: } {dlc.independent_iterations}
func.func @lstm_grad(%dy: tensor<3x16x4xf32>, %dc: tensor<3x16x4xf32>, %w: tensor<16x4xf32>, %c0: tensor<16x4xf32>, %c: tensor<3x16x4xf32>, %g: tensor<3x16x16xf32>) -> (tensor<3x16x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>) {
  %dg, %dh0, %dc0 = dlc.lstm_grad %dy, %dc, %w, %c0, %c, %g : (tensor<3x16x4xf32>, tensor<3x16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<3x16x4xf32>, tensor<3x16x16xf32>) -> (tensor<3x16x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>)
  return %dg, %dh0, %dc0 : tensor<3x16x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>
}

// -----

// A GRU of 32 rows: 4 blocks of 8; the projection is read by block, the
// recurrent bias whole.
// CHECK-LABEL: func.func @gru
// CHECK: scf.for %[[B:.*]] = %c0 to %c4 step %c1 iter_args
// CHECK: %[[FIRST:.*]] = arith.muli %[[B]], %c8 : index
// CHECK: tensor.extract_slice %arg0[0, %[[FIRST]], 0] [3, 8, 12] [1, 1, 1]
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%arg2 : tensor<12xf32>)
// CHECK: } {dlc.independent_iterations}
func.func @gru(%x: tensor<3x32x12xf32>, %w: tensor<12x4xf32>, %b: tensor<12xf32>, %h: tensor<32x4xf32>) -> (tensor<3x32x4xf32>, tensor<3x32x12xf32>) {
  %y, %g = dlc.gru %x, %w, %b, %h : (tensor<3x32x12xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<32x4xf32>) -> (tensor<3x32x4xf32>, tensor<3x32x12xf32>)
  return %y, %g : tensor<3x32x4xf32>, tensor<3x32x12xf32>
}

// -----

// 15 rows do not split into equal blocks of 8 or more: one loop.
// CHECK-LABEL: func.func @gru_grad
// CHECK-NOT: dlc.independent_iterations
// CHECK: return
// BUF-LABEL: func.func @gru_grad
// BUF-NOT: dlc.independent_iterations
// BUF: return
func.func @gru_grad(%dy: tensor<3x15x4xf32>, %w: tensor<12x4xf32>, %h: tensor<15x4xf32>, %p: tensor<3x15x12xf32>, %y: tensor<3x15x4xf32>, %g: tensor<3x15x12xf32>) -> (tensor<3x15x12xf32>, tensor<3x15x12xf32>, tensor<15x4xf32>) {
  %a, %b, %c = dlc.gru_grad %dy, %w, %h, %p, %y, %g : (tensor<3x15x4xf32>, tensor<12x4xf32>, tensor<15x4xf32>, tensor<3x15x12xf32>, tensor<3x15x4xf32>, tensor<3x15x12xf32>) -> (tensor<3x15x12xf32>, tensor<3x15x12xf32>, tensor<15x4xf32>)
  return %a, %b, %c : tensor<3x15x12xf32>, tensor<3x15x12xf32>, tensor<15x4xf32>
}
