//===- cublaslt.cpp - dlc_cuda_gemm: row-major GEMM on cuBLASLt -----------===//
//
// libcublasLt.so.13 (or .12) is loaded with dlopen at the first GEMM of the
// process. cuBLASLt is column-major; a row-major C = opA * opB is the
// column-major C^T = opB^T * opA^T, so the operands are swapped (cuBLASLt's
// A is our b, its B our a) and m and n exchanged; the row-major matrices are
// read as their column-major transposes, which turns each `trans` flag into
// the matching cuBLASLt operation. Per model, the descriptors, layouts and
// the algorithm are cached per distinct call (shapes, strides, dtypes,
// transposes, pointer alignments and epilogue), made once per shape when
// dlc_model_create plans the entries. The algorithm is the heuristic's
// first; with DLC_CUDA_GEMM_TUNE=1, the fastest of its first eight, timed
// there on the device (its first unless another is 5% faster).
//
//===----------------------------------------------------------------------===//

#include "cuda_backend.h"

#include "dlc/dlc_cuda_abi.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <map>
#include <vector>

using namespace dlc::rt;
using namespace dlc::rt::cuapi;

namespace {

struct BlasLibrary {
  bool loaded = false;
  std::string reason; ///< Why it is not loaded.
  CublasLt api;
};

template <typename Fn>
bool resolveBlas(void *lib, const char *name, Fn &slot, std::string &reason) {
  void *fn = ::dlsym(lib, name);
  if (!fn) {
    reason = std::string("libcublasLt has no ") + name;
    return false;
  }
  slot = reinterpret_cast<Fn>(fn);
  return true;
}

BlasLibrary loadBlas() {
  BlasLibrary blas;
  try {
    void *lib = nullptr;
    std::string errors;
    for (const char *name : {"libcublasLt.so.13", "libcublasLt.so.12"}) {
      lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib)
        break;
      const char *why = ::dlerror();
      errors += std::string(errors.empty() ? "" : "; ") + (why ? why : name);
    }
    if (!lib) {
      blas.reason = "cuBLASLt not found (" + errors + ")";
      return blas;
    }
    CublasLt &b = blas.api;
    std::string &why = blas.reason;
    blas.loaded = resolveBlas(lib, "cublasLtCreate", b.cublasLtCreate, why) &&
                  resolveBlas(lib, "cublasLtDestroy", b.cublasLtDestroy, why) &&
                  resolveBlas(lib, "cublasLtGetStatusName",
                              b.cublasLtGetStatusName, why) &&
                  resolveBlas(lib, "cublasLtMatmulDescCreate",
                              b.cublasLtMatmulDescCreate, why) &&
                  resolveBlas(lib, "cublasLtMatmulDescDestroy",
                              b.cublasLtMatmulDescDestroy, why) &&
                  resolveBlas(lib, "cublasLtMatmulDescSetAttribute",
                              b.cublasLtMatmulDescSetAttribute, why) &&
                  resolveBlas(lib, "cublasLtMatrixLayoutCreate",
                              b.cublasLtMatrixLayoutCreate, why) &&
                  resolveBlas(lib, "cublasLtMatrixLayoutDestroy",
                              b.cublasLtMatrixLayoutDestroy, why) &&
                  resolveBlas(lib, "cublasLtMatrixLayoutSetAttribute",
                              b.cublasLtMatrixLayoutSetAttribute, why) &&
                  resolveBlas(lib, "cublasLtMatmulPreferenceCreate",
                              b.cublasLtMatmulPreferenceCreate, why) &&
                  resolveBlas(lib, "cublasLtMatmulPreferenceDestroy",
                              b.cublasLtMatmulPreferenceDestroy, why) &&
                  resolveBlas(lib, "cublasLtMatmulPreferenceSetAttribute",
                              b.cublasLtMatmulPreferenceSetAttribute, why) &&
                  resolveBlas(lib, "cublasLtMatmulAlgoGetHeuristic",
                              b.cublasLtMatmulAlgoGetHeuristic, why) &&
                  resolveBlas(lib, "cublasLtMatmul", b.cublasLtMatmul, why);
  } catch (...) {
    blas.loaded = false;
    blas.reason = "out of memory while loading cuBLASLt";
  }
  return blas;
}

const BlasLibrary &blasLibrary() {
  static const BlasLibrary blas = loadBlas();
  return blas;
}

/// Everything a plan depends on: dtypes, batch, m, n, k, lda, stride_a,
/// trans_a, ldb, stride_b, trans_b, ldc, stride_c, the alignments of a, b
/// and c, and the epilogue.
using GemmKey = std::array<int64_t, 18>;

struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspaceBytes = 0;
};

bool gemmTypes(int32_t dtypeAB, int32_t dtypeC, cudaDataType_t &ab,
               cudaDataType_t &c) {
  auto type = [](int32_t dtype, cudaDataType_t &out) {
    switch (dtype) {
    case DLC_F32:
      out = CUDA_R_32F;
      return true;
    case DLC_F16:
      out = CUDA_R_16F;
      return true;
    case DLC_BF16:
      out = CUDA_R_16BF;
      return true;
    default:
      return false;
    }
  };
  if (!type(dtypeAB, ab) || !type(dtypeC, c))
    return false;
  return dtypeC == DLC_F32 || dtypeC == dtypeAB;
}

/// The alignment (<= 256 bytes) of every matrix of a strided batch.
int64_t batchAlignment(const void *base, int64_t stride, int64_t batch,
                       size_t elementSize) {
  uint64_t bits = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(base));
  if (batch > 1)
    bits |= static_cast<uint64_t>(stride) * elementSize;
  uint64_t lowest = bits & (~bits + 1);
  return lowest == 0 || lowest > 256 ? 256 : static_cast<int64_t>(lowest);
}

std::string blasStatusText(const CublasLt &api, cublasStatus_t status) {
  const char *name =
      api.cublasLtGetStatusName ? api.cublasLtGetStatusName(status) : nullptr;
  return std::string(name ? name : "cuBLAS status") + " (" +
         std::to_string(status) + ")";
}

/// cuBLASLt's epilogue for one of ours. Operands swap in the column-major
/// view: the sum over k of our a (rows of our C, columns of cuBLASLt's D)
/// is BGRADB, that of our b BGRADA.
int32_t cublasEpilogue(int32_t epilogue) {
  switch (epilogue) {
  case DLC_GEMM_EPILOGUE_BIAS:
    return CUBLASLT_EPILOGUE_BIAS;
  case DLC_GEMM_EPILOGUE_RELU_BIAS:
    return CUBLASLT_EPILOGUE_RELU_BIAS;
  case DLC_GEMM_EPILOGUE_GELU_BIAS:
    return CUBLASLT_EPILOGUE_GELU_BIAS;
  case DLC_GEMM_EPILOGUE_RELU_AUX_BIAS:
    return CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
  case DLC_GEMM_EPILOGUE_DRELU:
    return CUBLASLT_EPILOGUE_DRELU;
  case DLC_GEMM_EPILOGUE_BGRAD_A:
    return CUBLASLT_EPILOGUE_BGRADB;
  case DLC_GEMM_EPILOGUE_BGRAD_B:
    return CUBLASLT_EPILOGUE_BGRADA;
  default:
    return CUBLASLT_EPILOGUE_DEFAULT;
  }
}

dlc_status blasStatus(cublasStatus_t status) {
  return status == CUBLAS_STATUS_ALLOC_FAILED ? DLC_ERR_OUT_OF_MEMORY
                                              : DLC_ERR_DEVICE_UNAVAILABLE;
}

} // namespace

namespace dlc::rt {

class GemmCache {
public:
  explicit GemmCache(const CublasLt &api) : Api(api) {}
  GemmCache(const GemmCache &) = delete;
  GemmCache &operator=(const GemmCache &) = delete;
  ~GemmCache() {
    for (auto &[key, plan] : Plans)
      destroy(plan);
    if (Handle)
      Api.cublasLtDestroy(Handle);
  }

  const CublasLt &Api;
  cublasLtHandle_t Handle = nullptr;
  std::map<GemmKey, GemmPlan> Plans;

  void destroy(GemmPlan &plan) const {
    if (plan.a)
      Api.cublasLtMatrixLayoutDestroy(plan.a);
    if (plan.b)
      Api.cublasLtMatrixLayoutDestroy(plan.b);
    if (plan.c)
      Api.cublasLtMatrixLayoutDestroy(plan.c);
    if (plan.desc)
      Api.cublasLtMatmulDescDestroy(plan.desc);
  }
};

} // namespace dlc::rt

void GemmCacheDeleter::operator()(GemmCache *cache) const noexcept {
  delete cache;
}

namespace {

/// How many of cuBLASLt's algorithms the heuristic is asked for, in its
/// order of preference.
constexpr int kGemmCandidates = 8;
/// Runs of each candidate timed together, after one that is not.
constexpr int kTuneRuns = 5;

/// Whether a call shape's plan takes the fastest of the heuristic's
/// candidates, timed on the device, rather than its first: with
/// DLC_CUDA_GEMM_TUNE=1. Not by default: on an H200 the candidates timed
/// alone made the digits step, whose small GEMMs run one after the other,
/// 5-13% slower, and the big MLP's step 0.8% faster (docs/gpu.md).
bool gemmTuning() {
  const char *v = std::getenv("DLC_CUDA_GEMM_TUNE");
  return v && std::strcmp(v, "1") == 0;
}

/// One call's pointers and beta.
struct GemmOperands {
  const void *a, *b;
  void *c;
  float beta;
  const void *bias;
  void *aux;
};

/// Times each candidate algorithm of `plan`'s call shape on the device and
/// returns the index of the fastest: the heuristic's first (0) unless
/// another is at least 5% faster, which keeps the first where the timings
/// cannot tell them apart. The products, bias gradients and ReLU masks go
/// to scratch buffers of their own: the call's operands are only read. Any
/// failure of the driver, or of a candidate, leaves that candidate out (0
/// if nothing could be timed): tuning never fails a model.
size_t
fastestCandidate(CudaContext &c, const GemmCache &cache, const GemmKey &key,
                 GemmPlan &plan,
                 const std::vector<cublasLtMatmulHeuristicResult_t> &cands,
                 const GemmOperands &ops, cudaDataType_t typeC) {
  const cuapi::Driver &d = *c.api;
  const CublasLt &api = cache.Api;
  const int64_t batch = key[2], m = key[3], n = key[4];
  const int64_t ldc = key[12], strideC = key[13];
  const int32_t epilogue = static_cast<int32_t>(key[17]);
  const bool biasGrad = epilogue == DLC_GEMM_EPILOGUE_BGRAD_A ||
                        epilogue == DLC_GEMM_EPILOGUE_BGRAD_B;
  const bool masked = epilogue == DLC_GEMM_EPILOGUE_RELU_AUX_BIAS ||
                      epilogue == DLC_GEMM_EPILOGUE_DRELU;
  const size_t sizeC = typeC == CUDA_R_32F ? 4 : 2;
  const size_t outBytes =
      static_cast<size_t>((batch - 1) * strideC + (m - 1) * ldc + n) * sizeC;
  const size_t biasBytes =
      biasGrad ? static_cast<size_t>(std::max(m, n)) * 4 : 0;
  const size_t auxBytes =
      masked ? static_cast<size_t>(dlc_gemm_relu_mask_bytes(m, n)) : 0;
  CUdeviceptr out = 0, biasOut = 0, mask = 0;
  CUevent start = nullptr, end = nullptr;
  auto alloc = [&](CUdeviceptr &p, size_t bytes) {
    return bytes == 0 ||
           (d.cuMemAlloc(&p, bytes) == CUDA_SUCCESS &&
            d.cuMemsetD8Async(p, 0, bytes, c.stream) == CUDA_SUCCESS);
  };
  size_t best = 0;
  if (alloc(out, outBytes) && alloc(biasOut, biasBytes) &&
      alloc(mask, auxBytes) && d.cuEventCreate(&start, 0) == CUDA_SUCCESS &&
      d.cuEventCreate(&end, 0) == CUDA_SUCCESS) {
    auto pointer = [](CUdeviceptr p) {
      return reinterpret_cast<void *>(static_cast<uintptr_t>(p));
    };
    const void *bias = biasGrad ? pointer(biasOut) : ops.bias;
    void *aux = masked ? pointer(mask) : nullptr;
    auto setPointer = [&](cublasLtMatmulDescAttributes_t attr, const void *p) {
      return api.cublasLtMatmulDescSetAttribute(
                 plan.desc, attr, &p, sizeof(p)) == CUBLAS_STATUS_SUCCESS;
    };
    const bool pointersSet =
        (!bias || setPointer(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias)) &&
        (!masked || setPointer(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux));
    const float alpha = 1.0f;
    auto run = [&](const cublasLtMatmulHeuristicResult_t &cand) {
      return api.cublasLtMatmul(cache.Handle, plan.desc, &alpha, ops.b, plan.a,
                                ops.a, plan.b, &ops.beta, pointer(out), plan.c,
                                pointer(out), plan.c, &cand.algo,
                                pointer(c.blasWorkspace), cand.workspaceSize,
                                c.stream) == CUBLAS_STATUS_SUCCESS;
    };
    float bestMs = -1, firstMs = -1;
    for (size_t i = 0; pointersSet && i < cands.size(); ++i) {
      bool ok =
          run(cands[i]) && d.cuEventRecord(start, c.stream) == CUDA_SUCCESS;
      for (int r = 0; ok && r < kTuneRuns; ++r)
        ok = run(cands[i]);
      float ms = 0;
      ok = ok && d.cuEventRecord(end, c.stream) == CUDA_SUCCESS &&
           d.cuStreamSynchronize(c.stream) == CUDA_SUCCESS &&
           d.cuEventElapsedTime(&ms, start, end) == CUDA_SUCCESS;
      if (!ok)
        continue;
      if (i == 0)
        firstMs = ms;
      if (bestMs < 0 || ms < bestMs) {
        bestMs = ms;
        best = i;
      }
    }
    if (firstMs >= 0 && bestMs > 0.95f * firstMs)
      best = 0;
  }
  d.cuStreamSynchronize(c.stream);
  for (CUevent e : {start, end})
    if (e)
      d.cuEventDestroy(e);
  for (CUdeviceptr p : {out, biasOut, mask})
    if (p)
      d.cuMemFree(p);
  return best;
}

/// Makes the plan of one call shape; on failure, records it in `c` and
/// returns false (`plan` then holds what must be destroyed).
bool makePlan(CudaContext &c, const GemmCache &cache, const GemmKey &key,
              cudaDataType_t typeAB, cudaDataType_t typeC,
              const GemmOperands &ops, const std::string &what,
              GemmPlan &plan) {
  const void *bias = ops.bias;
  void *aux = ops.aux;
  const CublasLt &api = cache.Api;
  const int64_t batch = key[2], m = key[3], n = key[4], k = key[5];
  const int64_t lda = key[6], strideA = key[7], transA = key[8];
  const int64_t ldb = key[9], strideB = key[10], transB = key[11];
  const int64_t ldc = key[12], strideC = key[13];
  const int32_t epilogue = cublasEpilogue(static_cast<int32_t>(key[17]));
  auto check = [&](cublasStatus_t status, const char *call) {
    if (status == CUBLAS_STATUS_SUCCESS)
      return true;
    c.recordFailure(blasStatus(status), what + ": " + call + " failed: " +
                                            blasStatusText(api, status));
    return false;
  };
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const auto &value,
                 const char *call) {
    return check(api.cublasLtMatmulDescSetAttribute(plan.desc, attr, &value,
                                                    sizeof(value)),
                 call);
  };
  // cuBLASLt's A is our b, read column-major: n x k (or k x n transposed).
  const int32_t opA = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t opB = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (!check(api.cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F,
                                          CUDA_R_32F),
             "cublasLtMatmulDescCreate") ||
      !set(CUBLASLT_MATMUL_DESC_TRANSA, opA,
           "cublasLtMatmulDescSetAttribute(TRANSA)") ||
      !set(CUBLASLT_MATMUL_DESC_TRANSB, opB,
           "cublasLtMatmulDescSetAttribute(TRANSB)"))
    return false;
  // The bias is per row of the column-major D: per column of our C; a
  // bias gradient is written, of our a (cuBLASLt's B) or b (its A). The
  // heuristic sees the first call's bias pointer; each call sets its own.
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT &&
      (!set(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue,
            "cublasLtMatmulDescSetAttribute(EPILOGUE)") ||
       !set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias,
            "cublasLtMatmulDescSetAttribute(BIAS_POINTER)")))
    return false;
  // The ReLU mask (dlc_cuda_abi.h): one bit per element of the
  // column-major D (n x m).
  const int64_t auxLd = dlc_gemm_relu_mask_ld(n);
  if ((epilogue == CUBLASLT_EPILOGUE_RELU_AUX_BIAS ||
       epilogue == CUBLASLT_EPILOGUE_DRELU) &&
      (!set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux,
            "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_POINTER)") ||
       !set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, auxLd,
            "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_LD)")))
    return false;
  auto layout = [&](cublasLtMatrixLayout_t &out, cudaDataType_t type,
                    int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
    const int32_t count = static_cast<int32_t>(batch);
    return check(api.cublasLtMatrixLayoutCreate(
                     &out, type, static_cast<uint64_t>(rows),
                     static_cast<uint64_t>(cols), ld),
                 "cublasLtMatrixLayoutCreate") &&
           check(api.cublasLtMatrixLayoutSetAttribute(
                     out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                     sizeof(count)),
                 "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)") &&
           check(api.cublasLtMatrixLayoutSetAttribute(
                     out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                     sizeof(stride)),
                 "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  };
  if (!layout(plan.a, typeAB, transB ? k : n, transB ? n : k, ldb, strideB) ||
      !layout(plan.b, typeAB, transA ? m : k, transA ? k : m, lda, strideA) ||
      !layout(plan.c, typeC, n, m, ldc, strideC))
    return false;

  cublasLtMatmulPreference_t pref = nullptr;
  if (!check(api.cublasLtMatmulPreferenceCreate(&pref),
             "cublasLtMatmulPreferenceCreate"))
    return false;
  const uint64_t maxWorkspace = c.blasWorkspaceBytes;
  // Our a is cuBLASLt's B and our b its A.
  const uint32_t alignA = static_cast<uint32_t>(key[15]);
  const uint32_t alignB = static_cast<uint32_t>(key[14]);
  const uint32_t alignC = static_cast<uint32_t>(key[16]);
  cublasLtMatmulHeuristicResult_t results[kGemmCandidates] = {};
  int returned = 0;
  bool ok =
      check(api.cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
                sizeof(maxWorkspace)),
            "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)") &&
      check(api.cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA,
                sizeof(alignA)),
            "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_A_BYTES)") &&
      check(api.cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB,
                sizeof(alignB)),
            "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_B_BYTES)") &&
      check(api.cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC,
                sizeof(alignC)),
            "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_C_BYTES)") &&
      check(api.cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignC,
                sizeof(alignC)),
            "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D_BYTES)") &&
      check(api.cublasLtMatmulAlgoGetHeuristic(
                cache.Handle, plan.desc, plan.a, plan.b, plan.c, plan.c, pref,
                kGemmCandidates, results, &returned),
            "cublasLtMatmulAlgoGetHeuristic");
  api.cublasLtMatmulPreferenceDestroy(pref);
  if (!ok)
    return false;
  std::vector<cublasLtMatmulHeuristicResult_t> candidates;
  for (int i = 0; i < returned && i < kGemmCandidates; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS &&
        results[i].workspaceSize <= maxWorkspace)
      candidates.push_back(results[i]);
  if (candidates.empty()) {
    c.recordFailure(DLC_ERR_DEVICE_UNAVAILABLE,
                    what + ": cuBLASLt has no algorithm for it on " +
                        c.description);
    return false;
  }
  const size_t chosen =
      candidates.size() > 1 && gemmTuning()
          ? fastestCandidate(c, cache, key, plan, candidates, ops, typeC)
          : 0;
  plan.algo = candidates[chosen].algo;
  plan.workspaceBytes = candidates[chosen].workspaceSize;
  return true;
}

} // namespace

extern "C" void dlc_cuda_gemm(void *ctx, int32_t dtype_ab, int32_t dtype_c,
                              int64_t batch, int64_t m, int64_t n, int64_t k,
                              const void *a, int64_t lda, int64_t stride_a,
                              int32_t trans_a, const void *b, int64_t ldb,
                              int64_t stride_b, int32_t trans_b, float beta,
                              void *c, int64_t ldc, int64_t stride_c,
                              int32_t epilogue, const void *bias, void *aux) {
  auto *cuda = static_cast<CudaContext *>(ctx);
  if (!cuda || cuda->failed())
    return;
  try {
    auto dtypeText = [](int32_t dtype) -> std::string {
      const char *name = isValidDType(dtype)
                             ? dtypeName(static_cast<dlc_dtype>(dtype))
                             : nullptr;
      return name ? name : "dtype " + std::to_string(dtype);
    };
    std::string what = "dlc_cuda_gemm (" + dtypeText(dtype_ab) + " x " +
                       dtypeText(dtype_ab) + " -> " + dtypeText(dtype_c) +
                       ", batch " + std::to_string(batch) + ", m " +
                       std::to_string(m) + ", n " + std::to_string(n) + ", k " +
                       std::to_string(k) + ")";
    cudaDataType_t typeAB = CUDA_R_32F, typeC = CUDA_R_32F;
    if (!gemmTypes(dtype_ab, dtype_c, typeAB, typeC)) {
      cuda->recordFailure(DLC_ERR_INTERNAL,
                          what + ": unsupported dtypes (expected f32 -> f32, "
                                 "f16 -> f16/f32 or bf16 -> bf16/f32)");
      return;
    }
    // What each epilogue needs: a bias (or bias gradient), a ReLU mask,
    // a batch of 1 (one vector or mask for the whole batch).
    const bool biasGrad = epilogue == DLC_GEMM_EPILOGUE_BGRAD_A ||
                          epilogue == DLC_GEMM_EPILOGUE_BGRAD_B;
    const bool masked = epilogue == DLC_GEMM_EPILOGUE_RELU_AUX_BIAS ||
                        epilogue == DLC_GEMM_EPILOGUE_DRELU;
    const bool needsBias = epilogue != DLC_GEMM_EPILOGUE_NONE &&
                           epilogue != DLC_GEMM_EPILOGUE_DRELU;
    if (epilogue != DLC_GEMM_EPILOGUE_NONE &&
        (epilogue < DLC_GEMM_EPILOGUE_BIAS ||
         epilogue > DLC_GEMM_EPILOGUE_DRELU || dtype_c != DLC_F32 ||
         (needsBias && !bias) || (masked && !aux) ||
         ((biasGrad || masked) && batch != 1))) {
      cuda->recordFailure(DLC_ERR_INTERNAL,
                          what + ": bad epilogue " + std::to_string(epilogue) +
                              " (epilogues take an f32 output and a bias or a "
                              "mask, bias gradients and masks a batch of 1)");
      return;
    }
    constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
    if (batch < 1 || m < 1 || n < 1 || k < 1 || batch > kMaxInt32 || !a || !b ||
        !c) {
      cuda->recordFailure(DLC_ERR_INTERNAL,
                          what + ": sizes must be >= 1 (batch below 2^31) "
                                 "and pointers non-NULL");
      return;
    }

    const BlasLibrary &blas = blasLibrary();
    if (!blas.loaded) {
      cuda->recordFailure(DLC_ERR_DEVICE_UNAVAILABLE,
                          what + ": " + blas.reason);
      return;
    }
    if (!cuda->gemm) {
      std::unique_ptr<GemmCache, GemmCacheDeleter> cache(
          new GemmCache(blas.api));
      cublasLtHandle_t handle = nullptr;
      if (cublasStatus_t s = blas.api.cublasLtCreate(&handle)) {
        cuda->recordFailure(blasStatus(s), what + ": cublasLtCreate failed: " +
                                               blasStatusText(blas.api, s));
        return;
      }
      cache->Handle = handle;
      cuda->gemm = std::move(cache);
    }
    GemmCache &cache = *cuda->gemm;

    const size_t sizeAB = dtypeSize(static_cast<dlc_dtype>(dtype_ab));
    const size_t sizeC = dtypeSize(static_cast<dlc_dtype>(dtype_c));
    const GemmKey key = {dtype_ab,
                         dtype_c,
                         batch,
                         m,
                         n,
                         k,
                         lda,
                         stride_a,
                         trans_a ? 1 : 0,
                         ldb,
                         stride_b,
                         trans_b ? 1 : 0,
                         ldc,
                         stride_c,
                         batchAlignment(a, stride_a, batch, sizeAB),
                         batchAlignment(b, stride_b, batch, sizeAB),
                         batchAlignment(c, stride_c, batch, sizeC),
                         epilogue};
    auto it = cache.Plans.find(key);
    if (it == cache.Plans.end()) {
      GemmPlan plan;
      const GemmOperands ops{a, b, c, beta, bias, aux};
      if (!makePlan(*cuda, cache, key, typeAB, typeC, ops, what, plan)) {
        cache.destroy(plan);
        return;
      }
      it = cache.Plans.emplace(key, plan).first;
    }
    if (cuda->planning)
      return;
    const GemmPlan &plan = it->second;
    // The bias and mask pointers change from call to call; the rest of the
    // plan not.
    auto setPointer = [&](cublasLtMatmulDescAttributes_t attr, const void *ptr,
                          const char *name) {
      cublasStatus_t s = blas.api.cublasLtMatmulDescSetAttribute(
          plan.desc, attr, &ptr, sizeof(ptr));
      if (s)
        cuda->recordFailure(blasStatus(s),
                            what + ": cublasLtMatmulDescSetAttribute(" + name +
                                ") failed: " + blasStatusText(blas.api, s));
      return s == CUBLAS_STATUS_SUCCESS;
    };
    if ((masked && !setPointer(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux,
                               "EPILOGUE_AUX_POINTER")) ||
        (needsBias &&
         !setPointer(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, "BIAS_POINTER")))
      return;
    const float alpha = 1.0f;
    // Swapped operands: C^T = opB^T * opA^T, column-major.
    if (cublasStatus_t s = blas.api.cublasLtMatmul(
            cache.Handle, plan.desc, &alpha, b, plan.a, a, plan.b, &beta, c,
            plan.c, c, plan.c, &plan.algo,
            reinterpret_cast<void *>(
                static_cast<uintptr_t>(cuda->blasWorkspace)),
            plan.workspaceBytes, cuda->stream))
      cuda->recordFailure(blasStatus(s), what + ": cublasLtMatmul failed: " +
                                             blasStatusText(blas.api, s));
  } catch (...) {
    cuda->recordFailure(DLC_ERR_OUT_OF_MEMORY,
                        "out of memory in dlc_cuda_gemm");
  }
}
