//===- FloatShimTest.cpp - libdlcrt's __truncsfbf2 ------------------------===//

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>

extern "C" _Float16 __truncsfbf2(float x);

namespace {

uint16_t bf16Bits(float x) {
  _Float16 r = __truncsfbf2(x);
  uint16_t bits;
  std::memcpy(&bits, &r, sizeof bits);
  return bits;
}

float fromBits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

TEST(FloatShim, RoundsToNearestEven) {
  EXPECT_EQ(bf16Bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16Bits(-2.0f), 0xc000);
  // Halfway cases go to the even neighbour, others to the nearer one.
  EXPECT_EQ(bf16Bits(fromBits(0x3f808000u)), 0x3f80);
  EXPECT_EQ(bf16Bits(fromBits(0x3f818000u)), 0x3f82);
  EXPECT_EQ(bf16Bits(fromBits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(bf16Bits(fromBits(0x3f807fffu)), 0x3f80);
  // The largest floats round up to infinity; subnormals and zeros keep
  // their sign.
  EXPECT_EQ(bf16Bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bf16Bits(-0.0f), 0x8000);
  EXPECT_EQ(bf16Bits(fromBits(0x00018000u)), 0x0002);
}

TEST(FloatShim, KeepsInfinitiesAndQuietsNaNs) {
  EXPECT_EQ(bf16Bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(bf16Bits(-std::numeric_limits<float>::infinity()), 0xff80);
  // A signalling NaN whose payload is in the low bits stays a NaN.
  EXPECT_EQ(bf16Bits(fromBits(0x7f800001u)), 0x7fc0);
  EXPECT_EQ(bf16Bits(fromBits(0xffc00000u)), 0xffc0);
}

} // namespace
