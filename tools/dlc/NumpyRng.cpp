//===- NumpyRng.cpp - NumPy's default_rng(seed).permutation ---------------===//
//
// PCG64 as NumPy seeds it through SeedSequence (the seed's 32-bit words
// hashed into a pool of four, generate_state(4, uint64), then
// pcg_setseq_128_srandom_r), its XSL-RR output, next_uint32's halves of a
// 64-bit draw, random_interval's masked rejection and Generator.permutation's
// Fisher-Yates from the end.
//
//===----------------------------------------------------------------------===//

#include "NumpyRng.h"

#include "llvm/ADT/StringExtras.h"

#include <numeric>
#include <string>

using namespace llvm;
using dlc::driver::NumpyRng;

using u128 = unsigned __int128;

static constexpr u128 kMult =
    (u128(2549297995355413924ull) << 64) | 4865540595714422341ull;

static std::string hex(u128 v) {
  char buf[33];
  for (int i = 31; i >= 0; --i, v >>= 4)
    buf[i] = "0123456789abcdef"[unsigned(v & 15)];
  buf[32] = 0;
  return buf;
}

static bool unhex(StringRef s, u128 &v) {
  if (s.size() != 32)
    return false;
  v = 0;
  for (char c : s) {
    int d = llvm::hexDigitValue(c);
    if (d < 0)
      return false;
    v = (v << 4) | unsigned(d);
  }
  return true;
}

NumpyRng::NumpyRng(uint64_t seed) {
  // SeedSequence(seed): the seed's 32-bit words mixed into a pool of 4,
  // then generate_state(4, uint64).
  uint32_t entropy[2] = {uint32_t(seed), uint32_t(seed >> 32)};
  unsigned words = (seed >> 32) ? 2 : 1;
  uint32_t hashConst = 0x43b0d7e5;
  auto hashmix = [&](uint32_t v) {
    v ^= hashConst;
    hashConst *= 0x931e8875;
    v *= hashConst;
    return v ^ (v >> 16);
  };
  auto mix = [](uint32_t x, uint32_t y) {
    uint32_t r = 0xca01f9dd * x - 0x4973f715 * y;
    return r ^ (r >> 16);
  };
  uint32_t pool[4];
  for (unsigned i = 0; i < 4; ++i)
    pool[i] = hashmix(i < words ? entropy[i] : 0);
  for (unsigned s = 0; s < 4; ++s)
    for (unsigned d = 0; d < 4; ++d)
      if (s != d)
        pool[d] = mix(pool[d], hashmix(pool[s]));
  uint32_t out[8];
  uint32_t h = 0x8b51f9dd;
  for (unsigned i = 0; i < 8; ++i) {
    uint32_t v = pool[i % 4];
    v ^= h;
    h *= 0x58f38ded;
    v *= h;
    out[i] = v ^ (v >> 16);
  }
  uint64_t u[4];
  for (unsigned i = 0; i < 4; ++i)
    u[i] = uint64_t(out[2 * i]) | (uint64_t(out[2 * i + 1]) << 32);
  // pcg64_set_seed: state and increment from (u0 high, u1 low) and
  // (u2 high, u3 low), pcg_setseq_128_srandom_r.
  u128 initState = (u128(u[0]) << 64) | u[1];
  u128 initSeq = (u128(u[2]) << 64) | u[3];
  state = 0;
  inc = (initSeq << 1) | 1;
  step();
  state += initState;
  step();
}

std::vector<int64_t> NumpyRng::permutation(int64_t n) {
  std::vector<int64_t> a(n);
  std::iota(a.begin(), a.end(), 0);
  for (int64_t i = n - 1; i >= 1; --i)
    std::swap(a[i], a[interval(uint64_t(i))]);
  return a;
}

json::Object NumpyRng::save() const {
  return json::Object{{"state", hex(state)},
                      {"inc", hex(inc)},
                      {"has_uint32", hasUint32 ? 1 : 0},
                      {"uinteger", int64_t(uinteger)}};
}

bool NumpyRng::restore(const json::Object &o) {
  auto st = o.getString("state"), in = o.getString("inc");
  auto has = o.getInteger("has_uint32"), ui = o.getInteger("uinteger");
  if (!st || !in || !has || !ui || !unhex(*st, state) || !unhex(*in, inc) ||
      *ui < 0 || *ui > 0xffffffffll)
    return false;
  hasUint32 = *has != 0;
  uinteger = uint32_t(*ui);
  return true;
}

void NumpyRng::step() { state = state * kMult + inc; }

uint64_t NumpyRng::next64() {
  step();
  uint64_t v = uint64_t(state >> 64) ^ uint64_t(state);
  unsigned rot = unsigned(state >> 122);
  return (v >> rot) | (v << ((64 - rot) & 63));
}

uint32_t NumpyRng::next32() {
  if (hasUint32) {
    hasUint32 = false;
    return uinteger;
  }
  uint64_t n = next64();
  hasUint32 = true;
  uinteger = uint32_t(n >> 32);
  return uint32_t(n);
}

uint64_t NumpyRng::interval(uint64_t max) {
  if (max == 0)
    return 0;
  uint64_t mask = max;
  for (unsigned s : {1, 2, 4, 8, 16, 32})
    mask |= mask >> s;
  uint64_t v;
  if (max <= 0xffffffffull) {
    while ((v = (next32() & mask)) > max) {
    }
  } else {
    while ((v = (next64() & mask)) > max) {
    }
  }
  return v;
}
