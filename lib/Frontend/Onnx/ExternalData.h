//===- ExternalData.h - ONNX tensors stored outside the model -*- C++ -*-===//
//
// ONNX keeps large tensors in files next to the model: a TensorProto with
// data_location = EXTERNAL names a `location` (relative to the model's
// directory), an `offset` and a `length`. This reader maps each file once,
// checks every reference against the file and the other references, and
// hands out views of the mapped bytes, which the importer turns into
// parameters without copying them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_FRONTEND_ONNX_EXTERNALDATA_H
#define DLC_LIB_FRONTEND_ONNX_EXTERNALDATA_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace dlc::onnx_import {

/// A checked view of one tensor's bytes in a mapped external file. `owner`
/// keeps the mapping alive as long as the view is used.
struct ExternalBytes {
  llvm::StringRef bytes;
  std::shared_ptr<llvm::MemoryBuffer> owner;
};

class ExternalDataReader {
public:
  /// `modelPath` is the model file's path; locations are relative to its
  /// directory.
  explicit ExternalDataReader(llvm::StringRef modelPath);

  /// The `expectedBytes` bytes of tensor `t` (which has data_location =
  /// EXTERNAL), or an error message (with a hint after "\nhint: ") when the
  /// reference is malformed: no or an absolute location, one that leaves
  /// the model's directory, a missing file, a range past the file's end,
  /// a length other than the tensor's size, or a range that overlaps
  /// another tensor's.
  llvm::Expected<ExternalBytes> read(const onnx::TensorProto &t,
                                     uint64_t expectedBytes);

private:
  llvm::Expected<std::shared_ptr<llvm::MemoryBuffer>>
  open(llvm::StringRef location);

  std::string directory;
  llvm::StringMap<std::shared_ptr<llvm::MemoryBuffer>> files;
  /// Per file, the ranges handed out so far: offset -> (end, tensor name).
  llvm::StringMap<std::map<uint64_t, std::pair<uint64_t, std::string>>> ranges;
};

} // namespace dlc::onnx_import

#endif // DLC_LIB_FRONTEND_ONNX_EXTERNALDATA_H
