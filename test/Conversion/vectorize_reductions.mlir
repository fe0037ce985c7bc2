// RUN: dlc-opt %s --pass-pipeline='builtin.module(func.func(dlc-vectorize-reductions))' -split-input-file | FileCheck %s
// RUN: dlc-opt %s --pass-pipeline='builtin.module(func.func(dlc-vectorize-reductions{vector-bits=256}))' -split-input-file | FileCheck %s --check-prefix=AVX2

#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>

// Softmax's row maximum: the row in steps of 16 lanes, lane 0 from the
// output and the others from -inf, the lanes combined after the row.
// CHECK-LABEL: func.func @row_max
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C4]]
// CHECK: %[[INIT:.*]] = memref.load %arg1[%[[I]]] : memref<4xf32>
// CHECK: %[[ID:.*]] = arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK: %[[ACC0:.*]] = vector.insert %[[INIT]], %[[ID]] [0]
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[ACC:.*]] = scf.for %[[K:.*]] = %[[C0]] to %[[C128]] step %[[C16]] iter_args(%[[A:.*]] = %[[ACC0]]) -> (vector<16xf32>)
// CHECK: %[[X:.*]] = vector.load %arg0[%[[I]], %[[K]]] : memref<4x128xf32>, vector<16xf32>
// CHECK: %[[M:.*]] = arith.maximumf %[[X]], %[[A]] : vector<16xf32>
// CHECK: scf.yield %[[M]]
// CHECK: %[[R:.*]] = vector.reduction <maximumf>, %[[ACC]] fastmath<reassoc> : vector<16xf32> into f32
// CHECK: memref.store %[[R]], %arg1[%[[I]]]
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @row_max
// AVX2: arith.constant dense<0xFF800000> : vector<8xf32>
// AVX2: vector.load {{.*}} vector<8xf32>
func.func @row_max(%in: memref<4x128xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<4x128xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %a: f32):
    %m = arith.maximumf %x, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>

// Softmax's sum of exp(x - max) on a tile of a strided view: the maximum
// (one element per row) is broadcast to the lanes, the body runs on
// vectors, and the sum starts its other lanes from -0.0.
// CHECK-LABEL: func.func @exp_sum
// CHECK: arith.constant dense<-0.000000e+00> : vector<16xf32>
// CHECK: scf.for {{.*}} iter_args(%[[A:.*]] = {{.*}}) -> (vector<16xf32>)
// CHECK: %[[X:.*]] = vector.load %arg0[{{.*}}] : memref<2x64xf32, strided<[256, 1], offset: ?>>, vector<16xf32>
// CHECK: %[[M:.*]] = memref.load %arg1
// CHECK: %[[MV:.*]] = vector.broadcast %[[M]] : f32 to vector<16xf32>
// CHECK: %[[D:.*]] = arith.subf %[[X]], %[[MV]] : vector<16xf32>
// CHECK: %[[E:.*]] = math.exp %[[D]] : vector<16xf32>
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[E]] : vector<16xf32>
// CHECK: scf.yield %[[S]]
// CHECK: vector.reduction <add>, {{.*}} fastmath<reassoc>
func.func @exp_sum(%in: memref<2x64xf32, strided<[256, 1], offset: ?>>, %max: memref<2xf32>, %out: memref<2xf32>) {
  linalg.generic {indexing_maps = [#row, #out, #out], iterator_types = ["parallel", "reduction"]}
      ins(%in, %max : memref<2x64xf32, strided<[256, 1], offset: ?>>, memref<2xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %m: f32, %a: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %a, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A sum of squares scaled by a constant of the body, over a whole buffer
// (no parallel loop); the constant is broadcast.
// CHECK-LABEL: func.func @full_sum
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: vector.broadcast %[[C]] : f32 to vector<16xf32>
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK: memref.store {{.*}}, %arg1[] : memref<f32>
func.func @full_sum(%in: memref<1024xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%in : memref<1024xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %a: f32):
    %h = arith.constant 0.5 : f32
    %sq = arith.mulf %x, %x : f32
    %t = arith.mulf %sq, %h : f32
    %s = arith.addf %t, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1, d0)>
#out = affine_map<(d0, d1) -> (d0)>

// Left as they are: a row whose length is not a multiple of the lanes, a
// reduction that is not the last loop (its inner loop vectorises as it
// is), a row read across a dimension that is not the innermost, a
// combiner that is not a fold of the output, and a body that reads the
// loop index.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: vector.
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: vector.
func.func @left_alone(%a: memref<4x100xf32>, %b: memref<4xf32>,
                      %c: memref<64x4xf32>, %d: memref<4x64xf32>) {
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x100xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%c : memref<64x4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#col, #out], iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<64x4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%d : memref<4x64xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.subf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%d : memref<4x64xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %i = linalg.index 1 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %p = arith.mulf %x, %f : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}
