// RUN: dlc-opt %s -dlc-map-to-gpu=small-gemm-fmas=0 -split-input-file --mlir-print-local-scope | FileCheck %s

// An elementwise loop nest: one thread per point, 256 per block, the last
// dimension fastest; the entry gets the runtime's context last. For
// dlc-fuse-kernels, the launch names its thread space and each access the
// element it touches as a function of the thread's point.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:arg[0-9]+]]: memref<4x300xf32>, %[[Y:arg[0-9]+]]: memref<4x300xf32>, %{{.*}}: !llvm.ptr {dlc.name = "cuda_ctx"})
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C5]], {{.*}} threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]],
// CHECK: %[[LIN:.*]] = arith.addi %{{.*}}, %[[T]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LIN]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[J:.*]] = arith.remui %[[LIN]], %{{.*}} : index
// CHECK: %[[Q:.*]] = arith.divui %[[LIN]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.remui %[[Q]], %{{.*}} : index
// CHECK: memref.load %[[X]][%{{.*}}, %{{.*}}] {dlc.point_map = affine_map<(d0, d1) -> (d0, d1)>}
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] {dlc.point_map = affine_map<(d0, d1) -> (d0, d1)>}
// CHECK: gpu.terminator
// CHECK-NEXT: } {dlc.points = array<i64: 4, 300>}
// CHECK-NOT: gpu.launch
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%x: memref<4x300xf32>, %y: memref<4x300xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x300xf32>) outs(%y : memref<4x300xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A row sum: a thread per row, the reduction loop inside it. The input's
// element moves with the loop: it is no function of the point. The row's
// output is read once, carried through the loop in a register, and written
// once after it.
// CHECK-LABEL: func.func @row_sum
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[%{{.*}}] {dlc.point_map = affine_map<(d0) -> (d0)>} : memref<8xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK: %[[A:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<8x16xf32>
// CHECK-NOT: memref
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[A]]
// CHECK-NEXT: scf.yield %[[NEXT]] : f32
// CHECK: memref.store %[[SUM]], %{{.*}} {dlc.point_map = affine_map<(d0) -> (d0)>}
// CHECK: } {dlc.points = array<i64: 8>}
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: memref<8x16xf32>, %y: memref<8xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x16xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An input that is a view of the output (the reduction reads what it
// writes): the output stays in memory, read and written at every step.
// CHECK-LABEL: func.func @reads_own_output
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.load
// CHECK: memref.load
// CHECK: memref.store
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: gpu.terminator
func.func @reads_own_output(%y: memref<8xf32>) attributes {dlc.entry} {
  %v = memref.subview %y[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %w = memref.subview %y[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%v : memref<4xf32, strided<[1]>>) outs(%w : memref<4xf32, strided<[1], offset: 4>>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows of 1000: a warp per row, 8 rows a block. Lane l sums elements l,
// l + 32, ... of its row (the lanes read consecutive elements), from -0.0;
// gpu.subgroup_reduce sums the lanes, and lane 0 adds the total to the
// output, the only access annotated for dlc-fuse-kernels.
// CHECK-LABEL: func.func @warp_row_sum
// CHECK-SAME: (%[[X:arg[0-9]+]]: memref<8x1000xf32>, %[[Y:arg[0-9]+]]: memref<8xf32>
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{[_0-9]*}}, {{.*}} threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK: %[[WARP:.*]] = arith.divui %[[T]], %c32
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[WARP]] : index
// CHECK: %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %c8
// CHECK: %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[PART:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %[[LANE]] to %c1000{{.*}} step %c32{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK: %[[E:.*]] = memref.load %[[X]][%{{.*}}, %{{.*}}] : memref<8x1000xf32>
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK: scf.yield %[[NEXT]]
// CHECK: scf.yield %[[SUM]]
// CHECK: } else {
// CHECK: scf.yield %[[ZERO]]
// CHECK: %[[TOTAL:.*]] = gpu.subgroup_reduce add %[[PART]] uniform : (f32) -> f32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: %[[OWNER:.*]] = arith.andi %[[IN]], %[[FIRST]]
// CHECK: scf.if %[[OWNER]] {
// CHECK: %[[OLD:.*]] = memref.load %[[Y]][%{{.*}}] {dlc.point_map = affine_map<(d0) -> (d0)>}
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]] : f32
// CHECK: memref.store %[[NEW]], %[[Y]][%{{.*}}] {dlc.point_map = affine_map<(d0) -> (d0)>}
// CHECK: } {dlc.lanes = 32 : i64, dlc.points = array<i64: 8>}
#win = affine_map<(d0, d1) -> (d0, d1)>
#wout = affine_map<(d0, d1) -> (d0)>
func.func @warp_row_sum(%x: memref<8x1000xf32>, %y: memref<8xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#win, #wout], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x1000xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row max with the element first: the warp reduces with maximumf from
// -inf, and lane 0 keeps the payload's operand order.
// CHECK-LABEL: func.func @warp_row_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: scf.for
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: gpu.subgroup_reduce maximumf
// CHECK: %[[OLD:.*]] = memref.load
// CHECK: arith.maximumf %{{.*}}, %[[OLD]] : f32
#win = affine_map<(d0, d1) -> (d0, d1)>
#wout = affine_map<(d0, d1) -> (d0)>
func.func @warp_row_max(%x: memref<8x64xf32>, %y: memref<8xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#win, #wout], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// 100,000 elements into one point: a warp would leave the GPU idle, so the
// elements split into 97 slices of 1031 (the last shorter), a warp each,
// that store their totals into a 97-element buffer; a second kernel, a warp
// per point, sums the point's slices (lane l those l, l + 32, ...) and lane
// 0 adds the result to the output. The first kernel's points are the
// slices, and nothing in it is annotated for dlc-fuse-kernels.
// CHECK-LABEL: func.func @split_sum
// CHECK-SAME: (%[[X:arg[0-9]+]]: memref<100000xf32>, %[[Y:arg[0-9]+]]: memref<f32>
// CHECK: %[[PARTS:.*]] = memref.alloc() : memref<97xf32>
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c13{{[_0-9]*}}, {{.*}} threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK: %[[WARP:.*]] = arith.divui %[[T]], %c32
// CHECK: %[[UNIT:.*]] = arith.addi %{{.*}}, %[[WARP]] : index
// CHECK: %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[UNIT]], %c97
// CHECK: %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[PART:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK: %[[SLICE:.*]] = arith.remui %[[UNIT]], %c97
// CHECK: %[[START:.*]] = arith.muli %[[SLICE]], %c1031
// CHECK: %[[FROM:.*]] = arith.addi %[[START]], %[[LANE]] : index
// CHECK: %[[NEXT:.*]] = arith.addi %{{.*}}, %c1
// CHECK: %[[STOP:.*]] = arith.muli %[[NEXT]], %c1031
// CHECK: %[[TO:.*]] = arith.minui %[[STOP]], %c100000
// CHECK: scf.for %{{.*}} = %[[FROM]] to %[[TO]] step %c32{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32) {
// CHECK: memref.load %[[X]][%{{.*}}] : memref<100000xf32>
// CHECK-NOT: dlc.point_map
// CHECK: %[[TOTAL:.*]] = gpu.subgroup_reduce add %[[PART]] uniform : (f32) -> f32
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: memref.store %[[TOTAL]], %[[PARTS]][%[[UNIT]]] : memref<97xf32>
// CHECK: } {dlc.lanes = 32 : i64, dlc.points = array<i64: 97>}
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{.*}} = %c32
// CHECK: scf.for %{{.*}} = %[[LANE2:.*]] to %c97{{.*}} step %c32
// CHECK: memref.load %[[PARTS]][%{{.*}}] : memref<97xf32>
// CHECK: arith.addf
// CHECK: %[[SUM:.*]] = gpu.subgroup_reduce add
// CHECK: %[[OLD:.*]] = memref.load %[[Y]][] {dlc.point_map = affine_map<() -> ()>}
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[SUM]] : f32
// CHECK: memref.store %[[NEW]], %[[Y]][] {dlc.point_map = affine_map<() -> ()>}
// CHECK: } {dlc.lanes = 32 : i64, dlc.points = array<i64>}
func.func @split_sum(%x: memref<100000xf32>, %y: memref<f32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<100000xf32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An any-of reduction (the output becomes 1 where some element is not
// finite: fp16 loss scaling's check) also runs a warp per point: each lane
// takes the maximum of its elements' 0/1 flags from 0, the warp's maximum
// combines the lanes, and lane 0 selects the constant where it is 1.
// CHECK-LABEL: func.func @any_of
// CHECK-SAME: (%[[X:arg[0-9]+]]: memref<4x100xf32>, %[[Y:arg[0-9]+]]: memref<4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK: %[[E:.*]] = memref.load %[[X]]
// CHECK: %[[D:.*]] = arith.subf %[[E]], %[[E]] : f32
// CHECK: %[[BAD:.*]] = arith.cmpf une, %[[D]], %{{.*}} : f32
// CHECK: %[[FLAG:.*]] = arith.select %[[BAD]], %{{.*}}, %{{.*}} : f32
// CHECK: arith.maximumf %[[ACC]], %[[FLAG]] : f32
// CHECK: %[[ANY:.*]] = gpu.subgroup_reduce maximumf %{{.*}} uniform : (f32) -> f32
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = memref.load %[[Y]]
// CHECK: %[[SET:.*]] = arith.cmpf ogt, %[[ANY]], %{{.*}} : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[NEW:.*]] = arith.select %[[SET]], %[[ONE]], %[[OLD]] : f32
// CHECK: memref.store %[[NEW]], %[[Y]]
func.func @any_of(%x: memref<4x100xf32>, %y: memref<4xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x100xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %d = arith.subf %a, %a : f32
    %bad = arith.cmpf une, %d, %zero : f32
    %r = arith.select %bad, %one, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Not for a warp: a select of the running value that is no any-of
// reduction (its other operand is an element, not a constant).
// CHECK-LABEL: func.func @no_warp_select
// CHECK-NOT: gpu.subgroup_reduce
func.func @no_warp_select(%x: memref<4x100xf32>, %y: memref<4xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x100xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Not for a warp: a payload that uses the running value twice (not a plain
// combination), and a reduction of fewer than 32 elements.
// CHECK-LABEL: func.func @no_warp
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: return
#win = affine_map<(d0, d1) -> (d0, d1)>
#wout = affine_map<(d0, d1) -> (d0)>
func.func @no_warp(%x: memref<8x64xf32>, %y: memref<8xf32>, %z: memref<8x31xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#win, #wout], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %p = arith.mulf %acc, %acc : f32
    %s = arith.addf %p, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#win, #wout], iterator_types = ["parallel", "reduction"]}
      ins(%z : memref<8x31xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// GEMMs go to cuBLASLt: C(64x10) += A(64x256) * B(256x10), row-major
// leading dimensions, beta 1; a contiguous copy is one device memcpy.
// CHECK-LABEL: func.func @gemm_and_copy
// CHECK-SAME: %[[CTX:arg[0-9]+]]: !llvm.ptr {dlc.name = "cuda_ctx"})
// CHECK-NOT: linalg.matmul
// CHECK: call @dlc_cuda_gemm(%[[CTX]], %c0_i32{{.*}}, %c0_i32{{.*}}, %c1_i64, %c64_i64, %c10_i64, %c256_i64, %{{[0-9]+}}, %c256_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %{{[0-9]+}}, %c10_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %cst, %{{[0-9]+}}, %c10_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %c0_i64{{.*}}, %c0_i64{{[_0-9]*}})
// CHECK: call @dlc_cuda_memcpy(%[[CTX]], %{{.*}}, %{{.*}}, %c2560_i64)
// CHECK: func.func private @dlc_cuda_gemm(!llvm.ptr, i32, i32, i64, i64, i64, i64, i64, i64, i64, i32, i64, i64, i64, i32, f32, i64, i64, i64, i32, i64, i64)
// CHECK: func.func private @dlc_cuda_memcpy(!llvm.ptr, i64, i64, i64)
func.func @gemm_and_copy(%a: memref<64x256xf32>, %b: memref<256x10xf32>, %c: memref<64x10xf32>, %d: memref<64x10xf32>) attributes {dlc.entry} {
  linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x10xf32>) outs(%c : memref<64x10xf32>)
  memref.copy %c, %d : memref<64x10xf32> to memref<64x10xf32>
  return
}

// -----

// A scalar read from device memory (the optimizer's step) is computed by a
// single-thread kernel into a scratch buffer, which the later kernel reads:
// the step is read before the kernel that overwrites it.
// CHECK-LABEL: func.func @device_scalar
// CHECK-SAME: (%[[STEP:arg[0-9]+]]: memref<f32>, %[[W:arg[0-9]+]]: memref<16xf32>
// CHECK: %[[SCRATCH:.*]] = memref.alloc() : memref<f32>
// CHECK: gpu.launch {{.*}}in (%{{.*}} = %c1{{.*}}threads{{.*}}in (%{{.*}} = %c1
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[STEP]][] : memref<f32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK: memref.store %[[NEW]], %[[SCRATCH]][] : memref<f32>
// CHECK: gpu.terminator
// CHECK-NEXT: } {dlc.points = array<i64>}
// CHECK: gpu.launch
// CHECK: %[[S:.*]] = memref.load %[[SCRATCH]][] : memref<f32>
// CHECK: memref.store %[[S]], %[[STEP]][]
// CHECK: gpu.launch
// CHECK: %[[S2:.*]] = memref.load %[[SCRATCH]][] : memref<f32>
// CHECK: arith.mulf %{{.*}}, %[[S2]]
// CHECK-NOT: memref.load %[[STEP]]
// CHECK: return
func.func @device_scalar(%step: memref<f32>, %w: memref<16xf32>) attributes {dlc.entry} {
  %one = arith.constant 1.0 : f32
  %old = memref.load %step[] : memref<f32>
  %new = arith.addf %old, %one : f32
  linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%step : memref<f32>) {
  ^bb0(%o: f32):
    linalg.yield %new : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%w : memref<16xf32>) {
  ^bb0(%o: f32):
    %m = arith.mulf %o, %new : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A strided view crosses as the flat buffer under it (kernels take bare
// pointers) and is indexed with its strides in the kernel.
// CHECK-LABEL: func.func @strided
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [30], strides: [1] : memref<2x3xf32, strided<[10, 1], offset: 17>> to memref<30xf32>
// CHECK: gpu.launch
// CHECK: memref.load %[[FLAT]][%{{.*}}] {dlc.point_map = affine_map<(d0, d1) -> (d0, d1)>} : memref<30xf32>
func.func @strided(%x: memref<4x10xf32>, %y: memref<2x3xf32>) attributes {dlc.entry} {
  %v = memref.subview %x[1, 7] [2, 3] [1, 1] : memref<4x10xf32> to memref<2x3xf32, strided<[10, 1], offset: 17>>
  linalg.copy ins(%v : memref<2x3xf32, strided<[10, 1], offset: 17>>) outs(%y : memref<2x3xf32>)
  return
}

// -----

// x W^T as the lowering of a linear layer writes it: the transpose of the
// weight and the zero fill of the accumulator fold into the call
// (transpose flag, beta = 0); nothing else is left to run.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:arg[0-9]+]]: memref<64x784xf32>, %[[W:arg[0-9]+]]: memref<256x784xf32>, %[[Y:arg[0-9]+]]: memref<64x256xf32>, %[[CTX:arg[0-9]+]]: !llvm.ptr
// CHECK-NOT: linalg.
// CHECK-NOT: gpu.launch
// CHECK-NOT: arith.constant 1.000000e+00 : f32
// CHECK: memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: call @dlc_cuda_gemm(%[[CTX]], %c0_i32{{.*}}, %c0_i32{{.*}}, %c1_i64, %c64_i64, %c256_i64, %c784_i64, %{{[0-9]+}}, %c784_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %{{[0-9]+}}, %c784_i64{{.*}}, %c0_i64{{.*}}, %c1_i32{{.*}}, %cst{{[_0-9]*}}, %{{[0-9]+}}, %c256_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %c0_i64{{.*}}, %c0_i64{{[_0-9]*}})
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @linear(%x: memref<64x784xf32>, %w: memref<256x784xf32>, %y: memref<64x256xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %wt = memref.alloc() : memref<784x256xf32>
  linalg.transpose ins(%w : memref<256x784xf32>) outs(%wt : memref<784x256xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%y : memref<64x256xf32>)
  linalg.matmul ins(%x, %wt : memref<64x784xf32>, memref<784x256xf32>) outs(%y : memref<64x256xf32>)
  return
}

// -----

// Not folded: the transposed weight has another reader, and the
// accumulator is read between its fill and the GEMM.
// CHECK-LABEL: func.func @no_fold
// CHECK-COUNT-4: gpu.launch
// CHECK: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @dlc_cuda_gemm(%{{.*}}, %c2_i64, %c4_i64, %c3_i64, %{{[0-9]+}}, %c3_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %{{[0-9]+}}, %c4_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %[[BETA]], %{{[0-9]+}}, %c4_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %c0_i64{{.*}}, %c0_i64{{[_0-9]*}})
func.func @no_fold(%x: memref<2x3xf32>, %w: memref<4x3xf32>, %y: memref<2x4xf32>, %z: memref<3x4xf32>, %s: memref<2x4xf32>) attributes {dlc.entry} {
  %one = arith.constant 0.0 : f32
  %wt = memref.alloc() : memref<3x4xf32>
  linalg.transpose ins(%w : memref<4x3xf32>) outs(%wt : memref<3x4xf32>) permutation = [1, 0]
  linalg.copy ins(%wt : memref<3x4xf32>) outs(%z : memref<3x4xf32>)
  linalg.fill ins(%one : f32) outs(%y : memref<2x4xf32>)
  linalg.copy ins(%y : memref<2x4xf32>) outs(%s : memref<2x4xf32>)
  linalg.matmul ins(%x, %wt : memref<2x3xf32>, memref<3x4xf32>) outs(%y : memref<2x4xf32>)
  return
}

// -----

// Autocast's matmul (bf16 A and B, fp32 C) goes to cuBLASLt as it is:
// dtype_ab = DLC_BF16 (2), dtype_c = DLC_F32 (0), no widening kernel.
// CHECK-LABEL: func.func @gemm_bf16
// CHECK-NOT: gpu.launch
// CHECK: call @dlc_cuda_gemm(%{{.*}}, %c2_i32, %c0_i32{{.*}}, %c1_i64, %c64_i64, %c10_i64, %c256_i64
// CHECK-NOT: gpu.launch
func.func @gemm_bf16(%a: memref<64x256xbf16>, %b: memref<256x10xbf16>, %c: memref<64x10xf32>) attributes {dlc.entry} {
  linalg.matmul ins(%a, %b : memref<64x256xbf16>, memref<256x10xbf16>) outs(%c : memref<64x10xf32>)
  return
}

// -----

// A bf16 GEMM whose fp32 result is only rounded to bf16 (autocast's weight
// gradient, which the optimizer reads rounded): cuBLASLt stores it rounded
// (dtype_c = DLC_BF16, 2) into a bf16 buffer, and the reader takes the
// bf16 element as it was rounded; the fp32 buffer and its fill are gone.
// CHECK-LABEL: func.func @gemm_rounded
// CHECK-SAME: (%{{[^:]*}}: memref<64x256xbf16>, %{{[^:]*}}: memref<256x16xbf16>, %[[P:[^:]*]]: memref<64x16xf32>
// CHECK-NOT: memref<64x16xf32>
// CHECK: %[[G:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x16xbf16>
// CHECK-NOT: memref.alloc
// CHECK: call @dlc_cuda_gemm(%{{.*}}, %c2_i32, %c2_i32{{.*}}, %c1_i64, %c64_i64, %c16_i64, %c256_i64
// CHECK: gpu.launch
// CHECK: memref.load %[[G]]
// CHECK-NOT: arith.truncf
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: memref.store %{{.*}}, %[[P]]
#m2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @gemm_rounded(%a: memref<64x256xbf16>, %b: memref<256x16xbf16>, %p: memref<64x16xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %g = memref.alloc() {alignment = 64 : i64} : memref<64x16xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<64x16xf32>)
  linalg.matmul ins(%a, %b : memref<64x256xbf16>, memref<256x16xbf16>) outs(%g : memref<64x16xf32>)
  linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%g : memref<64x16xf32>) outs(%p : memref<64x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.truncf %x : f32 to bf16
    %w = arith.extf %r : bf16 to f32
    %u = arith.subf %o, %w : f32
    linalg.yield %u : f32
  }
  return
}

// -----

// Not when a reader uses the fp32 result itself (here, before rounding),
// nor when the result is an entry argument: dtype_c stays DLC_F32 (0).
// CHECK-LABEL: func.func @gemm_not_rounded
// CHECK-COUNT-2: call @dlc_cuda_gemm(%{{[^,]*}}, %c2_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c256_i64
// CHECK: gpu.launch
// CHECK: arith.addf
// CHECK: arith.truncf
#m2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @gemm_not_rounded(%a: memref<64x256xbf16>, %b: memref<256x16xbf16>, %c: memref<64x16xf32>, %p: memref<64x16xbf16>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x16xf32>)
  linalg.matmul ins(%a, %b : memref<64x256xbf16>, memref<256x16xbf16>) outs(%c : memref<64x16xf32>)
  %g = memref.alloc() {alignment = 64 : i64} : memref<64x16xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<64x16xf32>)
  linalg.matmul ins(%a, %b : memref<64x256xbf16>, memref<256x16xbf16>) outs(%g : memref<64x16xf32>)
  linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%g : memref<64x16xf32>) outs(%p : memref<64x16xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %one = arith.constant 1.0 : f32
    %y = arith.addf %x, %one : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// Nor in fp16 (dtype_ab = DLC_F16, 1): the loss scaler must see a gradient
// that overflows fp16 as infinity, which cuBLASLt's rounding is not known
// to give.
// CHECK-LABEL: func.func @gemm_f16_rounded
// CHECK: call @dlc_cuda_gemm(%{{[^,]*}}, %c1_i32, %c0_i32{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c64_i64, %c16_i64, %c256_i64
// CHECK: gpu.launch
// CHECK: arith.truncf %{{.*}} : f32 to f16
#m2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @gemm_f16_rounded(%a: memref<64x256xf16>, %b: memref<256x16xf16>, %p: memref<64x16xf16>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %g = memref.alloc() {alignment = 64 : i64} : memref<64x16xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<64x16xf32>)
  linalg.matmul ins(%a, %b : memref<64x256xf16>, memref<256x16xf16>) outs(%g : memref<64x16xf32>)
  linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%g : memref<64x16xf32>) outs(%p : memref<64x16xf16>) {
  ^bb0(%x: f32, %o: f16):
    %r = arith.truncf %x : f32 to f16
    linalg.yield %r : f16
  }
  return
}

// -----

// A linear layer as the training step lowers it with a small batch: W x^T
// (the input transposed), then bias and ReLU in one loop that reads the
// product transposed. cuBLASLt's epilogue takes both (RELU_BIAS = 2) and
// the GEMM computes x W^T straight into the output (operands swapped, the
// transposes now on W): no kernel is left, and no W x^T buffer.
// CHECK-LABEL: func.func @bias_relu_epilogue
// CHECK-SAME: (%[[X:arg[0-9]+]]: memref<64x784xf32>, %[[W:arg[0-9]+]]: memref<256x784xf32>, %[[B:arg[0-9]+]]: memref<256xf32>, %[[Y:arg[0-9]+]]: memref<64x256xf32>
// CHECK-NOT: gpu.launch
// CHECK-DAG: %[[PX:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK-DAG: %[[PW:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK-DAG: %[[PY:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK-DAG: %[[PB:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: call @dlc_cuda_gemm(%{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}}, %c1_i64, %c64_i64, %c256_i64, %c784_i64, %{{[0-9]+}}, %c784_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %{{[0-9]+}}, %c784_i64{{.*}}, %c0_i64{{.*}}, %c1_i32{{.*}}, %cst{{[_0-9]*}}, %{{[0-9]+}}, %c256_i64{{.*}}, %c0_i64{{.*}}, %c2_i32, %{{[0-9]+}}, %c0_i64{{[_0-9]*}})
// CHECK-NOT: gpu.launch
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @bias_relu_epilogue(%x: memref<64x784xf32>, %w: memref<256x784xf32>, %b: memref<256xf32>, %y: memref<64x256xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<784x64xf32>
  linalg.transpose ins(%x : memref<64x784xf32>) outs(%xt : memref<784x64xf32>) permutation = [1, 0]
  %yt = memref.alloc() : memref<256x64xf32>
  linalg.fill ins(%zero : f32) outs(%yt : memref<256x64xf32>)
  linalg.matmul ins(%w, %xt : memref<256x784xf32>, memref<784x64xf32>) outs(%yt : memref<256x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%yt, %b : memref<256x64xf32>, memref<256xf32>) outs(%y : memref<64x256xf32>) {
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %s = arith.addf %v, %bias : f32
    %neg = arith.cmpf olt, %s, %zero : f32
    %r = arith.select %neg, %zero, %s : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The bias added in place (BIAS = 1); the result is read afterwards, which
// is fine: it is the final value.
// CHECK-LABEL: func.func @bias_in_place
// CHECK-NOT: gpu.launch
// CHECK: call @dlc_cuda_gemm({{.*}}, %c1_i32{{[_0-9]*}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}})
// CHECK: call @dlc_cuda_memcpy
func.func @bias_in_place(%h: memref<64x256xf32>, %w: memref<256x10xf32>, %b: memref<10xf32>, %out: memref<64x10xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<64x10xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<64x10xf32>)
  linalg.matmul ins(%h, %w : memref<64x256xf32>, memref<256x10xf32>) outs(%y : memref<64x10xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : memref<64x10xf32>, memref<10xf32>) outs(%y : memref<64x10xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  }
  memref.copy %y, %out : memref<64x10xf32> to memref<64x10xf32>
  return
}

// -----

// fp16 loss scaling (the step has optimizer.loss_scale) must see NaNs, and
// cuBLASLt's ReLU turns them into 0: the ReLU stays a kernel. The GEMM
// keeps its plain form too.
// CHECK-LABEL: func.func @no_relu_epilogue_with_loss_scaling
// CHECK: call @dlc_cuda_gemm({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK: gpu.launch
func.func @no_relu_epilogue_with_loss_scaling(%h: memref<64x256xf32>, %w: memref<256x10xf32>, %b: memref<10xf32>, %out: memref<64x10xf32>, %scale: memref<f32> {dlc.name = "optimizer.loss_scale"}) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<64x10xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<64x10xf32>)
  linalg.matmul ins(%h, %w : memref<64x256xf32>, memref<256x10xf32>) outs(%y : memref<64x10xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : memref<64x10xf32>, memref<10xf32>) outs(%out : memref<64x10xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %neg = arith.cmpf olt, %s, %zero : f32
    %r = arith.select %neg, %zero, %s : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The raw product is read again after the epilogue (and not overwritten
// first): it must exist, so nothing is folded.
// CHECK-LABEL: func.func @product_read_later
// CHECK: call @dlc_cuda_gemm({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK-COUNT-2: gpu.launch
func.func @product_read_later(%h: memref<64x256xf32>, %w: memref<256x10xf32>, %b: memref<10xf32>, %out: memref<64x10xf32>, %raw: memref<64x10xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<64x10xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<64x10xf32>)
  linalg.matmul ins(%h, %w : memref<64x256xf32>, memref<256x10xf32>) outs(%y : memref<64x10xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : memref<64x10xf32>, memref<10xf32>) outs(%out : memref<64x10xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  }
  linalg.copy ins(%y : memref<64x10xf32>) outs(%raw : memref<64x10xf32>)
  return
}

// -----

// A linear layer's weight and bias gradients: dW = dY^T H, and db the sum
// of dY over the batch (GEMM's k). cuBLASLt computes db next to dW
// (BGRAD_A = 3: the sum of op(A) over k), so neither the zero fill nor the
// one-thread-per-column reduction remain; db's buffer, allocated after the
// GEMM, is allocated before it.
// CHECK-LABEL: func.func @bias_grad
// CHECK-SAME: (%[[DY:arg[0-9]+]]: memref<64x10xf32>, %[[H:arg[0-9]+]]: memref<64x256xf32>
// CHECK: %[[DB:.*]] = memref.alloc() : memref<10xf32>
// CHECK-NOT: gpu.launch
// CHECK-DAG: %[[PDB:.*]] = memref.extract_aligned_pointer_as_index %[[DB]]
// CHECK-DAG: %[[IDB:.*]] = arith.index_cast %[[PDB]] : index to i64
// CHECK: call @dlc_cuda_gemm(%{{.*}}, %c0_i32{{.*}}, %c0_i32{{.*}}, %c1_i64, %c10_i64, %c256_i64, %c64_i64, %{{[0-9]+}}, %c10_i64{{.*}}, %c0_i64{{.*}}, %c1_i32{{.*}}, %{{[0-9]+}}, %c256_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %cst{{[_0-9]*}}, %{{[0-9]+}}, %c256_i64{{.*}}, %c0_i64{{.*}}, %c3_i32, %[[IDB]], %c0_i64{{[_0-9]*}})
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
// CHECK: return
func.func @bias_grad(%dy: memref<64x10xf32>, %h: memref<64x256xf32>, %dw: memref<10x256xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %dyt = memref.alloc() : memref<10x64xf32>
  linalg.transpose ins(%dy : memref<64x10xf32>) outs(%dyt : memref<10x64xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%dw : memref<10x256xf32>)
  linalg.matmul ins(%dyt, %h : memref<10x64xf32>, memref<64x256xf32>) outs(%dw : memref<10x256xf32>)
  %db = memref.alloc() : memref<10xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<10xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<64x10xf32>) outs(%db : memref<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  call @use(%db) : (memref<10xf32>) -> ()
  return
}
func.func private @use(memref<10xf32>)

// -----

// The sum of op(B) over k (BGRAD_B = 4): B's column sums.
// CHECK-LABEL: func.func @bias_grad_b
// CHECK-NOT: gpu.launch
// CHECK: call @dlc_cuda_gemm({{.*}}, %c4_i32, %{{[0-9]+}}, %c0_i64{{[_0-9]*}})
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @bias_grad_b(%a: memref<10x64xf32>, %x: memref<64x256xf32>, %c: memref<10x256xf32>, %sum: memref<256xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%sum : memref<256xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<10x256xf32>)
  linalg.matmul ins(%a, %x : memref<10x64xf32>, memref<64x256xf32>) outs(%c : memref<10x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<64x256xf32>) outs(%sum : memref<256xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// No bias gradient: the sum of dY over its columns is not over the GEMM's
// k; and dY written between the GEMM and its sum (the GEMM would read the
// old values).
// CHECK-LABEL: func.func @no_bias_grad
// CHECK: call @dlc_cuda_gemm({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK-COUNT-2: gpu.launch
// CHECK: call @dlc_cuda_gemm({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @no_bias_grad(%dy: memref<64x10xf32>, %h: memref<64x256xf32>, %dw: memref<10x256xf32>, %rows: memref<64xf32>, %db: memref<10xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %dyt = memref.alloc() : memref<10x64xf32>
  linalg.transpose ins(%dy : memref<64x10xf32>) outs(%dyt : memref<10x64xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%dw : memref<10x256xf32>)
  linalg.matmul ins(%dyt, %h : memref<10x64xf32>, memref<64x256xf32>) outs(%dw : memref<10x256xf32>)
  linalg.fill ins(%zero : f32) outs(%rows : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy : memref<64x10xf32>) outs(%rows : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  %dyt2 = memref.alloc() : memref<10x64xf32>
  linalg.transpose ins(%dy : memref<64x10xf32>) outs(%dyt2 : memref<10x64xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%dw : memref<10x256xf32>)
  linalg.matmul ins(%dyt2, %h : memref<10x64xf32>, memref<64x256xf32>) outs(%dw : memref<10x256xf32>)
  linalg.fill ins(%one : f32) outs(%dy : memref<64x10xf32>)
  linalg.fill ins(%zero : f32) outs(%db : memref<10xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<64x10xf32>) outs(%db : memref<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A bias and PyTorch's tanh GELU, as dlc-lower-to-linalg writes it (its
// constants hoisted out of the body by canonicalize): cuBLASLt's GELU_BIAS
// epilogue (5). The erf form is not that GELU and stays a kernel, and so
// does the tanh form in a step with fp16 loss scaling.
// CHECK-LABEL: func.func @gelu_bias_epilogue
// CHECK-NOT: gpu.launch
// CHECK: call @dlc_cuda_gemm({{.*}}, %c5_i32, %{{[0-9]+}}, %c0_i64{{[_0-9]*}})
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @gelu_bias_epilogue(%h: memref<64x256xf32>, %w: memref<256x32xf32>, %b: memref<32xf32>, %out: memref<64x32xf32>) attributes {dlc.entry} {
  %k = arith.constant 0.797884583 : f32
  %c = arith.constant 4.471500e-02 : f32
  %one = arith.constant 1.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<64x32xf32>)
  linalg.matmul ins(%h, %w : memref<64x256xf32>, memref<256x32xf32>) outs(%y : memref<64x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : memref<64x32xf32>, memref<32xf32>) outs(%out : memref<64x32xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    %1 = arith.mulf %0, %0 : f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.mulf %2, %c : f32
    %4 = arith.addf %0, %3 : f32
    %5 = arith.mulf %4, %k : f32
    %6 = math.tanh %5 : f32
    %7 = arith.mulf %0, %half : f32
    %8 = arith.addf %6, %one : f32
    %9 = arith.mulf %7, %8 : f32
    linalg.yield %9 : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @no_gelu_epilogue
// CHECK: call @dlc_cuda_gemm({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK: gpu.launch
// CHECK: math.erf
// CHECK: call @dlc_cuda_gemm({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK: gpu.launch
// CHECK: math.tanh
func.func @no_gelu_epilogue(%h: memref<64x256xf32>, %w: memref<256x32xf32>, %b: memref<32xf32>, %out: memref<64x32xf32>, %out2: memref<64x32xf32>, %scale: memref<f32> {dlc.name = "optimizer.loss_scale"}) attributes {dlc.entry} {
  %k = arith.constant 0.797884583 : f32
  %c = arith.constant 4.471500e-02 : f32
  %one = arith.constant 1.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<64x32xf32>)
  linalg.matmul ins(%h, %w : memref<64x256xf32>, memref<256x32xf32>) outs(%y : memref<64x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : memref<64x32xf32>, memref<32xf32>) outs(%out : memref<64x32xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    %1 = arith.mulf %0, %rsqrt2 : f32
    %2 = math.erf %1 : f32
    %3 = arith.mulf %0, %half : f32
    %4 = arith.addf %2, %one : f32
    %5 = arith.mulf %3, %4 : f32
    linalg.yield %5 : f32
  }
  %y2 = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%y2 : memref<64x32xf32>)
  linalg.matmul ins(%h, %w : memref<64x256xf32>, memref<256x32xf32>) outs(%y2 : memref<64x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y2, %b : memref<64x32xf32>, memref<32xf32>) outs(%out2 : memref<64x32xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %0 = arith.addf %in, %bias : f32
    %1 = arith.mulf %0, %0 : f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.mulf %2, %c : f32
    %4 = arith.addf %0, %3 : f32
    %5 = arith.mulf %4, %k : f32
    %6 = math.tanh %5 : f32
    %7 = arith.mulf %0, %half : f32
    %8 = arith.addf %6, %one : f32
    %9 = arith.mulf %7, %8 : f32
    linalg.yield %9 : f32
  }
  return
}

// -----

// A training step's ReLU layer: the bias epilogue's pre-activation is read
// by the ReLU and, in the backward pass, by the ReLU's gradient (in place
// over the gradient a later GEMM wrote). The first GEMM writes the ReLU's
// output and a bit mask of where the pre-activation was positive
// (RELU_AUX_BIAS = 6; 256 rows of 64 columns: 2 x 128 bits per row, 2048
// bytes), the later one applies the gradient through the mask (DRELU = 7):
// neither loop nor the pre-activation remain.
// CHECK-LABEL: func.func @relu_mask
// CHECK-NOT: gpu.launch
// CHECK: %[[MASK:.*]] = memref.alloc() : memref<2048xi8>
// CHECK: %[[PM:.*]] = memref.extract_aligned_pointer_as_index %[[MASK]]
// CHECK: %[[IM:.*]] = arith.index_cast %[[PM]] : index to i64
// CHECK: call @dlc_cuda_gemm({{.*}}, %c6_i32, %{{[0-9]+}}, %[[IM]])
// CHECK: call @dlc_cuda_gemm({{.*}}, %c7_i32, %c0_i64{{[_0-9]*}}, %{{[0-9]+}})
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
// CHECK: return
func.func @relu_mask(%x: memref<64x784xf32>, %w1: memref<256x784xf32>, %b1: memref<256xf32>, %h: memref<64x256xf32>, %dz: memref<64x10xf32>, %w2: memref<10x256xf32>, %dh: memref<64x256xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<784x64xf32>
  linalg.transpose ins(%x : memref<64x784xf32>) outs(%xt : memref<784x64xf32>) permutation = [1, 0]
  %yt = memref.alloc() : memref<256x64xf32>
  linalg.fill ins(%zero : f32) outs(%yt : memref<256x64xf32>)
  linalg.matmul ins(%w1, %xt : memref<256x784xf32>, memref<784x64xf32>) outs(%yt : memref<256x64xf32>)
  %pre = memref.alloc() : memref<64x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%yt, %b1 : memref<256x64xf32>, memref<256xf32>) outs(%pre : memref<64x256xf32>) {
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pre : memref<64x256xf32>) outs(%h : memref<64x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.cmpf olt, %in, %zero : f32
    %r = arith.select %neg, %zero, %in : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%dh : memref<64x256xf32>)
  linalg.matmul ins(%dz, %w2 : memref<64x10xf32>, memref<10x256xf32>) outs(%dh : memref<64x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pre, %dh : memref<64x256xf32>, memref<64x256xf32>) outs(%dh : memref<64x256xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %pos = arith.cmpf ogt, %p, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The pre-activation read once more (here: copied out): it must be
// stored, so the bias epilogue writes it and both ReLU loops stay kernels.
// CHECK-LABEL: func.func @relu_mask_pre_read
// CHECK: call @dlc_cuda_gemm({{.*}}, %c1_i32{{[_0-9]*}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}})
// CHECK: gpu.launch
// CHECK: call @dlc_cuda_gemm({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK: gpu.launch
func.func @relu_mask_pre_read(%x: memref<64x784xf32>, %w1: memref<256x784xf32>, %b1: memref<256xf32>, %h: memref<64x256xf32>, %dz: memref<64x10xf32>, %w2: memref<10x256xf32>, %dh: memref<64x256xf32>, %saved: memref<64x256xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<784x64xf32>
  linalg.transpose ins(%x : memref<64x784xf32>) outs(%xt : memref<784x64xf32>) permutation = [1, 0]
  %yt = memref.alloc() : memref<256x64xf32>
  linalg.fill ins(%zero : f32) outs(%yt : memref<256x64xf32>)
  linalg.matmul ins(%w1, %xt : memref<256x784xf32>, memref<784x64xf32>) outs(%yt : memref<256x64xf32>)
  %pre = memref.alloc() : memref<64x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%yt, %b1 : memref<256x64xf32>, memref<256xf32>) outs(%pre : memref<64x256xf32>) {
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pre : memref<64x256xf32>) outs(%h : memref<64x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.cmpf olt, %in, %zero : f32
    %r = arith.select %neg, %zero, %in : f32
    linalg.yield %r : f32
  }
  memref.copy %pre, %saved : memref<64x256xf32> to memref<64x256xf32>
  linalg.fill ins(%zero : f32) outs(%dh : memref<64x256xf32>)
  linalg.matmul ins(%dz, %w2 : memref<64x10xf32>, memref<10x256xf32>) outs(%dh : memref<64x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pre, %dh : memref<64x256xf32>, memref<64x256xf32>) outs(%dh : memref<64x256xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %pos = arith.cmpf ogt, %p, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Two GEMMs of one shape share a zero-filled accumulator after CSE, and
// bufferization copies the zeros for the first: a copy of what a fill
// wrote is that fill, so both GEMMs take their zeros as beta = 0, with no
// device copy and no fill kernel left.
// CHECK-LABEL: func.func @shared_zero_accumulator
// CHECK-NOT: gpu.launch
// CHECK-NOT: call @dlc_cuda_memcpy
// CHECK: call @dlc_cuda_gemm
// CHECK-NOT: gpu.launch
// CHECK: call @dlc_cuda_memcpy
// CHECK-NOT: gpu.launch
// CHECK: call @dlc_cuda_gemm
// CHECK-NOT: gpu.launch
// CHECK: call @dlc_cuda_memcpy
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @shared_zero_accumulator(%a: memref<64x256xf32>, %b: memref<256x10xf32>, %a2: memref<64x256xf32>, %c1: memref<64x10xf32>, %c2: memref<64x10xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<64x10xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<64x10xf32>)
  %first = memref.alloc() : memref<64x10xf32>
  memref.copy %acc, %first : memref<64x10xf32> to memref<64x10xf32>
  linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x10xf32>) outs(%first : memref<64x10xf32>)
  memref.copy %first, %c1 : memref<64x10xf32> to memref<64x10xf32>
  linalg.matmul ins(%a2, %b : memref<64x256xf32>, memref<256x10xf32>) outs(%acc : memref<64x10xf32>)
  memref.copy %acc, %c2 : memref<64x10xf32> to memref<64x10xf32>
  return
}

// -----

// Bufferization reuses one buffer for the transposes of a step: a
// transpose whose result only its GEMM reads before the next transpose
// overwrites it is folded (both here); one read after its GEMM is not.
// CHECK-LABEL: func.func @reused_transpose_buffer
// CHECK-NOT: gpu.launch
// CHECK: call @dlc_cuda_gemm
// CHECK-NOT: gpu.launch
// CHECK: call @dlc_cuda_gemm
// CHECK: gpu.launch
// CHECK: call @dlc_cuda_gemm
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @reused_transpose_buffer(%x: memref<2x3xf32>, %w1: memref<4x3xf32>, %w2: memref<4x3xf32>, %w3: memref<4x3xf32>, %y1: memref<2x4xf32>, %y2: memref<2x4xf32>, %y3: memref<2x4xf32>, %saved: memref<3x4xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %wt = memref.alloc() : memref<3x4xf32>
  linalg.transpose ins(%w1 : memref<4x3xf32>) outs(%wt : memref<3x4xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%y1 : memref<2x4xf32>)
  linalg.matmul ins(%x, %wt : memref<2x3xf32>, memref<3x4xf32>) outs(%y1 : memref<2x4xf32>)
  linalg.transpose ins(%w2 : memref<4x3xf32>) outs(%wt : memref<3x4xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%y2 : memref<2x4xf32>)
  linalg.matmul ins(%x, %wt : memref<2x3xf32>, memref<3x4xf32>) outs(%y2 : memref<2x4xf32>)
  linalg.transpose ins(%w3 : memref<4x3xf32>) outs(%wt : memref<3x4xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%y3 : memref<2x4xf32>)
  linalg.matmul ins(%x, %wt : memref<2x3xf32>, memref<3x4xf32>) outs(%y3 : memref<2x4xf32>)
  linalg.copy ins(%wt : memref<3x4xf32>) outs(%saved : memref<3x4xf32>)
  return
}

// -----

// The ReLU's gradient written to another buffer (bufferization reused the
// ReLU output's): DRELU computes it in place over dh, and the gradient's
// readers up to the next overwrite of that buffer (the fill, then two
// fills: the copy of a fill is one) read dh instead.
// CHECK-LABEL: func.func @relu_mask_redirected
// CHECK-SAME: %[[DH:arg[0-9]+]]: memref<64x256xf32>, %[[OUT:arg[0-9]+]]: memref<64x256xf32>
// CHECK: call @dlc_cuda_gemm({{.*}}, %c6_i32, %{{[0-9]+}}, %{{[0-9]+}})
// CHECK: call @dlc_cuda_gemm({{.*}}, %c7_i32, %c0_i64{{[_0-9]*}}, %{{[0-9]+}})
// CHECK-NOT: gpu.launch
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[DH]]
// CHECK: call @dlc_cuda_memcpy(%{{.*}}, %{{[0-9]+}}, %{{[0-9]+}}, %c65536_i64)
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @relu_mask_redirected(%x: memref<64x784xf32>, %w1: memref<256x784xf32>, %b1: memref<256xf32>, %dz: memref<64x10xf32>, %w2: memref<10x256xf32>, %dh: memref<64x256xf32>, %out: memref<64x256xf32>, %h2: memref<64x256xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %yt = memref.alloc() : memref<256x64xf32>
  %xt = memref.alloc() : memref<784x64xf32>
  linalg.transpose ins(%x : memref<64x784xf32>) outs(%xt : memref<784x64xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%yt : memref<256x64xf32>)
  linalg.matmul ins(%w1, %xt : memref<256x784xf32>, memref<784x64xf32>) outs(%yt : memref<256x64xf32>)
  %pre = memref.alloc() : memref<64x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%yt, %b1 : memref<256x64xf32>, memref<256xf32>) outs(%pre : memref<64x256xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  }
  %h = memref.alloc() : memref<64x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pre : memref<64x256xf32>) outs(%h : memref<64x256xf32>) {
  ^bb0(%in: f32, %o: f32):
    %neg = arith.cmpf olt, %in, %zero : f32
    %r = arith.select %neg, %zero, %in : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%dh : memref<64x256xf32>)
  linalg.matmul ins(%dz, %w2 : memref<64x10xf32>, memref<10x256xf32>) outs(%dh : memref<64x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pre, %dh : memref<64x256xf32>, memref<64x256xf32>) outs(%h : memref<64x256xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %pos = arith.cmpf ogt, %p, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %h, %out : memref<64x256xf32> to memref<64x256xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<64x256xf32>)
  memref.copy %h, %h2 : memref<64x256xf32> to memref<64x256xf32>
  return
}

// -----

// The same, but the GEMM's raw product dh is read after the gradient: it
// must be stored as it is, so the ReLU and its gradient stay kernels.
// CHECK-LABEL: func.func @relu_mask_raw_product_read
// CHECK: call @dlc_cuda_gemm({{.*}}, %c1_i32{{[_0-9]*}}, %{{[0-9]+}}, %c0_i64{{[_0-9]*}})
// CHECK: gpu.launch
// CHECK: call @dlc_cuda_gemm({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK: gpu.launch
func.func @relu_mask_raw_product_read(%x: memref<64x784xf32>, %w1: memref<256x784xf32>, %b1: memref<256xf32>, %dz: memref<64x10xf32>, %w2: memref<10x256xf32>, %dh: memref<64x256xf32>, %out: memref<64x256xf32>, %h2: memref<64x256xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %yt = memref.alloc() : memref<256x64xf32>
  %xt = memref.alloc() : memref<784x64xf32>
  linalg.transpose ins(%x : memref<64x784xf32>) outs(%xt : memref<784x64xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%yt : memref<256x64xf32>)
  linalg.matmul ins(%w1, %xt : memref<256x784xf32>, memref<784x64xf32>) outs(%yt : memref<256x64xf32>)
  %pre = memref.alloc() : memref<64x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%yt, %b1 : memref<256x64xf32>, memref<256xf32>) outs(%pre : memref<64x256xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  }
  %h = memref.alloc() : memref<64x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pre : memref<64x256xf32>) outs(%h : memref<64x256xf32>) {
  ^bb0(%in: f32, %o: f32):
    %neg = arith.cmpf olt, %in, %zero : f32
    %r = arith.select %neg, %zero, %in : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%dh : memref<64x256xf32>)
  linalg.matmul ins(%dz, %w2 : memref<64x10xf32>, memref<10x256xf32>) outs(%dh : memref<64x256xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%pre, %dh : memref<64x256xf32>, memref<64x256xf32>) outs(%h : memref<64x256xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %pos = arith.cmpf ogt, %p, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %h, %out : memref<64x256xf32> to memref<64x256xf32>
  memref.copy %dh, %h2 : memref<64x256xf32> to memref<64x256xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<64x256xf32>)
  memref.copy %h, %h2 : memref<64x256xf32> to memref<64x256xf32>
  return
}
