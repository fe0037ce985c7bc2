// RUN: dlc-opt %s -dlc-prepare-entries -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-prepare-entries="prefix=false suffix=_cuda" -split-input-file | FileCheck %s --check-prefix=CUDA

// The entries take their object symbols (the model's name from dlc.model),
// the model's own loss function goes, a helper becomes private.
// CHECK-LABEL: module attributes {dlc.model = "mlp"}
// CHECK: func.func private @helper
// CHECK: func.func @dlc_mlp_forward(
// CHECK-SAME: attributes {dlc.entry}
// CHECK: call @helper
// CHECK-NOT: @loss
// CHECK: func.func @dlc_mlp_train_step(
// With prefix=false only the suffix is added (the CUDA half of a lowered
// module).
// CUDA: func.func @forward_cuda(
// CUDA: func.func @train_step_cuda(
module attributes {dlc.model = "mlp"} {
  func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.entry} {
    %y = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
  func.func @loss(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.loss} {
    return %x : tensor<4xf32>
  }
  func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.entry} {
    return %x : tensor<4xf32>
  }
}

// -----

// Without dlc.model, the module's name, else "model".
// CHECK-LABEL: module @named
// CHECK: func.func @dlc_named_forward(
module @named {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.entry} {
    return %x : tensor<4xf32>
  }
}

// -----

// CHECK: func.func @dlc_model_forward(
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.entry} {
    return %x : tensor<4xf32>
  }
}
