//===- fake_cuda.h - A fake CUDA driver for the libdlcrt tests --*- C++ -*-===//
//
// The state of fake_libcuda.cpp (built as libcuda.so.1),
// fake_cublaslt.cpp (libcublasLt.so.13) and fake_nccl.cpp (libnccl.so.2),
// which stand in for the real libraries in the dlcrt-fake-cuda tests: device
// memory is host memory, streams run their work at once (or record it while
// capturing a graph), and the few kernels named below run on the host. A test
// reaches the state with dlopen("libcuda.so.1") and dlsym("fake_cuda_state").
//
// FAKE_CUDA_MODE, read when the runtime probes the driver, makes it fail:
// "no-device" (cuInit returns CUDA_ERROR_NO_DEVICE), "zero-devices"
// (cuDeviceGetCount reports 0), "missing-symbol" (no cuGraphLaunch);
// "old-driver" probes fine but refuses every PTX module as a driver older
// than the PTX ISA does (CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
// "no-cublaslt" makes the fake cuBLASLt's cublasLtCreate fail.
//
// Kernels: fake_mul(a, b, out, n): out[i] = a[i] * b[i] (f32);
// fake_add_one(p, n): p[i] += 1 (f32). Any other .entry only records its
// launches. A PTX text containing FAKE_JIT_ERROR fails to load.
//
//===----------------------------------------------------------------------===//

#ifndef DLCRT_TEST_FAKE_CUDA_H
#define DLCRT_TEST_FAKE_CUDA_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct FakeLaunch {
  std::string kernel;
  unsigned grid[3];
  unsigned block[3];
  std::vector<int64_t> args;
  bool fromGraph; ///< Replayed by cuGraphLaunch.
};

struct FakeCudaState {
  // Configuration.
  size_t freeBytes = size_t(1) << 30;
  size_t totalBytes = size_t(2) << 30;
  int64_t failLaunchAt = -1; ///< Fails cuLaunchKernel call number N (0-based).
  int failLaunchCode = 719;  ///< CUDA_ERROR_LAUNCH_FAILED
  bool failBeginCapture = false;
  /// The streams have work that never finishes (a collective waiting for a
  /// lost rank): cuStreamQuery reports CUDA_ERROR_NOT_READY, and
  /// cuStreamSynchronize fails rather than hang. ncclCommAbort clears it.
  bool streamsBusy = false;
  /// The fake cuBLASLt's algorithms, by the device time (ms of clockMs)
  /// each of their matmuls takes: its heuristic ranks them in this order,
  /// as algorithms 42, 43, ...; a negative time is an algorithm whose
  /// matmul fails (CUBLAS_STATUS_NOT_SUPPORTED). Empty: one algorithm, 42,
  /// that takes no time.
  std::vector<double> algoMs;

  // Records.
  int64_t launchCalls = 0; ///< cuLaunchKernel calls, captured ones included.
  std::vector<FakeLaunch> launches; ///< Kernels that ran.
  std::string ptx;
  int moduleLoads = 0, moduleUnloads = 0;
  int primaryRetains = 0, primaryReleases = 0;
  int streamsCreated = 0, streamsDestroyed = 0;
  int captures = 0, graphsInstantiated = 0, graphLaunches = 0;
  int graphsDestroyed = 0, execsDestroyed = 0;
  int64_t liveDeviceAllocations = 0, liveHostAllocations = 0;
  int64_t copiesDtoD = 0;
  /// The host side of every host-to-device / device-to-host copy.
  std::vector<const void *> hostSourcesHtoD, hostTargetsDtoH;
  /// cuMemcpyHtoDAsync and cuMemcpyDtoHAsync calls (captured ones
  /// included), and the copies of theirs that ran replayed by cuGraphLaunch.
  int64_t hostCopyCalls = 0, hostCopiesFromGraph = 0;
  int64_t matmuls = 0, heuristics = 0;
  /// The algorithm of every matmul that ran, in order, and what each
  /// wrote: D, and the bias gradient or ReLU mask of its epilogue.
  std::vector<int> matmulAlgos;
  std::vector<const void *> matmulWrites;
  /// The fake device's clock: each kernel that runs takes 0.5 ms of it.
  double clockMs = 0;
  int liveEvents = 0;
  int64_t streamWaits = 0; ///< cuStreamWaitEvent calls.

  void resetRecords() {
    launchCalls = 0;
    launches.clear();
    captures = graphsInstantiated = graphLaunches = 0;
    copiesDtoD = 0;
    hostSourcesHtoD.clear();
    hostTargetsDtoH.clear();
    hostCopyCalls = hostCopiesFromGraph = 0;
    matmuls = heuristics = 0;
    matmulAlgos.clear();
    matmulWrites.clear();
    streamWaits = 0;
  }
};

/// The fake NCCL: this process is rank `rank` of `nranks` (its
/// ncclCommInitRank's), and every other rank's buffers hold this rank's
/// values times `peerFactor`. An all-reduce gives x (1 + (N-1) f) (its
/// mean, that over N); a reduce-scatter, this rank's block of that; an
/// all-gather, block q = x (q == rank ? 1 : f).
struct FakeNcclState {
  int version = 22304;  ///< ncclGetVersion's (2.23.4).
  float peerFactor = 1; ///< The other ranks' values over this one's.
  bool hang = false;    ///< Collectives never finish (streamsBusy).
  int asyncError = 0;   ///< ncclCommGetAsyncError's report, once hanging.
  int failInitRank = 0; ///< ncclCommInitRank's result.
  // Records.
  int inits = 0, destroys = 0, aborts = 0, groups = 0;
  int rank = -1, nranks = -1;
  /// Each collective enqueued: "all_reduce 4 avg", "reduce_scatter 3 sum",
  /// "all_gather 3" (the count NCCL got, the op), and the ones that ran
  /// replayed by cuGraphLaunch.
  std::vector<std::string> calls;
  int64_t fromGraph = 0;

  void reset() { *this = FakeNcclState(); }
};

extern "C" {
/// The fake NCCL's state (exported by the fake libnccl.so.2).
FakeNcclState *fake_nccl_state();
/// Whether a cuGraphLaunch is replaying work now.
bool fake_cuda_replaying();
/// The fake driver's state (exported by the fake libcuda.so.1).
FakeCudaState *fake_cuda_state();
/// Runs `work` on `stream` now, or records it while the stream captures.
void fake_cuda_enqueue(void *stream, std::function<void()> work);
}

#endif // DLCRT_TEST_FAKE_CUDA_H
