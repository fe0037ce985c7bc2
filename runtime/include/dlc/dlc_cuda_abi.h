/*===- dlc/dlc_cuda_abi.h - Runtime functions called by CUDA model code ---===*
 *
 * Called by generated code, not by users. The host function of a CUDA entry
 * (dlc_cuda_module::entries, see dlc/dlc_runtime.h and docs/runtime-abi.md)
 * receives the runtime's per-model CUDA context as its last argument and
 * passes it to these functions, which enqueue work on the model's stream.
 *
 * They return nothing: the first failure is recorded in the context with a
 * message (sticky), later calls on it do nothing, and dlc_model_run turns it
 * into its dlc_status once the entry function has returned.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DLC_DLC_CUDA_ABI_H
#define DLC_DLC_CUDA_ABI_H

#include "dlc/dlc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Launches kernel `kernel` (an index into dlc_cuda_module::kernel_names) on
 * the model's stream, without dynamic shared memory. Every kernel parameter
 * is 8 bytes (device pointers and 64-bit integers): parameter i is args[i].
 * Grid and block dimensions must lie in [1, 2^32 - 1] (the driver enforces
 * the device's limits). */
DLC_API void dlc_cuda_launch(void *ctx, int32_t kernel, int64_t grid_x,
                             int64_t grid_y, int64_t grid_z, int64_t block_x,
                             int64_t block_y, int64_t block_z, int32_t num_args,
                             const int64_t *args);

/* What dlc_cuda_gemm does besides C = opA * opB + beta * C: the first two
 * change the fp32 result before it is stored, the bias gradients write a
 * second output, the sum of one operand over k (cuBLASLt's BGRADB and
 * BGRADA: a linear layer's bias gradient next to its weight gradient). */
enum {
  DLC_GEMM_EPILOGUE_NONE = 0,
  DLC_GEMM_EPILOGUE_BIAS = 1,      /* + bias[j] */
  DLC_GEMM_EPILOGUE_RELU_BIAS = 2, /* max(. + bias[j], 0): a NaN becomes 0 */
  DLC_GEMM_EPILOGUE_BGRAD_A = 3,   /* bias[i] = sum_p opA(i,p) */
  DLC_GEMM_EPILOGUE_BGRAD_B = 4,   /* bias[j] = sum_p opB(p,j) */
  DLC_GEMM_EPILOGUE_GELU_BIAS = 5, /* gelu_tanh(. + bias[j]) */
  DLC_GEMM_EPILOGUE_RELU_AUX_BIAS = 6, /* RELU_BIAS, and aux: the mask */
  DLC_GEMM_EPILOGUE_DRELU = 7          /* aux's mask ? . : 0 */
};

/* Row-major batched GEMM with fp32 accumulation (cuBLASLt,
 * CUBLAS_COMPUTE_32F), for 0 <= b < batch, i < m, j < n:
 *   C[b](i,j) = sum_p opA[b](i,p) * opB[b](p,j) + beta * C[b](i,j)
 * opA[b](i,p) = a[b*stride_a + i*lda + p], or a[b*stride_a + p*lda + i] when
 * trans_a; opB[b](p,j) = b[b*stride_b + p*ldb + j], or b[b*stride_b + j*ldb
 * + p] when trans_b; C[b](i,j) = c[b*stride_c + i*ldc + j]. Strides and
 * leading dimensions count elements. dtype_ab / dtype_c are dlc_dtype codes:
 * (F32, F32), (F16, F16), (F16, F32), (BF16, BF16) or (BF16, F32).
 * batch, m, n and k must be >= 1. Epilogues other than NONE need dtype_c
 * F32 and a `bias` (ignored with NONE): with BIAS, RELU_BIAS and
 * GELU_BIAS it points to n floats and C[b](i,j) becomes epilogue(sum +
 * beta * C[b](i,j) + bias[j]) (cuBLASLt's BIAS, RELU_BIAS and GELU_BIAS
 * epilogues; gelu_tanh(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715
 * x^3))), PyTorch's GELU(approximate="tanh")); with BGRAD_A (m
 * floats) and BGRAD_B (n floats) it is written, C as without epilogue,
 * and batch must be 1. RELU_AUX_BIAS (cuBLASLt's RELU_AUX_BIAS) is
 * RELU_BIAS that also writes to `aux` a bit mask of where the result was
 * positive; DRELU (cuBLASLt's DRELU) reads such a mask, written by a GEMM
 * of the same m and n, and zeroes C(i,j) where its bit is clear (a ReLU's
 * gradient). The mask takes dlc_gemm_relu_mask_bytes(m, n) bytes in
 * cuBLASLt's own layout, at a 16-byte aligned address; batch must be 1.
 * `aux` is ignored by the other epilogues. */
DLC_API void dlc_cuda_gemm(void *ctx, int32_t dtype_ab, int32_t dtype_c,
                           int64_t batch, int64_t m, int64_t n, int64_t k,
                           const void *a, int64_t lda, int64_t stride_a,
                           int32_t trans_a, const void *b, int64_t ldb,
                           int64_t stride_b, int32_t trans_b, float beta,
                           void *c, int64_t ldc, int64_t stride_c,
                           int32_t epilogue, const void *bias, void *aux);

/* The leading dimension, in bits, of a RELU_AUX_BIAS / DRELU mask of an
 * m x n result: one bit per element, each of cuBLASLt's column-major
 * columns (our rows, n elements) padded to a multiple of 128 bits
 * (CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD). */
static inline int64_t dlc_gemm_relu_mask_ld(int64_t n) {
  return (n + 127) / 128 * 128;
}

/* The bytes of such a mask: m columns of dlc_gemm_relu_mask_ld(n) bits. */
static inline int64_t dlc_gemm_relu_mask_bytes(int64_t m, int64_t n) {
  return dlc_gemm_relu_mask_ld(n) / 8 * m;
}

/* Copies `bytes` (>= 0) from device memory `src` to device memory `dst` on
 * the model's stream. */
DLC_API void dlc_cuda_memcpy(void *ctx, void *dst, const void *src,
                             int64_t bytes);

/* The collectives of a data-parallel entry (compiled with --data-parallel;
 * the descriptor's `communicator` line): the CUDA forms of the CPU
 * communicator's dlc_comm_bucket_* calls, with device addresses, enqueued
 * as NCCL collectives on the model's stream (lib/nccl.cpp). A bucket is
 * filled by _add (count f32 values at `address`, reduced in place) or by
 * _add_pair (a whole tensor of n values and its shard of ceil(n / ranks),
 * one the source and the other the destination), then run by one call:
 * _reduce and _start average (op DLC_REDUCE_MEAN) or sum (DLC_REDUCE_SUM)
 * every buffer over the ranks, in one NCCL group: _reduce on the model's
 * stream, _start on the communicator's stream, after the work enqueued so
 * far, while the model's stream goes on; _wait makes the model's stream
 * wait for every bucket started. _reduce_scatter gives each destination
 * this rank's shard of the reduced source, zero past the tensor's end;
 * _all_gather assembles every rank's shard into the whole destination;
 * _shard copies this rank's shard of the source (no communication). */
DLC_API void dlc_cuda_comm_bucket_add(void *ctx, int64_t address, int64_t count,
                                      int32_t dtype);
DLC_API void dlc_cuda_comm_bucket_reduce(void *ctx, int32_t op);
DLC_API void dlc_cuda_comm_bucket_start(void *ctx, int32_t op);
DLC_API void dlc_cuda_comm_wait(void *ctx);
DLC_API void dlc_cuda_comm_bucket_add_pair(void *ctx, int64_t source,
                                           int64_t source_count, int64_t dest,
                                           int64_t dest_count, int32_t dtype);
DLC_API void dlc_cuda_comm_bucket_reduce_scatter(void *ctx, int32_t op);
DLC_API void dlc_cuda_comm_bucket_all_gather(void *ctx);
DLC_API void dlc_cuda_comm_bucket_shard(void *ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_DLC_CUDA_ABI_H */
