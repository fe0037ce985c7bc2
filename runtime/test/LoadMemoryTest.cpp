//===- LoadMemoryTest.cpp - weights are resident once
//----------------------===//
//
// dlc_model_load maps the weights file and copies each tensor into the
// model's arena, handing the mapped pages back to the kernel as it goes: the
// process's peak resident set grows by a chunk (16 MiB), not by the file.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

using namespace dlc::test;

namespace {

// 64 MiB of weights.
const char *const kText = "dlc-model 1\n"
                          "name big\n"
                          "param w f32 4096,4096 uniform 0.5\n";

/// A field of /proc/self/status, in KiB; -1 when there is none.
long statusKiB(const std::string &field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0)
      return std::stol(line.substr(field.size() + 1));
  return -1;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true; // shadow memory grows with every access
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

TEST(LoadMemoryTest, WeightsAreResidentOnce) {
  if (kSanitized)
    GTEST_SKIP() << "a sanitizer's shadow memory is resident too";
  const dlc_model_desc desc = {DLC_ABI_VERSION, kText,   0, nullptr, nullptr,
                               nullptr,         nullptr, 0, nullptr};
  ModelPtr m = createModel(desc, DLC_DEVICE_CPU);
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 1), DLC_OK);
  TempDir dir;
  std::string path = dir.path() + "/w.safetensors";
  ASSERT_EQ(dlc_model_save(m.get(), path.c_str()), DLC_OK) << dlc_last_error();
  ASSERT_EQ(dlc_model_init(m.get(), 2), DLC_OK);

  // The peak resident set starts again from the current one (Linux).
  {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
  }
  long before = statusKiB("VmRSS"), peakBefore = statusKiB("VmHWM");
  if (before < 0 || peakBefore < 0 || peakBefore > before + 1024)
    GTEST_SKIP() << "no /proc/self/clear_refs to reset the peak";
  ASSERT_EQ(dlc_model_load(m.get(), path.c_str()), DLC_OK) << dlc_last_error();
  long grew = statusKiB("VmHWM") - before;
  EXPECT_LT(grew, 32 * 1024) << "KiB: the 64 MiB file was resident besides "
                                "the arena";

  // And the weights are the saved ones.
  ModelPtr saved = createModel(desc, DLC_DEVICE_CPU);
  ASSERT_TRUE(saved);
  ASSERT_EQ(dlc_model_init(saved.get(), 1), DLC_OK);
  dlc_tensor_info a, b;
  ASSERT_EQ(dlc_model_param_info(m.get(), 0, &a), DLC_OK);
  ASSERT_EQ(dlc_model_param_info(saved.get(), 0, &b), DLC_OK);
  EXPECT_EQ(std::memcmp(a.data, b.data, static_cast<size_t>(a.nbytes)), 0);
}

} // namespace
