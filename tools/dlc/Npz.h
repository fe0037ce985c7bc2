//===- Npz.h - NumPy .npz archives for dlc train ----------------*- C++ -*-===//
//
// A .npz is a zip archive of .npy files, one per array (np.savez stores
// them, np.savez_compressed deflates them). This reader takes the zip's
// central directory (zip64 included), checks every offset and size against
// the file, and parses each .npy from memory into a dlc_tensor_list; it
// needs no library beyond zlib, and zlib only for compressed archives.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TOOLS_DLC_NPZ_H
#define DLC_TOOLS_DLC_NPZ_H

#include "dlc/dlc_io.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace dlc {

/// Reads the .npz archive at `path` into a new list `*out`: one tensor per
/// member "NAME.npy", named NAME, in the archive's order. On failure returns
/// false with `*out` null and the reason in `error` (no path in it).
bool readNpz(llvm::StringRef path, dlc_tensor_list **out, std::string &error);

/// readNpz of an archive held in memory (the fuzz target's entry point,
/// test/fuzz/fuzz_npz.cpp); the list holds copies of the arrays.
bool readNpzBytes(llvm::StringRef bytes, dlc_tensor_list **out,
                  std::string &error);

/// Parses the .npy file `bytes` (format 1.0, 2.0 or 3.0; the dtypes of
/// dlc_io.h, little-endian, C order) and appends it to `list` as `name`.
bool parseNpy(llvm::StringRef bytes, llvm::StringRef name,
              dlc_tensor_list *list, std::string &error);

} // namespace dlc

#endif // DLC_TOOLS_DLC_NPZ_H
