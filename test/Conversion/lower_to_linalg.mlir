// RUN: dlc-opt %s -dlc-lower-to-linalg -split-input-file | FileCheck %s

// A linear with a fused ReLU: the weight is transposed to [in, out], the
// matmul accumulates into a zero-filled tensor, and bias + ReLU are one
// elementwise epilogue.
// CHECK-LABEL: func.func @linear_relu
// CHECK: %[[WT:.*]] = linalg.transpose ins(%arg1 : tensor<8x16xf32>) outs(%{{.*}} : tensor<16x8xf32>) permutation = [1, 0]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[MM:.*]] = linalg.matmul ins(%arg0, %[[WT]] : tensor<4x16xf32>, tensor<16x8xf32>) outs(%[[ACC]]
// CHECK: linalg.generic {{.*}} ins(%[[MM]], %arg2 : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear_relu(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = dlc.linear %x, %w, %b {activation = "relu"} : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
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

// Softmax subtracts the row maximum before exponentiating.
// CHECK-LABEL: func.func @softmax
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax(%a: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = dlc.softmax %a {dim = 1 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// Cross-entropy: log-sum-exp per row, minus the logit of the (clamped) label.
// CHECK-LABEL: func.func @cross_entropy
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: arith.index_cast
// CHECK: tensor.extract %arg0
// CHECK: math.log
// CHECK: arith.constant 2.500000e-01 : f32
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

// Parameters are left for dlc-lower-entry-abi.
// CHECK-LABEL: func.func @keeps_params
// CHECK: dlc.param @w
dlc.parameter @w : tensor<4xf32> {init = "ones"}
func.func @keeps_params(%a: tensor<4xf32>) -> tensor<4xf32> {
  %w = dlc.param @w : tensor<4xf32>
  %0 = dlc.gelu %w : tensor<4xf32>
  return %0 : tensor<4xf32>
}
