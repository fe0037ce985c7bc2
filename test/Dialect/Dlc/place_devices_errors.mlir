// RUN: not dlc-opt %s -dlc-place-devices=device=cuda -dlc-place-devices=device=cuda 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not dlc-opt %s -dlc-place-devices=device=tpu 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not dlc-opt %s -dlc-place-devices=device=host 2>&1 | FileCheck %s --check-prefix=HOST

// TWICE: error: 'func.func' op is already placed on devices; hint: run dlc-place-devices once, on an unplaced module
// OPTION: error: dlc-place-devices: unknown compute device 'tpu'; expected 'cpu' or 'cuda'
// HOST: error: dlc-place-devices: unknown compute device 'host'; expected 'cpu' or 'cuda'
func.func @forward(%x: tensor<4xf32> {dlc.name = "x"}) -> tensor<4xf32> attributes {dlc.entry} {
  %y = dlc.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
