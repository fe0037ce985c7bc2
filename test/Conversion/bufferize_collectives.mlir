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

// dlc.reduce_scatter, dlc.shard and dlc.all_gather write their inits'
// buffers: fresh shard buffers for the first two, the params' own buffer
// for the all-gather (nothing reads the old params after it).
// CHECK-LABEL: func.func @sharded(
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<3x3xf32{{.*}}>, %[[G:[a-z0-9]+]]: memref<3x3xf32
// CHECK: %[[GS:.*]] = memref.alloc() {{.*}}: memref<5xf32>
// CHECK: dlc.reduce_scatter %[[G]] into %[[GS]] {ranks = 2 : i64} : memref<3x3xf32{{.*}}> into memref<5xf32>
// CHECK: %[[PS:.*]] = memref.alloc() {{.*}}: memref<5xf32>
// CHECK: dlc.shard %[[W]] into %[[PS]] {ranks = 2 : i64}
// CHECK-NOT: memref.copy
// CHECK: dlc.all_gather %{{.*}} into %[[W]] {ranks = 2 : i64} : memref<5xf32> into memref<3x3xf32
// CHECK: return %[[W]]
func.func @sharded(%w: tensor<3x3xf32>, %g: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %e0 = bufferization.alloc_tensor() : tensor<5xf32>
  %gs = dlc.reduce_scatter %g into %e0 {ranks = 2 : i64} : tensor<3x3xf32> into tensor<5xf32>
  %e1 = bufferization.alloc_tensor() : tensor<5xf32>
  %ps = dlc.shard %w into %e1 {ranks = 2 : i64} : tensor<3x3xf32> into tensor<5xf32>
  %c = arith.constant 0.5 : f32
  %e2 = tensor.empty() : tensor<5xf32>
  %new = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%ps, %gs : tensor<5xf32>, tensor<5xf32>) outs(%e2 : tensor<5xf32>) {
  ^bb0(%p: f32, %d: f32, %o: f32):
    %m = arith.mulf %d, %c : f32
    %s = arith.subf %p, %m : f32
    linalg.yield %s : f32
  } -> tensor<5xf32>
  %r = dlc.all_gather %new into %w {ranks = 2 : i64} : tensor<5xf32> into tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}
