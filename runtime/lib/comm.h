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
}

namespace dlc::rt {

/// The per-model context of the generated code's calls: the buffers of the
/// bucket being filled, the buckets the communication thread reduces
/// (dlc_comm_bucket_start), and the first failure of the current run
/// (sticky: later collectives of the run do nothing).
struct CommContext {
  dlc_comm *comm = nullptr;
  struct Piece {
    void *data;
    int64_t count;
    int32_t dtype;
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
