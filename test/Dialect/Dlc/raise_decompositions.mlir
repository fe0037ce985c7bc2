// RUN: dlc-opt %s -dlc-raise-decompositions -split-input-file | FileCheck %s

// Erf GELU as torch 1.13 exports nn.GELU(): Div, Erf, Add 1, Mul x, Mul 0.5.
// CHECK-LABEL: func.func @gelu_erf_torch
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[G:.*]] = dlc.gelu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_torch(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = dlc.fill 1.4142135381698608 : tensor<f32>
  %s = dlc.div %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = dlc.erf %s : tensor<4x8xf32>
  %one = dlc.fill 1.0 : tensor<f32>
  %a = dlc.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = dlc.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = dlc.fill 0.5 : tensor<f32>
  %y = dlc.mul %m, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Erf GELU with 0.5*x first, Mul by 1/sqrt(2), commuted operands and
// one-element [1] constants.
// CHECK-LABEL: func.func @gelu_erf_half_first
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[G:.*]] = dlc.gelu %[[X]] : tensor<8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_half_first(%x: tensor<8xf32>) -> tensor<8xf32> {
  %half = dlc.fill 0.5 : tensor<1xf32>
  %h = dlc.mul %half, %x : (tensor<1xf32>, tensor<8xf32>) -> tensor<8xf32>
  %c = dlc.fill 0.70710678 : tensor<1xf32>
  %s = dlc.mul %c, %x : (tensor<1xf32>, tensor<8xf32>) -> tensor<8xf32>
  %e = dlc.erf %s : tensor<8xf32>
  %one = dlc.fill 1.0 : tensor<1xf32>
  %a = dlc.add %one, %e : (tensor<1xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = dlc.mul %a, %h : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Erf GELU as x * cdf(x), cdf = 0.5 * (1 + erf(x * 0.70710678)).
// CHECK-LABEL: func.func @gelu_erf_cdf
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[G:.*]] = dlc.gelu %[[X]] : tensor<2x3xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_cdf(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = dlc.fill 0.7071067690849304 : tensor<f32>
  %s = dlc.mul %x, %c : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %e = dlc.erf %s : tensor<2x3xf32>
  %one = dlc.fill 1.0 : tensor<f32>
  %a = dlc.add %e, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %half = dlc.fill 0.5 : tensor<f32>
  %cdf = dlc.mul %half, %a : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = dlc.mul %x, %cdf : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tanh GELU as torch 1.13 exports nn.GELU(approximate='tanh'):
// x*(x*x), 0.044715*·, x+·, 0.7978846*·, Tanh, 1+·, x*·, 0.5*·.
// CHECK-LABEL: func.func @gelu_tanh_torch
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[G:.*]] = dlc.gelu %[[X]] {approximate = #dlc.approximate<tanh>} : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh_torch(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sq = dlc.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %cube = dlc.mul %x, %sq : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = dlc.fill 0.044714998453855515 : tensor<f32>
  %t = dlc.mul %k, %cube : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = dlc.add %x, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = dlc.fill 0.79788458347320557 : tensor<f32>
  %i = dlc.mul %b, %p : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %th = dlc.tanh %i : tensor<4x8xf32>
  %one = dlc.fill 1.0 : tensor<f32>
  %a = dlc.add %one, %th : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = dlc.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = dlc.fill 0.5 : tensor<f32>
  %y = dlc.mul %half, %m : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Tanh GELU with Pow(x, 3) imported as (x*x)*x, 0.5*x first and the other
// operand orders.
// CHECK-LABEL: func.func @gelu_tanh_pow
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[G:.*]] = dlc.gelu %[[X]] {approximate = #dlc.approximate<tanh>} : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh_pow(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = dlc.fill 0.5 : tensor<f32>
  %h = dlc.mul %x, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %sq = dlc.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %cube = dlc.mul %sq, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = dlc.fill 0.044715 : tensor<f32>
  %t = dlc.mul %cube, %k : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %p = dlc.add %t, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = dlc.fill 0.7978845608028654 : tensor<f32>
  %i = dlc.mul %p, %b : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %th = dlc.tanh %i : tensor<4x8xf32>
  %one = dlc.fill 1.0 : tensor<f32>
  %a = dlc.add %th, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %y = dlc.mul %h, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Do not raise: the erf scale is not 1/sqrt(2).
// CHECK-LABEL: func.func @gelu_wrong_constant
// CHECK-NOT: dlc.gelu
// CHECK: dlc.erf
func.func @gelu_wrong_constant(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = dlc.fill 1.5 : tensor<f32>
  %s = dlc.div %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = dlc.erf %s : tensor<4x8xf32>
  %one = dlc.fill 1.0 : tensor<f32>
  %a = dlc.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = dlc.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = dlc.fill 0.5 : tensor<f32>
  %y = dlc.mul %m, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Do not raise: the tanh GELU's cubic coefficient is 0.044 (a rounded
// 0.044715 would change the numbers).
// CHECK-LABEL: func.func @gelu_tanh_wrong_constant
// CHECK-NOT: dlc.gelu
// CHECK: dlc.tanh
func.func @gelu_tanh_wrong_constant(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sq = dlc.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %cube = dlc.mul %x, %sq : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = dlc.fill 0.044 : tensor<f32>
  %t = dlc.mul %k, %cube : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = dlc.add %x, %t : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = dlc.fill 0.7978846 : tensor<f32>
  %i = dlc.mul %b, %p : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %th = dlc.tanh %i : tensor<4x8xf32>
  %one = dlc.fill 1.0 : tensor<f32>
  %a = dlc.add %one, %th : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = dlc.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = dlc.fill 0.5 : tensor<f32>
  %y = dlc.mul %half, %m : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Do not raise: the erf result has a second user, which would make the
// GELU and the erf both be computed.
// CHECK-LABEL: func.func @gelu_extra_user
// CHECK-NOT: dlc.gelu
// CHECK: %[[E:.*]] = dlc.erf
// CHECK: return %{{.*}}, %[[E]]
func.func @gelu_extra_user(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = dlc.fill 1.4142135381698608 : tensor<f32>
  %s = dlc.div %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = dlc.erf %s : tensor<4x8xf32>
  %one = dlc.fill 1.0 : tensor<f32>
  %a = dlc.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = dlc.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = dlc.fill 0.5 : tensor<f32>
  %y = dlc.mul %m, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y, %e : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Do not raise: the product's x is not the erf's input.
// CHECK-LABEL: func.func @gelu_other_input
// CHECK-NOT: dlc.gelu
func.func @gelu_other_input(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = dlc.fill 1.4142135381698608 : tensor<f32>
  %s = dlc.div %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = dlc.erf %s : tensor<4x8xf32>
  %one = dlc.fill 1.0 : tensor<f32>
  %a = dlc.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = dlc.mul %z, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = dlc.fill 0.5 : tensor<f32>
  %y = dlc.mul %m, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Do not raise: a [1x1] constant broadcasts the [8] input to [1x8].
// CHECK-LABEL: func.func @gelu_constant_grows_rank
// CHECK-NOT: dlc.gelu
func.func @gelu_constant_grows_rank(%x: tensor<8xf32>) -> tensor<1x8xf32> {
  %c = dlc.fill 1.4142135381698608 : tensor<1x1xf32>
  %s = dlc.div %x, %c : (tensor<8xf32>, tensor<1x1xf32>) -> tensor<1x8xf32>
  %e = dlc.erf %s : tensor<1x8xf32>
  %one = dlc.fill 1.0 : tensor<f32>
  %a = dlc.add %e, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %m = dlc.mul %x, %a : (tensor<8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %half = dlc.fill 0.5 : tensor<f32>
  %y = dlc.mul %m, %half : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

// -----

// Layer norm as torch 1.13 exports nn.LayerNorm(8) at opset 13 (Pow(d, 2)
// imported as d*d), with its affine weight and bias.
// CHECK-LABEL: func.func @layer_norm_torch
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-DAG: %[[W:.*]] = dlc.param @ln.weight
// CHECK-DAG: %[[B:.*]] = dlc.param @ln.bias
// CHECK: %[[Y:.*]] = dlc.layer_norm %[[X]], %[[W]], %[[B]] {epsilon = 9.99999974{{[0-9]*}}E-6 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
dlc.parameter @ln.weight : tensor<8xf32> {init = #dlc.init<ones>}
dlc.parameter @ln.bias : tensor<8xf32> {init = #dlc.init<zeros>}
func.func @layer_norm_torch(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = dlc.param @ln.weight : tensor<8xf32>
  %b = dlc.param @ln.bias : tensor<8xf32>
  %m = dlc.mean %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = dlc.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = dlc.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = dlc.mean %sq {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %eps = dlc.fill 9.999999747378752e-06 : tensor<f32>
  %ve = dlc.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = dlc.sqrt %ve : tensor<4x1xf32>
  %n = dlc.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %nw = dlc.mul %n, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = dlc.add %nw, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Layer norm without affine (elementwise_affine=False): weight and bias
// become fills of ones and zeros.
// CHECK-LABEL: func.func @layer_norm_plain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-DAG: %[[ONES:.*]] = dlc.fill 1.000000e+00 : tensor<8xf32>
// CHECK-DAG: %[[ZEROS:.*]] = dlc.fill 0.000000e+00 : tensor<8xf32>
// CHECK: %[[Y:.*]] = dlc.layer_norm %[[X]], %[[ONES]], %[[ZEROS]] {epsilon = {{9.99999999[0-9]*E-7|1.000000e-06}} : f64}
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_plain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = dlc.mean %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = dlc.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = dlc.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = dlc.mean %sq {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %eps = dlc.fill 1.0e-06 : tensor<f32>
  %ve = dlc.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = dlc.sqrt %ve : tensor<4x1xf32>
  %n = dlc.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// Layer norm of a rank-3 value with commuted add/mul operands and a [1]
// epsilon.
// CHECK-LABEL: func.func @layer_norm_commuted
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>, %[[W:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = dlc.layer_norm %[[X]], %[[W]], %[[B]] {epsilon = 1.000000e-03 : f64} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_commuted(%x: tensor<2x5x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x5x8xf32> {
  %m = dlc.mean %x {dims = array<i64: 2>, keepdim = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %d = dlc.sub %x, %m : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %sq = dlc.mul %d, %d : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %v = dlc.mean %sq {dims = array<i64: 2>, keepdim = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %eps = dlc.fill 1.0e-03 : tensor<1xf32>
  %ve = dlc.add %eps, %v : (tensor<1xf32>, tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %s = dlc.sqrt %ve : tensor<2x5x1xf32>
  %n = dlc.div %d, %s : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %nw = dlc.mul %w, %n : (tensor<8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %y = dlc.add %b, %nw : (tensor<8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  return %y : tensor<2x5x8xf32>
}

// -----

// A multiplier that is not a [D] weight stays outside: the normalisation is
// raised, the scalar multiply and the add after it are kept.
// CHECK-LABEL: func.func @layer_norm_scalar_scale
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[N:.*]] = dlc.layer_norm %[[X]]
// CHECK: %[[M:.*]] = dlc.mul %[[N]], %{{.*}} : (tensor<4x8xf32>, tensor<f32>)
// CHECK: dlc.add %[[M]], %[[B]]
func.func @layer_norm_scalar_scale(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %m = dlc.mean %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = dlc.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = dlc.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = dlc.mean %sq {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %eps = dlc.fill 1.0e-05 : tensor<f32>
  %ve = dlc.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = dlc.sqrt %ve : tensor<4x1xf32>
  %n = dlc.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %two = dlc.fill 2.0 : tensor<f32>
  %n2 = dlc.mul %n, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %y = dlc.add %n2, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Do not raise: the variance is also returned.
// CHECK-LABEL: func.func @layer_norm_extra_user
// CHECK-NOT: dlc.layer_norm
// CHECK: dlc.mean %arg0
// CHECK: %[[V:.*]] = dlc.mean %{{.*}} {dims = array<i64: 1>, keepdim = true}
// CHECK: return %{{.*}}, %[[V]]
func.func @layer_norm_extra_user(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %m = dlc.mean %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = dlc.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = dlc.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = dlc.mean %sq {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %eps = dlc.fill 1.0e-05 : tensor<f32>
  %ve = dlc.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = dlc.sqrt %ve : tensor<4x1xf32>
  %n = dlc.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %v : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// Do not raise: the centered value x - mean(x) has a third user.
// CHECK-LABEL: func.func @layer_norm_centered_extra_user
// CHECK-NOT: dlc.layer_norm
func.func @layer_norm_centered_extra_user(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = dlc.mean %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = dlc.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = dlc.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = dlc.mean %sq {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %eps = dlc.fill 1.0e-05 : tensor<f32>
  %ve = dlc.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = dlc.sqrt %ve : tensor<4x1xf32>
  %n = dlc.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Do not raise: the means are over dimension 0, not the last one.
// CHECK-LABEL: func.func @layer_norm_not_last_dim
// CHECK-NOT: dlc.layer_norm
func.func @layer_norm_not_last_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = dlc.mean %x {dims = array<i64: 0>, keepdim = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %d = dlc.sub %x, %m : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %sq = dlc.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = dlc.mean %sq {dims = array<i64: 0>, keepdim = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %eps = dlc.fill 1.0e-05 : tensor<f32>
  %ve = dlc.add %v, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %s = dlc.sqrt %ve : tensor<1x8xf32>
  %n = dlc.div %d, %s : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// Do not raise: the variance is of another value than x - mean(x).
// CHECK-LABEL: func.func @layer_norm_other_variance
// CHECK-NOT: dlc.layer_norm
func.func @layer_norm_other_variance(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = dlc.mean %x {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = dlc.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = dlc.mul %z, %z : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = dlc.mean %sq {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %eps = dlc.fill 1.0e-05 : tensor<f32>
  %ve = dlc.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = dlc.sqrt %ve : tensor<4x1xf32>
  %n = dlc.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// Attention as the dynamo exporter writes scaled_dot_product_attention:
// sqrt(scale) on q and on k^T (a one-element constant initializer), the
// matmuls on batch and heads flattened, an additive causal mask.
// CHECK-LABEL: func.func @attention_sdpa_dynamo
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x8x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>, %[[M:.*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[O:.*]] = dlc.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 2.500000e-01 : f64}
// CHECK-SAME: (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NOT: dlc.matmul
// CHECK-NOT: dlc.softmax
// CHECK: return
module {
  dlc.parameter @half : tensor<1xf32> {init = #dlc.init<data>, role = #dlc.role<constant>, value = dense<0.5> : tensor<1xf32>}
  func.func @attention_sdpa_dynamo(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<8x8xf32>) -> tensor<2x4x8x16xf32> {
    %k3 = dlc.reshape %k : (tensor<2x4x8x16xf32>) -> tensor<8x8x16xf32>
    %kt3 = dlc.transpose %k3 [0, 2, 1] : (tensor<8x8x16xf32>) -> tensor<8x16x8xf32>
    %kt = dlc.reshape %kt3 : (tensor<8x16x8xf32>) -> tensor<2x4x16x8xf32>
    %c = dlc.param @half : tensor<1xf32>
    %qs = dlc.mul %q, %c : (tensor<2x4x8x16xf32>, tensor<1xf32>) -> tensor<2x4x8x16xf32>
    %ks = dlc.mul %kt, %c : (tensor<2x4x16x8xf32>, tensor<1xf32>) -> tensor<2x4x16x8xf32>
    %q3 = dlc.reshape %qs : (tensor<2x4x8x16xf32>) -> tensor<8x8x16xf32>
    %ks3 = dlc.reshape %ks : (tensor<2x4x16x8xf32>) -> tensor<8x16x8xf32>
    %s3 = dlc.matmul %q3, %ks3 : (tensor<8x8x16xf32>, tensor<8x16x8xf32>) -> tensor<8x8x8xf32>
    %s = dlc.reshape %s3 : (tensor<8x8x8xf32>) -> tensor<2x4x8x8xf32>
    %sm = dlc.add %s, %m : (tensor<2x4x8x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8x8xf32>
    %p = dlc.softmax %sm {dim = 3 : i64} : tensor<2x4x8x8xf32>
    %p3 = dlc.reshape %p : (tensor<2x4x8x8xf32>) -> tensor<8x8x8xf32>
    %v3 = dlc.reshape %v : (tensor<2x4x8x16xf32>) -> tensor<8x8x16xf32>
    %o3 = dlc.matmul %p3, %v3 : (tensor<8x8x8xf32>, tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
    %o = dlc.reshape %o3 : (tensor<8x8x16xf32>) -> tensor<2x4x8x16xf32>
    return %o : tensor<2x4x8x16xf32>
  }
}

// -----

// Attention as a hand-written block exports through TorchScript: k^T by a
// transpose that also splits the heads ([B, T, H, D] -> [B, H, D, T]), the
// scores divided by sqrt(D), masked_fill(-inf) as a where on a 0/1 mask.
// The mask becomes additive: where(cond, -inf, 0).
// CHECK-LABEL: func.func @attention_manual_where
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[KX:.*]]: tensor<2x8x4x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>, %[[C:.*]]: tensor<8x8xf32>)
// CHECK-DAG: %[[NINF:.*]] = dlc.fill 0xFFF0000000000000 : tensor<f32>
// CHECK-DAG: %[[ZERO:.*]] = dlc.fill 0.000000e+00 : tensor<f32>
// CHECK-DAG: %[[K:.*]] = dlc.transpose %[[KX]] [0, 2, 1, 3] : (tensor<2x8x4x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-DAG: %[[M:.*]] = dlc.where %[[C]], %[[NINF]], %[[ZERO]] : (tensor<8x8xf32>, tensor<f32>, tensor<f32>) -> tensor<8x8xf32>
// CHECK: dlc.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 2.500000e-01 : f64}
// CHECK-NOT: dlc.softmax
// CHECK: return
func.func @attention_manual_where(%q: tensor<2x4x8x16xf32>, %kx: tensor<2x8x4x16xf32>, %v: tensor<2x4x8x16xf32>, %cond: tensor<8x8xf32>) -> tensor<2x4x8x16xf32> {
  %kt = dlc.transpose %kx [0, 2, 3, 1] : (tensor<2x8x4x16xf32>) -> tensor<2x4x16x8xf32>
  %q3 = dlc.reshape %q : (tensor<2x4x8x16xf32>) -> tensor<8x8x16xf32>
  %kt3 = dlc.reshape %kt : (tensor<2x4x16x8xf32>) -> tensor<8x16x8xf32>
  %s3 = dlc.matmul %q3, %kt3 : (tensor<8x8x16xf32>, tensor<8x16x8xf32>) -> tensor<8x8x8xf32>
  %s = dlc.reshape %s3 : (tensor<8x8x8xf32>) -> tensor<2x4x8x8xf32>
  %d = dlc.fill 4.0 : tensor<f32>
  %sd = dlc.div %s, %d : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %ninf = dlc.fill 0xFFF0000000000000 : tensor<f32>
  %sm = dlc.where %cond, %ninf, %sd : (tensor<8x8xf32>, tensor<f32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = dlc.softmax %sm {dim = 3 : i64} : tensor<2x4x8x8xf32>
  %p3 = dlc.reshape %p : (tensor<2x4x8x8xf32>) -> tensor<8x8x8xf32>
  %v3 = dlc.reshape %v : (tensor<2x4x8x16xf32>) -> tensor<8x8x16xf32>
  %o3 = dlc.matmul %p3, %v3 : (tensor<8x8x8xf32>, tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %o = dlc.reshape %o3 : (tensor<8x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Rank 2 (one head, no batch), no scale and no mask.
// CHECK-LABEL: func.func @attention_rank2
// CHECK-NEXT: %[[O:.*]] = dlc.attention %arg0, %arg1, %arg2 {scale = 1.000000e+00 : f64} : (tensor<5x4xf32>, tensor<7x4xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: return %[[O]]
func.func @attention_rank2(%q: tensor<5x4xf32>, %k: tensor<7x4xf32>, %v: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %kt = dlc.transpose %k [1, 0] : (tensor<7x4xf32>) -> tensor<4x7xf32>
  %s = dlc.matmul %q, %kt : (tensor<5x4xf32>, tensor<4x7xf32>) -> tensor<5x7xf32>
  %p = dlc.softmax %s {dim = 1 : i64} : tensor<5x7xf32>
  %o = dlc.matmul %p, %v : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  return %o : tensor<5x3xf32>
}

// -----

// Not attention: scaled values (P @ (2 v) would move the scale to the
// output), a softmax over another dimension, probabilities used twice.
// CHECK-LABEL: func.func @not_attention
// CHECK-NOT: dlc.attention
// CHECK: return
func.func @not_attention(%q: tensor<5x4xf32>, %k: tensor<7x4xf32>, %v: tensor<7x3xf32>, %k2: tensor<5x4xf32>) -> (tensor<5x3xf32>, tensor<7x3xf32>, tensor<5x5xf32>, tensor<5x5xf32>) {
  %kt = dlc.transpose %k [1, 0] : (tensor<7x4xf32>) -> tensor<4x7xf32>
  %s = dlc.matmul %q, %kt : (tensor<5x4xf32>, tensor<4x7xf32>) -> tensor<5x7xf32>
  %p = dlc.softmax %s {dim = 1 : i64} : tensor<5x7xf32>
  %two = dlc.fill 2.0 : tensor<f32>
  %v2 = dlc.mul %v, %two : (tensor<7x3xf32>, tensor<f32>) -> tensor<7x3xf32>
  %o = dlc.matmul %p, %v2 : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  %qt = dlc.transpose %q [1, 0] : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %s2 = dlc.matmul %k, %qt : (tensor<7x4xf32>, tensor<4x5xf32>) -> tensor<7x5xf32>
  %p2 = dlc.softmax %s2 {dim = 0 : i64} : tensor<7x5xf32>
  %vt = dlc.transpose %p2 [1, 0] : (tensor<7x5xf32>) -> tensor<5x7xf32>
  %o2 = dlc.matmul %k, %qt : (tensor<7x4xf32>, tensor<4x5xf32>) -> tensor<7x5xf32>
  %k2t = dlc.transpose %k2 [1, 0] : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %s3 = dlc.matmul %q, %k2t : (tensor<5x4xf32>, tensor<4x5xf32>) -> tensor<5x5xf32>
  %p3 = dlc.softmax %s3 {dim = 1 : i64} : tensor<5x5xf32>
  %o3 = dlc.matmul %p3, %p3 : (tensor<5x5xf32>, tensor<5x5xf32>) -> tensor<5x5xf32>
  %u = dlc.matmul %vt, %v : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  return %o, %v, %o3, %p3 : tensor<5x3xf32>, tensor<7x3xf32>, tensor<5x5xf32>, tensor<5x5xf32>
}
