//===- DeviceTest.cpp - Device selection and names ------------------------===//

#include "TestUtil.h"
#include "internal.h"

#include <gtest/gtest.h>

#include <string>

#include <cstring>

using namespace dlc::rt;
using namespace dlc::test;

namespace {

const char *const kText = "dlc-model 1\nname dev\nparam w f32 4 zeros 0\n";
const dlc_model_desc kDesc = {DLC_ABI_VERSION, kText,   0, nullptr, nullptr,
                              nullptr,         nullptr, 0, nullptr};

// Out-of-range enum values are tested from C (c_api_test.c), where they are
// well-defined; in C++ only values within the enums' value ranges are.
TEST(DeviceTest, Names) {
  EXPECT_STREQ(dlc_device_name(DLC_DEVICE_AUTO), "auto");
  EXPECT_STREQ(dlc_device_name(DLC_DEVICE_CPU), "cpu");
  EXPECT_STREQ(dlc_device_name(DLC_DEVICE_CUDA), "cuda");
  EXPECT_STREQ(dlc_device_name(static_cast<dlc_device_kind>(3)), "unknown");
  EXPECT_STREQ(dlc_status_name(DLC_OK), "DLC_OK");
  EXPECT_STREQ(dlc_status_name(DLC_ERR_DEVICE_UNAVAILABLE),
               "DLC_ERR_DEVICE_UNAVAILABLE");
  EXPECT_STREQ(dlc_status_name(DLC_ERR_COMMUNICATION), "DLC_ERR_COMMUNICATION");
  EXPECT_STREQ(dlc_status_name(static_cast<dlc_status>(8)), "DLC_ERR_UNKNOWN");
  EXPECT_STREQ(dlc_dtype_name(DLC_BF16), "bf16");
  EXPECT_STREQ(dlc_dtype_name(DLC_U8), "u8");
  EXPECT_EQ(dlc_dtype_size(DLC_F64), 8u);
  EXPECT_EQ(dlc_dtype_size(DLC_BF16), 2u);
  EXPECT_EQ(dlc_dtype_size(DLC_I8), 1u);
}

TEST(DeviceTest, InvalidKindRejected) {
  // 3 is not a dlc_device_kind: an error, not a device.
  dlc_device_kind d = DLC_DEVICE_CPU;
  EXPECT_EQ(dlc_select_device(static_cast<dlc_device_kind>(3), &d),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dlc_last_error()).find("invalid device kind 3"),
            std::string::npos);
}

TEST(DeviceTest, ParseDeviceEnv) {
  dlc_device_kind d = DLC_DEVICE_CUDA;
  int n = 7;
  EXPECT_TRUE(parseDeviceEnv("", d, n));
  EXPECT_EQ(d, DLC_DEVICE_AUTO);
  EXPECT_EQ(n, -1);
  EXPECT_TRUE(parseDeviceEnv("cpu", d, n));
  EXPECT_EQ(d, DLC_DEVICE_CPU);
  EXPECT_TRUE(parseDeviceEnv("CUDA", d, n));
  EXPECT_EQ(d, DLC_DEVICE_CUDA);
  EXPECT_EQ(n, -1);
  EXPECT_TRUE(parseDeviceEnv("Auto", d, n));
  EXPECT_EQ(d, DLC_DEVICE_AUTO);
  EXPECT_FALSE(parseDeviceEnv("gpu", d, n));
  EXPECT_FALSE(parseDeviceEnv("cpu ", d, n));

  EXPECT_TRUE(parseDeviceEnv("cuda:0", d, n));
  EXPECT_EQ(d, DLC_DEVICE_CUDA);
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(parseDeviceEnv("CUDA:12", d, n));
  EXPECT_EQ(d, DLC_DEVICE_CUDA);
  EXPECT_EQ(n, 12);
  for (const char *bad :
       {"cuda:", "cuda:abc", "cuda:-1", "cuda:+1", "cuda:1x", "cuda: 1",
        "cuda:99999999999", "cuda1", "cpu:0", "auto:0"})
    EXPECT_FALSE(parseDeviceEnv(bad, d, n)) << bad;
}

TEST(DeviceTest, EnvCudaOrdinalRejected) {
  dlc_device_kind d = DLC_DEVICE_AUTO;
  for (const char *bad : {"cuda:abc", "cuda:-1"}) {
    EnvGuard env("DLC_DEVICE", bad);
    EXPECT_EQ(dlc_select_device(DLC_DEVICE_AUTO, &d), DLC_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(errorContains("invalid DLC_DEVICE value '" + std::string(bad) +
                              "' (expected auto, cpu, cuda or cuda:N"))
        << dlc_last_error();
    dlc_model *m = nullptr;
    EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m),
              DLC_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(m, nullptr);
  }
  // A well-formed ordinal on a machine without CUDA: the probe's reason.
  EnvGuard env("DLC_DEVICE", "cuda:3");
  char reason[256];
  if (dlc_cuda_available(reason, sizeof(reason)) == 0) {
    EXPECT_EQ(dlc_select_device(DLC_DEVICE_AUTO, &d),
              DLC_ERR_DEVICE_UNAVAILABLE);
    EXPECT_TRUE(errorContains(reason)) << dlc_last_error();
  }
  // Bad ordinals of dlc_model_create_on.
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create_on(&kDesc, DLC_DEVICE_CPU, -2, &m),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("invalid CUDA device ordinal -2"))
      << dlc_last_error();
  ASSERT_EQ(dlc_model_create_on(&kDesc, DLC_DEVICE_CPU, 5, &m), DLC_OK);
  EXPECT_STREQ(dlc_model_device_name(m), "cpu");
  dlc_model_destroy(m);
}

TEST(DeviceTest, EnvCpu) {
  EnvGuard env("DLC_DEVICE", "cpu");
  dlc_device_kind d = DLC_DEVICE_AUTO;
  ASSERT_EQ(dlc_select_device(DLC_DEVICE_AUTO, &d), DLC_OK);
  EXPECT_EQ(d, DLC_DEVICE_CPU);
  dlc_model *m = nullptr;
  ASSERT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m), DLC_OK);
  EXPECT_EQ(dlc_model_device(m), DLC_DEVICE_CPU);
  dlc_model_destroy(m);
}

TEST(DeviceTest, EnvBogus) {
  EnvGuard env("DLC_DEVICE", "tpu");
  dlc_device_kind d = DLC_DEVICE_AUTO;
  EXPECT_EQ(dlc_select_device(DLC_DEVICE_AUTO, &d), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("invalid DLC_DEVICE value 'tpu'"))
      << dlc_last_error();
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);

  // An explicit request does not consult the environment.
  ASSERT_EQ(dlc_select_device(DLC_DEVICE_CPU, &d), DLC_OK);
  EXPECT_EQ(d, DLC_DEVICE_CPU);
  ASSERT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_CPU, &m), DLC_OK);
  dlc_model_destroy(m);
}

TEST(DeviceTest, EnvCuda) {
  EnvGuard env("DLC_DEVICE", "cuda");
  char reason[256];
  bool usable = dlc_cuda_available(reason, sizeof(reason)) == 1;
  dlc_device_kind d = DLC_DEVICE_AUTO;
  dlc_status s = dlc_select_device(DLC_DEVICE_AUTO, &d);
  if (usable) {
    EXPECT_EQ(s, DLC_OK);
    EXPECT_EQ(d, DLC_DEVICE_CUDA);
  } else {
    EXPECT_EQ(s, DLC_ERR_DEVICE_UNAVAILABLE);
    EXPECT_TRUE(errorContains(reason)) << dlc_last_error();
  }
  // Either way, models have no CUDA code yet.
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_CUDA, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  if (usable) {
    EXPECT_TRUE(errorContains("this model has no CUDA code"));
  }
}

TEST(DeviceTest, CudaUnavailableHere) {
  // This machine has no GPU driver; skip where one is installed.
  char reason[256];
  if (dlc_cuda_available(reason, sizeof(reason)))
    GTEST_SKIP() << "CUDA is usable on this machine";
  EXPECT_NE(std::strlen(reason), 0u);
  EXPECT_NE(std::strstr(reason, "libcuda.so.1"), nullptr) << reason;

  dlc_device_kind d = DLC_DEVICE_AUTO;
  EXPECT_EQ(dlc_select_device(DLC_DEVICE_CUDA, &d), DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains("CUDA device unavailable: libcuda.so.1 not found"))
      << dlc_last_error();

  // The reason is truncated to the buffer.
  char small[8];
  std::memset(small, 'x', sizeof(small));
  EXPECT_EQ(dlc_cuda_available(small, sizeof(small)), 0);
  EXPECT_EQ(std::strlen(small), 7u);
  EXPECT_EQ(dlc_cuda_available(nullptr, 0), 0);
}

TEST(DeviceTest, AutoFallsBackToCpu) {
  EnvGuard env("DLC_DEVICE", std::nullopt);
  dlc_device_kind d = DLC_DEVICE_CUDA;
  ASSERT_EQ(dlc_select_device(DLC_DEVICE_AUTO, &d), DLC_OK);
  EXPECT_EQ(d,
            dlc_cuda_available(nullptr, 0) ? DLC_DEVICE_CUDA : DLC_DEVICE_CPU);
  dlc_model *m = nullptr;
  ASSERT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m), DLC_OK);
  EXPECT_EQ(dlc_model_device(m), DLC_DEVICE_CPU);
  dlc_model_destroy(m);

  EnvGuard autoEnv("DLC_DEVICE", "auto");
  ASSERT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m), DLC_OK);
  EXPECT_EQ(dlc_model_device(m), DLC_DEVICE_CPU);
  dlc_model_destroy(m);

  EXPECT_EQ(dlc_select_device(DLC_DEVICE_AUTO, nullptr),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_select_device(static_cast<dlc_device_kind>(3), &d),
            DLC_ERR_INVALID_ARGUMENT);
}

} // namespace
