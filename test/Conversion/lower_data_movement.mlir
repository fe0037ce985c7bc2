// RUN: dlc-opt %s -dlc-lower-to-linalg -split-input-file | FileCheck %s
// Lowering of the data-movement ops (lib/Conversion/DlcToLinalg/
// DataMovement.cpp: dlc.concat, dlc.slice, dlc.slice_grad, dlc.where,
// dlc.compare, dlc.logical, dlc.gather, dlc.gather_grad,
// dlc.gather_elements, dlc.gather_elements_grad, dlc.int_arith, dlc.cumsum; one linalg.generic over the result, reading
// its inputs at computed indices, every map an identity) and of dlc.max and
// its gradient (DlcToLinalg.cpp).

// concat: each input read at its clamped index, the right one selected by
// where the index lies.
// CHECK-LABEL: func.func @concat
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: tensor.extract %arg1
// CHECK: tensor.extract %arg0
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[J]], %c3
// CHECK: arith.select %[[LT]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = dlc.concat %a, %b {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// slice: result[j] = input[offset + j * stride], no strided view.
// CHECK-LABEL: func.func @slice
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[M:.*]] = arith.muli %[[J]], %c2
// CHECK: %[[I:.*]] = arith.addi %[[M]], %c4
// CHECK: tensor.extract %arg0[%{{.*}}, %[[I]]]
func.func @slice(%a: tensor<2x12xf32>) -> tensor<2x4xf32> {
  %0 = dlc.slice %a {offsets = array<i64: 0, 4>, strides = array<i64: 1, 2>} : (tensor<2x12xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// slice_grad: zero off the window and between its strides.
// CHECK-LABEL: func.func @slice_grad
// CHECK: arith.remsi
// CHECK: tensor.extract %arg0
// CHECK: arith.select %{{.*}}, %{{.*}}, %cst
func.func @slice_grad(%g: tensor<2x4xf32>) -> tensor<2x12xf32> {
  %0 = dlc.slice_grad %g {offsets = array<i64: 0, 4>, strides = array<i64: 1, 2>} : (tensor<2x4xf32>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

// -----

// where: the condition compared with zero, each operand read through its
// broadcast map.
// CHECK-LABEL: func.func @where
// CHECK: linalg.generic {indexing_maps = [#[[M:.*]], #{{.*}}, #{{.*}}, #{{.*}}]
// CHECK: arith.cmpf une
// CHECK: arith.select
func.func @where(%m: tensor<8x8xf32>, %a: tensor<f32>, %b: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %0 = dlc.where %m, %a, %b : (tensor<8x8xf32>, tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// -----

// gather: the index read, wrapped if negative and clamped into the table,
// then the row.
// CHECK-LABEL: func.func @gather
// CHECK: %[[I:.*]] = tensor.extract %arg1
// CHECK: arith.index_cast %[[I]]
// CHECK: arith.minsi
// CHECK: tensor.extract %arg0
func.func @gather(%w: tensor<50x4xf32>, %ids: tensor<2x8xi64>) -> tensor<2x8x4xf32> {
  %0 = dlc.gather %w, %ids : (tensor<50x4xf32>, tensor<2x8xi64>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

// gather_grad: a reduction over the positions, adding where the row matches
// (unplaced, and on CUDA: every table element is one thread's sum).
// CHECK-LABEL: func.func @gather_grad
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.cmpi eq
// CHECK: arith.addf
func.func @gather_grad(%g: tensor<2x8x4xf32>, %ids: tensor<2x8xi64>) -> tensor<50x4xf32> {
  %0 = dlc.gather_grad %g, %ids : (tensor<2x8x4xf32>, tensor<2x8xi64>) -> tensor<50x4xf32>
  return %0 : tensor<50x4xf32>
}

// -----

// On the CPU, a scatter-add: one loop over the 16 positions, each adding its
// gradient row to the row of the table its (clamped) index names.
// CHECK-LABEL: func.func @gather_grad_cpu
// CHECK: %[[IDS:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<2x8xi64> into tensor<16xi64>
// CHECK: %[[G:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x8x4xf32> into tensor<16x4xf32>
// CHECK: scf.for %[[P:.*]] = %c0 to %c16 step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<50x4xf32>)
// CHECK: tensor.extract %[[IDS]][%[[P]]] : tensor<16xi64>
// CHECK: arith.minsi
// CHECK: tensor.extract_slice %[[G]][%[[P]], 0] [1, 4] [1, 1]
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[ACC]]
// CHECK: arith.addf
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]]
// CHECK: scf.yield
func.func @gather_grad_cpu(%g: tensor<2x8x4xf32>, %ids: tensor<2x8xi64>) -> tensor<50x4xf32> {
  %0 = dlc.gather_grad %g, %ids {dlc.device = #dlc.device<cpu>} : (tensor<2x8x4xf32>, tensor<2x8xi64>) -> tensor<50x4xf32>
  return %0 : tensor<50x4xf32>
}

// -----

// max: a reduction from -inf with maximumf (NaN propagates); its gradient
// counts the ties of each group, then shares g among them.
// CHECK-LABEL: func.func @max_and_grad
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: %[[TIES:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.cmpf oeq
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}}, %arg1, %[[TIES]]
// CHECK: arith.divf
// CHECK: arith.select
func.func @max_and_grad(%x: tensor<4x6xf32>, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x6xf32>) {
  %m = dlc.max %x {dims = array<i64: 1>} : (tensor<4x6xf32>) -> tensor<4xf32>
  %d = dlc.extremum_grad %x, %m, %g {dims = array<i64: 1>} : (tensor<4x6xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x6xf32>
  return %m, %d : tensor<4xf32>, tensor<4x6xf32>
}

// -----

// On the CPU, concat copies each input once into its window of the result.
// CHECK-LABEL: func.func @concat_cpu
// CHECK: %[[D:.*]] = bufferization.alloc_tensor() : tensor<2x7xf32>
// CHECK: %[[W0:.*]] = tensor.extract_slice %[[D]][0, 0] [2, 3] [1, 1]
// CHECK: %[[C0:.*]] = linalg.copy ins(%arg0 : tensor<2x3xf32>) outs(%[[W0]] : tensor<2x3xf32>)
// CHECK: %[[D1:.*]] = tensor.insert_slice %[[C0]] into %[[D]][0, 0] [2, 3] [1, 1]
// CHECK: %[[W1:.*]] = tensor.extract_slice %[[D1]][0, 3] [2, 4] [1, 1]
// CHECK: %[[C1:.*]] = linalg.copy ins(%arg1 : tensor<2x4xf32>) outs(%[[W1]] : tensor<2x4xf32>)
// CHECK: %[[D2:.*]] = tensor.insert_slice %[[C1]] into %[[D1]][0, 3] [2, 4] [1, 1]
// CHECK: return %[[D2]]
func.func @concat_cpu(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x7xf32> {
  %0 = dlc.concat %a, %b {dim = 1 : i64, dlc.device = #dlc.device<cpu>} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}

// -----

// A concat of many inputs on the CPU joins them in groups of 32 first: the
// copies into one tensor grow the bufferization analysis faster than their
// number.
// CHECK-LABEL: func.func @concat_cpu_groups
// CHECK: bufferization.alloc_tensor() : tensor<32x2xf32>
// CHECK-COUNT-32: linalg.copy
// CHECK: bufferization.alloc_tensor() : tensor<33x2xf32>
// CHECK: linalg.copy ins(%{{.*}} : tensor<32x2xf32>)
// CHECK: linalg.copy ins(%arg32 : tensor<1x2xf32>)
func.func @concat_cpu_groups(%a0: tensor<1x2xf32>, %a1: tensor<1x2xf32>, %a2: tensor<1x2xf32>, %a3: tensor<1x2xf32>, %a4: tensor<1x2xf32>, %a5: tensor<1x2xf32>, %a6: tensor<1x2xf32>, %a7: tensor<1x2xf32>, %a8: tensor<1x2xf32>, %a9: tensor<1x2xf32>, %a10: tensor<1x2xf32>, %a11: tensor<1x2xf32>, %a12: tensor<1x2xf32>, %a13: tensor<1x2xf32>, %a14: tensor<1x2xf32>, %a15: tensor<1x2xf32>, %a16: tensor<1x2xf32>, %a17: tensor<1x2xf32>, %a18: tensor<1x2xf32>, %a19: tensor<1x2xf32>, %a20: tensor<1x2xf32>, %a21: tensor<1x2xf32>, %a22: tensor<1x2xf32>, %a23: tensor<1x2xf32>, %a24: tensor<1x2xf32>, %a25: tensor<1x2xf32>, %a26: tensor<1x2xf32>, %a27: tensor<1x2xf32>, %a28: tensor<1x2xf32>, %a29: tensor<1x2xf32>, %a30: tensor<1x2xf32>, %a31: tensor<1x2xf32>, %a32: tensor<1x2xf32>) -> tensor<33x2xf32> {
  %0 = dlc.concat %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8, %a9, %a10, %a11, %a12, %a13, %a14, %a15, %a16, %a17, %a18, %a19, %a20, %a21, %a22, %a23, %a24, %a25, %a26, %a27, %a28, %a29, %a30, %a31, %a32 {dim = 0 : i64, dlc.device = #dlc.device<cpu>} : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<33x2xf32>
  return %0 : tensor<33x2xf32>
}

// -----

// compare: ordered float comparisons, but ne (true for NaN); signed
// integers; logical ops on i1; an integer fill.
// CHECK-LABEL: func.func @masks
// CHECK: arith.cmpf oge
// CHECK: arith.cmpf une
// CHECK: arith.constant 3 : i64
// CHECK: linalg.fill
// CHECK: arith.cmpi slt
// CHECK: arith.andi
// CHECK: arith.xori
func.func @masks(%x: tensor<4x8xf32>, %z: tensor<8xf32>, %ids: tensor<4x8xi64>) -> tensor<4x8xi1> {
  %a = dlc.compare ge, %x, %z : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %b = dlc.compare ne, %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %three = dlc.fill 3.0 : tensor<i64>
  %c = dlc.compare lt, %ids, %three : (tensor<4x8xi64>, tensor<i64>) -> tensor<4x8xi1>
  %ab = dlc.logical and, %a, %b : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %r = dlc.logical xor, %ab, %c : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  return %r : tensor<4x8xi1>
}

// -----

// gather_elements: the index read at the result's position, wrapped if
// negative (ONNX: it counts from the end) and clamped, in place of the
// axis.
// CHECK-LABEL: func.func @gather_elements
// CHECK: %[[I:.*]] = tensor.extract %arg1
// CHECK: %[[R:.*]] = arith.index_cast %[[I]]
// CHECK: arith.cmpi slt, %[[R]]
// CHECK: arith.addi %[[R]], %c10
// CHECK: arith.minsi
// CHECK: tensor.extract %arg0[%{{.*}}, %{{.*}}] : tensor<4x10xf32>
func.func @gather_elements(%x: tensor<4x10xf32>, %i: tensor<4x3xi64>) -> tensor<4x3xf32> {
  %0 = dlc.gather_elements %x, %i {axis = 1 : i64} : (tensor<4x10xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// gather_elements_grad: a reduction along the axis (the last loop), adding
// where the index names the output's position.
// CHECK-LABEL: func.func @gather_elements_grad
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.index 1 : index
// CHECK: arith.cmpi eq
// CHECK: arith.select
func.func @gather_elements_grad(%g: tensor<4x3xf32>, %i: tensor<4x3xi64>) -> tensor<4x10xf32> {
  %0 = dlc.gather_elements_grad %g, %i {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x3xi64>) -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// int_arith: arith on integers; cumsum: a reduction over the axis of the
// elements up to the position (sle; exclusive: slt; reverse: sge/sgt).
// CHECK-LABEL: func.func @int_ops
// CHECK: arith.muli
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: %[[J:.*]] = linalg.index 2 : index
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: arith.cmpi sle, %[[J]], %[[I]]
// CHECK: arith.addi
// CHECK: arith.cmpi sgt
func.func @int_ops(%a: tensor<2x8xi32>) -> (tensor<2x8xi32>, tensor<2x8xi32>) {
  %m = dlc.int_arith mul, %a, %a : (tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi32>
  %c = dlc.cumsum %m {axis = 1 : i64} : tensor<2x8xi32>
  %r = dlc.cumsum %m {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x8xi32>
  return %c, %r : tensor<2x8xi32>, tensor<2x8xi32>
}
