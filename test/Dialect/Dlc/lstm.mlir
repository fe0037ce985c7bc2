// RUN: dlc-opt %s -split-input-file | dlc-opt -split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: dlc-opt %s -split-input-file --dlc-build-train-step --canonicalize | FileCheck %s
// dlc.lstm prints and parses back, and its gradient rule: one
// dlc.lstm_grad for the steps (in the layer's direction), then W_hh's
// gradient as one GEMM over every step of the pre-activation gradients
// against the states the steps started from (h0, then y shifted by one).

// ROUND-LABEL: func.func @loss
// ROUND: dlc.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)

// CHECK-LABEL: func.func @train_step
// CHECK: %[[P:.*]] = dlc.param @w_hh
// CHECK: %[[Y:.*]], %[[C:.*]], %[[G:.*]] = dlc.lstm %arg0, %[[P]], %[[Z:.*]], %[[Z]]
// CHECK: %[[DY:.*]] = dlc.broadcast_to
// CHECK: %[[DG:.*]], %{{.*}}, %{{.*}} = dlc.lstm_grad %[[DY]], %[[ZC:.*]], %[[P]], %[[Z]], %[[C]], %[[G]] :
// CHECK-NOT: reverse
// CHECK: %[[H0:.*]] = dlc.reshape %[[Z]] : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
// CHECK: %[[HEAD:.*]] = dlc.slice %[[Y]] {offsets = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<3x2x4xf32>) -> tensor<2x2x4xf32>
// CHECK: %[[PREV:.*]] = dlc.concat %[[H0]], %[[HEAD]] {dim = 0 : i64}
// CHECK: %[[DG2:.*]] = dlc.reshape %[[DG]] : (tensor<3x2x16xf32>) -> tensor<6x16xf32>
// CHECK: %[[PREV2:.*]] = dlc.reshape %[[PREV]] : (tensor<3x2x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[DGT:.*]] = dlc.transpose %[[DG2]] [1, 0]
// CHECK: %[[DW:.*]] = dlc.matmul %[[DGT]], %[[PREV2]] : (tensor<16x6xf32>, tensor<6x4xf32>) -> tensor<16x4xf32>
// CHECK: dlc.optimizer_update {{.*}}%[[DW]]
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @w_hh : tensor<16x4xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<3x2x16xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w = dlc.param @w_hh : tensor<16x4xf32>
    %z = dlc.fill 0.0 : tensor<2x4xf32>
    %y, %c, %g = dlc.lstm %x, %w, %z, %z : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)
    %l = dlc.sum %y {dims = array<i64: 0, 1, 2>} : (tensor<3x2x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A reverse layer whose loss reads the last cell state: the states the
// steps started from are y shifted down, then h0; c's gradient reaches
// dlc.lstm_grad.
// ROUND-LABEL: func.func @loss
// ROUND: dlc.lstm {{.*}} {reverse}
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Y:.*]], %[[C:.*]], %[[G:.*]] = dlc.lstm {{.*}} {reverse}
// CHECK: %[[DC:.*]] = dlc.slice_grad
// CHECK: dlc.lstm_grad %{{.*}}, %[[DC]], {{.*}} {reverse}
// CHECK: %[[TAIL:.*]] = dlc.slice %[[Y]] {offsets = array<i64: 1, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<3x2x4xf32>) -> tensor<2x2x4xf32>
// CHECK: dlc.concat %[[TAIL]], %{{.*}} {dim = 0 : i64}
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @w_hh : tensor<16x4xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<3x2x16xf32> {dlc.name = "x"}, %h: tensor<2x4xf32> {dlc.name = "h"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w = dlc.param @w_hh : tensor<16x4xf32>
    %y, %c, %g = dlc.lstm %x, %w, %h, %h {reverse} : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)
    %last = dlc.slice %c {offsets = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<3x2x4xf32>) -> tensor<1x2x4xf32>
    %l = dlc.sum %last {dims = array<i64: 0, 1, 2>} : (tensor<1x2x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
