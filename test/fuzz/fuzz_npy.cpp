//===- fuzz_npy.cpp - libFuzzer target: the .npy readers ------------------===//
//
// Each input is a .npy file, given to both of dlc's .npy readers:
//  * the runtime's: parseNpy from memory, whose result is checked against
//    the input (the data, exactly the size of the dtype and shape, ends the
//    file), then dlc_tensor_file_read from a file as `dlc run --input`
//    reads it: the same verdict, and the array read through
//    dlc_tensor_list_get is the file's;
//  * dlc train's parseNpy (tools/dlc/Npz.cpp, the members of a .npz), which
//    appends the array to a list itself.
// A refusal must come with a message. A finding is a crash, a sanitizer
// report, a hang, a leak, or a broken promise (an abort with the reason on
// stderr).
//
//===----------------------------------------------------------------------===//

#include "Npz.h"
#include "Scratch.h"
#include "internal.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace dlc::rt;

namespace {
[[noreturn]] void broken(const char *what) {
  std::fprintf(stderr, "fuzz_npy: %s\n", what);
  std::abort();
}

void runtimeReader(const uint8_t *data, size_t size) {
  TensorDecl decl;
  size_t dataStart = 0;
  bool accepted = parseNpy("fuzz.npy", data, size, decl, dataStart) == DLC_OK;
  if (!accepted && !*dlc_last_error())
    broken("the runtime's reader refuses without a message");
  if (accepted && (dataStart > size || decl.nbytes < 0 ||
                   size - dataStart != static_cast<uint64_t>(decl.nbytes)))
    broken("the data is not the size of the dtype and shape");

  static const std::string path = dlc::fuzz::Scratch::path("x.npy");
  dlc::fuzz::Scratch::write(path, data, size);
  dlc_tensor_list *list = nullptr;
  dlc_status s = dlc_tensor_file_read(path.c_str(), DLC_FILE_NPY, &list);
  if ((s == DLC_OK) != accepted)
    broken("dlc_tensor_file_read and parseNpy disagree");
  if (s != DLC_OK) {
    if (list || !*dlc_last_error())
      broken("dlc_tensor_file_read refuses without a message or leaves a "
             "list");
    return;
  }
  dlc_tensor_info info;
  if (dlc_tensor_list_size(list) != 1 ||
      dlc_tensor_list_get(list, 0, &info) != DLC_OK)
    broken("the list does not hold the array");
  if (std::string(info.name) != "x" || info.dtype != decl.dtype ||
      info.rank != static_cast<int32_t>(decl.shape.size()) ||
      info.nbytes != decl.nbytes ||
      (info.nbytes && std::memcmp(info.data, data + dataStart,
                                  static_cast<size_t>(info.nbytes)) != 0))
    broken("the list's array is not the file's");
  dlc_tensor_list_free(list);
}

void trainReader(const uint8_t *data, size_t size) {
  dlc_tensor_list *list = nullptr;
  if (dlc_tensor_list_create(&list) != DLC_OK)
    broken("cannot create a tensor list");
  std::string why;
  bool ok =
      dlc::parseNpy(llvm::StringRef(reinterpret_cast<const char *>(data), size),
                    "x", list, why);
  if (!ok && why.empty())
    broken("dlc train's reader refuses without a message");
  if (ok != (dlc_tensor_list_size(list) == 1))
    broken("dlc train's reader's answer and its list disagree");
  dlc_tensor_list_free(list);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  runtimeReader(data, size);
  trainReader(data, size);
  return 0;
}
