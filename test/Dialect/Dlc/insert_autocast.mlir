// RUN: dlc-opt %s -split-input-file --dlc-insert-autocast | FileCheck %s
// RUN: dlc-opt %s -split-input-file --dlc-insert-autocast=precision=fp16 | FileCheck %s --check-prefix=FP16
// RUN: dlc-opt %s -split-input-file --dlc-insert-autocast --canonicalize --cse | FileCheck %s --check-prefix=CANON

// Linear layers compute in bf16: the input and every fp32 weight are cast
// (once: the weight read twice is cast once), the layers' results stay
// bf16, the ReLU between them follows its bf16 operand, log_softmax widens
// back to fp32, and the result leaves in its declared type.
// CHECK-LABEL: func.func @mlp
// CHECK: %[[X:.*]] = dlc.cast %arg0 : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: %[[W:.*]] = dlc.param @w : tensor<8x8xf32>
// CHECK-NEXT: %[[WL:.*]] = dlc.cast %[[W]] : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK-NOT: dlc.cast %[[W]]
// CHECK: %[[H:.*]] = dlc.linear %[[X]], %[[WL]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// CHECK: %[[R:.*]] = dlc.relu %[[H]] : tensor<4x8xbf16>
// CHECK: %[[H2:.*]] = dlc.linear %[[R]], %[[WL]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// CHECK: %[[H2F:.*]] = dlc.cast %[[H2]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: %[[L:.*]] = dlc.log_softmax %[[H2F]] {dim = 1 : i64} : tensor<4x8xf32>
// CHECK: return %[[L]] : tensor<4x8xf32>
// FP16-LABEL: func.func @mlp
// FP16: dlc.linear {{.*}} -> tensor<4x8xf16>
func.func @mlp(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = dlc.param @w : tensor<8x8xf32>
  %h = dlc.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = dlc.relu %h : tensor<4x8xf32>
  %h2 = dlc.linear %r, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = dlc.log_softmax %h2 {dim = 1 : i64} : tensor<4x8xf32>
  return %l : tensor<4x8xf32>
}
dlc.parameter @w : tensor<8x8xf32> {init = #dlc.init<uniform>, bound = 0.3 : f64}

// -----

// Elementwise ops follow their operands: bf16 with bf16 stays bf16, bf16
// with fp32 computes in fp32. Reductions, exp and losses are fp32. A result
// already in bf16 that is returned as bf16 needs no cast.
// CHECK-LABEL: func.func @policy
// CHECK: %[[M:.*]] = dlc.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK: %[[A:.*]] = dlc.add %[[M]], %[[M]] : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
// CHECK: %[[AF:.*]] = dlc.cast %[[A]] : tensor<4x4xbf16> to tensor<4x4xf32>
// CHECK: %[[B:.*]] = dlc.mul %[[AF]], %arg1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[E:.*]] = dlc.exp %[[AF]] : tensor<4x4xf32>
// CHECK: dlc.sum %[[E]]
// CHECK: dlc.mse_loss %[[B]], %arg1
// CANON-LABEL: func.func @policy
// CANON-COUNT-2: dlc.cast
// CANON-NOT: dlc.cast
func.func @policy(%x: tensor<4x4xf32>, %t: tensor<4x4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %m = dlc.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = dlc.add %m, %m : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = dlc.mul %a, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = dlc.exp %a : tensor<4x4xf32>
  %s = dlc.sum %e {dims = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4xf32>
  %l = dlc.mse_loss %b, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<f32>
  return %l, %s : tensor<f32>, tensor<4xf32>
}

// -----

// erf is not on PyTorch's autocast lists: it follows its operand, bf16 from
// a bf16 matmul.
// CHECK-LABEL: func.func @erf_follows
// CHECK: %[[M:.*]] = dlc.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK: %[[E:.*]] = dlc.erf %[[M]] : tensor<4x4xbf16>
// CHECK: dlc.cast %[[E]] : tensor<4x4xbf16> to tensor<4x4xf32>
// CANON-LABEL: func.func @erf_follows
func.func @erf_follows(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = dlc.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = dlc.erf %m : tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}

// -----

// Casts that cancel: widening and narrowing back folds; narrowing and
// widening back rounds, so it stays.
// CANON-LABEL: func.func @round_trips
// CANON-NEXT: %[[N:.*]] = dlc.cast %arg1 : tensor<4xf32> to tensor<4xbf16>
// CANON-NEXT: %[[W:.*]] = dlc.cast %[[N]] : tensor<4xbf16> to tensor<4xf32>
// CANON-NEXT: return %arg0, %[[W]]
func.func @round_trips(%a: tensor<4xbf16>, %b: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf32>) {
  %w = dlc.cast %a : tensor<4xbf16> to tensor<4xf32>
  %a2 = dlc.cast %w : tensor<4xf32> to tensor<4xbf16>
  %n = dlc.cast %b : tensor<4xf32> to tensor<4xbf16>
  %b2 = dlc.cast %n : tensor<4xbf16> to tensor<4xf32>
  return %a2, %b2 : tensor<4xbf16>, tensor<4xf32>
}

// -----

// The image ops compute in fp32: a 16-bit operand (a linear layer's result)
// is widened for them. The pass left them alone before, and a pool then
// read bf16 into an fp32 result, which its verifier rejects.
// CHECK-LABEL: func.func @image_ops
// CHECK: %[[H:.*]] = dlc.linear {{.*}} -> tensor<1x2x4x4xbf16>
// CHECK: %[[HF:.*]] = dlc.cast %[[H]] : tensor<1x2x4x4xbf16> to tensor<1x2x4x4xf32>
// CHECK: dlc.avg_pool2d %[[HF]] {{.*}} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
// CHECK: dlc.max_pool2d %[[HF]] {{.*}} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
// CHECK: dlc.conv2d %[[HF]], %{{.*}} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK: dlc.batch_norm %[[HF]], {{.*}} -> tensor<1x2x4x4xf32>
func.func @image_ops(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x3x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = dlc.param @w : tensor<4x4xf32>
  %k = dlc.param @k : tensor<3x2x1x1xf32>
  %s = dlc.param @s : tensor<2xf32>
  %h = dlc.linear %x, %w : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = dlc.avg_pool2d %h {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %m = dlc.max_pool2d %h {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %c = dlc.conv2d %h, %k : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %b = dlc.batch_norm %h, %s, %s, %s, %s : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %a, %m, %c, %b : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x3x4x4xf32>, tensor<1x2x4x4xf32>
}
dlc.parameter @w : tensor<4x4xf32> {init = #dlc.init<uniform>, bound = 0.5 : f64}
dlc.parameter @k : tensor<3x2x1x1xf32> {init = #dlc.init<uniform>, bound = 0.5 : f64}
dlc.parameter @s : tensor<2xf32> {init = #dlc.init<ones>}
