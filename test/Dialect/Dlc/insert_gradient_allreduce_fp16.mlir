// RUN: dlc-opt %s --verify-diagnostics --dlc-build-train-step --dlc-insert-loss-scaling --dlc-insert-gradient-allreduce

// fp16 loss scaling checks one rank's gradients for overflow: refused.
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @w : tensor<4x3xf32> {bound = 0.5 : f64, init = #dlc.init<uniform>}
  // expected-error @+2 {{fp16 loss scaling cannot run data-parallel yet}}
  // expected-note @+1 {{train with --precision=bf16 or fp32}}
  func.func @loss(%x: tensor<2x3xf32> {dlc.name = "x"}, %t: tensor<2x4xf32> {dlc.name = "y"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %w = dlc.param @w : tensor<4x3xf32>
    %h = dlc.linear %x, %w : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
    %l = dlc.mse_loss %h, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
