// RUN: dlc-opt %s -dlc-place-devices=device=cuda -split-input-file | FileCheck %s --check-prefix=CUDA
// RUN: dlc-opt %s -dlc-place-devices=device=cpu -split-input-file | FileCheck %s --check-prefix=CPU

// Parameters live on the compute device; inputs cross once at the top of
// the entry, results once before the return; nothing else moves.
// CUDA: dlc.parameter @w : tensor<2x8xf32> {{.*}}dlc.device = #dlc.device<cuda>
// CUDA-LABEL: func.func @forward
// CUDA-SAME: (%[[X:arg[0-9]+]]: tensor<4x8xf32> {dlc.device = #dlc.device<host>, dlc.name = "x"}
// CUDA-SAME: %{{.*}}: tensor<4x8xf32> {dlc.device = #dlc.device<host>, dlc.name = "unused"})
// CUDA-SAME: -> (tensor<4x2xf32> {dlc.device = #dlc.device<host>, dlc.name = "y"})
// CUDA-NEXT: %[[XD:.*]] = dlc.transfer %[[X]] to <cuda> : tensor<4x8xf32>
// CUDA-NOT: dlc.transfer
// CUDA: %[[W:.*]] = dlc.param @w {dlc.device = #dlc.device<cuda>}
// CUDA: %[[Y:.*]] = dlc.linear %[[XD]], %[[W]] {dlc.device = #dlc.device<cuda>}
// CUDA: %[[R:.*]] = dlc.relu %[[Y]] {dlc.device = #dlc.device<cuda>}
// CUDA-NEXT: %[[YH:.*]] = dlc.transfer %[[R]] to <host> : tensor<4x2xf32>
// CUDA-NEXT: return %[[YH]]

// The CPU reads host memory: the same placement without a transfer.
// CPU: dlc.parameter @w : tensor<2x8xf32> {{.*}}dlc.device = #dlc.device<cpu>
// CPU-LABEL: func.func @forward
// CPU-SAME: {dlc.device = #dlc.device<host>, dlc.name = "x"}
// CPU-NOT: dlc.transfer
// CPU: dlc.linear {{.*}} {dlc.device = #dlc.device<cpu>}
// CPU: dlc.relu {{.*}} {dlc.device = #dlc.device<cpu>}
// CPU-NOT: dlc.transfer
// CPU: return
module {
  dlc.parameter @w : tensor<2x8xf32> {bound = 0.1 : f64, init = #dlc.init<uniform>}
  func.func @forward(%x: tensor<4x8xf32> {dlc.name = "x"}, %u: tensor<4x8xf32> {dlc.name = "unused"}) -> (tensor<4x2xf32> {dlc.name = "y"}) attributes {dlc.entry} {
    %w = dlc.param @w : tensor<2x8xf32>
    %y = dlc.linear %x, %w : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x2xf32>
    %r = dlc.relu %y : tensor<4x2xf32>
    return %r : tensor<4x2xf32>
  }
}

// -----

// A training step: the update is written back on the device (no transfer
// for the assign); the loss goes to the host. A helper that is not an entry
// point stays unplaced.
// CUDA-LABEL: func.func @train_step
// CUDA-SAME: (%[[X:arg[0-9]+]]: tensor<4xf32> {dlc.device = #dlc.device<host>
// CUDA-SAME: %[[T:arg[0-9]+]]: tensor<4xf32> {dlc.device = #dlc.device<host>
// CUDA-NEXT: %[[XD:.*]] = dlc.transfer %[[X]] to <cuda>
// CUDA-NEXT: %[[TD:.*]] = dlc.transfer %[[T]] to <cuda>
// CUDA: %[[L:.*]] = dlc.mse_loss %{{.*}}, %[[TD]] {dlc.device = #dlc.device<cuda>}
// CUDA: dlc.assign @b, %{{.*}} {dlc.device = #dlc.device<cuda>}
// CUDA-NEXT: %[[LH:.*]] = dlc.transfer %[[L]] to <host> : tensor<f32>
// CUDA-NEXT: return %[[LH]]
// CUDA-LABEL: func.func @helper
// CUDA-NOT: dlc.device
// CUDA: return
module {
  dlc.parameter @b : tensor<4xf32> {init = #dlc.init<zeros>}
  func.func @train_step(%x: tensor<4xf32> {dlc.name = "x"}, %t: tensor<4xf32> {dlc.name = "t"}) -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.entry} {
    %b = dlc.param @b : tensor<4xf32>
    %y = dlc.add %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %l = dlc.mse_loss %y, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %nb = dlc.sub %b, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    dlc.assign @b, %nb : tensor<4xf32>
    return %l : tensor<f32>
  }
  func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = dlc.relu %x : tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
