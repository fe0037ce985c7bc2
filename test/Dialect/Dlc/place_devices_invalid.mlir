// RUN: dlc-opt %s -split-input-file -verify-diagnostics

// The compile-time form of "Expected all tensors to be on the same device":
// a host input read by an op on the GPU.
// expected-note @+1 {{the value is defined here; move it with 'dlc.transfer ... to <cuda>', or let dlc-place-devices place the whole entry}}
func.func @forward(%x: tensor<4x8xf32> {dlc.device = #dlc.device<host>, dlc.name = "x"}) -> tensor<4x8xf32> attributes {dlc.entry} {
  // expected-error @+1 {{'dlc.relu' op operand #0 (argument #0 'x') is on host but the op runs on cuda}}
  %y = dlc.relu %x {dlc.device = #dlc.device<cuda>} : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A GPU value read on the host side.
func.func @back(%x: tensor<4xf32> {dlc.device = #dlc.device<host>}) -> tensor<4xf32> {
  // expected-note @+1 {{the value is defined here; move it with 'dlc.transfer ... to <cpu>'}}
  %d = dlc.transfer %x to <cuda> : tensor<4xf32>
  // expected-error @+1 {{'dlc.add' op operand #1 (the result of 'dlc.transfer') is on cuda but the op runs on cpu}}
  %y = dlc.add %x, %d {dlc.device = #dlc.device<cpu>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A parameter on the GPU read by the CPU.
dlc.parameter @w : tensor<4xf32> {dlc.device = #dlc.device<cuda>, init = #dlc.init<zeros>}
func.func @param_elsewhere() -> tensor<4xf32> {
  // expected-error @+1 {{'dlc.param' op accesses parameter @w, which lives on cuda, from cpu}}
  %w = dlc.param @w {dlc.device = #dlc.device<cpu>} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// Two devices' values in one op: the message names the parameter.
dlc.parameter @v : tensor<4xf32> {dlc.device = #dlc.device<cuda>, init = #dlc.init<zeros>}
func.func @mixed(%x: tensor<4xf32> {dlc.device = #dlc.device<cpu>}) -> tensor<4xf32> {
  // expected-note @+1 {{the value is defined here}}
  %v = dlc.param @v {dlc.device = #dlc.device<cuda>} : tensor<4xf32>
  // expected-error @+1 {{operand #1 (the result of 'dlc.param' @v) is on cuda but the op runs on cpu}}
  %y = dlc.mul %x, %v {dlc.device = #dlc.device<cpu>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Host and cpu share one memory: a transfer between them is a mistake.
func.func @useless(%x: tensor<4xf32> {dlc.device = #dlc.device<host>}) -> tensor<4xf32> {
  // expected-error @+1 {{moves a value that is already on host to cpu, which reads the same memory}}
  %y = dlc.transfer %x to <cpu> : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A transfer takes its device from its own attribute.
func.func @transfer_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{takes its device from its 'device' attribute, not from 'dlc.device'}}
  %y = dlc.transfer %x to <cuda> {dlc.device = #dlc.device<cuda>} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @bad_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dlc.device' must be a #dlc.device<...>, not "cuda"}}
  %y = dlc.relu %x {dlc.device = "cuda"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0: 'dlc.device' must be a #dlc.device<...>}}
func.func @bad_arg_attr(%x: tensor<4xf32> {dlc.device = 1 : i32}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
