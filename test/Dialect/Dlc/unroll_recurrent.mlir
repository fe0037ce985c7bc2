// RUN: dlc-opt %s -split-input-file --dlc-unroll-recurrent --canonicalize | FileCheck %s
// dlc-unroll-recurrent writes a recurrent layer's steps out with dlc ops
// (the CUDA pipeline's form). A reverse layer of 2 steps: step 1 first,
// from the initial states; its h feeds step 0's recurrent GEMM; the
// sequences are joined in step order.

// CHECK-LABEL: func.func @lstm
// CHECK-NOT: dlc.lstm
// CHECK: %[[R1:.*]] = dlc.linear %arg2, %arg1 : (tensor<3x2xf32>, tensor<8x2xf32>) -> tensor<3x8xf32>
// CHECK: %[[P1:.*]] = dlc.slice %arg0 {offsets = array<i64: 1, 0, 0>
// CHECK: %[[P1R:.*]] = dlc.reshape %[[P1]]
// CHECK: %[[A1:.*]] = dlc.add %[[P1R]], %[[R1]]
// CHECK: %[[I1:.*]] = dlc.slice %[[A1]] {offsets = array<i64: 0, 0>
// CHECK: dlc.sigmoid %[[I1]]
// CHECK: %[[F1:.*]] = dlc.slice %[[A1]] {offsets = array<i64: 0, 2>
// CHECK: dlc.sigmoid %[[F1]]
// CHECK: %[[G1:.*]] = dlc.slice %[[A1]] {offsets = array<i64: 0, 4>
// CHECK: dlc.tanh %[[G1]]
// CHECK: %[[O1:.*]] = dlc.slice %[[A1]] {offsets = array<i64: 0, 6>
// CHECK: %[[FC:.*]] = dlc.mul %{{.*}}, %arg3
// CHECK: %[[C1:.*]] = dlc.add %[[FC]], %{{.*}}
// CHECK: %[[H1:.*]] = dlc.mul %{{.*}}, %{{.*}} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK: dlc.linear %[[H1]], %arg1
// CHECK: dlc.slice %arg0 {offsets = array<i64: 0, 0, 0>
// CHECK: %[[Y:.*]] = dlc.concat %{{.*}}, %{{.*}} {dim = 0 : i64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<2x3x2xf32>
// CHECK: return %[[Y]]
func.func @lstm(%x: tensor<2x3x8xf32>, %w: tensor<8x2xf32>, %h: tensor<3x2xf32>, %c: tensor<3x2xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x8xf32>) {
  %y, %cs, %g = dlc.lstm %x, %w, %h, %c {reverse} : (tensor<2x3x8xf32>, tensor<8x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x8xf32>)
  return %y, %cs, %g : tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x8xf32>
}

// -----

// Backward, 2 forward steps: step 1 first (y's and c's gradients only),
// then step 0, which reads the initial c and leaves dh0 = dGates_0 W_hh
// and dc0 = dc_0 * f_0; each step's gate gradients are joined along the
// features.
// CHECK-LABEL: func.func @lstm_grad
// CHECK-NOT: dlc.lstm_grad
// CHECK: dlc.concat {{.*}} {dim = 1 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x8xf32>
// CHECK: dlc.matmul %{{.*}}, %arg2 : (tensor<3x8xf32>, tensor<8x2xf32>) -> tensor<3x2xf32>
// CHECK: dlc.mul %{{.*}}, %arg3
// CHECK: %[[D0:.*]] = dlc.concat {{.*}} {dim = 1 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x8xf32>
// CHECK: %[[CARRY:.*]] = dlc.mul
// CHECK: %[[DH0:.*]] = dlc.matmul %[[D0]], %arg2
// CHECK: %[[DG:.*]] = dlc.concat %{{.*}}, %{{.*}} {dim = 0 : i64} : (tensor<1x3x8xf32>, tensor<1x3x8xf32>) -> tensor<2x3x8xf32>
// CHECK: return %[[DG]], %[[DH0]], %[[CARRY]]
func.func @lstm_grad(%dy: tensor<2x3x2xf32>, %dc: tensor<2x3x2xf32>, %w: tensor<8x2xf32>, %c0: tensor<3x2xf32>, %c: tensor<2x3x2xf32>, %g: tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %a, %b, %d = dlc.lstm_grad %dy, %dc, %w, %c0, %c, %g : (tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<8x2xf32>, tensor<3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<3x2xf32>, tensor<3x2xf32>)
  return %a, %b, %d : tensor<2x3x8xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// A GRU of 2 steps: per step the recurrent pre-activations are one
// dlc.linear with the recurrent bias; the backward pass one dlc.matmul.
// CHECK-LABEL: func.func @gru
// CHECK-NOT: dlc.gru
// CHECK: dlc.linear %arg3, %arg1, %arg2 : (tensor<3x2xf32>, tensor<6x2xf32>, tensor<6xf32>) -> tensor<3x6xf32>
// CHECK-COUNT-3: dlc.add
// CHECK: %[[H0:.*]] = dlc.add %{{.*}}, %{{.*}} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: dlc.linear %[[H0]], %arg1, %arg2
// CHECK: dlc.concat {{.*}} {dim = 0 : i64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<2x3x2xf32>
// CHECK-LABEL: func.func @gru_grad
// CHECK-NOT: dlc.gru_grad
// CHECK-COUNT-2: dlc.matmul %{{.*}}, %arg1 : (tensor<3x6xf32>, tensor<6x2xf32>) -> tensor<3x2xf32>
func.func @gru(%x: tensor<2x3x6xf32>, %w: tensor<6x2xf32>, %b: tensor<6xf32>, %h: tensor<3x2xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x6xf32>) {
  %y, %g = dlc.gru %x, %w, %b, %h : (tensor<2x3x6xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<3x2xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x6xf32>)
  return %y, %g : tensor<2x3x2xf32>, tensor<2x3x6xf32>
}
func.func @gru_grad(%dy: tensor<2x3x2xf32>, %w: tensor<6x2xf32>, %h: tensor<3x2xf32>, %p: tensor<2x3x6xf32>, %y: tensor<2x3x2xf32>, %g: tensor<2x3x6xf32>) -> (tensor<2x3x6xf32>, tensor<2x3x6xf32>, tensor<3x2xf32>) {
  %a, %b, %c = dlc.gru_grad %dy, %w, %h, %p, %y, %g : (tensor<2x3x2xf32>, tensor<6x2xf32>, tensor<3x2xf32>, tensor<2x3x6xf32>, tensor<2x3x2xf32>, tensor<2x3x6xf32>) -> (tensor<2x3x6xf32>, tensor<2x3x6xf32>, tensor<3x2xf32>)
  return %a, %b, %c : tensor<2x3x6xf32>, tensor<2x3x6xf32>, tensor<3x2xf32>
}
