//===- fuzz_safetensors.cpp - libFuzzer target: the .safetensors reader ---===//
//
// Each input is a .safetensors file, read twice:
//  * from memory by parseSafetensors, the reader behind dlc_model_load and
//    dlc_tensor_file_read (runtime/lib/internal.h). What it accepts must be
//    what its callers rely on: every tensor's range inside the data section,
//    its size that of its dtype and shape, the ranges in order without
//    overlap or gap, names unique;
//  * from a file by dlc_tensor_file_read, as `dlc run --weights/--input`
//    reads it: the same verdict, and every tensor's bytes, read through
//    dlc_tensor_list_get, those of its range.
// A refusal must come with a message. A finding is a crash, a sanitizer
// report, a hang, a leak, or a broken promise (an abort with the reason on
// stderr).
//
//===----------------------------------------------------------------------===//

#include "Scratch.h"
#include "internal.h"

#include "dlc/dlc_io.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

using namespace dlc::rt;

namespace {
[[noreturn]] void broken(const char *what) {
  std::fprintf(stderr, "fuzz_safetensors: %s\n", what);
  std::abort();
}

/// parseSafetensors and the promises of what it accepts; false (with a
/// message) when it refuses.
bool fromMemory(const uint8_t *data, size_t size,
                std::vector<SafetensorsEntry> &entries, size_t &dataStart) {
  if (parseSafetensors("fuzz.safetensors", data, size, entries, dataStart) !=
      DLC_OK) {
    if (!*dlc_last_error())
      broken("a refusal without a message");
    return false;
  }
  if (dataStart > size)
    broken("the data section starts past the end");
  std::set<std::string> names;
  uint64_t previousEnd = 0;
  for (const SafetensorsEntry &e : entries) {
    const TensorDecl &d = e.decl;
    if (e.begin > e.end || e.end > size - dataStart)
      broken("a tensor's range leaves the data section");
    if (e.begin != previousEnd)
      broken("tensors overlap, leave a gap or are not sorted by offset");
    previousEnd = e.end;
    if (d.nbytes < 0 || e.end - e.begin != static_cast<uint64_t>(d.nbytes))
      broken("a tensor's range is not the size of its dtype and shape");
    if (!names.insert(d.name).second)
      broken("two tensors have the same name");
  }
  if (previousEnd != size - dataStart)
    broken("data bytes that belong to no tensor");
  return true;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<SafetensorsEntry> entries;
  size_t dataStart = 0;
  bool accepted = fromMemory(data, size, entries, dataStart);

  static const std::string path = dlc::fuzz::Scratch::path("fuzz.safetensors");
  dlc::fuzz::Scratch::write(path, data, size);
  dlc_tensor_list *list = nullptr;
  dlc_status s =
      dlc_tensor_file_read(path.c_str(), DLC_FILE_SAFETENSORS, &list);
  if ((s == DLC_OK) != accepted)
    broken("dlc_tensor_file_read and parseSafetensors disagree");
  if (s != DLC_OK) {
    if (list || !*dlc_last_error())
      broken("dlc_tensor_file_read refuses without a message or leaves a "
             "list");
    return 0;
  }
  if (dlc_tensor_list_size(list) != static_cast<int32_t>(entries.size()))
    broken("the list does not hold every tensor");
  for (int32_t i = 0; i < dlc_tensor_list_size(list); ++i) {
    const SafetensorsEntry &e = entries[static_cast<size_t>(i)];
    dlc_tensor_info info;
    if (dlc_tensor_list_get(list, i, &info) != DLC_OK)
      broken("a tensor of the list cannot be read");
    if (e.decl.name != info.name || info.nbytes != e.decl.nbytes ||
        (info.nbytes && std::memcmp(info.data, data + dataStart + e.begin,
                                    static_cast<size_t>(info.nbytes)) != 0))
      broken("a tensor of the list is not the tensor of the file");
  }
  dlc_tensor_list_free(list);
  return 0;
}
