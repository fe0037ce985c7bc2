// RUN: dlc-opt %s -split-input-file -dlc-lower-to-linalg --canonicalize --cse | FileCheck %s
// RUN: dlc-opt %s -split-input-file -dlc-lower-to-linalg --dlc-fuse-elementwise --canonicalize --cse --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --cse --canonicalize | FileCheck %s --check-prefix=BUF
// dlc.lstm, dlc.gru and their gradients become an scf.for over the steps. LSTM:
// W_hh transposed once before the loop; each step accumulates the current
// h times W_hh^T into its slice of the projection (the saved
// pre-activations), and one generic writes h_t and c_t into their slices
// and over the current states. After bufferization the loops allocate and
// copy nothing: every step writes in place.

// CHECK-LABEL: func.func @lstm
// CHECK: %[[WT:.*]] = linalg.transpose ins(%arg1 : tensor<16x4xf32>) outs(%{{.*}} : tensor<4x16xf32>) permutation = [1, 0]
// CHECK: %[[Y:.*]] = bufferization.alloc_tensor() : tensor<3x2x4xf32>
// CHECK: %[[C:.*]] = bufferization.alloc_tensor() : tensor<3x2x4xf32>
// CHECK: %[[H0:.*]] = linalg.copy ins(%arg2 : tensor<2x4xf32>)
// CHECK: %[[C0:.*]] = linalg.copy ins(%arg3 : tensor<2x4xf32>)
// CHECK: %[[R:.*]]:5 = scf.for %[[I:.*]] = %c0 to %c3 step %c1 iter_args(%[[G:.*]] = %arg0, %[[YS:.*]] = %[[Y]], %[[CS:.*]] = %[[C]], %[[H:.*]] = %[[H0]], %[[CC:.*]] = %[[C0]])
// CHECK: %[[T:.*]] = arith.subi %c2, %[[I]] : index
// CHECK: %[[GT:.*]] = tensor.extract_slice %[[G]][%[[T]], 0, 0] [1, 2, 16] [1, 1, 1]
// CHECK: %[[A:.*]] = linalg.matmul ins(%[[H]], %[[WT]] : tensor<2x4xf32>, tensor<4x16xf32>) outs(%[[GT]] : tensor<2x16xf32>)
// CHECK-COUNT-4: tensor.extract_slice %[[A]]
// CHECK: %[[YT:.*]] = tensor.extract_slice %[[YS]][%[[T]], 0, 0]
// CHECK: %[[CT:.*]] = tensor.extract_slice %[[CS]][%[[T]], 0, 0]
// CHECK: %[[CELL:.*]]:4 = linalg.generic {{.*}} outs(%[[YT]], %[[CT]], %[[H]], %[[CC]] :
// CHECK: tensor.insert_slice %[[A]] into %[[G]][%[[T]], 0, 0]
// CHECK: tensor.insert_slice %[[CELL]]#0 into %[[YS]][%[[T]], 0, 0]
// CHECK: tensor.insert_slice %[[CELL]]#1 into %[[CS]][%[[T]], 0, 0]
// CHECK: return %[[R]]#1, %[[R]]#2, %[[R]]#0
// BUF-LABEL: func.func @lstm
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: linalg.matmul
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: linalg.generic
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @lstm(%x: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %h: tensor<2x4xf32>, %c: tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>) {
  %y, %cs, %g = dlc.lstm %x, %w, %h, %c {reverse} : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)
  return %y, %cs, %g : tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>
}

// -----

// Backward: the steps last to first; the first forward step (the loop's
// last iteration) reads the initial c and adds no y gradient to dh0. One
// generic computes c_t's whole gradient, then one per gate writes its
// columns of the step (the forget gate's also carries dc * f back), then
// dh_{t-1} = y_grad[t-1] + dGates_t W_hh.
// CHECK-LABEL: func.func @lstm_grad
// CHECK: %[[DH:.*]] = linalg.copy ins(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[CARRY:.*]] = linalg.fill
// CHECK: %[[R:.*]]:4 = scf.for %[[I:.*]] = %c0 to %c3 step %c1 iter_args(%[[DG:.*]] = %{{.*}}, %[[DHI:.*]] = %[[DH]], %[[CA:.*]] = %[[CARRY]], %{{.*}} = %{{.*}})
// CHECK: %[[T:.*]] = arith.subi %c2, %[[I]] : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[I]], %c2 : index
// CHECK: %[[PREV:.*]] = arith.select %[[FIRST]], %[[T]], %{{.*}} : index
// CHECK: arith.select %[[FIRST]], %arg3, %{{.*}} : tensor<2x4xf32>
// CHECK: linalg.generic
// CHECK-COUNT-4: linalg.generic
// CHECK: %[[DY:.*]] = arith.select %[[FIRST]], %{{.*}}, %{{.*}} : tensor<2x4xf32>
// CHECK: %[[ACC:.*]] = linalg.copy ins(%[[DY]] : tensor<2x4xf32>) outs(%[[DHI]] : tensor<2x4xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %arg2 : tensor<2x16xf32>, tensor<16x4xf32>) outs(%[[ACC]] : tensor<2x4xf32>)
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
// BUF-LABEL: func.func @lstm_grad
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: linalg.matmul
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @lstm_grad(%dy: tensor<3x2x4xf32>, %dc: tensor<3x2x4xf32>, %w: tensor<16x4xf32>, %c0: tensor<2x4xf32>, %c: tensor<3x2x4xf32>, %g: tensor<3x2x16xf32>) -> (tensor<3x2x16xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %a, %b, %d = dlc.lstm_grad %dy, %dc, %w, %c0, %c, %g : (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>) -> (tensor<3x2x16xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %a, %b, %d : tensor<3x2x16xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// dlc.gru: each step broadcasts b_hh into its slice of `gates`, accumulates
// h W_hh^T into it (the saved recurrent pre-activations), and one generic
// writes h_t into y and over the current state.
// CHECK-LABEL: func.func @gru
// CHECK: %[[WT:.*]] = linalg.transpose ins(%arg1 : tensor<12x4xf32>) outs(%{{.*}} : tensor<4x12xf32>) permutation = [1, 0]
// CHECK: %[[R:.*]]:3 = scf.for %[[I:.*]] = %c0 to %c3 step %c1 iter_args(%[[G:.*]] = %{{.*}}, %[[YS:.*]] = %{{.*}}, %[[H:.*]] = %{{.*}})
// CHECK: %[[GT:.*]] = tensor.extract_slice %[[G]][%[[I]], 0, 0] [1, 2, 12] [1, 1, 1]
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<12xf32>) outs(%[[GT]] : tensor<2x12xf32>)
// CHECK: %[[A:.*]] = linalg.matmul ins(%[[H]], %[[WT]] : tensor<2x4xf32>, tensor<4x12xf32>) outs(%[[B]] : tensor<2x12xf32>)
// CHECK: %[[CELL:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %[[H]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: tensor.insert_slice %[[A]] into %[[G]][%[[I]], 0, 0]
// CHECK: tensor.insert_slice %[[CELL]]#0 into %[[YS]][%[[I]], 0, 0]
// CHECK: return %[[R]]#1, %[[R]]#0
// BUF-LABEL: func.func @gru
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @gru(%x: tensor<3x2x12xf32>, %w: tensor<12x4xf32>, %b: tensor<12xf32>, %h: tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x12xf32>) {
  %y, %g = dlc.gru %x, %w, %b, %h : (tensor<3x2x12xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x12xf32>)
  return %y, %g : tensor<3x2x4xf32>, tensor<3x2x12xf32>
}

// -----

// dlc.gru_grad, reverse: steps 0 to 2; one generic per column block of the
// projection's and the recurrent pre-activations' gradients, each written
// back before the next block is extracted, then dh_{t-1} = y_grad[t-1] +
// dh z (in place) + dGates_t W_hh.
// CHECK-LABEL: func.func @gru_grad
// CHECK: scf.for %[[I:.*]] = %c0 to %c3 step %c1 iter_args(%[[DP:.*]] = %{{.*}}, %[[DG:.*]] = %{{.*}}, %[[DH:.*]] = %{{.*}})
// CHECK-COUNT-6: tensor.insert_slice
// CHECK: %[[DH2:.*]] = linalg.generic {{.*}} outs(%[[DH]] : tensor<2x4xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %arg1 : tensor<2x12xf32>, tensor<12x4xf32>) outs(%[[DH2]] : tensor<2x4xf32>)
// BUF-LABEL: func.func @gru_grad
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @gru_grad(%dy: tensor<3x2x4xf32>, %w: tensor<12x4xf32>, %h: tensor<2x4xf32>, %p: tensor<3x2x12xf32>, %y: tensor<3x2x4xf32>, %g: tensor<3x2x12xf32>) -> (tensor<3x2x12xf32>, tensor<3x2x12xf32>, tensor<2x4xf32>) {
  %a, %b, %c = dlc.gru_grad %dy, %w, %h, %p, %y, %g {reverse} : (tensor<3x2x4xf32>, tensor<12x4xf32>, tensor<2x4xf32>, tensor<3x2x12xf32>, tensor<3x2x4xf32>, tensor<3x2x12xf32>) -> (tensor<3x2x12xf32>, tensor<3x2x12xf32>, tensor<2x4xf32>)
  return %a, %b, %c : tensor<3x2x12xf32>, tensor<3x2x12xf32>, tensor<2x4xf32>
}
