//===- tensor_list.cpp - dlc_tensor_list and tensor files -----------------===//

#include "internal.h"

#include <climits>
#include <cstring>
#include <unordered_map>

using namespace dlc::rt;

struct dlc_tensor_list {
  struct Tensor {
    TensorDecl decl;
    AlignedBuffer data;
  };
  /// Boxed so that names and data stay put when the list grows.
  std::vector<std::unique_ptr<Tensor>> tensors;
  std::unordered_map<std::string, int32_t> index;
};

namespace {

constexpr size_t kTensorAlignment = 64;

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

/// "x" for "data/x.npy"; the base name when it has no ".npy" to strip.
std::string npyTensorName(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view base =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (endsWith(base, ".npy") && base.size() > 4)
    base.remove_suffix(4);
  return std::string(base);
}

dlc_status checkList(const dlc_tensor_list *list) {
  if (!list)
    return fail(DLC_ERR_INVALID_ARGUMENT, "tensor list is NULL");
  return DLC_OK;
}

/// Appends a tensor whose declaration is already validated; copies `data`
/// (nbytes of it) or zero-fills.
dlc_status addTensor(dlc_tensor_list &list, TensorDecl decl, const void *data,
                     int32_t *index) {
  if (list.tensors.size() >= static_cast<size_t>(INT32_MAX))
    return fail(DLC_ERR_INVALID_ARGUMENT, "the tensor list is full");
  if (list.index.count(decl.name))
    return fail(DLC_ERR_INVALID_ARGUMENT,
                "the tensor list already has a tensor called " +
                    quote(decl.name));
  auto tensor = std::make_unique<dlc_tensor_list::Tensor>();
  const auto bytes = static_cast<size_t>(decl.nbytes);
  tensor->data = allocateAligned(bytes, kTensorAlignment);
  if (!tensor->data)
    return fail(DLC_ERR_OUT_OF_MEMORY,
                "cannot allocate " + std::to_string(bytes) +
                    " bytes for tensor " + quote(decl.name));
  if (data)
    std::memcpy(tensor->data.get(), data, bytes);
  else
    std::memset(tensor->data.get(), 0, bytes);
  tensor->decl = std::move(decl);

  auto i = static_cast<int32_t>(list.tensors.size());
  list.index.emplace(tensor->decl.name, i);
  list.tensors.push_back(std::move(tensor));
  if (index)
    *index = i;
  return DLC_OK;
}

dlc_status readNpyFile(const char *path, const FileData &file,
                       dlc_tensor_list &list) {
  TensorDecl decl;
  size_t dataStart = 0;
  if (dlc_status s = parseNpy(path, file.data(), file.size(), decl, dataStart))
    return s;
  decl.name = npyTensorName(path);
  return addTensor(list, std::move(decl), file.data() + dataStart, nullptr);
}

dlc_status readSafetensorsFile(const char *path, const FileData &file,
                               dlc_tensor_list &list) {
  std::vector<SafetensorsEntry> entries;
  size_t dataStart = 0;
  if (dlc_status s =
          parseSafetensors(path, file.data(), file.size(), entries, dataStart))
    return s;
  for (SafetensorsEntry &entry : entries)
    if (dlc_status s =
            addTensor(list, std::move(entry.decl),
                      file.data() + dataStart + entry.begin, nullptr))
      return s;
  return DLC_OK;
}

dlc_status checkFormat(const dlc_file_format &format) {
  int bits = enumBits(format);
  if (bits != DLC_FILE_AUTO && bits != DLC_FILE_NPY &&
      bits != DLC_FILE_SAFETENSORS)
    return fail(DLC_ERR_INVALID_ARGUMENT,
                "invalid file format " + std::to_string(bits));
  return DLC_OK;
}

} // namespace

extern "C" {

dlc_status dlc_tensor_list_create(dlc_tensor_list **out) {
  return guardStatus([&] {
    if (!out)
      return fail(DLC_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = new dlc_tensor_list();
    return DLC_OK;
  });
}

void dlc_tensor_list_free(dlc_tensor_list *list) { delete list; }

int32_t dlc_tensor_list_size(const dlc_tensor_list *list) {
  return guardValue<int32_t>(-1, [&] {
    return checkList(list) ? -1 : static_cast<int32_t>(list->tensors.size());
  });
}

dlc_status dlc_tensor_list_get(const dlc_tensor_list *list, int32_t i,
                               dlc_tensor_info *info) {
  return guardStatus([&] {
    if (dlc_status s = checkList(list))
      return s;
    if (!info)
      return fail(DLC_ERR_INVALID_ARGUMENT, "info is NULL");
    if (i < 0 || static_cast<size_t>(i) >= list->tensors.size())
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "tensor index " + std::to_string(i) +
                      " out of range (the list has " +
                      std::to_string(list->tensors.size()) + ")");
    const auto &tensor = *list->tensors[static_cast<size_t>(i)];
    fillInfo(tensor.decl, tensor.data.get(), *info);
    return DLC_OK;
  });
}

int32_t dlc_tensor_list_find(const dlc_tensor_list *list, const char *name) {
  return guardValue<int32_t>(-1, [&]() -> int32_t {
    if (checkList(list))
      return -1;
    if (!name) {
      fail(DLC_ERR_INVALID_ARGUMENT, "name is NULL");
      return -1;
    }
    auto it = list->index.find(name);
    if (it == list->index.end()) {
      fail(DLC_ERR_INVALID_ARGUMENT,
           "the tensor list has no tensor called " + quote(name));
      return -1;
    }
    return it->second;
  });
}

dlc_status dlc_tensor_list_add(dlc_tensor_list *list, const char *name,
                               dlc_dtype dtype, int32_t rank,
                               const int64_t *shape, const void *data,
                               int32_t *index) {
  return guardStatus([&] {
    if (dlc_status s = checkList(list))
      return s;
    if (!name || !*name)
      return fail(DLC_ERR_INVALID_ARGUMENT, "tensor name is NULL or empty");
    if (!isValidDType(enumBits(dtype)))
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "invalid dtype " + std::to_string(enumBits(dtype)));
    if (rank < 0 || rank > DLC_MAX_RANK)
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "rank " + std::to_string(rank) + " is not in [0, " +
                      std::to_string(DLC_MAX_RANK) + "]");
    if (rank > 0 && !shape)
      return fail(DLC_ERR_INVALID_ARGUMENT, "shape is NULL");
    TensorDecl decl;
    decl.name = name;
    decl.dtype = dtype;
    decl.shape.assign(shape, shape + rank);
    std::string err;
    if (!computeSize(decl.shape.data(), decl.shape.size(), dtype, decl.numel,
                     decl.nbytes, err))
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "tensor " + quote(name) + ": " + err);
    return addTensor(*list, std::move(decl), data, index);
  });
}

dlc_status dlc_tensor_file_read(const char *path, dlc_file_format format,
                                dlc_tensor_list **out) {
  return guardStatus([&] {
    if (!out)
      return fail(DLC_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = nullptr;
    if (!path)
      return fail(DLC_ERR_INVALID_ARGUMENT, "path is NULL");
    if (dlc_status s = checkFormat(format))
      return s;
    FileData file;
    if (dlc_status s = file.open(path, "tensor file"))
      return s;
    if (format == DLC_FILE_AUTO)
      format = file.size() >= 6 && std::memcmp(file.data(), "\x93NUMPY", 6) == 0
                   ? DLC_FILE_NPY
                   : DLC_FILE_SAFETENSORS;
    auto list = std::make_unique<dlc_tensor_list>();
    dlc_status s = format == DLC_FILE_NPY
                       ? readNpyFile(path, file, *list)
                       : readSafetensorsFile(path, file, *list);
    if (s != DLC_OK)
      return s;
    *out = list.release();
    return DLC_OK;
  });
}

dlc_status dlc_tensor_file_write(const char *path, dlc_file_format format,
                                 const dlc_tensor_list *list) {
  return guardStatus([&] {
    if (!path)
      return fail(DLC_ERR_INVALID_ARGUMENT, "path is NULL");
    if (dlc_status s = checkList(list))
      return s;
    if (dlc_status s = checkFormat(format))
      return s;
    if (format == DLC_FILE_AUTO) {
      if (endsWith(path, ".npy"))
        format = DLC_FILE_NPY;
      else if (endsWith(path, ".safetensors"))
        format = DLC_FILE_SAFETENSORS;
      else
        return fail(DLC_ERR_INVALID_ARGUMENT,
                    "cannot tell the format of " + quote(path) +
                        " (expected a .npy or .safetensors extension)");
    }
    if (format == DLC_FILE_NPY) {
      if (list->tensors.size() != 1)
        return fail(DLC_ERR_INVALID_ARGUMENT,
                    "a .npy file holds one tensor, the list has " +
                        std::to_string(list->tensors.size()));
      const auto &tensor = *list->tensors[0];
      return writeNpy(path, {&tensor.decl, tensor.data.get()});
    }
    std::vector<TensorRef> refs;
    refs.reserve(list->tensors.size());
    for (const auto &tensor : list->tensors)
      refs.push_back({&tensor->decl, tensor->data.get()});
    return writeSafetensors(path, std::move(refs));
  });
}

} // extern "C"
