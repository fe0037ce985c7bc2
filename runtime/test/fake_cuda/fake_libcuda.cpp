//===- fake_libcuda.cpp - A fake libcuda.so.1 for the libdlcrt tests ------===//
//
// Serves the driver functions libdlcrt resolves through cuGetProcAddress_v2
// (see fake_cuda.h for what it fakes and how to make it fail). Built only for
// the tests, as <build>/fake-cuda/libcuda.so.1.
//
//===----------------------------------------------------------------------===//

#include "fake_cuda.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2,
                   kNoDevice = 100, kInvalidPtx = 218,
                   kUnsupportedPtxVersion = 222, kNotFound = 500,
                   kNotReady = 600, kCaptureInvalidated = 901;

FakeCudaState State;

std::string mode() {
  const char *m = std::getenv("FAKE_CUDA_MODE");
  return m ? m : "";
}

struct Stream {
  bool capturing = false;
  bool invalidated = false;
  std::vector<std::function<void()>> captured;
  /// Another stream's capture this one joined by waiting for an event
  /// recorded in it: its work goes to that capture. `rejoined`: the
  /// capturing stream waited for an event recorded here since.
  Stream *joined = nullptr;
  bool rejoined = false;
  /// A capturing stream's joined streams.
  std::vector<Stream *> forks;
};

/// The capture `s`'s work goes to: its own, one it joined, or none.
Stream *captureOf(Stream *s) {
  if (!s)
    return nullptr;
  return s->capturing ? s : s->joined;
}
struct Graph {
  std::vector<std::function<void()>> work;
};
struct Function {
  std::string name;
  int numParams = 0;
};
struct Module {
  std::map<std::string, Function> functions;
};
int Context = 0; // The primary context's address is the handle.
bool ReplayingGraph = false;

/// The kernels of a PTX text: `.entry NAME(` and its `.param` count.
std::map<std::string, Function> parseEntries(const std::string &ptx) {
  std::map<std::string, Function> functions;
  size_t pos = 0;
  while ((pos = ptx.find(".entry ", pos)) != std::string::npos) {
    pos += 7;
    size_t open = ptx.find('(', pos);
    if (open == std::string::npos)
      break;
    Function f;
    f.name = ptx.substr(pos, open - pos);
    size_t close = ptx.find(')', open);
    for (size_t p = ptx.find(".param", open); p < close;
         p = ptx.find(".param", p + 1))
      ++f.numParams;
    functions[f.name] = f;
    pos = close;
  }
  return functions;
}

void runKernel(const Function &f, const std::vector<int64_t> &args) {
  State.clockMs += 0.5;
  auto f32 = [&](size_t i) { return reinterpret_cast<float *>(args[i]); };
  if (f.name == "fake_mul" && args.size() == 4)
    for (int64_t i = 0; i < args[3]; ++i)
      f32(2)[i] = f32(0)[i] * f32(1)[i];
  else if (f.name == "fake_add_one" && args.size() == 2)
    for (int64_t i = 0; i < args[1]; ++i)
      f32(0)[i] += 1.0f;
}

// The driver functions, with the signatures of cuda_api.h.

CUresult cuGetErrorName(CUresult error, const char **str) {
  static const std::map<CUresult, const char *> names = {
      {0, "CUDA_SUCCESS"},
      {1, "CUDA_ERROR_INVALID_VALUE"},
      {2, "CUDA_ERROR_OUT_OF_MEMORY"},
      {100, "CUDA_ERROR_NO_DEVICE"},
      {218, "CUDA_ERROR_INVALID_PTX"},
      {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
      {500, "CUDA_ERROR_NOT_FOUND"},
      {719, "CUDA_ERROR_LAUNCH_FAILED"},
      {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"}};
  auto it = names.find(error);
  if (it == names.end())
    return kInvalidValue;
  *str = it->second;
  return kSuccess;
}
CUresult cuGetErrorString(CUresult error, const char **str) {
  if (cuGetErrorName(error, str))
    return kInvalidValue;
  *str = "fake description";
  return kSuccess;
}
CUresult cuInit(unsigned) { return mode() == "no-device" ? kNoDevice : 0; }
CUresult cuDeviceGetCount(int *count) {
  *count = mode() == "zero-devices" ? 0 : 2;
  return kSuccess;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  if (ordinal < 0 || ordinal >= 2)
    return kInvalidValue;
  *device = ordinal;
  return kSuccess;
}
CUresult cuDeviceGetName(char *name, int len, int device) {
  std::snprintf(name, static_cast<size_t>(len), "Fake GPU %d", device);
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int) {
  ++State.primaryRetains;
  *ctx = &Context;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease(int) {
  ++State.primaryReleases;
  return kSuccess;
}
CUresult cuCtxSetCurrent(void *ctx) {
  return ctx == &Context ? kSuccess : kInvalidValue;
}
CUresult cuStreamCreate(void **stream, unsigned) {
  ++State.streamsCreated;
  *stream = new Stream;
  return kSuccess;
}
CUresult cuStreamSynchronize(void *stream) {
  return static_cast<Stream *>(stream)->capturing || State.streamsBusy
             ? kInvalidValue
             : kSuccess;
}
CUresult cuStreamQuery(void *stream) {
  if (static_cast<Stream *>(stream)->capturing)
    return kInvalidValue;
  return State.streamsBusy ? kNotReady : kSuccess;
}
CUresult cuStreamDestroy(void *stream) {
  ++State.streamsDestroyed;
  delete static_cast<Stream *>(stream);
  return kSuccess;
}
CUresult cuMemAlloc(unsigned long long *ptr, size_t bytes) {
  if (bytes > State.freeBytes)
    return kOutOfMemory;
  void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p)
    return kOutOfMemory;
  std::memset(p, 0xAB, bytes); // garbage, like fresh device memory
  ++State.liveDeviceAllocations;
  *ptr = reinterpret_cast<uintptr_t>(p);
  return kSuccess;
}
CUresult cuMemFree(unsigned long long ptr) {
  --State.liveDeviceAllocations;
  std::free(reinterpret_cast<void *>(static_cast<uintptr_t>(ptr)));
  return kSuccess;
}
CUresult cuMemAllocHost(void **ptr, size_t bytes) {
  ++State.liveHostAllocations;
  // Pinned memory comes in whole pages on a real driver, so a buffer that
  // runs a little past a pinned block (CudaFakeTest stages one) still reads
  // mapped memory; the slack keeps the fake's reads inside its allocation
  // (AddressSanitizer reported a heap-buffer-overflow there).
  constexpr size_t kSlack = 64;
  *ptr = std::malloc(bytes + kSlack);
  return kSuccess;
}
CUresult cuMemFreeHost(void *ptr) {
  --State.liveHostAllocations;
  std::free(ptr);
  return kSuccess;
}
void *host(unsigned long long ptr) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(ptr));
}
CUresult cuMemcpyHtoDAsync(unsigned long long dst, const void *src,
                           size_t bytes, void *stream) {
  ++State.hostCopyCalls;
  fake_cuda_enqueue(stream, [=] {
    State.hostCopiesFromGraph += ReplayingGraph;
    State.hostSourcesHtoD.push_back(src);
    std::memcpy(host(dst), src, bytes);
  });
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync(void *dst, unsigned long long src, size_t bytes,
                           void *stream) {
  ++State.hostCopyCalls;
  fake_cuda_enqueue(stream, [=] {
    State.hostCopiesFromGraph += ReplayingGraph;
    State.hostTargetsDtoH.push_back(dst);
    std::memcpy(dst, host(src), bytes);
  });
  return kSuccess;
}
CUresult cuMemcpyDtoDAsync(unsigned long long dst, unsigned long long src,
                           size_t bytes, void *stream) {
  fake_cuda_enqueue(stream, [=] {
    ++State.copiesDtoD;
    std::memmove(host(dst), host(src), bytes);
  });
  return kSuccess;
}
CUresult cuMemsetD8Async(unsigned long long dst, unsigned char value,
                         size_t count, void *stream) {
  fake_cuda_enqueue(stream, [=] { std::memset(host(dst), value, count); });
  return kSuccess;
}
CUresult cuMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  *freeBytes = State.freeBytes;
  *totalBytes = State.totalBytes;
  return kSuccess;
}
CUresult cuModuleLoadDataEx(void **module, const void *image,
                            unsigned numOptions, int *options, void **values) {
  std::string ptx(static_cast<const char *>(image));
  if (ptx.find("FAKE_JIT_ERROR") != std::string::npos) {
    for (unsigned i = 0; i < numOptions; ++i)
      if (options[i] == 5) // CU_JIT_ERROR_LOG_BUFFER
        std::strcpy(static_cast<char *>(values[i]),
                    "ptxas fatal   : fake syntax error\n");
    return kInvalidPtx;
  }
  if (mode() == "old-driver") {
    for (unsigned i = 0; i < numOptions; ++i)
      if (options[i] == 5) // CU_JIT_ERROR_LOG_BUFFER
        std::strcpy(static_cast<char *>(values[i]),
                    "ptxas fatal   : Unsupported .version; current version "
                    "is older\n");
    return kUnsupportedPtxVersion;
  }
  ++State.moduleLoads;
  State.ptx = ptx;
  *module = new Module{parseEntries(ptx)};
  return kSuccess;
}
CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  auto &functions = static_cast<Module *>(module)->functions;
  auto it = functions.find(name);
  if (it == functions.end())
    return kNotFound;
  *fn = &it->second;
  return kSuccess;
}
CUresult cuModuleUnload(void *module) {
  ++State.moduleUnloads;
  delete static_cast<Module *>(module);
  return kSuccess;
}
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  if (State.launchCalls++ == State.failLaunchAt) {
    if (auto *s = static_cast<Stream *>(stream); s && s->capturing)
      s->invalidated = true;
    return State.failLaunchCode;
  }
  if (shared != 0 || extra != nullptr)
    return kInvalidValue;
  const Function &f = *static_cast<Function *>(fn);
  std::vector<int64_t> args;
  for (int i = 0; i < f.numParams; ++i)
    args.push_back(*static_cast<const int64_t *>(params[i]));
  FakeLaunch launch{f.name, {gx, gy, gz}, {bx, by, bz}, args, false};
  fake_cuda_enqueue(stream, [launch, &f]() mutable {
    launch.fromGraph = ReplayingGraph;
    runKernel(f, launch.args);
    State.launches.push_back(launch);
  });
  return kSuccess;
}
CUresult cuStreamBeginCapture(void *stream, int mode) {
  auto *s = static_cast<Stream *>(stream);
  if (State.failBeginCapture || s->capturing || mode != 1)
    return kInvalidValue;
  ++State.captures;
  s->capturing = true;
  s->invalidated = false;
  s->captured.clear();
  return kSuccess;
}
CUresult cuStreamEndCapture(void *stream, void **graph) {
  auto *s = static_cast<Stream *>(stream);
  if (!s->capturing)
    return kInvalidValue;
  s->capturing = false;
  // A stream that joined the capture must have been joined back.
  for (Stream *fork : s->forks) {
    if (!fork->rejoined)
      s->invalidated = true;
    fork->joined = nullptr;
    fork->rejoined = false;
  }
  s->forks.clear();
  *graph = new Graph{std::move(s->captured)};
  s->captured.clear();
  return s->invalidated ? kCaptureInvalidated : kSuccess;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long) {
  ++State.graphsInstantiated;
  *exec = new Graph(*static_cast<Graph *>(graph));
  return kSuccess;
}
CUresult cuGraphLaunch(void *exec, void *) {
  ++State.graphLaunches;
  ReplayingGraph = true;
  for (auto &work : static_cast<Graph *>(exec)->work)
    work();
  ReplayingGraph = false;
  return kSuccess;
}
CUresult cuGraphExecDestroy(void *exec) {
  ++State.execsDestroyed;
  delete static_cast<Graph *>(exec);
  return kSuccess;
}
CUresult cuGraphDestroy(void *graph) {
  ++State.graphsDestroyed;
  delete static_cast<Graph *>(graph);
  return kSuccess;
}

// An event: the fake clock when the stream reached it.
struct Event {
  double ms = -1;
  Stream *recordedOn = nullptr; ///< The last cuEventRecord's stream.
};
CUresult cuEventCreate(void **event, unsigned) {
  ++State.liveEvents;
  *event = new Event;
  return kSuccess;
}
CUresult cuEventRecord(void *event, void *stream) {
  auto *e = static_cast<Event *>(event);
  e->recordedOn = static_cast<Stream *>(stream);
  fake_cuda_enqueue(stream, [e] { e->ms = State.clockMs; });
  return kSuccess;
}
/// Streams run their work at once, so waiting orders nothing; in a
/// capture it forks the capture into `stream` (an event recorded in a
/// capturing stream) or joins a forked stream back.
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  auto *s = static_cast<Stream *>(stream);
  auto *e = static_cast<Event *>(event);
  if (flags != 0 || !s || !e)
    return kInvalidValue;
  ++State.streamWaits;
  Stream *from = e->recordedOn;
  Stream *capture = captureOf(from);
  if (capture && !captureOf(s)) {
    s->joined = capture;
    s->rejoined = false;
    capture->forks.push_back(s);
  } else if (from && from->joined && from->joined == captureOf(s)) {
    from->rejoined = true;
  }
  return kSuccess;
}
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  auto *a = static_cast<Event *>(start), *b = static_cast<Event *>(end);
  if (a->ms < 0 || b->ms < 0)
    return 600; // CUDA_ERROR_NOT_READY
  *ms = static_cast<float>(b->ms - a->ms);
  return kSuccess;
}
CUresult cuEventDestroy(void *event) {
  --State.liveEvents;
  delete static_cast<Event *>(event);
  return kSuccess;
}

#define FAKE_ENTRY(name) {#name, reinterpret_cast<void *>(&name)}
const std::map<std::string, void *> &entryPoints() {
  static const std::map<std::string, void *> table = {
      FAKE_ENTRY(cuGetErrorName),
      FAKE_ENTRY(cuGetErrorString),
      FAKE_ENTRY(cuInit),
      FAKE_ENTRY(cuDeviceGetCount),
      FAKE_ENTRY(cuDeviceGet),
      FAKE_ENTRY(cuDeviceGetName),
      FAKE_ENTRY(cuDevicePrimaryCtxRetain),
      FAKE_ENTRY(cuDevicePrimaryCtxRelease),
      FAKE_ENTRY(cuCtxSetCurrent),
      FAKE_ENTRY(cuStreamCreate),
      FAKE_ENTRY(cuStreamSynchronize),
      FAKE_ENTRY(cuStreamQuery),
      FAKE_ENTRY(cuStreamDestroy),
      FAKE_ENTRY(cuMemAlloc),
      FAKE_ENTRY(cuMemFree),
      FAKE_ENTRY(cuMemAllocHost),
      FAKE_ENTRY(cuMemFreeHost),
      FAKE_ENTRY(cuMemcpyHtoDAsync),
      FAKE_ENTRY(cuMemcpyDtoHAsync),
      FAKE_ENTRY(cuMemcpyDtoDAsync),
      FAKE_ENTRY(cuMemsetD8Async),
      FAKE_ENTRY(cuMemGetInfo),
      FAKE_ENTRY(cuModuleLoadDataEx),
      FAKE_ENTRY(cuModuleGetFunction),
      FAKE_ENTRY(cuModuleUnload),
      FAKE_ENTRY(cuLaunchKernel),
      FAKE_ENTRY(cuStreamBeginCapture),
      FAKE_ENTRY(cuStreamEndCapture),
      FAKE_ENTRY(cuGraphInstantiateWithFlags),
      FAKE_ENTRY(cuGraphLaunch),
      FAKE_ENTRY(cuGraphExecDestroy),
      FAKE_ENTRY(cuGraphDestroy),
      FAKE_ENTRY(cuEventCreate),
      FAKE_ENTRY(cuEventRecord),
      FAKE_ENTRY(cuStreamWaitEvent),
      FAKE_ENTRY(cuEventElapsedTime),
      FAKE_ENTRY(cuEventDestroy),
  };
  return table;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) FakeCudaState *fake_cuda_state() {
  return &State;
}

__attribute__((visibility("default"))) bool fake_cuda_replaying() {
  return ReplayingGraph;
}

__attribute__((visibility("default"))) void
fake_cuda_enqueue(void *stream, std::function<void()> work) {
  if (Stream *capture = captureOf(static_cast<Stream *>(stream)))
    capture->captured.push_back(std::move(work));
  else
    work();
}

__attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                    unsigned long long flags, int *found) {
  *pfn = nullptr;
  if (cudaVersion != 12000 || flags != 0) {
    *found = 2; // CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
    return kSuccess;
  }
  auto it = entryPoints().find(symbol);
  if (it == entryPoints().end() ||
      (mode() == "missing-symbol" && it->first == "cuGraphLaunch")) {
    *found = 1; // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
    return kNotFound;
  }
  *pfn = it->second;
  *found = 0;
  return kSuccess;
}

} // extern "C"
