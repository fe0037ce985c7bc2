//===- device.cpp - Device selection and the CUDA probe -------------------===//
//
// CUDA is probed through the driver API, loaded with dlopen so that the
// runtime never links against CUDA: libcuda.so.1, cuInit(0), then
// cuDeviceGetCount. The probe runs once per process; its handle is kept open
// for the (future) CUDA backend.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace dlc::rt;

namespace {

struct CudaProbe {
  bool usable = false;
  std::string reason; ///< Why CUDA is not usable; empty when it is.
};

// CUresult is an int-sized enum; CUDA_SUCCESS is 0.
using CuInitFn = int (*)(unsigned int);
using CuDeviceGetCountFn = int (*)(int *);
using CuGetErrorNameFn = int (*)(int, const char **);

std::string cudaErrorText(CuGetErrorNameFn getErrorName, int result) {
  const char *name = nullptr;
  std::string text = "error " + std::to_string(result);
  if (getErrorName && getErrorName(result, &name) == 0 && name)
    text = std::string(name) + " (" + std::to_string(result) + ")";
  return text;
}

CudaProbe probeCuda() {
  CudaProbe probe;
  try {
    void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = ::dlerror();
      probe.reason = "libcuda.so.1 not found";
      if (why)
        probe.reason += std::string(" (") + why + ")";
      return probe;
    }
    auto cuInit = reinterpret_cast<CuInitFn>(::dlsym(lib, "cuInit"));
    auto cuDeviceGetCount =
        reinterpret_cast<CuDeviceGetCountFn>(::dlsym(lib, "cuDeviceGetCount"));
    auto cuGetErrorName =
        reinterpret_cast<CuGetErrorNameFn>(::dlsym(lib, "cuGetErrorName"));
    if (!cuInit || !cuDeviceGetCount) {
      probe.reason = "libcuda.so.1 lacks cuInit or cuDeviceGetCount";
      return probe;
    }
    if (int result = cuInit(0)) {
      probe.reason =
          "cuInit(0) failed: " + cudaErrorText(cuGetErrorName, result);
      return probe;
    }
    int count = 0;
    if (int result = cuDeviceGetCount(&count)) {
      probe.reason =
          "cuDeviceGetCount failed: " + cudaErrorText(cuGetErrorName, result);
      return probe;
    }
    if (count <= 0) {
      probe.reason = "no CUDA device found";
      return probe;
    }
    probe.usable = true;
  } catch (...) {
    probe.usable = false;
    probe.reason = "out of memory while probing CUDA";
  }
  return probe;
}

const CudaProbe &cudaProbe() {
  static const CudaProbe probe = probeCuda();
  return probe;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

} // namespace

bool dlc::rt::parseDeviceEnv(std::string_view value, dlc_device_kind &device) {
  if (value.empty() || equalsIgnoringCase(value, "auto"))
    device = DLC_DEVICE_AUTO;
  else if (equalsIgnoringCase(value, "cpu"))
    device = DLC_DEVICE_CPU;
  else if (equalsIgnoringCase(value, "cuda"))
    device = DLC_DEVICE_CUDA;
  else
    return false;
  return true;
}

bool dlc::rt::cudaUsable(std::string *reason) {
  const CudaProbe &probe = cudaProbe();
  if (reason)
    *reason = probe.reason;
  return probe.usable;
}

dlc_status dlc::rt::resolveDevice(dlc_device_kind requested, bool hasCudaCode,
                                  dlc_device_kind &selected) {
  if (requested != DLC_DEVICE_AUTO && requested != DLC_DEVICE_CPU &&
      requested != DLC_DEVICE_CUDA)
    return fail(DLC_ERR_INVALID_ARGUMENT,
                "invalid device kind " +
                    std::to_string(static_cast<int>(requested)));

  if (requested == DLC_DEVICE_AUTO) {
    const char *env = std::getenv("DLC_DEVICE");
    if (env && !parseDeviceEnv(env, requested))
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "invalid DLC_DEVICE value " + quote(env) +
                      " (expected auto, cpu or cuda)");
  }

  switch (requested) {
  case DLC_DEVICE_CPU:
    selected = DLC_DEVICE_CPU;
    return DLC_OK;
  case DLC_DEVICE_CUDA: {
    std::string reason;
    if (!cudaUsable(&reason))
      return fail(DLC_ERR_DEVICE_UNAVAILABLE,
                  "CUDA device unavailable: " + reason);
    if (!hasCudaCode)
      return fail(DLC_ERR_DEVICE_UNAVAILABLE,
                  "CUDA device unavailable: this model has no CUDA code");
    selected = DLC_DEVICE_CUDA;
    return DLC_OK;
  }
  case DLC_DEVICE_AUTO:
    // Only probe when the choice depends on it.
    selected =
        hasCudaCode && cudaUsable(nullptr) ? DLC_DEVICE_CUDA : DLC_DEVICE_CPU;
    return DLC_OK;
  }
  return fail(DLC_ERR_INTERNAL, "unreachable device kind");
}

extern "C" {

dlc_status dlc_select_device(dlc_device_kind requested,
                             dlc_device_kind *selected) {
  return guardStatus([&] {
    if (!selected)
      return fail(DLC_ERR_INVALID_ARGUMENT, "selected is NULL");
    // As if every model had code for every device.
    return resolveDevice(requested, /*hasCudaCode=*/true, *selected);
  });
}

int dlc_cuda_available(char *reason_buf, size_t reason_len) {
  const CudaProbe &probe = cudaProbe();
  if (reason_buf && reason_len > 0) {
    size_t n = std::min(probe.reason.size(), reason_len - 1);
    std::memcpy(reason_buf, probe.reason.data(), n);
    reason_buf[n] = '\0';
  }
  return probe.usable ? 1 : 0;
}

} // extern "C"
