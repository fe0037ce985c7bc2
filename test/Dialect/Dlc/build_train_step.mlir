// RUN: dlc-opt %s -split-input-file --dlc-build-train-step | FileCheck %s
// RUN: dlc-opt %s -split-input-file --dlc-build-train-step="optimizer=adamw lr=0.5" | FileCheck %s --check-prefix=ADAMW
// RUN: dlc-opt %s -split-input-file --dlc-build-train-step="loss=cross_entropy optimizer=adam" | FileCheck %s --check-prefix=CE

// A value used twice (%h in h * h): the gradients of both uses add up. The
// fused ReLU of fc1 is split so that its pre-activation is computed once.
// SGD with momentum gets one state tensor per parameter and the step count,
// zero-initialised, after the weights.

// CHECK: dlc.parameter @fc1.weight
// CHECK: dlc.parameter @fc2.weight
// CHECK-NEXT: dlc.parameter @optimizer.step : tensor<f32> {init = #dlc.init<zeros>, role = #dlc.role<optimizer_state>}
// CHECK-NEXT: dlc.parameter @optimizer.fc1.weight.momentum_buffer : tensor<8x3xf32> {init = #dlc.init<zeros>, role = #dlc.role<optimizer_state>}
// CHECK-NEXT: dlc.parameter @optimizer.fc2.weight.momentum_buffer : tensor<4x8xf32> {init = #dlc.init<zeros>, role = #dlc.role<optimizer_state>}
// CHECK: func.func @forward
// CHECK: func.func @loss
// CHECK-LABEL: func.func @train_step(%arg0: tensor<2x3xf32> {dlc.name = "x"}, %arg1: tensor<2x4xf32> {dlc.name = "t"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.entry, dlc.train_step}
// CHECK: %[[W1:.*]] = dlc.param @fc1.weight
// CHECK: %[[Z:.*]] = dlc.linear %arg0, %[[W1]] : (tensor<2x3xf32>, tensor<8x3xf32>) -> tensor<2x8xf32>
// CHECK: %[[A:.*]] = dlc.relu %[[Z]]
// CHECK: %[[H:.*]] = dlc.linear %[[A]], %{{.*}} :
// CHECK: %[[S:.*]] = dlc.mul %[[H]], %[[H]]
// CHECK: %[[L:.*]] = dlc.mse_loss %[[S]], %arg1
// CHECK: %[[ONE:.*]] = dlc.fill 1.000000e+00 {dlc.grad_seed} : tensor<f32>
// CHECK: %[[GS:.*]] = dlc.scale %{{.*}}, 2.500000e-01
// CHECK: %[[G1:.*]] = dlc.mul %[[GS]], %[[H]]
// CHECK: %[[G2:.*]] = dlc.mul %[[GS]], %[[H]]
// CHECK: %[[GH:.*]] = dlc.add %[[G1]], %[[G2]]
// CHECK: dlc.activation_grad %[[Z]], %{{.*}} {activation = #dlc.activation<relu>}
// CHECK: %[[STEP:.*]] = dlc.param @optimizer.step
// CHECK: %[[U:.*]]:5 = dlc.optimizer_update step(%[[STEP]] : tensor<f32>) params({{.*}} : tensor<8x3xf32>, tensor<4x8xf32>) grads({{.*}}) states({{.*}} : tensor<8x3xf32>, tensor<4x8xf32>) config {dampening = 0.000000e+00 : f64, kind = #dlc.optimizer<sgd>, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT: dlc.assign @fc1.weight, %[[U]]#1
// CHECK-NEXT: dlc.assign @fc2.weight, %[[U]]#2
// CHECK-NEXT: dlc.assign @optimizer.fc1.weight.momentum_buffer, %[[U]]#3
// CHECK-NEXT: dlc.assign @optimizer.fc2.weight.momentum_buffer, %[[U]]#4
// CHECK-NEXT: dlc.assign @optimizer.step, %[[U]]#0
// CHECK-NEXT: return %[[L]]

// Another optimizer on the command line starts from its PyTorch defaults.
// ADAMW: dlc.parameter @optimizer.step
// ADAMW-NEXT: dlc.parameter @optimizer.fc1.weight.exp_avg :
// ADAMW-NEXT: dlc.parameter @optimizer.fc2.weight.exp_avg :
// ADAMW-NEXT: dlc.parameter @optimizer.fc1.weight.exp_avg_sq :
// ADAMW-NEXT: dlc.parameter @optimizer.fc2.weight.exp_avg_sq :
// ADAMW: dlc.optimizer_update {{.*}} config {amsgrad = false, betas = [9.000000e-01, 0.99899999999999999], eps = 1.000000e-08 : f64, kind = #dlc.optimizer<adamw>, lr = 5.000000e-01 : f64, weight_decay = 1.000000e-02 : f64}

// loss=cross_entropy replaces the model's loss: the forward output against
// a new label input y of class indices.
// CE-LABEL: func.func @train_step(%arg0: tensor<2x3xf32> {dlc.name = "x"}, %arg1: tensor<2xi64> {dlc.name = "y"})
// CE: dlc.cross_entropy %{{.*}}, %arg1 : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<f32>
// CE: dlc.cross_entropy_grad
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @fc1.weight : tensor<8x3xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  dlc.parameter @fc2.weight : tensor<4x8xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  func.func @forward(%x: tensor<2x3xf32> {dlc.name = "x"}) -> (tensor<2x4xf32> {dlc.name = "h"}) attributes {dlc.entry} {
    %w1 = dlc.param @fc1.weight : tensor<8x3xf32>
    %a = dlc.linear %x, %w1 {activation = #dlc.activation<relu>} : (tensor<2x3xf32>, tensor<8x3xf32>) -> tensor<2x8xf32>
    %w2 = dlc.param @fc2.weight : tensor<4x8xf32>
    %h = dlc.linear %a, %w2 : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
    return %h : tensor<2x4xf32>
  }
  func.func @loss(%x: tensor<2x3xf32> {dlc.name = "x"}, %t: tensor<2x4xf32> {dlc.name = "t"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w1 = dlc.param @fc1.weight : tensor<8x3xf32>
    %a = dlc.linear %x, %w1 {activation = #dlc.activation<relu>} : (tensor<2x3xf32>, tensor<8x3xf32>) -> tensor<2x8xf32>
    %w2 = dlc.param @fc2.weight : tensor<4x8xf32>
    %h = dlc.linear %a, %w2 : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
    %s = dlc.mul %h, %h : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %l = dlc.mse_loss %s, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
