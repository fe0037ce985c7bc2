// The gradient rules of the convolution, pooling and batch-norm ops, one
// split per rule, as in gradients.mlir: a loss sums a value computed from
// the parameter @p through the op.
// RUN: dlc-opt %s -split-input-file --dlc-build-train-step --canonicalize | FileCheck %s

// conv2d: the weight gradient is conv2d_grad_weight of the input and the
// result's gradient, with the convolution's attributes; the bias gradient
// sums over N, OH and OW.
// CHECK-LABEL: func.func @train_step
// CHECK: dlc.conv2d_grad_weight %arg0, %{{.*}} {padding = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x9x9xf32>, tensor<2x4x4x4xf32>) -> tensor<4x3x3x3xf32>
// CHECK: dlc.sum %{{.*}} {dims = array<i64: 0, 2, 3>} : (tensor<2x4x4x4xf32>) -> tensor<4xf32>
// CHECK: dlc.optimizer_update
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x3x3x3xf32> {init = #dlc.init<ones>}
  dlc.parameter @b : tensor<4xf32> {init = #dlc.init<zeros>}
  func.func @loss(%x: tensor<2x3x9x9xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x3x3x3xf32>
    %b = dlc.param @b : tensor<4xf32>
    %c = dlc.conv2d %x, %p, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>} : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
    %l = dlc.sum %c {dims = array<i64: 0, 1, 2, 3>} : (tensor<2x4x4x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// conv2d on a value that depends on a parameter: the input gradient is
// conv2d_grad_input; a fused activation is split off first.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Z:.*]] = dlc.conv2d %{{.*}}, %{{.*}} {groups = 2 : i64}
// CHECK: %[[A:.*]] = dlc.relu %[[Z]]
// CHECK: %[[DZ:.*]] = dlc.activation_grad %[[Z]], %{{.*}} {activation = #dlc.activation<relu>}
// CHECK: dlc.conv2d_grad_input %[[DZ]], %{{.*}} {groups = 2 : i64} : (tensor<2x4x7x7xf32>, tensor<4x1x3x3xf32>) -> tensor<2x2x9x9xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<2x9x9xf32> {init = #dlc.init<ones>}
  dlc.parameter @w : tensor<4x1x3x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<2x2x9x9xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<2x9x9xf32>
    %w = dlc.param @w : tensor<4x1x3x3xf32>
    %h = dlc.mul %x, %p : (tensor<2x2x9x9xf32>, tensor<2x9x9xf32>) -> tensor<2x2x9x9xf32>
    %c = dlc.conv2d %h, %w {groups = 2, activation = #dlc.activation<relu>} : (tensor<2x2x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x7x7xf32>
    %l = dlc.sum %c {dims = array<i64: 0, 1, 2, 3>} : (tensor<2x4x7x7xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// max_pool2d: max_pool2d_grad of the pool's input and the gradient.
// CHECK-LABEL: func.func @train_step
// CHECK: dlc.max_pool2d_grad %{{.*}}, %{{.*}} {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<1x2x4x4xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<1x2x4x4xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<1x2x4x4xf32>
    %h = dlc.mul %x, %p : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %m = dlc.max_pool2d %h {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
    %l = dlc.sum %m {dims = array<i64: 0, 1, 2, 3>} : (tensor<1x2x2x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// avg_pool2d: avg_pool2d_grad with the pool's attributes.
// CHECK-LABEL: func.func @train_step
// CHECK: dlc.avg_pool2d_grad %{{.*}} {count_include_pad = true, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<1x2x4x4xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<1x2x4x4xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<1x2x4x4xf32>
    %h = dlc.mul %x, %p : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %m = dlc.avg_pool2d %h {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %l = dlc.sum %m {dims = array<i64: 0, 1, 2, 3>} : (tensor<1x2x4x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// batch_norm: gradients for the input (g * scale / sqrt(var + eps), per
// channel), the scale and the bias (sums over N, H, W); the running mean
// and variance get none, so only @scale and @bias are updated and the
// statistics have no optimizer state (SGD with momentum: two buffers).
// CHECK-NOT: optimizer.mean
// CHECK-NOT: optimizer.var
// CHECK-LABEL: func.func @train_step
// CHECK: %[[D:.*]]:5 = dlc.optimizer_update step(%{{.*}} : tensor<f32>) params(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>) grads(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>) states(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>)
// CHECK-DAG: dlc.assign @scale, %[[D]]#1
// CHECK-DAG: dlc.assign @bias, %[[D]]#2
// CHECK-NOT: dlc.assign @mean
// CHECK-NOT: dlc.assign @var
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.9 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @scale : tensor<3xf32> {init = #dlc.init<ones>}
  dlc.parameter @bias : tensor<3xf32> {init = #dlc.init<zeros>}
  dlc.parameter @mean : tensor<3xf32> {init = #dlc.init<zeros>}
  dlc.parameter @var : tensor<3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<2x3x4x4xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %s = dlc.param @scale : tensor<3xf32>
    %b = dlc.param @bias : tensor<3xf32>
    %m = dlc.param @mean : tensor<3xf32>
    %v = dlc.param @var : tensor<3xf32>
    %y = dlc.batch_norm %x, %s, %b, %m, %v : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
    %sq = dlc.mul %y, %y : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
    %l = dlc.sum %sq {dims = array<i64: 0, 1, 2, 3>} : (tensor<2x3x4x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// conv2d_grad_input (ONNX's ConvTranspose): the gradient of its `grad`
// operand is the convolution of the result's gradient, that of the weight
// conv2d_grad_weight with the result's gradient as the input, both with the
// op's attributes.
// CHECK-LABEL: func.func @train_step
// CHECK-DAG: %[[DX:.*]] = dlc.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>, tensor<4x3x2x2xf32>) -> tensor<2x4x4x4xf32>
// CHECK-DAG: %[[DW:.*]] = dlc.conv2d_grad_weight %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>, tensor<2x4x4x4xf32>) -> tensor<4x3x2x2xf32>
// CHECK: dlc.optimizer_update {{.*}} grads(%[[DX]], %[[DW]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @g : tensor<2x4x4x4xf32> {init = #dlc.init<ones>}
  dlc.parameter @p : tensor<4x3x2x2xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<2x3x8x8xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %g = dlc.param @g : tensor<2x4x4x4xf32>
    %p = dlc.param @p : tensor<4x3x2x2xf32>
    %c = dlc.conv2d_grad_input %g, %p {strides = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<4x3x2x2xf32>) -> tensor<2x3x8x8xf32>
    %m = dlc.mul %c, %x : (tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
    %l = dlc.sum %m {dims = array<i64: 0, 1, 2, 3>} : (tensor<2x3x8x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
