//===- NumpyRng.h - NumPy's default_rng(seed).permutation -------*- C++ -*-===//
//
// `dlc train --shuffle` visits the rows of epoch k in the order of the k-th
// permutation(n) of NumPy's np.random.default_rng(seed), so that it takes
// the same steps as the Python package's Model.fit bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TOOLS_DLC_NUMPYRNG_H
#define DLC_TOOLS_DLC_NUMPYRNG_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <vector>

namespace dlc::driver {

/// numpy.random.PCG64 (the 128-bit LCG with the XSL-RR output) seeded as
/// default_rng(seed) seeds it, and Generator.permutation on top of it.
class NumpyRng {
public:
  /// SeedSequence(seed), then PCG64's seeding from its state.
  explicit NumpyRng(uint64_t seed);

  /// Generator.permutation(n): Fisher-Yates from the end, j drawn by
  /// random_interval(i).
  std::vector<int64_t> permutation(int64_t n);

  /// The generator's whole state, for a checkpoint's sidecar.
  llvm::json::Object save() const;
  /// Takes the state of save(); false when `o` is not one.
  bool restore(const llvm::json::Object &o);

private:
  using u128 = unsigned __int128;

  void step();
  uint64_t next64();
  /// next_uint32: the low half of a 64-bit draw, then its high half.
  uint32_t next32();
  /// random_interval: a value in [0, max] by masked rejection.
  uint64_t interval(uint64_t max);

  u128 state = 0, inc = 0;
  bool hasUint32 = false;
  uint32_t uinteger = 0;
};

} // namespace dlc::driver

#endif // DLC_TOOLS_DLC_NUMPYRNG_H
