//===- InitTest.cpp - The init stream and float rounding ------------------===//

#include "TestUtil.h"
#include "internal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace dlc::rt;
using namespace dlc::test;

namespace {

uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

TEST(InitTest, Fnv1a64) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("fc1.weight"), 0x0fc5ab63896269edULL);
}

TEST(InitTest, SplitMix64) {
  // The first output of Vigna's reference splitmix64 seeded with 0.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);
}

TEST(InitTest, HalfRounding) {
  EXPECT_EQ(doubleToHalfBits(0.0), 0x0000);
  EXPECT_EQ(doubleToHalfBits(-0.0), 0x8000);
  EXPECT_EQ(doubleToHalfBits(1.0), 0x3c00);
  EXPECT_EQ(doubleToHalfBits(-2.0), 0xc000);
  EXPECT_EQ(doubleToHalfBits(0.1), 0x2e66);
  EXPECT_EQ(doubleToHalfBits(65504.0), 0x7bff); // The largest half.
  EXPECT_EQ(doubleToHalfBits(65519.99), 0x7bff);
  EXPECT_EQ(doubleToHalfBits(65520.0), 0x7c00); // Ties to even: infinity.
  EXPECT_EQ(doubleToHalfBits(1e10), 0x7c00);
  EXPECT_EQ(doubleToHalfBits(-INFINITY), 0xfc00);
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -14)), 0x0400); // Min normal.
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -24)), 0x0001); // Min subnormal.
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -25)), 0x0000); // Tie to even.
  EXPECT_EQ(doubleToHalfBits(std::ldexp(3.0, -26)), 0x0001);
  EXPECT_EQ(doubleToHalfBits(std::ldexp(3.0, -25)), 0x0002); // Tie to even.
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3c00); // Tie.
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(3.0, -11)), 0x3c02); // Tie.
  EXPECT_EQ(doubleToHalfBits(2047.0 / 1024.0 + std::ldexp(1.0, -11)),
            0x4000); // Carry into the exponent.
  EXPECT_EQ(doubleToHalfBits(NAN) & 0x7c00, 0x7c00);
  EXPECT_NE(doubleToHalfBits(NAN) & 0x03ff, 0);
}

TEST(InitTest, BFloat16Rounding) {
  EXPECT_EQ(doubleToBFloat16Bits(1.0), 0x3f80);
  EXPECT_EQ(doubleToBFloat16Bits(-1.0), 0xbf80);
  EXPECT_EQ(doubleToBFloat16Bits(0.1), 0x3dcd);
  EXPECT_EQ(doubleToBFloat16Bits(1.0 + std::ldexp(1.0, -8)), 0x3f80); // Tie.
  EXPECT_EQ(doubleToBFloat16Bits(1.0 + std::ldexp(3.0, -8)), 0x3f82); // Tie.
  EXPECT_EQ(doubleToBFloat16Bits(3.0e38), 0x7f62);
  EXPECT_EQ(doubleToBFloat16Bits(1e39), 0x7f80);
}

TEST(InitTest, RoundingMatchesTheHardware) {
  // Against float (bf16 is float's top half, so check the float path's
  // format by rounding float itself: 8 exponent bits, 23 fraction bits).
  std::mt19937_64 gen(1);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-30, 20);
  for (int i = 0; i < 100000; ++i) {
    double v = std::ldexp(mantissa(gen), exponent(gen));
#if defined(__FLT16_MAX__) && defined(__x86_64__)
    _Float16 h = static_cast<_Float16>(v);
    uint16_t hbits;
    std::memcpy(&hbits, &h, sizeof(hbits));
    ASSERT_EQ(doubleToHalfBits(v), hbits) << v;
#endif
    // A value exactly representable in float rounds like the float's top
    // 16 bits with round-to-nearest-even on the low 16.
    float f = static_cast<float>(v);
    uint32_t bits = floatBits(f);
    uint32_t rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
    ASSERT_EQ(doubleToBFloat16Bits(static_cast<double>(f)), rounded) << v;
  }
}

ParamDecl param(const char *name, dlc_dtype dtype, int64_t numel, InitKind init,
                double bound) {
  ParamDecl p;
  p.name = name;
  p.dtype = dtype;
  p.shape = {numel};
  p.numel = numel;
  p.nbytes = numel * static_cast<int64_t>(dtypeSize(dtype));
  p.init = init;
  p.bound = bound;
  return p;
}

TEST(InitTest, ReferenceValues) {
  // Computed independently (Python, float64, then numpy's rounding).
  std::vector<float> f32(4);
  initParam(param("fc1.weight", DLC_F32, 4, InitKind::Uniform, 0.5), f32.data(),
            42);
  const uint32_t expectedF32[] = {0xbec124ce, 0xbed66ba8, 0x3ec6a958,
                                  0xbe5e29b0};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(floatBits(f32[i]), expectedF32[i]) << i;

  std::vector<double> f64(3);
  initParam(param("w", DLC_F64, 3, InitKind::Uniform, 0.03571428571),
            f64.data(), 7);
  EXPECT_DOUBLE_EQ(f64[0], -0.007283074514332505);
  EXPECT_DOUBLE_EQ(f64[1], -0.02823279159070866);
  EXPECT_DOUBLE_EQ(f64[2], -0.02685021076561386);

  std::vector<uint16_t> f16(4);
  initParam(param("fc1.weight", DLC_F16, 4, InitKind::Uniform, 0.5), f16.data(),
            42);
  EXPECT_EQ(f16, (std::vector<uint16_t>{0xb609, 0xb6b3, 0x3635, 0xb2f1}));
}

// A large param is drawn in parallel ranges: element k is still the k-th
// draw of the one stream, whatever the number of threads (the pool's size
// is fixed at its first use, so the ranges are what is checked here).
TEST(InitTest, LargeParamsAreOneStream) {
  const int64_t n = (int64_t(1) << 18) + 12345; // several ranges, a tail
  for (dlc_dtype dtype : {DLC_F32, DLC_BF16}) {
    size_t size = dtypeSize(dtype);
    std::vector<char> got(static_cast<size_t>(n) * size);
    initParam(param("big", dtype, n, InitKind::Uniform, 0.25), got.data(), 9);
    SplitMix64 rng(9 ^ fnv1a64("big"));
    std::vector<char> want(got.size());
    for (int64_t k = 0; k < n; ++k) {
      double u = static_cast<double>(rng.next() >> 40) * 0x1p-24;
      storeElement(want.data(), dtype, k, (2 * u - 1) * 0.25);
    }
    EXPECT_EQ(got, want) << dtypeName(dtype);
  }
  SplitMix64 a(5), b(5);
  for (int i = 0; i < 1000; ++i)
    a.next();
  b.skip(1000);
  EXPECT_EQ(a.next(), b.next());
}

// The float32 stream has a scalar loop and an AVX-512 one; both give the
// formula's bits (the one above, drawn in sequence in double), for every
// range start (the vector loop's head and tail) and for bounds whose
// products are subnormal or overflow.
TEST(InitTest, Float32LoopsGiveTheFormulasBits) {
  const double bounds[] = {
      0.5, 1 / std::sqrt(150528.0), 0.07216878364870323, 1e-40, 3.3e38, 1e39};
  const uint64_t seeds[] = {0, 42 ^ fnv1a64("fc1.weight"), ~uint64_t(0)};
  const bool wideHere = uniformFloat32WideAvailable();
  for (uint64_t seed : seeds)
    for (double bound : bounds)
      for (int64_t begin : {int64_t(0), int64_t(1), int64_t(13)}) {
        const int64_t end = begin + 1000 + begin;
        std::vector<uint32_t> want(static_cast<size_t>(end));
        SplitMix64 rng(seed);
        rng.skip(static_cast<uint64_t>(begin));
        for (int64_t k = begin; k < end; ++k) {
          double u = static_cast<double>(rng.next() >> 40) * 0x1p-24;
          want[k] = floatBits(static_cast<float>((2 * u - 1) * bound));
        }
        for (bool wide : {false, true}) {
          if (wide && !wideHere)
            continue;
          std::vector<float> got(static_cast<size_t>(end), -7.0f);
          uniformFloat32(got.data(), begin, end, seed, bound, wide);
          for (int64_t k = 0; k < end; ++k)
            ASSERT_EQ(floatBits(got[k]), k < begin ? floatBits(-7.0f) : want[k])
                << "element " << k << " of [" << begin << ", " << end
                << "), bound " << bound << (wide ? ", AVX-512" : ", scalar");
        }
      }
  if (!wideHere)
    GTEST_SKIP() << "no AVX-512 (avx512f, avx512dq, avx512vl): only the "
                    "scalar loop was checked";
}

TEST(InitTest, OnesAndZerosInEveryDType) {
  const dlc_dtype dtypes[] = {DLC_F32, DLC_F16, DLC_BF16, DLC_F64,
                              DLC_I64, DLC_I32, DLC_I8,   DLC_U8};
  const uint64_t ones[] = {0x3f800000, 0x3c00, 0x3f80, 0x3ff0000000000000,
                           1,          1,      1,      1};
  for (size_t d = 0; d < 8; ++d) {
    size_t size = dtypeSize(dtypes[d]);
    std::vector<uint8_t> buf(5 * size, 0xab);
    initParam(param("p", dtypes[d], 5, InitKind::Ones, 0), buf.data(), 1);
    for (int i = 0; i < 5; ++i) {
      uint64_t v = 0;
      std::memcpy(&v, buf.data() + i * size, size);
      EXPECT_EQ(v, ones[d]) << dlc_dtype_name(dtypes[d]);
    }
    initParam(param("p", dtypes[d], 5, InitKind::Zeros, 0), buf.data(), 1);
    for (uint8_t byte : buf)
      EXPECT_EQ(byte, 0);
  }
}

} // namespace
