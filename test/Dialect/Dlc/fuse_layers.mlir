// RUN: dlc-opt %s -dlc-fuse-layers -split-input-file | FileCheck %s

// Fuse the ReLU into the linear that feeds it.
// CHECK-LABEL: func.func @fuse_relu
// CHECK: %[[Y:.*]] = dlc.linear %arg0, %arg1, %arg2 {activation = #dlc.activation<relu>}
// CHECK-NOT: dlc.relu
// CHECK: return %[[Y]]
func.func @fuse_relu(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %h = dlc.linear %x, %w, %b : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = dlc.relu %h : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Both GELU forms and tanh/sigmoid fuse; the tanh-form GELU keeps its form.
// CHECK-LABEL: func.func @fuse_gelu_tanh
// CHECK: dlc.linear %arg0, %arg1 {activation = #dlc.activation<gelu_tanh>}
// CHECK: dlc.linear %{{.*}}, %arg2 {activation = #dlc.activation<sigmoid>}
func.func @fuse_gelu_tanh(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>, %w2: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %h = dlc.linear %x, %w : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %g = dlc.gelu %h {approximate = #dlc.approximate<tanh>} : tensor<4x16xf32>
  %h2 = dlc.linear %g, %w2 : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %s = dlc.sigmoid %h2 : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// Do not fuse: the linear's result has a second user (the residual add).
// CHECK-LABEL: func.func @no_fuse_second_user
// CHECK: %[[H:.*]] = dlc.linear %arg0, %arg1 :
// CHECK-NOT: activation
// CHECK: %[[R:.*]] = dlc.relu %[[H]]
// CHECK: dlc.add %[[R]], %[[H]]
func.func @no_fuse_second_user(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<4x16xf32> {
  %h = dlc.linear %x, %w : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %r = dlc.relu %h : tensor<4x16xf32>
  %s = dlc.add %r, %h : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %s : tensor<4x16xf32>
}

// -----

// Do not fuse a second activation into a linear that already has one.
// CHECK-LABEL: func.func @no_double_activation
// CHECK: dlc.linear %arg0, %arg1 {activation = #dlc.activation<relu>}
// CHECK: dlc.tanh
func.func @no_double_activation(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %h = dlc.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %r = dlc.relu %h : tensor<4x8xf32>
  %t = dlc.tanh %r : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// A convolution's only user, a ReLU, becomes its activation.
// CHECK-LABEL: func.func @fuse_conv_relu
// CHECK: %[[C:.*]] = dlc.conv2d %arg0, %arg1 {activation = #dlc.activation<relu>, padding = array<i64: 1, 1, 1, 1>}
// CHECK-NOT: dlc.relu
// CHECK: return %[[C]]
func.func @fuse_conv_relu(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %c = dlc.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %r = dlc.relu %c : tensor<2x4x8x8xf32>
  return %r : tensor<2x4x8x8xf32>
}
