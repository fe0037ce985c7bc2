// The gradient rules of the ops (DifferentiableOpInterface), one split per
// rule: a loss sums a value computed from the parameter @p through the op,
// and the gradient dlc-build-train-step builds for @p is checked.
// RUN: dlc-opt %s -split-input-file --dlc-build-train-step --canonicalize | FileCheck %s

// matmul
// CHECK-LABEL: func.func @train_step
// CHECK: %[[XT:.*]] = dlc.transpose %arg0 [1, 0] : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CHECK: dlc.matmul %[[XT]], %[[G:.*]] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<2x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x2xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<2x3xf32>
    %a = dlc.matmul %x, %p : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// batch_matmul
// CHECK-LABEL: func.func @train_step
// CHECK: %[[XT:.*]] = dlc.transpose %arg0 [0, 2, 1] : (tensor<5x4x2xf32>) -> tensor<5x2x4xf32>
// CHECK: dlc.matmul %[[XT]], %{{.*}} : (tensor<5x2x4xf32>, tensor<5x4x3xf32>) -> tensor<5x2x3xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<5x2x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<5x4x2xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<5x2x3xf32>
    %a = dlc.matmul %x, %p : (tensor<5x4x2xf32>, tensor<5x2x3xf32>) -> tensor<5x4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1, 2>} : (tensor<5x4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// add_broadcast
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G:.*]] = dlc.broadcast_to %{{.*}} : (tensor<1x1xf32>) -> tensor<4x3xf32>
// CHECK: %[[DP:.*]] = dlc.sum %[[G]] {dims = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK: dlc.optimizer_update {{.*}} grads(%[[DP]] : tensor<3xf32>)
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<3xf32>
    %a = dlc.add %x, %p : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// sub_keepdim
// CHECK-LABEL: func.func @train_step
// CHECK: %[[N:.*]] = dlc.neg %{{.*}} : tensor<4x3xf32>
// CHECK: %[[S:.*]] = dlc.sum %[[N]] {dims = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
// CHECK: %[[DP:.*]] = dlc.reshape %[[S]] : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK: grads(%[[DP]] : tensor<4x1xf32>)
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x1xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x1xf32>
    %a = dlc.sub %x, %p : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// div
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Q:.*]] = dlc.div %arg0, %[[P:.*]] :
// CHECK: %[[GQ:.*]] = dlc.mul %{{.*}}, %[[Q]] :
// CHECK: %[[T:.*]] = dlc.div %[[GQ]], %[[P]] :
// CHECK: %[[DP:.*]] = dlc.neg %[[T]] :
// CHECK: grads(%[[DP]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x3xf32>
    %a = dlc.div %x, %p : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// unary
// CHECK-LABEL: func.func @train_step
// CHECK: %[[E:.*]] = dlc.exp %[[P:.*]] :
// CHECK: %[[L:.*]] = dlc.log %[[E]] :
// CHECK: %[[R:.*]] = dlc.sqrt %[[L]] :
// CHECK: dlc.fill
// CHECK: %[[GN:.*]] = dlc.neg %{{.*}} :
// CHECK: %[[TWO:.*]] = dlc.scale %[[R]], 2.000000e+00 :
// CHECK: %[[GS:.*]] = dlc.div %[[GN]], %[[TWO]] :
// CHECK: %[[GL:.*]] = dlc.div %[[GS]], %[[E]] :
// CHECK: %[[GE:.*]] = dlc.mul %[[GL]], %[[E]] :
// CHECK: grads(%[[GE]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x3xf32>
    %a0 = dlc.exp %p : tensor<4x3xf32>
    %a1 = dlc.log %a0 : tensor<4x3xf32>
    %a2 = dlc.sqrt %a1 : tensor<4x3xf32>
    %a = dlc.neg %a2 : tensor<4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// erf: g * 2/sqrt(pi) * exp(-x^2)
// CHECK-LABEL: func.func @train_step
// CHECK: %[[P:.*]] = dlc.param @p
// CHECK: dlc.erf %[[P]] :
// CHECK: %[[SQ:.*]] = dlc.mul %[[P]], %[[P]] :
// CHECK: %[[N:.*]] = dlc.neg %[[SQ]] :
// CHECK: %[[E:.*]] = dlc.exp %[[N]] :
// CHECK: %[[PDF:.*]] = dlc.scale %[[E]], 1.1283791670955126 :
// CHECK: %[[G:.*]] = dlc.mul %{{.*}}, %[[PDF]] :
// CHECK: grads(%[[G]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x3xf32>
    %a = dlc.erf %p : tensor<4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// activations
// CHECK-LABEL: func.func @train_step
// CHECK: %[[T:.*]] = dlc.tanh %[[P:.*]] :
// CHECK: %[[S:.*]] = dlc.sigmoid %[[T]] :
// CHECK: %[[G:.*]] = dlc.gelu %[[S]] {approximate = #dlc.approximate<tanh>} :
// CHECK: %[[D1:.*]] = dlc.activation_grad %[[G]], %{{.*}} {activation = #dlc.activation<relu>}
// CHECK: %[[D2:.*]] = dlc.activation_grad %[[S]], %[[D1]] {activation = #dlc.activation<gelu_tanh>}
// CHECK: %[[D3:.*]] = dlc.activation_grad %[[T]], %[[D2]] {activation = #dlc.activation<sigmoid>}
// CHECK: %[[D4:.*]] = dlc.activation_grad %[[P]], %[[D3]] {activation = #dlc.activation<tanh>}
// CHECK: grads(%[[D4]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x3xf32>
    %a0 = dlc.tanh %p : tensor<4x3xf32>
    %a1 = dlc.sigmoid %a0 : tensor<4x3xf32>
    %a2 = dlc.gelu %a1 {approximate = #dlc.approximate<tanh>} : tensor<4x3xf32>
    %a = dlc.relu %a2 : tensor<4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// softmax
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Y:.*]] = dlc.softmax %[[P:.*]] {dim = 1 : i64}
// CHECK: %[[Z:.*]] = dlc.log_softmax %[[Y]] {dim = 0 : i64}
// CHECK: %[[G:.*]] = dlc.broadcast_to
// log_softmax: g - exp(z) * sum(g, dim)
// CHECK: %[[EZ:.*]] = dlc.exp %[[Z]] :
// CHECK: %[[SG:.*]] = dlc.sum %[[G]] {dims = array<i64: 0>, keepdim = true} : (tensor<4x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[M:.*]] = dlc.mul %[[EZ]], %[[SG]] :
// CHECK: %[[GY:.*]] = dlc.sub %[[G]], %[[M]] :
// softmax: y * (g - sum(g * y, dim))
// CHECK: %[[GYY:.*]] = dlc.mul %[[GY]], %[[Y]] :
// CHECK: %[[S:.*]] = dlc.sum %[[GYY]] {dims = array<i64: 1>, keepdim = true} : (tensor<4x3xf32>) -> tensor<4x1xf32>
// CHECK: %[[D:.*]] = dlc.sub %[[GY]], %[[S]] :
// CHECK: %[[DP:.*]] = dlc.mul %[[Y]], %[[D]] :
// CHECK: grads(%[[DP]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x3xf32>
    %a0 = dlc.softmax %p {dim = 1 : i64} : tensor<4x3xf32>
    %a = dlc.log_softmax %a0 {dim = 0 : i64} : tensor<4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// layer_norm
// CHECK-LABEL: func.func @train_step
// One parameter used as both weight and bias: the gradients add up.
// CHECK: %{{.*}}, %[[DW:.*]], %[[DB:.*]] = dlc.layer_norm_grad %arg0, %[[P:.*]], %{{.*}} :
// CHECK: %[[DP:.*]] = dlc.add %[[DB]], %[[DW]] :
// CHECK: grads(%[[DP]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<3xf32>
    %b = dlc.param @p : tensor<3xf32>
    %a = dlc.layer_norm %x, %p, %b : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// shapes
// CHECK-LABEL: func.func @train_step
// CHECK: %[[T:.*]] = dlc.transpose %{{.*}} [1, 0] : (tensor<6x2xf32>) -> tensor<2x6xf32>
// CHECK: %[[DP:.*]] = dlc.reshape %[[T]] : (tensor<2x6xf32>) -> tensor<4x3xf32>
// CHECK: grads(%[[DP]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x3xf32>
    %a0 = dlc.reshape %p : (tensor<4x3xf32>) -> tensor<2x6xf32>
    %a = dlc.transpose %a0 [1, 0] : (tensor<2x6xf32>) -> tensor<6x2xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1>} : (tensor<6x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// mean
// CHECK-LABEL: func.func @train_step
// CHECK: %[[R:.*]] = dlc.reshape %{{.*}} : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK: %[[B:.*]] = dlc.broadcast_to %[[R]] : (tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK: %[[DP:.*]] = dlc.scale %[[B]], 0.33333333333333331 :
// CHECK: grads(%[[DP]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x3xf32>
    %a = dlc.mean %p {dims = array<i64: 1>, keepdim = false} : (tensor<4x3xf32>) -> tensor<4xf32>
    %l = dlc.sum %a {dims = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}


// -----

// concat: each input's gradient is its window of the result's gradient
// CHECK-LABEL: func.func @train_step
// CHECK: dlc.slice %{{.*}} {offsets = array<i64: 0, 3>, strides = array<i64: 1, 1>} : (tensor<4x5xf32>) -> tensor<4x2xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x2xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x2xf32>
    %c = dlc.concat %x, %p {dim = 1 : i64} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
    %s = dlc.mul %c, %c : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
    %l = dlc.sum %s {dims = array<i64: 0, 1>} : (tensor<4x5xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// slice: the gradient is placed back into zeros at the window
// CHECK-LABEL: func.func @train_step
// CHECK: dlc.slice_grad %{{.*}} {offsets = array<i64: 1, 0>, strides = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<5x3xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<5x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<2x3xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<5x3xf32>
    %s = dlc.slice %p {offsets = array<i64: 1, 0>, strides = array<i64: 2, 1>} : (tensor<5x3xf32>) -> tensor<2x3xf32>
    %m = dlc.mul %s, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %l = dlc.sum %m {dims = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// gather: the table's gradient is the scatter-add of the rows' gradients;
// the integer indices get none
// CHECK-LABEL: func.func @train_step
// CHECK: dlc.gather_grad %{{.*}}, %arg0 : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<10x4xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<10x4xf32> {init = #dlc.init<ones>}
  func.func @loss(%ids: tensor<2x3xi64> {dlc.name = "ids"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<10x4xf32>
    %e = dlc.gather %p, %ids : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    %s = dlc.mul %e, %e : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %l = dlc.sum %s {dims = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// gather_elements: the input's gradient is the scatter-add along the axis;
// the integer indices get none.
// CHECK-LABEL: func.func @train_step
// CHECK: dlc.gather_elements_grad %{{.*}}, %arg0 {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x5xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<2x5xf32> {init = #dlc.init<ones>}
  func.func @loss(%idx: tensor<2x3xi64> {dlc.name = "idx"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<2x5xf32>
    %e = dlc.gather_elements %p, %idx {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
    %s = dlc.mul %e, %e : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %l = dlc.sum %s {dims = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// where: each choice gets the gradient where it was chosen, summed back over
// its broadcast dimensions; the mask gets none
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Z:.*]] = dlc.fill 0.000000e+00 : tensor<f32>
// CHECK: dlc.where %{{.*}}, %[[Z]], %{{.*}} : (tensor<4x3xf32>, tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<4x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%m: tensor<4x3xf32> {dlc.name = "m"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<4x3xf32>
    %z = dlc.fill 5.0 : tensor<f32>
    %w = dlc.where %m, %z, %p : (tensor<4x3xf32>, tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %l = dlc.sum %w {dims = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// slice_grad (a zero Pad): the gradient is the window of the result's
// gradient
// CHECK-LABEL: func.func @train_step
// CHECK: dlc.slice %{{.*}} {offsets = array<i64: 1, 2>, strides = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @p : tensor<2x3xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<4x6xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %p = dlc.param @p : tensor<2x3xf32>
    %g = dlc.slice_grad %p {offsets = array<i64: 1, 2>, strides = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<4x6xf32>
    %m = dlc.mul %g, %x : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %l = dlc.sum %m {dims = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// attention: the probabilities are recomputed (scale, mask, softmax), then
// dV = P^T dO, dP = dO V^T, dS = P * (dP - sum(dP * P)), dQ = scale dS K,
// dK = scale dS^T Q, dMask = dS summed over the batch.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[P:.*]] = dlc.softmax %{{.*}} {dim = 2 : i64} : tensor<2x3x5xf32>
// CHECK: %[[PT:.*]] = dlc.transpose %[[P]] [0, 2, 1] : (tensor<2x3x5xf32>) -> tensor<2x5x3xf32>
// CHECK: %[[DV:.*]] = dlc.matmul %[[PT]], %{{.*}} : (tensor<2x5x3xf32>, tensor<2x3x6xf32>) -> tensor<2x5x6xf32>
// CHECK: %[[DP:.*]] = dlc.matmul %{{.*}}, %{{.*}} : (tensor<2x3x6xf32>, tensor<2x6x5xf32>) -> tensor<2x3x5xf32>
// CHECK: %[[ROW:.*]] = dlc.sum %{{.*}} {dims = array<i64: 2>, keepdim = true} : (tensor<2x3x5xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[DM:.*]] = dlc.sum %{{.*}} {dims = array<i64: 0>} : (tensor<2x3x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[DQ:.*]] = dlc.matmul %{{.*}}, %{{.*}} : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[DK:.*]] = dlc.matmul %{{.*}}, %{{.*}} : (tensor<2x5x3xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
// CHECK: dlc.optimizer_update {{.*}} grads(%[[DQ]], %[[DK]], %[[DV]], %[[DM]] :
module attributes {dlc.optimizer = {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov = false}} {
  dlc.parameter @q : tensor<2x3x4xf32> {init = #dlc.init<ones>}
  dlc.parameter @k : tensor<2x5x4xf32> {init = #dlc.init<ones>}
  dlc.parameter @v : tensor<2x5x6xf32> {init = #dlc.init<ones>}
  dlc.parameter @m : tensor<3x5xf32> {init = #dlc.init<ones>}
  func.func @loss(%x: tensor<2x3x6xf32> {dlc.name = "x"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.loss} {
    %q = dlc.param @q : tensor<2x3x4xf32>
    %k = dlc.param @k : tensor<2x5x4xf32>
    %v = dlc.param @v : tensor<2x5x6xf32>
    %m = dlc.param @m : tensor<3x5xf32>
    %o = dlc.attention %q, %k, %v, %m {scale = 0.5 : f64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x6xf32>, tensor<3x5xf32>) -> tensor<2x3x6xf32>
    %a = dlc.mul %o, %x : (tensor<2x3x6xf32>, tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
    %l = dlc.sum %a {dims = array<i64: 0, 1, 2>} : (tensor<2x3x6xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
