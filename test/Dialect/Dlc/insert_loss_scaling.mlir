// RUN: dlc-opt %s --dlc-build-train-step --dlc-insert-loss-scaling=init-scale=1024 | FileCheck %s

// The backward pass starts from the loss scale (its state, or 1024 while
// the state is zero); the fused update gets the scaler and returns the new
// scale, growth tracker and whether it skipped; the scaler's state is
// optimizer state, and train_step reports `skipped`.
// CHECK: dlc.parameter @optimizer.loss_scale : tensor<f32> {init = #dlc.init<zeros>, role = #dlc.role<optimizer_state>}
// CHECK: dlc.parameter @optimizer.growth_tracker : tensor<f32> {init = #dlc.init<zeros>, role = #dlc.role<optimizer_state>}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {dlc.name = "loss"}, tensor<i32> {dlc.name = "skipped"})
// CHECK: %[[S:.*]] = dlc.param @optimizer.loss_scale
// CHECK: %[[SEED:.*]] = dlc.loss_scale %[[S]] {dlc.grad_seed, init = 1.024000e+03 : f64} : tensor<f32>
// CHECK-NOT: dlc.fill
// CHECK: %[[T:.*]] = dlc.param @optimizer.growth_tracker
// CHECK: %[[U:.*]]:6 = dlc.optimizer_update {{.*}} scaler(%[[S]], %[[T]] : tensor<f32>, tensor<f32>) config {{{.*}}init_scale = 1.024000e+03 : f64
// CHECK: dlc.assign @optimizer.loss_scale, %[[U]]#3
// CHECK: dlc.assign @optimizer.growth_tracker, %[[U]]#4
// CHECK: return %{{.*}}, %[[U]]#5 : tensor<f32>, tensor<i32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.9 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @w : tensor<4x3xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  func.func @loss(%x: tensor<2x3xf32> {dlc.name = "x"}, %t: tensor<2x4xf32> {dlc.name = "t"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w = dlc.param @w : tensor<4x3xf32>
    %h = dlc.linear %x, %w : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
    %l = dlc.mse_loss %h, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
