//===- CudaTest.cpp - Models with CUDA code, where CUDA is not usable -----===//
//
// ABI version 3 descriptors with a `cuda` module, in the test process that
// has no (real or fake) driver: CUDA requests fail with the probe's reason,
// AUTO runs the CPU entries, and malformed CUDA modules are DLC_ERR_FORMAT
// whatever the device. test/CudaFakeTest.cpp covers the CUDA paths.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "dlc/dlc_cuda_abi.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace dlc::test;

namespace {

const char *const kText = "dlc-model 1\n"
                          "name twice\n"
                          "param w f32 2 ones 0\n"
                          "entry forward\n"
                          "in x f32 2\n"
                          "out y f32 2\n"
                          "end\n";

// y = 2 * x * w on the CPU.
void cpuForward(void *const *args) {
  const auto *w = static_cast<const float *>(args[0]);
  const auto *x = static_cast<const float *>(args[1]);
  auto *y = static_cast<float *>(args[2]);
  for (int i = 0; i < 2; ++i)
    y[i] = 2 * x[i] * w[i];
}

int CudaCalls = 0;
void cudaForward(void *const *) { ++CudaCalls; }

const dlc_entry_fn kCpuEntries[] = {cpuForward};
const dlc_entry_fn kCudaEntries[] = {cudaForward};
const char *const kKernelNames[] = {"twice_kernel"};
const dlc_cuda_module kModule = {
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry twice_kernel(.param .u64 p0)\n{\n\tret;\n}\n",
    1, kKernelNames, kCudaEntries};
const dlc_model_desc kDesc = {3,        kText,   1, kCpuEntries, nullptr,
                              &kModule, nullptr, 0, nullptr};

bool cudaUsable() { return dlc_cuda_available(nullptr, 0) == 1; }

TEST(CudaTest, ExplicitCudaFailsWithTheReason) {
  if (cudaUsable())
    GTEST_SKIP() << "CUDA is usable on this machine";
  char reason[256];
  dlc_cuda_available(reason, sizeof(reason));
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_CUDA, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_EQ(m, nullptr);
  EXPECT_TRUE(errorContains(std::string("CUDA device unavailable: ") + reason))
      << dlc_last_error();
  EXPECT_TRUE(errorContains("libcuda.so.1")) << dlc_last_error();

  EnvGuard env("DLC_DEVICE", "cuda");
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EnvGuard env1("DLC_DEVICE", "cuda:1");
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains(reason)) << dlc_last_error();
  EXPECT_EQ(dlc_model_create_on(&kDesc, DLC_DEVICE_CUDA, 0, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
}

TEST(CudaTest, AutoRunsTheCpuEntries) {
  if (cudaUsable())
    GTEST_SKIP() << "CUDA is usable on this machine";
  for (const char *env : {"auto", ""}) {
    EnvGuard guard("DLC_DEVICE", std::string(env));
    dlc_model *m = nullptr;
    ASSERT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m), DLC_OK)
        << dlc_last_error();
    EXPECT_EQ(dlc_model_device(m), DLC_DEVICE_CPU);
    EXPECT_STREQ(dlc_model_device_name(m), "cpu");
    ASSERT_EQ(dlc_model_init(m, 1), DLC_OK);
    float x[2] = {1.5f, -2.0f}, y[2] = {0, 0};
    const void *inputs[] = {x};
    void *outputs[] = {y};
    CudaCalls = 0;
    ASSERT_EQ(dlc_model_run(m, 0, inputs, outputs), DLC_OK);
    EXPECT_EQ(y[0], 3.0f);
    EXPECT_EQ(y[1], -4.0f);
    EXPECT_EQ(CudaCalls, 0);
    dlc_model_destroy(m);
  }
}

TEST(CudaTest, EveryVersionIsAccepted) {
  // A version 1 or 2 object ends before `cuda` (and version 1 before
  // `param_data`): the runtime must not read those fields.
  for (uint32_t version : {1u, 2u, 3u}) {
    dlc_model_desc desc = kDesc;
    desc.abi_version = version;
    if (version < 3)
      desc.cuda = reinterpret_cast<const dlc_cuda_module *>(uintptr_t(8));
    if (version < 2)
      desc.param_data = reinterpret_cast<const void *const *>(uintptr_t(8));
    dlc_model *m = nullptr;
    ASSERT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_OK)
        << version << ": " << dlc_last_error();
    EXPECT_EQ(dlc_model_device(m), DLC_DEVICE_CPU);
    dlc_model_destroy(m);
  }
  // Without CUDA code, CUDA fails whether or not the machine has CUDA.
  dlc_model_desc desc = kDesc;
  desc.cuda = nullptr;
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CUDA, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  ASSERT_EQ(dlc_model_create(&desc, DLC_DEVICE_AUTO, &m), DLC_OK);
  EXPECT_EQ(dlc_model_device(m), DLC_DEVICE_CPU);
  dlc_model_destroy(m);
}

TEST(CudaTest, MalformedCudaModules) {
  auto expectFormat = [](const dlc_cuda_module &module, const char *text) {
    dlc_model_desc desc = kDesc;
    desc.cuda = &module;
    dlc_model *m = nullptr;
    EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_ERR_FORMAT)
        << text;
    EXPECT_EQ(m, nullptr);
    EXPECT_TRUE(
        errorContains(std::string("model 'twice': CUDA module: ") + text))
        << dlc_last_error();
  };
  dlc_cuda_module module = kModule;
  module.ptx = nullptr;
  expectFormat(module, "ptx is NULL");
  module = kModule;
  module.kernel_names = nullptr;
  expectFormat(module, "kernel_names is NULL");
  module = kModule;
  module.num_kernels = -1;
  expectFormat(module, "num_kernels is -1");
  const char *const nullName[] = {nullptr};
  module = kModule;
  module.kernel_names = nullName;
  expectFormat(module, "kernel name 0 is NULL");
  const char *const emptyName[] = {""};
  module.kernel_names = emptyName;
  expectFormat(module, "kernel name 0 is empty");
  module = kModule;
  module.entries = nullptr;
  expectFormat(module, "entries is NULL");
  const dlc_entry_fn nullEntry[] = {nullptr};
  module.entries = nullEntry;
  expectFormat(module, "entry function 0 is NULL");

  // No kernels at all is fine (an entry may only copy memory).
  module = kModule;
  module.num_kernels = 0;
  module.kernel_names = nullptr;
  dlc_model_desc desc = kDesc;
  desc.cuda = &module;
  dlc_model *m = nullptr;
  ASSERT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_OK);
  dlc_model_destroy(m);
}

TEST(CudaTest, AbiFunctionsIgnoreANullContext) {
  // Generated code always passes the runtime's context; NULL does nothing.
  int64_t args[1] = {0};
  dlc_cuda_launch(nullptr, 0, 1, 1, 1, 1, 1, 1, 1, args);
  dlc_cuda_memcpy(nullptr, nullptr, nullptr, 4);
  dlc_cuda_gemm(nullptr, DLC_F32, DLC_F32, 1, 1, 1, 1, nullptr, 1, 0, 0,
                nullptr, 1, 0, 0, 0.0f, nullptr, 1, 0, DLC_GEMM_EPILOGUE_NONE,
                nullptr, nullptr);
  SUCCEED();
}

} // namespace
