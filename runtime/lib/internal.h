//===- internal.h - Shared internals of libdlcrt ----------------*- C++ -*-===//
//
// Declarations shared by the runtime's sources: error reporting, dtypes and
// shapes, aligned buffers, files, and the parsers and writers of the model
// description, .safetensors and .npy. Nothing here is exported from the
// shared library; the unit tests link the same objects statically.
//
//===----------------------------------------------------------------------===//

#ifndef DLCRT_INTERNAL_H
#define DLCRT_INTERNAL_H

#include "dlc/dlc_io.h"
#include "dlc/dlc_runtime.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace dlc::rt {

//===-- Errors -----------------------------------------------------------===//

/// Sets the thread-local error message and returns `status`.
dlc_status fail(dlc_status status, std::string_view message) noexcept;

/// Clears the thread-local error message.
void clearError() noexcept;

/// Runs `body` (returning dlc_status) behind the C API boundary: clears the
/// error first, and turns any exception into a status and message.
template <typename Body> dlc_status guardStatus(Body &&body) noexcept {
  clearError();
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(DLC_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return fail(DLC_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(DLC_ERR_INTERNAL, "internal error: unknown exception");
  }
}

/// Like guardStatus for functions returning a value: `body` returns it, and
/// `onError` is returned when it throws.
template <typename T, typename Body>
T guardValue(T onError, Body &&body) noexcept {
  clearError();
  try {
    return body();
  } catch (const std::bad_alloc &) {
    fail(DLC_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    fail(DLC_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    fail(DLC_ERR_INTERNAL, "internal error: unknown exception");
  }
  return onError;
}

/// Quotes a string for messages: 'abc'.
std::string quote(std::string_view s);

//===-- Dtypes and shapes ------------------------------------------------===//

/// The integer a C caller passed for an enum parameter, read as bytes: in
/// C++, loading an enum object that holds a value outside the enum's range
/// is undefined, so every API entry validates this integer first.
template <typename E> int enumBits(const E &e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

/// The largest tensor or file size the runtime accepts (2^62 bytes), which
/// keeps every size computation clear of int64 overflow.
constexpr int64_t kMaxBytes = int64_t(1) << 62;

bool isValidDType(int dtype);
/// The model-description spelling ("f32"), or nullptr for an invalid dtype.
const char *dtypeName(dlc_dtype dtype);
/// The safetensors spelling ("F32").
const char *safetensorsDTypeName(dlc_dtype dtype);
bool parseDTypeName(std::string_view name, dlc_dtype &dtype);
bool parseSafetensorsDType(std::string_view name, dlc_dtype &dtype);
size_t dtypeSize(dlc_dtype dtype);

/// Computes numel and nbytes of a shape; false (with a message in `err`)
/// when a dimension is negative or the size exceeds kMaxBytes.
bool computeSize(const int64_t *shape, size_t rank, dlc_dtype dtype,
                 int64_t &numel, int64_t &nbytes, std::string &err);

/// "[64, 784]", "[]" for a scalar.
std::string shapeString(const int64_t *shape, size_t rank);

/// A tensor's name, dtype and shape.
struct TensorDecl {
  std::string name;
  dlc_dtype dtype = DLC_F32;
  std::vector<int64_t> shape;
  int64_t numel = 1;
  int64_t nbytes = 0;
};

/// Fills a dlc_tensor_info from a declaration and a data pointer.
void fillInfo(const TensorDecl &decl, void *data, dlc_tensor_info &info);

//===-- Memory -----------------------------------------------------------===//

struct FreeDeleter {
  void operator()(void *p) const noexcept { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<void, FreeDeleter>;

/// posix_memalign; nullptr on failure. A zero size allocates one alignment
/// unit so that the result is never null on success.
AlignedBuffer allocateAligned(size_t bytes, size_t alignment);

//===-- Files ------------------------------------------------------------===//

/// A whole file, read-only: memory-mapped, or read into memory when mapping
/// fails. The file stays open, so that parts of it can be read again after
/// the mapping is released (readAt): a reader parses the headers from the
/// mapping and reads the data it needs when it needs it.
class FileData {
public:
  FileData() = default;
  FileData(const FileData &) = delete;
  FileData &operator=(const FileData &) = delete;
  ~FileData();

  /// Opens `path`; DLC_ERR_IO with a message naming `what` and the path.
  dlc_status open(const char *path, const char *what);
  const uint8_t *data() const { return Data; }
  size_t size() const { return Size; }

  /// Drops the mapping (or the copy read into memory); data() is null
  /// afterwards, readAt still works.
  void release();
  /// Copies [src, src + n) of data() to `dst` in chunks, handing each
  /// chunk's whole pages of a mapped file back to the kernel once copied
  /// (they stay in the page cache): a model's weights are then resident
  /// once, in its arena, not twice.
  void copyOut(void *dst, const uint8_t *src, size_t n) const;
  /// Reads `n` bytes at `offset` of the file as it is now (not through the
  /// mapping: a file truncated since it was opened is DLC_ERR_IO, never a
  /// SIGBUS).
  dlc_status readAt(uint64_t offset, void *dst, size_t n) const;

private:
  const uint8_t *Data = nullptr;
  size_t Size = 0;
  void *Mapping = nullptr;
  std::vector<uint8_t> Buffer;
  int Fd = -1;
  std::string Name;
};

/// A piece of a file to write.
struct Chunk {
  const void *data;
  size_t size;
};

/// Writes the concatenation of `chunks` to `path` atomically: a regular file
/// (or none) is replaced by a complete, fsynced new file through a rename
/// (then the directory is fsynced, best effort); a symbolic link's target
/// is replaced, not the link; special files (/dev/null, pipes) are written
/// through. The temporary file is unnamed until complete where the file
/// system allows, else unique per process and call, and removed on failure.
dlc_status writeFileAtomic(const char *path, const std::vector<Chunk> &chunks);

//===-- Model description ------------------------------------------------===//

enum class InitKind { Uniform, Zeros, Ones, Data };

/// Sharded optimizer state: the values of one rank's shard of a tensor of
/// `whole` values over `ranks` ranks, ceil(whole / ranks); and how many of
/// rank `rank`'s `shard` values lie inside the tensor (the rest is padding).
inline int64_t shardElements(int64_t whole, int64_t ranks) {
  return whole / ranks + (whole % ranks != 0);
}
inline int64_t shardPart(int64_t whole, int64_t shard, int64_t rank) {
  return std::clamp<int64_t>(whole - rank * shard, 0, shard);
}

struct ParamDecl : TensorDecl {
  InitKind init = InitKind::Zeros;
  double bound = 0;
  int64_t offset = 0; ///< In the arena; a multiple of 64.
  /// A `state` line: optimizer state, zero-initialised, optional in the
  /// files dlc_model_load reads.
  bool isState = false;
  /// `shard RANKS SHAPE` (a sharded optimizer's state): the model holds
  /// its rank's shard of a tensor `whole` over `shardRanks` ranks; files
  /// hold the whole tensor. 0: not sharded.
  int64_t shardRanks = 0;
  TensorDecl whole;
  /// A `packed` line: weights re-laid out by the pack_weights entry,
  /// after every param and state; hidden from the C API, never loaded or
  /// saved.
  bool isPacked = false;
};

struct EntryDecl {
  std::string name;
  std::vector<TensorDecl> inputs;
  std::vector<TensorDecl> outputs;
  int64_t workspaceBytes = 0; ///< The `workspace` line: scratch of one call.
  /// The `cuda_workspace` line: the same on CUDA (the CUDA lowering keeps
  /// tensors the CPU code does not); the `workspace` one when absent.
  int64_t cudaWorkspaceBytes = 0;
  /// The `concurrent` line: calls only read the params, so several may run
  /// at once. Without it (and in version 1 texts) a call has the model to
  /// itself.
  bool concurrent = false;
  /// The `communicator` line: the entry reduces over the ranks of a
  /// data-parallel job and takes the model's CommContext after the
  /// workspace.
  bool communicator = false;
  /// The `pack_weights` line: the entry computes the packed params from
  /// the others; the last entry, hidden from the C API, run by the runtime
  /// before a `concurrent` entry when the params changed.
  bool packWeights = false;
};

struct ModelDecl {
  std::string name;
  /// Every param, state and packed tensor, in the arena's order (the
  /// packed ones last); the C API shows the first `numParams`.
  std::vector<ParamDecl> params;
  /// Every entry, pack_weights last; the C API shows the first
  /// `numEntries`.
  std::vector<EntryDecl> entries;
  size_t numParams = 0, numEntries = 0;
  bool hasPackWeights() const { return numEntries < entries.size(); }
  int64_t paramBytes = 0; ///< The arena's layout size, a multiple of 64.
  /// The largest entry workspace, a multiple of 64: it follows the params
  /// in the arena and is shared by the entries.
  int64_t workspaceBytes = 0;
  /// The largest entry CUDA workspace, a multiple of 64: in the device
  /// arena.
  int64_t cudaWorkspaceBytes = 0;
  /// The `cpu` line: the x86 features the CPU code was compiled for.
  std::vector<std::string> cpuFeatures;
};

/// Whether the runtime can check the x86 feature `name` (cpu.cpp).
bool isKnownCpuFeature(std::string_view name);
/// Whether this CPU (and OS) has the known x86 feature `name`, less those
/// named in DLC_CPU_FEATURES_DISABLE.
bool cpuHasFeature(std::string_view name);
/// DLC_ERR_FORMAT unless the CPU variants of `desc` (ABI version 4) are
/// complete, with an entry function per entry of `model` and known
/// features.
dlc_status checkCpuVariants(const dlc_model_desc &desc, const ModelDecl &model);
/// The entries to run on this CPU: the first CPU variant of `desc` whose
/// features it has, else the base entries, whose features (`cpu` line)
/// it must have: DLC_ERR_DEVICE_UNAVAILABLE naming the missing ones.
/// `name` is the variant's name (or `cpu_name`).
dlc_status chooseCpuEntries(const dlc_model_desc &desc, const ModelDecl &model,
                            const dlc_entry_fn *&entries, std::string &name);

/// Parses and validates a model description (docs/runtime-abi.md). On
/// failure, `err` is "line N: message".
bool parseModelText(std::string_view text, ModelDecl &model, std::string &err);

//===-- Initialisation stream --------------------------------------------===//

uint64_t fnv1a64(std::string_view s);

/// splitmix64 (Steele, Lea, Flood; as in Vigna's reference code).
class SplitMix64 {
public:
  static constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ULL;
  explicit SplitMix64(uint64_t seed) : State(seed) {}
  /// The generator after `n` draws: the state only counts them, so a stream
  /// can be split into ranges that are drawn independently.
  void skip(uint64_t n) { State += n * kGamma; }
  uint64_t next() {
    uint64_t z = (State += kGamma);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

private:
  uint64_t State;
};

/// Elements [begin, end) of the float32 `uniform` stream seeded with `seed`
/// (a param's `seed ^ fnv1a64(name)`), into out[begin, end). `wide` takes
/// the AVX-512 loop, which must give the same bits; only where
/// uniformFloat32WideAvailable().
void uniformFloat32(float *out, int64_t begin, int64_t end, uint64_t seed,
                    double bound, bool wide);
bool uniformFloat32WideAvailable();

/// Rounds a double to IEEE binary16 / bfloat16 bits, to nearest even.
uint16_t doubleToHalfBits(double v);
uint16_t doubleToBFloat16Bits(double v);

/// Stores `v` (rounded to nearest even, or converted with a C++ cast for
/// integer dtypes) as element `i` of a buffer of `dtype`.
void storeElement(void *data, dlc_dtype dtype, int64_t i, double v);

/// Fills a param by its init rule from `seed`, or (init `data`) with a copy
/// of `initData`, the value embedded in the compiled object.
void initParam(const ParamDecl &param, void *data, uint64_t seed,
               const void *initData = nullptr);

//===-- Devices and threads ----------------------------------------------===//

/// Parses a DLC_DEVICE value (auto, cpu, cuda, cuda:N; case-insensitive);
/// false when invalid. `ordinal` is N for cuda:N, else -1.
bool parseDeviceEnv(std::string_view value, dlc_device_kind &device,
                    int &ordinal);

/// Whether CUDA is usable (probed once per process) and why not.
bool cudaUsable(std::string *reason);

/// The device that serves a request (see resolveDevice).
struct DeviceChoice {
  dlc_device_kind device = DLC_DEVICE_CPU;
  int ordinal = 0; ///< The CUDA device; 0 for the CPU.
  /// `auto` chose (neither DLC_DEVICE_CPU/CUDA nor DLC_DEVICE=cpu|cuda|cuda:N
  /// asked): a CUDA choice whose setup fails may still fall back to the CPU.
  bool automatic = false;
  /// When `auto` chose the CPU for a model that has CUDA code: why CUDA is
  /// not used (the driver's reason, or no such device); else empty.
  std::string whyNotCuda;
};

/// Resolves a device request (a dlc_device_kind, validated here) for a model
/// that has (or lacks) code for CUDA. `ordinal` is the CUDA device asked for,
/// -1 for the default (the N of DLC_DEVICE=cuda:N for AUTO requests, else 0).
dlc_status resolveDevice(int requested, int ordinal, bool hasCudaCode,
                         DeviceChoice &choice);

/// Parses a DLC_NUM_THREADS value: a decimal integer in [1, 1024]; 0 when
/// invalid.
int parseNumThreads(const char *value);

//===-- Tensor files -----------------------------------------------------===//

/// A tensor to write: a declaration and its data.
struct TensorRef {
  const TensorDecl *decl;
  const void *data;
};

/// A tensor of a .safetensors file.
struct SafetensorsEntry {
  TensorDecl decl;
  uint64_t begin = 0; ///< Offsets into the data section.
  uint64_t end = 0;
};

/// Parses and validates a .safetensors file held in memory; `entries` are
/// sorted by their data offsets and `dataStart` is the data section's offset
/// in the file. Messages name the file `path`.
dlc_status parseSafetensors(const char *path, const uint8_t *file, size_t size,
                            std::vector<SafetensorsEntry> &entries,
                            size_t &dataStart);

/// Writes tensors (names must be unique) as a .safetensors file, atomically.
dlc_status writeSafetensors(const char *path, std::vector<TensorRef> tensors);

/// Parses and validates a .npy file held in memory: its dtype and shape go in
/// `decl` (the name is left alone), `dataStart` is the data's offset.
dlc_status parseNpy(const char *path, const uint8_t *file, size_t size,
                    TensorDecl &decl, size_t &dataStart);

/// Writes one tensor as a .npy file, atomically.
dlc_status writeNpy(const char *path, const TensorRef &tensor);

} // namespace dlc::rt

#endif // DLCRT_INTERNAL_H
