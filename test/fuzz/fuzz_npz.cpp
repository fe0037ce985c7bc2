//===- fuzz_npz.cpp - libFuzzer target: dlc train's .npz reader -----------===//
//
// Each input is a .npz archive (a zip of .npy members, stored or deflated,
// zip64 included), read by readNpzBytes, the reader behind `dlc train
// --data` (tools/dlc/Npz.cpp). The members' .npy parser is fuzzed on its own
// by fuzz_npy: a mutated member here mostly stops at its CRC-32. A refusal
// must come with a message, an accepted archive gives a list. A finding is a
// crash, a sanitizer report, a hang, a leak, or a broken promise (an abort
// with the reason on stderr).
//
//===----------------------------------------------------------------------===//

#include "Npz.h"

#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlc_tensor_list *list = nullptr;
  std::string why;
  bool ok = dlc::readNpzBytes(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), &list, why);
  if (ok != (list != nullptr) || (!ok && why.empty())) {
    std::fprintf(stderr, "fuzz_npz: an answer without a list or a reason\n");
    std::abort();
  }
  dlc_tensor_list_free(list);
  return 0;
}
