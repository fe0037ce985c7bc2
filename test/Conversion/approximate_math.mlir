// RUN: dlc-opt %s -dlc-approximate-math | FileCheck %s

// No call into libm survives: erf, exp, log and tanh become polynomials.
// CHECK-LABEL: func.func @transcendentals
// CHECK-NOT: math.erf
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK-NOT: math.tanh
// CHECK: arith.mulf
// CHECK: return
func.func @transcendentals(%x: f32) -> (f32, f32, f32, f32) {
  %0 = math.erf %x : f32
  %1 = math.exp %x : f32
  %2 = math.log %x : f32
  %3 = math.tanh %x : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}
