//===- device.cpp - Device selection ------------------------------------===//
//
// Resolves device requests (DLC_DEVICE_*, the DLC_DEVICE environment
// variable, CUDA ordinals) against what the machine offers: CUDA is probed
// by the CUDA backend (cuda.cpp), which loads libcuda.so.1 with dlopen once
// per process.
//
//===----------------------------------------------------------------------===//

#include "cuda_backend.h"
#include "internal.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>

using namespace dlc::rt;

namespace {

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

bool dlc::rt::parseDeviceEnv(std::string_view value, dlc_device_kind &device,
                             int &ordinal) {
  ordinal = -1;
  if (value.empty() || equalsIgnoringCase(value, "auto")) {
    device = DLC_DEVICE_AUTO;
    return true;
  }
  if (equalsIgnoringCase(value, "cpu")) {
    device = DLC_DEVICE_CPU;
    return true;
  }
  if (equalsIgnoringCase(value, "cuda")) {
    device = DLC_DEVICE_CUDA;
    return true;
  }
  // cuda:N, N a decimal device number (digits only).
  constexpr std::string_view prefix = "cuda:";
  if (value.size() <= prefix.size() ||
      !equalsIgnoringCase(value.substr(0, prefix.size()), prefix))
    return false;
  std::string_view digits = value.substr(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(),
                   [](char ch) { return ch >= '0' && ch <= '9'; }))
    return false;
  int n = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return false;
  device = DLC_DEVICE_CUDA;
  ordinal = n;
  return true;
}

bool dlc::rt::cudaUsable(std::string *reason) {
  const CudaDriverState &driver = cudaDriver();
  if (reason)
    *reason = driver.reason;
  return driver.usable;
}

dlc_status dlc::rt::resolveDevice(int kind, int ordinal, bool hasCudaCode,
                                  DeviceChoice &choice) {
  choice = DeviceChoice();
  if (kind != DLC_DEVICE_AUTO && kind != DLC_DEVICE_CPU &&
      kind != DLC_DEVICE_CUDA)
    return fail(DLC_ERR_INVALID_ARGUMENT,
                "invalid device kind " + std::to_string(kind));
  auto requested = static_cast<dlc_device_kind>(kind);
  if (ordinal < -1)
    return fail(DLC_ERR_INVALID_ARGUMENT,
                "invalid CUDA device ordinal " + std::to_string(ordinal) +
                    " (expected -1 for the default, or a device number)");

  if (requested == DLC_DEVICE_AUTO) {
    const char *env = std::getenv("DLC_DEVICE");
    int envOrdinal = -1;
    if (env && !parseDeviceEnv(env, requested, envOrdinal))
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "invalid DLC_DEVICE value " + quote(env) +
                      " (expected auto, cpu, cuda or cuda:N with N a device "
                      "number)");
    if (ordinal < 0)
      ordinal = envOrdinal;
  }
  const int device = ordinal < 0 ? 0 : ordinal;
  const CudaDriverState *driver = nullptr; // Probed only when it decides.
  auto noSuchDevice = [&] {
    return "no device cuda:" + std::to_string(device) + " (this machine has " +
           std::to_string(driver->deviceCount) + " CUDA device" +
           (driver->deviceCount == 1 ? "" : "s") +
           ", cuda:0 to cuda:" + std::to_string(driver->deviceCount - 1) + ")";
  };

  switch (requested) {
  case DLC_DEVICE_CPU:
    choice.device = DLC_DEVICE_CPU;
    return DLC_OK;
  case DLC_DEVICE_CUDA:
    driver = &cudaDriver();
    if (!driver->usable)
      return fail(DLC_ERR_DEVICE_UNAVAILABLE,
                  "CUDA device unavailable: " + driver->reason);
    if (device >= driver->deviceCount)
      return fail(DLC_ERR_DEVICE_UNAVAILABLE,
                  "CUDA device unavailable: " + noSuchDevice());
    if (!hasCudaCode)
      return fail(DLC_ERR_DEVICE_UNAVAILABLE,
                  "CUDA device unavailable: this model has no CUDA code");
    choice.device = DLC_DEVICE_CUDA;
    choice.ordinal = device;
    return DLC_OK;
  case DLC_DEVICE_AUTO:
    choice.automatic = true;
    // A model compiled for the CPU alone runs there, and nothing is probed.
    if (!hasCudaCode)
      return DLC_OK;
    driver = &cudaDriver();
    if (!driver->usable)
      choice.whyNotCuda = "CUDA device unavailable: " + driver->reason;
    else if (device >= driver->deviceCount)
      choice.whyNotCuda = "CUDA device unavailable: " + noSuchDevice();
    else {
      choice.device = DLC_DEVICE_CUDA;
      choice.ordinal = device;
    }
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
    DeviceChoice choice;
    dlc_status s =
        resolveDevice(enumBits(requested), -1, /*hasCudaCode=*/true, choice);
    if (s == DLC_OK)
      *selected = choice.device;
    return s;
  });
}

int dlc_cuda_available(char *reason_buf, size_t reason_len) {
  const CudaDriverState &driver = cudaDriver();
  if (reason_buf && reason_len > 0) {
    size_t n = std::min(driver.reason.size(), reason_len - 1);
    std::memcpy(reason_buf, driver.reason.data(), n);
    reason_buf[n] = '\0';
  }
  return driver.usable ? 1 : 0;
}

} // extern "C"
