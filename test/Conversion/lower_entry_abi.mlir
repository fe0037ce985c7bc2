// RUN: dlc-opt %s -dlc-lower-entry-abi -split-input-file | FileCheck %s

// Parameters first, then inputs, then outputs, all as memrefs; returned
// tensors are written into the output buffers; the parameter declarations
// disappear.
// CHECK-NOT: dlc.parameter
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[W:.*]]: memref<2x4xf32> {dlc.name = "fc.weight", llvm.noalias},
// CHECK-SAME: %[[X:.*]]: memref<3x4xf32> {dlc.name = "x", llvm.noalias},
// CHECK-SAME: %[[OUT:.*]]: memref<3x2xf32> {dlc.name = "y", llvm.noalias})
// CHECK-NOT: ->
// CHECK-DAG: %[[WT:.*]] = bufferization.to_tensor %[[W]] restrict
// CHECK-DAG: %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict
// CHECK: %[[Y:.*]] = dlc.linear %[[XT]], %[[WT]]
// CHECK: bufferization.materialize_in_destination %[[Y]] in restrict writable %[[OUT]]
// CHECK-NEXT: return
dlc.parameter @fc.weight : tensor<2x4xf32> {init = #dlc.init<uniform>, bound = 0.5 : f64}
func.func @forward(%x: tensor<3x4xf32> {dlc.name = "x"}) -> (tensor<3x2xf32> {dlc.name = "y"}) attributes {dlc.entry} {
  %w = dlc.param @fc.weight : tensor<2x4xf32>
  %y = dlc.linear %x, %w : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Every entry takes every parameter, used or not, so that the runtime calls
// all entries the same way; one value returned twice fills both buffers.
// CHECK-LABEL: func.func @twice(
// CHECK-SAME: memref<4xf32> {dlc.name = "a", llvm.noalias}, %{{.*}}: memref<4xf32> {dlc.name = "b", llvm.noalias}, %[[X:.*]]: memref<4xf32> {dlc.name = "x", llvm.noalias}, %[[O1:.*]]: memref<4xf32> {dlc.name = "out0", llvm.noalias}, %[[O2:.*]]: memref<4xf32> {dlc.name = "out1", llvm.noalias})
// CHECK: bufferization.materialize_in_destination %[[V:.*]] in restrict writable %[[O1]]
// CHECK: bufferization.materialize_in_destination %[[V]] in restrict writable %[[O2]]
dlc.parameter @a : tensor<4xf32> {init = #dlc.init<ones>}
dlc.parameter @b : tensor<4xf32> {init = #dlc.init<zeros>}
func.func @twice(%x: tensor<4xf32> {dlc.name = "x"}) -> (tensor<4xf32>, tensor<4xf32>) attributes {dlc.entry} {
  %r = dlc.relu %x : tensor<4xf32>
  return %r, %r : tensor<4xf32>, tensor<4xf32>
}

// -----

// A training step: the parameters it assigns are writable views of their
// buffers, and each assignment writes into the parameter's own buffer.
dlc.parameter @w : tensor<4xf32> {init = #dlc.init<zeros>}
dlc.parameter @frozen : tensor<4xf32> {init = #dlc.init<ones>}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<4xf32> {dlc.name = "w", llvm.noalias}
// CHECK-SAME: %[[F:[a-z0-9]+]]: memref<4xf32> {dlc.name = "frozen", llvm.noalias}
// CHECK: bufferization.to_tensor %[[W]] restrict writable
// CHECK: bufferization.to_tensor %[[F]] restrict :
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %[[W]]
// CHECK-NOT: dlc.assign
func.func @train_step(%x: tensor<4xf32> {dlc.name = "x"}) -> (tensor<4xf32> {dlc.name = "loss"}) attributes {dlc.entry} {
  %w = dlc.param @w : tensor<4xf32>
  %f = dlc.param @frozen : tensor<4xf32>
  %n = dlc.add %w, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  dlc.assign @w, %n : tensor<4xf32>
  return %x : tensor<4xf32>
}
