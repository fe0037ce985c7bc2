//===- comm.h - the communicator of data-parallel models --------*- C++ -*-===//
//
// dlc_comm (comm.cpp): a process's place in an MPI job, with libmpi loaded
// at run time. CommContext: what a data-parallel entry's generated code
// hands the runtime while it runs (docs/runtime-abi.md).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_LIB_COMM_H
#define DLC_RUNTIME_LIB_COMM_H

#include "dlc/dlc_runtime.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern "C" {
/// Called by the generated code of a data-parallel entry
/// (docs/runtime-abi.md): adds `count` elements of `dtype` at `address` to
/// the bucket `ctx` (a CommContext) is filling, and reduces the bucket's
/// buffers in place over the ranks (`op`: a dlc_reduce_op).
DLC_API void dlc_comm_bucket_add(void *ctx, int64_t address, int64_t count,
                                 int32_t dtype);
DLC_API void dlc_comm_bucket_reduce(void *ctx, int32_t op);
/// The same reduction on the context's communication thread, overlapping
/// the code that follows; dlc_comm_wait returns once every bucket started
/// is reduced (the generated code calls it before it reads them again).
DLC_API void dlc_comm_bucket_start(void *ctx, int32_t op);
DLC_API void dlc_comm_wait(void *ctx);
/// A sharded optimizer's collectives (dlc.reduce_scatter, dlc.all_gather,
/// dlc.shard): the bucket is of (source, destination) pairs, one side
/// whole tensors of n elements and the other their shards of ceil(n / N)
/// elements; each runs once every bucket started is done.
DLC_API void dlc_comm_bucket_add_pair(void *ctx, int64_t source,
                                      int64_t sourceCount, int64_t dest,
                                      int64_t destCount, int32_t dtype);
DLC_API void dlc_comm_bucket_reduce_scatter(void *ctx, int32_t op);
DLC_API void dlc_comm_bucket_all_gather(void *ctx);
DLC_API void dlc_comm_bucket_shard(void *ctx);
}

namespace dlc::rt {

/// Whether the `count` values of every rank's `hash` agree (they are equal
/// everywhere iff their maximum and minimum over the ranks are).
dlc_status sameOnEveryRank(dlc_comm *c, uint64_t hash, int32_t *same);

/// Rank `root`'s `bytes` bytes at `data` into `data` on every rank (the
/// NCCL communicator's unique id).
dlc_status broadcastBytes(dlc_comm *c, void *data, size_t bytes, int root);

/// How long a collective waits for the other ranks (DLC_COMM_TIMEOUT).
double commTimeoutSeconds(const dlc_comm *c);

/// A communicator outside any MPI job, rank `rank` of `size`, for the
/// runtime's tests of what builds on one (the NCCL path against a fake
/// NCCL): its broadcast keeps each rank's bytes; its MPI collectives must
/// not be called.
dlc_comm *createDetachedComm(int rank, int size);

/// FNV-1a of `bytes` bytes at `data`, continuing from `hash`.
uint64_t fnv1a(const void *data, size_t bytes,
               uint64_t hash = 0xcbf29ce484222325ULL);

/// A sharded state's collectives, for dlc_model_save and dlc_model_load:
/// every rank's shard of `shardCount` floats, in rank order, into `whole`
/// (`wholeCount` floats) on rank 0 only; and this rank's shard of `whole`.
dlc_status gatherShards(dlc_comm *c, const float *shard, int64_t shardCount,
                        float *whole, int64_t wholeCount);
void takeShard(const dlc_comm *c, const float *whole, int64_t wholeCount,
               float *shard, int64_t shardCount);

/// The per-model context of the generated code's calls: the buffers of the
/// bucket being filled, the buckets the communication thread reduces
/// (dlc_comm_bucket_start), and the first failure of the current run
/// (sticky: later collectives of the run do nothing).
struct CommContext {
  dlc_comm *comm = nullptr;
  /// A buffer of the bucket; for the sharded collectives, with the buffer
  /// its result goes to.
  struct Piece {
    void *data;
    int64_t count;
    int32_t dtype;
    void *dest = nullptr;
    int64_t destCount = 0;
  };
  std::vector<Piece> bucket;
  std::vector<float> staging;
  dlc_status status = DLC_OK;
  std::string message;

  /// The communication thread, started with the first bucket it gets.
  struct Job {
    std::vector<Piece> pieces;
    int32_t op;
  };
  std::mutex mutex;
  std::condition_variable wake, done;
  std::deque<Job> jobs;
  bool busy = false, stopping = false;
  std::thread worker;

  CommContext() = default;
  CommContext(const CommContext &) = delete;
  CommContext &operator=(const CommContext &) = delete;
  ~CommContext();

  /// Clears the failure before a run (no bucket is in flight).
  void reset() {
    bucket.clear();
    status = DLC_OK;
    message.clear();
  }
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_LIB_COMM_H
