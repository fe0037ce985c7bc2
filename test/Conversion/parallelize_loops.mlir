// RUN: dlc-opt %s --pass-pipeline='builtin.module(func.func(dlc-parallelize-loops))' -split-input-file | FileCheck %s
// RUN: dlc-opt %s --pass-pipeline='builtin.module(func.func(dlc-parallelize-loops{min-iterations=1000000}))' -split-input-file | FileCheck %s --check-prefix=LARGE

// An elementwise op of 64 x 4096 points: 16 tiles of 4 rows.
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.forall (%[[I:.*]]) = (0) to (64) step (4) {
// CHECK: %[[X:.*]] = memref.subview %arg0[%[[I]], 0] [4, 4096] [1, 1]
// CHECK: %[[Y:.*]] = memref.subview %arg1[%[[I]], 0] [4, 4096] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[X]] : {{.*}}) outs(%[[Y]] : {{.*}})
// CHECK: arith.maximumf
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
// Below min-iterations nothing is split.
// LARGE-LABEL: func.func @elementwise
// LARGE-NOT: scf.forall
func.func @elementwise(%x: memref<64x4096xf32>, %y: memref<64x4096xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<64x4096xf32>) outs(%y : memref<64x4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Reductions are split along their parallel loop only, so every output
// element is summed in the same order: rows of a row sum, columns of a
// column sum (the bias gradient, whose reduction loop comes first).
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.forall (%{{.*}}) in (8) {
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : memref<1x65536xf32, {{.*}}>) outs(%{{.*}} : memref<1xf32, {{.*}}>)
func.func @row_sum(%x: memref<8x65536xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x65536xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}
// CHECK-LABEL: func.func @column_sum
// CHECK: scf.forall (%{{.*}}) = (0) to (4096) step (256) {
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<64x256xf32, {{.*}}>) outs(%{{.*}} : memref<256xf32, {{.*}}>)
func.func @column_sum(%x: memref<64x4096xf32>, %y: memref<4096xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<64x4096xf32>) outs(%y : memref<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A full reduction has no parallel loop: it stays sequential.
// CHECK-LABEL: func.func @total
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
func.func @total(%x: memref<262144xf32>, %y: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : memref<262144xf32>) outs(%y : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Tiles divide the range, so they all have the same static shape: 100 rows
// in 10 tiles of 10; 97 rows (prime) cannot be split, the next parallel
// loop is; a small op is left alone.
// CHECK-LABEL: func.func @even_tiles
// CHECK: scf.forall (%{{.*}}) = (0) to (100) step (10) {
// CHECK: linalg.fill {{.*}} outs(%{{.*}} : memref<10x1000xf32, {{.*}}>)
// CHECK-LABEL: func.func @prime_rows
// CHECK: scf.forall (%{{.*}}) = (0) to (1000) step (100) {
// CHECK: linalg.fill {{.*}} outs(%{{.*}} : memref<97x100xf32, {{.*}}>)
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
func.func @even_tiles(%x: memref<100x1000xf32>) {
  %c = arith.constant 0.0 : f32
  linalg.fill ins(%c : f32) outs(%x : memref<100x1000xf32>)
  return
}
func.func @prime_rows(%x: memref<97x1000xf32>) {
  %c = arith.constant 0.0 : f32
  linalg.fill ins(%c : f32) outs(%x : memref<97x1000xf32>)
  return
}
func.func @small(%x: memref<64x64xf32>) {
  %c = arith.constant 0.0 : f32
  linalg.fill ins(%c : f32) outs(%x : memref<64x64xf32>)
  return
}

// -----

// Matmuls have their own parallel cache tiles; ops that are already nested
// (inside those tiles) are not split again.
// CHECK-LABEL: func.func @leave_alone
// CHECK: linalg.matmul
// CHECK: scf.for
// CHECK-NEXT: linalg.fill
// CHECK-NOT: scf.forall
func.func @leave_alone(%a: memref<512x512xf32>, %b: memref<512x512xf32>, %c: memref<512x512xf32>) {
  linalg.matmul ins(%a, %b : memref<512x512xf32>, memref<512x512xf32>) outs(%c : memref<512x512xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c2 step %c1 {
    linalg.fill ins(%z : f32) outs(%c : memref<512x512xf32>)
  }
  return
}

// -----

// An im2col copy indexes the input by `d0 floordiv 49` and `d0 mod 7`: a
// tile of d0 is not a subview of the input, so d0 is not split; d1, a
// whole subscript of both operands, is.
// CHECK-LABEL: func.func @im2col
// CHECK: scf.forall (%[[I:.*]]) in (4) {
// CHECK: memref.subview %arg0[%[[I]], 0, 0, 0] [1, 3, 37, 37]
// CHECK: memref.subview %arg1[0, %[[I]], 0, 0] [147, 1, 16, 16]
func.func @im2col(%x: memref<4x3x38x38xf32>, %cols: memref<147x4x16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d0 floordiv 49, d2 * 2 + (d0 mod 49) floordiv 7, d3 * 2 + d0 mod 7)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<4x3x38x38xf32>) outs(%cols : memref<147x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A loop marked dlc.independent_iterations (a recurrent layer's blocks of
// rows) runs as an scf.forall over the same range; the loops and ops inside
// it are left as they are, even when large. An unmarked loop stays.
// CHECK-LABEL: func.func @independent
// CHECK: scf.forall (%[[B:.*]]) in (4) {
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK-NEXT: %[[ROWS:.*]] = memref.subview %arg0[%[[FIRST]], 0] [256, 512]
// CHECK-NEXT: scf.for
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[ROWS]]
// CHECK-NOT: dlc.independent_iterations
// CHECK: scf.for
// CHECK-NEXT: linalg.fill
// LARGE-LABEL: func.func @independent
// LARGE: scf.forall
func.func @independent(%a: memref<1024x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %z = arith.constant 0.0 : f32
  scf.for %b = %c0 to %c4 step %c1 {
    %first = arith.muli %b, %c256 : index
    %rows = memref.subview %a[%first, 0] [256, 512] [1, 1] : memref<1024x512xf32> to memref<256x512xf32, strided<[512, 1], offset: ?>>
    scf.for %t = %c0 to %c4 step %c1 {
      linalg.fill ins(%z : f32) outs(%rows : memref<256x512xf32, strided<[512, 1], offset: ?>>)
    }
  } {dlc.independent_iterations}
  scf.for %t = %c0 to %c4 step %c1 {
    linalg.fill ins(%z : f32) outs(%a : memref<1024x512xf32>)
  }
  return
}

// -----

// The flipped weight of a convolution's input gradient (256 x 32 x 3 x 3
// points): a subscript that decreases along a loop (-d2 + 2) would get a
// slice of one element from tiling, and the tiled op would not verify. It
// stays whole.
#flip = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @flipped
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0 : memref<256x32x3x3xf32>) outs(%arg1 : memref<32x256x3x3xf32>)
func.func @flipped(%w: memref<256x32x3x3xf32>, %f: memref<32x256x3x3xf32>) {
  linalg.generic {indexing_maps = [#flip, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<256x32x3x3xf32>) outs(%f : memref<32x256x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}
