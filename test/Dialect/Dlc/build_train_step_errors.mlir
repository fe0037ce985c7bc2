// RUN: dlc-opt %s -split-input-file -verify-diagnostics --dlc-build-train-step

// expected-error @below {{the model has no loss to train: add a 'loss' line to the model, or pass --loss mse|cross_entropy}}
module attributes {dlc.optimizer = {kind = #dlc.optimizer<adam>}} {
  dlc.parameter @w : tensor<2x2xf32> {init = #dlc.init<ones>}
  func.func @forward(%x: tensor<2x2xf32>) -> tensor<2x2xf32> attributes {dlc.entry} {
    %w = dlc.param @w : tensor<2x2xf32>
    %y = dlc.matmul %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    return %y : tensor<2x2xf32>
  }
}

// -----

// expected-error @below {{the model has no optimizer: add an 'optim' line to the model, or pass --optimizer sgd|adam|adamw}}
module {
  dlc.parameter @w : tensor<2x2xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<2x2xf32>) -> tensor<f32> attributes {dlc.loss} {
    %w = dlc.param @w : tensor<2x2xf32>
    %y = dlc.matmul %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %l = dlc.sum %y {dims = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// The optimizer's kind is a #dlc.optimizer, not a string.
// expected-error @below {{the optimizer's kind must be a #dlc.optimizer (sgd, adam or adamw), got "adam"}}
module attributes {dlc.optimizer = {kind = "adam"}} {
  dlc.parameter @w : tensor<2x2xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<2x2xf32>) -> tensor<f32> attributes {dlc.loss} {
    %w = dlc.param @w : tensor<2x2xf32>
    %l = dlc.mse_loss %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {dlc.optimizer = {kind = #dlc.optimizer<adam>}} {
  dlc.parameter @w : tensor<2x2xf32> {init = #dlc.init<ones>}
  // expected-error @below {{the loss does not depend on any parameter}}
  func.func @loss(%x: tensor<2x2xf32>) -> tensor<f32> attributes {dlc.loss} {
    %l = dlc.sum %x {dims = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {dlc.optimizer = {kind = #dlc.optimizer<adam>}} {
  dlc.parameter @w : tensor<2x2xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<2x2xf32>) -> tensor<f32> attributes {dlc.loss} {
    %w = dlc.param @w : tensor<2x2xf32>
    // expected-error @below {{'dlc.activation_grad' op has no gradient rule, but lies between a parameter and the loss}}
    %g = dlc.activation_grad %w, %x {activation = #dlc.activation<relu>} : tensor<2x2xf32>
    %l = dlc.sum %g {dims = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @below {{nesterov needs momentum > 0 and dampening = 0}}
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 0.1 : f64, nesterov = true}} {
  dlc.parameter @w : tensor<2x2xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<2x2xf32>) -> tensor<f32> attributes {dlc.loss} {
    %w = dlc.param @w : tensor<2x2xf32>
    %l = dlc.mse_loss %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @below {{the optimizer state 'optimizer.step' clashes with a symbol of the model}}
module attributes {dlc.optimizer = {kind = #dlc.optimizer<adam>}} {
  dlc.parameter @w : tensor<2x2xf32> {init = #dlc.init<ones>}
  dlc.parameter @optimizer.step : tensor<f32> {init = #dlc.init<zeros>}
  func.func @loss(%x: tensor<2x2xf32>) -> tensor<f32> attributes {dlc.loss} {
    %w = dlc.param @w : tensor<2x2xf32>
    %l = dlc.mse_loss %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
