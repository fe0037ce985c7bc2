//===- tensor_list.cpp - dlc_tensor_list and tensor files -----------------===//

#include "internal.h"

#include <climits>
#include <cstring>
#include <mutex>
#include <unordered_map>

using namespace dlc::rt;

struct dlc_tensor_list {
  struct Tensor {
    TensorDecl decl;
    AlignedBuffer data;
    /// A tensor read from a file is read from it when it is first used:
    /// `data` is null until then, and this is where its bytes are.
    uint64_t fileOffset = 0;
    bool inFile = false;
  };
  /// Boxed so that names and data stay put when the list grows.
  std::vector<std::unique_ptr<Tensor>> tensors;
  std::unordered_map<std::string, int32_t> index;
  /// The file that tensors still `inFile` are read from.
  std::unique_ptr<FileData> source;
  /// Loading a tensor is a read of the list to its callers, who may share
  /// it between threads for reading.
  std::mutex loading;
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

/// Appends a tensor whose bytes are at `offset` of the list's source file;
/// nothing is allocated or read until it is used (loadTensor).
dlc_status addFileTensor(dlc_tensor_list &list, TensorDecl decl,
                         uint64_t offset) {
  if (list.index.count(decl.name))
    return fail(DLC_ERR_FORMAT,
                "the file has two tensors called " + quote(decl.name));
  auto tensor = std::make_unique<dlc_tensor_list::Tensor>();
  tensor->decl = std::move(decl);
  tensor->fileOffset = offset;
  tensor->inFile = true;
  list.index.emplace(tensor->decl.name,
                     static_cast<int32_t>(list.tensors.size()));
  list.tensors.push_back(std::move(tensor));
  return DLC_OK;
}

/// Gives a tensor still in the file its own memory, read from the file.
dlc_status loadTensor(dlc_tensor_list &list, dlc_tensor_list::Tensor &tensor) {
  std::lock_guard<std::mutex> lock(list.loading);
  if (!tensor.inFile)
    return DLC_OK;
  const auto bytes = static_cast<size_t>(tensor.decl.nbytes);
  AlignedBuffer data = allocateAligned(bytes, kTensorAlignment);
  if (!data)
    return fail(DLC_ERR_OUT_OF_MEMORY,
                "cannot allocate " + std::to_string(bytes) +
                    " bytes for tensor " + quote(tensor.decl.name));
  if (dlc_status s = list.source->readAt(tensor.fileOffset, data.get(), bytes))
    return s;
  tensor.data = std::move(data);
  tensor.inFile = false;
  return DLC_OK;
}

dlc_status readNpyFile(const char *path, const FileData &file,
                       dlc_tensor_list &list) {
  TensorDecl decl;
  size_t dataStart = 0;
  if (dlc_status s = parseNpy(path, file.data(), file.size(), decl, dataStart))
    return s;
  decl.name = npyTensorName(path);
  return addFileTensor(list, std::move(decl), dataStart);
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
            addFileTensor(list, std::move(entry.decl), dataStart + entry.begin))
      return s;
  return DLC_OK;
}

/// Tensor `i` of the list, or an error for an index out of range.
dlc_status tensorAt(const dlc_tensor_list *list, int32_t i,
                    dlc_tensor_list::Tensor *&tensor) {
  if (dlc_status s = checkList(list))
    return s;
  if (i < 0 || static_cast<size_t>(i) >= list->tensors.size())
    return fail(DLC_ERR_INVALID_ARGUMENT,
                "tensor index " + std::to_string(i) +
                    " out of range (the list has " +
                    std::to_string(list->tensors.size()) + ")");
  tensor = list->tensors[static_cast<size_t>(i)].get();
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
    dlc_tensor_list::Tensor *tensor;
    if (dlc_status s = tensorAt(list, i, tensor))
      return s;
    if (!info)
      return fail(DLC_ERR_INVALID_ARGUMENT, "info is NULL");
    if (dlc_status s =
            loadTensor(const_cast<dlc_tensor_list &>(*list), *tensor))
      return s;
    fillInfo(tensor->decl, tensor->data.get(), *info);
    return DLC_OK;
  });
}

dlc_status dlc_tensor_list_describe(const dlc_tensor_list *list, int32_t i,
                                    dlc_tensor_info *info) {
  return guardStatus([&] {
    dlc_tensor_list::Tensor *tensor;
    if (dlc_status s = tensorAt(list, i, tensor))
      return s;
    if (!info)
      return fail(DLC_ERR_INVALID_ARGUMENT, "info is NULL");
    std::lock_guard<std::mutex> lock(
        const_cast<dlc_tensor_list *>(list)->loading);
    fillInfo(tensor->decl, tensor->data.get(), *info);
    return DLC_OK;
  });
}

dlc_status dlc_tensor_list_copy(const dlc_tensor_list *list, int32_t i,
                                void *dst, size_t nbytes) {
  return guardStatus([&] {
    dlc_tensor_list::Tensor *tensor;
    if (dlc_status s = tensorAt(list, i, tensor))
      return s;
    if (!dst && nbytes)
      return fail(DLC_ERR_INVALID_ARGUMENT, "dst is NULL");
    if (static_cast<int64_t>(nbytes) != tensor->decl.nbytes)
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "tensor " + quote(tensor->decl.name) + " has " +
                      std::to_string(tensor->decl.nbytes) + " bytes, not " +
                      std::to_string(nbytes));
    std::lock_guard<std::mutex> lock(
        const_cast<dlc_tensor_list *>(list)->loading);
    if (tensor->inFile)
      return list->source->readAt(tensor->fileOffset, dst, nbytes);
    if (nbytes)
      std::memcpy(dst, tensor->data.get(), nbytes);
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
    auto file = std::make_unique<FileData>();
    if (dlc_status s = file->open(path, "tensor file"))
      return s;
    if (format == DLC_FILE_AUTO)
      format =
          file->size() >= 6 && std::memcmp(file->data(), "\x93NUMPY", 6) == 0
              ? DLC_FILE_NPY
              : DLC_FILE_SAFETENSORS;
    auto list = std::make_unique<dlc_tensor_list>();
    dlc_status s = format == DLC_FILE_NPY
                       ? readNpyFile(path, *file, *list)
                       : readSafetensorsFile(path, *file, *list);
    if (s != DLC_OK)
      return s;
    // The headers are parsed: the tensors are read when they are used.
    file->release();
    list->source = std::move(file);
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
      auto &tensor = *list->tensors[0];
      if (dlc_status s =
              loadTensor(const_cast<dlc_tensor_list &>(*list), tensor))
        return s;
      return writeNpy(path, {&tensor.decl, tensor.data.get()});
    }
    std::vector<TensorRef> refs;
    refs.reserve(list->tensors.size());
    for (const auto &tensor : list->tensors) {
      if (dlc_status s =
              loadTensor(const_cast<dlc_tensor_list &>(*list), *tensor))
        return s;
      refs.push_back({&tensor->decl, tensor->data.get()});
    }
    return writeSafetensors(path, std::move(refs));
  });
}

} // extern "C"
