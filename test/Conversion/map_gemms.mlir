// RUN: dlc-opt %s -dlc-map-gemms=small-gemm-fmas=0 -dlc-map-to-gpu -split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: dlc-opt %s -dlc-map-gemms=small-gemm-fmas=0 -split-input-file --mlir-print-local-scope | FileCheck %s --check-prefix=GEMMS

// The GEMMs become cuBLASLt calls with what they take in; the rest is
// dlc-map-to-gpu's (the first RUN line runs both, as the CUDA pipeline
// does; the GEMMS lines check what dlc-map-gemms leaves).

// GEMMs go to cuBLASLt: C(64x10) += A(64x256) * B(256x10), row-major
// leading dimensions, beta 1; a contiguous copy is one device memcpy.
// CHECK-LABEL: func.func @gemm_and_copy
// CHECK-SAME: %[[CTX:arg[0-9]+]]: !llvm.ptr {dlc.name = "cuda_ctx"})
// CHECK-NOT: linalg.matmul
// CHECK: call @dlc_cuda_gemm(%[[CTX]], %c0_i32{{.*}}, %c0_i32{{.*}}, %c1_i64, %c64_i64, %c10_i64, %c256_i64, %{{[0-9]+}}, %c256_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %{{[0-9]+}}, %c10_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %cst, %{{[0-9]+}}, %c10_i64{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %c0_i64{{.*}}, %c0_i64{{[_0-9]*}})
// CHECK: call @dlc_cuda_memcpy(%[[CTX]], %{{.*}}, %{{.*}}, %c2560_i64)
// CHECK: func.func private @dlc_cuda_gemm(!llvm.ptr, i32, i32, i64, i64, i64, i64, i64, i64, i64, i32, i64, i64, i64, i32, f32, i64, i64, i64, i32, i64, i64)
// CHECK: func.func private @dlc_cuda_memcpy(!llvm.ptr, i64, i64, i64)
// dlc-map-gemms alone gives the entry its context and makes the call; the
// copy is left to dlc-map-to-gpu.
// GEMMS-LABEL: func.func @gemm_and_copy
// GEMMS-SAME: %[[CTX:arg[0-9]+]]: !llvm.ptr {dlc.name = "cuda_ctx"})
// GEMMS: call @dlc_cuda_gemm(%[[CTX]],
// GEMMS-NEXT: memref.copy
// GEMMS-NOT: dlc_cuda_memcpy
func.func @gemm_and_copy(%a: memref<64x256xf32>, %b: memref<256x10xf32>, %c: memref<64x10xf32>, %d: memref<64x10xf32>) attributes {dlc.entry} {
  linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x10xf32>) outs(%c : memref<64x10xf32>)
  memref.copy %c, %d : memref<64x10xf32> to memref<64x10xf32>
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

// -----

// The runtime's functions are declared in the order of their first calls,
// as when one pass made both: the first entry copies, the second calls a
// GEMM.
// CHECK-LABEL: func.func @copy_first
// CHECK: call @dlc_cuda_memcpy
// CHECK-LABEL: func.func @gemm_second
// CHECK: call @dlc_cuda_gemm
// CHECK: func.func private @dlc_cuda_memcpy
// CHECK-NEXT: func.func private @dlc_cuda_gemm
func.func @copy_first(%a: memref<64x10xf32>, %b: memref<64x10xf32>) attributes {dlc.entry} {
  memref.copy %a, %b : memref<64x10xf32> to memref<64x10xf32>
  return
}
func.func @gemm_second(%a: memref<64x256xf32>, %b: memref<256x10xf32>, %c: memref<64x10xf32>) attributes {dlc.entry} {
  linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x10xf32>) outs(%c : memref<64x10xf32>)
  return
}

// -----

// Not a GEMM of dlc-map-gemms: a transpose, an elementwise loop and a copy
// are left as they are; the entry still gets its context.
// GEMMS-LABEL: func.func @no_gemm
// GEMMS-SAME: !llvm.ptr {dlc.name = "cuda_ctx"}
// GEMMS-NEXT: linalg.transpose
// GEMMS-NEXT: linalg.generic
// GEMMS: memref.copy
// GEMMS-NOT: call
// GEMMS: return
func.func @no_gemm(%w: memref<4x3xf32>, %wt: memref<3x4xf32>, %y: memref<3x4xf32>) attributes {dlc.entry} {
  linalg.transpose ins(%w : memref<4x3xf32>) outs(%wt : memref<3x4xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%wt : memref<3x4xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  memref.copy %wt, %y : memref<3x4xf32> to memref<3x4xf32>
  return
}

// -----

// A recurrent layer's step: the GEMM of a host loop's body is a cuBLASLt
// call in the loop, once per iteration; its accumulator, a step of the
// sequence, is at an offset known at run time only, which the host reads
// (4 bytes an element) to compute the address.
// CHECK-LABEL: func.func @step_gemm
// CHECK-SAME: %[[CTX:arg[0-9]+]]: !llvm.ptr {dlc.name = "cuda_ctx"})
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[VIEW:.*]] = memref.subview %{{.*}}[%[[T]], 0, 0]
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[VIEW]]
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[VIEW]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %c4
// CHECK: %[[ADDR:.*]] = arith.addi %[[BASE]], %[[BYTES]]
// CHECK: %[[C:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK: call @dlc_cuda_gemm(%[[CTX]], {{.*}}, %cst{{[_0-9]*}}, %[[C]], %c512_i64
// CHECK: }
// CHECK-NOT: linalg.matmul
func.func @step_gemm(%h: memref<32x128xf32>, %w: memref<128x512xf32>, %seq: memref<6x32x512xf32>) attributes {dlc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %t = %c0 to %c6 step %c1 {
    %v = memref.subview %seq[%t, 0, 0] [1, 32, 512] [1, 1, 1] : memref<6x32x512xf32> to memref<32x512xf32, strided<[512, 1], offset: ?>>
    linalg.matmul ins(%h, %w : memref<32x128xf32>, memref<128x512xf32>) outs(%v : memref<32x512xf32, strided<[512, 1], offset: ?>>)
  }
  return
}
