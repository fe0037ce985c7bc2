//===- cuda.cpp - The CUDA backend: driver, model context, launches -------===//
//
// libcuda.so.1 is loaded with dlopen (the runtime never links against CUDA);
// every driver function comes from cuGetProcAddress_v2, for the ABI declared
// in cuda_api.h. A model on CUDA owns the device's primary context (retained),
// one stream, the PTX module of its kernels, one device allocation (params,
// workspace, input/output staging, cuBLASLt workspace) and a pinned host
// staging buffer. A run stages the inputs, calls the entry's host function
// (which launches kernels through dlc_cuda_launch / dlc_cuda_gemm /
// dlc_cuda_memcpy), copies the outputs back and synchronizes once; from an
// entry's second run on, the host function is replayed as a captured CUDA
// graph. Failures inside the host function are recorded in the context
// (sticky) and reported when it returns.
//
//===----------------------------------------------------------------------===//

#include "cuda_backend.h"

#include "dlc/dlc_cuda_abi.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <limits>

using namespace dlc::rt;
using namespace dlc::rt::cuapi;

namespace {

constexpr size_t kDeviceAlignment = 256;
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;
constexpr size_t kJitLogBytes = 16384;

size_t alignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::string errorText(const Driver &api, CUresult result) {
  std::string text = "CUDA error " + std::to_string(result);
  const char *name = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(result, &name) == 0 && name) {
    text = std::string(name) + " (" + std::to_string(result) + ")";
    const char *description = nullptr;
    if (api.cuGetErrorString &&
        api.cuGetErrorString(result, &description) == 0 && description)
      text += std::string(": ") + description;
  }
  return text;
}

/// Resolves `name` through cuGetProcAddress_v2 into `slot`; on failure, sets
/// `reason`.
template <typename Fn>
bool resolve(PFN_cuGetProcAddress getProc, const char *name, Fn &slot,
             std::string &reason) {
  void *fn = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult result =
      getProc(name, &fn, kCudaApiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found);
  if (result == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && fn) {
    slot = reinterpret_cast<Fn>(fn);
    return true;
  }
  reason = std::string("libcuda.so.1 does not provide ") + name + " (";
  if (found == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
    reason += "symbol not found";
  else if (found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
    reason += "the driver is older than CUDA 12.0";
  else
    reason +=
        "cuGetProcAddress_v2 failed with CUDA error " + std::to_string(result);
  reason += ")";
  return false;
}

CudaDriverState loadDriver() {
  CudaDriverState state;
  try {
    void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = ::dlerror();
      state.reason = "libcuda.so.1 not found";
      if (why)
        state.reason += std::string(" (") + why + ")";
      return state;
    }
    // Kept open for the life of the process.
    auto getProc = reinterpret_cast<PFN_cuGetProcAddress>(
        ::dlsym(lib, "cuGetProcAddress_v2"));
    if (!getProc) {
      state.reason = "libcuda.so.1 has no cuGetProcAddress_v2 (a CUDA 12 or "
                     "newer driver is needed)";
      return state;
    }
    Driver &d = state.api;
    std::string &why = state.reason;
    bool ok =
        resolve(getProc, "cuGetErrorName", d.cuGetErrorName, why) &&
        resolve(getProc, "cuGetErrorString", d.cuGetErrorString, why) &&
        resolve(getProc, "cuInit", d.cuInit, why) &&
        resolve(getProc, "cuDeviceGetCount", d.cuDeviceGetCount, why) &&
        resolve(getProc, "cuDeviceGet", d.cuDeviceGet, why) &&
        resolve(getProc, "cuDeviceGetName", d.cuDeviceGetName, why) &&
        resolve(getProc, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain,
                why) &&
        resolve(getProc, "cuDevicePrimaryCtxRelease",
                d.cuDevicePrimaryCtxRelease, why) &&
        resolve(getProc, "cuCtxSetCurrent", d.cuCtxSetCurrent, why) &&
        resolve(getProc, "cuStreamCreate", d.cuStreamCreate, why) &&
        resolve(getProc, "cuStreamSynchronize", d.cuStreamSynchronize, why) &&
        resolve(getProc, "cuStreamQuery", d.cuStreamQuery, why) &&
        resolve(getProc, "cuStreamDestroy", d.cuStreamDestroy, why) &&
        resolve(getProc, "cuMemAlloc", d.cuMemAlloc, why) &&
        resolve(getProc, "cuMemFree", d.cuMemFree, why) &&
        resolve(getProc, "cuMemAllocHost", d.cuMemAllocHost, why) &&
        resolve(getProc, "cuMemFreeHost", d.cuMemFreeHost, why) &&
        resolve(getProc, "cuMemcpyHtoDAsync", d.cuMemcpyHtoDAsync, why) &&
        resolve(getProc, "cuMemcpyDtoHAsync", d.cuMemcpyDtoHAsync, why) &&
        resolve(getProc, "cuMemcpyDtoDAsync", d.cuMemcpyDtoDAsync, why) &&
        resolve(getProc, "cuMemsetD8Async", d.cuMemsetD8Async, why) &&
        resolve(getProc, "cuMemGetInfo", d.cuMemGetInfo, why) &&
        resolve(getProc, "cuModuleLoadDataEx", d.cuModuleLoadDataEx, why) &&
        resolve(getProc, "cuModuleGetFunction", d.cuModuleGetFunction, why) &&
        resolve(getProc, "cuModuleUnload", d.cuModuleUnload, why) &&
        resolve(getProc, "cuLaunchKernel", d.cuLaunchKernel, why) &&
        resolve(getProc, "cuStreamBeginCapture", d.cuStreamBeginCapture, why) &&
        resolve(getProc, "cuStreamEndCapture", d.cuStreamEndCapture, why) &&
        resolve(getProc, "cuGraphInstantiateWithFlags",
                d.cuGraphInstantiateWithFlags, why) &&
        resolve(getProc, "cuGraphLaunch", d.cuGraphLaunch, why) &&
        resolve(getProc, "cuGraphExecDestroy", d.cuGraphExecDestroy, why) &&
        resolve(getProc, "cuGraphDestroy", d.cuGraphDestroy, why) &&
        resolve(getProc, "cuEventCreate", d.cuEventCreate, why) &&
        resolve(getProc, "cuEventRecord", d.cuEventRecord, why) &&
        resolve(getProc, "cuEventElapsedTime", d.cuEventElapsedTime, why) &&
        resolve(getProc, "cuEventDestroy", d.cuEventDestroy, why) &&
        resolve(getProc, "cuStreamWaitEvent", d.cuStreamWaitEvent, why);
    if (!ok)
      return state;
    if (CUresult result = d.cuInit(0)) {
      state.reason = "cuInit(0) failed: " + errorText(d, result);
      return state;
    }
    int count = 0;
    if (CUresult result = d.cuDeviceGetCount(&count)) {
      state.reason = "cuDeviceGetCount failed: " + errorText(d, result);
      return state;
    }
    if (count <= 0) {
      state.reason = "no CUDA device found";
      return state;
    }
    state.deviceCount = count;
    state.usable = true;
  } catch (...) {
    state.usable = false;
    state.reason = "out of memory while probing CUDA";
  }
  return state;
}

/// The device address `offset` bytes into `base`, as generated code sees it.
void *devicePointer(CUdeviceptr base, size_t offset) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(base + offset));
}

} // namespace

const CudaDriverState &dlc::rt::cudaDriver() {
  static const CudaDriverState state = loadDriver();
  return state;
}

std::string dlc::rt::cudaErrorText(CUresult result) {
  return errorText(cudaDriver().api, result);
}

dlc_status dlc::rt::cudaStatus(CUresult result) {
  return result == CUDA_ERROR_OUT_OF_MEMORY ? DLC_ERR_OUT_OF_MEMORY
                                            : DLC_ERR_DEVICE_UNAVAILABLE;
}

//===-- The per-model context --------------------------------------------===//

CudaContext::~CudaContext() {
  if (!api)
    return;
  // Best effort: nothing here can be reported.
  if (context)
    api->cuCtxSetCurrent(context);
  comm.reset();
  if (stream)
    api->cuStreamSynchronize(stream);
  cudaDropGraphs(*this);
  gemm.reset();
  for (CUevent event : {entryStart, entryEnd})
    if (event)
      api->cuEventDestroy(event);
  if (module)
    api->cuModuleUnload(module);
  if (hostStaging)
    api->cuMemFreeHost(hostStaging);
  for (auto &[start, bytes] : hostBuffers)
    api->cuMemFreeHost(const_cast<char *>(start));
  if (arena)
    api->cuMemFree(arena);
  if (stream)
    api->cuStreamDestroy(stream);
  if (context)
    api->cuDevicePrimaryCtxRelease(device);
}

void CudaContext::recordFailure(dlc_status status,
                                std::string message) noexcept {
  if (failed())
    return;
  failStatus = status;
  try {
    failMessage = std::move(message);
  } catch (...) {
    failMessage.clear();
  }
}

void CudaContext::recordCudaFailure(const std::string &what,
                                    CUresult result) noexcept {
  if (failed())
    return;
  try {
    recordFailure(cudaStatus(result),
                  what + " failed: " + errorText(*api, result));
  } catch (...) {
    recordFailure(cudaStatus(result), "");
  }
}

dlc_status dlc::rt::checkCudaModule(const std::string &model,
                                    const dlc_cuda_module &module,
                                    size_t numEntries) {
  std::string where = "model " + quote(model) + ": CUDA module: ";
  if (!module.ptx)
    return fail(DLC_ERR_FORMAT, where + "ptx is NULL");
  if (module.num_kernels < 0)
    return fail(DLC_ERR_FORMAT,
                where + "num_kernels is " + std::to_string(module.num_kernels));
  if (module.num_kernels > 0 && !module.kernel_names)
    return fail(DLC_ERR_FORMAT, where + "kernel_names is NULL");
  for (int32_t k = 0; k < module.num_kernels; ++k)
    if (!module.kernel_names[k] || !*module.kernel_names[k])
      return fail(DLC_ERR_FORMAT,
                  where + "kernel name " + std::to_string(k) + " is " +
                      (module.kernel_names[k] ? "empty" : "NULL"));
  if (numEntries > 0 && !module.entries)
    return fail(DLC_ERR_FORMAT, where + "entries is NULL");
  for (size_t e = 0; e < numEntries; ++e)
    if (!module.entries[e])
      return fail(DLC_ERR_FORMAT,
                  where + "entry function " + std::to_string(e) + " is NULL");
  return DLC_OK;
}

namespace {

/// The arguments of entry `e`'s host function: the params, inputs and
/// outputs (in the staging area), the workspace, and the context.
std::vector<void *> argumentsOf(CudaContext &c, const ModelDecl &model,
                                size_t e) {
  const EntryDecl &entry = model.entries[e];
  const EntryStaging &staging = c.entryStaging[e];
  std::vector<void *> args;
  args.reserve(model.params.size() + entry.inputs.size() +
               entry.outputs.size() + 2);
  for (const ParamDecl &param : model.params)
    args.push_back(devicePointer(c.params, static_cast<size_t>(param.offset)));
  for (size_t offset : staging.inputs)
    args.push_back(devicePointer(c.staging, offset));
  for (size_t offset : staging.outputs)
    args.push_back(devicePointer(c.staging, offset));
  args.push_back(devicePointer(c.workspace, 0));
  args.push_back(&c);
  return args;
}

} // namespace

dlc_status dlc::rt::createCudaContext(const ModelDecl &model,
                                      const dlc_cuda_module &module,
                                      int ordinal,
                                      std::unique_ptr<CudaContext> &out) {
  const CudaDriverState &driver = cudaDriver();
  if (!driver.usable)
    return fail(DLC_ERR_DEVICE_UNAVAILABLE,
                "CUDA device unavailable: " + driver.reason);
  const Driver &d = driver.api;
  auto c = std::make_unique<CudaContext>();
  c->api = &d;
  c->modelName = model.name;
  c->ordinal = ordinal;
  std::string device = "cuda:" + std::to_string(ordinal);
  auto where = [&] {
    return "model " + quote(model.name) + " on " + c->description + ": ";
  };
  c->description = device;
  auto cudaFail = [&](const char *what, CUresult result) {
    return fail(cudaStatus(result),
                where() + what + " failed: " + errorText(d, result));
  };

  if (CUresult r = d.cuDeviceGet(&c->device, ordinal))
    return cudaFail("cuDeviceGet", r);
  char name[256] = {};
  if (d.cuDeviceGetName(name, sizeof(name) - 1, c->device) == CUDA_SUCCESS &&
      name[0])
    c->description = device + " (" + name + ")";
  CUcontext context = nullptr;
  if (CUresult r = d.cuDevicePrimaryCtxRetain(&context, c->device))
    return cudaFail("cuDevicePrimaryCtxRetain", r);
  c->context = context;
  if (CUresult r = d.cuCtxSetCurrent(c->context))
    return cudaFail("cuCtxSetCurrent", r);
  CUstream stream = nullptr;
  if (CUresult r = d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING))
    return cudaFail("cuStreamCreate", r);
  c->stream = stream;

  // The kernels: the driver JIT-compiles the PTX for this device. A model
  // whose every op is a GEMM or a copy has none, and an empty PTX text.
  if (module.num_kernels > 0) {
    std::vector<char> infoLog(kJitLogBytes, '\0'), errorLog(kJitLogBytes, '\0');
    CUjit_option options[] = {
        CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {
        infoLog.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes - 1)),
        errorLog.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes - 1))};
    CUmodule loaded = nullptr;
    if (CUresult r =
            d.cuModuleLoadDataEx(&loaded, module.ptx, 4, options, values)) {
      std::string log(errorLog.data());
      while (!log.empty() && (log.back() == '\n' || log.back() == ' '))
        log.pop_back();
      return fail(cudaStatus(r), where() +
                                     "loading the PTX module "
                                     "(cuModuleLoadDataEx) failed: " +
                                     errorText(d, r) +
                                     (log.empty() ? "" : "; JIT log: " + log));
    }
    c->module = loaded;
  }
  for (int32_t k = 0; k < module.num_kernels; ++k) {
    CUfunction fn = nullptr;
    const char *kernel = module.kernel_names[k];
    if (CUresult r = d.cuModuleGetFunction(&fn, c->module, kernel)) {
      if (r == CUDA_ERROR_NOT_FOUND)
        return fail(DLC_ERR_FORMAT, where() + "kernel " + quote(kernel) +
                                        " (kernel " + std::to_string(k) +
                                        ") is not in the PTX module");
      return cudaFail(("cuModuleGetFunction(" + quote(kernel) + ")").c_str(),
                      r);
    }
    c->kernels.push_back(fn);
    c->kernelNames.push_back(kernel);
  }

  // The memory plan: params (the host layout), workspace, staging for the
  // largest entry's inputs and outputs, cuBLASLt workspace; 256-aligned.
  size_t staging = 0;
  for (const EntryDecl &entry : model.entries) {
    EntryStaging layout;
    size_t offset = 0;
    for (const TensorDecl &t : entry.inputs) {
      layout.inputs.push_back(offset);
      offset =
          alignUp(offset + static_cast<size_t>(t.nbytes), kDeviceAlignment);
      if (offset > static_cast<size_t>(kMaxBytes))
        return fail(DLC_ERR_OUT_OF_MEMORY, where() + "entry " +
                                               quote(entry.name) +
                                               ": inputs too large");
    }
    for (const TensorDecl &t : entry.outputs) {
      layout.outputs.push_back(offset);
      offset =
          alignUp(offset + static_cast<size_t>(t.nbytes), kDeviceAlignment);
      if (offset > static_cast<size_t>(kMaxBytes))
        return fail(DLC_ERR_OUT_OF_MEMORY, where() + "entry " +
                                               quote(entry.name) +
                                               ": outputs too large");
    }
    staging = std::max(staging, offset);
    c->entryStaging.push_back(std::move(layout));
  }
  c->paramBytes = static_cast<size_t>(model.paramBytes);
  c->stagingBytes = staging;
  c->blasWorkspaceBytes = kBlasWorkspaceBytes;
  const size_t workspaceOffset = alignUp(c->paramBytes, kDeviceAlignment);
  const size_t stagingOffset =
      alignUp(workspaceOffset + static_cast<size_t>(model.cudaWorkspaceBytes),
              kDeviceAlignment);
  const size_t blasOffset = alignUp(stagingOffset + staging, kDeviceAlignment);
  const size_t total = blasOffset + kBlasWorkspaceBytes;
  auto plan = [&] {
    return std::to_string(total) + " bytes (params and optimizer state " +
           std::to_string(model.paramBytes) + ", workspace " +
           std::to_string(model.cudaWorkspaceBytes) +
           ", input/output staging " + std::to_string(staging) +
           ", cuBLASLt workspace " + std::to_string(kBlasWorkspaceBytes) +
           ", 256-byte aligned)";
  };
  size_t freeBytes = 0, totalBytes = 0;
  if (CUresult r = d.cuMemGetInfo(&freeBytes, &totalBytes))
    return cudaFail("cuMemGetInfo", r);
  if (total > freeBytes)
    return fail(DLC_ERR_OUT_OF_MEMORY,
                where() + "not enough device memory: the model needs " +
                    plan() + ", " + std::to_string(freeBytes) + " of " +
                    std::to_string(totalBytes) + " bytes are free");
  CUdeviceptr arena = 0;
  if (CUresult r = d.cuMemAlloc(&arena, total))
    return fail(cudaStatus(r), where() + "cuMemAlloc of " + plan() +
                                   " failed: " + errorText(d, r));
  c->arena = arena;
  c->arenaBytes = total;
  c->params = arena;
  c->workspace = arena + workspaceOffset;
  c->staging = arena + stagingOffset;
  c->blasWorkspace = arena + blasOffset;
  // Zeroed like the CPU arena (the params are uploaded over it).
  if (CUresult r = d.cuMemsetD8Async(arena, 0, total, c->stream))
    return cudaFail("cuMemsetD8Async", r);
  if (staging > 0) {
    void *host = nullptr;
    if (CUresult r = d.cuMemAllocHost(&host, staging))
      return fail(cudaStatus(r), where() + "cuMemAllocHost of " +
                                     std::to_string(staging) +
                                     " bytes of pinned staging memory "
                                     "failed: " +
                                     errorText(d, r));
    c->hostStaging = host;
  }
  c->graphs.resize(model.entries.size());
  for (size_t e = 0; e < model.entries.size(); ++e)
    c->entryArgs.push_back(argumentsOf(*c, model, e));
  // Every GEMM's plan now, once (cuBLASLt's heuristic), so that no run
  // queries one: each entry's host function runs with launches and copies
  // turned off. A GEMM that cannot run fails the creation.
  c->planning = true;
  for (size_t e = 0; e < model.entries.size(); ++e) {
    module.entries[e](c->entryArgs[e].data());
    if (c->failed())
      return fail(c->failStatus, where() + "entry " +
                                     quote(model.entries[e].name) +
                                     ": planning its GEMMs: " + c->failMessage);
  }
  c->planning = false;
  out = std::move(c);
  return DLC_OK;
}

void dlc::rt::cudaDropGraphs(CudaContext &c) {
  for (EntryGraphs &entry : c.graphs) {
    for (EntryGraph *g : {&entry.step, &entry.entry}) {
      if (g->exec)
        c.api->cuGraphExecDestroy(g->exec);
      if (g->graph)
        c.api->cuGraphDestroy(g->graph);
      *g = EntryGraph();
    }
    entry.successfulRuns = 0;
    entry.stepHostSides.clear();
  }
}

bool CudaContext::inHostBuffer(const void *p, size_t bytes) const {
  const auto *start = static_cast<const char *>(p);
  auto it = hostBuffers.upper_bound(start);
  if (it == hostBuffers.begin())
    return false;
  --it;
  return static_cast<size_t>(start - it->first) + bytes <= it->second;
}

dlc_status dlc::rt::cudaAllocHost(CudaContext &c, size_t bytes, void **out) {
  const Driver &d = *c.api;
  auto cudaFail = [&](const char *what, CUresult r) {
    return fail(cudaStatus(r),
                "model " + quote(c.modelName) + " on " + c.description + ": " +
                    what + " of " + std::to_string(bytes) +
                    " bytes of pinned host memory failed: " + errorText(d, r));
  };
  if (CUresult r = d.cuCtxSetCurrent(c.context))
    return cudaFail("cuCtxSetCurrent", r);
  void *host = nullptr;
  // One byte at least, so that every buffer has an address of its own.
  if (CUresult r = d.cuMemAllocHost(&host, bytes ? bytes : 1))
    return cudaFail("cuMemAllocHost", r);
  c.hostBuffers.emplace(static_cast<const char *>(host), bytes);
  *out = host;
  return DLC_OK;
}

dlc_status dlc::rt::cudaFreeHost(CudaContext &c, void *p) {
  auto it = c.hostBuffers.find(static_cast<const char *>(p));
  if (it == c.hostBuffers.end())
    return fail(DLC_ERR_INVALID_ARGUMENT,
                "model " + quote(c.modelName) +
                    ": the pointer is not host memory of this model (from "
                    "dlc_model_alloc_host, and not freed yet)");
  c.hostBuffers.erase(it);
  if (CUresult r = c.api->cuMemFreeHost(p))
    return fail(cudaStatus(r),
                "model " + quote(c.modelName) + " on " + c.description +
                    ": cuMemFreeHost failed: " + errorText(*c.api, r));
  return DLC_OK;
}

dlc_status dlc::rt::cudaMeasureEntries(CudaContext &c, bool on) {
  const Driver &d = *c.api;
  c.lastEntryUs = -1;
  c.measuring = false;
  if (!on)
    return DLC_OK;
  if (CUresult r = d.cuCtxSetCurrent(c.context))
    return fail(cudaStatus(r),
                "model " + quote(c.modelName) + " on " + c.description +
                    ": cuCtxSetCurrent failed: " + errorText(d, r));
  for (CUevent *event : {&c.entryStart, &c.entryEnd})
    if (!*event)
      if (CUresult r = d.cuEventCreate(event, /*CU_EVENT_DEFAULT*/ 0))
        return fail(cudaStatus(r),
                    "model " + quote(c.modelName) + " on " + c.description +
                        ": cuEventCreate failed: " + errorText(d, r));
  c.measuring = true;
  return DLC_OK;
}

dlc_status dlc::rt::cudaUploadParams(CudaContext &c, const void *host,
                                     size_t bytes) {
  const Driver &d = *c.api;
  auto cudaFail = [&](const char *what, CUresult r) {
    return fail(cudaStatus(r), "model " + quote(c.modelName) +
                                   ": copying the params to " + c.description +
                                   ": " + what + " failed: " + errorText(d, r));
  };
  if (bytes == 0)
    return DLC_OK;
  if (CUresult r = d.cuCtxSetCurrent(c.context))
    return cudaFail("cuCtxSetCurrent", r);
  if (CUresult r = d.cuMemcpyHtoDAsync(c.params, host, bytes, c.stream))
    return cudaFail("cuMemcpyHtoDAsync", r);
  if (CUresult r = d.cuStreamSynchronize(c.stream))
    return cudaFail("cuStreamSynchronize", r);
  return DLC_OK;
}

dlc_status dlc::rt::cudaDownloadParams(CudaContext &c, void *host,
                                       size_t bytes) {
  const Driver &d = *c.api;
  auto cudaFail = [&](const char *what, CUresult r) {
    return fail(cudaStatus(r), "model " + quote(c.modelName) +
                                   ": copying the params from " +
                                   c.description + ": " + what +
                                   " failed: " + errorText(d, r));
  };
  if (bytes == 0)
    return DLC_OK;
  if (CUresult r = d.cuCtxSetCurrent(c.context))
    return cudaFail("cuCtxSetCurrent", r);
  if (CUresult r = d.cuMemcpyDtoHAsync(host, c.params, bytes, c.stream))
    return cudaFail("cuMemcpyDtoHAsync", r);
  if (CUresult r = d.cuStreamSynchronize(c.stream))
    return cudaFail("cuStreamSynchronize", r);
  return DLC_OK;
}

namespace {

/// Captures what `work` issues on the stream as a CUDA graph and launches
/// it. False, with the graph disabled and nothing recorded, when capture
/// or instantiation fails: the caller then issues the work directly.
template <typename Work>
bool captureAndLaunch(CudaContext &c, EntryGraph &g, Work &&work) {
  const Driver &d = *c.api;
  if (d.cuStreamBeginCapture(c.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) !=
      CUDA_SUCCESS) {
    g.disabled = true;
    return false;
  }
  work();
  CUgraph graph = nullptr;
  CUresult ended = d.cuStreamEndCapture(c.stream, &graph);
  CUgraphExec exec = nullptr;
  bool ok = !c.failed() && ended == CUDA_SUCCESS && graph &&
            d.cuGraphInstantiateWithFlags(&exec, graph, 0) == CUDA_SUCCESS &&
            exec;
  if (!ok) {
    if (graph)
      d.cuGraphDestroy(graph);
    c.failStatus = DLC_OK;
    c.failMessage.clear();
    g.disabled = true;
    return false;
  }
  g.graph = graph;
  g.exec = exec;
  if (CUresult r = d.cuGraphLaunch(exec, c.stream))
    c.recordCudaFailure("cuGraphLaunch", r);
  return true;
}

/// Launches `g`, capturing it from `work` the first time; issues `work`
/// directly when `capture` is false or capturing fails.
template <typename Work>
void launchAsGraph(CudaContext &c, EntryGraph &g, bool capture, Work &&work) {
  if (g.exec) {
    if (CUresult r = c.api->cuGraphLaunch(g.exec, c.stream))
      c.recordCudaFailure("cuGraphLaunch", r);
  } else if (!capture || g.disabled || !captureAndLaunch(c, g, work)) {
    work();
  }
}

} // namespace

dlc_status dlc::rt::cudaRunEntry(CudaContext &c, const ModelDecl &model,
                                 size_t e, dlc_entry_fn fn,
                                 const void *const *inputs,
                                 void *const *outputs) {
  const Driver &d = *c.api;
  const EntryDecl &entry = model.entries[e];
  const EntryStaging &staging = c.entryStaging[e];
  const size_t numInputs = entry.inputs.size();
  c.failStatus = DLC_OK;
  c.failMessage.clear();
  cudaCommBeginRun(c);
  auto report = [&] {
    return fail(c.failStatus, "model " + quote(model.name) + ", entry " +
                                  quote(entry.name) + " on " + c.description +
                                  ": " + c.failMessage);
  };

  if (CUresult r = d.cuCtxSetCurrent(c.context)) {
    c.recordCudaFailure("cuCtxSetCurrent", r);
    return report();
  }
  // A buffer in pinned host memory of the model is copied directly; any
  // other through the pinned staging buffer.
  auto *host = static_cast<char *>(c.hostStaging);
  const size_t numOutputs = entry.outputs.size();
  c.hostSides.resize(numInputs + numOutputs);
  for (size_t i = 0; i < numInputs; ++i) {
    auto bytes = static_cast<size_t>(entry.inputs[i].nbytes);
    c.hostSides[i] = inputs[i];
    if (!c.inHostBuffer(inputs[i], bytes)) {
      std::memcpy(host + staging.inputs[i], inputs[i], bytes);
      c.hostSides[i] = host + staging.inputs[i];
    }
  }
  for (size_t i = 0; i < numOutputs; ++i)
    c.hostSides[numInputs + i] =
        c.inHostBuffer(outputs[i], static_cast<size_t>(entry.outputs[i].nbytes))
            ? outputs[i]
            : host + staging.outputs[i];
  auto copyInputs = [&] {
    for (size_t i = 0; i < numInputs && !c.failed(); ++i)
      if (CUresult r = d.cuMemcpyHtoDAsync(
              c.staging + staging.inputs[i], c.hostSides[i],
              static_cast<size_t>(entry.inputs[i].nbytes), c.stream))
        c.recordCudaFailure("copying input " + quote(entry.inputs[i].name) +
                                " to the device (cuMemcpyHtoDAsync)",
                            r);
  };
  auto copyOutputs = [&] {
    for (size_t i = 0; i < numOutputs && !c.failed(); ++i)
      if (CUresult r = d.cuMemcpyDtoHAsync(
              const_cast<void *>(c.hostSides[numInputs + i]),
              c.staging + staging.outputs[i],
              static_cast<size_t>(entry.outputs[i].nbytes), c.stream))
        c.recordCudaFailure("copying output " + quote(entry.outputs[i].name) +
                                " from the device (cuMemcpyDtoHAsync)",
                            r);
  };
  auto runEntry = [&] {
    fn(c.entryArgs[e].data());
    cudaCommEndEntry(c);
  };

  // The first run is direct; later ones replay graphs. An unmeasured run is
  // one graph, its copies included: the staging and device buffers never
  // move, so the copies replay as captured when the caller's pinned
  // buffers are those of the capture too. Another run makes its copies
  // and records its events on the stream, around a graph of the entry
  // alone.
  EntryGraphs &graphs = c.graphs[e];
  const bool capture = graphs.successfulRuns > 0;
  c.lastEntryUs = -1;
  if (!c.measuring && !graphs.step.disabled &&
      (!graphs.step.exec || c.hostSides == graphs.stepHostSides)) {
    const bool hadGraph = graphs.step.exec != nullptr;
    launchAsGraph(c, graphs.step, capture, [&] {
      copyInputs();
      if (!c.failed())
        runEntry();
      copyOutputs();
    });
    if (!hadGraph && graphs.step.exec) // captured by this run
      graphs.stepHostSides = c.hostSides;
  } else {
    copyInputs();
    if (c.measuring && !c.failed())
      if (CUresult r = d.cuEventRecord(c.entryStart, c.stream))
        c.recordCudaFailure("cuEventRecord", r);
    if (!c.failed()) {
      launchAsGraph(c, graphs.entry, capture, runEntry);
      if (c.measuring && !c.failed())
        if (CUresult r = d.cuEventRecord(c.entryEnd, c.stream))
          c.recordCudaFailure("cuEventRecord", r);
    }
    copyOutputs();
  }
  // Always wait, so that nothing of this run is in flight after it returns.
  cudaFinishRun(c);
  if (c.failed())
    return report();
  float ms = 0;
  if (c.measuring) {
    if (CUresult r = d.cuEventElapsedTime(&ms, c.entryStart, c.entryEnd)) {
      c.recordCudaFailure("cuEventElapsedTime", r);
      return report();
    }
    c.lastEntryUs = 1e3 * static_cast<double>(ms);
  }
  for (size_t i = 0; i < numOutputs; ++i)
    if (c.hostSides[numInputs + i] != outputs[i])
      std::memcpy(outputs[i], host + staging.outputs[i],
                  static_cast<size_t>(entry.outputs[i].nbytes));
  ++graphs.successfulRuns;
  return DLC_OK;
}

//===-- Called by generated code -----------------------------------------===//

extern "C" {

void dlc_cuda_launch(void *ctx, int32_t kernel, int64_t grid_x, int64_t grid_y,
                     int64_t grid_z, int64_t block_x, int64_t block_y,
                     int64_t block_z, int32_t num_args, const int64_t *args) {
  auto *c = static_cast<CudaContext *>(ctx);
  if (!c || c->failed() || c->planning)
    return;
  try {
    if (kernel < 0 || static_cast<size_t>(kernel) >= c->kernels.size()) {
      c->recordFailure(DLC_ERR_INTERNAL, "dlc_cuda_launch: kernel index " +
                                             std::to_string(kernel) +
                                             " out of range (the module has " +
                                             std::to_string(c->kernels.size()) +
                                             " kernels)");
      return;
    }
    const std::string &name = c->kernelNames[static_cast<size_t>(kernel)];
    const int64_t dims[6] = {grid_x, grid_y, grid_z, block_x, block_y, block_z};
    std::string config =
        "grid " + std::to_string(grid_x) + "x" + std::to_string(grid_y) + "x" +
        std::to_string(grid_z) + ", block " + std::to_string(block_x) + "x" +
        std::to_string(block_y) + "x" + std::to_string(block_z);
    for (int64_t dim : dims)
      if (dim < 1 || dim > std::numeric_limits<unsigned>::max()) {
        c->recordFailure(DLC_ERR_INTERNAL,
                         "dlc_cuda_launch: kernel " + quote(name) +
                             ": bad launch dimensions (" + config + ")");
        return;
      }
    if (num_args < 0 || (num_args > 0 && !args)) {
      c->recordFailure(DLC_ERR_INTERNAL,
                       "dlc_cuda_launch: kernel " + quote(name) + ": " +
                           std::to_string(num_args) + " arguments" +
                           (args ? "" : " and args is NULL"));
      return;
    }
    constexpr int32_t kInlineParams = 32;
    void *inlineParams[kInlineParams];
    std::vector<void *> heapParams;
    void **params = inlineParams;
    if (num_args > kInlineParams) {
      heapParams.resize(static_cast<size_t>(num_args));
      params = heapParams.data();
    }
    for (int32_t i = 0; i < num_args; ++i)
      params[i] = const_cast<int64_t *>(&args[i]);
    if (CUresult r = c->api->cuLaunchKernel(
            c->kernels[static_cast<size_t>(kernel)],
            static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y),
            static_cast<unsigned>(grid_z), static_cast<unsigned>(block_x),
            static_cast<unsigned>(block_y), static_cast<unsigned>(block_z), 0,
            c->stream, num_args > 0 ? params : nullptr, nullptr))
      c->recordCudaFailure(
          "launching kernel " + quote(name) + " (" + config + ")", r);
  } catch (...) {
    c->recordFailure(DLC_ERR_OUT_OF_MEMORY, "out of memory in dlc_cuda_launch");
  }
}

void dlc_cuda_memcpy(void *ctx, void *dst, const void *src, int64_t bytes) {
  auto *c = static_cast<CudaContext *>(ctx);
  if (!c || c->failed() || c->planning)
    return;
  try {
    if (bytes < 0) {
      c->recordFailure(DLC_ERR_INTERNAL, "dlc_cuda_memcpy: negative size " +
                                             std::to_string(bytes));
      return;
    }
    if (bytes == 0)
      return;
    if (CUresult r = c->api->cuMemcpyDtoDAsync(
            static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(dst)),
            static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(src)),
            static_cast<size_t>(bytes), c->stream))
      c->recordCudaFailure("dlc_cuda_memcpy of " + std::to_string(bytes) +
                               " bytes (cuMemcpyDtoDAsync)",
                           r);
  } catch (...) {
    c->recordFailure(DLC_ERR_OUT_OF_MEMORY, "out of memory in dlc_cuda_memcpy");
  }
}

} // extern "C"
