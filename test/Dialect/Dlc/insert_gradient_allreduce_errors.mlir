// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-build-train-step --dlc-insert-gradient-allreduce
// RUN: not dlc-opt %s --split-input-file --dlc-build-train-step --dlc-insert-gradient-allreduce=bucket-bytes=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: bucket-bytes must be positive, not 0

// A loss that does not say whether it is a mean or a sum over the batch.
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @w : tensor<4x3xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  func.func @loss(%x: tensor<2x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w = dlc.param @w : tensor<4x3xf32>
    %h = dlc.linear %x, %w : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
    // expected-error @+2 {{computes the loss, but data parallelism needs to know whether it is a mean or a sum over the batch}}
    // expected-note @+1 {{end the loss function with a loss op}}
    %l = dlc.sum %h {dims = array<i64: 0, 1>} : (tensor<2x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A gradient that is not fp32 (a bf16 parameter).
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @w : tensor<4x3xbf16> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  // expected-error @+1 {{reduces a gradient of type 'tensor<4x3xbf16>' over the ranks: data parallelism takes fp32 gradients}}
  func.func @loss(%x: tensor<2x3xbf16> {dlc.name = "x"}, %t: tensor<2x4xbf16> {dlc.name = "y"}) -> (tensor<bf16> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w = dlc.param @w : tensor<4x3xbf16>
    %h = dlc.linear %x, %w : (tensor<2x3xbf16>, tensor<4x3xbf16>) -> tensor<2x4xbf16>
    %l = dlc.mse_loss %h, %t : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<bf16>
    return %l : tensor<bf16>
  }
}
