// RUN: dlc-opt %s -dlc-lower-to-linalg -split-input-file | FileCheck %s

// A linear with a fused ReLU on a batch as wide as the layer: the weight is
// transposed to [in, out], the matmul accumulates into a zero-filled
// tensor, and bias + ReLU are one elementwise epilogue.
// CHECK-LABEL: func.func @linear_relu
// CHECK: %[[WT:.*]] = linalg.transpose ins(%arg1 : tensor<8x16xf32>) outs(%{{.*}} : tensor<16x8xf32>) permutation = [1, 0]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[MM:.*]] = linalg.matmul ins(%arg0, %[[WT]] : tensor<32x16xf32>, tensor<16x8xf32>) outs(%[[ACC]]
// CHECK: linalg.generic {{.*}} ins(%[[MM]], %arg2 : tensor<32x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK: %[[NEG:.*]] = arith.cmpf olt
// CHECK: arith.select %[[NEG]]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear_relu(%x: tensor<32x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<32x8xf32> {
  %0 = dlc.linear %x, %w, %b {activation = #dlc.activation<relu>} : (tensor<32x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<32x8xf32>
  return %0 : tensor<32x8xf32>
}

// -----

// A small batch against a wide layer: the input is transposed instead of
// the weight (6*16 elements, not 32*16), the matmul computes W x^T, and the
// epilogue reads its result transposed, so the result needs no copy of its
// own.
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @linear_small_batch
// CHECK: %[[XT:.*]] = linalg.transpose ins(%arg0 : tensor<6x16xf32>) outs(%{{.*}} : tensor<16x6xf32>) permutation = [1, 0]
// CHECK: %[[MM:.*]] = linalg.matmul ins(%arg1, %[[XT]] : tensor<32x16xf32>, tensor<16x6xf32>) outs(%{{.*}} : tensor<32x6xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[T]], #[[COL]], #{{.*}}], {{.*}} ins(%[[MM]], %arg2 : tensor<32x6xf32>, tensor<32xf32>) outs(%{{.*}} : tensor<6x32xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @linear_small_batch(%x: tensor<6x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<6x32xf32> {
  %0 = dlc.linear %x, %w, %b : (tensor<6x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<6x32xf32>
  return %0 : tensor<6x32xf32>
}

// -----

// Up to 4 rows (inference at batch 1): dot products along the contiguous K
// of the weight and the input, no re-layout of either; the reduction may
// reassociate (LLVM vectorises it along K). The epilogue transposes back.
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear_dot
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.matmul
// CHECK: %[[DOT:.*]] = linalg.generic {indexing_maps = [#[[W]], #[[X]], #[[Y]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg1, %arg0 : tensor<8x16xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<8x1xf32>)
// CHECK: arith.mulf {{.*}} fastmath<reassoc,contract>
// CHECK: arith.addf {{.*}} fastmath<reassoc,contract>
// CHECK: linalg.generic {{.*}} ins(%[[DOT]], %arg2 : tensor<8x1xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<1x8xf32>)
func.func @linear_dot(%x: tensor<1x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<1x8xf32> {
  %0 = dlc.linear %x, %w, %b : (tensor<1x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

// A linear on a rank-3 input flattens the leading dimensions as views.
// CHECK-LABEL: func.func @linear_rank3
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : tensor<2x3x16xf32> into tensor<96xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<6x16xf32>
// CHECK: linalg.matmul
// CHECK: tensor.expand_shape {{.*}} into tensor<2x3x8xf32>
func.func @linear_rank3(%x: tensor<2x3x16xf32>, %w: tensor<8x16xf32>) -> tensor<2x3x8xf32> {
  %0 = dlc.linear %x, %w : (tensor<2x3x16xf32>, tensor<8x16xf32>) -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// Broadcasting is expressed in the indexing maps: the [8] operand is read
// along dimension 1 only, the rank-0 scalar with an empty map.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @broadcast
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
// CHECK: arith.subf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]]
// CHECK: arith.mulf
func.func @broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %0 = dlc.sub %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = dlc.mul %0, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Softmax subtracts the row maximum before exponentiating; the
// exponentials are computed once, in an elementwise loop (not inside the
// sum's reduction, where they would stay scalar), then summed and divided.
// CHECK-LABEL: func.func @softmax
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: %[[EXPS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[EXPS]] :
// CHECK-NOT: math.exp
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[EXPS]], %[[SUM]] :
// CHECK-NOT: math.exp
// CHECK: arith.divf
func.func @softmax(%a: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = dlc.softmax %a {dim = 1 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// Cross-entropy: log-sum-exp per row, minus the logit of the (clamped)
// label, added unless the label is the ignore index (-100); the mean divides
// by the number of labels counted.
// CHECK-LABEL: func.func @cross_entropy
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: arith.index_cast
// CHECK: tensor.extract %arg0
// CHECK: math.log
// CHECK: %[[IGN:.*]] = arith.cmpi eq, %{{.*}}, %c-100_i64
// CHECK: %[[TERM:.*]] = arith.select %[[IGN]], %cst{{.*}}, %{{.*}} : f32
// CHECK: arith.addf %{{.*}}, %[[TERM]]
// CHECK: %[[COUNT:.*]] = linalg.generic
// CHECK: arith.cmpi eq, %{{.*}}, %c-100_i64
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[COUNT]]
// CHECK: arith.divf
func.func @cross_entropy(%l: tensor<4x10xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %0 = dlc.cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Reshape and flatten are views: collapse to 1-D, expand to the result.
// CHECK-LABEL: func.func @reshape
// CHECK: %[[F:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2, 3]] : tensor<4x1x28x28xf32> into tensor<3136xf32>
// CHECK: tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [4, 784] : tensor<3136xf32> into tensor<4x784xf32>
func.func @reshape(%a: tensor<4x1x28x28xf32>) -> tensor<4x784xf32> {
  %0 = dlc.reshape %a : (tensor<4x1x28x28xf32>) -> tensor<4x784xf32>
  return %0 : tensor<4x784xf32>
}

// -----

// Mean over dimension 1 with keepdim: a reduction into [4, 1] and a scale.
// CHECK-DAG: #[[KEEP:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @mean_keepdim
// CHECK: linalg.generic {{.*}}#[[KEEP]]{{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.constant 2.000000e-01 : f32
func.func @mean_keepdim(%a: tensor<4x5xf32>) -> tensor<4x1xf32> {
  %0 = dlc.mean %a {dims = array<i64: 1>, keepdim = true} : (tensor<4x5xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// erf is one elementwise generic around math.erf (dlc-approximate-math
// expands it later).
// CHECK-LABEL: func.func @erf
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf32>)
// CHECK: math.erf %{{.*}} : f32
// CHECK-NOT: dlc.erf
func.func @erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dlc.erf %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Parameters are left for dlc-lower-entry-abi.
// CHECK-LABEL: func.func @keeps_params
// CHECK: dlc.param @w
dlc.parameter @w : tensor<4xf32> {init = #dlc.init<ones>}
func.func @keeps_params(%a: tensor<4xf32>) -> tensor<4xf32> {
  %w = dlc.param @w : tensor<4xf32>
  %0 = dlc.gelu %w : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Adam over two parameters: the step count and every parameter and moment
// are updated in place (they are the generics' destinations), the bias
// corrections are computed once, in double precision.
// CHECK-LABEL: func.func @adam
// CHECK-SAME: (%[[S:.*]]: tensor<f32>, %[[W:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[GW:.*]]: tensor<4x8xf32>, %[[GB:.*]]: tensor<8xf32>, %[[MW:.*]]: tensor<4x8xf32>, %[[MB:.*]]: tensor<8xf32>, %[[VW:.*]]: tensor<4x8xf32>, %[[VB:.*]]: tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[S]] : tensor<f32>)
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK: arith.subf %{{.*}} : f64
// CHECK: math.sqrt %{{.*}} : f64
// CHECK: linalg.generic {{.*}} ins(%[[GW]] : tensor<4x8xf32>) outs(%[[W]], %[[MW]], %[[VW]] : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: math.sqrt %{{.*}} : f32
// CHECK: linalg.generic {{.*}} ins(%[[GB]] : tensor<8xf32>) outs(%[[B]], %[[MB]], %[[VB]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT: dlc.optimizer_update
func.func @adam(%s: tensor<f32>, %w: tensor<4x8xf32>, %b: tensor<8xf32>, %gw: tensor<4x8xf32>, %gb: tensor<8xf32>, %mw: tensor<4x8xf32>, %mb: tensor<8xf32>, %vw: tensor<4x8xf32>, %vb: tensor<8xf32>) -> (tensor<f32>, tensor<4x8xf32>, tensor<8xf32>) {
  %u:7 = dlc.optimizer_update step(%s : tensor<f32>) params(%w, %b : tensor<4x8xf32>, tensor<8xf32>) grads(%gw, %gb : tensor<4x8xf32>, tensor<8xf32>) states(%mw, %mb, %vw, %vb : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) config {kind = #dlc.optimizer<adam>, lr = 1.0e-03 : f64, betas = [0.9, 0.999], eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  return %u#0, %u#1, %u#2 : tensor<f32>, tensor<4x8xf32>, tensor<8xf32>
}

// -----

// SGD with momentum: the first step (step count 0) takes the gradient as
// the momentum buffer.
// CHECK-LABEL: func.func @sgd
// CHECK: %[[FIRST:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic
// CHECK: arith.select %[[FIRST]]
func.func @sgd(%s: tensor<f32>, %w: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>) -> tensor<4xf32> {
  %u:3 = dlc.optimizer_update step(%s : tensor<f32>) params(%w : tensor<4xf32>) grads(%g : tensor<4xf32>) states(%m : tensor<4xf32>) config {kind = #dlc.optimizer<sgd>, lr = 1.0e-01 : f64, momentum = 0.9 : f64, dampening = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
  return %u#1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @gradient_ops
// relu: the gradient where the input is positive
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// cross-entropy: softmax minus the one-hot label column
// CHECK: linalg.index 1
// CHECK: arith.cmpi eq
// layer norm: input, weight and bias gradients
// CHECK: linalg.generic
// broadcast_to and scale are elementwise generics; fill is linalg.fill
// CHECK: linalg.fill
func.func @gradient_ops(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>, %y: tensor<4xi64>, %l: tensor<f32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) {
  %a = dlc.activation_grad %x, %g {activation = #dlc.activation<relu>} : tensor<4x8xf32>
  %c = dlc.cross_entropy_grad %x, %y, %l : (tensor<4x8xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x8xf32>
  %dx, %dw, %db = dlc.layer_norm_grad %x, %w, %g : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  %b = dlc.broadcast_to %w : (tensor<8xf32>) -> tensor<4x8xf32>
  %s = dlc.scale %g, 2.0 : tensor<4x8xf32>
  %f = dlc.fill 1.0 : tensor<f32>
  return %a, %c, %dx, %dw, %b, %s, %f : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>
}

// -----

// dlc.attention goes through its decomposition: q @ k^T and p @ v as
// batched matmuls on the flattened batch, the scale and the mask
// elementwise, the softmax's max/exp/sum reductions in between.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: dlc.
// CHECK: linalg.batch_matmul {{.*}} -> tensor<8x8x6xf32>
// CHECK: linalg.generic
// CHECK: linalg.batch_matmul {{.*}} -> tensor<8x8x32xf32>
// CHECK-NOT: dlc.
// CHECK: return
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %v: tensor<2x4x6x32xf32>, %m: tensor<8x6xf32>) -> tensor<2x4x8x32xf32> {
  %0 = dlc.attention %q, %k, %v, %m {scale = 0.25 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x32xf32>, tensor<8x6xf32>) -> tensor<2x4x8x32xf32>
  return %0 : tensor<2x4x8x32xf32>
}
