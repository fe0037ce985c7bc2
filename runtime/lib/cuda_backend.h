//===- cuda_backend.h - The CUDA backend of libdlcrt ------------*- C++ -*-===//
//
// What model.cpp and device.cpp need from the CUDA backend (cuda.cpp), and
// the per-model CUDA context that generated code receives as `ctx` and hands
// back to dlc_cuda_launch / dlc_cuda_gemm / dlc_cuda_memcpy (cuda.cpp,
// cublaslt.cpp). docs/runtime-abi.md describes the contract.
//
//===----------------------------------------------------------------------===//

#ifndef DLCRT_CUDA_BACKEND_H
#define DLCRT_CUDA_BACKEND_H

#include "cuda_api.h"
#include "internal.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dlc::rt {

//===-- The driver -------------------------------------------------------===//

/// libcuda.so.1, loaded and probed once per process.
struct CudaDriverState {
  bool usable = false;
  std::string reason; ///< Why CUDA is not usable; empty when it is.
  int deviceCount = 0;
  cuapi::Driver api;
};

/// Loads libcuda.so.1 (dlopen, then every entry point through
/// cuGetProcAddress_v2), calls cuInit(0) and counts the devices, once.
const CudaDriverState &cudaDriver();

/// "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory", or "CUDA error 2".
std::string cudaErrorText(cuapi::CUresult result);

//===-- The per-model context --------------------------------------------===//

class GemmCache; // cublaslt.cpp
struct GemmCacheDeleter {
  void operator()(GemmCache *cache) const noexcept;
};

struct NcclComm; // nccl.cpp
struct NcclCommDeleter {
  void operator()(NcclComm *comm) const noexcept;
};

/// A buffer of the collective a data-parallel entry is assembling
/// (dlc_cuda_comm_bucket_add, _add_pair): device addresses and counts; the
/// sharded collectives' pieces also name the buffer their result goes to.
struct CudaCommPiece {
  cuapi::CUdeviceptr data = 0;
  int64_t count = 0;
  cuapi::CUdeviceptr dest = 0;
  int64_t destCount = 0;
};

/// Where an entry's inputs and outputs live in the staging area (the same
/// offsets on the device and in the pinned host buffer).
struct EntryStaging {
  std::vector<size_t> inputs;
  std::vector<size_t> outputs;
};

/// One CUDA graph of an entry, captured after the entry's first successful
/// run.
struct EntryGraph {
  bool disabled = false; ///< Capture or instantiation failed: run directly.
  cuapi::CUgraph graph = nullptr;
  cuapi::CUgraphExec exec = nullptr;
};

/// An entry's graphs: `step` is the whole run (the input copies, the
/// entry, the output copies), replayed by unmeasured runs whose host
/// buffers are those it was captured with, `stepHostSides`; `entry` is the
/// entry alone, between copies made outside it.
struct EntryGraphs {
  int64_t successfulRuns = 0;
  EntryGraph step, entry;
  /// The host side of each input, then output, copy of `step`: the
  /// staging buffer or the caller's pinned buffer.
  std::vector<const void *> stepHostSides;
};

/// The CUDA side of a model. Its address is the `ctx` of the generated code.
struct CudaContext {
  const cuapi::Driver *api = nullptr;
  std::string modelName;
  int ordinal = 0;
  cuapi::CUdevice device = 0;
  cuapi::CUcontext context = nullptr; ///< The device's primary context.
  cuapi::CUstream stream = nullptr;
  cuapi::CUmodule module = nullptr;
  std::vector<cuapi::CUfunction> kernels;
  std::vector<std::string> kernelNames;
  std::string description; ///< "cuda:0 (NVIDIA H200)"

  /// The device arena: params, workspace, staging, cuBLASLt workspace.
  cuapi::CUdeviceptr arena = 0;
  size_t arenaBytes = 0;
  cuapi::CUdeviceptr params = 0, workspace = 0, staging = 0;
  cuapi::CUdeviceptr blasWorkspace = 0;
  size_t paramBytes = 0, stagingBytes = 0, blasWorkspaceBytes = 0;
  void *hostStaging = nullptr; ///< Pinned, stagingBytes.
  /// Pinned buffers of dlc_model_alloc_host (start -> bytes): an input or
  /// output inside one is copied from or to it directly, not through
  /// hostStaging.
  std::map<const char *, size_t> hostBuffers;
  /// dlc_model_measure_entries: CUDA events recorded around each run's
  /// entry, and the last run's time between them (-1: none).
  cuapi::CUevent entryStart = nullptr, entryEnd = nullptr;
  bool measuring = false;
  double lastEntryUs = -1;
  std::vector<EntryStaging> entryStaging;
  std::vector<EntryGraphs> graphs;
  /// Each entry's host function arguments (device params, staging,
  /// workspace, this context): made at creation, as the arena and the
  /// staging never move.
  std::vector<std::vector<void *>> entryArgs;
  /// Per run: the host side of each input, then output, copy (in
  /// hostBuffers or the staging buffer; kept to spare the run an
  /// allocation).
  std::vector<const void *> hostSides;
  std::unique_ptr<GemmCache, GemmCacheDeleter> gemm;

  /// Data-parallel entries (nccl.cpp): the model's NCCL communicator
  /// (dlc_model_set_comm), the bucket the host code is filling, and the
  /// most shard values one sharded collective carries (found while
  /// planning; the communicator's staging holds (ranks + 1) times that).
  std::unique_ptr<NcclComm, NcclCommDeleter> comm;
  std::vector<CudaCommPiece> commBucket;
  int64_t commShardValues = 0;

  /// While dlc_model_create plans the GEMMs: each entry's host function
  /// runs once, its launches and copies doing nothing and its GEMMs
  /// (cuBLASLt's heuristic, cached) only planned.
  bool planning = false;

  /// The first failure of the current run (sticky until the run ends).
  dlc_status failStatus = DLC_OK;
  std::string failMessage;

  CudaContext() = default;
  CudaContext(const CudaContext &) = delete;
  CudaContext &operator=(const CudaContext &) = delete;
  /// Frees everything: graphs, cuBLASLt state, module, memory, stream, and
  /// releases the primary context.
  ~CudaContext();

  bool failed() const { return failStatus != DLC_OK; }
  /// Whether [p, p + bytes) lies inside one of hostBuffers.
  bool inHostBuffer(const void *p, size_t bytes) const;
  /// Records a failure unless one is recorded already.
  void recordFailure(dlc_status status, std::string message) noexcept;
  /// Records the failure of a CUDA call `what` unless one is recorded.
  void recordCudaFailure(const std::string &what,
                         cuapi::CUresult result) noexcept;
};

/// The status a failing CUDA call maps to: DLC_ERR_OUT_OF_MEMORY for
/// CUDA_ERROR_OUT_OF_MEMORY, DLC_ERR_DEVICE_UNAVAILABLE otherwise.
dlc_status cudaStatus(cuapi::CUresult result);

/// Checks the CUDA part of a descriptor: DLC_ERR_FORMAT when malformed.
dlc_status checkCudaModule(const std::string &model,
                           const dlc_cuda_module &module, size_t numEntries);

/// Sets up `model` on CUDA device `ordinal` (primary context, stream, PTX
/// module and kernels, device arena, pinned staging), and plans every GEMM
/// of its entries (cuBLASLt's heuristic runs here, once per GEMM).
dlc_status createCudaContext(const ModelDecl &model,
                             const dlc_cuda_module &module, int ordinal,
                             std::unique_ptr<CudaContext> &out);

/// Copies the params (the host mirror, `bytes` long) to / from the device.
dlc_status cudaUploadParams(CudaContext &cuda, const void *host, size_t bytes);
dlc_status cudaDownloadParams(CudaContext &cuda, void *host, size_t bytes);

/// Pinned host memory for the model's inputs and outputs
/// (dlc_model_alloc_host), and its release: DLC_ERR_INVALID_ARGUMENT for a
/// pointer that is not one of the model's.
dlc_status cudaAllocHost(CudaContext &cuda, size_t bytes, void **out);
dlc_status cudaFreeHost(CudaContext &cuda, void *p);

/// Starts or stops measuring each run's entry with CUDA events (created
/// on first use).
dlc_status cudaMeasureEntries(CudaContext &cuda, bool on);

/// Gives the model the NCCL communicator of `comm`'s job (NULL: none):
/// loads libnccl.so.2, broadcasts rank 0's unique id over `comm` and joins
/// (collective: every rank calls it), then allocates the staging of the
/// sharded collectives. DLC_ERR_DEVICE_UNAVAILABLE without a usable NCCL.
dlc_status cudaSetComm(CudaContext &cuda, dlc_comm *comm);

/// Before a run: the bucket empty, the communicator's events free.
void cudaCommBeginRun(CudaContext &cuda);
/// After an entry's host function: the model's stream waits for the
/// buckets left in flight on the communication stream.
void cudaCommEndEntry(CudaContext &cuda);

/// Destroys the entries' CUDA graphs: the next run of each is direct, and
/// the one after captures a new graph.
void cudaDropGraphs(CudaContext &cuda);

/// Waits until the run's work on the stream is done. With a communicator,
/// polls the stream against the communicator's deadline and NCCL's
/// asynchronous errors, and aborts the communicator when a rank is lost
/// (DLC_ERR_COMMUNICATION); a failure is recorded in `cuda`.
void cudaFinishRun(CudaContext &cuda);

/// Runs entry `e` (host function `fn`) on the device: stages the inputs,
/// runs the entry directly or as a CUDA graph, copies the outputs back and
/// synchronizes. Inputs and outputs in the model's pinned host buffers are
/// copied directly; others through the pinned staging buffer.
dlc_status cudaRunEntry(CudaContext &cuda, const ModelDecl &model, size_t e,
                        dlc_entry_fn fn, const void *const *inputs,
                        void *const *outputs);

} // namespace dlc::rt

#endif // DLCRT_CUDA_BACKEND_H
