//===- init.cpp - The deterministic param initialisation stream -----------===//
//
// docs/runtime-abi.md: every `uniform` param draws from its own stream,
// splitmix64 seeded with `seed ^ fnv1a64(name)`; element k (row-major) is
// `(2 * u_k - 1) * BOUND` with `u_k = (next() >> 40) * 2^-24`. The value is
// computed in double and rounded to the param's dtype to nearest even.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace dlc::rt;

namespace {

/// Rounds a double to a binary floating-point format with `expBits` exponent
/// and `mantBits` fraction bits (to nearest, ties to even) and returns its
/// bits. Overflow gives infinity; NaN gives a quiet NaN.
uint32_t roundToFormat(double v, int expBits, int mantBits) {
  const uint32_t sign = std::signbit(v) ? 1u << (expBits + mantBits) : 0;
  const uint32_t expMax = (1u << expBits) - 1;
  const uint32_t inf = expMax << mantBits;
  if (std::isnan(v))
    return sign | inf | (1u << (mantBits - 1));
  double a = std::fabs(v);
  if (std::isinf(a))
    return sign | inf;
  if (a == 0)
    return sign;

  const int bias = (1 << (expBits - 1)) - 1;
  int e = 0;
  (void)std::frexp(a, &e); // a in [2^(e-1), 2^e)
  int exponent = e - 1;
  if (exponent > bias)
    return sign | inf;
  // Subnormals share the smallest normal exponent's quantum.
  exponent = std::max(exponent, 1 - bias);
  // a in units of the quantum 2^(exponent - mantBits); exact (power of 2).
  double q = std::ldexp(a, mantBits - exponent);
  double r = std::floor(q);
  double frac = q - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0))
    r += 1;
  // For a normal value r includes the implicit bit (2^mantBits), which adds
  // one to the exponent field; a rounding carry to 2^(mantBits+1) adds one
  // more. For a subnormal, exponent + bias - 1 == 0 and r is the fraction.
  uint64_t bits = (static_cast<uint64_t>(exponent + bias - 1) << mantBits) +
                  static_cast<uint64_t>(r);
  if (bits >= inf)
    return sign | inf;
  return sign | static_cast<uint32_t>(bits);
}

template <typename T> void storeAt(void *data, int64_t i, T value) {
  std::memcpy(static_cast<char *>(data) + i * static_cast<int64_t>(sizeof(T)),
              &value, sizeof(T));
}

/// Calls store(i, value(i)) for the elements [begin, end), with `store`
/// specialised for the dtype so that the loop does not switch per element.
template <typename ValueFn>
void fill(void *data, dlc_dtype dtype, int64_t begin, int64_t end,
          ValueFn value) {
  switch (dtype) {
  case DLC_F32:
    for (int64_t i = begin; i < end; ++i)
      static_cast<float *>(data)[i] = static_cast<float>(value(i));
    return;
  case DLC_F64:
    for (int64_t i = begin; i < end; ++i)
      static_cast<double *>(data)[i] = value(i);
    return;
  default:
    for (int64_t i = begin; i < end; ++i)
      storeElement(data, dtype, i, value(i));
    return;
  }
}

/// Element k of a float32 `uniform` stream, the same bits as the double
/// formula of the file comment: (2 u - 1) is t * 2^-24 with t the 25-bit even
/// integer 2 (z >> 40) - 2^24, exact in double (and in int32), so the only
/// roundings are the product with the bound and the narrowing to float. The
/// state before draw k + 1 is `seed + (k + 1) * gamma`: no value depends on
/// the one before, and the loop vectorises.
inline float uniformFloat32At(uint64_t seed, int64_t k, double bound) {
  uint64_t z = seed + static_cast<uint64_t>(k + 1) * SplitMix64::kGamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  const int32_t t = static_cast<int32_t>((z >> 40) << 1) - (int32_t(1) << 24);
  return static_cast<float>(static_cast<double>(t) * 0x1p-24 * bound);
}

void uniformFloat32Generic(float *out, int64_t begin, int64_t end,
                           uint64_t seed, double bound) {
  // Drawn in sequence: without 64-bit vector multiplies, the compiler's
  // vector version of uniformFloat32At is slower than this scalar loop.
  SplitMix64 rng(seed);
  rng.skip(static_cast<uint64_t>(begin));
  for (int64_t i = begin; i < end; ++i) {
    double u = static_cast<double>(rng.next() >> 40) * 0x1p-24;
    out[i] = static_cast<float>((2 * u - 1) * bound);
  }
}

#if defined(__x86_64__)
/// 8 draws per AVX-512 vector (vpmullq): 2.5-3.5x the scalar loop, which
/// matters for a large model's seconds of initialisation.
__attribute__((target("avx512f,avx512dq,avx512vl"))) void
uniformFloat32Avx512(float *out, int64_t begin, int64_t end, uint64_t seed,
                     double bound) {
  for (int64_t i = begin; i < end; ++i)
    out[i] = uniformFloat32At(seed, i, bound);
}
#endif

/// A param's `uniform` stream, drawn in parallel ranges: element k is the
/// k-th draw whichever thread computes it, so the values do not depend on
/// the number of threads.
struct UniformFill {
  void *data;
  dlc_dtype dtype;
  int64_t numel;
  uint64_t seed;
  double bound;
  bool wide; ///< float32 on AVX-512 (uniformFloat32).
};

/// Elements per unit of dlc_parallel_for.
constexpr int64_t kInitBlock = int64_t(1) << 16;

void uniformBlocks(void *ctx, int64_t beginBlock, int64_t endBlock) {
  const auto &f = *static_cast<const UniformFill *>(ctx);
  int64_t begin = beginBlock * kInitBlock;
  int64_t end = std::min(f.numel, endBlock * kInitBlock);
  if (f.dtype == DLC_F32)
    return uniformFloat32(static_cast<float *>(f.data), begin, end, f.seed,
                          f.bound, f.wide);
  SplitMix64 rng(f.seed);
  rng.skip(static_cast<uint64_t>(begin));
  const double bound = f.bound;
  fill(f.data, f.dtype, begin, end, [&](int64_t) {
    double u = static_cast<double>(rng.next() >> 40) * 0x1p-24;
    return (2 * u - 1) * bound;
  });
}

} // namespace

bool dlc::rt::uniformFloat32WideAvailable() {
#if defined(__x86_64__)
  return cpuHasFeature("avx512f") && cpuHasFeature("avx512dq") &&
         cpuHasFeature("avx512vl");
#else
  return false;
#endif
}

void dlc::rt::uniformFloat32(float *out, int64_t begin, int64_t end,
                             uint64_t seed, double bound, bool wide) {
#if defined(__x86_64__)
  if (wide)
    return uniformFloat32Avx512(out, begin, end, seed, bound);
#endif
  (void)wide;
  uniformFloat32Generic(out, begin, end, seed, bound);
}

uint64_t dlc::rt::fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint16_t dlc::rt::doubleToHalfBits(double v) {
  return static_cast<uint16_t>(roundToFormat(v, 5, 10));
}

uint16_t dlc::rt::doubleToBFloat16Bits(double v) {
  return static_cast<uint16_t>(roundToFormat(v, 8, 7));
}

void dlc::rt::storeElement(void *data, dlc_dtype dtype, int64_t i, double v) {
  switch (dtype) {
  case DLC_F32:
    return storeAt(data, i, static_cast<float>(v));
  case DLC_F16:
    return storeAt(data, i, doubleToHalfBits(v));
  case DLC_BF16:
    return storeAt(data, i, doubleToBFloat16Bits(v));
  case DLC_F64:
    return storeAt(data, i, v);
  case DLC_I64:
    return storeAt(data, i, static_cast<int64_t>(v));
  case DLC_I32:
    return storeAt(data, i, static_cast<int32_t>(v));
  case DLC_I8:
    return storeAt(data, i, static_cast<int8_t>(v));
  case DLC_U8:
    return storeAt(data, i, static_cast<uint8_t>(v));
  }
}

void dlc::rt::initParam(const ParamDecl &param, void *data, uint64_t seed,
                        const void *initData) {
  switch (param.init) {
  case InitKind::Data:
    std::memcpy(data, initData, static_cast<size_t>(param.nbytes));
    return;
  case InitKind::Zeros:
    std::memset(data, 0, static_cast<size_t>(param.nbytes));
    return;
  case InitKind::Ones:
    fill(data, param.dtype, 0, param.numel, [](int64_t) { return 1.0; });
    return;
  case InitKind::Uniform: {
    // On the runtime's threads (a large model's weights take seconds on
    // one).
    UniformFill f{data,        param.dtype,
                  param.numel, seed ^ fnv1a64(param.name),
                  param.bound, uniformFloat32WideAvailable()};
    dlc_parallel_for((param.numel + kInitBlock - 1) / kInitBlock, uniformBlocks,
                     &f);
    return;
  }
  }
}
