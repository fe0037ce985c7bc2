// RUN: dlc-opt %s --split-input-file --dlc-build-train-step --dlc-insert-gradient-allreduce | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-build-train-step --dlc-insert-gradient-allreduce --dlc-insert-gradient-allreduce | FileCheck %s --check-prefix=TWICE

// A mean cross entropy divides by the mean over the ranks of its counted
// rows, so that ranks that ignore different numbers of rows still train on
// the global batch's mean: the labels are counted (ignore_index kept) and
// averaged at the start of the step, and the loss and its gradient both
// take that count. The gradients and the loss are reduced as for any loss.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[Y:[^:]*]]: tensor<4xi64>
// CHECK: %[[C:.*]] = dlc.count_labels %[[Y]] {ignore_index = -1 : i64} : (tensor<4xi64>) -> tensor<f32>
// CHECK-NEXT: %[[G:.*]] = dlc.all_reduce %[[C]] : tensor<f32>
// CHECK: %[[L:.*]] = dlc.cross_entropy %{{.*}}, %[[Y]] count %[[G]] {ignore_index = -1 : i64}
// CHECK: dlc.cross_entropy_grad %{{.*}}, %[[Y]], %{{.*}} count %[[G]] {ignore_index = -1 : i64}
// CHECK: dlc.all_reduce %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3x5xf32>
// CHECK: dlc.optimizer_update
// CHECK: dlc.all_reduce %[[L]] : tensor<f32>

// Running it again adds no second count.
// TWICE-COUNT-1: dlc.count_labels
// TWICE-NOT: dlc.count_labels
// TWICE: -----
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @fc.weight : tensor<3x5xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  dlc.parameter @fc.bias : tensor<3xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  func.func @loss(%x: tensor<4x5xf32> {dlc.name = "x"}, %y: tensor<4xi64> {dlc.name = "y"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w = dlc.param @fc.weight : tensor<3x5xf32>
    %b = dlc.param @fc.bias : tensor<3xf32>
    %z = dlc.linear %x, %w, %b : (tensor<4x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %l = dlc.cross_entropy %z, %y {ignore_index = -1 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A summed cross entropy needs no count: its sum over the ranks is the
// global one.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: dlc.count_labels
// CHECK: dlc.cross_entropy %{{.*}}, %{{[^ ]*}} {reduction = #dlc.reduction<sum>}
// CHECK-NOT: count
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @fc.weight : tensor<5x3xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  func.func @loss(%x: tensor<4x5xf32> {dlc.name = "x"}, %y: tensor<4xi64> {dlc.name = "y"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w = dlc.param @fc.weight : tensor<5x3xf32>
    %z = dlc.matmul %x, %w : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
    %l = dlc.cross_entropy %z, %y {reduction = #dlc.reduction<sum>} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
