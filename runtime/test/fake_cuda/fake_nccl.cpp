//===- fake_nccl.cpp - A fake libnccl.so.2 for the libdlcrt tests ---------===//
//
// The NCCL functions libdlcrt resolves (runtime/lib/nccl.cpp), for one
// process that plays one rank of a job whose other ranks are simulated
// (FakeNcclState in fake_cuda.h). Collectives run on the fake driver's
// streams (fake_cuda_enqueue: at once, or recorded while capturing).
//
//===----------------------------------------------------------------------===//

#include "fake_cuda.h"

#include <cstring>

namespace {

using ncclResult_t = int;
constexpr ncclResult_t kSuccess = 0, kInvalidArgument = 4, kInProgress = 7;
constexpr int kFloat32 = 7, kSum = 0, kAvg = 4;

FakeNcclState State;
int Comm = 0; // The communicator's address is the handle.

const char *opName(int op) { return op == kAvg ? "avg" : "sum"; }

/// The sum over the ranks of a value x of this rank (the others' are x f),
/// or its mean.
float reduced(float x, int op) {
  float sum = x * (1 + static_cast<float>(State.nranks - 1) * State.peerFactor);
  return op == kAvg ? sum / static_cast<float>(State.nranks) : sum;
}

bool badArguments(int type, int op, void *comm) {
  return type != kFloat32 || (op != kSum && op != kAvg) || comm != &Comm ||
         State.nranks < 1;
}

/// Enqueues a collective's work (or, hanging, makes the streams busy).
void enqueue(void *stream, std::function<void()> work) {
  if (State.hang) {
    fake_cuda_state()->streamsBusy = true;
    return;
  }
  fake_cuda_enqueue(stream, [work = std::move(work)] {
    State.fromGraph += fake_cuda_replaying();
    work();
  });
}

} // namespace

extern "C" {

#define FAKE_API __attribute__((visibility("default")))

FAKE_API FakeNcclState *fake_nccl_state() { return &State; }

FAKE_API ncclResult_t ncclGetVersion(int *version) {
  *version = State.version;
  return kSuccess;
}

FAKE_API const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case 6:
    return "remote process exited or there was a network error";
  case 4:
    return "invalid argument";
  default:
    return "fake NCCL error";
  }
}

FAKE_API ncclResult_t ncclGetUniqueId(void *id) {
  std::memset(id, 0x5A, 128);
  return kSuccess;
}

struct UniqueId {
  char internal[128];
};

FAKE_API ncclResult_t ncclCommInitRank(void **comm, int nranks, UniqueId id,
                                       int rank) {
  if (State.failInitRank)
    return State.failInitRank;
  // Rank 0 made the id; the others got it from the runtime's broadcast,
  // which a communicator outside MPI does not make.
  if (rank < 0 || rank >= nranks || (rank == 0 && id.internal[0] != 0x5A))
    return kInvalidArgument;
  ++State.inits;
  State.rank = rank;
  State.nranks = nranks;
  *comm = &Comm;
  return kSuccess;
}

FAKE_API ncclResult_t ncclCommDestroy(void *comm) {
  State.destroys += comm == &Comm;
  return kSuccess;
}

FAKE_API ncclResult_t ncclCommAbort(void *comm) {
  State.aborts += comm == &Comm;
  fake_cuda_state()->streamsBusy = false;
  return kSuccess;
}

FAKE_API ncclResult_t ncclCommGetAsyncError(void *comm, ncclResult_t *error) {
  if (comm != &Comm)
    return kInvalidArgument;
  *error = State.hang ? (State.asyncError ? State.asyncError : kInProgress)
                      : kSuccess;
  return kSuccess;
}

FAKE_API ncclResult_t ncclGroupStart() {
  ++State.groups;
  return kSuccess;
}

FAKE_API ncclResult_t ncclGroupEnd() { return kSuccess; }

FAKE_API ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                                    int type, int op, void *comm,
                                    void *stream) {
  if (badArguments(type, op, comm))
    return kInvalidArgument;
  State.calls.push_back("all_reduce " + std::to_string(count) + " " +
                        opName(op));
  enqueue(stream, [=] {
    auto *in = static_cast<const float *>(send);
    auto *out = static_cast<float *>(recv);
    for (size_t i = 0; i < count; ++i)
      out[i] = reduced(in[i], op);
  });
  return kSuccess;
}

FAKE_API ncclResult_t ncclReduceScatter(const void *send, void *recv,
                                        size_t count, int type, int op,
                                        void *comm, void *stream) {
  if (badArguments(type, op, comm))
    return kInvalidArgument;
  State.calls.push_back("reduce_scatter " + std::to_string(count) + " " +
                        opName(op));
  enqueue(stream, [=] {
    auto *in = static_cast<const float *>(send) +
               static_cast<size_t>(State.rank) * count;
    auto *out = static_cast<float *>(recv);
    for (size_t i = 0; i < count; ++i)
      out[i] = reduced(in[i], op);
  });
  return kSuccess;
}

FAKE_API ncclResult_t ncclAllGather(const void *send, void *recv, size_t count,
                                    int type, void *comm, void *stream) {
  if (badArguments(type, kSum, comm))
    return kInvalidArgument;
  State.calls.push_back("all_gather " + std::to_string(count));
  enqueue(stream, [=] {
    auto *in = static_cast<const float *>(send);
    auto *out = static_cast<float *>(recv);
    for (int q = 0; q < State.nranks; ++q)
      for (size_t i = 0; i < count; ++i)
        out[static_cast<size_t>(q) * count + i] =
            q == State.rank ? in[i] : in[i] * State.peerFactor;
  });
  return kSuccess;
}

} // extern "C"
