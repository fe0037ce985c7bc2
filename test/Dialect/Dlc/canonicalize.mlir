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

// -----

// The gate blocks of an LSTM weight that PyTorch's exporter reorders into
// ONNX's i, o, f, c and the importer back into i, f, g, o: the weight
// itself, nothing copied.
// CHECK-LABEL: func.func @gate_reorder_roundtrip
// CHECK-NEXT: return %arg0
func.func @gate_reorder_roundtrip(%w: tensor<16x3xf32>) -> tensor<16x3xf32> {
  %i = dlc.slice %w {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<16x3xf32>) -> tensor<4x3xf32>
  %f = dlc.slice %w {offsets = array<i64: 4, 0>, strides = array<i64: 1, 1>} : (tensor<16x3xf32>) -> tensor<4x3xf32>
  %g = dlc.slice %w {offsets = array<i64: 8, 0>, strides = array<i64: 1, 1>} : (tensor<16x3xf32>) -> tensor<4x3xf32>
  %o = dlc.slice %w {offsets = array<i64: 12, 0>, strides = array<i64: 1, 1>} : (tensor<16x3xf32>) -> tensor<4x3xf32>
  %iofc = dlc.concat %i, %o, %f, %g {dim = 0 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<16x3xf32>
  %a = dlc.slice %iofc {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<16x3xf32>) -> tensor<4x3xf32>
  %b = dlc.slice %iofc {offsets = array<i64: 8, 0>, strides = array<i64: 1, 1>} : (tensor<16x3xf32>) -> tensor<8x3xf32>
  %c = dlc.slice %iofc {offsets = array<i64: 4, 0>, strides = array<i64: 1, 1>} : (tensor<16x3xf32>) -> tensor<4x3xf32>
  %r = dlc.concat %a, %b, %c {dim = 0 : i64} : (tensor<4x3xf32>, tensor<8x3xf32>, tensor<4x3xf32>) -> tensor<16x3xf32>
  return %r : tensor<16x3xf32>
}

// -----

// A band of a concat: the parts of its inputs that it covers (a whole input
// is taken as it is); along dim 1 here.
// CHECK-LABEL: func.func @slice_of_concat
// CHECK-NEXT: %[[B:.*]] = dlc.slice %arg1 {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x5xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[J:.*]] = dlc.concat %arg0, %[[B]] {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
// CHECK-NEXT: %[[A:.*]] = dlc.slice %arg0 {offsets = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: return %[[J]], %[[A]], %arg1
func.func @slice_of_concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x2xf32>, tensor<2x5xf32>) {
  %j = dlc.concat %a, %b {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %0 = dlc.slice %j {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x5xf32>
  %1 = dlc.slice %j {offsets = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x2xf32>
  %2 = dlc.slice %j {offsets = array<i64: 0, 3>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x5xf32>
  return %0, %1, %2 : tensor<2x5xf32>, tensor<2x2xf32>, tensor<2x5xf32>
}

// -----

// Not bands of the concat's dimension: a strided slice, a slice of part of
// another dimension, and slices that are not side by side stay as they are.
// CHECK-LABEL: func.func @not_bands
// CHECK: dlc.slice %[[J:.*]] {offsets = array<i64: 0, 0>, strides = array<i64: 1, 2>}
// CHECK: dlc.slice %[[J]] {offsets = array<i64: 1, 0>, strides = array<i64: 1, 1>}
// CHECK: %[[S0:.*]] = dlc.slice %arg0 {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x2xf32>
// CHECK: %[[S1:.*]] = dlc.slice %arg0 {offsets = array<i64: 0, 3>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x2xf32>
// CHECK: dlc.concat %[[S0]], %[[S1]] {dim = 1 : i64}
func.func @not_bands(%x: tensor<2x8xf32>, %a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<2x4xf32>, tensor<1x8xf32>, tensor<2x4xf32>) {
  %j = dlc.concat %a, %b {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %0 = dlc.slice %j {offsets = array<i64: 0, 0>, strides = array<i64: 1, 2>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %1 = dlc.slice %j {offsets = array<i64: 1, 0>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<1x8xf32>
  %s0 = dlc.slice %x {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x2xf32>
  %s1 = dlc.slice %x {offsets = array<i64: 0, 3>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x2xf32>
  %2 = dlc.concat %s0, %s1 {dim = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<1x8xf32>, tensor<2x4xf32>
}
