// RUN: dlc-opt %s -split-input-file | dlc-opt -split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: dlc-opt %s -split-input-file --dlc-build-train-step --canonicalize | FileCheck %s
// dlc.gru prints and parses back, and its gradient rule: one dlc.gru_grad
// for the steps, the projection's gradient straight from it, and W_hh's
// and b_hh's as one GEMM and one sum over every step of the recurrent
// pre-activation gradients (against h0, then y shifted by one).

// ROUND-LABEL: func.func @loss
// ROUND: dlc.gru %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3x2x12xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x12xf32>)

// CHECK-LABEL: func.func @train_step
// CHECK: %[[W:.*]] = dlc.param @w_hh
// CHECK: %[[B:.*]] = dlc.param @b_hh
// CHECK: %[[Y:.*]], %[[G:.*]] = dlc.gru %arg0, %[[W]], %[[B]], %[[Z:.*]] :
// CHECK: %[[DP:.*]], %[[DG:.*]], %{{.*}} = dlc.gru_grad %{{.*}}, %[[W]], %[[Z]], %arg0, %[[Y]], %[[G]] :
// CHECK: %[[PREV:.*]] = dlc.concat
// CHECK: %[[DG2:.*]] = dlc.reshape %[[DG]] : (tensor<3x2x12xf32>) -> tensor<6x12xf32>
// CHECK: %[[PREV2:.*]] = dlc.reshape %[[PREV]] : (tensor<3x2x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[DGT:.*]] = dlc.transpose %[[DG2]] [1, 0]
// CHECK: %[[DW:.*]] = dlc.matmul %[[DGT]], %[[PREV2]] : (tensor<12x6xf32>, tensor<6x4xf32>) -> tensor<12x4xf32>
// CHECK: %[[DB:.*]] = dlc.sum %[[DG2]] {dims = array<i64: 0>} : (tensor<6x12xf32>) -> tensor<12xf32>
// CHECK: dlc.optimizer_update {{.*}} grads(%[[DW]], %[[DB]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @w_hh : tensor<12x4xf32> {init = #dlc.init<ones>}
  dlc.parameter @b_hh : tensor<12xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<3x2x12xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w = dlc.param @w_hh : tensor<12x4xf32>
    %b = dlc.param @b_hh : tensor<12xf32>
    %z = dlc.fill 0.0 : tensor<2x4xf32>
    %y, %g = dlc.gru %x, %w, %b, %z : (tensor<3x2x12xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x12xf32>)
    %l = dlc.sum %y {dims = array<i64: 0, 1, 2>} : (tensor<3x2x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
