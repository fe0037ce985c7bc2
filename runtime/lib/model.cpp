//===- model.cpp - dlc_model: creation, params, load/save, run ------------===//
//
// On the CPU the params live in the host arena and entries run in the
// calling thread. On CUDA (cuda.cpp) the host arena is a mirror of the
// params on the device: uploaded after create, init, load and whenever it
// was handed out for writing (dlc_model_param_info), downloaded before
// save and param access when a run may have changed the params.
//
//===----------------------------------------------------------------------===//

#include "comm.h"
#include "cuda_backend.h"
#include "internal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <sys/mman.h>

using namespace dlc::rt;

struct dlc_model {
  ModelDecl decl;
  const dlc_model_desc *desc = nullptr;
  dlc_device_kind device = DLC_DEVICE_CPU;
  AlignedBuffer arena;
  size_t arenaBytes = 0;         ///< Allocated: params, then the workspace.
  std::vector<void *> paramData; ///< Into the arena, one per param.
  /// The embedded initial value of each `data` param, else null.
  std::vector<const void *> initData;
  void *workspace = nullptr; ///< Into the arena, after the params.
  /// CPU runs: a `concurrent` entry's calls share it, any other call (a
  /// training step, which writes the params the others read) holds it alone.
  mutable std::shared_mutex runs;
  /// CPU: the arena's workspace serves one call; calls running alongside it
  /// take a spare one, allocated when first needed and kept for the next.
  std::mutex workspaces;
  bool arenaWorkspaceBusy = false;
  std::vector<AlignedBuffer> spareWorkspaces;
  /// The host memory and the measurement switch; on CUDA every run too (one
  /// stream, one staging area).
  mutable std::mutex running;

  /// CUDA only: the device side, and the state of the host mirror.
  std::unique_ptr<CudaContext> cuda;
  mutable bool hostStale = false; ///< A run may have changed the params.
  /// The packed params may not match the others (created, loaded, written
  /// through dlc_model_param_info, trained): the pack_weights entry runs
  /// before the next `concurrent` entry.
  mutable std::atomic<bool> packedStale{true};
  mutable bool deviceStale = false; ///< The mirror may have been written.
  std::string deviceDescription = "cpu";
  /// CPU: the entries this CPU runs (a variant's or the base ones), and
  /// their name (dlc_model_cpu_name).
  const dlc_entry_fn *cpuEntries = nullptr;
  std::string cpuName;
  /// Why `auto` runs a model with CUDA code on the CPU; else empty.
  std::string fallbackReason;
  /// CPU only: the memory of dlc_model_alloc_host (on CUDA: the context's
  /// pinned buffers).
  std::map<void *, AlignedBuffer> hostBuffers;
  /// CPU only: dlc_model_measure_entries, and the last run's entry time
  /// (-1: none; on CUDA the context measures).
  std::atomic<bool> measuring{false};
  std::atomic<double> lastEntryUs{-1};
  /// Data-parallel entries: the communicator (dlc_model_set_comm) and
  /// the context their generated code fills.
  CommContext comm;

  void *data(size_t param) const { return paramData[param]; }
};

namespace {

constexpr size_t kHugePage = size_t(2) << 20;

/// Zeroes `bytes` at `data` on the runtime's threads, 2 MiB per unit. The
/// first touch of fresh memory is the kernel's page faults and its clearing
/// of the pages, which for the big MLP's 2.8 GB arena took 1.7 s on one
/// thread; faults taken on several threads run side by side.
void zeroOnThreads(void *data, size_t bytes) {
  struct Range {
    char *data;
    size_t bytes;
  } range{static_cast<char *>(data), bytes};
  const auto units = static_cast<int64_t>((bytes + kHugePage - 1) / kHugePage);
  dlc_parallel_for(
      units,
      [](void *ctx, int64_t begin, int64_t end) {
        const auto &r = *static_cast<const Range *>(ctx);
        const size_t from = static_cast<size_t>(begin) * kHugePage;
        const size_t to =
            std::min(r.bytes, static_cast<size_t>(end) * kHugePage);
        std::memset(r.data + from, 0, to - from);
      },
      &range);
}

/// Allocates the param arena: 2 MiB aligned and zero-filled on the runtime's
/// threads, which also commits its memory now rather than during the first
/// run.
dlc_status allocateArena(dlc_model &m) {
  // On CUDA the host only mirrors the params: the workspace is on the device.
  const auto bytes = static_cast<size_t>(
      m.decl.paramBytes +
      (m.device == DLC_DEVICE_CUDA ? 0 : m.decl.workspaceBytes));
  if (bytes == 0)
    return DLC_OK;
  size_t allocated = bytes; // exactly the plan
  m.arena = allocateAligned(allocated, kHugePage);
  if (!m.arena)
    return fail(DLC_ERR_OUT_OF_MEMORY,
                "cannot allocate the memory of model " + quote(m.decl.name) +
                    ": " + std::to_string(allocated) +
                    " bytes (params and "
                    "optimizer state " +
                    std::to_string(m.decl.paramBytes) + ", workspace " +
                    std::to_string(m.decl.workspaceBytes) +
                    ", as planned at compile time)");
  m.arenaBytes = allocated;
  // No MADV_HUGEPAGE: where the kernel defragments for madvised memory
  // (transparent_hugepage/defrag = madvise, Debian's default), the first
  // touch of a large arena then compacts memory synchronously, which took
  // 15 s of system time for the big MLP's 2.5 GB on a busy machine, and the
  // big MLP forward ran no faster with huge pages.
  zeroOnThreads(m.arena.get(), allocated);
  auto *base = static_cast<char *>(m.arena.get());
  m.paramData.reserve(m.decl.params.size());
  for (const ParamDecl &param : m.decl.params)
    m.paramData.push_back(base + param.offset);
  m.workspace =
      m.device == DLC_DEVICE_CUDA ? nullptr : base + m.decl.paramBytes;
  return DLC_OK;
}

/// A CPU call's workspace: the arena's when no other call has it, else a
/// spare one; given back when the call ends.
class CallWorkspace {
public:
  explicit CallWorkspace(dlc_model &m) : M(m) {}
  CallWorkspace(const CallWorkspace &) = delete;
  CallWorkspace &operator=(const CallWorkspace &) = delete;
  ~CallWorkspace() {
    std::lock_guard<std::mutex> lock(M.workspaces);
    if (Spare)
      M.spareWorkspaces.push_back(std::move(Spare));
    else if (UsesArena)
      M.arenaWorkspaceBusy = false;
  }

  dlc_status take() {
    std::lock_guard<std::mutex> lock(M.workspaces);
    if (!M.arenaWorkspaceBusy) {
      // (Null for a model without a workspace, which needs none.)
      M.arenaWorkspaceBusy = UsesArena = true;
      Data = M.workspace;
      return DLC_OK;
    }
    if (!M.spareWorkspaces.empty()) {
      Spare = std::move(M.spareWorkspaces.back());
      M.spareWorkspaces.pop_back();
    } else {
      Spare = allocateAligned(static_cast<size_t>(M.decl.workspaceBytes), 64);
      if (!Spare)
        return fail(DLC_ERR_OUT_OF_MEMORY,
                    "model " + quote(M.decl.name) + ": cannot allocate " +
                        std::to_string(M.decl.workspaceBytes) +
                        " bytes of workspace for a call that runs alongside "
                        "another");
    }
    Data = Spare.get();
    return DLC_OK;
  }
  void *data() const { return Data; }

private:
  dlc_model &M;
  AlignedBuffer Spare;
  void *Data = nullptr;
  bool UsesArena = false;
};

/// CUDA: makes the host mirror current.
dlc_status syncHost(const dlc_model &m) {
  if (!m.cuda || !m.hostStale)
    return DLC_OK;
  if (dlc_status s = cudaDownloadParams(*m.cuda, m.arena.get(),
                                        static_cast<size_t>(m.decl.paramBytes)))
    return s;
  m.hostStale = false;
  return DLC_OK;
}

/// CUDA: uploads the host mirror when it may have been written.
dlc_status syncDevice(const dlc_model &m) {
  if (!m.cuda || !m.deviceStale)
    return DLC_OK;
  if (dlc_status s = cudaUploadParams(*m.cuda, m.arena.get(),
                                      static_cast<size_t>(m.decl.paramBytes)))
    return s;
  m.deviceStale = false;
  return DLC_OK;
}

/// CUDA: every param of the host mirror was just written (init, load).
dlc_status paramsWritten(dlc_model &m) {
  m.packedStale = true;
  if (!m.cuda)
    return DLC_OK;
  std::lock_guard<std::mutex> lock(m.running);
  m.hostStale = false;
  m.deviceStale = true;
  return syncDevice(m);
}

dlc_status checkModel(const dlc_model *m) {
  if (!m)
    return fail(DLC_ERR_INVALID_ARGUMENT, "model is NULL");
  return DLC_OK;
}

dlc_status checkEntry(const dlc_model *m, int32_t e) {
  if (dlc_status s = checkModel(m))
    return s;
  if (e < 0 || static_cast<size_t>(e) >= m->decl.numEntries)
    return fail(DLC_ERR_INVALID_ARGUMENT,
                "entry index " + std::to_string(e) + " out of range (model " +
                    quote(m->decl.name) + " has " +
                    std::to_string(m->decl.numEntries) + " entries)");
  return DLC_OK;
}

dlc_status checkTensorIndex(const char *what, size_t count, int32_t i) {
  if (i < 0 || static_cast<size_t>(i) >= count)
    return fail(DLC_ERR_INVALID_ARGUMENT,
                std::string(what) + " index " + std::to_string(i) +
                    " out of range (there are " + std::to_string(count) + ")");
  return DLC_OK;
}

std::string modelFile(const dlc_model &m, const char *path) {
  return "model " + quote(m.decl.name) + ": " + quote(path);
}

/// Checks the buffers passed to dlc_model_run.
dlc_status checkBuffers(const char *what, const std::vector<TensorDecl> &decls,
                        const void *const *buffers) {
  if (decls.empty())
    return DLC_OK;
  if (!buffers)
    return fail(DLC_ERR_INVALID_ARGUMENT, std::string(what) +
                                              " is NULL but the entry has " +
                                              std::to_string(decls.size()));
  for (size_t i = 0; i < decls.size(); ++i) {
    const TensorDecl &decl = decls[i];
    auto address = reinterpret_cast<uintptr_t>(buffers[i]);
    std::string name = std::string(what) + " " + std::to_string(i) + " (" +
                       quote(decl.name) + ")";
    if (address == 0)
      return fail(DLC_ERR_INVALID_ARGUMENT, name + " is NULL");
    if (address % dtypeSize(decl.dtype) != 0)
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  name + " is not aligned to its " +
                      std::to_string(dtypeSize(decl.dtype)) + "-byte elements");
  }
  return DLC_OK;
}

/// dlc_model_create_on with the device as the caller's integer.
dlc_status createModel(const dlc_model_desc *desc, int device, int32_t ordinal,
                       dlc_model **out) {
  return guardStatus([&] {
    if (!out)
      return fail(DLC_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = nullptr;
    if (!desc)
      return fail(DLC_ERR_INVALID_ARGUMENT, "desc is NULL");
    if (desc->abi_version < 1 || desc->abi_version > DLC_ABI_VERSION)
      return fail(DLC_ERR_FORMAT,
                  "model ABI version " + std::to_string(desc->abi_version) +
                      " is not supported (this runtime implements versions 1 "
                      "to " +
                      std::to_string(DLC_ABI_VERSION) +
                      "); recompile the model with a matching dlc");
    if (!desc->text)
      return fail(DLC_ERR_FORMAT, "model description text is NULL");

    auto m = std::make_unique<dlc_model>();
    m->desc = desc;
    std::string err;
    if (!parseModelText(desc->text, m->decl, err))
      return fail(DLC_ERR_FORMAT, "bad model description: " + err);

    size_t numEntries = m->decl.entries.size();
    if (desc->num_entries < 0 ||
        static_cast<size_t>(desc->num_entries) != numEntries)
      return fail(DLC_ERR_FORMAT,
                  "model " + quote(m->decl.name) + ": num_entries is " +
                      std::to_string(desc->num_entries) +
                      " but the description has " + std::to_string(numEntries) +
                      " entry blocks");
    if (numEntries > 0 && !desc->entries)
      return fail(DLC_ERR_FORMAT,
                  "model " + quote(m->decl.name) + ": entries is NULL");
    for (size_t e = 0; e < numEntries; ++e)
      if (!desc->entries[e])
        return fail(DLC_ERR_FORMAT,
                    "model " + quote(m->decl.name) + ": entry function " +
                        quote(m->decl.entries[e].name) + " is NULL");

    const void *const *paramData =
        desc->abi_version >= 2 ? desc->param_data : nullptr;
    for (size_t i = 0; i < m->decl.params.size(); ++i) {
      const ParamDecl &param = m->decl.params[i];
      m->initData.push_back(paramData ? paramData[i] : nullptr);
      if (param.init == InitKind::Data && !m->initData.back())
        return fail(DLC_ERR_FORMAT, "model " + quote(m->decl.name) +
                                        ": param " + quote(param.name) +
                                        " has init 'data' but the object "
                                        "embeds no value for it");
    }

    if (dlc_status s = checkCpuVariants(*desc, m->decl))
      return s;
    // A version 1 or 2 descriptor ends before `cuda`.
    const dlc_cuda_module *cuda = desc->abi_version >= 3 ? desc->cuda : nullptr;
    if (cuda)
      if (dlc_status s = checkCudaModule(m->decl.name, *cuda, numEntries))
        return s;

    DeviceChoice choice;
    if (dlc_status s = resolveDevice(device, ordinal, cuda != nullptr, choice))
      return s;
    m->device = choice.device;
    m->fallbackReason = std::move(choice.whyNotCuda);
    // The device is settled before the arena is sized for it. `auto` gives
    // CUDA up when the model cannot be set up there (its PTX refused by an
    // older driver, no cuBLASLt, a device taken by another process) and
    // runs on the CPU, keeping the reason; too little device memory and
    // compiler bugs stay errors.
    if (m->device == DLC_DEVICE_CUDA) {
      dlc_status s = createCudaContext(m->decl, *cuda, choice.ordinal, m->cuda);
      if (s == DLC_ERR_DEVICE_UNAVAILABLE && choice.automatic) {
        m->device = DLC_DEVICE_CPU;
        m->fallbackReason = dlc_last_error();
        clearError();
      } else if (s != DLC_OK) {
        return s;
      } else {
        m->deviceDescription = m->cuda->description;
      }
    }
    // On the CPU, the entries' instructions must exist: a missing feature
    // is an error here, not a SIGILL in the first run.
    if (m->device == DLC_DEVICE_CPU)
      if (dlc_status s =
              chooseCpuEntries(*desc, m->decl, m->cpuEntries, m->cpuName))
        return s;
    if (dlc_status s = allocateArena(*m))
      return s;
    for (size_t i = 0; i < m->decl.params.size(); ++i)
      if (m->decl.params[i].init == InitKind::Data)
        initParam(m->decl.params[i], m->data(i), 0, m->initData[i]);
    if (m->device == DLC_DEVICE_CUDA)
      if (dlc_status s = paramsWritten(*m))
        return s;
    *out = m.release();
    return DLC_OK;
  });
}
} // namespace

extern "C" {

dlc_status dlc_model_create_on(const dlc_model_desc *desc,
                               dlc_device_kind device, int32_t ordinal,
                               dlc_model **out) {
  return createModel(desc, enumBits(device), ordinal, out);
}

dlc_status dlc_model_create(const dlc_model_desc *desc, dlc_device_kind device,
                            dlc_model **out) {
  // The caller's integer, not the enum: loading an out-of-range enum value
  // is undefined behaviour in C++.
  return createModel(desc, enumBits(device), -1, out);
}

void dlc_model_destroy(dlc_model *m) { delete m; }

dlc_device_kind dlc_model_device(const dlc_model *m) {
  return guardValue(DLC_DEVICE_AUTO, [&] {
    return checkModel(m) ? DLC_DEVICE_AUTO : m->device;
  });
}

const char *dlc_model_device_name(const dlc_model *m) {
  return guardValue<const char *>(nullptr, [&]() -> const char * {
    return checkModel(m) ? nullptr : m->deviceDescription.c_str();
  });
}

const char *dlc_model_cpu_name(const dlc_model *m) {
  return guardValue<const char *>(nullptr, [&]() -> const char * {
    return checkModel(m) ? nullptr : m->cpuName.c_str();
  });
}

const char *dlc_model_fallback_reason(const dlc_model *m) {
  return guardValue<const char *>(nullptr, [&]() -> const char * {
    return checkModel(m) ? nullptr : m->fallbackReason.c_str();
  });
}

const char *dlc_model_name(const dlc_model *m) {
  return guardValue<const char *>(nullptr, [&]() -> const char * {
    return checkModel(m) ? nullptr : m->decl.name.c_str();
  });
}

dlc_status dlc_model_init(dlc_model *m, uint64_t seed) {
  return guardStatus([&] {
    if (dlc_status s = checkModel(m))
      return s;
    for (size_t i = 0; i < m->decl.params.size(); ++i)
      initParam(m->decl.params[i], m->data(i), seed, m->initData[i]);
    return paramsWritten(*m);
  });
}

dlc_status dlc_model_load(dlc_model *m, const char *safetensors_path) {
  return guardStatus([&] {
    if (dlc_status s = checkModel(m))
      return s;
    if (!safetensors_path)
      return fail(DLC_ERR_INVALID_ARGUMENT, "path is NULL");
    const char *path = safetensors_path;
    FileData file;
    if (dlc_status s = file.open(path, "weights file"))
      return s;
    std::vector<SafetensorsEntry> entries;
    size_t dataStart = 0;
    if (dlc_status s = parseSafetensors(path, file.data(), file.size(), entries,
                                        dataStart))
      return s;

    std::map<std::string_view, const SafetensorsEntry *> byName;
    for (const SafetensorsEntry &entry : entries)
      byName.emplace(entry.decl.name, &entry);

    // Check every param before writing any.
    // Optimizer state is optional (a weights-only file starts a fresh
    // optimizer) but all or nothing (a checkpoint is complete).
    size_t numStates = 0, statesFound = 0;
    std::string firstMissingState;
    for (const ParamDecl &param : m->decl.params)
      if (param.isState) {
        ++numStates;
        if (byName.count(param.name))
          ++statesFound;
        else if (firstMissingState.empty())
          firstMissingState = param.name;
      }
    if (statesFound != 0 && statesFound != numStates)
      return fail(DLC_ERR_FORMAT,
                  modelFile(*m, path) + ": no tensor " +
                      quote(firstMissingState) + " (the file has " +
                      std::to_string(statesFound) + " of the model's " +
                      std::to_string(numStates) +
                      " optimizer-state tensors: a checkpoint has all of "
                      "them, a weights file none)");
    std::vector<const uint8_t *> sources;
    sources.reserve(m->decl.params.size());
    size_t missing = 0;
    std::string firstMissing;
    for (const ParamDecl &param : m->decl.params) {
      auto it = byName.find(param.name);
      if (param.isPacked || it == byName.end()) {
        if (param.isState || param.isPacked) {
          sources.push_back(nullptr); // zeroed below
          continue;
        }
        if (missing++ == 0)
          firstMissing = param.name;
        continue;
      }
      const TensorDecl &found = it->second->decl;
      // A sharded state: the file holds the whole tensor.
      const TensorDecl &expected = param.shardRanks ? param.whole : param;
      if (param.shardRanks && !m->comm.comm)
        return fail(DLC_ERR_INVALID_ARGUMENT,
                    "the model's optimizer state is sharded over the ranks: "
                    "set its communicator (dlc_model_set_comm) before "
                    "loading a checkpoint");
      if (found.dtype != param.dtype)
        return fail(DLC_ERR_FORMAT, modelFile(*m, path) + ": tensor " +
                                        quote(param.name) + " has dtype " +
                                        safetensorsDTypeName(found.dtype) +
                                        ", the model needs " +
                                        safetensorsDTypeName(param.dtype));
      if (found.shape != expected.shape)
        return fail(
            DLC_ERR_FORMAT,
            modelFile(*m, path) + ": tensor " + quote(param.name) +
                " has shape " +
                shapeString(found.shape.data(), found.shape.size()) +
                ", the model needs " +
                shapeString(expected.shape.data(), expected.shape.size()));
      sources.push_back(file.data() + dataStart + it->second->begin);
    }
    if (missing > 0)
      return fail(DLC_ERR_FORMAT,
                  modelFile(*m, path) + ": no tensor " + quote(firstMissing) +
                      " (" + std::to_string(missing) + " of the model's " +
                      std::to_string(m->decl.numParams) +
                      " params are missing)");

    for (size_t i = 0; i < m->decl.params.size(); ++i) {
      const ParamDecl &param = m->decl.params[i];
      size_t n = static_cast<size_t>(param.nbytes), from = 0;
      if (sources[i] && param.shardRanks) {
        // This rank's part of the whole tensor; the shard's tail past its
        // end is zero.
        int64_t rank = dlc_comm_rank(m->comm.comm);
        int64_t part = shardPart(param.whole.numel, param.numel, rank);
        size_t elementBytes = static_cast<size_t>(param.nbytes / param.numel);
        from = static_cast<size_t>(part) * elementBytes;
        file.copyOut(m->data(i),
                     sources[i] +
                         static_cast<size_t>(rank * param.numel) * elementBytes,
                     from);
      } else if (sources[i]) {
        file.copyOut(m->data(i), sources[i], n);
        from = n;
      }
      std::memset(static_cast<uint8_t *>(m->data(i)) + from, 0, n - from);
    }
    return paramsWritten(*m);
  });
}

/// The ranks the model's optimizer state is sharded over; 0: not sharded.
static int64_t stateShards(const dlc_model &m) {
  for (const ParamDecl &param : m.decl.params)
    if (param.shardRanks)
      return param.shardRanks;
  return 0;
}

/// dlc_model_save of a model with sharded optimizer state, on every rank:
/// the shards are gathered on rank 0, which writes the file of a model
/// that is not sharded; the other ranks learn whether it could.
static dlc_status saveSharded(const dlc_model &m, const char *path) {
  dlc_comm *comm = m.comm.comm;
  if (!comm)
    return fail(DLC_ERR_INVALID_ARGUMENT,
                "the model's optimizer state is sharded over the ranks: set "
                "its communicator (dlc_model_set_comm) and save on every "
                "rank");
  bool root = dlc_comm_rank(comm) == 0;
  std::vector<TensorRef> tensors;
  std::vector<std::vector<float>> wholes;
  wholes.reserve(m.decl.numParams);
  for (size_t i = 0; i < m.decl.numParams; ++i) {
    const ParamDecl &param = m.decl.params[i];
    if (!param.shardRanks) {
      tensors.push_back({&param, m.data(i)});
      continue;
    }
    wholes.emplace_back(root ? static_cast<size_t>(param.whole.numel) : 0);
    if (dlc_status s =
            gatherShards(comm, static_cast<const float *>(m.data(i)),
                         param.numel, wholes.back().data(), param.whole.numel))
      return s;
    tensors.push_back({&param.whole, wholes.back().data()});
  }
  dlc_status written =
      root ? writeSafetensors(path, std::move(tensors)) : DLC_OK;
  std::string why = written ? dlc_last_error() : "";
  int32_t same = 0;
  if (dlc_status s =
          sameOnEveryRank(comm, static_cast<uint64_t>(written), &same))
    return s;
  if (written)
    return fail(written, why);
  if (!same)
    return fail(DLC_ERR_IO,
                "rank 0 could not write the checkpoint " + quote(path));
  return DLC_OK;
}

dlc_status dlc_model_save(const dlc_model *m, const char *safetensors_path) {
  return guardStatus([&] {
    if (dlc_status s = checkModel(m))
      return s;
    if (!safetensors_path)
      return fail(DLC_ERR_INVALID_ARGUMENT, "path is NULL");
    if (m->cuda) {
      std::lock_guard<std::mutex> lock(m->running);
      if (dlc_status s = syncHost(*m))
        return s;
    }
    if (stateShards(*m))
      return saveSharded(*m, safetensors_path);
    std::vector<TensorRef> tensors;
    tensors.reserve(m->decl.numParams);
    for (size_t i = 0; i < m->decl.numParams; ++i)
      tensors.push_back({&m->decl.params[i], m->data(i)});
    return writeSafetensors(safetensors_path, std::move(tensors));
  });
}

int64_t dlc_model_memory_bytes(const dlc_model *m) {
  return guardValue<int64_t>(-1, [&]() -> int64_t {
    if (checkModel(m))
      return -1;
    return static_cast<int64_t>(m->cuda ? m->cuda->arenaBytes : m->arenaBytes);
  });
}

int64_t dlc_model_workspace_bytes(const dlc_model *m) {
  return guardValue<int64_t>(-1, [&] {
    return checkModel(m)                  ? -1
           : m->device == DLC_DEVICE_CUDA ? m->decl.cudaWorkspaceBytes
                                          : m->decl.workspaceBytes;
  });
}

int32_t dlc_model_num_params(const dlc_model *m) {
  return guardValue<int32_t>(-1, [&] {
    return checkModel(m) ? -1 : static_cast<int32_t>(m->decl.numParams);
  });
}

dlc_status dlc_model_param_info(const dlc_model *m, int32_t i,
                                dlc_tensor_info *info) {
  return guardStatus([&] {
    if (dlc_status s = checkModel(m))
      return s;
    if (!info)
      return fail(DLC_ERR_INVALID_ARGUMENT, "info is NULL");
    if (dlc_status s = checkTensorIndex("param", m->decl.numParams, i))
      return s;
    // The caller may write through the pointer: pack again before the next
    // run (and on CUDA upload).
    m->packedStale = true;
    if (m->cuda) {
      std::lock_guard<std::mutex> lock(m->running);
      if (dlc_status s = syncHost(*m))
        return s;
      m->deviceStale = true;
    }
    fillInfo(m->decl.params[static_cast<size_t>(i)],
             m->data(static_cast<size_t>(i)), *info);
    return DLC_OK;
  });
}

dlc_status dlc_model_alloc_host(dlc_model *m, size_t bytes, void **out) {
  return guardStatus([&] {
    if (dlc_status s = checkModel(m))
      return s;
    if (!out)
      return fail(DLC_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = nullptr;
    std::lock_guard<std::mutex> lock(m->running);
    if (m->cuda)
      return cudaAllocHost(*m->cuda, bytes, out);
    AlignedBuffer buffer = allocateAligned(bytes, 64);
    if (!buffer)
      return fail(DLC_ERR_OUT_OF_MEMORY,
                  "model " + quote(m->decl.name) + ": cannot allocate " +
                      std::to_string(bytes) + " bytes of host memory");
    *out = buffer.get();
    m->hostBuffers.emplace(*out, std::move(buffer));
    return DLC_OK;
  });
}

dlc_status dlc_model_free_host(dlc_model *m, void *p) {
  return guardStatus([&] {
    if (dlc_status s = checkModel(m))
      return s;
    if (!p)
      return DLC_OK;
    std::lock_guard<std::mutex> lock(m->running);
    if (m->cuda)
      return cudaFreeHost(*m->cuda, p);
    if (m->hostBuffers.erase(p) == 0)
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "model " + quote(m->decl.name) +
                      ": the pointer is not host memory of this model (from "
                      "dlc_model_alloc_host, and not freed yet)");
    return DLC_OK;
  });
}

dlc_status dlc_model_measure_entries(dlc_model *m, int on) {
  return guardStatus([&] {
    if (dlc_status s = checkModel(m))
      return s;
    std::lock_guard<std::mutex> lock(m->running);
    if (m->cuda)
      return cudaMeasureEntries(*m->cuda, on != 0);
    m->measuring = on != 0;
    m->lastEntryUs = -1;
    return DLC_OK;
  });
}

double dlc_model_last_entry_us(const dlc_model *m) {
  return guardValue(-1.0, [&] {
    if (checkModel(m))
      return -1.0;
    std::lock_guard<std::mutex> lock(m->running);
    return m->cuda ? m->cuda->lastEntryUs : m->lastEntryUs.load();
  });
}

int64_t dlc_model_param_bytes(const dlc_model *m) {
  return guardValue<int64_t>(
      -1, [&] { return checkModel(m) ? -1 : m->decl.paramBytes; });
}

int32_t dlc_model_num_entries(const dlc_model *m) {
  return guardValue<int32_t>(-1, [&] {
    return checkModel(m) ? -1 : static_cast<int32_t>(m->decl.numEntries);
  });
}

int32_t dlc_model_find_entry(const dlc_model *m, const char *name) {
  return guardValue<int32_t>(-1, [&]() -> int32_t {
    if (checkModel(m))
      return -1;
    if (!name) {
      fail(DLC_ERR_INVALID_ARGUMENT, "name is NULL");
      return -1;
    }
    for (size_t e = 0; e < m->decl.numEntries; ++e)
      if (m->decl.entries[e].name == name)
        return static_cast<int32_t>(e);
    fail(DLC_ERR_INVALID_ARGUMENT,
         "model " + quote(m->decl.name) + " has no entry " + quote(name));
    return -1;
  });
}

const char *dlc_model_entry_name(const dlc_model *m, int32_t e) {
  return guardValue<const char *>(nullptr, [&]() -> const char * {
    if (checkEntry(m, e))
      return nullptr;
    return m->decl.entries[static_cast<size_t>(e)].name.c_str();
  });
}

int32_t dlc_model_entry_num_inputs(const dlc_model *m, int32_t e) {
  return guardValue<int32_t>(-1, [&]() -> int32_t {
    if (checkEntry(m, e))
      return -1;
    return static_cast<int32_t>(
        m->decl.entries[static_cast<size_t>(e)].inputs.size());
  });
}

int32_t dlc_model_entry_num_outputs(const dlc_model *m, int32_t e) {
  return guardValue<int32_t>(-1, [&]() -> int32_t {
    if (checkEntry(m, e))
      return -1;
    return static_cast<int32_t>(
        m->decl.entries[static_cast<size_t>(e)].outputs.size());
  });
}

/// Describes input or output `i` of entry `e` (one implementation for both).
static dlc_status entryTensorInfo(const dlc_model *m, int32_t e, int32_t i,
                                  dlc_tensor_info *info, bool output) {
  return guardStatus([&] {
    if (dlc_status s = checkEntry(m, e))
      return s;
    if (!info)
      return fail(DLC_ERR_INVALID_ARGUMENT, "info is NULL");
    const auto &entry = m->decl.entries[static_cast<size_t>(e)];
    const auto &tensors = output ? entry.outputs : entry.inputs;
    if (dlc_status s =
            checkTensorIndex(output ? "output" : "input", tensors.size(), i))
      return s;
    fillInfo(tensors[static_cast<size_t>(i)], nullptr, *info);
    return DLC_OK;
  });
}

dlc_status dlc_model_entry_input_info(const dlc_model *m, int32_t e, int32_t i,
                                      dlc_tensor_info *info) {
  return entryTensorInfo(m, e, i, info, /*output=*/false);
}

dlc_status dlc_model_entry_output_info(const dlc_model *m, int32_t e, int32_t i,
                                       dlc_tensor_info *info) {
  return entryTensorInfo(m, e, i, info, /*output=*/true);
}

/// Runs the pack_weights entry on the CPU; the caller holds `runs` alone.
static dlc_status packWeights(dlc_model &m) {
  std::vector<void *> args(m.paramData.begin(), m.paramData.end());
  CallWorkspace workspace(m);
  if (dlc_status s = workspace.take())
    return s;
  args.push_back(workspace.data());
  m.cpuEntries[m.decl.numEntries](args.data());
  m.packedStale = false;
  return DLC_OK;
}

dlc_status dlc_model_run(dlc_model *m, int32_t e, const void *const *inputs,
                         void *const *outputs) {
  return guardStatus([&] {
    if (dlc_status s = checkEntry(m, e))
      return s;
    const EntryDecl &entry = m->decl.entries[static_cast<size_t>(e)];
    if (dlc_status s = checkBuffers("input", entry.inputs, inputs))
      return s;
    if (dlc_status s = checkBuffers("output", entry.outputs, outputs))
      return s;

    if (entry.communicator && !m->comm.comm)
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "entry '" + entry.name +
                      "' reduces over the ranks of a data-parallel job "
                      "(compiled with --data-parallel): give the model a "
                      "communicator first (dlc_model_set_comm)");

    // On CUDA the collectives are NCCL's, on the model's stream (nccl.cpp).
    if (m->cuda) {
      std::lock_guard<std::mutex> lock(m->running);
      if (dlc_status s = syncDevice(*m))
        return s;
      // Even a failed run may have written some params.
      m->hostStale = true;
      if (entry.concurrent && m->decl.hasPackWeights() && m->packedStale) {
        size_t pack = m->decl.numEntries;
        if (dlc_status s =
                cudaRunEntry(*m->cuda, m->decl, pack,
                             m->desc->cuda->entries[pack], nullptr, nullptr))
          return s;
        m->packedStale = false;
      }
      if (!entry.concurrent)
        m->packedStale = true;
      return cudaRunEntry(*m->cuda, m->decl, static_cast<size_t>(e),
                          m->desc->cuda->entries[e], inputs, outputs);
    }

    // args: params, inputs, outputs, workspace (and the communicator's
    // context). Small models avoid the heap.
    constexpr size_t kInlineArgs = 64;
    size_t numArgs = m->paramData.size() + entry.inputs.size() +
                     entry.outputs.size() + 1 + (entry.communicator ? 1 : 0);
    void *inlineArgs[kInlineArgs];
    std::vector<void *> heapArgs;
    void **args = inlineArgs;
    if (numArgs > kInlineArgs) {
      heapArgs.resize(numArgs);
      args = heapArgs.data();
    }
    size_t k = 0;
    for (void *param : m->paramData)
      args[k++] = param;
    for (size_t i = 0; i < entry.inputs.size(); ++i)
      args[k++] = const_cast<void *>(inputs[i]);
    for (size_t i = 0; i < entry.outputs.size(); ++i)
      args[k++] = outputs[i];

    // Calls that only read the params run at once, each in a workspace of
    // its own; a call that writes them runs alone.
    // Packed params are recomputed first when the others changed, alone.
    std::shared_lock<std::shared_mutex> shared(m->runs, std::defer_lock);
    std::unique_lock<std::shared_mutex> exclusive(m->runs, std::defer_lock);
    if (entry.concurrent) {
      for (;;) {
        shared.lock();
        if (!m->decl.hasPackWeights() || !m->packedStale)
          break;
        shared.unlock();
        exclusive.lock();
        if (m->packedStale)
          if (dlc_status s = packWeights(*m))
            return s;
        exclusive.unlock();
      }
    } else {
      exclusive.lock();
      m->packedStale = true;
    }
    CallWorkspace workspace(*m);
    if (dlc_status s = workspace.take())
      return s;
    args[k++] = workspace.data();
    if (entry.communicator) {
      m->comm.reset();
      args[k++] = &m->comm;
    }

    auto start = std::chrono::steady_clock::now();
    m->cpuEntries[e](args);
    if (m->measuring)
      m->lastEntryUs = std::chrono::duration<double, std::micro>(
                           std::chrono::steady_clock::now() - start)
                           .count();
    if (entry.communicator) {
      // Buckets the code left in flight (it waits before it reads them).
      dlc_comm_wait(&m->comm);
      if (m->comm.status != DLC_OK)
        return fail(m->comm.status, m->comm.message);
    }
    return DLC_OK;
  });
}

dlc_status dlc_model_set_comm(dlc_model *m, dlc_comm *c) {
  return guardStatus([&] {
    if (!m)
      return fail(DLC_ERR_INVALID_ARGUMENT, "model is NULL");
    int64_t shards = stateShards(*m);
    if (c && shards && shards != dlc_comm_size(c))
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "the model's optimizer state is sharded over " +
                      std::to_string(shards) + " ranks, the job has " +
                      std::to_string(dlc_comm_size(c)) +
                      " (compile with --data-parallel=" +
                      std::to_string(dlc_comm_size(c)) + ")");
    if (m->cuda) {
      std::lock_guard<std::mutex> lock(m->running);
      if (dlc_status s = cudaSetComm(*m->cuda, c)) {
        m->comm.comm = nullptr; // the old NCCL communicator is gone too
        return s;
      }
    }
    m->comm.comm = c;
    return DLC_OK;
  });
}

int32_t dlc_model_entry_uses_comm(const dlc_model *m, int32_t e) {
  return guardValue<int32_t>(-1, [&]() -> int32_t {
    if (checkEntry(m, e))
      return -1;
    return m->decl.entries[static_cast<size_t>(e)].communicator ? 1 : 0;
  });
}

int32_t dlc_model_state_shards(const dlc_model *m) {
  return guardValue<int32_t>(-1, [&]() -> int32_t {
    return checkModel(m) ? -1 : static_cast<int32_t>(stateShards(*m));
  });
}

dlc_status dlc_model_check_replicas(dlc_model *m, int32_t *same) {
  return guardStatus([&] {
    if (!m || !same)
      return fail(DLC_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!m->comm.comm)
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "the model has no communicator (dlc_model_set_comm)");
    if (m->cuda)
      if (dlc_status s = syncHost(*m))
        return s;
    // Every tensor but the shards of a sharded optimizer's state.
    uint64_t hash = fnv1a(nullptr, 0);
    for (size_t i = 0; i < m->decl.numParams; ++i)
      if (!m->decl.params[i].shardRanks)
        hash = fnv1a(m->data(i), static_cast<size_t>(m->decl.params[i].nbytes),
                     hash);
    return sameOnEveryRank(m->comm.comm, hash, same);
  });
}

} // extern "C"
