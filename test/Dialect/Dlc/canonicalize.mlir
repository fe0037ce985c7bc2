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
