// RUN: dlc-opt %s -split-input-file -dlc-lower-to-linalg --canonicalize --cse | FileCheck %s
// A weight that dlc-pack-weights stores transposed reaches the layers as
// `dlc.transpose %packed [1, 0]`: the linear layer's matmul and the LSTM's
// steps read the packed [K, N] form as it is, and nothing is transposed
// per call (not the weight, nor, for a small batch against a wide layer,
// the input and the result).

// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<8x64xf32>, tensor<64x32xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @linear(%x: tensor<8x64xf32>, %p: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %w = dlc.transpose %p [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %y = dlc.linear %x, %w, %b : (tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// CHECK-LABEL: func.func @lstm
// CHECK-NOT: linalg.transpose
// CHECK: scf.for
// CHECK: linalg.matmul ins(%{{.*}}, %arg1 : tensor<2x4xf32>, tensor<4x16xf32>)
func.func @lstm(%x: tensor<3x2x16xf32>, %p: tensor<4x16xf32>) -> tensor<3x2x4xf32> {
  %w = dlc.transpose %p [1, 0] : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %z = dlc.fill 0.0 : tensor<2x4xf32>
  %y, %c, %g = dlc.lstm %x, %w, %z, %z : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)
  return %y : tensor<3x2x4xf32>
}

// -----

// Without the packed form, the same small-batch layer transposes its input
// and result rather than the weight.
// CHECK-LABEL: func.func @unpacked
// CHECK: linalg.transpose ins(%arg0 : tensor<8x64xf32>)
// CHECK: linalg.matmul ins(%arg1, %{{.*}} : tensor<32x64xf32>, tensor<64x8xf32>)
func.func @unpacked(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  %y = dlc.linear %x, %w : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
