// RUN: dlc-opt %s -dlc-pack-weights=max-mib=1 -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-pack-weights=max-mib=0 -split-input-file | FileCheck %s --check-prefix=NONE

// A linear layer of more than 4 rows reads its weight as [K, N]: the
// forward pass reads a packed W^T (transposed back, which the lowering
// folds), pack_weights computes it once. A weight read twice (tied) is
// packed once; the training step, which writes the weights, keeps them.
// CHECK-LABEL: module @mlp
// CHECK: dlc.parameter @fc.weight : tensor<16x8xf32>
// CHECK: dlc.parameter @fc.bias
// CHECK: dlc.parameter @fc.weight.packed : tensor<8x16xf32> {init = #dlc.init<zeros>, role = #dlc.role<packed>}
// CHECK-NOT: dlc.parameter
// CHECK-LABEL: func.func @forward
// CHECK: %[[P:.*]] = dlc.param @fc.weight.packed : tensor<8x16xf32>
// CHECK: %[[W:.*]] = dlc.transpose %[[P]] [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
// CHECK: dlc.linear %arg0, %[[W]], %{{.*}} : (tensor<32x8xf32>, tensor<16x8xf32>, tensor<16xf32>)
// CHECK: %[[W2:.*]] = dlc.transpose %[[P]] [1, 0]
// CHECK: dlc.linear %{{.*}}, %[[W2]] : (tensor<32x8xf32>, tensor<16x8xf32>)
// CHECK-NOT: dlc.param @fc.weight :
// CHECK-LABEL: func.func @train_step
// CHECK: dlc.param @fc.weight : tensor<16x8xf32>
// CHECK-NOT: packed
// CHECK: dlc.assign @fc.weight
// CHECK-LABEL: func.func @pack_weights() attributes {dlc.entry, dlc.pack_weights}
// CHECK-NEXT: %[[W:.*]] = dlc.param @fc.weight : tensor<16x8xf32>
// CHECK-NEXT: %[[T:.*]] = dlc.transpose %[[W]] [1, 0] : (tensor<16x8xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: dlc.assign @fc.weight.packed, %[[T]] : tensor<8x16xf32>
// CHECK-NEXT: return
// NONE-LABEL: module @mlp
// NONE-NOT: packed
// NONE-NOT: pack_weights
module @mlp {
  dlc.parameter @fc.weight : tensor<16x8xf32> {init = #dlc.init<ones>}
  dlc.parameter @fc.bias : tensor<16xf32> {init = #dlc.init<zeros>}
  func.func @forward(%x: tensor<32x8xf32>) -> tensor<32x16xf32> attributes {dlc.entry} {
    %w = dlc.param @fc.weight : tensor<16x8xf32>
    %b = dlc.param @fc.bias : tensor<16xf32>
    %y = dlc.linear %x, %w, %b : (tensor<32x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<32x16xf32>
    %s = dlc.slice %y {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<32x16xf32>) -> tensor<32x8xf32>
    %z = dlc.linear %s, %w : (tensor<32x8xf32>, tensor<16x8xf32>) -> tensor<32x16xf32>
    return %z : tensor<32x16xf32>
  }
  func.func @train_step(%x: tensor<32x8xf32>) attributes {dlc.entry} {
    %w = dlc.param @fc.weight : tensor<16x8xf32>
    %y = dlc.linear %x, %w : (tensor<32x8xf32>, tensor<16x8xf32>) -> tensor<32x16xf32>
    %s = dlc.slice %y {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<32x16xf32>) -> tensor<16x8xf32>
    dlc.assign @fc.weight, %s : tensor<16x8xf32>
    return
  }
}

// -----

// Up to 4 rows a linear layer reads its weight in its own layout (dot
// products): nothing to pack, and no pack_weights entry.
// CHECK-LABEL: module @small
// CHECK-NOT: packed
// CHECK-NOT: pack_weights
module @small {
  dlc.parameter @fc.weight : tensor<16x8xf32> {init = #dlc.init<ones>}
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x16xf32> attributes {dlc.entry} {
    %w = dlc.param @fc.weight : tensor<16x8xf32>
    %y = dlc.linear %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    return %y : tensor<4x16xf32>
  }
}

// -----

// Autocast's 16-bit copies of weights are packed in the weight's own layout
// (not transposed: the matmul reads a 16-bit weight in place), once per
// weight and type, however large (the budget of 1 MiB is smaller than the
// 8 MiB of @big's copy). A cast of an activation, and the widening of a
// 16-bit weight, are not copies of weights made for a matmul; the rounding
// of a sum of weights is, and so is that of a transposed weight, whose
// transpose is not packed besides (the entry reads it only through the
// copy).
// CHECK-LABEL: module @autocast
// CHECK: dlc.parameter @fc.weight.packed : tensor<16x8xbf16> {init = #dlc.init<zeros>, role = #dlc.role<packed>}
// CHECK: dlc.parameter @big.packed : tensor<2048x2048xbf16>
// CHECK: dlc.parameter @fc.weight.packed.1 : tensor<16x8xf16>
// CHECK: dlc.parameter @t.packed : tensor<16x8xbf16>
// CHECK: dlc.parameter @fc.weight.packed.2 : tensor<16x8xbf16>
// CHECK-NOT: dlc.parameter
// CHECK-LABEL: func.func @forward
// CHECK: %[[P:.*]] = dlc.param @fc.weight.packed : tensor<16x8xbf16>
// CHECK-NOT: dlc.cast %{{.*}} : tensor<16x8xf32>
// CHECK: dlc.linear %{{.*}}, %[[P]] : (tensor<32x8xbf16>, tensor<16x8xbf16>)
// CHECK: dlc.linear %{{.*}}, %[[P]] : (tensor<4x8xbf16>, tensor<16x8xbf16>)
// CHECK: dlc.param @big.packed
// CHECK: dlc.param @fc.weight.packed.1 : tensor<16x8xf16>
// CHECK: dlc.cast %arg2 : tensor<32x8xf32> to tensor<32x8xbf16>
// CHECK: dlc.cast %{{.*}} : tensor<8xbf16> to tensor<8xf32>
// CHECK-LABEL: func.func @pack_weights() attributes {dlc.entry, dlc.pack_weights}
// CHECK: dlc.cast %{{.*}} : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK: dlc.assign @fc.weight.packed,
// CHECK: dlc.cast %{{.*}} : tensor<2048x2048xf32> to tensor<2048x2048xbf16>
// CHECK: dlc.assign @big.packed,
// CHECK: dlc.cast %{{.*}} : tensor<16x8xf32> to tensor<16x8xf16>
// CHECK: dlc.assign @fc.weight.packed.1,
// CHECK: dlc.cast %{{.*}} : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK: dlc.assign @t.packed,
// CHECK: %[[S:.*]] = dlc.add
// CHECK: %[[R:.*]] = dlc.cast %[[S]] : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK: dlc.assign @fc.weight.packed.2, %[[R]]
// CHECK-NEXT: return
// NONE-LABEL: module @autocast
// NONE-NOT: packed
// NONE-NOT: pack_weights
module @autocast {
  dlc.parameter @fc.weight : tensor<16x8xf32> {init = #dlc.init<ones>}
  dlc.parameter @big : tensor<2048x2048xf32> {init = #dlc.init<ones>}
  dlc.parameter @narrow : tensor<8xbf16> {init = #dlc.init<ones>}
  dlc.parameter @t : tensor<8x16xf32> {init = #dlc.init<ones>}
  func.func @forward(%x: tensor<32x8xbf16>, %x4: tensor<4x8xbf16>, %a: tensor<32x8xf32>, %xb: tensor<32x2048xbf16>, %xh: tensor<32x8xf16>) -> (tensor<32x16xbf16>, tensor<4x16xbf16>, tensor<32x8xbf16>, tensor<8xf32>, tensor<32x2048xbf16>, tensor<32x16xf16>, tensor<32x16xbf16>, tensor<32x16xbf16>) attributes {dlc.entry} {
    %w = dlc.param @fc.weight : tensor<16x8xf32>
    %c = dlc.cast %w : tensor<16x8xf32> to tensor<16x8xbf16>
    %y = dlc.linear %x, %c : (tensor<32x8xbf16>, tensor<16x8xbf16>) -> tensor<32x16xbf16>
    %y4 = dlc.linear %x4, %c : (tensor<4x8xbf16>, tensor<16x8xbf16>) -> tensor<4x16xbf16>
    %big = dlc.param @big : tensor<2048x2048xf32>
    %bc = dlc.cast %big : tensor<2048x2048xf32> to tensor<2048x2048xbf16>
    %yb = dlc.linear %xb, %bc : (tensor<32x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<32x2048xbf16>
    %h = dlc.cast %w : tensor<16x8xf32> to tensor<16x8xf16>
    %yh = dlc.linear %xh, %h : (tensor<32x8xf16>, tensor<16x8xf16>) -> tensor<32x16xf16>
    %tw = dlc.param @t : tensor<8x16xf32>
    %tt = dlc.transpose %tw [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
    %tc = dlc.cast %tt : tensor<16x8xf32> to tensor<16x8xbf16>
    %yt = dlc.linear %x, %tc : (tensor<32x8xbf16>, tensor<16x8xbf16>) -> tensor<32x16xbf16>
    %ac = dlc.cast %a : tensor<32x8xf32> to tensor<32x8xbf16>
    %n = dlc.param @narrow : tensor<8xbf16>
    %nw = dlc.cast %n : tensor<8xbf16> to tensor<8xf32>
    %s = dlc.add %w, %w : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %sc = dlc.cast %s : tensor<16x8xf32> to tensor<16x8xbf16>
    %ys = dlc.linear %x, %sc : (tensor<32x8xbf16>, tensor<16x8xbf16>) -> tensor<32x16xbf16>
    return %y, %y4, %ac, %nw, %yb, %yh, %ys, %yt : tensor<32x16xbf16>, tensor<4x16xbf16>, tensor<32x8xbf16>, tensor<8xf32>, tensor<32x2048xbf16>, tensor<32x16xf16>, tensor<32x16xbf16>, tensor<32x16xbf16>
  }
}

// -----

// The recurrent weight of an LSTM, which every step reads transposed, and a
// layout change of weights alone (an exporter's gate reorder: slices and a
// concat) that the rest of the entry reads.
// CHECK-LABEL: module @rnn
// CHECK: dlc.parameter @w_hh.packed : tensor<4x16xf32>
// CHECK: dlc.parameter @w.packed : tensor<16x4xf32>
// CHECK-LABEL: func.func @forward
// CHECK: %[[P:.*]] = dlc.param @w_hh.packed : tensor<4x16xf32>
// CHECK: %[[W:.*]] = dlc.transpose %[[P]] [1, 0]
// CHECK: dlc.lstm %arg0, %[[W]]
// CHECK: %[[R:.*]] = dlc.param @w.packed : tensor<16x4xf32>
// CHECK: dlc.add %{{.*}}, %[[R]]
// CHECK-NOT: dlc.concat
// CHECK-LABEL: func.func @pack_weights
// CHECK: dlc.transpose
// CHECK: dlc.assign @w_hh.packed
// CHECK: dlc.slice
// CHECK: dlc.slice
// CHECK: dlc.concat
// CHECK: dlc.assign @w.packed
module @rnn {
  dlc.parameter @w_hh : tensor<16x4xf32> {init = #dlc.init<ones>}
  dlc.parameter @w : tensor<16x4xf32> {init = #dlc.init<ones>}
  func.func @forward(%x: tensor<3x2x16xf32>, %v: tensor<16x4xf32>) -> (tensor<3x2x4xf32>, tensor<16x4xf32>) attributes {dlc.entry} {
    %w = dlc.param @w_hh : tensor<16x4xf32>
    %z = dlc.fill 0.0 : tensor<2x4xf32>
    %y, %c, %g = dlc.lstm %x, %w, %z, %z : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<3x2x16xf32>)
    %r = dlc.param @w : tensor<16x4xf32>
    %a = dlc.slice %r {offsets = array<i64: 8, 0>, strides = array<i64: 1, 1>} : (tensor<16x4xf32>) -> tensor<8x4xf32>
    %b = dlc.slice %r {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<16x4xf32>) -> tensor<8x4xf32>
    %cat = dlc.concat %a, %b {dim = 0 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %sum = dlc.add %v, %cat : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
    return %y, %sum : tensor<3x2x4xf32>, tensor<16x4xf32>
  }
}
