// RUN: dlc-opt %s -dlc-map-gemms -dlc-map-to-gpu -dlc-fuse-kernels -split-input-file | FileCheck %s

// Two layers of small GEMMs (the second reads whole rows of the first's
// output) and the zero fills of their accumulators: the fills join their
// GEMMs (one thread space each, 16 x 32 and 16 x 1 points), and the two
// become one block of 512 threads. The second waits at a barrier for the
// whole of h; its 16 threads are the block's first.
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: (%[[X:[^:]*]]: memref<16x10xf32>, %[[W1:[^:]*]]: memref<10x32xf32>, %[[H:[^:]*]]: memref<16x32xf32>, %[[W2:[^:]*]]: memref<32x1xf32>, %[[Y:[^:]*]]: memref<16x1xf32>,
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:[^,]*]], {{.*}}) in (%{{.*}} = %c512{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// The first kernel's 2 blocks of 256: block t / 256, thread t % 256.
// CHECK: arith.divui %[[TID]], %c256
// CHECK: arith.remui %[[TID]], %c256
// CHECK: memref.store %{{.*}}, %[[H]]
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[H]]
// CHECK: gpu.barrier
// CHECK: %[[MINE:.*]] = arith.cmpi ult, %[[TID]], %c16{{.*}} : index
// CHECK: scf.if %[[MINE]] {
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: scf.for
// CHECK: memref.load %[[H]]
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: dlc_cuda_gemm
// CHECK: return
func.func @two_layers(%x: memref<16x10xf32>, %w1: memref<10x32xf32>, %h: memref<16x32xf32>,
                      %w2: memref<32x1xf32>, %y: memref<16x1xf32>) attributes {dlc.entry} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%h : memref<16x32xf32>)
  linalg.matmul ins(%x, %w1 : memref<16x10xf32>, memref<10x32xf32>) outs(%h : memref<16x32xf32>)
  linalg.fill ins(%zero : f32) outs(%y : memref<16x1xf32>)
  linalg.matmul ins(%h, %w2 : memref<16x32xf32>, memref<32x1xf32>) outs(%y : memref<16x1xf32>)
  return
}

// -----

// Independent kernels of 100 and 40 threads: one block of 128 (whole
// warps), each guarded, no barrier.
// CHECK-LABEL: func.func @independent
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads(%[[TID:[^,]*]], {{.*}}) in (%{{.*}} = %c128{{.*}},
// CHECK: arith.cmpi ult, %[[TID]], %c100
// CHECK: arith.cmpi ult, %[[TID]], %c40
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#v = affine_map<(d0) -> (d0)>
func.func @independent(%a: memref<100xf32>, %b: memref<40xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%a : memref<100xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%b : memref<40xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A barrier only where a kernel touches what one since the last barrier
// wrote: %t's reversal reads the first kernel's writes (barrier), the third
// kernel is independent of the second (none), the fourth overwrites %t,
// which the second read since the barrier (barrier).
// CHECK-LABEL: func.func @barriers
// CHECK: gpu.launch
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %arg1
// CHECK: gpu.barrier
// CHECK: math.sin
// CHECK-NOT: gpu.barrier
// CHECK: math.cos
// CHECK: gpu.barrier
// CHECK: math.sqrt
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
#v = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (63 - d0)>
func.func @barriers(%x: memref<64xf32>, %t: memref<64xf32>, %u: memref<64xf32>, %w: memref<32xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%t : memref<64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.exp %i : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#rev, #v], iterator_types = ["parallel"]}
      ins(%t : memref<64xf32>) outs(%u : memref<64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.sin %i : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%w : memref<32xf32>) {
  ^bb0(%o: f32):
    %e = math.cos %o : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%t : memref<64xf32>) {
  ^bb0(%o: f32):
    %e = math.sqrt %o : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Not in one block: a kernel of more than 1024 threads. The small kernel
// after it reads its output, so it is not beside it either. A warp
// reduction (4 rows of 64, one block of 4 warps) joins the small kernel in
// one block of 128 threads, no barrier (they are independent): the small
// kernel's 8 threads guarded, the warps unguarded (all reach their
// reduction, at the top level; dlc-map-to-gpu's own guard of the row keeps
// the warps beyond the 4 rows from touching memory).
// CHECK-LABEL: func.func @too_big_and_warps
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256{{.*}},
// CHECK: gpu.terminator
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads(%[[TID:[^,]*]], {{.*}}) in (%{{.*}} = %c128{{.*}},
// CHECK: %[[SMALL:.*]] = arith.cmpi ult, %[[TID]], %c8
// CHECK-NEXT: scf.if %[[SMALL]] {
// CHECK: math.exp
// CHECK: memref.store
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NOT: gpu.barrier
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[WARP]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %c4
// CHECK: %[[PART:.*]] = scf.if %[[IN]] -> (f32)
// CHECK: } else {
// CHECK: {{^ *[}]$}}
// CHECK-NEXT: gpu.subgroup_reduce add %[[PART]] uniform
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#v = affine_map<(d0) -> (d0)>
#r2 = affine_map<(d0, d1) -> (d0, d1)>
#r1 = affine_map<(d0, d1) -> (d0)>
func.func @too_big_and_warps(%big: memref<2048xf32>, %small: memref<8xf32>,
                             %x: memref<4x64xf32>, %s: memref<4xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%big : memref<2048xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  %head = memref.subview %big[0] [8] [1] : memref<2048xf32> to memref<8xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%head : memref<8xf32, strided<[1]>>) outs(%small : memref<8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.exp %i : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#r2, #r1], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.addf %o, %i : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A warp kernel with a barrier (a row's max, then every lane reading it for
// the sum) needs its whole block at the barrier: it stays a kernel of its
// own, and so does the small kernel before it.
// CHECK-LABEL: func.func @warps_with_barrier
// CHECK: gpu.launch
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: gpu.barrier
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @warps_with_barrier(%y: memref<8x64xf32>, %x: memref<8x64xf32>, %max: memref<8xf32>, %sum: memref<8xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<8x64xf32>) outs(%x : memref<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
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

// A kernel that touches none of the buffers of the GEMM before it (a
// cuBLASLt call: 64 x 64 x 64) moves up past it, with the allocation it
// uses, to the kernel before the GEMM, and the two share a block. The
// kernel after it reads the GEMM's output: it stays after the call.
// CHECK-LABEL: func.func @hoisted_past_gemm
// CHECK-SAME: (%[[X:[^:]*]]: memref<64x64xf32>, %[[Y:[^:]*]]: memref<64x64xf32>, %[[C:[^:]*]]: memref<64x64xf32>, %[[S:[^:]*]]: memref<8xf32>, %[[T:[^:]*]]: memref<16xf32>,
// CHECK: memref.alloc() : memref<16xf32>
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c32{{.*}},
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK-NOT: gpu.barrier
// CHECK: math.sqrt
// CHECK: gpu.terminator
// CHECK: call @dlc_cuda_gemm
// CHECK: %[[ROW:.*]] = memref.subview %[[C]]
// CHECK: gpu.launch
// CHECK: memref.load %[[ROW]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#s = affine_map<(d0) -> (d0)>
func.func @hoisted_past_gemm(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %c: memref<64x64xf32>,
                             %s: memref<8xf32>, %t: memref<16xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#s], iterator_types = ["parallel"]} outs(%s : memref<8xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  linalg.matmul ins(%x, %y : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  %u = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#s, #s], iterator_types = ["parallel"]}
      ins(%t : memref<16xf32>) outs(%u : memref<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.sqrt %i : f32
    linalg.yield %e : f32
  }
  %row = memref.subview %c[0, 0] [1, 16] [1, 1] : memref<64x64xf32> to memref<16xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#s, #s], iterator_types = ["parallel"]}
      ins(%row : memref<16xf32, strided<[1]>>) outs(%t : memref<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %e = math.exp %i : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Two small kernels (2 and 3 blocks of 256) become one block of 768
// threads; beside it, a large independent kernel of 391 blocks of 256. The
// grid takes the large kernel's block (it has the most threads), and the
// one block runs as its linear threads over the first 3 blocks, not as 392
// blocks of 768 threads, 512 of them idle in all but the first.
// CHECK-LABEL: func.func @beside_a_large_kernel
// CHECK: gpu.launch blocks(%[[BID:[^,]*]], {{.*}}) in (%{{.*}} = %c394{{.*}}, {{.*}}) threads(%[[TID:[^,]*]], {{.*}}) in (%{{.*}} = %c256{{.*}},
// CHECK: %[[SMALL:.*]] = arith.cmpi ult, %[[BID]], %c3{{.*}} : index
// CHECK: scf.if %[[SMALL]] {
// CHECK: %[[OFFSET:.*]] = arith.muli %[[BID]], %c256{{.*}} : index
// CHECK: %[[LINEAR:.*]] = arith.addi %[[OFFSET]], %[[TID]] : index
// CHECK-NOT: arith.cmpi ult, %[[LINEAR]], %c768
// CHECK: arith.cmpi ult, %{{.*}}, %c300
// CHECK: math.exp
// CHECK: arith.cmpi ult, %{{.*}}, %c600
// CHECK: math.exp
// CHECK: %[[END:.*]] = arith.cmpi ult, %[[BID]], %c394{{.*}} : index
// CHECK: %[[START:.*]] = arith.cmpi uge, %[[BID]], %c3{{.*}} : index
// CHECK: %[[LARGE:.*]] = arith.andi %[[END]], %[[START]] : i1
// CHECK-NEXT: scf.if %[[LARGE]] {
// CHECK-NOT: arith.cmpi
// CHECK: %[[OWN:.*]] = arith.subi %[[BID]], %c3{{.*}} : index
// CHECK: arith.muli %[[OWN]], %c256
// CHECK: math.sin
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
#v = affine_map<(d0) -> (d0)>
func.func @beside_a_large_kernel(%a: memref<300xf32>, %b: memref<600xf32>, %c: memref<100000xf32>) attributes {dlc.entry} {
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%a : memref<300xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%b : memref<600xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%c : memref<100000xf32>) {
  ^bb0(%o: f32):
    %e = math.sin %o : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A kernel of one block of 1000 threads beside one of 8 blocks of 256 (too
// many threads for one block): 4 blocks of 256 run the first as its linear
// threads, those below 1000.
// CHECK-LABEL: func.func @linear_threads
// CHECK: gpu.launch blocks(%[[BID:[^,]*]], {{.*}}) in (%{{.*}} = %c12{{.*}}, {{.*}}) threads(%[[TID:[^,]*]], {{.*}}) in (%{{.*}} = %c256{{.*}},
// CHECK: %[[MINE:.*]] = arith.cmpi ult, %[[BID]], %c4{{.*}} : index
// CHECK: scf.if %[[MINE]] {
// CHECK: %[[OFFSET:.*]] = arith.muli %[[BID]], %c256{{.*}} : index
// CHECK: %[[LINEAR:.*]] = arith.addi %[[OFFSET]], %[[TID]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LINEAR]], %c1000{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: memref.load %arg0[%[[LINEAR]]]
// CHECK: math.exp
// CHECK: arith.cmpi ult, %[[BID]], %c12
// CHECK: arith.cmpi uge, %[[BID]], %c4
// CHECK: math.sin
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @linear_threads(%a: memref<1000xf32>, %b: memref<2048xf32>) attributes {dlc.entry} {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %c1000 = arith.constant 1000 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1000, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<1000xf32>
    %e = math.exp %v : f32
    memref.store %e, %a[%tx] : memref<1000xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %i0 = arith.muli %bx, %c256 : index
    %i = arith.addi %i0, %tx : index
    %v = memref.load %b[%i] : memref<2048xf32>
    %e = math.sin %v : f32
    memref.store %e, %b[%i] : memref<2048xf32>
    gpu.terminator
  }
  return
}
