// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-write-outputs-in-place))' | FileCheck %s
// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-write-outputs-in-place),one-shot-bufferize,canonicalize)' | FileCheck %s --check-prefix=BUF

// A matmul's output: its zero fill writes the caller's buffer, and after
// bufferization nothing is copied and nothing allocated.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: %[[OUT:[^:]*]]: memref<4x5xf32>
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[T]] : tensor<4x5xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul {{.*}} outs(%[[Z]] : tensor<4x5xf32>)
// CHECK: bufferization.materialize_in_destination %[[Y]] in restrict writable %[[OUT]]
// BUF-LABEL: func.func @matmul
// BUF-SAME: %[[OUT:[^:]*]]: memref<4x5xf32>
// BUF-NOT: memref.alloc
// BUF: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<4x5xf32>)
// BUF: linalg.matmul {{.*}} outs(%[[OUT]] : memref<4x5xf32>)
// BUF-NOT: memref.copy
// BUF: return
func.func @matmul(%a: memref<4x6xf32>, %b: memref<6x5xf32>, %out: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %a restrict : memref<4x6xf32> to tensor<4x6xf32>
  %w = bufferization.to_tensor %b restrict : memref<6x5xf32> to tensor<6x5xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  bufferization.materialize_in_destination %y in restrict writable %out : (tensor<4x5xf32>, memref<4x5xf32>) -> ()
  return
}

// -----

// Two outputs whose accumulators CSE merged into one zero fill: the first
// output's chain gets a fill of its own in its buffer; the shared fill,
// then read by the second chain alone, fills the second buffer.
// CHECK-LABEL: func.func @shared_fill
// CHECK-SAME: %[[O1:[^:]*]]: memref<4x5xf32>, %[[O2:[^:]*]]: memref<4x5xf32>
// CHECK-DAG: %[[T1:.*]] = bufferization.to_tensor %[[O1]] restrict writable
// CHECK-DAG: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[T1]] : tensor<4x5xf32>)
// CHECK-DAG: %[[T2:.*]] = bufferization.to_tensor %[[O2]] restrict writable
// CHECK-DAG: %[[Z2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[T2]] : tensor<4x5xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[Z1]] : tensor<4x5xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[Z2]] : tensor<4x5xf32>)
// BUF-LABEL: func.func @shared_fill
// BUF-SAME: %[[O1:[^:]*]]: memref<4x5xf32>, %[[O2:[^:]*]]: memref<4x5xf32>
// BUF-NOT: memref.copy
// BUF: linalg.matmul {{.*}} outs(%[[O1]] : memref<4x5xf32>)
// BUF-NOT: memref.copy
// BUF: linalg.matmul {{.*}} outs(%[[O2]] : memref<4x5xf32>)
// BUF-NOT: memref.copy
// BUF: return
func.func @shared_fill(%a: memref<4x6xf32>, %b: memref<6x5xf32>, %c: memref<6x5xf32>, %o1: memref<4x5xf32>, %o2: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %a restrict : memref<4x6xf32> to tensor<4x6xf32>
  %w = bufferization.to_tensor %b restrict : memref<6x5xf32> to tensor<6x5xf32>
  %v = bufferization.to_tensor %c restrict : memref<6x5xf32> to tensor<6x5xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %y1 = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %y2 = linalg.matmul ins(%x, %v : tensor<4x6xf32>, tensor<6x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  bufferization.materialize_in_destination %y1 in restrict writable %o1 : (tensor<4x5xf32>, memref<4x5xf32>) -> ()
  bufferization.materialize_in_destination %y2 in restrict writable %o2 : (tensor<4x5xf32>, memref<4x5xf32>) -> ()
  return
}

// -----

// A value of the chain that something else also reads (the accumulator %y
// feeds the output's epilogue and a second output): the chain stops there,
// and the epilogue's own tensor.empty is the output's buffer.
// CHECK-LABEL: func.func @shared_middle
// CHECK-SAME: %[[O1:[^:]*]]: memref<4x5xf32>, %[[O2:[^:]*]]: memref<4x5xf32>
// CHECK: %[[Y:.*]] = linalg.matmul {{.*}} outs(%{{.*}} : tensor<4x5xf32>)
// CHECK-NOT: bufferization.to_tensor %[[O1]]
// CHECK: %[[T2:.*]] = bufferization.to_tensor %[[O2]] restrict writable
// CHECK: linalg.generic {{.*}} ins(%[[Y]] : tensor<4x5xf32>) outs(%[[T2]] : tensor<4x5xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @shared_middle(%a: memref<4x6xf32>, %b: memref<6x5xf32>, %o1: memref<4x5xf32>, %o2: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %a restrict : memref<4x6xf32> to tensor<4x6xf32>
  %w = bufferization.to_tensor %b restrict : memref<6x5xf32> to tensor<6x5xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.maximumf %i, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x5xf32>
  bufferization.materialize_in_destination %y in restrict writable %o1 : (tensor<4x5xf32>, memref<4x5xf32>) -> ()
  bufferization.materialize_in_destination %r in restrict writable %o2 : (tensor<4x5xf32>, memref<4x5xf32>) -> ()
  return
}

// -----

// A parameter updated in place: its buffer is also read (to_tensor), so
// a restrict view of it for writing would alias the read; it keeps the copy.
// CHECK-LABEL: func.func @updated_param
// CHECK-NOT: writable
// CHECK: bufferization.materialize_in_destination
#id1 = affine_map<(d0) -> (d0)>
func.func @updated_param(%p: memref<8xf32>, %g: memref<8xf32>) {
  %pt = bufferization.to_tensor %p restrict : memref<8xf32> to tensor<8xf32>
  %gt = bufferization.to_tensor %g restrict : memref<8xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%pt, %gt : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  bufferization.materialize_in_destination %n in restrict writable %p : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}
