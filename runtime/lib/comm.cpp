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
  int (*test)(void **, int *, void *) = nullptr;
  int (*abort)(void *, int) = nullptr;
  int (*finalize)() = nullptr;
  void *world = nullptr, *f32 = nullptr, *u64 = nullptr;
  void *sum = nullptr, *max = nullptr, *min = nullptr;
};

constexpr int kThreadSerialized = 2;                // MPI_THREAD_SERIALIZED
void *const kInPlace = reinterpret_cast<void *>(1); // MPI_IN_PLACE

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
            sym(api.test, "MPI_Test") && sym(api.abort, "MPI_Abort") &&
            sym(api.finalize, "MPI_Finalize");
  if (!ok)
    return "the MPI library lacks an MPI-3 function";
  api.world = dlsym(api.lib, "ompi_mpi_comm_world");
  api.f32 = dlsym(api.lib, "ompi_mpi_float");
  api.u64 = dlsym(api.lib, "ompi_mpi_uint64_t");
  api.sum = dlsym(api.lib, "ompi_mpi_op_sum");
  api.max = dlsym(api.lib, "ompi_mpi_op_max");
  api.min = dlsym(api.lib, "ompi_mpi_op_min");
  if (!api.world || !api.f32 || !api.u64 || !api.sum || !api.max || !api.min)
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

} // namespace

struct dlc_comm {
  MpiApi api;
  int rank = 0, size = 1;
  bool initialisedMpi = false; ///< MPI_Finalize is ours to call.
  double timeout = 300;

  /// An in-place all-reduce of `count` elements of `type` with `op`, in
  /// pieces of 256 KiB, each polled until done or the deadline (Open MPI's
  /// non-blocking all-reduce of a 23 MB message takes 1.5 times the
  /// blocking one's time; in pieces of 256 KiB, 0.7 times).
  dlc_status allReduce(void *data, int64_t count, size_t elementBytes,
                       void *type, void *op) {
    auto *bytes = static_cast<char *>(data);
    const int64_t kPiece =
        std::max<int64_t>(1, (int64_t(1) << 18) / int64_t(elementBytes));
    for (int64_t at = 0; at < count; at += kPiece) {
      int n = static_cast<int>(std::min(kPiece, count - at));
      void *request = nullptr;
      if (int rc = api.iallreduce(kInPlace, bytes + at * elementBytes, n, type,
                                  op, api.world, &request))
        return fail(DLC_ERR_COMMUNICATION, "MPI_Iallreduce failed (MPI error " +
                                               std::to_string(rc) + ")");
      auto start = std::chrono::steady_clock::now();
      auto deadline = start + std::chrono::duration<double>(timeout);
      // Non-blocking collectives progress only inside MPI calls: poll
      // without pause for a while (the other ranks are usually close), then
      // back off so that a long wait does not take a core.
      auto patience = start + std::chrono::milliseconds(200);
      for (;;) {
        int done = 0;
        if (int rc = api.test(&request, &done, nullptr))
          return fail(DLC_ERR_COMMUNICATION,
                      "MPI_Test failed (MPI error " + std::to_string(rc) + ")");
        if (done)
          break;
        auto now = std::chrono::steady_clock::now();
        if (now > deadline)
          return fail(DLC_ERR_COMMUNICATION,
                      "rank " + std::to_string(rank) + " of " +
                          std::to_string(size) + ": an all-reduce waited " +
                          std::to_string(static_cast<int64_t>(timeout)) +
                          " s for the other ranks: one of them died or "
                          "hangs (DLC_COMM_TIMEOUT sets the limit)");
        if (now > patience)
          std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    return DLC_OK;
  }
};

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
    if (std::string why = loadMpi(c->api); !why.empty())
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
    *out = c.release();
    return DLC_OK;
  });
}

void dlc_comm_destroy(dlc_comm *c) {
  if (!c)
    return;
  int finalised = 1;
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
    // FNV-1a of the bytes: equal everywhere iff its maximum and minimum
    // over the ranks agree (up to a collision).
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < bytes; ++i)
      h = (h ^ static_cast<const unsigned char *>(data)[i]) * 0x100000001b3ULL;
    uint64_t hi = h, lo = h;
    if (dlc_status s = c->allReduce(&hi, 1, 8, c->api.u64, c->api.max))
      return s;
    if (dlc_status s = c->allReduce(&lo, 1, 8, c->api.u64, c->api.min))
      return s;
    *same = hi == lo;
    return DLC_OK;
  });
}

void dlc_comm_abort(dlc_comm *c, int32_t code) {
  if (c)
    c->api.abort(c->api.world, code);
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

} // extern "C"
