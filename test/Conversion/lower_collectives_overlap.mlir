// RUN: dlc-opt %s --dlc-lower-collectives=overlap=true | FileCheck %s

// With overlap, each bucket is started, and the code waits right before
// the first later op that uses one of its buffers (a view of it counts);
// ops in between run while the bucket is reduced.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[G:[^:]*]]: memref<8xf32>, %[[H:[^:]*]]: memref<4xf32>, %[[O:[^:]*]]: memref<8xf32>, %[[CTX:.*]]: !llvm.ptr {dlc.name = "comm_ctx"})
// CHECK: call @dlc_comm_bucket_add(%[[CTX]],
// CHECK: call @dlc_comm_bucket_start(%[[CTX]], %c0_i32{{.*}})
// CHECK-NOT: dlc_comm_wait
// CHECK: linalg.fill {{.*}} outs(%[[H]]
// CHECK-NEXT: call @dlc_comm_wait(%[[CTX]])
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[G]]
// CHECK: memref.copy %[[V]]
// A bucket whose buffers are not used again: the wait is before the return.
// CHECK: call @dlc_comm_bucket_start
// CHECK-NEXT: call @dlc_comm_wait(%[[CTX]])
// CHECK-NEXT: return
// CHECK: func.func private @dlc_comm_bucket_start(!llvm.ptr, i32)
// CHECK: func.func private @dlc_comm_wait(!llvm.ptr)
// CHECK-NOT: dlc_comm_bucket_reduce
func.func @step(%g: memref<8xf32>, %h: memref<4xf32>, %o: memref<8xf32>) {
  dlc.all_reduce %g : memref<8xf32>
  %c = arith.constant 1.0 : f32
  linalg.fill ins(%c : f32) outs(%h : memref<4xf32>)
  %v = memref.subview %g[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %w = memref.subview %o[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %v, %w : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1]>>
  dlc.all_reduce %h {reduction = #dlc.reduction<sum>} : memref<4xf32>
  return
}
