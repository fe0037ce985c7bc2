//===- CudaFakeTest.cpp - The CUDA backend against a fake driver ----------===//
//
// Runs with LD_LIBRARY_PATH pointing at the fake libcuda.so.1 and
// libcublasLt.so.13 of test/fake_cuda (see fake_cuda.h), one process per
// FAKE_CUDA_MODE (the driver is probed once per process): the suites
// FakeCuda* need a working fake, FakeCudaNoDevice / ZeroDevices /
// MissingSymbol / OldDriver / NoCublaslt the failing ones.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaModel.h"

#include <cmath>
#include <cstring>

using namespace dlc::test;
using namespace dlc::test::fake_cuda;

namespace {

//===-- A working fake driver ---------------------------------------------===//

TEST_F(FakeCuda, CreateDescribeDestroy) {
  char reason[128];
  ASSERT_EQ(dlc_cuda_available(reason, sizeof(reason)), 1) << reason;
  ModelPtr m = create();
  ASSERT_TRUE(m);
  EXPECT_EQ(dlc_model_device(m.get()), DLC_DEVICE_CUDA);
  EXPECT_STREQ(dlc_model_device_name(m.get()), "cuda:0 (Fake GPU 0)");
  EXPECT_EQ(fake().ptx, kPtx);
  EXPECT_EQ(fake().liveDeviceAllocations, 1); // one arena
  EXPECT_EQ(fake().liveHostAllocations, 1);   // one pinned staging buffer
  // params 128 (w at 0, unused at 64), the CUDA workspace (200, rounded
  // to 256, not the CPU's 64) at 256, staging at 512: gemm's 6 tensors of
  // 24..32 bytes, 256 each; then 32 MiB for cuBLASLt.
  EXPECT_EQ(dlc_model_memory_bytes(m.get()), 512 + 6 * 256 + (32 << 20));
  EXPECT_EQ(dlc_model_workspace_bytes(m.get()), 256);
  // Params are on the device; param_info hands out the host mirror.
  const float *w = paramF32(m.get(), 0);
  EXPECT_EQ(w[0], 0.0f); // zero-filled until init, as on the CPU
}

TEST_F(FakeCuda, ForwardStagesAndReplaysAGraph) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 7), DLC_OK) << dlc_last_error();
  FakeCudaState &f = fake();
  f.resetRecords(); // the params' upload
  std::vector<int64_t> copyCalls;
  float x[4];
  for (int run = 0; run < 3; ++run) {
    // New values each run: a replayed graph copies what is staged now.
    for (int i = 0; i < 4; ++i)
      x[i] = float(10 * run + i);
    float y[4] = {0, 0, 0, 0};
    ASSERT_EQ(forward(m.get(), x, y), DLC_OK) << dlc_last_error();
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(y[i], x[i]) << run; // w is ones
    copyCalls.push_back(f.hostCopyCalls);
  }
  ASSERT_EQ(f.launches.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    const FakeLaunch &l = f.launches[r];
    EXPECT_EQ(l.kernel, "fake_mul");
    EXPECT_EQ(l.grid[0], 1u);
    EXPECT_EQ(l.block[0], 4u);
    EXPECT_EQ(l.block[1], 1u);
    ASSERT_EQ(l.args.size(), 4u);
    EXPECT_EQ(l.args[0], i64(LastArgs[2])); // x: the device staging copy
    EXPECT_NE(l.args[0], i64(const_cast<float *>(x)));
    EXPECT_EQ(l.args[1], i64(LastArgs[0])); // w
    EXPECT_EQ(l.args[2], i64(LastArgs[4])); // the workspace
    EXPECT_EQ(l.args[3], 4);
    EXPECT_EQ(l.fromGraph, r > 0) << r;
  }
  // Run 1 direct, run 2 captured and launched, run 3 replayed: the input
  // and output copies are part of the graph, so that run 3 is one launch
  // (and one wait) with no copy of its own.
  EXPECT_EQ(f.captures, 1);
  EXPECT_EQ(f.graphsInstantiated, 1);
  EXPECT_EQ(f.graphLaunches, 2);
  EXPECT_EQ(f.copiesDtoD, 3);
  EXPECT_EQ(copyCalls, (std::vector<int64_t>{2, 4, 4}));
  EXPECT_EQ(f.hostCopiesFromGraph, 4);
  EXPECT_EQ(f.hostSourcesHtoD.size(), 3u);
  // Device pointers: params at the arena start, 256-aligned workspace.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(LastArgs[1]) -
                reinterpret_cast<uintptr_t>(LastArgs[0]),
            64u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(LastArgs[4]) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(LastArgs[2]) % 256, 0u);
}

TEST_F(FakeCuda, PinnedHostBuffersAreCopiedDirectly) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 7), DLC_OK) << dlc_last_error();
  // x and y in one pinned allocation (anywhere inside one counts).
  void *pinned = nullptr;
  ASSERT_EQ(dlc_model_alloc_host(m.get(), 64, &pinned), DLC_OK)
      << dlc_last_error();
  ASSERT_TRUE(pinned);
  EXPECT_EQ(fake().liveHostAllocations, 2); // the staging and this
  auto *x = static_cast<float *>(pinned);
  float *y = x + 8;
  for (int i = 0; i < 4; ++i)
    x[i] = float(i + 1);
  FakeCudaState &f = fake();
  f.resetRecords();
  ASSERT_EQ(forward(m.get(), x, y), DLC_OK) << dlc_last_error();
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(y[i], x[i]); // w is ones
  ASSERT_EQ(f.hostSourcesHtoD.size(), 1u);
  EXPECT_EQ(f.hostSourcesHtoD[0], x);
  ASSERT_EQ(f.hostTargetsDtoH.size(), 1u);
  EXPECT_EQ(f.hostTargetsDtoH[0], y);
  // Runs 2 and 3, on the same buffers, are one graph with their copies:
  // captured, then replayed.
  for (int run = 2; run <= 3; ++run) {
    x[0] = float(run);
    ASSERT_EQ(forward(m.get(), x, y), DLC_OK) << dlc_last_error();
    EXPECT_EQ(y[0], float(run));
  }
  EXPECT_EQ(f.graphLaunches, 2);
  EXPECT_TRUE(f.launches.back().fromGraph);
  EXPECT_EQ(f.hostCopyCalls, 4);
  EXPECT_EQ(f.hostCopiesFromGraph, 4);
  // Other pinned buffers: the copies are made on the stream, around a
  // graph of the entry alone.
  float *x2 = x + 4, *y2 = x + 12;
  for (int i = 0; i < 4; ++i)
    x2[i] = float(-i);
  for (int run = 4; run <= 5; ++run) {
    ASSERT_EQ(forward(m.get(), x2, y2), DLC_OK) << dlc_last_error();
    EXPECT_EQ(y2[3], -3.0f);
  }
  EXPECT_EQ(f.graphsInstantiated, 2);
  EXPECT_EQ(f.graphLaunches, 4);
  EXPECT_EQ(f.hostCopyCalls, 8);
  EXPECT_EQ(f.hostCopiesFromGraph, 4);
  EXPECT_EQ(f.hostSourcesHtoD.back(), x2);
  EXPECT_EQ(f.hostTargetsDtoH.back(), y2);
  // The first buffers again: the step's graph.
  ASSERT_EQ(forward(m.get(), x, y), DLC_OK) << dlc_last_error();
  EXPECT_EQ(f.hostCopyCalls, 8);
  EXPECT_EQ(f.hostCopiesFromGraph, 6);
  EXPECT_EQ(f.hostSourcesHtoD.back(), x);

  // A buffer that runs past the end of the allocation is staged.
  f.hostSourcesHtoD.clear();
  f.hostTargetsDtoH.clear();
  float *late = x + 14; // 8 of its 16 bytes are outside
  float out[4];
  ASSERT_EQ(forward(m.get(), late, out), DLC_OK) << dlc_last_error();
  ASSERT_EQ(f.hostSourcesHtoD.size(), 1u);
  EXPECT_NE(f.hostSourcesHtoD[0], late);
  ASSERT_EQ(f.hostTargetsDtoH.size(), 1u);
  EXPECT_NE(f.hostTargetsDtoH[0], out);

  // Freed memory is ordinary memory to the next run; freeing twice or a
  // pointer of no allocation is an error that changes nothing.
  EXPECT_EQ(dlc_model_free_host(m.get(), pinned), DLC_OK) << dlc_last_error();
  EXPECT_EQ(fake().liveHostAllocations, 1);
  EXPECT_EQ(dlc_model_free_host(m.get(), pinned), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("not host memory of this model"))
      << dlc_last_error();
  EXPECT_EQ(dlc_model_free_host(m.get(), out), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_model_free_host(m.get(), nullptr), DLC_OK);
  // What is not freed goes with the model (TearDown checks).
  void *kept = nullptr;
  ASSERT_EQ(dlc_model_alloc_host(m.get(), 0, &kept), DLC_OK);
  EXPECT_TRUE(kept);
  EXPECT_EQ(dlc_model_alloc_host(m.get(), 16, nullptr),
            DLC_ERR_INVALID_ARGUMENT);
}

TEST_F(FakeCuda, MeasuresTheEntryAlone) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 7), DLC_OK) << dlc_last_error();
  const float x[4] = {1, 2, 3, 4};
  float y[4];
  ASSERT_EQ(forward(m.get(), x, y), DLC_OK) << dlc_last_error();
  EXPECT_EQ(dlc_model_last_entry_us(m.get()), -1.0); // not measured
  ASSERT_EQ(dlc_model_measure_entries(m.get(), 1), DLC_OK) << dlc_last_error();
  EXPECT_EQ(dlc_model_last_entry_us(m.get()), -1.0); // no run yet
  // Run 2 is captured and launched, run 3 replayed: the entry's one kernel
  // takes 0.5 ms of the fake clock each time, the copies nothing.
  for (int run = 2; run <= 3; ++run) {
    ASSERT_EQ(forward(m.get(), x, y), DLC_OK) << dlc_last_error();
    EXPECT_DOUBLE_EQ(dlc_model_last_entry_us(m.get()), 500.0) << run;
  }
  EXPECT_EQ(fake().liveEvents, 2);
  ASSERT_EQ(dlc_model_measure_entries(m.get(), 0), DLC_OK);
  ASSERT_EQ(forward(m.get(), x, y), DLC_OK) << dlc_last_error();
  EXPECT_EQ(dlc_model_last_entry_us(m.get()), -1.0);
  EXPECT_EQ(dlc_model_last_entry_us(nullptr), -1.0);
}

TEST_F(FakeCuda, ParamsLiveOnTheDevice) {
  TempDir dir;
  ModelPtr m = create();
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 7), DLC_OK);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(dlc_model_run(m.get(), 1, nullptr, nullptr), DLC_OK)
        << dlc_last_error();
  // Three training steps on the device (the last two in a graph).
  float *w = paramF32(m.get(), 0);
  EXPECT_EQ(w[0], 4.0f);
  EXPECT_EQ(w[3], 4.0f);
  EXPECT_EQ(fake().launches.back().kernel, "fake_add_one");
  EXPECT_EQ(fake().launches.back().grid[0], 2u);
  EXPECT_EQ(fake().launches.back().block[0], 32u);

  // Writes through param_info's pointer reach the device at the next run.
  w[0] = 10.0f;
  const float x[4] = {1, 2, 3, 4};
  float y[4];
  ASSERT_EQ(forward(m.get(), x, y), DLC_OK);
  EXPECT_EQ(y[0], 10.0f);
  EXPECT_EQ(y[1], 8.0f);

  // Save downloads; load uploads.
  ASSERT_EQ(dlc_model_save(m.get(), dir.file("a.safetensors").c_str()), DLC_OK);
  ASSERT_EQ(dlc_model_init(m.get(), 1), DLC_OK); // back to ones
  ASSERT_EQ(forward(m.get(), x, y), DLC_OK);
  EXPECT_EQ(y[0], 1.0f);
  ASSERT_EQ(dlc_model_load(m.get(), dir.file("a.safetensors").c_str()), DLC_OK);
  ASSERT_EQ(forward(m.get(), x, y), DLC_OK);
  EXPECT_EQ(y[0], 10.0f);
  EXPECT_EQ(y[3], 16.0f);

  // A second model from the same file (a plain CPU one, for comparison).
  ModelPtr cpu = create(kDesc, DLC_DEVICE_CPU);
  ASSERT_EQ(dlc_model_device(cpu.get()), DLC_DEVICE_CPU);
  ASSERT_EQ(dlc_model_load(cpu.get(), dir.file("a.safetensors").c_str()),
            DLC_OK);
  EXPECT_EQ(paramF32(cpu.get(), 0)[0], 10.0f);
  CpuCalls = 0;
  ASSERT_EQ(forward(cpu.get(), x, y), DLC_OK);
  EXPECT_EQ(CpuCalls, 1);
}

TEST_F(FakeCuda, FailingLaunchIsAStatus) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  fake().failLaunchAt = 0;
  const float x[4] = {1, 2, 3, 4};
  float y[4] = {-1, -1, -1, -1};
  EXPECT_EQ(forward(m.get(), x, y), DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains(
      "model 'fake', entry 'forward' on cuda:0 (Fake GPU 0): launching kernel "
      "'fake_mul' (grid 1x1x1, block 4x1x1) failed: CUDA_ERROR_LAUNCH_FAILED "
      "(719)"))
      << dlc_last_error();
  EXPECT_EQ(y[0], -1.0f);          // outputs untouched
  EXPECT_EQ(fake().copiesDtoD, 0); // later calls were no-ops
  // The failure does not stick to the next run.
  ASSERT_EQ(forward(m.get(), x, y), DLC_OK) << dlc_last_error();
  EXPECT_STREQ(dlc_last_error(), "");

  // A bad kernel index from the generated code.
  EXPECT_EQ(dlc_model_run(m.get(), 3, nullptr, nullptr), DLC_ERR_INTERNAL);
  EXPECT_TRUE(errorContains("dlc_cuda_launch: kernel index 5 out of range "
                            "(the module has 2 kernels)"))
      << dlc_last_error();
}

TEST_F(FakeCuda, FailedCaptureRunsDirectly) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 0), DLC_OK);
  fake().failBeginCapture = true;
  const float x[4] = {1, 2, 3, 4};
  for (int run = 0; run < 3; ++run) {
    float y[4] = {0, 0, 0, 0};
    ASSERT_EQ(forward(m.get(), x, y), DLC_OK) << dlc_last_error();
    EXPECT_EQ(y[2], 3.0f);
  }
  EXPECT_EQ(fake().graphsInstantiated, 0);
  EXPECT_EQ(fake().launches.size(), 3u);
  EXPECT_FALSE(fake().launches.back().fromGraph);

  // A launch failing inside the capture: the run falls back to a direct
  // call, which launches fine.
  fake().failBeginCapture = false;
  ModelPtr m2 = create();
  ASSERT_EQ(dlc_model_init(m2.get(), 0), DLC_OK);
  float y[4];
  ASSERT_EQ(forward(m2.get(), x, y), DLC_OK);
  fake().failLaunchAt = fake().launchCalls; // the captured launch
  ASSERT_EQ(forward(m2.get(), x, y), DLC_OK) << dlc_last_error();
  EXPECT_EQ(y[3], 4.0f);
  EXPECT_EQ(fake().graphsInstantiated, 0);
}

TEST_F(FakeCuda, CreateFailures) {
  dlc_model *m = nullptr;
  // The PTX does not compile: the JIT log is in the message.
  dlc_cuda_module module = kModule;
  module.ptx = "FAKE_JIT_ERROR";
  dlc_model_desc desc = kDesc;
  desc.cuda = &module;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CUDA, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains("model 'fake' on cuda:0 (Fake GPU 0): loading the "
                            "PTX module (cuModuleLoadDataEx) failed: "
                            "CUDA_ERROR_INVALID_PTX (218): fake description; "
                            "JIT log: ptxas fatal   : fake syntax error"))
      << dlc_last_error();

  // A kernel name the PTX lacks.
  const char *const names[] = {"fake_mul", "fake_nope"};
  module = kModule;
  module.kernel_names = names;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CUDA, &m), DLC_ERR_FORMAT);
  EXPECT_TRUE(errorContains("kernel 'fake_nope' (kernel 1) is not in the PTX "
                            "module"))
      << dlc_last_error();

  // Too little device memory: the plan's numbers, for `auto` too.
  fake().freeBytes = 1000;
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m),
            DLC_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_CUDA, &m),
            DLC_ERR_OUT_OF_MEMORY);
  EXPECT_TRUE(errorContains(
      "not enough device memory: the model needs 33556480 bytes (params and "
      "optimizer state 128, workspace 256, input/output staging 1536, cuBLASLt "
      "workspace 33554432, 256-byte aligned), 1000 of 2147483648 bytes are "
      "free"))
      << dlc_last_error();
  EXPECT_EQ(m, nullptr);
}

TEST_F(FakeCuda, AutoFallsBackWhenTheSetupFails) {
  // The driver refuses the PTX (as an older driver refuses a newer PTX ISA):
  // `auto` runs the model on the CPU and keeps the reason; what the CUDA
  // setup had made is given back (TearDown).
  dlc_cuda_module module = kModule;
  module.ptx = "FAKE_JIT_ERROR";
  dlc_model_desc desc = kDesc;
  desc.cuda = &module;
  int loadsBefore = fake().moduleLoads;
  ModelPtr m = create(desc, DLC_DEVICE_AUTO);
  ASSERT_TRUE(m);
  EXPECT_EQ(fake().moduleLoads, loadsBefore); // the load failed
  EXPECT_EQ(dlc_model_device(m.get()), DLC_DEVICE_CPU);
  EXPECT_STREQ(dlc_model_device_name(m.get()), "cpu");
  EXPECT_STREQ(dlc_model_fallback_reason(m.get()),
               "model 'fake' on cuda:0 (Fake GPU 0): loading the PTX module "
               "(cuModuleLoadDataEx) failed: CUDA_ERROR_INVALID_PTX (218): "
               "fake description; JIT log: ptxas fatal   : fake syntax error");
  EXPECT_STREQ(dlc_last_error(), "");
  // The CPU arena holds the CPU workspace, which a CUDA model keeps on the
  // device: the CPU entries run.
  ASSERT_EQ(dlc_model_init(m.get(), 1), DLC_OK) << dlc_last_error();
  CpuCalls = 0;
  EXPECT_EQ(dlc_model_run(m.get(), 1, nullptr, nullptr), DLC_OK);
  EXPECT_EQ(CpuCalls, 1);
  EXPECT_EQ(fake().launches.size(), 0u);

  // DLC_DEVICE=auto is `auto`; DLC_DEVICE=cuda is an explicit request.
  {
    EnvGuard env("DLC_DEVICE", "auto");
    ModelPtr again = create(desc, DLC_DEVICE_AUTO);
    ASSERT_TRUE(again);
    EXPECT_EQ(dlc_model_device(again.get()), DLC_DEVICE_CPU);
  }
  {
    EnvGuard env("DLC_DEVICE", "cuda");
    dlc_model *none = nullptr;
    EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_AUTO, &none),
              DLC_ERR_DEVICE_UNAVAILABLE);
    EXPECT_EQ(none, nullptr);
  }

  // Where the setup works, `auto` runs on CUDA with no reason.
  ModelPtr cuda = create(kDesc, DLC_DEVICE_AUTO);
  ASSERT_TRUE(cuda);
  EXPECT_EQ(dlc_model_device(cuda.get()), DLC_DEVICE_CUDA);
  EXPECT_STREQ(dlc_model_fallback_reason(cuda.get()), "");
  EXPECT_EQ(dlc_model_fallback_reason(nullptr), nullptr);
}

TEST_F(FakeCuda, DeviceOrdinals) {
  {
    EnvGuard env("DLC_DEVICE", "cuda:1");
    ModelPtr m = create();
    ASSERT_TRUE(m);
    EXPECT_STREQ(dlc_model_device_name(m.get()), "cuda:1 (Fake GPU 1)");
  }
  {
    EnvGuard env("DLC_DEVICE", "CUDA:2");
    dlc_model *m = nullptr;
    EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m),
              DLC_ERR_DEVICE_UNAVAILABLE);
    EXPECT_TRUE(errorContains("CUDA device unavailable: no device cuda:2 "
                              "(this machine has 2 CUDA devices, cuda:0 to "
                              "cuda:1)"))
        << dlc_last_error();
    // An explicit ordinal wins over DLC_DEVICE's.
    ASSERT_EQ(dlc_model_create_on(&kDesc, DLC_DEVICE_AUTO, 1, &m), DLC_OK);
    EXPECT_STREQ(dlc_model_device_name(m), "cuda:1 (Fake GPU 1)");
    dlc_model_destroy(m);
  }
  // `auto` on a device the machine lacks: the CPU, and why.
  dlc_model *m = nullptr;
  ASSERT_EQ(dlc_model_create_on(&kDesc, DLC_DEVICE_AUTO, 7, &m), DLC_OK);
  EXPECT_EQ(dlc_model_device(m), DLC_DEVICE_CPU);
  EXPECT_STREQ(dlc_model_fallback_reason(m),
               "CUDA device unavailable: no device cuda:7 (this machine has 2 "
               "CUDA devices, cuda:0 to cuda:1)");
  dlc_model_destroy(m);
  EXPECT_EQ(dlc_model_create_on(&kDesc, DLC_DEVICE_CUDA, 7, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains("no device cuda:7")) << dlc_last_error();
  // DLC_DEVICE=cpu and models without CUDA code stay on the CPU.
  {
    EnvGuard env("DLC_DEVICE", "cpu");
    ModelPtr cpu = create();
    EXPECT_EQ(dlc_model_device(cpu.get()), DLC_DEVICE_CPU);
    EXPECT_STREQ(dlc_model_fallback_reason(cpu.get()), ""); // as asked
  }
  dlc_model_desc desc = kDesc;
  desc.cuda = nullptr;
  ModelPtr noCode = create(desc);
  EXPECT_EQ(dlc_model_device(noCode.get()), DLC_DEVICE_CPU);
  EXPECT_STREQ(dlc_model_fallback_reason(noCode.get()), ""); // CPU code only
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CUDA, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains("this model has no CUDA code"));
}

//===-- Failing fake drivers (one process each) ---------------------------===//

/// An explicit CUDA request fails with `why`; AUTO runs the model on the
/// CPU, says `why`, runs the CPU entries, and whatever a failed setup took
/// is given back.
void expectCpuFallback(const std::string &why) {
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_CUDA, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_EQ(dlc_last_error(), why);
  ASSERT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_AUTO, &m), DLC_OK)
      << dlc_last_error();
  EXPECT_EQ(dlc_model_device(m), DLC_DEVICE_CPU);
  EXPECT_EQ(dlc_model_fallback_reason(m), why);
  CpuCalls = 0;
  EXPECT_EQ(dlc_model_run(m, 1, nullptr, nullptr), DLC_OK);
  EXPECT_EQ(CpuCalls, 1);
  dlc_model_destroy(m);
  FakeCudaState &f = fake();
  EXPECT_EQ(f.primaryRetains, f.primaryReleases);
  EXPECT_EQ(f.streamsCreated, f.streamsDestroyed);
  EXPECT_EQ(f.liveDeviceAllocations, 0);
  EXPECT_EQ(f.liveHostAllocations, 0);
}

/// CUDA is unusable for `reason`: the CPU, whatever the model.
void expectUnusable(const std::string &reason) {
  char buf[256];
  EXPECT_EQ(dlc_cuda_available(buf, sizeof(buf)), 0);
  EXPECT_EQ(std::string(buf), reason);
  expectCpuFallback("CUDA device unavailable: " + reason);
}

TEST(FakeCudaNoDevice, CpuFallback) {
  expectUnusable(
      "cuInit(0) failed: CUDA_ERROR_NO_DEVICE (100): fake description");
}

TEST(FakeCudaZeroDevices, CpuFallback) {
  expectUnusable("no CUDA device found");
}

TEST(FakeCudaMissingSymbol, CpuFallback) {
  expectUnusable(
      "libcuda.so.1 does not provide cuGraphLaunch (symbol not found)");
}

TEST(FakeCudaOldDriver, CpuFallback) {
  // The driver probes fine but refuses the PTX: CUDA is usable, the model's
  // setup there is not.
  EXPECT_EQ(dlc_cuda_available(nullptr, 0), 1);
  expectCpuFallback(
      "model 'fake' on cuda:0 (Fake GPU 0): loading the PTX module "
      "(cuModuleLoadDataEx) failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): "
      "fake description; JIT log: ptxas fatal   : Unsupported .version; "
      "current version is older");
}

TEST(FakeCudaNoCublaslt, CpuFallback) {
  // The driver works, cuBLASLt does not start: a model with GEMMs cannot be
  // set up on CUDA (planning its GEMMs at creation fails).
  EXPECT_EQ(dlc_cuda_available(nullptr, 0), 1);
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&kDesc, DLC_DEVICE_CUDA, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains("entry 'gemm': planning its GEMMs: "))
      << dlc_last_error();
  EXPECT_TRUE(errorContains("cublasLtCreate failed: "
                            "CUBLAS_STATUS_NOT_INITIALIZED (1)"))
      << dlc_last_error();
  expectCpuFallback(dlc_last_error());
}

} // namespace

//===-- A model without kernels -------------------------------------------===//

TEST_F(FakeCuda, NoKernelsLoadsNoModule) {
  // Every op a GEMM or a copy: the compiler emits an empty PTX text and no
  // kernel names; the runtime loads no module and the entries still run.
  static const dlc_cuda_module noKernels = {"", 0, nullptr, kCudaEntries};
  static const dlc_model_desc desc = {DLC_ABI_VERSION, kText,   4,
                                      kCpuEntries,     nullptr, &noKernels,
                                      nullptr,         0,       nullptr};
  int loadsBefore = fake().moduleLoads;
  ModelPtr m = create(desc);
  ASSERT_TRUE(m);
  EXPECT_EQ(dlc_model_device(m.get()), DLC_DEVICE_CUDA);
  EXPECT_EQ(fake().moduleLoads, loadsBefore);
}
