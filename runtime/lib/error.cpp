//===- error.cpp - Errors, names, dtypes and shapes -----------------------===//
//
// The thread-local error message, the name lookups of the C API, and the
// dtype, shape and memory helpers everything else uses.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <cstring>

using namespace dlc::rt;

namespace {

thread_local std::string ErrorMessage;
/// Set instead of ErrorMessage when storing the message itself failed.
thread_local const char *ErrorFallback = nullptr;

struct DTypeRow {
  dlc_dtype dtype;
  const char *name;
  const char *safetensorsName;
  size_t size;
};

constexpr DTypeRow DTypes[] = {
    {DLC_F32, "f32", "F32", 4},    {DLC_F16, "f16", "F16", 2},
    {DLC_BF16, "bf16", "BF16", 2}, {DLC_F64, "f64", "F64", 8},
    {DLC_I64, "i64", "I64", 8},    {DLC_I32, "i32", "I32", 4},
    {DLC_I8, "i8", "I8", 1},       {DLC_U8, "u8", "U8", 1},
};

const DTypeRow *findDType(int dtype) {
  for (const DTypeRow &row : DTypes)
    if (static_cast<int>(row.dtype) == dtype)
      return &row;
  return nullptr;
}

} // namespace

//===-- Errors -----------------------------------------------------------===//

dlc_status dlc::rt::fail(dlc_status status, std::string_view message) noexcept {
  try {
    ErrorMessage.assign(message.data(), message.size());
    ErrorFallback = nullptr;
  } catch (...) {
    ErrorFallback = "out of memory (while recording an error message)";
  }
  return status;
}

void dlc::rt::clearError() noexcept {
  ErrorMessage.clear();
  ErrorFallback = nullptr;
}

std::string dlc::rt::quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}

//===-- Dtypes and shapes ------------------------------------------------===//

bool dlc::rt::isValidDType(int dtype) { return findDType(dtype) != nullptr; }

const char *dlc::rt::dtypeName(dlc_dtype dtype) {
  const DTypeRow *row = findDType(enumBits(dtype));
  return row ? row->name : nullptr;
}

const char *dlc::rt::safetensorsDTypeName(dlc_dtype dtype) {
  const DTypeRow *row = findDType(enumBits(dtype));
  return row ? row->safetensorsName : nullptr;
}

bool dlc::rt::parseDTypeName(std::string_view name, dlc_dtype &dtype) {
  for (const DTypeRow &row : DTypes) {
    if (name == row.name) {
      dtype = row.dtype;
      return true;
    }
  }
  return false;
}

bool dlc::rt::parseSafetensorsDType(std::string_view name, dlc_dtype &dtype) {
  for (const DTypeRow &row : DTypes) {
    if (name == row.safetensorsName) {
      dtype = row.dtype;
      return true;
    }
  }
  return false;
}

size_t dlc::rt::dtypeSize(dlc_dtype dtype) {
  const DTypeRow *row = findDType(enumBits(dtype));
  return row ? row->size : 0;
}

bool dlc::rt::computeSize(const int64_t *shape, size_t rank, dlc_dtype dtype,
                          int64_t &numel, int64_t &nbytes, std::string &err) {
  const auto elemSize = static_cast<int64_t>(dtypeSize(dtype));
  if (elemSize == 0) {
    err = "invalid dtype";
    return false;
  }
  if (rank > DLC_MAX_RANK) {
    err = "rank " + std::to_string(rank) + " exceeds the maximum of " +
          std::to_string(DLC_MAX_RANK);
    return false;
  }
  int64_t n = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) {
      err = "negative dimension " + std::to_string(shape[i]);
      return false;
    }
    // n * shape[i] * elemSize must stay <= kMaxBytes.
    if (shape[i] != 0 && n > kMaxBytes / elemSize / shape[i]) {
      err = "shape " + shapeString(shape, rank) + " is too large";
      return false;
    }
    n *= shape[i];
  }
  numel = n;
  nbytes = n * elemSize;
  return true;
}

std::string dlc::rt::shapeString(const int64_t *shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

void dlc::rt::fillInfo(const TensorDecl &decl, void *data,
                       dlc_tensor_info &info) {
  std::memset(&info, 0, sizeof(info));
  info.name = decl.name.c_str();
  info.dtype = decl.dtype;
  info.rank = static_cast<int32_t>(decl.shape.size());
  for (size_t i = 0; i < decl.shape.size(); ++i)
    info.shape[i] = decl.shape[i];
  info.numel = decl.numel;
  info.nbytes = decl.nbytes;
  info.data = data;
}

//===-- Memory -----------------------------------------------------------===//

AlignedBuffer dlc::rt::allocateAligned(size_t bytes, size_t alignment) {
  if (bytes == 0)
    bytes = alignment;
  void *p = nullptr;
  if (posix_memalign(&p, alignment, bytes) != 0)
    return AlignedBuffer();
  return AlignedBuffer(p);
}

//===-- C API ------------------------------------------------------------===//

extern "C" {

const char *dlc_last_error(void) {
  return ErrorFallback ? ErrorFallback : ErrorMessage.c_str();
}

const char *dlc_status_name(dlc_status status) {
  switch (enumBits(status)) {
  case DLC_OK:
    return "DLC_OK";
  case DLC_ERR_INVALID_ARGUMENT:
    return "DLC_ERR_INVALID_ARGUMENT";
  case DLC_ERR_IO:
    return "DLC_ERR_IO";
  case DLC_ERR_FORMAT:
    return "DLC_ERR_FORMAT";
  case DLC_ERR_OUT_OF_MEMORY:
    return "DLC_ERR_OUT_OF_MEMORY";
  case DLC_ERR_DEVICE_UNAVAILABLE:
    return "DLC_ERR_DEVICE_UNAVAILABLE";
  case DLC_ERR_INTERNAL:
    return "DLC_ERR_INTERNAL";
  case DLC_ERR_COMMUNICATION:
    return "DLC_ERR_COMMUNICATION";
  }
  return "DLC_ERR_UNKNOWN";
}

const char *dlc_device_name(dlc_device_kind device) {
  switch (enumBits(device)) {
  case DLC_DEVICE_AUTO:
    return "auto";
  case DLC_DEVICE_CPU:
    return "cpu";
  case DLC_DEVICE_CUDA:
    return "cuda";
  }
  return "unknown";
}

// The enum is read as an integer before anything copies it: a copy of an
// out-of-range enum value is undefined behaviour in C++.
const char *dlc_dtype_name(dlc_dtype dtype) {
  const DTypeRow *row = findDType(enumBits(dtype));
  return row ? row->name : "unknown";
}

size_t dlc_dtype_size(dlc_dtype dtype) {
  const DTypeRow *row = findDType(enumBits(dtype));
  return row ? row->size : 0;
}

} // extern "C"
