//===- comm.cpp - dlc_comm: data-parallel collectives over MPI ------------===//
//
// libmpi is loaded at run time (dlopen, like cuBLASLt), so that a program
// that never creates a communicator does not need it. The handles are Open
// MPI's (MPI_COMM_WORLD is the address of `ompi_mpi_comm_world`, ...), whose
// ABI Debian's libmpi.so.40 has. Every collective is non-blocking underneath
// and polled against a deadline, so that a rank that died or hangs makes the
// others fail with DLC_ERR_COMMUNICATION instead of waiting forever.
//
//===----------------------------------------------------------------------===//

#include "comm.h"
#include "internal.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <thread>

using namespace dlc::rt;

namespace {

/// Open MPI's entry points and predefined handles.
struct MpiApi {
  void *lib = nullptr;
  int (*initialized)(int *) = nullptr;
  int (*finalized)(int *) = nullptr;
  int (*initThread)(int *, char ***, int, int *) = nullptr;
  int (*commRank)(void *, int *) = nullptr;
  int (*commSize)(void *, int *) = nullptr;
  int (*iallreduce)(const void *, void *, int, void *, void *, void *,
                    void **) = nullptr;
  int (*ireduceScatter)(const void *, void *, const int *, void *, void *,
                        void *, void **) = nullptr;
  int (*iallgatherv)(const void *, int, void *, void *, const int *,
                     const int *, void *, void *, void **) = nullptr;
  int (*igather)(const void *, int, void *, void *, int, void *, int, void *,
                 void **) = nullptr;
  int (*ibcast)(void *, int, void *, int, void *, void **) = nullptr;
  int (*test)(void **, int *, void *) = nullptr;
  int (*abort)(void *, int) = nullptr;
  int (*finalize)() = nullptr;
  void *world = nullptr, *f32 = nullptr, *u64 = nullptr, *byte = nullptr;
  void *sum = nullptr, *max = nullptr, *min = nullptr;
};

constexpr int kThreadSerialized = 2;                // MPI_THREAD_SERIALIZED
void *const kInPlace = reinterpret_cast<void *>(1); // MPI_IN_PLACE

/// The launcher's variable that says this process is one of several ranks
/// ("OMPI_COMM_WORLD_SIZE=4"), or "" for a process started alone.
std::string launchedAsRank() {
  for (const char *name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "WORLD_SIZE"}) {
    const char *env = std::getenv(name);
    if (env && *env && std::string(env) != "1" &&
        (std::string(name) == "PMIX_RANK" || std::strtol(env, nullptr, 10) > 1))
      return std::string(name) + "=" + env;
  }
  return "";
}

/// Loads libmpi: DLC_MPI_LIBRARY, else Open MPI's soname. Returns an error
/// message, or "".
std::string loadMpi(MpiApi &api) {
  const char *env = std::getenv("DLC_MPI_LIBRARY");
  std::string tried;
  for (const char *name : {env, "libmpi.so.40", "libmpi.so"}) {
    if (!name || !*name)
      continue;
    api.lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (api.lib)
      break;
    tried += std::string(tried.empty() ? "" : "; ") + dlerror();
    if (name == env)
      return "cannot load DLC_MPI_LIBRARY: " + tried;
  }
  if (!api.lib)
    return "cannot load libmpi (" + tried +
           "): data-parallel training needs Open MPI (Debian: apt-get "
           "install openmpi-bin)";
  auto sym = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(api.lib, name));
    return fn != nullptr;
  };
  bool ok = sym(api.initialized, "MPI_Initialized") &&
            sym(api.finalized, "MPI_Finalized") &&
            sym(api.initThread, "MPI_Init_thread") &&
            sym(api.commRank, "MPI_Comm_rank") &&
            sym(api.commSize, "MPI_Comm_size") &&
            sym(api.iallreduce, "MPI_Iallreduce") &&
            sym(api.ireduceScatter, "MPI_Ireduce_scatter") &&
            sym(api.iallgatherv, "MPI_Iallgatherv") &&
            sym(api.igather, "MPI_Igather") && sym(api.ibcast, "MPI_Ibcast") &&
            sym(api.test, "MPI_Test") && sym(api.abort, "MPI_Abort") &&
            sym(api.finalize, "MPI_Finalize");
  if (!ok)
    return "the MPI library lacks an MPI-3 function";
  api.world = dlsym(api.lib, "ompi_mpi_comm_world");
  api.f32 = dlsym(api.lib, "ompi_mpi_float");
  api.u64 = dlsym(api.lib, "ompi_mpi_uint64_t");
  api.byte = dlsym(api.lib, "ompi_mpi_byte");
  api.sum = dlsym(api.lib, "ompi_mpi_op_sum");
  api.max = dlsym(api.lib, "ompi_mpi_op_max");
  api.min = dlsym(api.lib, "ompi_mpi_op_min");
  if (!api.world || !api.f32 || !api.u64 || !api.byte || !api.sum || !api.max ||
      !api.min)
    return "the MPI library is not Open MPI's (dlc uses Open MPI's ABI)";
  return "";
}

/// Seconds a collective waits for the other ranks: DLC_COMM_TIMEOUT, else
/// 300. Returns a negative value for a bad setting.
double timeoutSeconds() {
  const char *env = std::getenv("DLC_COMM_TIMEOUT");
  if (!env || !*env)
    return 300;
  char *end = nullptr;
  double v = std::strtod(env, &end);
  return end && *end == '\0' && std::isfinite(v) && v > 0 ? v : -1;
}

/// The decimal value of environment variable `name`; -1 when it is unset,
/// empty or not a number.
long envLong(const char *name) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return -1;
  char *end = nullptr;
  long v = std::strtol(env, &end, 10);
  return end && *end == '\0' ? v : -1;
}

/// A job that torchrun (or another launcher that sets RANK and
/// WORLD_SIZE) started is not an MPI job: each process would be a job of
/// one rank, training alone on its data. Returns why, or "".
std::string launcherMismatch(int rank, int size) {
  long worldSize = envLong("WORLD_SIZE"), worldRank = envLong("RANK");
  if ((worldSize < 0 || worldSize == size) &&
      (worldRank < 0 || worldRank == rank))
    return "";
  return "the environment says rank " + std::to_string(worldRank) + " of " +
         std::to_string(worldSize) +
         " (RANK, WORLD_SIZE: torchrun's), but MPI says rank " +
         std::to_string(rank) + " of " + std::to_string(size) +
         ": dlc's ranks talk through MPI, so start them with mpirun -np " +
         std::to_string(worldSize > 0 ? worldSize : size) +
         " (torchrun starts processes that MPI does not join)";
}

} // namespace

uint64_t dlc::rt::fnv1a(const void *data, size_t bytes, uint64_t hash) {
  for (size_t i = 0; i < bytes; ++i)
    hash =
        (hash ^ static_cast<const unsigned char *>(data)[i]) * 0x100000001b3ULL;
  return hash;
}

struct dlc_comm {
  /// The values of each rank's shard one piece of a reduce-scatter or
  /// all-gather carries (256 KiB of f32, like an all-reduce's pieces).
  static constexpr int64_t kShardPiece = DLC_COMM_SHARD_PIECE;
  MpiApi api;
  std::vector<float> pieceStaging; ///< One reduce-scatter piece's blocks.
  int rank = 0, size = 1;
  bool initialisedMpi = false; ///< MPI_Finalize is ours to call.
  double timeout = 300;

  /// Polls `request` until it completes or the deadline passes (`what`
  /// names the collective in the error). Non-blocking collectives progress
  /// only inside MPI calls: it polls without pause for a while (the other
  /// ranks are usually close), then backs off so that a long wait does not
  /// take a core.
  dlc_status wait(void *request, const char *what) {
    auto start = std::chrono::steady_clock::now();
    auto deadline = start + std::chrono::duration<double>(timeout);
    auto patience = start + std::chrono::milliseconds(200);
    for (;;) {
      int done = 0;
      if (int rc = api.test(&request, &done, nullptr))
        return fail(DLC_ERR_COMMUNICATION,
                    "MPI_Test failed (MPI error " + std::to_string(rc) + ")");
      if (done)
        return DLC_OK;
      auto now = std::chrono::steady_clock::now();
      if (now > deadline)
        return fail(DLC_ERR_COMMUNICATION,
                    "rank " + std::to_string(rank) + " of " +
                        std::to_string(size) + ": " + what + " waited " +
                        std::to_string(static_cast<int64_t>(timeout)) +
                        " s for the other ranks: one of them died or "
                        "hangs (DLC_COMM_TIMEOUT sets the limit)");
      if (now > patience)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  static dlc_status started(int rc, const char *call) {
    return rc ? fail(DLC_ERR_COMMUNICATION, std::string(call) +
                                                " failed (MPI error " +
                                                std::to_string(rc) + ")")
              : DLC_OK;
  }

  /// Without MPI (a job of one rank, createDetachedComm): whether the
  /// collective is this rank's data as it is; an error when the
  /// communicator claims more ranks.
  bool alone(dlc_status &status) const {
    if (api.lib)
      return false;
    status = size == 1 ? DLC_OK
                       : fail(DLC_ERR_INTERNAL,
                              "a communicator outside MPI has no collectives "
                              "over " +
                                  std::to_string(size) + " ranks");
    return true;
  }

  /// An in-place all-reduce of `count` elements of `type` with `op`, in
  /// pieces of 256 KiB (Open MPI's non-blocking all-reduce of a 23 MB
  /// message takes 1.5 times the blocking one's time; in pieces of 256 KiB,
  /// 0.7 times).
  dlc_status allReduce(void *data, int64_t count, size_t elementBytes,
                       void *type, void *op) {
    if (dlc_status s = DLC_OK; alone(s))
      return s;
    auto *bytes = static_cast<char *>(data);
    const int64_t kPiece =
        std::max<int64_t>(1, (int64_t(1) << 18) / int64_t(elementBytes));
    for (int64_t at = 0; at < count; at += kPiece) {
      int n = static_cast<int>(std::min(kPiece, count - at));
      void *request = nullptr;
      if (dlc_status s =
              started(api.iallreduce(kInPlace, bytes + at * elementBytes, n,
                                     type, op, api.world, &request),
                      "MPI_Iallreduce"))
        return s;
      if (dlc_status s = wait(request, "an all-reduce"))
        return s;
    }
    return DLC_OK;
  }

  /// The values of piece `piece` of every rank's shard of `whole` values
  /// (`shard` each, the last ones shorter or empty, in pieces of
  /// kShardPiece), and where they start in the whole tensor.
  void pieceCounts(int64_t whole, int64_t shard, int64_t piece,
                   std::vector<int> &counts, std::vector<int> &starts) const {
    counts.resize(static_cast<size_t>(size));
    starts.resize(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) {
      int64_t part = shardPart(whole, shard, r);
      int64_t at = std::min(part, piece * kShardPiece);
      counts[r] = static_cast<int>(std::min(part - at, kShardPiece));
      starts[r] = static_cast<int>(std::min(whole, r * shard + at));
    }
  }

  static dlc_status tooLarge(const char *what, int64_t count) {
    return fail(DLC_ERR_COMMUNICATION,
                std::string(what) + " of " + std::to_string(count) +
                    " values is larger than MPI's counts");
  }

  /// Sums the `whole` floats of `send` over the ranks; this rank receives
  /// its shard of the sum (`shard` values, its part of them) in `recv`. In
  /// pieces of kShardPiece values of every rank's shard, like the
  /// all-reduce's: each piece's blocks are copied into `pieceStaging` in
  /// rank order, since a reduce-scatter sends one contiguous buffer.
  dlc_status reduceScatter(const float *send, float *recv, int64_t whole,
                           int64_t shard) {
    if (dlc_status s = DLC_OK; alone(s)) {
      if (s == DLC_OK)
        std::copy_n(send, shard, recv);
      return s;
    }
    if (whole > INT_MAX)
      return tooLarge("a reduce-scatter", whole);
    pieceStaging.resize(static_cast<size_t>(size * kShardPiece));
    std::vector<int> counts, starts;
    for (int64_t k = 0; k * kShardPiece < std::max<int64_t>(shard, 1); ++k) {
      pieceCounts(whole, shard, k, counts, starts);
      float *at = pieceStaging.data();
      for (int r = 0; r < size; ++r)
        at = std::copy_n(send + starts[r], counts[r], at);
      void *request = nullptr;
      if (dlc_status s =
              started(api.ireduceScatter(pieceStaging.data(),
                                         recv + k * kShardPiece, counts.data(),
                                         api.f32, api.sum, api.world, &request),
                      "MPI_Ireduce_scatter"))
        return s;
      if (dlc_status s = wait(request, "a reduce-scatter"))
        return s;
    }
    return DLC_OK;
  }

  /// Every rank's part of its shard (`shard` floats at `send`) into its
  /// place in `recv`, the `whole` floats, on every rank; in pieces of
  /// kShardPiece values of every shard.
  dlc_status allGather(const float *send, float *recv, int64_t whole,
                       int64_t shard) {
    if (dlc_status s = DLC_OK; alone(s)) {
      if (s == DLC_OK)
        std::copy_n(send, whole, recv);
      return s;
    }
    if (whole > INT_MAX)
      return tooLarge("an all-gather", whole);
    std::vector<int> counts, starts;
    for (int64_t k = 0; k * kShardPiece < std::max<int64_t>(shard, 1); ++k) {
      pieceCounts(whole, shard, k, counts, starts);
      void *request = nullptr;
      if (dlc_status s = started(
              api.iallgatherv(send + k * kShardPiece,
                              counts[static_cast<size_t>(rank)], api.f32, recv,
                              counts.data(), starts.data(), api.f32, api.world,
                              &request),
              "MPI_Iallgatherv"))
        return s;
      if (dlc_status s = wait(request, "an all-gather"))
        return s;
    }
    return DLC_OK;
  }

  /// Rank `root`'s `bytes` bytes at `data` into `data` on every rank. A
  /// communicator outside MPI (createDetachedComm) keeps its own bytes.
  dlc_status broadcast(void *data, size_t bytes, int root) {
    if (!api.lib)
      return DLC_OK;
    if (bytes > INT_MAX)
      return tooLarge("a broadcast", static_cast<int64_t>(bytes));
    void *request = nullptr;
    if (dlc_status s = started(api.ibcast(data, static_cast<int>(bytes),
                                          api.byte, root, api.world, &request),
                               "MPI_Ibcast"))
      return s;
    return wait(request, "a broadcast");
  }

  /// Every rank's `count` floats of `send`, in rank order, into `recv` on
  /// rank `root`.
  dlc_status gather(const float *send, float *recv, int64_t count, int root) {
    if (dlc_status s = DLC_OK; alone(s)) {
      if (s == DLC_OK)
        std::copy_n(send, count, recv);
      return s;
    }
    if (count > INT_MAX)
      return tooLarge("a gather", count);
    int n = static_cast<int>(count);
    void *request = nullptr;
    if (dlc_status s = started(api.igather(send, n, api.f32, recv, n, api.f32,
                                           root, api.world, &request),
                               "MPI_Igather"))
      return s;
    return wait(request, "a gather");
  }
};

dlc_status dlc::rt::sameOnEveryRank(dlc_comm *c, uint64_t hash, int32_t *same) {
  uint64_t hi = hash, lo = hash;
  if (dlc_status s = c->allReduce(&hi, 1, 8, c->api.u64, c->api.max))
    return s;
  if (dlc_status s = c->allReduce(&lo, 1, 8, c->api.u64, c->api.min))
    return s;
  *same = hi == lo;
  return DLC_OK;
}

dlc_status dlc::rt::broadcastBytes(dlc_comm *c, void *data, size_t bytes,
                                   int root) {
  return c->broadcast(data, bytes, root);
}

double dlc::rt::commTimeoutSeconds(const dlc_comm *c) { return c->timeout; }

dlc_comm *dlc::rt::createDetachedComm(int rank, int size) {
  auto c = std::make_unique<dlc_comm>();
  c->rank = rank;
  c->size = size;
  c->timeout = timeoutSeconds();
  if (c->timeout < 0)
    c->timeout = 300;
  return c.release();
}

dlc_status dlc::rt::gatherShards(dlc_comm *c, const float *shard,
                                 int64_t shardCount, float *whole,
                                 int64_t wholeCount) {
  std::vector<float> all;
  if (c->rank == 0)
    all.resize(static_cast<size_t>(shardCount * c->size));
  if (dlc_status s = c->gather(shard, all.data(), shardCount, /*root=*/0))
    return s;
  if (c->rank == 0)
    std::memcpy(whole, all.data(), static_cast<size_t>(wholeCount) * 4);
  return DLC_OK;
}

void dlc::rt::takeShard(const dlc_comm *c, const float *whole,
                        int64_t wholeCount, float *shard, int64_t shardCount) {
  int64_t part = shardPart(wholeCount, shardCount, c->rank);
  if (part > 0)
    std::memcpy(shard, whole + c->rank * shardCount,
                static_cast<size_t>(part) * sizeof(float));
  std::fill(shard + part, shard + shardCount, 0.0f);
}

extern "C" {

dlc_status dlc_comm_create_mpi(dlc_comm **out) {
  return guardStatus([&] {
    if (!out)
      return fail(DLC_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = nullptr;
    auto c = std::make_unique<dlc_comm>();
    c->timeout = timeoutSeconds();
    if (c->timeout < 0)
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "DLC_COMM_TIMEOUT must be a positive number of seconds");
    // A process started alone is a job of one rank, which needs no MPI:
    // DLC_MPI_LIBRARY=none says so, and so does a missing libmpi when no
    // launcher started the process as one of several ranks.
    const char *env = std::getenv("DLC_MPI_LIBRARY");
    bool none = env && std::string(env) == "none";
    std::string why = none ? "" : loadMpi(c->api);
    if (none || (!why.empty() && !(env && *env))) {
      if (std::string launcher = launchedAsRank(); !launcher.empty())
        return fail(none ? DLC_ERR_INVALID_ARGUMENT
                         : DLC_ERR_DEVICE_UNAVAILABLE,
                    (none ? std::string("DLC_MPI_LIBRARY=none")
                          : "no MPI library (" + why + ")") +
                        ", but the launcher started this process as one of "
                        "several ranks (" +
                        launcher + "): they need MPI to talk");
      if (c->api.lib)
        dlclose(c->api.lib);
      c->api = MpiApi();
      *out = c.release();
      return DLC_OK;
    }
    if (!why.empty())
      return fail(DLC_ERR_DEVICE_UNAVAILABLE, why);
    int initialised = 0, finalised = 0;
    c->api.initialized(&initialised);
    c->api.finalized(&finalised);
    if (finalised)
      return fail(DLC_ERR_INVALID_ARGUMENT, "MPI has been finalized");
    if (!initialised) {
      int provided = 0;
      if (int rc =
              c->api.initThread(nullptr, nullptr, kThreadSerialized, &provided))
        return fail(DLC_ERR_COMMUNICATION,
                    "MPI_Init_thread failed (MPI error " + std::to_string(rc) +
                        ")");
      c->initialisedMpi = true;
    }
    c->api.commRank(c->api.world, &c->rank);
    c->api.commSize(c->api.world, &c->size);
    if (std::string why = launcherMismatch(c->rank, c->size); !why.empty())
      return fail(DLC_ERR_COMMUNICATION, why);
    *out = c.release();
    return DLC_OK;
  });
}

void dlc_comm_destroy(dlc_comm *c) {
  if (!c)
    return;
  int finalised = 1;
  if (c->api.lib)
    c->api.finalized(&finalised);
  if (c->initialisedMpi && !finalised)
    c->api.finalize();
  delete c;
}

int32_t dlc_comm_rank(const dlc_comm *c) { return c ? c->rank : -1; }

int32_t dlc_comm_size(const dlc_comm *c) { return c ? c->size : -1; }

dlc_status dlc_comm_all_reduce(dlc_comm *c, float *data, int64_t count,
                               dlc_reduce_op op) {
  return guardStatus([&] {
    if (!c || (!data && count) || count < 0)
      return fail(DLC_ERR_INVALID_ARGUMENT, "NULL communicator or data");
    if (op != DLC_REDUCE_SUM && op != DLC_REDUCE_MEAN)
      return fail(DLC_ERR_INVALID_ARGUMENT, "unknown reduction");
    if (dlc_status s =
            c->allReduce(data, count, sizeof(float), c->api.f32, c->api.sum))
      return s;
    if (op == DLC_REDUCE_MEAN)
      for (int64_t i = 0; i < count; ++i)
        data[i] /= static_cast<float>(c->size);
    return DLC_OK;
  });
}

dlc_status dlc_comm_same_bytes(dlc_comm *c, const void *data, size_t bytes,
                               int32_t *same) {
  return guardStatus([&] {
    if (!c || (!data && bytes) || !same)
      return fail(DLC_ERR_INVALID_ARGUMENT, "NULL argument");
    return sameOnEveryRank(c, fnv1a(data, bytes), same);
  });
}

void dlc_comm_abort(dlc_comm *c, int32_t code) {
  if (c && c->api.lib)
    c->api.abort(c->api.world, code);
}

int32_t dlc_comm_local_rank(const dlc_comm *c) {
  if (!c)
    return -1;
  // torchrun's, then Open MPI's, then MPICH's (Hydra) local rank.
  for (const char *name :
       {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"})
    if (long v = envLong(name); v >= 0 && v < c->size)
      return static_cast<int32_t>(v);
  return c->size == 1 ? 0 : c->rank;
}

dlc::rt::CommContext::~CommContext() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  if (worker.joinable())
    worker.join();
}

//===-- Called by generated code ------------------------------------------===//

void dlc_comm_bucket_add(void *ctx, int64_t address, int64_t count,
                         int32_t dtype) {
  auto &c = *static_cast<CommContext *>(ctx);
  std::lock_guard<std::mutex> lock(c.mutex); // the thread may fail a bucket
  if (c.status != DLC_OK)
    return;
  if (dtype != DLC_F32 || count < 0) {
    c.status = DLC_ERR_INTERNAL;
    c.message = "all-reduce of a " +
                std::string(dlc_dtype_name(static_cast<dlc_dtype>(dtype))) +
                " buffer: only f32 is supported (a compiler bug)";
    return;
  }
  c.bucket.push_back({reinterpret_cast<void *>(address), count, dtype});
}

/// Reduces the buffers of `bucket` in place over the ranks; a failure goes
/// to `status` and `message`.
static void reduceBucket(CommContext &c,
                         const std::vector<CommContext::Piece> &bucket,
                         int32_t op, dlc_status &status, std::string &message) {
  float ranks = static_cast<float>(c.comm->size);
  auto failed = [&](dlc_status s) {
    status = s;
    message = dlc_last_error();
  };
  // The small buffers travel packed in one message, the large ones (and a
  // bucket of one) where they are, in pieces like every message.
  auto isPacked = [&](const CommContext::Piece &p) {
    return bucket.size() > 1 && p.count < DLC_COMM_PACK_ELEMENTS;
  };
  int64_t packed = 0;
  for (const CommContext::Piece &p : bucket)
    if (isPacked(p))
      packed += p.count;
  if (packed > 0) {
    try {
      c.staging.resize(static_cast<size_t>(packed));
    } catch (const std::bad_alloc &) {
      status = DLC_ERR_OUT_OF_MEMORY;
      message = "out of memory for an all-reduce of " + std::to_string(packed) +
                " values";
      return;
    }
    float *at = c.staging.data();
    for (const CommContext::Piece &p : bucket)
      if (isPacked(p)) {
        std::memcpy(at, p.data, static_cast<size_t>(p.count) * sizeof(float));
        at += p.count;
      }
    if (dlc_status s =
            c.comm->allReduce(c.staging.data(), packed, sizeof(float),
                              c.comm->api.f32, c.comm->api.sum))
      return failed(s);
    at = c.staging.data();
    for (const CommContext::Piece &p : bucket)
      if (isPacked(p)) {
        auto *out = static_cast<float *>(p.data);
        for (int64_t i = 0; i < p.count; ++i)
          out[i] = op == DLC_REDUCE_MEAN ? at[i] / ranks : at[i];
        at += p.count;
      }
  }
  for (const CommContext::Piece &p : bucket) {
    if (isPacked(p))
      continue;
    auto *data = static_cast<float *>(p.data);
    if (dlc_status s = c.comm->allReduce(data, p.count, sizeof(float),
                                         c.comm->api.f32, c.comm->api.sum))
      return failed(s);
    if (op == DLC_REDUCE_MEAN)
      for (int64_t i = 0; i < p.count; ++i)
        data[i] /= ranks;
  }
}

void dlc_comm_bucket_reduce(void *ctx, int32_t op) {
  auto &c = *static_cast<CommContext *>(ctx);
  std::vector<CommContext::Piece> bucket;
  bucket.swap(c.bucket);
  if (c.status != DLC_OK)
    return;
  reduceBucket(c, bucket, op, c.status, c.message);
}

void dlc_comm_bucket_start(void *ctx, int32_t op) {
  auto &c = *static_cast<CommContext *>(ctx);
  std::vector<CommContext::Piece> bucket;
  bucket.swap(c.bucket);
  std::unique_lock<std::mutex> lock(c.mutex);
  if (c.status != DLC_OK)
    return;
  if (!c.worker.joinable()) {
    try {
      c.worker = std::thread([&c] {
        std::unique_lock<std::mutex> lock(c.mutex);
        for (;;) {
          c.wake.wait(lock, [&] { return c.stopping || !c.jobs.empty(); });
          if (c.jobs.empty())
            return;
          CommContext::Job job = std::move(c.jobs.front());
          c.jobs.pop_front();
          c.busy = true;
          bool skip = c.status != DLC_OK;
          lock.unlock();
          dlc_status status = DLC_OK;
          std::string message;
          if (!skip)
            reduceBucket(c, job.pieces, job.op, status, message);
          lock.lock();
          if (status != DLC_OK && c.status == DLC_OK) {
            c.status = status;
            c.message = std::move(message);
          }
          c.busy = false;
          c.done.notify_all();
        }
      });
    } catch (const std::system_error &) {
      // No thread: the bucket is reduced here, without overlap.
      lock.unlock();
      dlc_status status = DLC_OK;
      std::string message;
      reduceBucket(c, bucket, op, status, message);
      lock.lock();
      if (status != DLC_OK) {
        c.status = status;
        c.message = std::move(message);
      }
      return;
    }
  }
  c.jobs.push_back({std::move(bucket), op});
  c.wake.notify_one();
}

void dlc_comm_wait(void *ctx) {
  auto &c = *static_cast<CommContext *>(ctx);
  std::unique_lock<std::mutex> lock(c.mutex);
  c.done.wait(lock, [&] { return c.jobs.empty() && !c.busy; });
}

void dlc_comm_bucket_add_pair(void *ctx, int64_t source, int64_t sourceCount,
                              int64_t dest, int64_t destCount, int32_t dtype) {
  auto &c = *static_cast<CommContext *>(ctx);
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.status != DLC_OK)
    return;
  if (dtype != DLC_F32 || sourceCount < 0 || destCount < 0) {
    c.status = DLC_ERR_INTERNAL;
    c.message = "a sharded collective of a " +
                std::string(dlc_dtype_name(static_cast<dlc_dtype>(dtype))) +
                " buffer: only f32 is supported (a compiler bug)";
    return;
  }
  c.bucket.push_back({reinterpret_cast<void *>(source), sourceCount, dtype,
                      reinterpret_cast<void *>(dest), destCount});
}

/// Takes the bucket of pairs for a sharded collective once the
/// communication thread is idle, and checks that one side of every pair is
/// the shard of the other over the job's ranks (`wholeSources`: the
/// sources are whole). False (the bucket dropped) after a failure.
static bool takePairs(CommContext &c, bool wholeSources,
                      std::vector<CommContext::Piece> &pairs) {
  pairs.swap(c.bucket);
  dlc_comm_wait(&c);
  if (c.status != DLC_OK)
    return false;
  int64_t ranks = c.comm->size;
  for (CommContext::Piece &p : pairs) {
    int64_t whole = wholeSources ? p.count : p.destCount;
    int64_t shard = wholeSources ? p.destCount : p.count;
    if (shard != shardElements(whole, ranks)) {
      c.status = DLC_ERR_INVALID_ARGUMENT;
      c.message =
          "the model was compiled for another number of ranks: a "
          "shard of " +
          std::to_string(whole) + " values over " + std::to_string(ranks) +
          " ranks is not " + std::to_string(shard) +
          " (compile with --data-parallel=" + std::to_string(ranks) + ")";
      return false;
    }
  }
  return true;
}

/// Like an all-reduce's (reduceBucket), a bucket's small tensors travel
/// packed in one message, in the staging buffer: `ranks` blocks, each the
/// shards of one rank, then one block more (`shards` floats each). The
/// others, and a bucket of one, are communicated where they are.
static bool isPackedPair(const std::vector<CommContext::Piece> &pairs,
                         int64_t whole) {
  return pairs.size() > 1 && whole < DLC_COMM_PACK_ELEMENTS;
}

static bool stage(CommContext &c, int64_t ranks, int64_t shards) {
  try {
    c.staging.resize(static_cast<size_t>((ranks + 1) * shards));
    return true;
  } catch (const std::bad_alloc &) {
    c.status = DLC_ERR_OUT_OF_MEMORY;
    c.message = "out of memory for a collective of " +
                std::to_string((ranks + 1) * shards) + " values";
    return false;
  }
}

static void failed(CommContext &c, dlc_status s) {
  c.status = s;
  c.message = dlc_last_error();
}

/// Divides the reduced shard by the ranks for a mean, and zeroes the
/// shard's padding past the whole tensor's end.
static void finishShard(float *shard, int64_t part, int64_t count, int32_t op,
                        int64_t ranks) {
  if (op == DLC_REDUCE_MEAN)
    for (int64_t i = 0; i < part; ++i)
      shard[i] /= static_cast<float>(ranks);
  std::fill(shard + part, shard + count, 0.0f);
}

void dlc_comm_bucket_reduce_scatter(void *ctx, int32_t op) {
  auto &c = *static_cast<CommContext *>(ctx);
  std::vector<CommContext::Piece> pairs;
  if (!takePairs(c, /*wholeSources=*/true, pairs))
    return;
  int64_t ranks = c.comm->size, rank = c.comm->rank, shards = 0;
  for (const CommContext::Piece &p : pairs) {
    if (isPackedPair(pairs, p.count)) {
      shards += p.destCount;
      continue;
    }
    if (dlc_status s = c.comm->reduceScatter(static_cast<const float *>(p.data),
                                             static_cast<float *>(p.dest),
                                             p.count, p.destCount))
      return failed(c, s);
    finishShard(static_cast<float *>(p.dest),
                shardPart(p.count, p.destCount, rank), p.destCount, op, ranks);
  }
  if (shards == 0 || !stage(c, ranks, shards))
    return;
  // Block r of the message holds the r-th shard of every packed source.
  float *send = c.staging.data(), *recv = send + ranks * shards;
  for (int64_t r = 0; r < ranks; ++r) {
    float *block = send + r * shards;
    for (const CommContext::Piece &p : pairs) {
      if (!isPackedPair(pairs, p.count))
        continue;
      int64_t part = shardPart(p.count, p.destCount, r);
      std::copy_n(static_cast<const float *>(p.data) + r * p.destCount, part,
                  block);
      std::fill(block + part, block + p.destCount, 0.0f);
      block += p.destCount;
    }
  }
  if (dlc_status s = c.comm->reduceScatter(send, recv, ranks * shards, shards))
    return failed(c, s);
  for (const CommContext::Piece &p : pairs) {
    if (!isPackedPair(pairs, p.count))
      continue;
    auto *out = static_cast<float *>(p.dest);
    std::copy_n(recv, p.destCount, out);
    finishShard(out, shardPart(p.count, p.destCount, rank), p.destCount, op,
                ranks);
    recv += p.destCount;
  }
}

void dlc_comm_bucket_all_gather(void *ctx) {
  auto &c = *static_cast<CommContext *>(ctx);
  std::vector<CommContext::Piece> pairs;
  if (!takePairs(c, /*wholeSources=*/false, pairs))
    return;
  int64_t ranks = c.comm->size, shards = 0;
  for (const CommContext::Piece &p : pairs) {
    if (isPackedPair(pairs, p.destCount)) {
      shards += p.count;
      continue;
    }
    if (dlc_status s = c.comm->allGather(static_cast<const float *>(p.data),
                                         static_cast<float *>(p.dest),
                                         p.destCount, p.count))
      return failed(c, s);
  }
  if (shards == 0 || !stage(c, ranks, shards))
    return;
  float *recv = c.staging.data(), *send = recv + ranks * shards, *at = send;
  for (const CommContext::Piece &p : pairs)
    if (isPackedPair(pairs, p.destCount))
      at = std::copy_n(static_cast<const float *>(p.data), p.count, at);
  if (dlc_status s = c.comm->allGather(send, recv, ranks * shards, shards))
    return failed(c, s);
  for (int64_t r = 0; r < ranks; ++r) {
    const float *block = recv + r * shards;
    for (const CommContext::Piece &p : pairs) {
      if (!isPackedPair(pairs, p.destCount))
        continue;
      int64_t part = shardPart(p.destCount, p.count, r);
      std::copy_n(block, part, static_cast<float *>(p.dest) + r * p.count);
      block += p.count;
    }
  }
}

void dlc_comm_bucket_shard(void *ctx) {
  auto &c = *static_cast<CommContext *>(ctx);
  std::vector<CommContext::Piece> pairs;
  if (!takePairs(c, /*wholeSources=*/true, pairs))
    return;
  for (const CommContext::Piece &p : pairs)
    takeShard(c.comm, static_cast<const float *>(p.data), p.count,
              static_cast<float *>(p.dest), p.destCount);
}

} // extern "C"
