//===- fake_cublaslt.cpp - A fake libcublasLt.so.13 for the libdlcrt tests ===//
//
// A column-major reference of cublasLtMatmul for f32 (D = alpha * op(A) *
// op(B) + beta * C, strided batches, the BIAS, RELU_BIAS and GELU_BIAS
// epilogues, the BGRADA and BGRADB bias gradients, and RELU_AUX_BIAS and
// DRELU with a bit mask of ours, one bit per element of D at row + column *
// ld), written from the cuBLASLt
// documentation, so that the tests check libdlcrt's row-major to
// column-major mapping. Work goes through the fake driver's stream (captured
// into graphs like kernels). Other dtypes are CUBLAS_STATUS_NOT_SUPPORTED.
// The heuristic ranks FakeCudaState::algoMs's algorithms, each matmul
// taking its time on the fake device's clock.
//
//===----------------------------------------------------------------------===//

#include "fake_cuda.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace {

using Status = int;
constexpr Status kSuccess = 0, kNotInitialized = 1, kInvalidValue = 7,
                 kNotSupported = 15;

struct Desc {
  int computeType = 0, scaleType = 0;
  int32_t transA = 0, transB = 0;
  int32_t epilogue = 1;   // CUBLASLT_EPILOGUE_DEFAULT
  float *bias = nullptr;  // read by BIAS, written by BGRADA / BGRADB
  uint8_t *aux = nullptr; // the ReLU mask: written by RELU_AUX_BIAS
  int64_t auxLd = 0;      // in bits
};
struct Layout {
  int type = 0;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct Pref {
  uint64_t maxWorkspace = 0;
};
int Handle = 0;

FakeCudaState &state() {
  // The fake driver, loaded by libdlcrt before any GEMM.
  static void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  static auto *get =
      reinterpret_cast<FakeCudaState *(*)()>(::dlsym(lib, "fake_cuda_state"));
  return *get();
}

/// Element `i` of a matrix of CUDA type `type` (0: fp32, 14: bf16).
float element(const void *base, int type, int64_t i) {
  if (type == 0)
    return static_cast<const float *>(base)[i];
  if (type == 2) { // fp16: exact in fp32
    const uint16_t h = static_cast<const uint16_t *>(base)[i];
    const float sign = h >> 15 ? -1.0f : 1.0f;
    const int exponent = h >> 10 & 0x1f, mantissa = h & 0x3ff;
    if (exponent == 0x1f)
      return mantissa ? NAN : sign * INFINITY;
    if (exponent == 0) // subnormal
      return sign * std::ldexp(float(mantissa), -24);
    return sign * std::ldexp(float(mantissa | 0x400), exponent - 25);
  }
  uint32_t bits = uint32_t(static_cast<const uint16_t *>(base)[i]) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

/// Stores `v` as element `i`, rounded to nearest even for bf16.
void setElement(void *base, int type, int64_t i, float v) {
  if (type == 0) {
    static_cast<float *>(base)[i] = v;
    return;
  }
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  uint16_t out = std::isnan(v)
                     ? uint16_t(0x7fc0)
                     : uint16_t((bits + 0x7fff + (bits >> 16 & 1)) >> 16);
  static_cast<uint16_t *>(base)[i] = out;
}

void enqueue(void *stream, std::function<void()> work) {
  static void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  static auto *fn = reinterpret_cast<void (*)(void *, std::function<void()>)>(
      ::dlsym(lib, "fake_cuda_enqueue"));
  fn(stream, std::move(work));
}

} // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT Status cublasLtCreate(void **handle) {
  // FAKE_CUDA_MODE=no-cublaslt: a cuBLASLt that cannot start, as on a
  // machine whose driver is too old for it.
  const char *mode = std::getenv("FAKE_CUDA_MODE");
  if (mode && std::strcmp(mode, "no-cublaslt") == 0)
    return kNotInitialized;
  *handle = &Handle;
  return kSuccess;
}
EXPORT Status cublasLtDestroy(void *handle) {
  return handle == &Handle ? kSuccess : kInvalidValue;
}
EXPORT const char *cublasLtGetStatusName(Status status) {
  return status == kNotSupported     ? "CUBLAS_STATUS_NOT_SUPPORTED"
         : status == kInvalidValue   ? "CUBLAS_STATUS_INVALID_VALUE"
         : status == kNotInitialized ? "CUBLAS_STATUS_NOT_INITIALIZED"
                                     : "CUBLAS_STATUS_SUCCESS";
}
EXPORT Status cublasLtMatmulDescCreate(Desc **desc, int computeType,
                                       int scaleType) {
  *desc = new Desc{computeType, scaleType, 0, 0, 1, nullptr, nullptr, 0};
  return kSuccess;
}
EXPORT Status cublasLtMatmulDescDestroy(Desc *desc) {
  delete desc;
  return kSuccess;
}
EXPORT Status cublasLtMatmulDescSetAttribute(Desc *desc, int attr,
                                             const void *buf, size_t size) {
  if (attr == 8 && size == sizeof(desc->bias)) { // BIAS_POINTER
    std::memcpy(&desc->bias, buf, size);
    return kSuccess;
  }
  if (attr == 11 && size == sizeof(desc->aux)) { // EPILOGUE_AUX_POINTER
    std::memcpy(&desc->aux, buf, size);
    return kSuccess;
  }
  if (attr == 12 && size == sizeof(desc->auxLd)) { // EPILOGUE_AUX_LD
    std::memcpy(&desc->auxLd, buf, size);
    return kSuccess;
  }
  if (size != sizeof(int32_t))
    return kInvalidValue;
  if (attr == 3)
    std::memcpy(&desc->transA, buf, size);
  else if (attr == 4)
    std::memcpy(&desc->transB, buf, size);
  else if (attr == 7) // EPILOGUE: DEFAULT, (RELU_, GELU_)BIAS, BGRADA/B
    std::memcpy(&desc->epilogue, buf, size);
  else
    return kInvalidValue;
  return kSuccess;
}
EXPORT Status cublasLtMatrixLayoutCreate(Layout **layout, int type,
                                         uint64_t rows, uint64_t cols,
                                         int64_t ld) {
  *layout = new Layout{type, rows, cols, ld, 1, 0};
  return kSuccess;
}
EXPORT Status cublasLtMatrixLayoutDestroy(Layout *layout) {
  delete layout;
  return kSuccess;
}
EXPORT Status cublasLtMatrixLayoutSetAttribute(Layout *layout, int attr,
                                               const void *buf, size_t size) {
  if (attr == 5 && size == sizeof(int32_t))
    std::memcpy(&layout->batch, buf, size);
  else if (attr == 6 && size == sizeof(int64_t))
    std::memcpy(&layout->stride, buf, size);
  else
    return kInvalidValue;
  return kSuccess;
}
EXPORT Status cublasLtMatmulPreferenceCreate(Pref **pref) {
  *pref = new Pref;
  return kSuccess;
}
EXPORT Status cublasLtMatmulPreferenceDestroy(Pref *pref) {
  delete pref;
  return kSuccess;
}
EXPORT Status cublasLtMatmulPreferenceSetAttribute(Pref *pref, int attr,
                                                   const void *buf,
                                                   size_t size) {
  if (attr == 1 && size == sizeof(uint64_t))
    std::memcpy(&pref->maxWorkspace, buf, size);
  else if (attr >= 5 && attr <= 8 && size == sizeof(uint32_t)) {
    uint32_t alignment = 0;
    std::memcpy(&alignment, buf, size);
    if (alignment == 0 || (alignment & (alignment - 1)) || alignment > 256)
      return kInvalidValue;
  } else
    return kInvalidValue;
  return kSuccess;
}

struct AlgoAndMore {
  uint64_t algo[8];
  size_t workspaceSize;
  int state;
  float wavesCount;
  int reserved[4];
};

EXPORT Status cublasLtMatmulAlgoGetHeuristic(void *, Desc *, Layout *, Layout *,
                                             Layout *, Layout *, Pref *pref,
                                             int requested,
                                             AlgoAndMore *results,
                                             int *returned) {
  ++state().heuristics;
  if (requested < 1)
    return kInvalidValue;
  const int algos = std::max<int>(1, static_cast<int>(state().algoMs.size()));
  *returned = std::min(requested, algos);
  for (int i = 0; i < *returned; ++i) {
    std::memset(&results[i], 0, sizeof(AlgoAndMore));
    results[i].algo[0] = 42 + i;
    results[i].workspaceSize = pref->maxWorkspace < 4096 ? 0 : 4096;
  }
  return kSuccess;
}

EXPORT Status cublasLtMatmul(void *, Desc *desc, const void *alpha,
                             const void *a, Layout *la, const void *b,
                             Layout *lb, const void *beta, const void *c,
                             Layout *lc, void *d, Layout *ld,
                             const AlgoAndMore *algo, void *, size_t,
                             void *stream) {
  const std::vector<double> &algoMs = state().algoMs;
  const uint64_t algos = std::max<uint64_t>(1, algoMs.size());
  if (!algo || algo->algo[0] < 42 || algo->algo[0] >= 42 + algos)
    return kInvalidValue;
  const int algoId = static_cast<int>(algo->algo[0]);
  const double ms = algoMs.empty() ? 0 : algoMs[algoId - 42];
  if (ms < 0)
    return kNotSupported;
  // fp32 (CUDA_R_32F, 0) throughout; bf16 (CUDA_R_16BF, 14) A and B with
  // an fp32 or bf16 C and D; fp16 (CUDA_R_16F, 2) A and B with an fp32 C
  // and D. fp32 compute and scale.
  const bool abBf16 = la->type == 14 && lb->type == 14;
  const bool abF16 = la->type == 2 && lb->type == 2;
  const bool cdBf16 = lc->type == 14 && ld->type == 14;
  if (desc->computeType != 68 || desc->scaleType != 0 ||
      !((la->type == 0 && lb->type == 0) || abBf16 || abF16) ||
      !((lc->type == 0 && ld->type == 0) || (cdBf16 && abBf16)))
    return kNotSupported;
  // op(A) is M x K, op(B) K x N, C and D M x N.
  const uint64_t m = ld->rows, n = ld->cols;
  const uint64_t k = desc->transA ? la->rows : la->cols;
  const uint64_t am = desc->transA ? la->cols : la->rows;
  const uint64_t bk = desc->transB ? lb->cols : lb->rows;
  const uint64_t bn = desc->transB ? lb->rows : lb->cols;
  if (am != m || bk != k || bn != n || lc->rows != m || lc->cols != n ||
      la->ld < static_cast<int64_t>(la->rows) ||
      lb->ld < static_cast<int64_t>(lb->rows) ||
      lc->ld < static_cast<int64_t>(m) || ld->ld < static_cast<int64_t>(m) ||
      la->batch != ld->batch || lb->batch != ld->batch ||
      lc->batch != ld->batch)
    return kInvalidValue;
  const bool bias = desc->epilogue == 4 || desc->epilogue == 6 ||
                    desc->epilogue == 36 || desc->epilogue == 134;
  const bool biasGrad = desc->epilogue == 256 || desc->epilogue == 512;
  const bool masked = desc->epilogue == 134 || desc->epilogue == 136;
  if ((desc->epilogue != 1 && !bias && !biasGrad && !masked) ||
      ((bias || biasGrad) && !desc->bias) || (biasGrad && ld->batch != 1))
    return kNotSupported;
  // The mask's leading dimension: a multiple of 128 bits, at least D's rows.
  if (masked && (!desc->aux || ld->batch != 1 || desc->auxLd % 128 != 0 ||
                 desc->auxLd < static_cast<int64_t>(ld->rows)))
    return kInvalidValue;
  const float al = *static_cast<const float *>(alpha);
  const float be = *static_cast<const float *>(beta);
  Desc op = *desc;
  Layout A = *la, B = *lb, C = *lc, D = *ld;
  enqueue(stream, [=] {
    ++state().matmuls;
    state().matmulAlgos.push_back(algoId);
    state().matmulWrites.push_back(d);
    if (biasGrad)
      state().matmulWrites.push_back(op.bias);
    if (op.epilogue == 134)
      state().matmulWrites.push_back(op.aux);
    state().clockMs += ms;
    for (int32_t batch = 0; batch < D.batch; ++batch) {
      auto pa = [&](uint64_t idx) {
        return element(a, A.type, batch * A.stride + idx);
      };
      auto pb = [&](uint64_t idx) {
        return element(b, B.type, batch * B.stride + idx);
      };
      for (uint64_t j = 0; j < n; ++j)
        for (uint64_t i = 0; i < m; ++i) {
          float sum = 0;
          for (uint64_t p = 0; p < k; ++p) {
            float x = op.transA ? pa(p + i * A.ld) : pa(i + p * A.ld);
            float y = op.transB ? pb(j + p * B.ld) : pb(p + j * B.ld);
            sum += x * y;
          }
          float prior =
              be == 0.0f
                  ? 0.0f
                  : be * element(c, C.type, batch * C.stride + i + j * C.ld);
          float v = al * sum + prior;
          // The bias is one value per row of D (column-major), for every
          // column and batch; ReLU is fmax(v, 0), which makes a NaN 0;
          // GELU is the tanh approximation. RELU_AUX_BIAS records where
          // the biased value was positive; DRELU keeps only those.
          if (op.epilogue == 4 || op.epilogue == 6 || op.epilogue == 36 ||
              op.epilogue == 134)
            v += op.bias[i];
          const uint64_t bit = i + j * op.auxLd;
          if (op.epilogue == 134) {
            const uint8_t one = uint8_t(1u << (bit % 8));
            op.aux[bit / 8] =
                v > 0 ? op.aux[bit / 8] | one : op.aux[bit / 8] & ~one;
          }
          if (op.epilogue == 6 || op.epilogue == 134)
            v = std::fmax(v, 0.0f);
          if (op.epilogue == 136 && !(op.aux[bit / 8] >> (bit % 8) & 1))
            v = 0.0f;
          if (op.epilogue == 36)
            v = 0.5f * v *
                (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
          setElement(d, D.type, batch * D.stride + i + j * D.ld, v);
        }
      // Bias gradients: the sum over k of op(A) per row of D (BGRADA), or
      // of op(B) per column of D (BGRADB).
      auto sumsOverK = [&](uint64_t count, auto operand) {
        for (uint64_t x = 0; x < count; ++x) {
          float sum = 0;
          for (uint64_t p = 0; p < k; ++p)
            sum += operand(x, p);
          op.bias[x] = sum;
        }
      };
      if (op.epilogue == 256)
        sumsOverK(m, [&](uint64_t i, uint64_t p) {
          return op.transA ? pa(p + i * A.ld) : pa(i + p * A.ld);
        });
      if (op.epilogue == 512)
        sumsOverK(n, [&](uint64_t j, uint64_t p) {
          return op.transB ? pb(j + p * B.ld) : pb(p + j * B.ld);
        });
    }
  });
  return kSuccess;
}
