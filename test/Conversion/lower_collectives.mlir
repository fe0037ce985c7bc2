// RUN: dlc-opt %s --dlc-lower-collectives | FileCheck %s

// The entry gains the communicator context after its workspace; each buffer
// of the bucket is added by address and element count (dtype 0: f32), then
// one call reduces the bucket (0: mean). A strided view goes through a
// contiguous copy and back.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8xf32>, %[[W:.*]]: memref<64xi8>, %[[CTX:.*]]: !llvm.ptr {dlc.name = "comm_ctx"})
// CHECK: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[IA:.*]] = arith.index_cast %[[PA]] : index to i64
// CHECK: call @dlc_comm_bucket_add(%[[CTX]], %[[IA]], %c32_i64, %c0_i32)
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: call @dlc_comm_bucket_add(%[[CTX]], %{{.*}}, %c8_i64{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK: call @dlc_comm_bucket_reduce(%[[CTX]], %c0_i32{{[_0-9]*}})
// CHECK-NOT: dlc.all_reduce
// CHECK: %[[V:.*]] = memref.subview %[[A]]
// CHECK: %[[C:.*]] = memref.alloc() : memref<4x2xf32>
// CHECK: memref.copy %[[V]], %[[C]]
// CHECK: memref.extract_aligned_pointer_as_index %[[C]]
// CHECK: call @dlc_comm_bucket_add(%[[CTX]], %{{.*}}, %c8_i64{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK: call @dlc_comm_bucket_reduce(%[[CTX]], %c1_i32)
// CHECK: memref.copy %[[C]], %[[V]]
// CHECK: memref.dealloc %[[C]]
func.func @step(%a: memref<4x8xf32>, %b: memref<8xf32>, %ws: memref<64xi8>) {
  dlc.all_reduce %a, %b {reduction = #dlc.reduction<mean>} : memref<4x8xf32>, memref<8xf32>
  %v = memref.subview %a[0, 0] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1]>>
  dlc.all_reduce %v {reduction = #dlc.reduction<sum>} : memref<4x2xf32, strided<[8, 1]>>
  return
}

// The sharding collectives: each (input, init) pair is added with both
// addresses and element counts, then one call runs the bucket (the
// reduce-scatter with its reduction, 1: sum).
// CHECK-LABEL: func.func @sharded(
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<3x3xf32>, %[[G:[a-z0-9]+]]: memref<3x3xf32>, %[[S:[a-z0-9]+]]: memref<5xf32>, %{{.*}}: memref<64xi8>, %[[CTX:.*]]: !llvm.ptr {dlc.name = "comm_ctx"})
// CHECK: call @dlc_comm_bucket_add_pair(%[[CTX]], %{{.*}}, %c9_i64, %{{.*}}, %c5_i64, %c0_i32{{[_0-9]*}})
// CHECK: call @dlc_comm_bucket_reduce_scatter(%[[CTX]], %c1_i32{{[_0-9]*}})
// CHECK: call @dlc_comm_bucket_add_pair(%[[CTX]], %{{.*}}, %c9_i64{{[_0-9]*}}, %{{.*}}, %c5_i64{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK-NEXT: call @dlc_comm_bucket_shard(%[[CTX]])
// CHECK: call @dlc_comm_bucket_add_pair(%[[CTX]], %{{.*}}, %c5_i64{{[_0-9]*}}, %{{.*}}, %c9_i64{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK-NEXT: call @dlc_comm_bucket_all_gather(%[[CTX]])
// A strided input goes through a contiguous copy, freed after the call; a
// strided init gets the result through one, copied back.
// CHECK: %[[CI:.*]] = memref.alloc() : memref<3x2xf32>
// CHECK: memref.copy %{{.*}}, %[[CI]]
// CHECK: %[[CO:.*]] = memref.alloc() : memref<3xf32>
// CHECK-NOT: memref.copy
// CHECK: call @dlc_comm_bucket_add_pair(%[[CTX]], %{{.*}}, %c6_i64, %{{.*}}, %c3_i64, %c0_i32{{[_0-9]*}})
// CHECK: call @dlc_comm_bucket_reduce_scatter(%[[CTX]], %c0_i32{{[_0-9]*}})
// CHECK-NEXT: memref.dealloc %[[CI]]
// CHECK-NEXT: memref.copy %[[CO]], %{{.*}}
// CHECK-NEXT: memref.dealloc %[[CO]]
// CHECK-NOT: dlc.
// The runtime's functions are declared once, at the end.
// CHECK: func.func private @dlc_comm_bucket_add(!llvm.ptr, i64, i64, i32)
// CHECK: func.func private @dlc_comm_bucket_reduce(!llvm.ptr, i32)
// CHECK: func.func private @dlc_comm_bucket_add_pair(!llvm.ptr, i64, i64, i64, i64, i32)
// CHECK: func.func private @dlc_comm_bucket_reduce_scatter(!llvm.ptr, i32)
// CHECK: func.func private @dlc_comm_bucket_shard(!llvm.ptr)
// CHECK: func.func private @dlc_comm_bucket_all_gather(!llvm.ptr)
func.func @sharded(%w: memref<3x3xf32>, %g: memref<3x3xf32>, %s: memref<5xf32>, %ws: memref<64xi8>) {
  dlc.reduce_scatter %g into %s {ranks = 2 : i64, reduction = #dlc.reduction<sum>} : memref<3x3xf32> into memref<5xf32>
  dlc.shard %w into %s {ranks = 2 : i64} : memref<3x3xf32> into memref<5xf32>
  dlc.all_gather %s into %w {ranks = 2 : i64} : memref<5xf32> into memref<3x3xf32>
  %wi = memref.subview %w[0, 0] [3, 2] [1, 1] : memref<3x3xf32> to memref<3x2xf32, strided<[3, 1]>>
  %so = memref.subview %g[0, 0] [3, 1] [1, 1] : memref<3x3xf32> to memref<3xf32, strided<[3]>>
  dlc.reduce_scatter %wi into %so {ranks = 2 : i64} : memref<3x2xf32, strided<[3, 1]>> into memref<3xf32, strided<[3]>>
  return
}
