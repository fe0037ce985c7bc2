// RUN: dlc-opt %s --dlc-build-train-step --dlc-insert-gradient-allreduce | FileCheck %s
// RUN: dlc-opt %s --dlc-build-train-step --dlc-insert-gradient-allreduce=bucket-bytes=64 | FileCheck %s --check-prefix=SMALL
// RUN: dlc-opt %s --dlc-build-train-step --dlc-insert-gradient-allreduce --dlc-insert-gradient-allreduce | FileCheck %s --check-prefix=TWICE

// One bucket (25 MiB): the four gradients in reverse parameter order, right
// after the last of them is computed; the update reads the reduced ones;
// the loss returned is reduced too; a mean loss averages (the default
// reduction, not printed).
// CHECK-LABEL: func.func @train_step
// CHECK: %[[L:.*]] = dlc.mse_loss
// CHECK: %[[R:.*]]:4 = dlc.all_reduce %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8x3xf32>
// CHECK-NEXT: dlc.param @fc1.weight
// CHECK: dlc.optimizer_update {{.*}} grads(%[[R]]#3, %[[R]]#2, %[[R]]#1, %[[R]]#0 :
// CHECK: %[[LR:.*]] = dlc.all_reduce %[[L]] : tensor<f32>
// CHECK-NEXT: return %[[LR]]

// Buckets of at most 64 bytes: fc2's bias (8 bytes) and weight (64) do not
// fit together; fc1's weight (96) is a bucket of its own.
// SMALL-LABEL: func.func @train_step
// SMALL-COUNT-4: dlc.all_reduce %{{[0-9]+}} : tensor
// SMALL: dlc.optimizer_update
// SMALL: dlc.all_reduce %{{[0-9]+}} : tensor<f32>
// SMALL-NEXT: return

// Running it again changes nothing.
// TWICE-COUNT-2: dlc.all_reduce
// TWICE-NOT: dlc.all_reduce
module attributes {dlc.optimizer = {kind = #dlc.optimizer<adam>, lr = 1.0e-03 : f64, betas = [0.9, 0.999], eps = 1.0e-08 : f64, weight_decay = 0.0 : f64, amsgrad = false}} {
  dlc.parameter @fc1.weight : tensor<8x3xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  dlc.parameter @fc1.bias : tensor<8xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  dlc.parameter @fc2.weight : tensor<2x8xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  dlc.parameter @fc2.bias : tensor<2xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}, %t: tensor<4x2xf32> {dlc.name = "y"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w1 = dlc.param @fc1.weight : tensor<8x3xf32>
    %b1 = dlc.param @fc1.bias : tensor<8xf32>
    %w2 = dlc.param @fc2.weight : tensor<2x8xf32>
    %b2 = dlc.param @fc2.bias : tensor<2xf32>
    %h = dlc.linear %x, %w1, %b1 {activation = #dlc.activation<relu>} : (tensor<4x3xf32>, tensor<8x3xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %y = dlc.linear %h, %w2, %b2 : (tensor<4x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    %l = dlc.mse_loss %y, %t : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
