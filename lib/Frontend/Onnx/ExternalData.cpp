//===- ExternalData.cpp - ONNX tensors stored outside the model ----------===//

#include "ExternalData.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

using namespace llvm;
using namespace dlc::onnx_import;

namespace {

Error refError(const Twine &msg, const Twine &hint) {
  return createStringError(inconvertibleErrorCode(),
                           (msg + "\nhint: " + hint).str());
}

/// A non-negative decimal integer that fits in int64, or nothing.
std::optional<uint64_t> parseSize(StringRef s) {
  uint64_t v;
  if (s.empty() || s.getAsInteger(10, v) || v > uint64_t(INT64_MAX))
    return std::nullopt;
  return v;
}

} // namespace

ExternalDataReader::ExternalDataReader(StringRef modelPath) {
  directory = sys::path::parent_path(modelPath).str();
  if (directory.empty())
    directory = ".";
}

Expected<std::shared_ptr<MemoryBuffer>>
ExternalDataReader::open(StringRef location) {
  auto it = files.find(location);
  if (it != files.end())
    return it->second;
  // Relative, without "..": the data stays inside the model's directory
  // (symbolic links are followed and checked too).
  if (location.empty() || sys::path::is_absolute(location) ||
      location.starts_with("~") ||
      llvm::any_of(
          make_range(sys::path::begin(location), sys::path::end(location)),
          [](StringRef c) { return c == ".."; }))
    return refError("the external data location '" + location +
                        "' is not a relative path inside the model's "
                        "directory",
                    "ONNX external data lives next to the model; save it "
                    "with onnx.save_model(..., save_as_external_data=True, "
                    "location=\"model.onnx.data\")");
  SmallString<256> path(directory);
  sys::path::append(path, location);
  SmallString<256> realDir, realFile;
  if (std::error_code ec = sys::fs::real_path(path, realFile))
    return refError("cannot open the external data file '" + path +
                        "': " + ec.message(),
                    "copy the data file (" + location +
                        ") next to the model, under that name");
  if (!sys::fs::real_path(directory, realDir) &&
      !StringRef(realFile).starts_with((realDir + "/").str()))
    return refError("the external data file '" + path + "' resolves to '" +
                        realFile + "', outside the model's directory",
                    "replace the symbolic link by the data file");
  if (sys::fs::is_directory(realFile))
    return refError("the external data location '" + path + "' is a directory",
                    "point the location at the data file");
  auto buffer = MemoryBuffer::getFile(realFile, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  if (!buffer)
    return refError("cannot read the external data file '" + path +
                        "': " + buffer.getError().message(),
                    "check that the file exists and is readable");
  std::shared_ptr<MemoryBuffer> shared = std::move(*buffer);
  files[location] = shared;
  return shared;
}

Expected<ExternalBytes> ExternalDataReader::read(const onnx::TensorProto &t,
                                                 uint64_t expectedBytes) {
  std::string location;
  std::optional<uint64_t> offset = 0, length;
  bool hasLength = false;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      offset = parseSize(kv.value());
      if (!offset)
        return refError("the external data offset '" + kv.value() +
                            "' is not a non-negative integer",
                        "export the model again");
    } else if (kv.key() == "length") {
      hasLength = true;
      length = parseSize(kv.value());
      if (!length)
        return refError("the external data length '" + kv.value() +
                            "' is not a non-negative integer",
                        "export the model again");
    }
  }
  if (location.empty())
    return refError("the tensor keeps its data in an external file but "
                    "names no location",
                    "export the model again");
  auto file = open(location);
  if (!file)
    return file.takeError();
  uint64_t size = (*file)->getBufferSize();
  if (!hasLength)
    length = expectedBytes;
  if (*length != expectedBytes)
    return refError("the external data length " + Twine(*length) +
                        " does not match the tensor's " + Twine(expectedBytes) +
                        " bytes",
                    "the data file does not belong to this model; export "
                    "the model again");
  if (*offset > size || *length > size - *offset)
    return refError("the external data range at offset " + Twine(*offset) +
                        ", " + Twine(*length) + " bytes, is past the end of '" +
                        location + "' (" + Twine(size) + " bytes)",
                    "the data file is truncated or belongs to another "
                    "export; copy it again");
  // Overlaps: the neighbours of the new range among those handed out.
  uint64_t begin = *offset, end = *offset + *length;
  if (begin != end) {
    auto &seen = ranges[location];
    auto next = seen.lower_bound(begin);
    auto check = [&](auto it) -> Error {
      if (it == seen.end() || it->first == it->second.first)
        return Error::success();
      if (it->first < end && begin < it->second.first)
        return refError("the external data range [" + Twine(begin) + ", " +
                            Twine(end) + ") of '" + location +
                            "' overlaps tensor '" + it->second.second +
                            "' at [" + Twine(it->first) + ", " +
                            Twine(it->second.first) + ")",
                        "the external data references are corrupt; export "
                        "the model again");
      return Error::success();
    };
    if (Error e = check(next))
      return std::move(e);
    if (next != seen.begin())
      if (Error e = check(std::prev(next)))
        return std::move(e);
    seen[begin] = {end, t.name()};
  }
  return ExternalBytes{(*file)->getBuffer().substr(begin, *length), *file};
}
