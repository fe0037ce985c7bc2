// RUN: dlc-opt %s -dlc-map-gemms=small-gemm-fmas=0 -dlc-map-to-gpu -dlc-fuse-kernels=one-block=0 -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-map-gemms=small-gemm-fmas=0 -dlc-map-to-gpu -dlc-fuse-kernels=one-block=0 -split-input-file | FileCheck %s --check-prefix=CLEAN
// The annotations of dlc-map-to-gpu are gone afterwards.
// CLEAN-NOT: dlc.point

// A softmax row's statistics: the max's fill and loop, the sum's fill and
// loop, all a thread per row, each thread touching only its row of %max and
// %sum: one kernel, in order.
// CHECK-LABEL: func.func @row_statistics
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[MAX:arg[0-9]+]]
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[MAX]]
// CHECK: memref.store %{{.*}}, %[[SUM:arg[0-9]+]]
// CHECK: scf.for
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[SUM]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_statistics(%x: memref<8x10xf32>, %max: memref<8xf32>, %sum: memref<8xf32>) attributes {dlc.entry} {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%max : memref<8xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x10xf32>) outs(%max : memref<8xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %m, %a : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<8xf32>)
  linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<8x10xf32>, memref<8xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %r = arith.addf %s, %e : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The second kernel reads %t transposed: thread (i, j) would read what
// thread (j, i) writes. Two kernels, and not side by side either.
// CHECK-LABEL: func.func @transposed_read
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_read(%x: memref<8x8xf32>, %t: memref<8x8xf32>, %u: memref<8x8xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%t : memref<8x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x8xf32>) outs(%u : memref<8x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A function of the point that is not a permutation (here a reversal): the
// threads exchange elements. Two kernels.
// CHECK-LABEL: func.func @reversed_read
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
#id1 = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (7 - d0)>
func.func @reversed_read(%x: memref<8xf32>, %t: memref<8xf32>, %u: memref<8xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#rev, #id1], iterator_types = ["parallel"]}
      ins(%t : memref<8xf32>) outs(%u : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Independent kernels of different sizes (two optimizer updates): one grid
// of 2 + 1 blocks of 256 threads. Blocks 0-1 run the first kernel; block 2
// runs the second with block index 0 and its 10 threads.
// CHECK-LABEL: func.func @side_by_side
// CHECK-SAME: (%[[W:arg[0-9]+]]: memref<300xf32>, %[[B:arg[0-9]+]]: memref<10xf32>
// CHECK: gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c3{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[BID]], %c2{{.*}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: arith.muli %[[BID]], %c256
// CHECK: memref.store %{{.*}}, %[[W]]
// CHECK: %[[END:.*]] = arith.cmpi ult, %[[BID]], %c3{{.*}} : index
// CHECK: %[[START:.*]] = arith.cmpi uge, %[[BID]], %c2{{.*}} : index
// CHECK: %[[MINE:.*]] = arith.andi %[[END]], %[[START]] : i1
// CHECK: %[[LANES:.*]] = arith.cmpi ult, %[[TID]], %c10{{.*}} : index
// CHECK: %[[SECOND:.*]] = arith.andi %[[MINE]], %[[LANES]] : i1
// CHECK: scf.if %[[SECOND]] {
// CHECK: %[[OWN:.*]] = arith.subi %[[BID]], %c2{{.*}} : index
// CHECK: arith.muli %[[OWN]], %c10
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#v = affine_map<(d0) -> (d0)>
func.func @side_by_side(%w: memref<300xf32>, %b: memref<10xf32>) attributes {dlc.entry} {
  %lr = arith.constant 0.1 : f32
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%w : memref<300xf32>) {
  ^bb0(%o: f32):
    %m = arith.mulf %o, %lr : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%b : memref<10xf32>) {
  ^bb0(%o: f32):
    %m = arith.mulf %o, %lr : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Kernels of different thread spaces where the second reads what the first
// writes stay two; so do kernels with a GEMM (device work) between them.
// CHECK-LABEL: func.func @dependent_or_apart
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: call @dlc_cuda_gemm
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
#p = affine_map<(d0) -> (d0)>
#pq = affine_map<(d0, d1) -> (d0, d1)>
#p_of_pq = affine_map<(d0, d1) -> (d0)>
func.func @dependent_or_apart(%x: memref<8xf32>, %t: memref<8xf32>, %u: memref<8x2xf32>,
                              %a: memref<8x8xf32>, %c: memref<8x8xf32>, %v: memref<8xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#p, #p], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.exp %i : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#p_of_pq, #pq], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8xf32>) outs(%u : memref<8x2xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.matmul ins(%a, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  linalg.generic {indexing_maps = [#p, #p], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%v : memref<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.exp %i : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Single-thread kernels (a short sum: its fill, the sum, a scaling) are one
// kernel: a single thread sees its own writes, whatever their indices.
// CHECK-LABEL: func.func @one_thread
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{.*}} = %c1{{[_0-9]*}},
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#all = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
func.func @one_thread(%x: memref<16xf32>, %sum: memref<f32>, %mean: memref<f32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.0625 : f32
  linalg.fill ins(%zero : f32) outs(%sum : memref<f32>)
  linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction"]}
      ins(%x : memref<16xf32>) outs(%sum : memref<f32>) {
  ^bb0(%a: f32, %s: f32):
    %r = arith.addf %s, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sum : memref<f32>) outs(%mean : memref<f32>) {
  ^bb0(%s: f32, %o: f32):
    %r = arith.mulf %s, %scale : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A loss over a batch of 64: its fill, a warp's sum, its mean. The fill and
// the mean are kernels of a thread per point, which run on the warp's
// first lane, the one that reads and writes the sum: one kernel of 32
// threads.
// CHECK-LABEL: func.func @loss_on_first_lane
// CHECK-SAME: (%{{.*}}: memref<64xf32>, %[[SUM:arg[0-9]+]]: memref<f32>, %[[MEAN:arg[0-9]+]]: memref<f32>
// CHECK: gpu.launch blocks(%[[B:[^,]*]], {{.*}} in (%{{.*}} = %c1{{[_0-9]*}}, {{.*}} threads(%[[T:[^,]*]], {{.*}}) in (%{{.*}} = %c32
// CHECK: %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.store %{{.*}}, %[[SUM]][]
// CHECK: }
// CHECK: scf.for
// CHECK: gpu.subgroup_reduce add
// CHECK: scf.if
// CHECK: memref.load %[[SUM]][]
// CHECK: memref.store %{{.*}}, %[[SUM]][]
// CHECK: %[[LANE2:.*]] = arith.remui %[[T]], %c32
// CHECK: %[[FIRST2:.*]] = arith.cmpi eq, %[[LANE2]], %c0
// CHECK: scf.if %[[FIRST2]] {
// CHECK: memref.load %[[SUM]][]
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[MEAN]][]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#all = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
func.func @loss_on_first_lane(%x: memref<64xf32>, %sum: memref<f32>, %mean: memref<f32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.015625 : f32
  linalg.fill ins(%zero : f32) outs(%sum : memref<f32>)
  linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction"]}
      ins(%x : memref<64xf32>) outs(%sum : memref<f32>) {
  ^bb0(%a: f32, %s: f32):
    %r = arith.addf %s, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sum : memref<f32>) outs(%mean : memref<f32>) {
  ^bb0(%s: f32, %o: f32):
    %r = arith.mulf %s, %scale : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A softmax's row max and sum of 64 elements, each a warp per row: every
// lane of the sum reads the row's max, which the max's lane 0 writes. One
// kernel, a barrier between the two.
// CHECK-LABEL: func.func @warps_read_first_lane
// CHECK: gpu.launch
// CHECK: gpu.subgroup_reduce maximumf
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @warps_read_first_lane(%x: memref<8x64xf32>, %max: memref<8xf32>, %sum: memref<8xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%max : memref<8xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %m, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<8x64xf32>, memref<8xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %r = arith.addf %s, %e : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Written by hand (not an entry: dlc-map-to-gpu leaves it alone). Same
// thread space, but the second kernel reads %t where nothing says which
// element: it might be another thread's. Two kernels.
// CHECK-LABEL: func.func @unannotated_read
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
func.func @unannotated_read(%t: memref<8xf32>, %u: memref<8xf32>, %k: index) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%s0 = %c8, %s1 = %c1, %s2 = %c1) {
    memref.store %cst, %t[%t0] {dlc.point_map = affine_map<(d0) -> (d0)>} : memref<8xf32>
    gpu.terminator
  } {dlc.points = array<i64: 8>}
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%s0 = %c8, %s1 = %c1, %s2 = %c1) {
    %v = memref.load %t[%k] : memref<8xf32>
    memref.store %v, %u[%t0] {dlc.point_map = affine_map<(d0) -> (d0)>} : memref<8xf32>
    gpu.terminator
  } {dlc.points = array<i64: 8>}
  return
}

// -----

// The same two kernels with every access annotated: one kernel.
// CHECK-LABEL: func.func @annotated_read
// CHECK: gpu.launch
// CHECK: memref.store
// CHECK: memref.load
// CHECK: memref.store
// CHECK-NOT: gpu.launch
func.func @annotated_read(%t: memref<8xf32>, %u: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%s0 = %c8, %s1 = %c1, %s2 = %c1) {
    memref.store %cst, %t[%t0] {dlc.point_map = affine_map<(d0) -> (d0)>} : memref<8xf32>
    gpu.terminator
  } {dlc.points = array<i64: 8>}
  gpu.launch blocks(%b0, %b1, %b2) in (%g0 = %c1, %g1 = %c1, %g2 = %c1)
             threads(%t0, %t1, %t2) in (%s0 = %c8, %s1 = %c1, %s2 = %c1) {
    %v = memref.load %t[%t0] {dlc.point_map = affine_map<(d0) -> (d0)>} : memref<8xf32>
    memref.store %v, %u[%t0] {dlc.point_map = affine_map<(d0) -> (d0)>} : memref<8xf32>
    gpu.terminator
  } {dlc.points = array<i64: 8>}
  return
}

// -----

// Every lane of the second warp reads the max of another row (the element
// moves with the reduction loop): two kernels.
// CHECK-LABEL: func.func @warps_read_other_rows
// CHECK: gpu.launch
// CHECK: gpu.subgroup_reduce maximumf
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @warps_read_other_rows(%x: memref<64x64xf32>, %max: memref<64xf32>, %sum: memref<64xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%max : memref<64xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %m, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x, #col, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<64x64xf32>, memref<64xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32):
    %d = arith.subf %a, %m : f32
    %r = arith.addf %s, %d : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A recurrent layer's step: the kernels of a host loop's body fuse with
// each other (the cell's two elementwise ops, a thread per element of the
// state), never with a kernel outside the loop (the fill before it).
// CHECK-LABEL: func.func @loop_body
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: scf.for
// CHECK: gpu.launch
// CHECK: math.tanh
// CHECK-NOT: gpu.launch
// CHECK: math.exp
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: }
// CHECK-NOT: gpu.launch
// CHECK: return
#s = affine_map<(d0, d1) -> (d0, d1)>
func.func @loop_body(%seq: memref<6x4x16xf32>, %h: memref<4x16xf32>, %c: memref<4x16xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  linalg.fill ins(%zero : f32) outs(%h : memref<4x16xf32>)
  scf.for %t = %c0 to %c6 step %c1 {
    %v = memref.subview %seq[%t, 0, 0] [1, 4, 16] [1, 1, 1] : memref<6x4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#s, #s, #s], iterator_types = ["parallel", "parallel"]}
        ins(%v, %h : memref<4x16xf32, strided<[16, 1], offset: ?>>, memref<4x16xf32>) outs(%c : memref<4x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %x = arith.addf %a, %b : f32
      %y = math.tanh %x : f32
      linalg.yield %y : f32
    }
    linalg.generic {indexing_maps = [#s, #s], iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<4x16xf32>) outs(%h : memref<4x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %y = math.exp %a : f32
      linalg.yield %y : f32
    }
  }
  return
}
