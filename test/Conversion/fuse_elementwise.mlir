// RUN: dlc-opt %s --split-input-file --dlc-fuse-elementwise | FileCheck %s

// A flatten before a matmul stays a reshape: the matmul remains a
// linalg.matmul that dlc-tile-and-vectorize tiles (upstream's pass would
// turn it into a 3-d linalg.generic contraction).
// CHECK-LABEL: func.func @collapse_into_matmul
// CHECK: tensor.collapse_shape
// CHECK: linalg.matmul
func.func @collapse_into_matmul(%x: tensor<4x2x3xf32>, %w: tensor<6x5xf32>) -> tensor<4x5xf32> {
  %c = tensor.collapse_shape %x [[0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %y = linalg.matmul ins(%c, %w : tensor<4x6xf32>, tensor<6x5xf32>) outs(%acc : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
// Elementwise producers still fuse into elementwise consumers.
// CHECK-LABEL: func.func @elementwise_chain
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
func.func @elementwise_chain(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#win = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d3, d5 * 2 + d4)>
#ker = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d4)>
#out = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// Not into a pool that reads the producer through windows (`oh * 2 + kh`):
// the relu is computed once, not once per window covering each element.
// CHECK-LABEL: func.func @not_into_window
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]
func.func @not_into_window(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %relu = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %o = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%o : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %p = linalg.generic {indexing_maps = [#win, #ker, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%relu, %k : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %kk: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x2xf32>
  return %p : tensor<1x2x2x2xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// pack_weights computes a 16-bit copy of a weight in the packed parameter's
// buffer (dlc-lower-entry-abi): its destination stays the parameter, not a
// new tensor that bufferization would allocate and copy out of. Another
// function's cast gets the new tensor (upstream's pattern).
// CHECK-LABEL: func.func @pack_weights
// CHECK: %[[P:.*]] = bufferization.to_tensor %arg1
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[P]] : tensor<16x8xbf16>)
// CHECK-LABEL: func.func @other
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16x8xbf16>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[E]] : tensor<16x8xbf16>)
func.func @pack_weights(%w: memref<16x8xf32>, %packed: memref<16x8xbf16>) attributes {dlc.entry, dlc.pack_weights} {
  %0 = bufferization.to_tensor %w restrict : memref<16x8xf32> to tensor<16x8xf32>
  %1 = bufferization.to_tensor %packed restrict writable : memref<16x8xbf16> to tensor<16x8xbf16>
  %2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<16x8xf32>) outs(%1 : tensor<16x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x8xbf16>
  bufferization.materialize_in_destination %2 in restrict writable %packed : (tensor<16x8xbf16>, memref<16x8xbf16>) -> ()
  return
}
func.func @other(%w: memref<16x8xf32>, %packed: memref<16x8xbf16>) attributes {dlc.entry} {
  %0 = bufferization.to_tensor %w restrict : memref<16x8xf32> to tensor<16x8xf32>
  %1 = bufferization.to_tensor %packed restrict writable : memref<16x8xbf16> to tensor<16x8xbf16>
  %2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<16x8xf32>) outs(%1 : tensor<16x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x8xbf16>
  bufferization.materialize_in_destination %2 in restrict writable %packed : (tensor<16x8xbf16>, memref<16x8xbf16>) -> ()
  return
}
