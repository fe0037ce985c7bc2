//===- EmulatedCuda.cpp - host references of the CUDA runtime calls -------===//
//
// dlc_emulated_gemm follows dlc_cuda_gemm's contract
// (runtime/include/dlc/dlc_cuda_abi.h) literally, one element at a time, so
// that `dlc run --cuda-emulate` checks the arguments the compiler computes
// (leading dimensions, transposes, beta, batch strides, offsets) against
// PyTorch. Pointers arrive as 64-bit integers, as the generated code passes
// them.
//
//===----------------------------------------------------------------------===//
#include "EmulatedCuda.h"

#include "dlc/dlc_cuda_abi.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include <cmath>
#include <cstdint>
#include <cstring>

using namespace llvm;

namespace {

const fltSemantics &semanticsOf(int32_t dtype) {
  if (dtype == DLC_F16)
    return APFloat::IEEEhalf();
  if (dtype == DLC_BF16)
    return APFloat::BFloat();
  return APFloat::IEEEsingle();
}

double load(int64_t base, int32_t dtype, int64_t i) {
  if (dtype == DLC_F32)
    return reinterpret_cast<const float *>(base)[i];
  uint16_t bits = reinterpret_cast<const uint16_t *>(base)[i];
  return APFloat(semanticsOf(dtype), APInt(16, bits)).convertToFloat();
}

void store(int64_t base, int32_t dtype, int64_t i, double v) {
  if (dtype == DLC_F32) {
    reinterpret_cast<float *>(base)[i] = static_cast<float>(v);
    return;
  }
  APFloat f(v);
  bool lost;
  f.convert(semanticsOf(dtype), APFloat::rmNearestTiesToEven, &lost);
  reinterpret_cast<uint16_t *>(base)[i] =
      static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

extern "C" void dlcEmulatedGemm(void * /*ctx*/, int32_t dtypeAB, int32_t dtypeC,
                                int64_t batch, int64_t m, int64_t n, int64_t k,
                                int64_t a, int64_t lda, int64_t strideA,
                                int32_t transA, int64_t b, int64_t ldb,
                                int64_t strideB, int32_t transB, float beta,
                                int64_t c, int64_t ldc, int64_t strideC,
                                int32_t epilogue, int64_t bias, int64_t aux) {
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          int64_t ia = q * strideA + (transA ? p * lda + i : i * lda + p);
          int64_t ib = q * strideB + (transB ? j * ldb + p : p * ldb + j);
          acc += load(a, dtypeAB, ia) * load(b, dtypeAB, ib);
        }
        int64_t ic = q * strideC + i * ldc + j;
        // beta = 0 does not read C (cuBLASLt's rule: NaNs there vanish).
        if (beta != 0.0f)
          acc += beta * load(c, dtypeC, ic);
        // The fp32 result, which a 16-bit C gets rounded once more.
        acc = static_cast<float>(acc);
        // The ReLU mask: bit j + i * ld of column-major D (n x m).
        int64_t bit = j + i * dlc_gemm_relu_mask_ld(n);
        auto *mask = reinterpret_cast<uint8_t *>(aux);
        if (epilogue == DLC_GEMM_EPILOGUE_DRELU) {
          bool positive = mask[bit / 8] >> (bit % 8) & 1;
          store(c, dtypeC, ic, positive ? acc : 0.0);
          continue;
        }
        if (epilogue != DLC_GEMM_EPILOGUE_BIAS &&
            epilogue != DLC_GEMM_EPILOGUE_RELU_BIAS &&
            epilogue != DLC_GEMM_EPILOGUE_GELU_BIAS &&
            epilogue != DLC_GEMM_EPILOGUE_RELU_AUX_BIAS) {
          store(c, dtypeC, ic, acc);
          continue;
        }
        // The epilogue adds the fp32 bias to the fp32 result; cuBLASLt's
        // ReLU makes a NaN 0, its GELU is the tanh approximation.
        float r =
            static_cast<float>(acc) + reinterpret_cast<const float *>(bias)[j];
        if (epilogue == DLC_GEMM_EPILOGUE_RELU_AUX_BIAS) {
          uint8_t one = uint8_t(1u << (bit % 8));
          mask[bit / 8] = r > 0.0f ? mask[bit / 8] | one : mask[bit / 8] & ~one;
        }
        if ((epilogue == DLC_GEMM_EPILOGUE_RELU_BIAS ||
             epilogue == DLC_GEMM_EPILOGUE_RELU_AUX_BIAS) &&
            (std::isnan(r) || r < 0.0f))
          r = 0.0f;
        if (epilogue == DLC_GEMM_EPILOGUE_GELU_BIAS)
          r = 0.5f * r *
              (1.0f + std::tanh(0.7978845608f * (r + 0.044715f * r * r * r)));
        store(c, dtypeC, ic, r);
      }
  // Bias gradients (batch 1): the fp32 sum over k of opA's rows or opB's
  // columns.
  auto sumsOverK = [&](int64_t count, auto element) {
    for (int64_t x = 0; x < count; ++x) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += element(x, p);
      reinterpret_cast<float *>(bias)[x] = sum;
    }
  };
  if (epilogue == DLC_GEMM_EPILOGUE_BGRAD_A)
    sumsOverK(m, [&](int64_t i, int64_t p) {
      return load(a, dtypeAB, transA ? p * lda + i : i * lda + p);
    });
  if (epilogue == DLC_GEMM_EPILOGUE_BGRAD_B)
    sumsOverK(n, [&](int64_t j, int64_t p) {
      return load(b, dtypeAB, transB ? j * ldb + p : p * ldb + j);
    });
}

extern "C" void dlcEmulatedMemcpy(void * /*ctx*/, int64_t dst, int64_t src,
                                  int64_t bytes) {
  std::memmove(reinterpret_cast<void *>(dst),
               reinterpret_cast<const void *>(src), static_cast<size_t>(bytes));
}

/// compiler-rt's f32 -> bf16 rounding (to nearest even, NaNs quiet), which
/// LLVM calls for a scalar bf16 select on x86 without AVX512-BF16: the
/// emulated kernels are scalar loops, where the CPU code is vectorised. The
/// result travels in the low 16 bits of xmm0, as a float's bits would.
extern "C" float dlcTruncSfBf2(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  uint32_t rounded = (bits & 0x7fffffffu) > 0x7f800000u
                         ? ((bits >> 16) | 0x40u)
                         : (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  uint32_t out = rounded & 0xffffu;
  float result;
  std::memcpy(&result, &out, 4);
  return result;
}

} // namespace

Error dlc::defineEmulatedCuda(orc::LLJIT &jit) {
  orc::MangleAndInterner mangle(jit.getExecutionSession(), jit.getDataLayout());
  orc::SymbolMap symbols;
  symbols[mangle("dlc_emulated_gemm")] = {
      orc::ExecutorAddr::fromPtr(&dlcEmulatedGemm), JITSymbolFlags::Exported};
  symbols[mangle("dlc_emulated_memcpy")] = {
      orc::ExecutorAddr::fromPtr(&dlcEmulatedMemcpy), JITSymbolFlags::Exported};
  symbols[mangle("__truncsfbf2")] = {orc::ExecutorAddr::fromPtr(&dlcTruncSfBf2),
                                     JITSymbolFlags::Exported};
  return jit.getMainJITDylib().define(orc::absoluteSymbols(std::move(symbols)));
}
