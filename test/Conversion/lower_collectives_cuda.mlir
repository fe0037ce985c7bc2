// RUN: dlc-opt %s --split-input-file --dlc-lower-collectives=device=cuda --verify-diagnostics | FileCheck %s

// On CUDA the collectives are calls on the entry's CUDA context (added
// when the entry has none yet), named dlc_cuda_comm_*; no communicator
// context is added.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: memref<64xi8>, %[[CTX:.*]]: !llvm.ptr {dlc.name = "cuda_ctx"})
// CHECK-NOT: comm_ctx
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: call @dlc_cuda_comm_bucket_add(%[[CTX]], %{{.*}}, %c32_i64, %c0_i32)
// CHECK: call @dlc_cuda_comm_bucket_add(%[[CTX]], %{{.*}}, %c8_i64{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK: call @dlc_cuda_comm_bucket_reduce(%[[CTX]], %c0_i32{{[_0-9]*}})
// CHECK: call @dlc_cuda_comm_bucket_add_pair(%[[CTX]], %{{.*}}, %c8_i64{{[_0-9]*}}, %{{.*}}, %c4_i64, %c0_i32{{[_0-9]*}})
// CHECK: call @dlc_cuda_comm_bucket_reduce_scatter(%[[CTX]], %c1_i32)
// CHECK-NOT: dlc.
// CHECK: func.func private @dlc_cuda_comm_bucket_add(!llvm.ptr, i64, i64, i32)
// CHECK: func.func private @dlc_cuda_comm_bucket_reduce(!llvm.ptr, i32)
// CHECK: func.func private @dlc_cuda_comm_bucket_add_pair(!llvm.ptr, i64, i64, i64, i64, i32)
// CHECK: func.func private @dlc_cuda_comm_bucket_reduce_scatter(!llvm.ptr, i32)
func.func @step(%a: memref<4x8xf32>, %b: memref<8xf32>, %shard: memref<4xf32>, %ws: memref<64xi8>) {
  dlc.all_reduce %a, %b {reduction = #dlc.reduction<mean>} : memref<4x8xf32>, memref<8xf32>
  dlc.reduce_scatter %b into %shard {ranks = 2 : i64, reduction = #dlc.reduction<sum>} : memref<8xf32> into memref<4xf32>
  return
}

// -----

// The CUDA context an entry already has (dlc-map-to-gpu's) is the one used.
// CHECK-LABEL: func.func @mapped(
// CHECK-SAME: %[[G:.*]]: memref<8xf32>, %[[CTX:.*]]: !llvm.ptr {dlc.name = "cuda_ctx"}, %{{.*}}: memref<64xi8>)
// CHECK: call @dlc_cuda_comm_bucket_add(%[[CTX]],
// CHECK: call @dlc_cuda_comm_bucket_reduce(%[[CTX]],
func.func @mapped(%g: memref<8xf32>, %ctx: !llvm.ptr {dlc.name = "cuda_ctx"}, %ws: memref<64xi8>) {
  dlc.all_reduce %g {reduction = #dlc.reduction<mean>} : memref<8xf32>
  return
}

// -----

// Host code cannot copy a strided view of device memory into one block.
func.func @strided(%a: memref<4x8xf32>, %ws: memref<64xi8>) {
  %v = memref.subview %a[0, 0] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1]>>
  // expected-error @below {{cannot reduce a buffer of type 'memref<4x2xf32, strided<[8, 1]>>' on CUDA}}
  dlc.all_reduce %v {reduction = #dlc.reduction<sum>} : memref<4x2xf32, strided<[8, 1]>>
  return
}
