//===- threadpool.cpp - DLC_NUM_THREADS and dlc_parallel_for --------------===//
//
// A persistent pool of worker threads, created at the first parallel_for.
// One job runs at a time: the caller publishes it, wakes the workers and
// takes chunks itself; chunks are claimed from an atomic counter, so a worker
// that wakes late (or a core that is busy) simply gets fewer of them.
//
// A worker that finishes a job spins for a while (kSpinTime) before it
// sleeps: a model's parallel loops follow each other microseconds apart (a
// recurrent layer's step GEMMs, a few microseconds of the cell between
// them), and a worker woken through the condition variable arrives after
// the caller has already claimed every chunk of such a loop. OpenMP
// runtimes and onnxruntime's pool spin the same way.
//
// The caller that published a job and ran out of chunks spins the same way
// until the workers have finished theirs, before it sleeps: most loops end
// within microseconds of each other, and a caller put to sleep on the
// condition variable wakes up tens of microseconds after the last worker
// signals it, on every parallel loop of every call.
//
// The pool is never destroyed (its threads sleep until the process exits,
// which avoids joining threads in static destructors), and a child process
// after fork() starts a new one, since it has none of the parent's threads.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace dlc::rt;

namespace {

using ChunkFn = void (*)(void *ctx, int64_t begin, int64_t end);

constexpr int kMaxThreads = 1024;
/// Chunks per thread, for balance when some threads are slow to start.
constexpr int64_t kChunksPerThread = 4;
/// How long an idle worker watches for the next job before it sleeps.
constexpr std::chrono::microseconds kSpinTime{200};

/// A hint to the core that this thread is spinning.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// Set in threads while they run chunks, so that nested calls run serially.
thread_local bool InParallelRegion = false;

int defaultNumThreads() {
  long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1)
    return 1;
  return static_cast<int>(std::min<long>(cores, kMaxThreads));
}

struct Job {
  ChunkFn fn;
  void *ctx;
  int64_t n;
  int64_t chunkSize;
  int64_t numChunks;
  std::atomic<int64_t> nextChunk{0};

  void runChunks() {
    bool wasInRegion = InParallelRegion;
    InParallelRegion = true;
    for (int64_t c = nextChunk.fetch_add(1); c < numChunks;
         c = nextChunk.fetch_add(1)) {
      int64_t begin = c * chunkSize;
      int64_t end = std::min(n, begin + chunkSize);
      try {
        fn(ctx, begin, end);
      } catch (...) {
        // fn must not throw; do not let it terminate the process.
      }
    }
    InParallelRegion = wasInRegion;
  }
};

class ThreadPool {
public:
  /// Starts numThreads - 1 workers (the caller is the last thread). Throws
  /// if a thread cannot be started.
  explicit ThreadPool(int numThreads) : Pid(::getpid()) {
    Workers.reserve(static_cast<size_t>(numThreads - 1));
    try {
      for (int i = 1; i < numThreads; ++i)
        Workers.emplace_back([this] { workerLoop(); });
    } catch (...) {
      // Keep the threads that started; the pool is merely smaller.
    }
    for (std::thread &t : Workers)
      t.detach();
  }

  int numThreads() const { return static_cast<int>(Workers.size()) + 1; }
  pid_t pid() const { return Pid; }

  /// Runs the job on the pool; false (without running anything) when the
  /// pool is busy with another caller's job.
  bool tryRun(Job &job) {
    std::unique_lock<std::mutex> runLock(RunMutex, std::try_to_lock);
    if (!runLock.owns_lock())
      return false;
    {
      std::lock_guard<std::mutex> lock(Mutex);
      Current = &job;
      Generation.fetch_add(1, std::memory_order_release);
    }
    Wake.notify_all();
    job.runChunks();
    // Every chunk is claimed; make sure no late worker picks up this job,
    // then wait for the workers still running theirs (Active counts every
    // worker that took it: a worker takes Current and counts itself under
    // the lock).
    {
      std::lock_guard<std::mutex> lock(Mutex);
      Current = nullptr;
    }
    auto until = std::chrono::steady_clock::now() + kSpinTime;
    while (Active.load(std::memory_order_acquire) != 0 &&
           std::chrono::steady_clock::now() < until)
      cpuRelax();
    std::unique_lock<std::mutex> lock(Mutex);
    Idle.wait(lock, [this] { return Active.load() == 0; });
    return true;
  }

private:
  void workerLoop() {
    uint64_t seen = 0;
    while (true) {
      auto until = std::chrono::steady_clock::now() + kSpinTime;
      while (Generation.load(std::memory_order_acquire) == seen &&
             std::chrono::steady_clock::now() < until)
        cpuRelax();
      std::unique_lock<std::mutex> lock(Mutex);
      Wake.wait(lock, [&] { return Generation.load() != seen; });
      seen = Generation.load();
      Job *job = Current;
      if (!job)
        continue;
      Active.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      job->runChunks();
      lock.lock();
      if (Active.fetch_sub(1, std::memory_order_release) == 1)
        Idle.notify_all();
    }
  }

  const pid_t Pid;
  std::vector<std::thread> Workers;
  std::mutex RunMutex; ///< Held by the caller whose job runs.
  std::mutex Mutex;    ///< Guards Current, Generation and changes of Active.
  std::condition_variable Wake;
  std::condition_variable Idle;
  Job *Current = nullptr;
  /// Written under Mutex; read by spinning workers without it.
  std::atomic<uint64_t> Generation{0};
  /// The workers running the current job's chunks; changed under Mutex,
  /// read by the spinning caller without it.
  std::atomic<int> Active{0};
};

std::mutex PoolMutex;
ThreadPool *Pool = nullptr; // Leaked on purpose, see the file comment.

/// The pool, created on first use; nullptr when it cannot be created.
ThreadPool *getPool() {
  std::lock_guard<std::mutex> lock(PoolMutex);
  if (!Pool || Pool->pid() != ::getpid()) {
    // After fork() the parent's pool (and its mutexes) must not be touched;
    // it is leaked.
    try {
      Pool = new ThreadPool(dlc_num_threads());
    } catch (...) {
      Pool = nullptr;
    }
  }
  return Pool;
}

} // namespace

int dlc::rt::parseNumThreads(const char *value) {
  if (!value || !*value)
    return 0;
  int n = 0;
  for (const char *p = value; *p; ++p) {
    if (*p < '0' || *p > '9')
      return 0;
    n = n * 10 + (*p - '0');
    if (n > kMaxThreads)
      return 0;
  }
  return n; // 0 when the value was "0".
}

extern "C" {

int dlc_num_threads(void) {
  int n = parseNumThreads(std::getenv("DLC_NUM_THREADS"));
  return n > 0 ? n : defaultNumThreads();
}

void dlc_parallel_for(int64_t n, void (*fn)(void *, int64_t, int64_t),
                      void *ctx) {
  if (n <= 0 || !fn)
    return;
  auto runSerially = [&] {
    bool wasInRegion = InParallelRegion;
    InParallelRegion = true;
    try {
      fn(ctx, 0, n);
    } catch (...) {
    }
    InParallelRegion = wasInRegion;
  };
  if (n == 1 || InParallelRegion)
    return runSerially();
  ThreadPool *pool = getPool();
  if (!pool || pool->numThreads() == 1)
    return runSerially();

  Job job;
  job.fn = fn;
  job.ctx = ctx;
  job.n = n;
  int64_t maxChunks = pool->numThreads() * kChunksPerThread;
  int64_t chunks = std::min(n, maxChunks);
  job.chunkSize = (n + chunks - 1) / chunks;
  job.numChunks = (n + job.chunkSize - 1) / job.chunkSize;
  bool ran = false;
  try {
    ran = pool->tryRun(job);
  } catch (...) {
    // Only std::mutex::lock can throw here, before any chunk is claimed by
    // the caller; no exception may cross the C API.
    ran = job.nextChunk.load() > 0;
  }
  if (!ran)
    runSerially();
}

} // extern "C"
