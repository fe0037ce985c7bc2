// RUN: dlc-opt %s | dlc-opt | FileCheck %s
// Every op prints and parses back to itself.

// CHECK: dlc.parameter @fc.weight : tensor<8x16xf32> {bound = 2.500000e-01 : f64, init = #dlc.init<uniform>}
dlc.parameter @fc.weight : tensor<8x16xf32> {bound = 0.25 : f64, init = #dlc.init<uniform>}
// CHECK: dlc.parameter @fc.bias : tensor<8xf32> {init = #dlc.init<zeros>}
dlc.parameter @fc.bias : tensor<8xf32> {init = #dlc.init<zeros>}
dlc.parameter @ln.weight : tensor<8xf32> {init = #dlc.init<ones>}
dlc.parameter @ln.bias : tensor<8xf32> {init = #dlc.init<zeros>}

// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%x: tensor<4x16xf32>, %y: tensor<4xi64>, %a3: tensor<2x4x16xf32>, %b3: tensor<2x16x8xf32>)
    -> (tensor<4x8xf32>, tensor<f32>, tensor<f32>, tensor<2x4x8xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<32xf32>) attributes {dlc.entry} {
  // CHECK: %[[W:.*]] = dlc.param @fc.weight : tensor<8x16xf32>
  %w = dlc.param @fc.weight : tensor<8x16xf32>
  %b = dlc.param @fc.bias : tensor<8xf32>
  %g = dlc.param @ln.weight : tensor<8xf32>
  %be = dlc.param @ln.bias : tensor<8xf32>
  // CHECK: dlc.linear %{{.*}}, %[[W]], %{{.*}} {activation = #dlc.activation<relu>}
  %h = dlc.linear %x, %w, %b {activation = #dlc.activation<relu>} : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: dlc.linear %{{.*}}, %[[W]] :
  %h2 = dlc.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  // CHECK: dlc.add {{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %s = dlc.add %h, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %s1 = dlc.sub %s, %h2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = dlc.mul %s1, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s3 = dlc.div %s2, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: dlc.gelu %{{.*}} {approximate = #dlc.approximate<tanh>} : tensor<4x8xf32>
  %u0 = dlc.gelu %s3 {approximate = #dlc.approximate<tanh>} : tensor<4x8xf32>
  %u1 = dlc.gelu %u0 : tensor<4x8xf32>
  %u2 = dlc.tanh %u1 : tensor<4x8xf32>
  %u3 = dlc.sigmoid %u2 : tensor<4x8xf32>
  %u4 = dlc.exp %u3 : tensor<4x8xf32>
  %u5 = dlc.log %u4 : tensor<4x8xf32>
  %u6 = dlc.sqrt %u5 : tensor<4x8xf32>
  // CHECK: dlc.erf %{{.*}} : tensor<4x8xf32>
  %u6e = dlc.erf %u6 : tensor<4x8xf32>
  %u7 = dlc.neg %u6e : tensor<4x8xf32>
  %u8 = dlc.relu %u7 : tensor<4x8xf32>
  // CHECK: dlc.softmax %{{.*}} {dim = 1 : i64} : tensor<4x8xf32>
  %sm = dlc.softmax %u8 {dim = 1 : i64} : tensor<4x8xf32>
  %ls = dlc.log_softmax %sm {dim = 1 : i64} : tensor<4x8xf32>
  // CHECK: dlc.layer_norm {{.*}} {epsilon = 1.000000e-03 : f64}
  %ln = dlc.layer_norm %ls, %g, %be {epsilon = 1.0e-3 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %ce = dlc.cross_entropy %ln, %y : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  // CHECK: dlc.mse_loss {{.*}} {reduction = #dlc.reduction<sum>}
  %mse = dlc.mse_loss %ln, %h2 {reduction = #dlc.reduction<sum>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  %mm = dlc.matmul %a3, %b3 : (tensor<2x4x16xf32>, tensor<2x16x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: dlc.sum %{{.*}} {dims = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %sum = dlc.sum %ln {dims = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %mean = dlc.mean %sum {dims = array<i64: 0>, keepdim = true} : (tensor<4xf32>) -> tensor<1xf32>
  %mb = dlc.add %sum, %mean : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  // CHECK: dlc.transpose %{{.*}} [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %t = dlc.transpose %ln [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %r = dlc.reshape %t : (tensor<8x4xf32>) -> tensor<32xf32>
  return %h, %ce, %mse, %mm, %mb, %t, %r : tensor<4x8xf32>, tensor<f32>, tensor<f32>, tensor<2x4x8xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<32xf32>
}

// The training-step ops.
dlc.parameter @w : tensor<4x8xf32> {init = #dlc.init<uniform>, bound = 0.5 : f64}
// CHECK: dlc.parameter @optimizer.step : tensor<f32> {init = #dlc.init<zeros>, role = #dlc.role<optimizer_state>}
dlc.parameter @optimizer.step : tensor<f32> {init = #dlc.init<zeros>, role = #dlc.role<optimizer_state>}
// CHECK-LABEL: func.func @training
func.func @training(%x: tensor<4x8xf32>, %y: tensor<4xi64>, %g: tensor<f32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: dlc.fill 1.000000e+00 : tensor<f32>
  %one = dlc.fill 1.0 : tensor<f32>
  // CHECK: dlc.scale %{{.*}}, 5.000000e-01 : tensor<4x8xf32>
  %s = dlc.scale %x, 0.5 : tensor<4x8xf32>
  // CHECK: dlc.broadcast_to %{{.*}} : (tensor<8xf32>) -> tensor<4x8xf32>
  %bb = dlc.broadcast_to %b : (tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: dlc.activation_grad %{{.*}}, %{{.*}} {activation = #dlc.activation<gelu>} : tensor<4x8xf32>
  %ag = dlc.activation_grad %x, %s {activation = #dlc.activation<gelu>} : tensor<4x8xf32>
  // CHECK: dlc.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} {reduction = #dlc.reduction<sum>} : (tensor<4x8xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x8xf32>
  %ce = dlc.cross_entropy_grad %x, %y, %one {reduction = #dlc.reduction<sum>} : (tensor<4x8xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK: dlc.layer_norm_grad
  %dx, %dw, %db = dlc.layer_norm_grad %x, %b, %s : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  %w = dlc.param @w : tensor<4x8xf32>
  %step = dlc.param @optimizer.step : tensor<f32>
  // CHECK: %[[U:.*]]:4 = dlc.optimizer_update step(%{{.*}} : tensor<f32>) params(%{{.*}} : tensor<4x8xf32>) grads(%{{.*}} : tensor<4x8xf32>) states(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) config {betas = [9.000000e-01, 0.99899999999999999], eps = 1.000000e-08 : f64, kind = #dlc.optimizer<adam>, lr = 1.000000e-03 : f64, weight_decay = 0.000000e+00 : f64}
  %u:4 = dlc.optimizer_update step(%step : tensor<f32>) params(%w : tensor<4x8xf32>) grads(%ag : tensor<4x8xf32>) states(%s, %s : tensor<4x8xf32>, tensor<4x8xf32>) config {kind = #dlc.optimizer<adam>, lr = 1.0e-03 : f64, betas = [0.9, 0.999], eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  // CHECK: dlc.assign @w, %[[U]]#1 : tensor<4x8xf32>
  dlc.assign @w, %u#1 : tensor<4x8xf32>
  dlc.assign @optimizer.step, %u#0 : tensor<f32>
  return %bb, %ce, %dx, %u#2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// Data movement: concat, slice and the slice's gradient.
// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%a: tensor<2x3x8xf32>, %b: tensor<2x5x8xf32>) -> (tensor<2x8x8xf32>, tensor<2x4x4xf32>, tensor<2x8x8xf32>) {
  // CHECK: dlc.concat %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<2x3x8xf32>, tensor<2x5x8xf32>) -> tensor<2x8x8xf32>
  %c = dlc.concat %a, %b {dim = 1 : i64} : (tensor<2x3x8xf32>, tensor<2x5x8xf32>) -> tensor<2x8x8xf32>
  // CHECK: dlc.slice %{{.*}} {offsets = array<i64: 0, 1, 0>, strides = array<i64: 1, 1, 2>} : (tensor<2x8x8xf32>) -> tensor<2x4x4xf32>
  %s = dlc.slice %c {offsets = array<i64: 0, 1, 0>, strides = array<i64: 1, 1, 2>} : (tensor<2x8x8xf32>) -> tensor<2x4x4xf32>
  // CHECK: dlc.slice_grad %{{.*}} {offsets = array<i64: 0, 1, 0>, strides = array<i64: 1, 1, 2>} : (tensor<2x4x4xf32>) -> tensor<2x8x8xf32>
  %g = dlc.slice_grad %s {offsets = array<i64: 0, 1, 0>, strides = array<i64: 1, 1, 2>} : (tensor<2x4x4xf32>) -> tensor<2x8x8xf32>
  return %c, %s, %g : tensor<2x8x8xf32>, tensor<2x4x4xf32>, tensor<2x8x8xf32>
}

// Masks and embeddings: where, gather and the gather's gradient.
// CHECK-LABEL: func.func @masks_and_embeddings
func.func @masks_and_embeddings(%m: tensor<8x8xf32>, %s: tensor<2x8x8xf32>, %w: tensor<50x4xf32>, %ids: tensor<2x8xi64>) -> (tensor<2x8x8xf32>, tensor<2x8x4xf32>, tensor<50x4xf32>) {
  %ninf = dlc.fill 0xFF800000 : tensor<f32>
  // CHECK: dlc.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %r = dlc.where %m, %ninf, %s : (tensor<8x8xf32>, tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  // CHECK: dlc.gather %{{.*}}, %{{.*}} : (tensor<50x4xf32>, tensor<2x8xi64>) -> tensor<2x8x4xf32>
  %e = dlc.gather %w, %ids : (tensor<50x4xf32>, tensor<2x8xi64>) -> tensor<2x8x4xf32>
  // CHECK: dlc.gather_grad %{{.*}}, %{{.*}} : (tensor<2x8x4xf32>, tensor<2x8xi64>) -> tensor<50x4xf32>
  %g = dlc.gather_grad %e, %ids : (tensor<2x8x4xf32>, tensor<2x8xi64>) -> tensor<50x4xf32>
  return %r, %e, %g : tensor<2x8x8xf32>, tensor<2x8x4xf32>, tensor<50x4xf32>
}

// Extrema and their gradient.
// CHECK-LABEL: func.func @extrema
func.func @extrema(%x: tensor<4x6xf32>, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<1x6xf32>, tensor<4x6xf32>) {
  // CHECK: dlc.max %{{.*}} {dims = array<i64: 1>} : (tensor<4x6xf32>) -> tensor<4xf32>
  %m = dlc.max %x {dims = array<i64: 1>} : (tensor<4x6xf32>) -> tensor<4xf32>
  // CHECK: dlc.min %{{.*}} {dims = array<i64: 0>, keepdim = true} : (tensor<4x6xf32>) -> tensor<1x6xf32>
  %n = dlc.min %x {dims = array<i64: 0>, keepdim = true} : (tensor<4x6xf32>) -> tensor<1x6xf32>
  // CHECK: dlc.extremum_grad %{{.*}}, %{{.*}}, %{{.*}} {dims = array<i64: 1>} : (tensor<4x6xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x6xf32>
  %d = dlc.extremum_grad %x, %m, %g {dims = array<i64: 1>} : (tensor<4x6xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x6xf32>
  return %m, %n, %d : tensor<4xf32>, tensor<1x6xf32>, tensor<4x6xf32>
}

// CHECK-LABEL: func.func @attention
// CHECK: dlc.attention %arg0, %arg1, %arg2, %arg3 {scale = 1.250000e-01 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x32xf32>, tensor<2x1x1x6xf32>) -> tensor<2x4x8x32xf32>
// CHECK: dlc.attention %arg0, %arg1, %arg1 {scale = 1.000000e+00 : f64}
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x32xf32>, %m: tensor<2x1x1x6xf32>) -> (tensor<2x4x8x32xf32>, tensor<2x4x8x16xf32>) {
  %0 = dlc.attention %q, %k, %v, %m {scale = 0.125 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x32xf32>, tensor<2x1x1x6xf32>) -> tensor<2x4x8x32xf32>
  %1 = dlc.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x8x16xf32>
  return %0, %1 : tensor<2x4x8x32xf32>, tensor<2x4x8x16xf32>
}

// Masks computed at run time: comparisons into booleans, boolean logic, and
// an integer fill to compare token ids with.
// CHECK-LABEL: func.func @compare_and_logic
func.func @compare_and_logic(%x: tensor<4x8xf32>, %ids: tensor<4x8xi64>) -> tensor<4x8xi1> {
  // CHECK: %[[Z:.*]] = dlc.fill 0.000000e+00 : tensor<i64>
  %zero = dlc.fill 0.0 : tensor<i64>
  // CHECK: dlc.compare ne, %{{.*}}, %[[Z]] : (tensor<4x8xi64>, tensor<i64>) -> tensor<4x8xi1>
  %keep = dlc.compare ne, %ids, %zero : (tensor<4x8xi64>, tensor<i64>) -> tensor<4x8xi1>
  // CHECK: dlc.compare ge, %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %t = dlc.fill 0.5 : tensor<8xf32>
  %big = dlc.compare ge, %x, %t : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: dlc.logical and, %{{.*}}, %{{.*}} : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %both = dlc.logical and, %keep, %big : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK: dlc.logical xor, %{{.*}}, %{{.*}} : (tensor<4x8xi1>, tensor<i1>) -> tensor<4x8xi1>
  %true = dlc.fill 1.0 : tensor<i1>
  %not = dlc.logical xor, %both, %true : (tensor<4x8xi1>, tensor<i1>) -> tensor<4x8xi1>
  return %not : tensor<4x8xi1>
}

// CHECK-LABEL: func.func @gather_elements
func.func @gather_elements(%x: tensor<4x10xf32>, %i: tensor<4x3xi64>) -> tensor<4x10xf32> {
  // CHECK: dlc.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<4x10xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
  %0 = dlc.gather_elements %x, %i {axis = 1 : i64} : (tensor<4x10xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
  // CHECK: dlc.gather_elements_grad %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x3xi64>) -> tensor<4x10xf32>
  %1 = dlc.gather_elements_grad %0, %i {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x3xi64>) -> tensor<4x10xf32>
  return %1 : tensor<4x10xf32>
}

// Integer arithmetic on values: position ids from a mask.
// CHECK-LABEL: func.func @int_arith
func.func @int_arith(%m: tensor<2x8xi1>) -> tensor<2x8xi64> {
  // CHECK: dlc.cast %{{.*}} : tensor<2x8xi1> to tensor<2x8xi32>
  %i = dlc.cast %m : tensor<2x8xi1> to tensor<2x8xi32>
  // CHECK: dlc.cumsum %{{.*}} {axis = 1 : i64} : tensor<2x8xi32>
  %c = dlc.cumsum %i {axis = 1 : i64} : tensor<2x8xi32>
  // CHECK: dlc.int_arith mul, %{{.*}}, %{{.*}} : (tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi32>
  %p = dlc.int_arith mul, %c, %i : (tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi32>
  %w = dlc.cast %p : tensor<2x8xi32> to tensor<2x8xi64>
  %one = dlc.fill 1.0 : tensor<i64>
  // CHECK: dlc.int_arith add, %{{.*}}, %{{.*}} : (tensor<2x8xi64>, tensor<i64>) -> tensor<2x8xi64>
  %r = dlc.int_arith add, %w, %one : (tensor<2x8xi64>, tensor<i64>) -> tensor<2x8xi64>
  return %r : tensor<2x8xi64>
}

// Every value of the enum attributes, spelled as the string it replaced;
// the defaults (activation none, approximate none, reduction mean, role
// weight) print as nothing.
// CHECK: dlc.parameter @enum.ones : tensor<2xf32> {init = #dlc.init<ones>}
dlc.parameter @enum.ones : tensor<2xf32> {init = #dlc.init<ones>, role = #dlc.role<weight>}
// CHECK: dlc.parameter @enum.data : tensor<2xf32> {init = #dlc.init<data>, role = #dlc.role<constant>, value = dense<[5.000000e-01, -1.000000e+00]> : tensor<2xf32>}
dlc.parameter @enum.data : tensor<2xf32> {init = #dlc.init<data>, role = #dlc.role<constant>, value = dense<[0.5, -1.0]> : tensor<2xf32>}

// CHECK-LABEL: func.func @enum_values
func.func @enum_values(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %y: tensor<4xi64>, %t: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<f32>, tensor<f32>) {
  // CHECK: dlc.linear %{{[^ ]*}}, %{{[^ ]*}} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %l0 = dlc.linear %x, %w {activation = #dlc.activation<none>} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  // CHECK: dlc.linear %{{.*}}, %{{.*}} {activation = #dlc.activation<gelu>}
  %l1 = dlc.linear %x, %w {activation = #dlc.activation<gelu>} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  // CHECK: dlc.activation_grad %{{.*}}, %{{.*}} {activation = #dlc.activation<relu>} : tensor<4x8xf32>
  %g0 = dlc.activation_grad %l0, %l1 {activation = #dlc.activation<relu>} : tensor<4x8xf32>
  // CHECK: dlc.activation_grad %{{.*}}, %{{.*}} {activation = #dlc.activation<gelu>} : tensor<4x8xf32>
  %g1 = dlc.activation_grad %l0, %g0 {activation = #dlc.activation<gelu>} : tensor<4x8xf32>
  // CHECK: dlc.activation_grad %{{.*}}, %{{.*}} {activation = #dlc.activation<gelu_tanh>} : tensor<4x8xf32>
  %g2 = dlc.activation_grad %l0, %g1 {activation = #dlc.activation<gelu_tanh>} : tensor<4x8xf32>
  // CHECK: dlc.activation_grad %{{.*}}, %{{.*}} {activation = #dlc.activation<tanh>} : tensor<4x8xf32>
  %g3 = dlc.activation_grad %l0, %g2 {activation = #dlc.activation<tanh>} : tensor<4x8xf32>
  // CHECK: dlc.activation_grad %{{.*}}, %{{.*}} {activation = #dlc.activation<sigmoid>} : tensor<4x8xf32>
  %g4 = dlc.activation_grad %l0, %g3 {activation = #dlc.activation<sigmoid>} : tensor<4x8xf32>
  // CHECK: dlc.gelu %{{[^ ]*}} : tensor<4x8xf32>
  %e = dlc.gelu %g4 {approximate = #dlc.approximate<none>} : tensor<4x8xf32>
  // CHECK: dlc.mse_loss %{{[^ ]*}}, %{{[^ ]*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  %m = dlc.mse_loss %e, %t {reduction = #dlc.reduction<mean>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  // CHECK: dlc.cross_entropy %{{.*}}, %{{.*}} {reduction = #dlc.reduction<sum>}
  %c = dlc.cross_entropy %e, %y {reduction = #dlc.reduction<sum>} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  return %e, %m, %c : tensor<4x8xf32>, tensor<f32>, tensor<f32>
}

// The kinds of an optimizer's config (sgd and adam above it).
// CHECK-LABEL: func.func @optimizer_kinds
func.func @optimizer_kinds(%s: tensor<f32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: config {amsgrad = false, betas = [9.000000e-01, 0.99899999999999999], eps = 1.000000e-08 : f64, kind = #dlc.optimizer<adamw>, lr = 1.000000e-03 : f64, weight_decay = 1.000000e-02 : f64}
  %u:4 = dlc.optimizer_update step(%s : tensor<f32>) params(%w : tensor<4xf32>) grads(%w : tensor<4xf32>) states(%w, %w : tensor<4xf32>, tensor<4xf32>) config {kind = #dlc.optimizer<adamw>, lr = 1.0e-03 : f64, betas = [0.9, 0.999], eps = 1.0e-08 : f64, weight_decay = 1.0e-02 : f64, amsgrad = false}
  // CHECK: config {dampening = 0.000000e+00 : f64, kind = #dlc.optimizer<sgd>, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64}
  %v:2 = dlc.optimizer_update step(%s : tensor<f32>) params(%u#1 : tensor<4xf32>) grads(%w : tensor<4xf32>) states() config {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
  return %v#1 : tensor<4xf32>
}

// The sharding collectives, on tensors and on buffers.
// CHECK-LABEL: func.func @sharding
// CHECK: dlc.reduce_scatter %{{.*}} into %{{.*}} {ranks = 2 : i64, reduction = #dlc.reduction<sum>} : tensor<3x3xf32> into tensor<5xf32>
// CHECK: dlc.shard %{{.*}} into %{{.*}} {ranks = 2 : i64} : tensor<3x3xf32> into tensor<5xf32>
// CHECK: dlc.all_gather %{{.*}} into %{{.*}} {ranks = 2 : i64} : tensor<5xf32> into tensor<3x3xf32>
// CHECK: dlc.all_gather %{{.*}} into %{{.*}} {ranks = 2 : i64} : memref<5xf32> into memref<3x3xf32>
func.func @sharding(%w: tensor<3x3xf32>, %s: tensor<5xf32>, %bs: memref<5xf32>, %bw: memref<3x3xf32>) -> tensor<3x3xf32> {
  %0 = dlc.reduce_scatter %w into %s {ranks = 2 : i64, reduction = #dlc.reduction<sum>} : tensor<3x3xf32> into tensor<5xf32>
  %1 = dlc.shard %w into %s {ranks = 2 : i64} : tensor<3x3xf32> into tensor<5xf32>
  %2 = dlc.all_gather %1 into %w {ranks = 2 : i64} : tensor<5xf32> into tensor<3x3xf32>
  dlc.all_gather %bs into %bw {ranks = 2 : i64} : memref<5xf32> into memref<3x3xf32>
  return %2 : tensor<3x3xf32>
}
