// RUN: dlc-opt %s --split-input-file --dlc-fold-bias-into-matmul --canonicalize | FileCheck %s

// A linear with bias and relu: the accumulator starts from the bias in
// every row; the epilogue keeps only the relu.
// CHECK-LABEL: func.func @bias_relu
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>, %[[W:.*]]: tensor<6x5xf32>, %[[B:.*]]: tensor<5xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[ROWS:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<5xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ROWS]] : tensor<4x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Y]] : tensor<4x5xf32>)
// CHECK-NOT: arith.addf
// CHECK: arith.maximumf
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @bias_relu(%x: tensor<4x6xf32>, %w: tensor<6x5xf32>, %b: tensor<5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x5xf32>) outs(%acc : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b : tensor<4x5xf32>, tensor<5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %c, %a : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// Bias alone: the epilogue becomes a copy that canonicalization removes;
// the rows of a recurrent layer's projection are split into steps first.
// CHECK-LABEL: func.func @projection
// CHECK: %[[ROWS:.*]] = linalg.generic
// CHECK: %[[Y:.*]] = linalg.matmul {{.*}} outs(%[[ROWS]] : tensor<6x5xf32>)
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[Y]]
// CHECK-NEXT: return %[[E]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last = affine_map<(d0, d1, d2) -> (d2)>
func.func @projection(%x: tensor<6x4xf32>, %w: tensor<4x5xf32>, %b: tensor<5xf32>) -> tensor<3x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %y = linalg.matmul ins(%x, %w : tensor<6x4xf32>, tensor<4x5xf32>) outs(%acc : tensor<6x5xf32>) -> tensor<6x5xf32>
  %s = tensor.expand_shape %y [[0, 1], [2]] output_shape [3, 2, 5] : tensor<6x5xf32> into tensor<3x2x5xf32>
  %e3 = tensor.empty() : tensor<3x2x5xf32>
  %r = linalg.generic {indexing_maps = [#id3, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %b : tensor<3x2x5xf32>, tensor<5xf32>) outs(%e3 : tensor<3x2x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<3x2x5xf32>
  return %r : tensor<3x2x5xf32>
}

// -----

// Left alone: an accumulator that is not zero, a bias broadcast along the
// wrong dimension, and a matmul whose result is read twice.
// CHECK-LABEL: func.func @not_folded
// CHECK: linalg.fill
// CHECK: linalg.fill
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK: arith.addf
// CHECK: linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK: arith.addf
// CHECK: linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK: arith.addf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
#row2 = affine_map<(d0, d1) -> (d1)>
func.func @not_folded(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = linalg.fill ins(%one : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y1 = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%o : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r1 = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y1, %b : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %u: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  %y2 = linalg.matmul ins(%w, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r2 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y2, %b : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %u: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  %y3 = linalg.matmul ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r3 = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y3, %b : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %u: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  return %r1, %r2, %r3, %y3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A bias computed after the matmul cannot start its accumulators.
// CHECK-LABEL: func.func @bias_after_matmul
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: arith.negf
// CHECK: arith.addf
#idb = affine_map<(d0, d1) -> (d0, d1)>
#rowb = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>
func.func @bias_after_matmul(%x: tensor<4x6xf32>, %w: tensor<6x5xf32>, %b: tensor<5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x5xf32>) outs(%acc : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e1 = tensor.empty() : tensor<5xf32>
  %nb = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%b : tensor<5xf32>) outs(%e1 : tensor<5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<5xf32>
  %r = linalg.generic {indexing_maps = [#idb, #rowb, #idb], iterator_types = ["parallel", "parallel"]}
      ins(%y, %nb : tensor<4x5xf32>, tensor<5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
