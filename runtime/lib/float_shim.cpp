//===- float_shim.cpp - the float conversion generated code may call ------===//
//
// dlc writes bf16 conversions as integer code, but on an x86 CPU without
// AVX512_BF16 LLVM legalizes some bf16 operations (a select of two bf16
// vectors, which its instruction combiner forms from the integer code) by
// widening to f32 and rounding back with a call to compiler-rt's
// `__truncsfbf2`. libdlcrt provides that function, so that a model object
// still links with `-ldlcrt` alone and runs on every x86-64 CPU.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <cstdint>
#include <cstring>

/// f32 to bf16, rounded to nearest even, NaNs quieted (compiler-rt's
/// semantics). The psABI passes a bf16 in the low 16 bits of an SSE
/// register, like a _Float16, which GCC 12 spells and bf16 it does not.
extern "C" DLC_API _Float16 __truncsfbf2(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  uint16_t bits;
  if ((u & 0x7fffffffu) > 0x7f800000u)
    bits = uint16_t((u >> 16) | 0x40u);
  else
    bits = uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  _Float16 r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}
