//===- cuda_api.h - The CUDA driver and cuBLASLt, declared by hand -*- C++
//-*-===//
//
// The few types, constants and function signatures of the CUDA driver API and
// of cuBLASLt that the CUDA backend uses, copied from the CUDA 13 headers
// (cuda.h, cudaTypedefs.h, cublasLt.h, cublas_api.h, library_types.h) so that
// the runtime builds without them: both libraries are loaded with dlopen at
// run time and nothing links against CUDA. Handles are distinct opaque
// pointer types; numeric values are the documented ones (checked against the
// real headers by test/CudaHeaderCheck.cpp where the toolkit is installed).
//
// The driver functions are resolved with cuGetProcAddress_v2 for the ABI of
// CUDA 12.0 (kCudaApiVersion): none of them changed signature since, so the
// signatures below are those of the variants the driver returns, on CUDA 12
// and 13 drivers alike.
//
//===----------------------------------------------------------------------===//

#ifndef DLCRT_CUDA_API_H
#define DLCRT_CUDA_API_H

#include <cstddef>
#include <cstdint>

namespace dlc::rt::cuapi {

//===-- Driver API -------------------------------------------------------===//

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUstream = struct CUstream_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
using CUevent = struct CUevent_st *;
using CUjit_option = int;
using CUstreamCaptureMode = int;
using CUdriverProcAddressQueryResult = int;

/// The driver ABI the function pointers below are requested for.
constexpr int kCudaApiVersion = 12000;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;

constexpr unsigned long long CU_GET_PROC_ADDRESS_DEFAULT = 0;
constexpr CUdriverProcAddressQueryResult CU_GET_PROC_ADDRESS_SUCCESS = 0;
constexpr CUdriverProcAddressQueryResult CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND =
    1;
constexpr CUdriverProcAddressQueryResult
    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2;

constexpr CUjit_option CU_JIT_INFO_LOG_BUFFER = 3;
constexpr CUjit_option CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
constexpr CUstreamCaptureMode CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;

using PFN_cuGetProcAddress = CUresult (*)(
    const char *symbol, void **pfn, int cudaVersion, unsigned long long flags,
    CUdriverProcAddressQueryResult *found);
using PFN_cuGetErrorName = CUresult (*)(CUresult error, const char **str);
using PFN_cuGetErrorString = CUresult (*)(CUresult error, const char **str);
using PFN_cuInit = CUresult (*)(unsigned flags);
using PFN_cuDeviceGetCount = CUresult (*)(int *count);
using PFN_cuDeviceGet = CUresult (*)(CUdevice *device, int ordinal);
using PFN_cuDeviceGetName = CUresult (*)(char *name, int len, CUdevice dev);
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext *ctx, CUdevice dev);
using PFN_cuDevicePrimaryCtxRelease = CUresult (*)(CUdevice dev);
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext ctx);
using PFN_cuStreamCreate = CUresult (*)(CUstream *stream, unsigned flags);
using PFN_cuStreamSynchronize = CUresult (*)(CUstream stream);
using PFN_cuStreamQuery = CUresult (*)(CUstream stream);
using PFN_cuStreamDestroy = CUresult (*)(CUstream stream);
using PFN_cuMemAlloc = CUresult (*)(CUdeviceptr *dptr, size_t bytes);
using PFN_cuMemFree = CUresult (*)(CUdeviceptr dptr);
using PFN_cuMemAllocHost = CUresult (*)(void **ptr, size_t bytes);
using PFN_cuMemFreeHost = CUresult (*)(void *ptr);
using PFN_cuMemcpyHtoDAsync = CUresult (*)(CUdeviceptr dst, const void *src,
                                           size_t bytes, CUstream stream);
using PFN_cuMemcpyDtoHAsync = CUresult (*)(void *dst, CUdeviceptr src,
                                           size_t bytes, CUstream stream);
using PFN_cuMemcpyDtoDAsync = CUresult (*)(CUdeviceptr dst, CUdeviceptr src,
                                           size_t bytes, CUstream stream);
using PFN_cuMemsetD8Async = CUresult (*)(CUdeviceptr dst, unsigned char value,
                                         size_t count, CUstream stream);
using PFN_cuMemGetInfo = CUresult (*)(size_t *free, size_t *total);
using PFN_cuModuleLoadDataEx = CUresult (*)(CUmodule *module, const void *image,
                                            unsigned numOptions,
                                            CUjit_option *options,
                                            void **optionValues);
using PFN_cuModuleGetFunction = CUresult (*)(CUfunction *fn, CUmodule module,
                                             const char *name);
using PFN_cuModuleUnload = CUresult (*)(CUmodule module);
using PFN_cuLaunchKernel = CUresult (*)(CUfunction f, unsigned gridX,
                                        unsigned gridY, unsigned gridZ,
                                        unsigned blockX, unsigned blockY,
                                        unsigned blockZ, unsigned sharedBytes,
                                        CUstream stream, void **params,
                                        void **extra);
using PFN_cuStreamBeginCapture = CUresult (*)(CUstream stream,
                                              CUstreamCaptureMode mode);
using PFN_cuStreamEndCapture = CUresult (*)(CUstream stream, CUgraph *graph);
using PFN_cuGraphInstantiateWithFlags = CUresult (*)(CUgraphExec *exec,
                                                     CUgraph graph,
                                                     unsigned long long flags);
using PFN_cuGraphLaunch = CUresult (*)(CUgraphExec exec, CUstream stream);
using PFN_cuGraphExecDestroy = CUresult (*)(CUgraphExec exec);
using PFN_cuGraphDestroy = CUresult (*)(CUgraph graph);
using PFN_cuEventCreate = CUresult (*)(CUevent *event, unsigned flags);
using PFN_cuEventRecord = CUresult (*)(CUevent event, CUstream stream);
using PFN_cuEventElapsedTime = CUresult (*)(float *ms, CUevent start,
                                            CUevent end);
using PFN_cuEventDestroy = CUresult (*)(CUevent event);
using PFN_cuStreamWaitEvent = CUresult (*)(CUstream stream, CUevent event,
                                           unsigned flags);

/// The driver entry points, resolved once per process (cudaDriver()).
struct Driver {
  PFN_cuGetErrorName cuGetErrorName = nullptr;
  PFN_cuGetErrorString cuGetErrorString = nullptr;
  PFN_cuInit cuInit = nullptr;
  PFN_cuDeviceGetCount cuDeviceGetCount = nullptr;
  PFN_cuDeviceGet cuDeviceGet = nullptr;
  PFN_cuDeviceGetName cuDeviceGetName = nullptr;
  PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease = nullptr;
  PFN_cuCtxSetCurrent cuCtxSetCurrent = nullptr;
  PFN_cuStreamCreate cuStreamCreate = nullptr;
  PFN_cuStreamSynchronize cuStreamSynchronize = nullptr;
  PFN_cuStreamQuery cuStreamQuery = nullptr;
  PFN_cuStreamDestroy cuStreamDestroy = nullptr;
  PFN_cuMemAlloc cuMemAlloc = nullptr;
  PFN_cuMemFree cuMemFree = nullptr;
  PFN_cuMemAllocHost cuMemAllocHost = nullptr;
  PFN_cuMemFreeHost cuMemFreeHost = nullptr;
  PFN_cuMemcpyHtoDAsync cuMemcpyHtoDAsync = nullptr;
  PFN_cuMemcpyDtoHAsync cuMemcpyDtoHAsync = nullptr;
  PFN_cuMemcpyDtoDAsync cuMemcpyDtoDAsync = nullptr;
  PFN_cuMemsetD8Async cuMemsetD8Async = nullptr;
  PFN_cuMemGetInfo cuMemGetInfo = nullptr;
  PFN_cuModuleLoadDataEx cuModuleLoadDataEx = nullptr;
  PFN_cuModuleGetFunction cuModuleGetFunction = nullptr;
  PFN_cuModuleUnload cuModuleUnload = nullptr;
  PFN_cuLaunchKernel cuLaunchKernel = nullptr;
  PFN_cuStreamBeginCapture cuStreamBeginCapture = nullptr;
  PFN_cuStreamEndCapture cuStreamEndCapture = nullptr;
  PFN_cuGraphInstantiateWithFlags cuGraphInstantiateWithFlags = nullptr;
  PFN_cuGraphLaunch cuGraphLaunch = nullptr;
  PFN_cuGraphExecDestroy cuGraphExecDestroy = nullptr;
  PFN_cuGraphDestroy cuGraphDestroy = nullptr;
  PFN_cuEventCreate cuEventCreate = nullptr;
  PFN_cuEventRecord cuEventRecord = nullptr;
  PFN_cuEventElapsedTime cuEventElapsedTime = nullptr;
  PFN_cuEventDestroy cuEventDestroy = nullptr;
  PFN_cuStreamWaitEvent cuStreamWaitEvent = nullptr;
};

//===-- cuBLASLt ---------------------------------------------------------===//

using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext *;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque_t *;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque_t *;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque_t *;
using cublasComputeType_t = int;
using cudaDataType_t = int;
using cublasLtMatmulDescAttributes_t = int;
using cublasLtMatrixLayoutAttribute_t = int;
using cublasLtMatmulPreferenceAttributes_t = int;

constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
constexpr cublasStatus_t CUBLAS_STATUS_ALLOC_FAILED = 3;
constexpr cublasStatus_t CUBLAS_STATUS_NOT_SUPPORTED = 15;
constexpr cublasComputeType_t CUBLAS_COMPUTE_32F = 68;
constexpr cudaDataType_t CUDA_R_32F = 0;
constexpr cudaDataType_t CUDA_R_16F = 2;
constexpr cudaDataType_t CUDA_R_16BF = 14;
constexpr int32_t CUBLAS_OP_N = 0;
constexpr int32_t CUBLAS_OP_T = 1;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_TRANSA = 3;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_TRANSB = 4;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_EPILOGUE = 7;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;
constexpr cublasLtMatmulDescAttributes_t
    CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD =
    12;
constexpr int32_t CUBLASLT_EPILOGUE_DEFAULT = 1;
constexpr int32_t CUBLASLT_EPILOGUE_BIAS = 4;
constexpr int32_t CUBLASLT_EPILOGUE_RELU_BIAS = 6;
constexpr int32_t CUBLASLT_EPILOGUE_GELU_BIAS = 36;
constexpr int32_t CUBLASLT_EPILOGUE_RELU_AUX_BIAS = 134;
constexpr int32_t CUBLASLT_EPILOGUE_DRELU = 136;
constexpr int32_t CUBLASLT_EPILOGUE_BGRADA = 256;
constexpr int32_t CUBLASLT_EPILOGUE_BGRADB = 512;
constexpr cublasLtMatrixLayoutAttribute_t CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT =
    5;
constexpr cublasLtMatrixLayoutAttribute_t
    CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;
constexpr cublasLtMatmulPreferenceAttributes_t
    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;
constexpr cublasLtMatmulPreferenceAttributes_t
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5;
constexpr cublasLtMatmulPreferenceAttributes_t
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6;
constexpr cublasLtMatmulPreferenceAttributes_t
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7;
constexpr cublasLtMatmulPreferenceAttributes_t
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8;

struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};

struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

/// The cuBLASLt entry points, resolved once per process (cublasLt()).
struct CublasLt {
  cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t *handle) = nullptr;
  cublasStatus_t (*cublasLtDestroy)(cublasLtHandle_t handle) = nullptr;
  const char *(*cublasLtGetStatusName)(cublasStatus_t status) = nullptr;
  cublasStatus_t (*cublasLtMatmulDescCreate)(
      cublasLtMatmulDesc_t *desc, cublasComputeType_t computeType,
      cudaDataType_t scaleType) = nullptr;
  cublasStatus_t (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t desc) =
      nullptr;
  cublasStatus_t (*cublasLtMatmulDescSetAttribute)(
      cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
      const void *buf, size_t size) = nullptr;
  cublasStatus_t (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t *layout,
                                               cudaDataType_t type,
                                               uint64_t rows, uint64_t cols,
                                               int64_t ld) = nullptr;
  cublasStatus_t (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t layout) =
      nullptr;
  cublasStatus_t (*cublasLtMatrixLayoutSetAttribute)(
      cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
      const void *buf, size_t size) = nullptr;
  cublasStatus_t (*cublasLtMatmulPreferenceCreate)(
      cublasLtMatmulPreference_t *pref) = nullptr;
  cublasStatus_t (*cublasLtMatmulPreferenceDestroy)(
      cublasLtMatmulPreference_t pref) = nullptr;
  cublasStatus_t (*cublasLtMatmulPreferenceSetAttribute)(
      cublasLtMatmulPreference_t pref,
      cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
      size_t size) = nullptr;
  cublasStatus_t (*cublasLtMatmulAlgoGetHeuristic)(
      cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
      cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
      cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
      cublasLtMatmulPreference_t pref, int requested,
      cublasLtMatmulHeuristicResult_t *results, int *returned) = nullptr;
  cublasStatus_t (*cublasLtMatmul)(
      cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha,
      const void *a, cublasLtMatrixLayout_t aLayout, const void *b,
      cublasLtMatrixLayout_t bLayout, const void *beta, const void *c,
      cublasLtMatrixLayout_t cLayout, void *d, cublasLtMatrixLayout_t dLayout,
      const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceBytes,
      CUstream stream) = nullptr;
};

//===-- NCCL -------------------------------------------------------------===//

using ncclResult_t = int;
using ncclComm_t = struct ncclComm *;
using ncclDataType_t = int;
using ncclRedOp_t = int;
/// NCCL_UNIQUE_ID_BYTES.
struct ncclUniqueId {
  char internal[128];
};

constexpr ncclResult_t ncclSuccess = 0;
constexpr ncclResult_t ncclInProgress = 7;
constexpr ncclDataType_t ncclFloat32 = 7;
constexpr ncclRedOp_t ncclSum = 0;
constexpr ncclRedOp_t ncclAvg = 4; ///< Since NCCL 2.10.
/// ncclAvg's first version, as ncclGetVersion reports it.
constexpr int kNcclMinVersion = 21000;

/// libnccl.so.2's entry points, resolved with dlsym (nccl.cpp).
struct Nccl {
  ncclResult_t (*ncclGetVersion)(int *version) = nullptr;
  const char *(*ncclGetErrorString)(ncclResult_t result) = nullptr;
  ncclResult_t (*ncclGetUniqueId)(ncclUniqueId *id) = nullptr;
  ncclResult_t (*ncclCommInitRank)(ncclComm_t *comm, int nranks,
                                   ncclUniqueId id, int rank) = nullptr;
  ncclResult_t (*ncclCommDestroy)(ncclComm_t comm) = nullptr;
  ncclResult_t (*ncclCommAbort)(ncclComm_t comm) = nullptr;
  ncclResult_t (*ncclCommGetAsyncError)(ncclComm_t comm,
                                        ncclResult_t *error) = nullptr;
  ncclResult_t (*ncclGroupStart)() = nullptr;
  ncclResult_t (*ncclGroupEnd)() = nullptr;
  ncclResult_t (*ncclAllReduce)(const void *send, void *recv, size_t count,
                                ncclDataType_t type, ncclRedOp_t op,
                                ncclComm_t comm, CUstream stream) = nullptr;
  ncclResult_t (*ncclReduceScatter)(const void *send, void *recv,
                                    size_t recvCount, ncclDataType_t type,
                                    ncclRedOp_t op, ncclComm_t comm,
                                    CUstream stream) = nullptr;
  ncclResult_t (*ncclAllGather)(const void *send, void *recv, size_t sendCount,
                                ncclDataType_t type, ncclComm_t comm,
                                CUstream stream) = nullptr;
};

} // namespace dlc::rt::cuapi

#endif // DLCRT_CUDA_API_H
