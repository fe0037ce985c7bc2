// RUN: dlc-opt %s -dlc-lower-to-linalg -split-input-file | FileCheck %s
// Lowering of the convolution, pooling and batch-norm ops
// (lib/Conversion/DlcToLinalg/Convolution.cpp, Pooling.cpp).

// A convolution with one group: the padded input's patches are gathered
// into [C*KH*KW, N, OH, OW] (only the patch index is divided) and collapsed
// to [C*KH*KW, N*OH*OW], the weight is collapsed to [O, C*KH*KW], one
// linalg.matmul computes [O, N*OH*OW], and the epilogue reads it transposed
// back to [N, O, OH*OW] with the bias and the ReLU.
// CHECK-DAG: #[[PATCH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0 floordiv 9, d2 * 2 + (d0 mod 9) floordiv 3, d3 * 2 + d0 mod 3)>
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1, d2) -> (d1, d0 * 16 + d2)>
// CHECK-LABEL: func.func @conv_gemm
// CHECK: %[[PAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x10x10xf32>)
// CHECK: %[[COL4:.*]] = linalg.generic {indexing_maps = [#[[PATCH]], {{.*}}]{{.*}} ins(%[[PAD]] : tensor<2x3x10x10xf32>) outs(%{{.*}} : tensor<27x2x4x4xf32>)
// CHECK: %[[COL:.*]] = tensor.collapse_shape %[[COL4]] {{\[\[}}0], [1, 2, 3]] : tensor<27x2x4x4xf32> into tensor<27x32xf32>
// CHECK: %[[W2:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0], [1, 2, 3]] : tensor<8x3x3x3xf32> into tensor<8x27xf32>
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[W2]], %[[COL]] : tensor<8x27xf32>, tensor<27x32xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[BACK]], {{.*}}]{{.*}} ins(%[[MM]], %arg2 : tensor<8x32xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<2x8x16xf32>)
// CHECK: arith.addf
// CHECK: arith.cmpf olt
// CHECK: tensor.expand_shape %[[Y]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 8, 4, 4]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @conv_gemm(%x: tensor<2x3x9x9xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<2x8x4x4xf32> {
  %0 = dlc.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>, activation = #dlc.activation<relu>} : (tensor<2x3x9x9xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  return %0 : tensor<2x8x4x4xf32>
}

// -----

// 2 x 7 x 7 = 98 output positions (no multiple of 16) and 32 channels: the
// GEMM is y^T = col^T w^T, whose columns are the channels. The patches are
// gathered as [N, OH, OW, C, KH, KW], with no subscript divided (collapsed
// to [98, 72]), the weight is collapsed and transposed to [C*KH*KW, O],
// and the epilogue reads y^T back.
// CHECK-DAG: #[[TPATCH:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
// CHECK-DAG: #[[TBACK:.*]] = affine_map<(d0, d1, d2) -> (d0 * 49 + d2, d1)>
// CHECK-LABEL: func.func @conv_channel_columns
// CHECK: %[[COL6:.*]] = linalg.generic {indexing_maps = [#[[TPATCH]], {{.*}}]{{.*}} outs(%{{.*}} : tensor<2x7x7x8x3x3xf32>)
// CHECK: %[[COL:.*]] = tensor.collapse_shape %[[COL6]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<2x7x7x8x3x3xf32> into tensor<98x72xf32>
// CHECK: %[[WC:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0], [1, 2, 3]] : tensor<32x8x3x3xf32> into tensor<32x72xf32>
// CHECK: %[[W2:.*]] = linalg.transpose ins(%[[WC]] : tensor<32x72xf32>) outs(%{{.*}} : tensor<72x32xf32>) permutation = [1, 0]
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[COL]], %[[W2]] : tensor<98x72xf32>, tensor<72x32xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[TBACK]], {{.*}}]{{.*}} ins(%[[MM]] : tensor<98x32xf32>) outs(%{{.*}} : tensor<2x32x49xf32>)
func.func @conv_channel_columns(%x: tensor<2x8x9x9xf32>, %w: tensor<32x8x3x3xf32>) -> tensor<2x32x7x7xf32> {
  %0 = dlc.conv2d %x, %w {activation = #dlc.activation<relu>} : (tensor<2x8x9x9xf32>, tensor<32x8x3x3xf32>) -> tensor<2x32x7x7xf32>
  return %0 : tensor<2x32x7x7xf32>
}

// -----

// A grouped convolution is one direct linalg.generic: output channel o
// reads the input channels of its group, (o floordiv 3) * 2 + ci.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 3) * 2 + d2, d3 + d5, d6 + d4 * 2)>
// CHECK-LABEL: func.func @conv_groups
// CHECK: linalg.generic {indexing_maps = [#[[IN]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
// CHECK-NOT: linalg.matmul
func.func @conv_groups(%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x7x5xf32> {
  %0 = dlc.conv2d %x, %w {groups = 2, dilations = array<i64: 1, 2>} : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x7x5xf32>
  return %0 : tensor<2x6x7x5xf32>
}

// -----

// The input gradient is a convolution of the gradient spread out by the
// strides (one guarded copy) with the flipped weight, channels swapped.
// CHECK-DAG: #[[FLIP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
// CHECK-LABEL: func.func @conv_grad_input
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8x11x11xf32>)
// CHECK: arith.remsi
// CHECK: linalg.generic {indexing_maps = [#[[FLIP]], {{.*}}]{{.*}} ins(%arg1 : tensor<8x3x3x3xf32>) outs(%{{.*}} : tensor<3x8x3x3xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x72xf32>, tensor<72x162xf32>)
func.func @conv_grad_input(%g: tensor<2x8x4x4xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<2x3x9x9xf32> {
  %0 = dlc.conv2d_grad_input %g, %w {strides = array<i64: 2, 2>} : (tensor<2x8x4x4xf32>, tensor<8x3x3x3xf32>) -> tensor<2x3x9x9xf32>
  return %0 : tensor<2x3x9x9xf32>
}

// -----

// The weight gradient: the gradient as [O, N*OH*OW] times the patches as
// [N*OH*OW, C*KH*KW], copied out to [O, C, KH, KW].
// CHECK-LABEL: func.func @conv_grad_weight
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<32x27xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<2x8x4x4xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x32xf32>, tensor<32x27xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[MM]] : tensor<8x27xf32>) outs(%{{.*}} : tensor<8x3x3x3xf32>)
func.func @conv_grad_weight(%x: tensor<2x3x9x9xf32>, %g: tensor<2x8x4x4xf32>) -> tensor<8x3x3x3xf32> {
  %0 = dlc.conv2d_grad_weight %x, %g {strides = array<i64: 2, 2>} : (tensor<2x3x9x9xf32>, tensor<2x8x4x4xf32>) -> tensor<8x3x3x3xf32>
  return %0 : tensor<8x3x3x3xf32>
}

// -----

// Max pooling with a small, strided window: one all-parallel generic over
// the result that reads each of the 2x2 taps as an operand and combines
// them in registers (a tap wins if larger or NaN); the padding is -inf.
// CHECK-DAG: #[[T00:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2, d3 * 2)>
// CHECK-DAG: #[[T01:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2, d3 * 2 + 1)>
// CHECK-DAG: #[[T10:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2 + 1, d3 * 2)>
// CHECK-DAG: #[[T11:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2 + 1, d3 * 2 + 1)>
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[XP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4x10x10xf32>)
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {indexing_maps = [#[[T00]], #[[T01]], #[[T10]], #[[T11]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[XP]], %[[XP]], %[[XP]], %[[XP]] :
// CHECK-COUNT-3: arith.cmpf ugt
// CHECK-NOT: arith.maximumf
// CHECK: return
func.func @max_pool(%x: tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32> {
  %0 = dlc.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
  return %0 : tensor<2x4x5x5xf32>
}

// -----

// Average pooling without the padding in the count: the sum of the 3x3
// taps (in registers), then a division by the number of window elements
// inside the input, computed from the position.
// CHECK-LABEL: func.func @avg_pool
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[P:[0-9]+]], %[[P]], %[[P]], %[[P]], %[[P]], %[[P]], %[[P]], %[[P]], %[[P]] :
// CHECK-COUNT-8: arith.addf
// CHECK: linalg.generic
// CHECK: linalg.index 2
// CHECK: arith.minsi
// CHECK: arith.divf
func.func @avg_pool(%x: tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32> {
  %0 = dlc.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
  return %0 : tensor<2x4x5x5xf32>
}

// -----

// A window with a stride of 1 stays a reduction over the taps (its first
// tap's map would be a plain dimension, from which linalg would take the
// loop extent).
// CHECK-LABEL: func.func @max_pool_stride1
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]
// CHECK: arith.cmpf ugt
func.func @max_pool_stride1(%x: tensor<2x4x9x9xf32>) -> tensor<2x4x8x8xf32> {
  %0 = dlc.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// Batch norm: per channel alpha = scale / sqrt(var + eps) and beta = bias -
// mean * alpha, then one elementwise x * alpha + beta.
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @batch_norm
// CHECK: %[[AB:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK: math.sqrt
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[CH]], #[[CH]], #{{.*}}]{{.*}} ins(%arg0, %[[AB]]#0, %[[AB]]#1 : tensor<2x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @batch_norm(%x: tensor<2x4x9x9xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x4x9x9xf32> {
  %0 = dlc.batch_norm %x, %s, %b, %m, %v : (tensor<2x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x9x9xf32>
  return %0 : tensor<2x4x9x9xf32>
}

// -----

// The pool gradients gather (no two iterations write one element): the
// max pool's first recomputes each window's winning tap.
// CHECK-LABEL: func.func @pool_grads
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2x4x4x4xf32>, tensor<2x4x4x4xi32>)
// CHECK-DAG: arith.cmpf uno
// CHECK-DAG: arith.cmpf ogt
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: tensor.extract
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.divf
func.func @pool_grads(%x: tensor<2x4x8x8xf32>, %g: tensor<2x4x4x4xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) {
  %0 = dlc.max_pool2d_grad %x, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x8x8xf32>
  %1 = dlc.avg_pool2d_grad %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>) -> tensor<2x4x8x8xf32>
  return %0, %1 : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}

// -----

// At most 16 input taps (C*KH*KW = 1*2*2): a direct convolution. Each tap
// is a strided view of the padded input, each weight element a scalar read
// through constant indices; one all-parallel generic sums the products in
// registers (no im2col buffer, no matmul); the epilogue adds the bias.
// CHECK-LABEL: func.func @conv_direct
// CHECK-NOT: linalg.matmul
// CHECK: %[[S0:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 1, 3, 3] [1, 1, 2, 2] : tensor<2x1x7x7xf32> to tensor<2x1x3x3xf32>
// CHECK: %[[T0:.*]] = tensor.collapse_shape %[[S0]] {{\[\[}}0, 1], [2], [3]] : tensor<2x1x3x3xf32> into tensor<2x3x3xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 1] [2, 1, 3, 3] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 1, 0] [2, 1, 3, 3] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 1, 1] [2, 1, 3, 3] [1, 1, 2, 2]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[T0]], %arg1, {{.*}} outs(%{{.*}} : tensor<2x4x3x3xf32>)
// CHECK-COUNT-4: arith.mulf
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @conv_direct(%x: tensor<2x1x5x5xf32>, %w: tensor<4x1x2x2xf32>, %b: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %0 = dlc.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x1x5x5xf32>, tensor<4x1x2x2xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  return %0 : tensor<2x4x3x3xf32>
}

// -----

// A direct convolution to a 1x1 (or 1-high) output: the stride along a
// dimension of one output is never taken and the tap's view gets stride 1
// there; the channel is dropped by a collapse, not by a rank-reducing
// slice. With unit dimensions besides the channel, MLIR 22's
// SubViewOp::getDroppedDims crashed (or ran out of memory) on the reduced
// view while compiling.
// CHECK-LABEL: func.func @conv_direct_one_output
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 1, 1, 1] [1, 1, 1, 1] : tensor<2x2x1x1xf32> to tensor<2x1x1x1xf32>
// CHECK: tensor.collapse_shape %[[S]] {{\[\[}}0, 1], [2], [3]] : tensor<2x1x1x1xf32> into tensor<2x1x1xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 1, 0, 0] [2, 1, 1, 1] [1, 1, 1, 1] : tensor<2x2x1x1xf32> to tensor<2x1x1x1xf32>
// CHECK-LABEL: func.func @conv_direct_one_row
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 1, 1, 3] [1, 1, 1, 2] : tensor<2x1x1x5xf32> to tensor<2x1x1x3xf32>
func.func @conv_direct_one_output(%x: tensor<2x2x1x1xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<2x2x1x1xf32> {
  %0 = dlc.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<2x2x1x1xf32>, tensor<2x2x1x1xf32>) -> tensor<2x2x1x1xf32>
  return %0 : tensor<2x2x1x1xf32>
}
func.func @conv_direct_one_row(%x: tensor<2x1x1x5xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<2x2x1x3xf32> {
  %0 = dlc.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<2x1x1x5xf32>, tensor<2x1x1x1xf32>) -> tensor<2x2x1x3xf32>
  return %0 : tensor<2x2x1x3xf32>
}
