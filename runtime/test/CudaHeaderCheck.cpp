//===- CudaHeaderCheck.cpp - cuda_api.h against the real CUDA headers -----===//
//
// Built only where CMake finds the CUDA toolkit's headers: every constant the
// runtime copied into lib/cuda_api.h must equal the toolkit's, and the
// structs it declares must have the toolkit's layout. Compiling is the test;
// running it only reports.
//
//===----------------------------------------------------------------------===//

#include "cuda_api.h"

#include <cstddef>
#include <cstdio>
#include <cublasLt.h>
#include <cuda.h>

namespace api = dlc::rt::cuapi;

#define SAME(name) static_assert(api::name == name, #name)

SAME(CUDA_SUCCESS);
SAME(CUDA_ERROR_INVALID_VALUE);
SAME(CUDA_ERROR_OUT_OF_MEMORY);
SAME(CUDA_ERROR_NOT_INITIALIZED);
SAME(CUDA_ERROR_NO_DEVICE);
SAME(CUDA_ERROR_INVALID_PTX);
SAME(CUDA_ERROR_NOT_FOUND);
SAME(CUDA_ERROR_LAUNCH_FAILED);
SAME(CUDA_ERROR_NOT_READY);
SAME(CU_GET_PROC_ADDRESS_DEFAULT);
SAME(CU_GET_PROC_ADDRESS_SUCCESS);
SAME(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
SAME(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
SAME(CU_JIT_INFO_LOG_BUFFER);
SAME(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
SAME(CU_JIT_ERROR_LOG_BUFFER);
SAME(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
SAME(CU_STREAM_NON_BLOCKING);
SAME(CU_EVENT_DISABLE_TIMING);
SAME(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);

SAME(CUBLAS_STATUS_SUCCESS);
SAME(CUBLAS_STATUS_ALLOC_FAILED);
SAME(CUBLAS_STATUS_NOT_SUPPORTED);
SAME(CUBLAS_COMPUTE_32F);
SAME(CUDA_R_32F);
SAME(CUDA_R_16F);
SAME(CUDA_R_16BF);
SAME(CUBLAS_OP_N);
SAME(CUBLAS_OP_T);
SAME(CUBLASLT_MATMUL_DESC_TRANSA);
SAME(CUBLASLT_MATMUL_DESC_TRANSB);
SAME(CUBLASLT_MATMUL_DESC_EPILOGUE);
SAME(CUBLASLT_MATMUL_DESC_BIAS_POINTER);
SAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER);
SAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD);
SAME(CUBLASLT_EPILOGUE_DEFAULT);
SAME(CUBLASLT_EPILOGUE_BIAS);
SAME(CUBLASLT_EPILOGUE_RELU_BIAS);
SAME(CUBLASLT_EPILOGUE_GELU_BIAS);
SAME(CUBLASLT_EPILOGUE_RELU_AUX_BIAS);
SAME(CUBLASLT_EPILOGUE_DRELU);
SAME(CUBLASLT_EPILOGUE_BGRADA);
SAME(CUBLASLT_EPILOGUE_BGRADB);
SAME(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
SAME(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
SAME(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
SAME(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES);
SAME(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES);
SAME(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES);
SAME(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES);

// The API version the driver is asked for must exist in the headers' ABI.
static_assert(api::kCudaApiVersion <= CUDA_VERSION, "kCudaApiVersion");

// Types: sizes and layouts.
#define SAME_SIZE(type) static_assert(sizeof(api::type) == sizeof(type), #type)
SAME_SIZE(CUresult);
SAME_SIZE(CUdevice);
SAME_SIZE(CUdeviceptr);
SAME_SIZE(CUjit_option);
SAME_SIZE(CUstreamCaptureMode);
SAME_SIZE(CUdriverProcAddressQueryResult);
SAME_SIZE(cublasStatus_t);
SAME_SIZE(cudaDataType_t);
SAME_SIZE(cublasComputeType_t);
SAME_SIZE(cublasLtMatmulAlgo_t);
SAME_SIZE(cublasLtMatmulHeuristicResult_t);
#define SAME_OFFSET(field)                                                     \
  static_assert(offsetof(api::cublasLtMatmulHeuristicResult_t, field) ==       \
                    offsetof(cublasLtMatmulHeuristicResult_t, field),          \
                #field)
SAME_OFFSET(algo);
SAME_OFFSET(workspaceSize);
SAME_OFFSET(state);
SAME_OFFSET(wavesCount);
SAME_OFFSET(reserved);

// NCCL, where the toolkit ships its header (lib/nccl.cpp loads the library).
#if __has_include(<nccl.h>)
#include <nccl.h>
SAME(ncclSuccess);
SAME(ncclInProgress);
SAME(ncclFloat32);
SAME(ncclSum);
SAME(ncclAvg);
SAME_SIZE(ncclUniqueId);
SAME_SIZE(ncclResult_t);
SAME_SIZE(ncclDataType_t);
SAME_SIZE(ncclRedOp_t);
static_assert(api::kNcclMinVersion == NCCL_VERSION(2, 10, 0), "2.10");
#endif

int main() {
  std::printf("cuda_api.h matches the CUDA %d headers\n", CUDA_VERSION);
  return 0;
}
