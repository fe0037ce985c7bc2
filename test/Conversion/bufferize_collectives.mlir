// RUN: dlc-opt %s --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s

// dlc.all_reduce reduces its operands' buffers in place: no copy when the
// operand is not read again, a copy when it is.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[X:.*]]: memref<8xf32
// CHECK-NOT: memref.copy
// CHECK: dlc.all_reduce %[[X]] : memref<8xf32
// CHECK: return %[[X]]
func.func @in_place(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = dlc.all_reduce %x {reduction = #dlc.reduction<mean>} : tensor<8xf32>
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @read_again(
// CHECK: %[[C:.*]] = memref.alloc
// CHECK: memref.copy %{{.*}}, %[[C]]
// CHECK: dlc.all_reduce %[[C]] {reduction = #dlc.reduction<sum>}
func.func @read_again(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r = dlc.all_reduce %x {reduction = #dlc.reduction<sum>} : tensor<8xf32>
  return %r, %x : tensor<8xf32>, tensor<8xf32>
}
