// RUN: dlc-opt %s -dlc-plan-memory -split-input-file -verify-diagnostics | FileCheck %s

// Three buffers in a chain: %a dies when %c is born, so %c reuses its bytes;
// %b is alive with both and gets its own. Largest first: %a (4 KiB) at 0,
// %b (2 KiB) after it, %c (4 KiB) over %a.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %[[WS:[a-z0-9]+]]: memref<6144xi8> {dlc.name = "workspace", llvm.noalias}
// CHECK-SAME: attributes {dlc.buffer_bytes = 10240 : i64, dlc.entry, dlc.workspace_bytes = 6144 : i64}
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<6144xi8> to memref<32x32xf32>
// CHECK: %[[C4096:.*]] = arith.constant 4096 : index
// CHECK: %[[B:.*]] = memref.view %[[WS]][%[[C4096]]][] : memref<6144xi8> to memref<512xf32>
// CHECK: %[[C0B:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = memref.view %[[WS]][%[[C0B]]][] : memref<6144xi8> to memref<32x32xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @chain(%in: memref<32x32xf32>, %out: memref<32x32xf32>) attributes {dlc.entry} {
  %a = memref.alloc() : memref<32x32xf32>
  memref.copy %in, %a : memref<32x32xf32> to memref<32x32xf32>
  %b = memref.alloc() : memref<512xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<32x32xf32> into memref<1024xf32>
  %half = memref.subview %flat[0] [512] [1] : memref<1024xf32> to memref<512xf32, strided<[1]>>
  memref.copy %half, %b : memref<512xf32, strided<[1]>> to memref<512xf32>
  %c = memref.alloc() : memref<32x32xf32>
  %c2 = memref.collapse_shape %c [[0, 1]] : memref<32x32xf32> into memref<1024xf32>
  %chalf = memref.subview %c2[0] [512] [1] : memref<1024xf32> to memref<512xf32, strided<[1]>>
  memref.copy %b, %chalf : memref<512xf32> to memref<512xf32, strided<[1]>>
  memref.copy %c, %out : memref<32x32xf32> to memref<32x32xf32>
  memref.dealloc %a : memref<32x32xf32>
  return
}

// -----

// A view keeps its buffer alive: %a is read through %v after %b is born,
// so they must not share memory, even though %a itself is not used again.
// CHECK-LABEL: func.func @view_keeps_alive
// CHECK-SAME: memref<8192xi8>
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<8192xi8> to memref<32x32xf32>
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<8192xi8> to memref<32x32xf32>
func.func @view_keeps_alive(%in: memref<32x32xf32>, %out: memref<1024xf32>) attributes {dlc.entry} {
  %a = memref.alloc() : memref<32x32xf32>
  memref.copy %in, %a : memref<32x32xf32> to memref<32x32xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<32x32xf32> into memref<1024xf32>
  %b = memref.alloc() : memref<32x32xf32>
  memref.copy %in, %b : memref<32x32xf32> to memref<32x32xf32>
  memref.copy %v, %out : memref<1024xf32> to memref<1024xf32>
  return
}

// -----

// Sizes are rounded up to 64 bytes; an entry without temporaries still gets
// its (empty) workspace; functions that are not entries are left alone.
// CHECK-LABEL: func.func @tiny
// CHECK-SAME: memref<128xi8>
// CHECK: arith.constant 64 : index
// CHECK-LABEL: func.func @empty
// CHECK-SAME: %{{.*}}: memref<0xi8> {dlc.name = "workspace", llvm.noalias}
// CHECK-SAME: dlc.workspace_bytes = 0 : i64
// CHECK-LABEL: func.func private @helper
// CHECK: memref.alloc
func.func @tiny(%x: memref<3xf32>) attributes {dlc.entry} {
  %a = memref.alloc() : memref<3xf32>
  %b = memref.alloc() : memref<3xf32>
  memref.copy %x, %a : memref<3xf32> to memref<3xf32>
  memref.copy %a, %b : memref<3xf32> to memref<3xf32>
  memref.copy %b, %a : memref<3xf32> to memref<3xf32>
  return
}
func.func @empty(%x: memref<3xf32>) attributes {dlc.entry} {
  return
}
func.func private @helper() -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

// Temporaries beyond any machine's memory: the offsets of the plan would
// overflow int64.
func.func @huge() attributes {dlc.entry} {
  // expected-error @below {{needs more than 2^48 bytes (256 TiB), more than any machine's memory}}
  %a = memref.alloc() : memref<1073741824x1073741824xf32>
  return
}

// -----

func.func @dynamic(%n: index) attributes {dlc.entry} {
  // expected-error @below {{has no static shape and identity layout}}
  %a = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

// An allocation inside a loop is one per iteration (the matmul kernels'
// packing buffers): it is not placed; the top-level one around it is.
// CHECK-LABEL: func.func @nested
// CHECK-SAME: memref<4096xi8>
// CHECK: memref.view
// CHECK: scf.for
// CHECK: memref.alloc() : memref<16xf32>
func.func @nested(%x: memref<32x32xf32>) attributes {dlc.entry} {
  %a = memref.alloc() : memref<32x32xf32>
  memref.copy %x, %a : memref<32x32xf32> to memref<32x32xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %p = memref.alloc() : memref<16xf32>
    %row = memref.subview %a[%i, 0] [1, 16] [1, 1] : memref<32x32xf32> to memref<16xf32, strided<[1], offset: ?>>
    memref.copy %row, %p : memref<16xf32, strided<[1], offset: ?>> to memref<16xf32>
    memref.dealloc %p : memref<16xf32>
  }
  return
}
