// RUN: dlc-opt %s -canonicalize -split-input-file | FileCheck %s

// A reshape to the same type folds away.
// CHECK-LABEL: func.func @reshape_identity
// CHECK-NEXT: return %arg0
func.func @reshape_identity(%a: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = dlc.reshape %a : (tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Two reshapes become one.
// CHECK-LABEL: func.func @reshape_chain
// CHECK-NEXT: %[[R:.*]] = dlc.reshape %arg0 : (tensor<4x5xf32>) -> tensor<20xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%a: tensor<4x5xf32>) -> tensor<20xf32> {
  %0 = dlc.reshape %a : (tensor<4x5xf32>) -> tensor<2x10xf32>
  %1 = dlc.reshape %0 : (tensor<2x10xf32>) -> tensor<20xf32>
  return %1 : tensor<20xf32>
}

// -----

// A transpose and its inverse cancel.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-NEXT: return %arg0
func.func @transpose_inverse(%a: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = dlc.transpose %a [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = dlc.transpose %0 [1, 2, 0] : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// Two transposes compose into one.
// CHECK-LABEL: func.func @transpose_compose
// CHECK-NEXT: %[[T:.*]] = dlc.transpose %arg0 [1, 2, 0]
// CHECK-NEXT: return %[[T]]
func.func @transpose_compose(%a: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %0 = dlc.transpose %a [1, 0, 2] : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %1 = dlc.transpose %0 [0, 2, 1] : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  return %1 : tensor<3x4x2xf32>
}

// -----

// Unused pure ops disappear.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: dlc.relu
func.func @dead(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dlc.relu %a : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// The gradient a training step accumulates for a tensor whose adjacent
// windows were sliced (an unrolled LSTM's steps): one concatenation, and no
// slice_grad where the windows cover the whole tensor.
// CHECK-LABEL: func.func @join_slice_grads
// CHECK-SAME: (%[[A:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<2x4xf32>, %[[C:.*]]: tensor<2x4xf32>)
// CHECK-NEXT: %[[J:.*]] = dlc.concat %[[C]], %[[A]], %[[B]] {dim = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT: return %[[J]]
func.func @join_slice_grads(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %c: tensor<2x4xf32>) -> tensor<6x4xf32> {
  %ga = dlc.slice_grad %a {offsets = array<i64: 2, 0>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<6x4xf32>
  %gb = dlc.slice_grad %b {offsets = array<i64: 4, 0>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<6x4xf32>
  %gc = dlc.slice_grad %c {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<6x4xf32>
  %s = dlc.add %ga, %gb : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %t = dlc.add %s, %gc : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  return %t : tensor<6x4xf32>
}

// -----

// Windows that do not touch, or differ in two dimensions, stay a sum; two
// adjacent windows that leave part of the tensor out stay a placement.
// CHECK-LABEL: func.func @keep_slice_grads
// CHECK: dlc.add
// CHECK: %[[J:.*]] = dlc.concat %arg0, %arg1 {dim = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
// CHECK: dlc.slice_grad %[[J]] {offsets = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<6x9xf32>
func.func @keep_slice_grads(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<6x4xf32>, tensor<6x9xf32>) {
  %ga = dlc.slice_grad %a {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<6x4xf32>
  %gb = dlc.slice_grad %b {offsets = array<i64: 3, 0>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<6x4xf32>
  %s = dlc.add %ga, %gb : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %ha = dlc.slice_grad %a {offsets = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<6x9xf32>
  %hb = dlc.slice_grad %b {offsets = array<i64: 0, 5>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<6x9xf32>
  %t = dlc.add %ha, %hb : (tensor<6x9xf32>, tensor<6x9xf32>) -> tensor<6x9xf32>
  return %s, %t : tensor<6x4xf32>, tensor<6x9xf32>
}

// -----

// A sum of thin products (one weight's gradient at every step) is one
// product over the joined inner dimension; products with wide inner
// dimensions stay apart.
// CHECK-LABEL: func.func @join_matmul_sum
// CHECK-DAG: %[[L:.*]] = dlc.concat %arg0, %arg2, %arg4 {dim = 1 : i64} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x24xf32>
// CHECK-DAG: %[[R:.*]] = dlc.concat %arg1, %arg3, %arg5 {dim = 0 : i64} : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<24x32xf32>
// CHECK: %[[M:.*]] = dlc.matmul %[[L]], %[[R]] : (tensor<16x24xf32>, tensor<24x32xf32>) -> tensor<16x32xf32>
// CHECK: dlc.matmul %arg6, %arg7
// CHECK: dlc.matmul %arg6, %arg7
// CHECK: dlc.add
func.func @join_matmul_sum(%a0: tensor<16x8xf32>, %b0: tensor<8x32xf32>, %a1: tensor<16x8xf32>, %b1: tensor<8x32xf32>, %a2: tensor<16x8xf32>, %b2: tensor<8x32xf32>, %w: tensor<16x256xf32>, %v: tensor<256x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %m0 = dlc.matmul %a0, %b0 : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %m1 = dlc.matmul %a1, %b1 : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %m2 = dlc.matmul %a2, %b2 : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %s = dlc.add %m0, %m1 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %t = dlc.add %s, %m2 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %w0 = dlc.matmul %w, %v : (tensor<16x256xf32>, tensor<256x32xf32>) -> tensor<16x32xf32>
  %w1 = dlc.matmul %w, %v : (tensor<16x256xf32>, tensor<256x32xf32>) -> tensor<16x32xf32>
  %u = dlc.add %w0, %w1 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  return %t, %u : tensor<16x32xf32>, tensor<16x32xf32>
}
