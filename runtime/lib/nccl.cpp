//===- nccl.cpp - NCCL collectives of data-parallel CUDA entries ----------===//
//
// A data-parallel step compiled for CUDA reduces its gradients with NCCL:
// its host code calls dlc_cuda_comm_* (dlc/dlc_cuda_abi.h), the CUDA forms
// of the CPU communicator's calls (comm.cpp), and they enqueue NCCL
// collectives on the model's stream, so that the entry's CUDA graph records
// them with its kernels. libnccl.so.2 is loaded at run time, like
// cuBLASLt: a program that never runs a data-parallel entry on CUDA does not
// need it. The communicator's unique id travels over the model's dlc_comm
// (MPI). A run ends by polling its stream against the communicator's
// deadline and NCCL's asynchronous errors: when a rank died, the others
// abort their NCCL communicator and fail with DLC_ERR_COMMUNICATION.
//
//===----------------------------------------------------------------------===//

#include "comm.h"
#include "cuda_backend.h"

#include "dlc/dlc_cuda_abi.h"

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <thread>

using namespace dlc::rt;
using namespace dlc::rt::cuapi;

/// The model's NCCL communicator, its rank in the job, and the device
/// staging of the sharded collectives.
struct dlc::rt::NcclComm {
  const Driver *driver = nullptr;
  void *lib = nullptr;
  Nccl api;
  ncclComm_t comm = nullptr;
  int rank = 0, size = 1;
  double timeout = 300;
  /// Set once the communicator was aborted after a failure: the job's
  /// collectives cannot run again.
  std::string aborted;
  CUdeviceptr staging = 0;
  /// Overlap (dlc_cuda_comm_bucket_start): the stream the started buckets
  /// are reduced on, the events that order them against the model's
  /// stream (two per bucket, made on first use and reused by later runs),
  /// and those of the buckets the model's stream has not waited for yet.
  CUstream stream = nullptr;
  std::vector<CUevent> events;
  size_t eventsUsed = 0;
  std::vector<CUevent> pending;

  ~NcclComm() {
    if (comm && aborted.empty())
      api.ncclCommDestroy(comm);
    for (CUevent e : events)
      driver->cuEventDestroy(e);
    if (stream)
      driver->cuStreamDestroy(stream);
    if (staging)
      driver->cuMemFree(staging);
    if (lib)
      dlclose(lib);
  }

  std::string errorText(ncclResult_t r) const {
    const char *text = api.ncclGetErrorString(r);
    return std::string(text ? text : "unknown NCCL error") + " (NCCL error " +
           std::to_string(r) + ")";
  }

  std::string who() const {
    return "rank " + std::to_string(rank) + " of " + std::to_string(size);
  }

  /// Aborts the communicator (its kernels stop waiting for lost ranks).
  void abort(const std::string &why) {
    if (aborted.empty() && comm)
      api.ncclCommAbort(comm);
    aborted = why;
  }
};

void dlc::rt::NcclCommDeleter::operator()(NcclComm *comm) const noexcept {
  delete comm;
}

namespace {

/// Loads libnccl.so.2 (DLC_NCCL_LIBRARY, else the soname) into `c`.
/// Returns why it cannot be used, or "".
std::string loadNccl(NcclComm &c) {
  const char *env = std::getenv("DLC_NCCL_LIBRARY");
  const char *name = env && *env ? env : "libnccl.so.2";
  c.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!c.lib)
    return std::string("cannot load ") + name + " (" + dlerror() +
           "): data-parallel training on CUDA needs NCCL 2.10 or later (pip "
           "install nvidia-nccl-cu13, or Debian's libnccl2), or run the "
           "ranks on the CPU (DLC_DEVICE=cpu)";
  Nccl &a = c.api;
  bool ok = true;
  auto sym = [&](auto &fn, const char *symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(c.lib, symbol));
    ok = ok && fn != nullptr;
  };
  sym(a.ncclGetVersion, "ncclGetVersion");
  sym(a.ncclGetErrorString, "ncclGetErrorString");
  sym(a.ncclGetUniqueId, "ncclGetUniqueId");
  sym(a.ncclCommInitRank, "ncclCommInitRank");
  sym(a.ncclCommDestroy, "ncclCommDestroy");
  sym(a.ncclCommAbort, "ncclCommAbort");
  sym(a.ncclCommGetAsyncError, "ncclCommGetAsyncError");
  sym(a.ncclGroupStart, "ncclGroupStart");
  sym(a.ncclGroupEnd, "ncclGroupEnd");
  sym(a.ncclAllReduce, "ncclAllReduce");
  sym(a.ncclReduceScatter, "ncclReduceScatter");
  sym(a.ncclAllGather, "ncclAllGather");
  if (!ok)
    return std::string(name) + " lacks a function of NCCL 2.10";
  int version = 0;
  if (a.ncclGetVersion(&version) != ncclSuccess || version < kNcclMinVersion)
    return std::string(name) + " is NCCL version code " +
           std::to_string(version) + ": dlc needs 2.10 or later (its ncclAvg)";
  return "";
}

NcclComm *commOf(CudaContext &c) { return c.comm.get(); }

/// The run's communicator, or a failure recorded in `c` when there is
/// none or it was aborted.
NcclComm *usableComm(CudaContext &c) {
  NcclComm *comm = commOf(c);
  if (!comm)
    c.recordFailure(DLC_ERR_INVALID_ARGUMENT,
                    "the entry reduces over the ranks of a data-parallel job: "
                    "give the model a communicator first (dlc_model_set_comm)");
  else if (!comm->aborted.empty())
    c.recordFailure(DLC_ERR_COMMUNICATION,
                    comm->who() +
                        ": the NCCL communicator was aborted after "
                        "an earlier failure (" +
                        comm->aborted + "): restart the job");
  return c.failed() ? nullptr : comm;
}

void ncclFailure(CudaContext &c, const NcclComm &comm, const char *call,
                 ncclResult_t r) {
  c.recordFailure(DLC_ERR_COMMUNICATION,
                  comm.who() + ": " + call + " failed: " + comm.errorText(r));
}

ncclRedOp_t ncclOp(int32_t op) {
  return op == DLC_REDUCE_SUM ? ncclSum : ncclAvg;
}

/// Takes the bucket; false (the bucket dropped) when the run failed or the
/// context is planning.
bool takeBucket(CudaContext &c, std::vector<CudaCommPiece> &bucket) {
  bucket.swap(c.commBucket);
  c.commBucket.clear();
  return !c.failed() && !c.planning;
}

/// Checks that one side of every pair is the other's shard over the job's
/// ranks (`wholeSources`: the sources are whole); records a failure if not.
bool checkPairs(CudaContext &c, const NcclComm &comm,
                const std::vector<CudaCommPiece> &pairs, bool wholeSources) {
  for (const CudaCommPiece &p : pairs) {
    int64_t whole = wholeSources ? p.count : p.destCount;
    int64_t shard = wholeSources ? p.destCount : p.count;
    if (shard != shardElements(whole, comm.size)) {
      c.recordFailure(DLC_ERR_INVALID_ARGUMENT,
                      "the model was compiled for another number of ranks: a "
                      "shard of " +
                          std::to_string(whole) + " values over " +
                          std::to_string(comm.size) + " ranks is not " +
                          std::to_string(shard) +
                          " (compile with "
                          "--data-parallel=" +
                          std::to_string(comm.size) + ")");
      return false;
    }
  }
  return true;
}

/// Whether the staging holds `shards` values per rank (planning measured
/// every sharded bucket); records a failure if not.
bool staged(CudaContext &c, int64_t shards) {
  if (shards <= c.commShardValues)
    return true;
  c.recordFailure(DLC_ERR_INTERNAL,
                  "a sharded collective of " + std::to_string(shards) +
                      " values per rank, more than the " +
                      std::to_string(c.commShardValues) +
                      " planned at creation (a compiler bug)");
  return false;
}

/// The shard values of a sharded bucket: the shard side of each pair
/// (`wholeSources`: the destinations), packed.
int64_t shardValues(const std::vector<CudaCommPiece> &pairs,
                    bool wholeSources) {
  int64_t shards = 0;
  for (const CudaCommPiece &p : pairs)
    shards += wholeSources ? p.destCount : p.count;
  return shards;
}

/// While planning: the shard values of a sharded bucket set the size of
/// the communicator's staging.
void planPairs(CudaContext &c, bool wholeSources) {
  c.commShardValues =
      std::max(c.commShardValues, shardValues(c.commBucket, wholeSources));
  c.commBucket.clear();
}

/// A sharded collective's bucket of pairs (takeBucket) and the
/// communicator it runs on, its pairs checked against the job's ranks
/// (checkPairs); null after a failure, or while planning.
NcclComm *takePairs(CudaContext &c, bool wholeSources,
                    std::vector<CudaCommPiece> &pairs) {
  if (!takeBucket(c, pairs))
    return nullptr;
  NcclComm *comm = usableComm(c);
  return comm && checkPairs(c, *comm, pairs, wholeSources) ? comm : nullptr;
}

void copy(CudaContext &c, CUdeviceptr dst, CUdeviceptr src, int64_t floats) {
  if (floats > 0 && !c.failed())
    if (CUresult r = c.api->cuMemcpyDtoDAsync(
            dst, src, static_cast<size_t>(floats) * sizeof(float), c.stream))
      c.recordCudaFailure("cuMemcpyDtoDAsync (a sharded collective)", r);
}

void zero(CudaContext &c, CUdeviceptr dst, int64_t floats) {
  if (floats > 0 && !c.failed())
    if (CUresult r = c.api->cuMemsetD8Async(
            dst, 0, static_cast<size_t>(floats) * sizeof(float), c.stream))
      c.recordCudaFailure("cuMemsetD8Async (a sharded collective)", r);
}

CUdeviceptr at(CUdeviceptr base, int64_t floats) {
  return base + static_cast<CUdeviceptr>(floats) * sizeof(float);
}

/// The bucket's all-reduces on `stream`, in one NCCL group (NCCL fuses
/// them into one launch).
void allReduce(CudaContext &c, NcclComm &comm,
               const std::vector<CudaCommPiece> &bucket, int32_t op,
               CUstream stream) {
  const Nccl &n = comm.api;
  if (ncclResult_t r = n.ncclGroupStart())
    return ncclFailure(c, comm, "ncclGroupStart", r);
  ncclResult_t failed = ncclSuccess;
  for (const CudaCommPiece &p : bucket)
    if (failed == ncclSuccess && p.count > 0)
      failed = n.ncclAllReduce(reinterpret_cast<const void *>(p.data),
                               reinterpret_cast<void *>(p.data),
                               static_cast<size_t>(p.count), ncclFloat32,
                               ncclOp(op), comm.comm, stream);
  ncclResult_t ended = n.ncclGroupEnd();
  if (failed != ncclSuccess)
    return ncclFailure(c, comm, "ncclAllReduce", failed);
  if (ended != ncclSuccess)
    ncclFailure(c, comm, "ncclGroupEnd", ended);
}

/// The run's next event of the communicator's pool, made on first use.
CUevent nextEvent(CudaContext &c, NcclComm &comm) {
  if (comm.eventsUsed == comm.events.size()) {
    CUevent e = nullptr;
    if (CUresult r = c.api->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING)) {
      c.recordCudaFailure("cuEventCreate (a started bucket)", r);
      return nullptr;
    }
    comm.events.push_back(e);
  }
  return comm.events[comm.eventsUsed++];
}

} // namespace

void dlc::rt::cudaCommBeginRun(CudaContext &c) {
  c.commBucket.clear();
  if (NcclComm *comm = commOf(c)) {
    comm->eventsUsed = 0;
    comm->pending.clear();
  }
}

void dlc::rt::cudaCommEndEntry(CudaContext &c) {
  // The generated code waits before it reads a bucket again; a bucket it
  // left in flight joins the model's stream here (a capture must end
  // joined).
  dlc_cuda_comm_wait(&c);
}

dlc_status dlc::rt::cudaSetComm(CudaContext &c, dlc_comm *comm) {
  // The captured graphs hold the old communicator's collectives.
  cudaDropGraphs(c);
  c.comm.reset();
  if (!comm)
    return DLC_OK;
  auto where = [&] {
    return "model " + quote(c.modelName) + " on " + c.description + ": ";
  };
  std::unique_ptr<NcclComm, NcclCommDeleter> n(new NcclComm);
  n->driver = c.api;
  n->rank = dlc_comm_rank(comm);
  n->size = dlc_comm_size(comm);
  n->timeout = commTimeoutSeconds(comm);
  if (std::string why = loadNccl(*n); !why.empty())
    return fail(DLC_ERR_DEVICE_UNAVAILABLE, where() + why);
  ncclUniqueId id = {};
  if (n->rank == 0)
    if (ncclResult_t r = n->api.ncclGetUniqueId(&id))
      return fail(DLC_ERR_COMMUNICATION,
                  where() + "ncclGetUniqueId failed: " + n->errorText(r));
  if (dlc_status s = broadcastBytes(comm, &id, sizeof id, /*root=*/0))
    return s;
  if (CUresult r = c.api->cuCtxSetCurrent(c.context))
    return fail(cudaStatus(r),
                where() + "cuCtxSetCurrent failed: " + cudaErrorText(r));
  if (ncclResult_t r =
          n->api.ncclCommInitRank(&n->comm, n->size, id, n->rank)) {
    n->comm = nullptr;
    return fail(DLC_ERR_COMMUNICATION,
                where() + n->who() +
                    ": ncclCommInitRank failed: " + n->errorText(r) +
                    " (each rank needs a GPU of its own: "
                    "dlc_comm_local_rank)");
  }
  if (CUresult r = c.api->cuStreamCreate(&n->stream, CU_STREAM_NON_BLOCKING))
    return fail(cudaStatus(r),
                where() + "cuStreamCreate failed: " + cudaErrorText(r));
  if (c.commShardValues > 0) {
    size_t bytes =
        static_cast<size_t>((n->size + 1) * c.commShardValues) * sizeof(float);
    if (CUresult r = c.api->cuMemAlloc(&n->staging, bytes))
      return fail(cudaStatus(r), where() + "cuMemAlloc of " +
                                     std::to_string(bytes) +
                                     " bytes for the sharded collectives "
                                     "failed: " +
                                     cudaErrorText(r));
  }
  c.comm = std::move(n);
  return DLC_OK;
}

void dlc::rt::cudaFinishRun(CudaContext &c) {
  const Driver &d = *c.api;
  NcclComm *comm = commOf(c);
  if (!comm || !comm->aborted.empty()) {
    if (CUresult r = d.cuStreamSynchronize(c.stream))
      c.recordCudaFailure("cuStreamSynchronize (running the entry)", r);
    return;
  }
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + std::chrono::duration<double>(comm->timeout);
  auto patience = start + std::chrono::milliseconds(200);
  for (;;) {
    CUresult r = d.cuStreamQuery(c.stream);
    if (r == CUDA_SUCCESS)
      return;
    if (r != CUDA_ERROR_NOT_READY)
      return c.recordCudaFailure("cuStreamQuery (running the entry)", r);
    ncclResult_t async = ncclSuccess;
    if (comm->api.ncclCommGetAsyncError(comm->comm, &async) == ncclSuccess &&
        async != ncclSuccess && async != ncclInProgress) {
      std::string why = comm->errorText(async);
      comm->abort(why);
      return c.recordFailure(DLC_ERR_COMMUNICATION,
                             comm->who() +
                                 ": NCCL failed while the step ran: " + why +
                                 " (another rank died, or the network failed)");
    }
    auto now = std::chrono::steady_clock::now();
    if (now > deadline) {
      std::string why = "the step's collectives waited " +
                        std::to_string(static_cast<int64_t>(comm->timeout)) +
                        " s for the other ranks";
      comm->abort(why);
      return c.recordFailure(DLC_ERR_COMMUNICATION,
                             comm->who() + ": " + why +
                                 ": one of them died or hangs "
                                 "(DLC_COMM_TIMEOUT sets the limit)");
    }
    if (now > patience)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

//===-- Called by generated code -----------------------------------------===//

extern "C" {

void dlc_cuda_comm_bucket_add(void *ctx, int64_t address, int64_t count,
                              int32_t dtype) {
  auto &c = *static_cast<CudaContext *>(ctx);
  if (c.failed())
    return;
  if (dtype != DLC_F32 || count < 0)
    return c.recordFailure(
        DLC_ERR_INTERNAL,
        "all-reduce of a " +
            std::string(dlc_dtype_name(static_cast<dlc_dtype>(dtype))) +
            " buffer: only f32 is supported (a compiler bug)");
  c.commBucket.push_back({static_cast<CUdeviceptr>(address), count, 0, 0});
}

void dlc_cuda_comm_bucket_reduce(void *ctx, int32_t op) {
  auto &c = *static_cast<CudaContext *>(ctx);
  std::vector<CudaCommPiece> bucket;
  if (!takeBucket(c, bucket))
    return;
  if (NcclComm *comm = usableComm(c))
    allReduce(c, *comm, bucket, op, c.stream);
}

void dlc_cuda_comm_bucket_start(void *ctx, int32_t op) {
  auto &c = *static_cast<CudaContext *>(ctx);
  std::vector<CudaCommPiece> bucket;
  if (!takeBucket(c, bucket))
    return;
  NcclComm *comm = usableComm(c);
  if (!comm)
    return;
  // The communication stream waits for the kernels that wrote the bucket;
  // the model's stream goes on with the backward pass meanwhile, and waits
  // for the all-reduce at dlc_cuda_comm_wait.
  CUevent ready = nextEvent(c, *comm), done = nextEvent(c, *comm);
  if (c.failed())
    return;
  if (CUresult r = c.api->cuEventRecord(ready, c.stream))
    return c.recordCudaFailure("cuEventRecord (a started bucket)", r);
  if (CUresult r = c.api->cuStreamWaitEvent(comm->stream, ready, 0))
    return c.recordCudaFailure("cuStreamWaitEvent (a started bucket)", r);
  allReduce(c, *comm, bucket, op, comm->stream);
  if (c.failed())
    return;
  if (CUresult r = c.api->cuEventRecord(done, comm->stream))
    return c.recordCudaFailure("cuEventRecord (a started bucket)", r);
  comm->pending.push_back(done);
}

void dlc_cuda_comm_wait(void *ctx) {
  auto &c = *static_cast<CudaContext *>(ctx);
  NcclComm *comm = commOf(c);
  if (!comm)
    return;
  for (CUevent done : comm->pending)
    if (!c.failed())
      if (CUresult r = c.api->cuStreamWaitEvent(c.stream, done, 0))
        c.recordCudaFailure("cuStreamWaitEvent (waiting for a bucket)", r);
  comm->pending.clear();
}

void dlc_cuda_comm_bucket_add_pair(void *ctx, int64_t source,
                                   int64_t sourceCount, int64_t dest,
                                   int64_t destCount, int32_t dtype) {
  auto &c = *static_cast<CudaContext *>(ctx);
  if (c.failed())
    return;
  if (dtype != DLC_F32 || sourceCount < 0 || destCount < 0)
    return c.recordFailure(
        DLC_ERR_INTERNAL,
        "a sharded collective of a " +
            std::string(dlc_dtype_name(static_cast<dlc_dtype>(dtype))) +
            " buffer: only f32 is supported (a compiler bug)");
  c.commBucket.push_back({static_cast<CUdeviceptr>(source), sourceCount,
                          static_cast<CUdeviceptr>(dest), destCount});
}

// The sharded collectives go through the communicator's staging, as NCCL's
// reduce-scatter and all-gather take N equal blocks in one buffer: a
// bucket's S shard values (one side of its pairs, packed) make blocks of S
// values, block r holding every pair's r-th shard, zero past a tensor's end.

void dlc_cuda_comm_bucket_reduce_scatter(void *ctx, int32_t op) {
  auto &c = *static_cast<CudaContext *>(ctx);
  if (c.planning)
    return planPairs(c, /*wholeSources=*/true);
  std::vector<CudaCommPiece> pairs;
  NcclComm *comm = takePairs(c, /*wholeSources=*/true, pairs);
  int64_t shards = shardValues(pairs, /*wholeSources=*/true);
  if (!comm || !staged(c, shards))
    return;
  int64_t ranks = comm->size;
  CUdeviceptr send = comm->staging, recv = at(send, ranks * shards);
  for (int64_t r = 0, offset = 0; r < ranks; ++r)
    for (const CudaCommPiece &p : pairs) {
      int64_t part = shardPart(p.count, p.destCount, r);
      copy(c, at(send, offset), at(p.data, r * p.destCount), part);
      zero(c, at(send, offset + part), p.destCount - part);
      offset += p.destCount;
    }
  if (c.failed() || shards == 0)
    return;
  if (ncclResult_t r = comm->api.ncclReduceScatter(
          reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv),
          static_cast<size_t>(shards), ncclFloat32, ncclOp(op), comm->comm,
          c.stream))
    return ncclFailure(c, *comm, "ncclReduceScatter", r);
  for (const CudaCommPiece &p : pairs) {
    copy(c, p.dest, recv, p.destCount);
    recv = at(recv, p.destCount);
  }
}

void dlc_cuda_comm_bucket_all_gather(void *ctx) {
  auto &c = *static_cast<CudaContext *>(ctx);
  if (c.planning)
    return planPairs(c, /*wholeSources=*/false);
  std::vector<CudaCommPiece> pairs;
  NcclComm *comm = takePairs(c, /*wholeSources=*/false, pairs);
  int64_t shards = shardValues(pairs, /*wholeSources=*/false);
  if (!comm || !staged(c, shards))
    return;
  int64_t ranks = comm->size;
  CUdeviceptr recv = comm->staging, send = at(recv, ranks * shards);
  int64_t offset = 0;
  for (const CudaCommPiece &p : pairs) {
    copy(c, at(send, offset), p.data, p.count);
    offset += p.count;
  }
  if (c.failed() || shards == 0)
    return;
  if (ncclResult_t r = comm->api.ncclAllGather(
          reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv),
          static_cast<size_t>(shards), ncclFloat32, comm->comm, c.stream))
    return ncclFailure(c, *comm, "ncclAllGather", r);
  offset = 0;
  for (int64_t r = 0; r < ranks; ++r)
    for (const CudaCommPiece &p : pairs) {
      copy(c, at(p.dest, r * p.count), at(recv, offset),
           shardPart(p.destCount, p.count, r));
      offset += p.count;
    }
}

void dlc_cuda_comm_bucket_shard(void *ctx) {
  auto &c = *static_cast<CudaContext *>(ctx);
  std::vector<CudaCommPiece> pairs;
  NcclComm *comm = takePairs(c, /*wholeSources=*/true, pairs);
  if (!comm)
    return;
  for (const CudaCommPiece &p : pairs) {
    int64_t part = shardPart(p.count, p.destCount, comm->rank);
    copy(c, p.dest, at(p.data, comm->rank * p.destCount), part);
    zero(c, at(p.dest, part), p.destCount - part);
  }
}

} // extern "C"
