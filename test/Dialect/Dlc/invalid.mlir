// RUN: dlc-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the dlc ops: each names the offending shapes or types.

func.func @linear_bad_in_features(%x: tensor<4x15xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dlc.linear' op weight [8, 16] expects 16 input features but the input [4, 15] has 15}}
  %0 = dlc.linear %x, %w : (tensor<4x15xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @linear_bad_bias(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<7xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{bias must be [8], got [7]}}
  %0 = dlc.linear %x, %w, %b : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<7xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// An activation outside the closed set is a parse error at its spelling.
func.func @linear_bad_activation(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{expected ::mlir::dlc::Activation to be one of: none, relu, gelu, gelu_tanh, tanh, sigmoid}}
  // expected-error @+1 {{failed to parse Dlc_ActivationAttr parameter 'value'}}
  %0 = dlc.linear %x, %w {activation = #dlc.activation<swish>} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The activation is an enum attribute, not a string.
func.func @linear_string_activation(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'activation' failed to satisfy constraint: An activation: none, relu, gelu, gelu_tanh, tanh or sigmoid}}
  %0 = dlc.linear %x, %w {activation = "relu"} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gelu_bad_approximate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::mlir::dlc::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse Dlc_GeluApproximationAttr parameter 'value'}}
  %0 = dlc.gelu %x {approximate = #dlc.approximate<sigmoid>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @conv2d_bad_activation(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+2 {{expected ::mlir::dlc::Activation to be one of}}
  // expected-error @+1 {{failed to parse Dlc_ActivationAttr parameter 'value'}}
  %0 = dlc.conv2d %x, %w {activation = #dlc.activation<elu>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @matmul_inner(%a: tensor<4x5xf32>, %b: tensor<6x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{inner dimensions differ: [4, 5] x [6, 3]}}
  %0 = dlc.matmul %a, %b : (tensor<4x5xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @add_no_broadcast(%a: tensor<4x5xf32>, %b: tensor<4xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{operand shapes [4, 5] and [4] do not broadcast}}
  %0 = dlc.add %a, %b : (tensor<4x5xf32>, tensor<4xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @add_mixed_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{operands and result must have one element type, got 'f32' and 'f16'}}
  %0 = dlc.add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @softmax_dim(%a: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = dlc.softmax %a {dim = 2 : i64} : tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @reshape_count(%a: tensor<4x5xf32>) -> tensor<21xf32> {
  // expected-error @+1 {{cannot reshape [4, 5] (20 elements) into [21] (21 elements)}}
  %0 = dlc.reshape %a : (tensor<4x5xf32>) -> tensor<21xf32>
  return %0 : tensor<21xf32>
}

// -----

func.func @transpose_perm(%a: tensor<4x5xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{permutation [0, 0] is not a permutation of 0..1}}
  %0 = dlc.transpose %a [0, 0] : (tensor<4x5xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

func.func @sum_unsorted(%a: tensor<4x5xf32>) -> tensor<f32> {
  // expected-error @+1 {{dims must be sorted and unique, got [1, 0]}}
  %0 = dlc.sum %a {dims = array<i64: 1, 0>} : (tensor<4x5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_labels(%l: tensor<4x10xf32>, %y: tensor<5xi64>) -> tensor<f32> {
  // expected-error @+1 {{labels must be [4] class indices, got [5]}}
  %0 = dlc.cross_entropy %l, %y : (tensor<4x10xf32>, tensor<5xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_float_labels(%l: tensor<4x10xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of signless integer values}}
  %0 = dlc.cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @mse_types(%a: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<f32> {
  // expected-error @+1 {{input and target must have the same type}}
  %0 = dlc.mse_loss %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @mse_bad_reduction(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+2 {{expected ::mlir::dlc::LossReduction to be one of: mean, sum}}
  // expected-error @+1 {{failed to parse Dlc_LossReductionAttr parameter 'value'}}
  %0 = dlc.mse_loss %a, %b {reduction = #dlc.reduction<none>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_bad_reduction(%l: tensor<4x10xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+2 {{expected ::mlir::dlc::LossReduction to be one of: mean, sum}}
  // expected-error @+1 {{failed to parse Dlc_LossReductionAttr parameter 'value'}}
  %0 = dlc.cross_entropy %l, %y {reduction = #dlc.reduction<max>} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @layer_norm_weight(%a: tensor<4x5xf32>, %g: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{weight and bias must be [5] of 'f32'}}
  %0 = dlc.layer_norm %a, %g, %b : (tensor<4x5xf32>, tensor<4xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// expected-error @+2 {{expected ::mlir::dlc::ParameterInit to be one of: uniform, zeros, ones, data}}
// expected-error @+1 {{failed to parse Dlc_ParameterInitAttr parameter 'value'}}
dlc.parameter @p : tensor<4xf32> {init = #dlc.init<normal>}

// -----

// expected-error @+1 {{'dlc.parameter' op with init 'data' needs a 'value' attribute}}
dlc.parameter @p : tensor<4xf32> {init = #dlc.init<data>}

// -----

// expected-error @+1 {{'dlc.parameter' op has a 'value' attribute but init is not 'data'}}
dlc.parameter @p : tensor<2xf32> {init = #dlc.init<zeros>, value = dense<[0.5, -1.0]> : tensor<2xf32>}

// -----

dlc.parameter @p : tensor<4xf32> {init = #dlc.init<zeros>}
func.func @param_type() -> tensor<5xf32> {
  // expected-error @+1 {{result type 'tensor<5xf32>' does not match the parameter's type 'tensor<4xf32>'}}
  %0 = dlc.param @p : tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @param_missing() -> tensor<5xf32> {
  // expected-error @+1 {{refers to 'nope', which is not a dlc.parameter}}
  %0 = dlc.param @nope : tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// expected-error @+2 {{expected ::mlir::dlc::ParameterRole to be one of: weight, constant, optimizer_state}}
// expected-error @+1 {{failed to parse Dlc_ParameterRoleAttr parameter 'value'}}
dlc.parameter @p : tensor<4xf32> {init = #dlc.init<zeros>, role = #dlc.role<bias>}

// -----

func.func @broadcast_to_bad(%a: tensor<4x3xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{cannot broadcast [4, 3] to [4, 6]}}
  %0 = dlc.broadcast_to %a : (tensor<4x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// The derivative of an activation, so never of none.
func.func @activation_grad_none(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dlc.activation_grad' op needs an activation, got none}}
  %0 = dlc.activation_grad %a, %a {activation = #dlc.activation<none>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cross_entropy_grad_labels(%l: tensor<4x3xf32>, %y: tensor<5xi64>, %g: tensor<f32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{labels must be [4] class indices, got [5]}}
  %0 = dlc.cross_entropy_grad %l, %y, %g : (tensor<4x3xf32>, tensor<5xi64>, tensor<f32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @layer_norm_grad_weight(%x: tensor<4x3xf32>, %w: tensor<4xf32>, %g: tensor<4x3xf32>) {
  // expected-error @+1 {{weight must be [3], got [4]}}
  %0:3 = dlc.layer_norm_grad %x, %w, %g : (tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @optimizer_states(%s: tensor<f32>, %w: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{needs 2 state tensors (2 per param), got 1}}
  %0:3 = dlc.optimizer_update step(%s : tensor<f32>) params(%w : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%w : tensor<4xf32>) config {kind = #dlc.optimizer<adam>, lr = 1.0e-03 : f64, betas = [0.9, 0.999], eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @optimizer_grad_type(%s: tensor<f32>, %w: tensor<4xf32>, %g: tensor<5xf32>) {
  // expected-error @+1 {{grad 0 has type 'tensor<5xf32>', its param 'tensor<4xf32>'}}
  %0:2 = dlc.optimizer_update step(%s : tensor<f32>) params(%w : tensor<4xf32>) grads(%g : tensor<5xf32>) states() config {kind = #dlc.optimizer<sgd>, lr = 1.0e-03 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @optimizer_kind(%s: tensor<f32>, %w: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::dlc::OptimizerKind to be one of: sgd, adam, adamw}}
  // expected-error @+1 {{failed to parse Dlc_OptimizerKindAttr parameter 'value'}}
  %0:2 = dlc.optimizer_update step(%s : tensor<f32>) params(%w : tensor<4xf32>) grads(%w : tensor<4xf32>) states() config {kind = #dlc.optimizer<lion>}
  return
}

// -----

// The config is a dictionary: its verifier checks that the kind is a #dlc.optimizer.
func.func @optimizer_string_kind(%s: tensor<f32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{config needs a kind, #dlc.optimizer<sgd>, #dlc.optimizer<adam> or #dlc.optimizer<adamw>}}
  %0:2 = dlc.optimizer_update step(%s : tensor<f32>) params(%w : tensor<4xf32>) grads(%w : tensor<4xf32>) states() config {kind = "sgd", lr = 1.0e-03 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
  return
}

// -----

dlc.parameter @p : tensor<4xf32> {init = #dlc.init<zeros>}
func.func @assign_type(%v: tensor<5xf32>) {
  // expected-error @+1 {{value type 'tensor<5xf32>' does not match the parameter's type 'tensor<4xf32>'}}
  dlc.assign @p, %v : tensor<5xf32>
  return
}

// -----

func.func @conv2d_bad_input_rank(%x: tensor<4x3x16xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<4x8x14x14xf32> {
  // expected-error @+1 {{'dlc.conv2d' op input must be [N, C, H, W], got [4, 3, 16]}}
  %0 = dlc.conv2d %x, %w : (tensor<4x3x16xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x14x14xf32>
  return %0 : tensor<4x8x14x14xf32>
}

// -----

func.func @conv2d_bad_channels(%x: tensor<4x3x16x16xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<4x8x14x14xf32> {
  // expected-error @+1 {{weight [8, 4, 3, 3] expects 4 input channels per group, but the input [4, 3, 16, 16] has 3 channels in 1 group}}
  %0 = dlc.conv2d %x, %w : (tensor<4x3x16x16xf32>, tensor<8x4x3x3xf32>) -> tensor<4x8x14x14xf32>
  return %0 : tensor<4x8x14x14xf32>
}

// -----

func.func @conv2d_bad_groups(%x: tensor<4x6x16x16xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<4x8x14x14xf32> {
  // expected-error @+1 {{the input's 6 channels do not split into 4 groups}}
  %0 = dlc.conv2d %x, %w {groups = 4} : (tensor<4x6x16x16xf32>, tensor<8x2x3x3xf32>) -> tensor<4x8x14x14xf32>
  return %0 : tensor<4x8x14x14xf32>
}

// -----

func.func @conv2d_bad_result(%x: tensor<4x3x16x16xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<4x8x8x8xf32> {
  // expected-error @+1 {{result must be [4, 8, 7, 8], got [4, 8, 8, 8]}}
  %0 = dlc.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 0, 1, 0, 0>} : (tensor<4x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x8x8xf32>
  return %0 : tensor<4x8x8x8xf32>
}

// -----

func.func @conv2d_bad_padding(%x: tensor<4x3x16x16xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<4x8x16x16xf32> {
  // expected-error @+1 {{padding must be four non-negative sizes [top, left, bottom, right] of at most 1073741824, got [1, 1]}}
  %0 = dlc.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<4x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x16x16xf32>
  return %0 : tensor<4x8x16x16xf32>
}

// -----

func.func @conv2d_bad_bias(%x: tensor<4x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<4x8x14x14xf32> {
  // expected-error @+1 {{bias must be [8] of 'f32', got 'tensor<3xf32>'}}
  %0 = dlc.conv2d %x, %w, %b : (tensor<4x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<3xf32>) -> tensor<4x8x14x14xf32>
  return %0 : tensor<4x8x14x14xf32>
}

// -----

func.func @max_pool2d_window_too_big(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32> {
  // expected-error @+1 {{the 4x4 window (dilations [1, 1]) does not fit the 3x3 padded image of the input [1, 2, 3, 3]}}
  %0 = dlc.max_pool2d %x {kernel = array<i64: 4, 4>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}

// -----

func.func @max_pool2d_bad_stride(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{strides must be two positive sizes [h, w] of at most 1073741824, got [0, 2]}}
  %0 = dlc.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 0, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @avg_pool2d_bad_result(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x2x2xf32> {
  // expected-error @+1 {{result must be [1, 2, 2, 2], got [1, 3, 2, 2]}}
  %0 = dlc.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}

// -----

func.func @batch_norm_bad_stats(%x: tensor<4x8x5x5xf32>, %s: tensor<8xf32>, %v: tensor<4xf32>) -> tensor<4x8x5x5xf32> {
  // expected-error @+1 {{var must be [8] of 'f32' (one per channel of [4, 8, 5, 5]), got 'tensor<4xf32>'}}
  %0 = dlc.batch_norm %x, %s, %s, %s, %v : (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<4x8x5x5xf32>
  return %0 : tensor<4x8x5x5xf32>
}

// -----

func.func @conv2d_grad_input_bad_grad(%g: tensor<4x8x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<4x3x16x16xf32> {
  // expected-error @+1 {{grad must be [4, 8, 14, 14], got [4, 8, 8, 8]}}
  %0 = dlc.conv2d_grad_input %g, %w : (tensor<4x8x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<4x3x16x16xf32>
  return %0 : tensor<4x3x16x16xf32>
}

// -----

func.func @concat_sizes(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x9xf32> {
  // expected-error @+1 {{the inputs add up to 8 along dim 1, the result has 9}}
  %0 = dlc.concat %a, %b {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x9xf32>
  return %0 : tensor<2x9xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{input 1 has shape [4, 5], which does not match the result [2, 8] outside dim 1}}
  %0 = dlc.concat %a, %b {dim = 1 : i64} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_outside(%a: tensor<2x12xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{dim 1: a window of 5 at offset 4 with stride 2 does not fit in 12}}
  %0 = dlc.slice %a {offsets = array<i64: 0, 4>, strides = array<i64: 1, 2>} : (tensor<2x12xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @slice_stride(%a: tensor<2x12xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{dim 1: offset 0 must be non-negative and stride 0 non-zero}}
  %0 = dlc.slice %a {offsets = array<i64: 0, 0>, strides = array<i64: 1, 0>} : (tensor<2x12xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @gather_shape(%w: tensor<50x4xf32>, %ids: tensor<2x8xi64>) -> tensor<2x4xf32> {
  // expected-error @+1 {{gathering 'tensor<50x4xf32>' by 'tensor<2x8xi64>' gives 'tensor<2x8x4xf32>', not 'tensor<2x4xf32>'}}
  %0 = dlc.gather %w, %ids : (tensor<50x4xf32>, tensor<2x8xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @where_broadcast(%m: tensor<3x8xf32>, %a: tensor<f32>, %b: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  // expected-error @+1 {{operand 'tensor<3x8xf32>' does not broadcast to the result 'tensor<2x8x8xf32>'}}
  %0 = dlc.where %m, %a, %b : (tensor<3x8xf32>, tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// -----

func.func @slice_backwards_outside(%a: tensor<2x12xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{dim 1: a window of 5 at offset 3 with stride -1 does not fit in 12}}
  %0 = dlc.slice %a {offsets = array<i64: 0, 3>, strides = array<i64: 1, -1>} : (tensor<2x12xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @extremum_grad_shape(%x: tensor<4x6xf32>, %m: tensor<6xf32>, %g: tensor<4xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{extremum and grad must be [4], got [6]}}
  %0 = dlc.extremum_grad %x, %m, %g {dims = array<i64: 1>} : (tensor<4x6xf32>, tensor<6xf32>, tensor<4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @attention_batch(%q: tensor<2x8x16xf32>, %k: tensor<3x6x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{batch dimensions differ: [2, 8, 16], [3, 6, 16] and [3, 6, 16]}}
  %0 = dlc.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<2x8x16xf32>, tensor<3x6x16xf32>, tensor<3x6x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @attention_features(%q: tensor<8x16xf32>, %k: tensor<6x12xf32>) -> tensor<8x12xf32> {
  // expected-error @+1 {{query and key must have one feature size, got [8, 16] and [6, 12]}}
  %0 = dlc.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<8x16xf32>, tensor<6x12xf32>, tensor<6x12xf32>) -> tensor<8x12xf32>
  return %0 : tensor<8x12xf32>
}

// -----

func.func @attention_mask(%q: tensor<2x8x16xf32>, %m: tensor<8x6xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{mask [8, 6] does not broadcast to the scores [2, 8, 8]}}
  %0 = dlc.attention %q, %q, %q, %m {scale = 1.0 : f64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x6xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @attention_result(%q: tensor<8x16xf32>, %v: tensor<8x4xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{result must be [8, 4], got [8, 16]}}
  %0 = dlc.attention %q, %q, %v {scale = 1.0 : f64} : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @compare_types(%a: tensor<4xf32>, %b: tensor<4xi64>) -> tensor<4xi1> {
  // expected-error @+1 {{the operands must have one element type, got 'f32' and 'i64'}}
  %0 = dlc.compare eq, %a, %b : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @compare_broadcast(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{operand 'tensor<3xf32>' does not broadcast to the result 'tensor<4xi1>'}}
  %0 = dlc.compare lt, %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @compare_result(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = dlc.compare lt, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @logical_floats(%a: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = dlc.logical or, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @fill_not_integer() -> tensor<i64> {
  // expected-error @+1 {{value 5.000000e-01 is not an integer that 'i64' holds}}
  %0 = dlc.fill 0.5 : tensor<i64>
  return %0 : tensor<i64>
}

// -----

func.func @fill_beyond_double() -> tensor<i64> {
  // expected-error @+1 {{is not an integer that 'i64' holds (and a double represents exactly)}}
  %0 = dlc.fill 1.0e+17 : tensor<i64>
  return %0 : tensor<i64>
}

// -----

func.func @fill_bool() -> tensor<i1> {
  // expected-error @+1 {{value 2.000000e+00 is not an integer that 'i1' holds}}
  %0 = dlc.fill 2.0 : tensor<i1>
  return %0 : tensor<i1>
}

// -----

func.func @gather_elements_rank(%x: tensor<4x10xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{the indices 'tensor<4xi64>' must have the rank of 'tensor<4x10xf32>'}}
  %0 = dlc.gather_elements %x, %i {axis = 1 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_elements_other_dim(%x: tensor<4x10xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  // expected-error @+1 {{the indices 'tensor<3x2xi64>' must match 'tensor<4x10xf32>' but along axis 1}}
  %0 = dlc.gather_elements %x, %i {axis = 1 : i64} : (tensor<4x10xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @gather_elements_axis(%x: tensor<4x10xf32>, %i: tensor<4x2xi64>) -> tensor<4x2xf32> {
  // expected-error @+1 {{axis 2 is not a dimension of 'tensor<4x10xf32>'}}
  %0 = dlc.gather_elements %x, %i {axis = 2 : i64} : (tensor<4x10xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gather_elements_grad_shape(%g: tensor<4x3xf32>, %i: tensor<4x2xi64>) -> tensor<4x9xf32> {
  // expected-error @+1 {{gathering 'tensor<4x9xf32>' by 'tensor<4x2xi64>' gives 'tensor<4x2xf32>', not 'tensor<4x3xf32>'}}
  %0 = dlc.gather_elements_grad %g, %i {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x2xi64>) -> tensor<4x9xf32>
  return %0 : tensor<4x9xf32>
}

// -----

func.func @cast_float_to_int(%x: tensor<4xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{converts integers to integers, not 'f32' to 'i64'}}
  %0 = dlc.cast %x : tensor<4xf32> to tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @int_arith_types(%a: tensor<4xi32>, %b: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{operands and result must have one element type}}
  %0 = dlc.int_arith add, %a, %b : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @cumsum_axis(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{axis 1 is not a dimension of 'tensor<4xi32>'}}
  %0 = dlc.cumsum %a {axis = 1 : i64} : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// The sharding collectives: inputs and inits pair up; a shard over N ranks
// is 1-D with ceil(n / N) elements.
func.func @reduce_scatter_count(%g: tensor<4x8xf32>, %s: tensor<16xf32>) {
  // expected-error @+1 {{'dlc.reduce_scatter' op has 2 inputs but 1 inits}}
  %0 = dlc.reduce_scatter %g, %g into %s {ranks = 2 : i64} : tensor<4x8xf32>, tensor<4x8xf32> into tensor<16xf32>
  return
}

// -----

func.func @reduce_scatter_shard(%g: tensor<3x3xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'dlc.reduce_scatter' op pair 0: a shard of 'tensor<3x3xf32>' over 2 ranks has shape [5], not 'tensor<4xf32>'}}
  %0 = dlc.reduce_scatter %g into %s {ranks = 2 : i64} : tensor<3x3xf32> into tensor<4xf32>
  return
}

// -----

func.func @all_gather_types(%s: tensor<5xf32>, %w: tensor<3x3xbf16>) {
  // expected-error @+1 {{'dlc.all_gather' op pair 0 mixes element types 'bf16' and 'f32'}}
  %0 = dlc.all_gather %s into %w {ranks = 2 : i64} : tensor<5xf32> into tensor<3x3xbf16>
  return
}

// -----

func.func @shard_mixed(%w: tensor<3x3xf32>, %s: memref<5xf32>) {
  // expected-error @+1 {{'dlc.shard' op takes tensors or buffers, not both}}
  dlc.shard %w into %s {ranks = 2 : i64} : tensor<3x3xf32> into memref<5xf32>
  return
}

// -----

func.func @shard_ranks(%w: tensor<3x3xf32>, %s: tensor<9xf32>) {
  // expected-error @+1 {{attribute 'ranks' failed to satisfy constraint}}
  %0 = dlc.shard %w into %s {ranks = 0 : i64} : tensor<3x3xf32> into tensor<9xf32>
  return
}

// -----

// expected-error @+1 {{'dlc.parameter' op is a shard over 2 ranks of a tensor of 9 elements: its type must be 'tensor<5xf32>'}}
dlc.parameter @m : tensor<4xf32> {init = #dlc.init<zeros>, role = #dlc.role<optimizer_state>, shard_of = array<i64: 3, 3>, shard_ranks = 2 : i64}

// -----

// expected-error @+1 {{'dlc.parameter' op is sharded, but only optimizer state can be}}
dlc.parameter @w : tensor<5xf32> {init = #dlc.init<zeros>, shard_of = array<i64: 3, 3>, shard_ranks = 2 : i64}

// -----

// expected-error @+1 {{'dlc.parameter' op needs both 'shard_of' and 'shard_ranks', or neither}}
dlc.parameter @m : tensor<5xf32> {init = #dlc.init<zeros>, role = #dlc.role<optimizer_state>, shard_of = array<i64: 3, 3>}

// -----

func.func @lstm_gates_not_divisible(%x: tensor<3x2x15xf32>, %w: tensor<16x4xf32>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'dlc.lstm' op needs a static [T, B, 4H] sequence with T >= 1, got [3, 2, 15]}}
  %y, %c, %g = dlc.lstm %x, %w, %h, %h : (tensor<3x2x15xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x15xf32>)
  return
}

// -----

func.func @lstm_bad_recurrent_weight(%x: tensor<3x2x16xf32>, %w: tensor<16x5xf32>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'dlc.lstm' op 'recurrent_weight' must be [16, 4], got [16, 5]}}
  %y, %c, %g = dlc.lstm %x, %w, %h, %h : (tensor<3x2x16xf32>, tensor<16x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)
  return
}

// -----

func.func @lstm_bad_initial_state(%x: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %h: tensor<2x4xf32>, %c0: tensor<3x4xf32>) {
  // expected-error @+1 {{'dlc.lstm' op 'initial_c' must be [2, 4], got [3, 4]}}
  %y, %c, %g = dlc.lstm %x, %w, %h, %c0 : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)
  return
}

// -----

func.func @lstm_mixed_types(%x: tensor<3x2x16xf32>, %w: tensor<16x4xf64>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'dlc.lstm' op 'recurrent_weight' has element type 'f64', expected 'f32' like the others}}
  %y, %c, %g = dlc.lstm %x, %w, %h, %h : (tensor<3x2x16xf32>, tensor<16x4xf64>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)
  return
}

// -----

func.func @lstm_bad_y(%x: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'dlc.lstm' op 'y' must be [3, 2, 4], got [2, 2, 4]}}
  %y, %c, %g = dlc.lstm %x, %w, %h, %h : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)
  return
}

// -----

func.func @lstm_grad_bad_c(%dy: tensor<3x2x4xf32>, %w: tensor<16x4xf32>, %h: tensor<2x4xf32>, %c: tensor<3x2x5xf32>, %g: tensor<3x2x16xf32>) {
  // expected-error @+1 {{'dlc.lstm_grad' op 'c' must be [3, 2, 4], got [3, 2, 5]}}
  %a, %b, %d = dlc.lstm_grad %dy, %dy, %w, %h, %c, %g : (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<3x2x5xf32>, tensor<3x2x16xf32>) -> (tensor<3x2x16xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @gru_gates_not_divisible(%x: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'dlc.gru' op needs a static [T, B, 3H] sequence with T >= 1, got [3, 2, 16]}}
  %y, %g = dlc.gru %x, %w, %b, %h : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x16xf32>)
  return
}

// -----

func.func @gru_bad_bias(%x: tensor<3x2x12xf32>, %w: tensor<12x4xf32>, %b: tensor<4xf32>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'dlc.gru' op 'recurrent_bias' must be [12], got [4]}}
  %y, %g = dlc.gru %x, %w, %b, %h : (tensor<3x2x12xf32>, tensor<12x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x12xf32>)
  return
}

// -----

func.func @gru_grad_bad_projection(%dy: tensor<3x2x4xf32>, %w: tensor<12x4xf32>, %h: tensor<2x4xf32>, %p: tensor<3x2x8xf32>, %g: tensor<3x2x12xf32>) {
  // expected-error @+1 {{'dlc.gru_grad' op 'projection' must be [3, 2, 12], got [3, 2, 8]}}
  %a, %b, %c = dlc.gru_grad %dy, %w, %h, %p, %dy, %g : (tensor<3x2x4xf32>, tensor<12x4xf32>, tensor<2x4xf32>, tensor<3x2x8xf32>, tensor<3x2x4xf32>, tensor<3x2x12xf32>) -> (tensor<3x2x12xf32>, tensor<3x2x12xf32>, tensor<2x4xf32>)
  return
}
