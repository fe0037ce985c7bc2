// RUN: dlc-opt %s -dlc-map-to-gpu -split-input-file --mlir-print-local-scope | FileCheck %s

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

// A contiguous copy of more than 256 elements is one device memcpy, a
// smaller one a kernel (which fuses with its neighbours, here the loop
// before it); the runtime's function is declared once.
// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[A:arg[0-9]+]]: memref<64x10xf32>, %[[B:arg[0-9]+]]: memref<64x10xf32>, %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>, %[[CTX:arg[0-9]+]]: !llvm.ptr {dlc.name = "cuda_ctx"})
// CHECK: call @dlc_cuda_memcpy(%[[CTX]], %{{.*}}, %{{.*}}, %c2560_i64)
// CHECK-NOT: memref.copy
// CHECK: gpu.launch
// CHECK: math.exp
// CHECK: } {dlc.points = array<i64: 4, 8>}
// CHECK: gpu.launch
// CHECK: memref.load
// CHECK: memref.store
// CHECK: } {dlc.points = array<i64: 4, 8>}
// CHECK-NOT: memref.copy
// CHECK: func.func private @dlc_cuda_memcpy(!llvm.ptr, i64, i64, i64)
// CHECK-NOT: func.func private
func.func @copies(%a: memref<64x10xf32>, %b: memref<64x10xf32>, %c: memref<4x8xf32>, %d: memref<4x8xf32>) attributes {dlc.entry} {
  memref.copy %a, %b : memref<64x10xf32> to memref<64x10xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<4x8xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  memref.copy %c, %d : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// A GEMM that dlc-map-gemms did not map (here: it did not run) is a kernel
// of a thread per output element walking k, never a warp, however long k is.
// CHECK-LABEL: func.func @gemm_kernel
// CHECK-NOT: dlc_cuda_gemm
// CHECK: gpu.launch
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c256{{.*}} step %c1
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: } {dlc.points = array<i64: 64, 10>}
// CHECK-NOT: dlc_cuda_gemm
func.func @gemm_kernel(%a: memref<64x256xf32>, %b: memref<256x10xf32>, %c: memref<64x10xf32>) attributes {dlc.entry} {
  linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x10xf32>) outs(%c : memref<64x10xf32>)
  return
}

// -----

// An entry whose only op is a small copy: it becomes a linalg.copy kernel,
// which needs the linalg dialect loaded by the pass itself (a crash before).
// CHECK-LABEL: func.func @only_a_copy
// CHECK: gpu.launch
// CHECK-NOT: memref.copy
func.func @only_a_copy(%a: memref<4x8xf32>, %b: memref<4x8xf32>) attributes {dlc.entry} {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// A recurrent layer's steps: a host loop without loop-carried values stays
// on the host, its body mapped like the entry's. A step's view of the
// sequence has an offset known at run time only: the kernel takes the
// whole buffer under it, of static shape, and indexes it from that offset,
// read on the host.
// CHECK-LABEL: func.func @steps
// CHECK-SAME: (%[[SEQ:arg[0-9]+]]: memref<6x4x16xf32>, %[[H:arg[0-9]+]]: memref<4x16xf32>
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[VIEW:.*]] = memref.subview %[[SEQ]][%[[T]], 0, 0]
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[VIEW]] to offset: [0], sizes: [384], strides: [1]
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[VIEW]]
// CHECK: gpu.launch
// CHECK: %[[I:.*]] = arith.addi %[[OFF]], %{{.*}} : index
// CHECK: memref.load %[[FLAT]][%{{.*}}]
// CHECK: math.tanh
// CHECK: memref.store %{{.*}}, %[[H]][%{{.*}}, %{{.*}}]
// CHECK: gpu.terminator
// CHECK: }
// CHECK-NOT: gpu.launch
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @steps(%seq: memref<6x4x16xf32>, %h: memref<4x16xf32>) attributes {dlc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %t = %c0 to %c6 step %c1 {
    %v = memref.subview %seq[%t, 0, 0] [1, 4, 16] [1, 1, 1] : memref<6x4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%v : memref<4x16xf32, strided<[16, 1], offset: ?>>) outs(%h : memref<4x16xf32>) {
    ^bb0(%a: f32, %b: f32):
      %e = math.tanh %a : f32
      linalg.yield %e : f32
    }
  }
  return
}

// -----

// A backward step reads the initial state at the first step and the state
// saved by the step before at the others, a buffer chosen on the host: an
// scf.if on the host, whose branches launch the kernel on each buffer (with
// its own layout), so that the entry's CUDA graph records the branch each
// iteration takes.
// CHECK-LABEL: func.func @chosen_state
// CHECK-SAME: (%[[SEQ:arg[0-9]+]]: memref<6x4x16xf32>, %[[H0:arg[0-9]+]]: memref<4x16xf32>, %[[OUT:arg[0-9]+]]: memref<4x16xf32>
// CHECK: scf.for
// CHECK: %[[FIRST:.*]] = arith.cmpi eq
// CHECK: scf.if %[[FIRST]] {
// CHECK: gpu.launch
// CHECK: memref.load %[[H0]][%{{.*}}, %{{.*}}]
// CHECK: } else {
// CHECK: memref.extract_strided_metadata
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}}[%{{.*}}] {{.*}}: memref<384xf32>
// CHECK: }
// CHECK-NOT: linalg.generic
#id3 = affine_map<(d0, d1) -> (d0, d1)>
func.func @chosen_state(%seq: memref<6x4x16xf32>, %h0: memref<4x16xf32>, %out: memref<4x16xf32>) attributes {dlc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %t = %c0 to %c6 step %c1 {
    %first = arith.cmpi eq, %t, %c0 : index
    %prev = arith.subi %t, %c1 : index
    %p = arith.select %first, %t, %prev : index
    %v = memref.subview %seq[%p, 0, 0] [1, 4, 16] [1, 1, 1] : memref<6x4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    %a = memref.cast %h0 : memref<4x16xf32> to memref<4x16xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %v : memref<4x16xf32, strided<[16, 1], offset: ?>> to memref<4x16xf32, strided<[?, ?], offset: ?>>
    %s = arith.select %first, %a, %b : memref<4x16xf32, strided<[?, ?], offset: ?>>
    linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
        ins(%s : memref<4x16xf32, strided<[?, ?], offset: ?>>) outs(%out : memref<4x16xf32>) {
    ^bb0(%x: f32, %y: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
    }
  }
  return
}
