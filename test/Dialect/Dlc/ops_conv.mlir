// RUN: dlc-opt %s | dlc-opt | FileCheck %s
// The convolution, pooling and batch-norm ops print and parse back to
// themselves; default-valued attributes are elided.

// CHECK-LABEL: func.func @conv_ops
func.func @conv_ops(%x: tensor<4x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>,
                    %wg: tensor<6x1x3x2xf32>, %s: tensor<8xf32>)
    -> (tensor<4x8x16x16xf32>, tensor<4x6x8x15xf32>, tensor<4x8x8x8xf32>, tensor<4x8x8x8xf32>, tensor<4x8x16x16xf32>) {
  // CHECK: dlc.conv2d %{{.*}}, %{{.*}}, %{{.*}} {activation = #dlc.activation<relu>, padding = array<i64: 1, 1, 1, 1>} : (tensor<4x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<4x8x16x16xf32>
  %c = dlc.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>, activation = #dlc.activation<relu>} : (tensor<4x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<4x8x16x16xf32>
  // CHECK: dlc.conv2d %{{.*}}, %{{.*}} {dilations = array<i64: 1, 2>, groups = 3 : i64, padding = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 1>}
  %g = dlc.conv2d %x, %wg {strides = array<i64: 2, 1>, padding = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 2>, groups = 3} : (tensor<4x3x16x16xf32>, tensor<6x1x3x2xf32>) -> tensor<4x6x8x15xf32>
  // CHECK: dlc.max_pool2d %{{.*}} {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
  %m = dlc.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<4x8x16x16xf32>) -> tensor<4x8x8x8xf32>
  // CHECK: dlc.avg_pool2d %{{.*}} {count_include_pad = true, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %a = dlc.avg_pool2d %c {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<4x8x16x16xf32>) -> tensor<4x8x8x8xf32>
  // CHECK: dlc.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f64}
  %n = dlc.batch_norm %c, %s, %s, %s, %s {epsilon = 1.0e-3 : f64} : (tensor<4x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8x16x16xf32>
  return %c, %g, %m, %a, %n : tensor<4x8x16x16xf32>, tensor<4x6x8x15xf32>, tensor<4x8x8x8xf32>, tensor<4x8x8x8xf32>, tensor<4x8x16x16xf32>
}

// CHECK-LABEL: func.func @grad_ops
func.func @grad_ops(%x: tensor<4x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %g: tensor<4x8x7x7xf32>, %p: tensor<4x3x8x8xf32>)
    -> (tensor<4x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16x16xf32>) {
  // CHECK: dlc.conv2d_grad_input %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>} : (tensor<4x8x7x7xf32>, tensor<8x3x3x3xf32>) -> tensor<4x3x16x16xf32>
  %dx = dlc.conv2d_grad_input %g, %w {strides = array<i64: 2, 2>} : (tensor<4x8x7x7xf32>, tensor<8x3x3x3xf32>) -> tensor<4x3x16x16xf32>
  // CHECK: dlc.conv2d_grad_weight %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>} : (tensor<4x3x16x16xf32>, tensor<4x8x7x7xf32>) -> tensor<8x3x3x3xf32>
  %dw = dlc.conv2d_grad_weight %x, %g {strides = array<i64: 2, 2>} : (tensor<4x3x16x16xf32>, tensor<4x8x7x7xf32>) -> tensor<8x3x3x3xf32>
  // CHECK: dlc.max_pool2d_grad %{{.*}}, %{{.*}} {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
  %dm = dlc.max_pool2d_grad %x, %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<4x3x16x16xf32>, tensor<4x3x8x8xf32>) -> tensor<4x3x16x16xf32>
  // CHECK: dlc.avg_pool2d_grad %{{.*}} {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
  %da = dlc.avg_pool2d_grad %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<4x3x8x8xf32>) -> tensor<4x3x16x16xf32>
  return %dx, %dw, %dm, %da : tensor<4x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16x16xf32>
}
