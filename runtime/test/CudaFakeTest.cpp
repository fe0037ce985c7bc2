//===- CudaFakeTest.cpp - The CUDA backend against a fake driver ----------===//
//
// Runs with LD_LIBRARY_PATH pointing at the fake libcuda.so.1 and
// libcublasLt.so.13 of test/fake_cuda (see fake_cuda.h), one process per
// FAKE_CUDA_MODE (the driver is probed once per process): the suites
// FakeCuda* need a working fake, FakeCudaNoDevice / ZeroDevices /
// MissingSymbol / OldDriver / NoCublaslt the failing ones.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fake_cuda/fake_cuda.h"

#include "dlc/dlc_cuda_abi.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <memory>

using namespace dlc::test;

namespace {

FakeCudaState &fake() {
  static void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  static auto *get = lib ? reinterpret_cast<FakeCudaState *(*)()>(
                               ::dlsym(lib, "fake_cuda_state"))
                         : nullptr;
  if (!get) {
    ADD_FAILURE() << "the fake libcuda.so.1 is not on LD_LIBRARY_PATH";
    static FakeCudaState none;
    return none;
  }
  return *get();
}

//===-- A hand-written "compiled model" with CUDA code --------------------===//

// forward: y = x * w (fake_mul), through the workspace with two device
// copies. train: w += 1 (fake_add_one). gemm: c1 = a * bt^T (2x3 by 3x4),
// c2[b] = at[b]^T * b2[b] (batch 2 of 2x3 by 3x2, at stored 3x2).
const char *const kText = "dlc-model 1\n"
                          "name fake\n"
                          "param w f32 4 ones 0\n"
                          "param unused f32 3 zeros 0\n"
                          "entry forward\n"
                          "workspace 64\n"
                          "cuda_workspace 200\n"
                          "in x f32 4\n"
                          "out y f32 4\n"
                          "end\n"
                          "entry train\n"
                          "end\n"
                          "entry gemm\n"
                          "in a f32 2,3\n"
                          "in bt f32 4,3\n"
                          "in at f32 2,3,2\n"
                          "in b2 f32 2,3,2\n"
                          "out c1 f32 2,4\n"
                          "out c2 f32 2,2,2\n"
                          "end\n"
                          "entry bad\n"
                          "end\n";

const char *const kPtx =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry fake_mul(\n\t.param .u64 p0,\n\t.param .u64 p1,\n"
    "\t.param .u64 p2,\n\t.param .u64 p3\n)\n{\n\tret;\n}\n"
    ".visible .entry fake_add_one(\n\t.param .u64 p0,\n\t.param .u64 p1\n)\n"
    "{\n\tret;\n}\n";
const char *const kKernels[] = {"fake_mul", "fake_add_one"};

int64_t i64(void *p) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p));
}

void *LastArgs[16];

void cudaForward(void *const *args) {
  // w, unused, x, y, workspace, ctx
  for (int i = 0; i < 6; ++i)
    LastArgs[i] = args[i];
  void *ctx = args[5];
  const int64_t launch[] = {i64(args[2]), i64(args[0]), i64(args[4]), 4};
  dlc_cuda_launch(ctx, 0, 1, 1, 1, 4, 1, 1, 4, launch);
  dlc_cuda_memcpy(ctx, args[3], args[4], 16);
}

void cudaTrain(void *const *args) {
  // w, unused, workspace, ctx
  const int64_t launch[] = {i64(args[0]), 4};
  dlc_cuda_launch(args[3], 1, 2, 1, 1, 32, 1, 1, 2, launch);
}

void cudaGemm(void *const *args) {
  // w, unused, a, bt, at, b2, c1, c2, workspace, ctx
  void *ctx = args[9];
  dlc_cuda_gemm(ctx, DLC_F32, DLC_F32, 1, 2, 4, 3, args[2], 3, 0, 0, args[3], 3,
                0, 1, 0.0f, args[6], 4, 0, DLC_GEMM_EPILOGUE_NONE, nullptr,
                nullptr);
  dlc_cuda_gemm(ctx, DLC_F32, DLC_F32, 2, 2, 2, 3, args[4], 2, 6, 1, args[5], 2,
                6, 0, 0.0f, args[7], 2, 4, DLC_GEMM_EPILOGUE_NONE, nullptr,
                nullptr);
}

void cudaBad(void *const *args) {
  // w, unused, workspace, ctx: kernel 5 does not exist.
  dlc_cuda_launch(args[3], 5, 1, 1, 1, 1, 1, 1, 0, nullptr);
  dlc_cuda_launch(args[3], 0, 1, 1, 1, 1, 1, 1, 0, nullptr); // not reached
}

int CpuCalls = 0;
void cpuEntry(void *const *) { ++CpuCalls; }

const dlc_entry_fn kCudaEntries[] = {cudaForward, cudaTrain, cudaGemm, cudaBad};
const dlc_entry_fn kCpuEntries[] = {cpuEntry, cpuEntry, cpuEntry, cpuEntry};
const dlc_cuda_module kModule = {kPtx, 2, kKernels, kCudaEntries};
const dlc_model_desc kDesc = {DLC_ABI_VERSION, kText,   4,
                              kCpuEntries,     nullptr, &kModule};

struct ModelDeleter {
  void operator()(dlc_model *m) const { dlc_model_destroy(m); }
};
using ModelPtr = std::unique_ptr<dlc_model, ModelDeleter>;

ModelPtr create(const dlc_model_desc &desc = kDesc,
                dlc_device_kind device = DLC_DEVICE_AUTO) {
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&desc, device, &m), DLC_OK) << dlc_last_error();
  return ModelPtr(m);
}

/// The descriptor of a one-entry model described by `text`, without
/// kernels, whose CUDA entry is `cuda`. It lives as long as the process
/// (models point into it).
const dlc_model_desc &oneEntry(const char *text, dlc_entry_fn cuda) {
  struct Descriptor {
    dlc_entry_fn cpu = cpuEntry, cuda = nullptr;
    dlc_cuda_module module{};
    dlc_model_desc desc{};
  };
  static std::deque<Descriptor> descriptors;
  Descriptor &d = descriptors.emplace_back();
  d.cuda = cuda;
  d.module = {kPtx, 0, nullptr, &d.cuda};
  d.desc = {DLC_ABI_VERSION, text, 1, &d.cpu, nullptr, &d.module};
  return d.desc;
}

/// That model, created on the fake GPU.
ModelPtr createOneEntry(const char *text, dlc_entry_fn cuda) {
  return create(oneEntry(text, cuda));
}

/// The status of creating that model on the fake GPU (which runs its entry
/// once to plan its GEMMs); the model, if created, is destroyed.
dlc_status createOneEntryStatus(const char *text, dlc_entry_fn cuda) {
  dlc_model *m = nullptr;
  dlc_status status =
      dlc_model_create(&oneEntry(text, cuda), DLC_DEVICE_CUDA, &m);
  dlc_model_destroy(m);
  return status;
}

/// sum_p x[p] * y[p] over p < k, in order, in fp32: the reference of one
/// element of a GEMM whose operands are rows x and y.
float rowDot(const float *x, const float *y, int k) {
  float sum = 0;
  for (int p = 0; p < k; ++p)
    sum += x[p] * y[p];
  return sum;
}

dlc_status forward(dlc_model *m, const float *x, float *y) {
  const void *inputs[] = {x};
  void *outputs[] = {y};
  return dlc_model_run(m, 0, inputs, outputs);
}

float *paramF32(dlc_model *m, int32_t i) {
  dlc_tensor_info info;
  EXPECT_EQ(dlc_model_param_info(m, i, &info), DLC_OK) << dlc_last_error();
  return static_cast<float *>(info.data);
}

class FakeCuda : public ::testing::Test {
protected:
  void SetUp() override {
    FakeCudaState &f = fake();
    f.resetRecords();
    f.failLaunchAt = -1;
    f.failBeginCapture = false;
    f.freeBytes = size_t(1) << 30;
    ExecsDestroyedBefore = f.execsDestroyed;
  }
  void TearDown() override {
    // Every model is destroyed by now: everything was given back.
    FakeCudaState &f = fake();
    EXPECT_EQ(f.liveDeviceAllocations, 0);
    EXPECT_EQ(f.liveHostAllocations, 0);
    EXPECT_EQ(f.liveEvents, 0);
    EXPECT_EQ(f.primaryRetains, f.primaryReleases);
    EXPECT_EQ(f.streamsCreated, f.streamsDestroyed);
    EXPECT_EQ(f.moduleLoads, f.moduleUnloads);
    EXPECT_EQ(f.graphsInstantiated, f.execsDestroyed - ExecsDestroyedBefore);
  }
  int ExecsDestroyedBefore = 0;
};

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

TEST_F(FakeCuda, GemmMapsRowMajorToCublasLt) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  // Creation planned both GEMMs (a heuristic each) and ran nothing: each
  // entry's host function ran with its launches, copies and GEMMs off.
  EXPECT_EQ(fake().heuristics, 2);
  EXPECT_EQ(fake().matmuls, 0);
  EXPECT_EQ(fake().launchCalls, 0);
  EXPECT_EQ(fake().copiesDtoD, 0);
  float a[6], bt[12], at[12], b2[12];
  for (int i = 0; i < 6; ++i)
    a[i] = float(i + 1);
  for (int i = 0; i < 12; ++i) {
    bt[i] = float(i % 5) - 2;
    at[i] = float(i) * 0.5f;
    b2[i] = float(12 - i);
  }
  float c1[8], c2[8];
  const void *inputs[] = {a, bt, at, b2};
  void *outputs[] = {c1, c2};
  for (int run = 0; run < 2; ++run) {
    std::memset(c1, 0, sizeof(c1));
    std::memset(c2, 0, sizeof(c2));
    ASSERT_EQ(dlc_model_run(m.get(), 2, inputs, outputs), DLC_OK)
        << dlc_last_error();
    // c1 = a (2x3) * bt^T (bt is 4x3).
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(c1[i * 4 + j], rowDot(a + i * 3, bt + j * 3, 3))
            << i << "," << j;
    // c2[b] = at[b]^T (at[b] is 3x2) * b2[b] (3x2).
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          float sum = 0;
          for (int p = 0; p < 3; ++p)
            sum += at[b * 6 + p * 2 + i] * b2[b * 6 + p * 2 + j];
          EXPECT_EQ(c2[b * 4 + i * 2 + j], sum) << b << ":" << i << "," << j;
        }
  }
  // Two shapes, one heuristic each, at creation; the second run replays
  // the graph.
  EXPECT_EQ(fake().heuristics, 2);
  EXPECT_EQ(fake().matmuls, 4);
  EXPECT_EQ(fake().graphsInstantiated, 1);
}

TEST_F(FakeCuda, GemmEpilogueAddsBiasAndActivation) {
  // c1 = a * bt^T + bias, c2 = relu(a * bt^T + bias), c3 = gelu_tanh(a *
  // bt^T + bias): the bias is one value per output column (row-major), i.e.
  // per row of cuBLASLt's column-major D. A NaN in the bias stays NaN
  // through BIAS and GELU_BIAS and becomes 0 through RELU_BIAS (cuBLASLt's
  // rule, which the compiler must respect).
  static const char *const text =
      "dlc-model 1\nname g\nentry e\nin a f32 2,3\nin bt f32 4,3\n"
      "in bias f32 4\nout c1 f32 2,4\nout c2 f32 2,4\nout c3 f32 2,4\nend\n";
  ModelPtr m = createOneEntry(text, [](void *const *args) {
    // a, bt, bias, c1, c2, c3, workspace, ctx
    const int32_t epilogues[] = {DLC_GEMM_EPILOGUE_BIAS,
                                 DLC_GEMM_EPILOGUE_RELU_BIAS,
                                 DLC_GEMM_EPILOGUE_GELU_BIAS};
    for (int out = 0; out < 3; ++out)
      dlc_cuda_gemm(args[7], DLC_F32, DLC_F32, 1, 2, 4, 3, args[0], 3, 0, 0,
                    args[1], 3, 0, 1, 0.0f, args[3 + out], 4, 0, epilogues[out],
                    args[2], nullptr);
  });
  ASSERT_TRUE(m);
  const float a[6] = {1, -2, 3, 0.5f, 4, -1};
  float bt[12];
  for (int i = 0; i < 12; ++i)
    bt[i] = float(i % 5) - 2;
  const float bias[4] = {0.25f, -100.0f, NAN, 3.0f};
  float c1[8], c2[8], c3[8];
  const void *inputs[] = {a, bt, bias};
  void *outputs[] = {c1, c2, c3};
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK)
      << dlc_last_error();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      float biased = rowDot(a + i * 3, bt + j * 3, 3) + bias[j];
      if (j == 2) {
        EXPECT_TRUE(std::isnan(c1[i * 4 + j])) << i;
        EXPECT_EQ(c2[i * 4 + j], 0.0f) << i;
        EXPECT_TRUE(std::isnan(c3[i * 4 + j])) << i;
        continue;
      }
      EXPECT_EQ(c1[i * 4 + j], biased) << i << "," << j;
      EXPECT_EQ(c2[i * 4 + j], biased > 0 ? biased : 0.0f) << i << "," << j;
      double x = biased;
      double gelu =
          0.5 * x *
          (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      EXPECT_NEAR(c3[i * 4 + j], gelu, 1e-6 * (1 + std::fabs(gelu)))
          << i << "," << j;
    }
  // The epilogue is part of the plan: one heuristic query per epilogue.
  EXPECT_EQ(fake().heuristics, 3);

  // An epilogue needs fp32 output and a bias: the model is refused when it
  // is created, which plans its GEMMs.
  EXPECT_EQ(createOneEntryStatus(
                text,
                [](void *const *args) {
                  dlc_cuda_gemm(args[7], DLC_F32, DLC_F32, 1, 2, 4, 3, args[0],
                                3, 0, 0, args[1], 3, 0, 1, 0.0f, args[3], 4, 0,
                                DLC_GEMM_EPILOGUE_BIAS, nullptr, nullptr);
                }),
            DLC_ERR_INTERNAL);
  EXPECT_TRUE(errorContains("model 'g' on cuda:0 (Fake GPU 0): entry 'e': "
                            "planning its GEMMs: dlc_cuda_gemm (f32 x f32 -> "
                            "f32, batch 1, m 2, n 4, k 3): bad epilogue 1"))
      << dlc_last_error();
}

TEST_F(FakeCuda, GemmBiasGradients) {
  // dw = dy^T * x (a linear layer's weight gradient: dy read transposed)
  // with the sums over k of each operand: BGRAD_A gives the sum of opA's
  // rows (the bias gradient, sum_p dy[p][i]), BGRAD_B that of opB's
  // columns (sum_p x[p][j]). The row-major operands are swapped in
  // cuBLASLt's column-major view, so BGRAD_A must reach it as BGRADB.
  static const char *const text =
      "dlc-model 1\nname g\nentry e\nin dy f32 3,2\nin x f32 3,4\n"
      "out dw1 f32 2,4\nout ga f32 2\nout dw2 f32 2,4\nout gb f32 4\nend\n";
  ModelPtr m = createOneEntry(text, [](void *const *args) {
    // dy, x, dw1, ga, dw2, gb, workspace, ctx
    dlc_cuda_gemm(args[7], DLC_F32, DLC_F32, 1, 2, 4, 3, args[0], 2, 0, 1,
                  args[1], 4, 0, 0, 0.0f, args[2], 4, 0,
                  DLC_GEMM_EPILOGUE_BGRAD_A, args[3], nullptr);
    dlc_cuda_gemm(args[7], DLC_F32, DLC_F32, 1, 2, 4, 3, args[0], 2, 0, 1,
                  args[1], 4, 0, 0, 0.0f, args[4], 4, 0,
                  DLC_GEMM_EPILOGUE_BGRAD_B, args[5], nullptr);
  });
  ASSERT_TRUE(m);
  const float dy[6] = {1, -2, 3, 0.5f, 4, -1};
  float x[12];
  for (int i = 0; i < 12; ++i)
    x[i] = float(i % 5) - 2;
  float dw1[8], ga[2], dw2[8], gb[4];
  const void *inputs[] = {dy, x};
  void *outputs[] = {dw1, ga, dw2, gb};
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK)
      << dlc_last_error();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ga[i], dy[i] + dy[2 + i] + dy[4 + i]) << i;
    for (int j = 0; j < 4; ++j) {
      float want = 0;
      for (int p = 0; p < 3; ++p)
        want += dy[p * 2 + i] * x[p * 4 + j];
      EXPECT_EQ(dw1[i * 4 + j], want) << i << "," << j;
      EXPECT_EQ(dw2[i * 4 + j], want) << i << "," << j;
    }
  }
  for (int j = 0; j < 4; ++j)
    EXPECT_EQ(gb[j], x[j] + x[4 + j] + x[8 + j]) << j;
  EXPECT_EQ(fake().heuristics, 2);

  // A bias gradient needs a batch of 1 (one vector for the whole batch
  // would be written by every matrix of it).
  EXPECT_EQ(createOneEntryStatus(
                text,
                [](void *const *args) {
                  dlc_cuda_gemm(args[7], DLC_F32, DLC_F32, 2, 1, 4, 3, args[0],
                                2, 0, 1, args[1], 4, 0, 0, 0.0f, args[2], 4, 0,
                                DLC_GEMM_EPILOGUE_BGRAD_A, args[3], nullptr);
                }),
            DLC_ERR_INTERNAL);
  EXPECT_TRUE(errorContains("bias gradients and masks a batch of 1"))
      << dlc_last_error();
}

TEST_F(FakeCuda, GemmReluMaskAndItsGradient) {
  // h = relu(a * bt^T + bias) with RELU_AUX_BIAS, which also writes the
  // mask of where a * bt^T + bias > 0, then dh = (g * w) masked by it
  // (DRELU): a linear layer's ReLU and, in the backward pass, the ReLU's
  // gradient from the mask instead of the pre-activation. n = 130 makes
  // the mask's columns (cuBLASLt's, of 130 rows) take two 128-bit words.
  static const char *const text =
      "dlc-model 1\nname g\nentry e\nworkspace 1024\nin a f32 2,3\n"
      "in bt f32 130,3\n"
      "in bias f32 130\nin g f32 2,5\nin w f32 5,130\n"
      "out h f32 2,130\nout dh f32 2,130\nend\n";
  ASSERT_EQ(dlc_gemm_relu_mask_bytes(2, 130), 64);
  ModelPtr m = createOneEntry(text, [](void *const *args) {
    // a, bt, bias, g, w, h, dh, workspace, ctx; the mask is at the start
    // of the workspace (1024 bytes, below).
    void *mask = args[7];
    dlc_cuda_gemm(args[8], DLC_F32, DLC_F32, 1, 2, 130, 3, args[0], 3, 0, 0,
                  args[1], 3, 0, 1, 0.0f, args[5], 130, 0,
                  DLC_GEMM_EPILOGUE_RELU_AUX_BIAS, args[2], mask);
    dlc_cuda_gemm(args[8], DLC_F32, DLC_F32, 1, 2, 130, 5, args[3], 5, 0, 0,
                  args[4], 130, 0, 0, 0.0f, args[6], 130, 0,
                  DLC_GEMM_EPILOGUE_DRELU, nullptr, mask);
  });
  ASSERT_TRUE(m);
  float a[6], bt[390], bias[130], g[10], w[650];
  for (int i = 0; i < 6; ++i)
    a[i] = float(i % 4) - 1.5f;
  for (int i = 0; i < 390; ++i)
    bt[i] = float(i % 7) - 3;
  for (int j = 0; j < 130; ++j)
    bias[j] = float(j % 3) - 1;
  for (int i = 0; i < 10; ++i)
    g[i] = float(i) - 4.5f;
  for (int i = 0; i < 650; ++i)
    w[i] = float(i % 5) - 2;
  float h[260], dh[260];
  const void *inputs[] = {a, bt, bias, g, w};
  void *outputs[] = {h, dh};
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK)
      << dlc_last_error();
  int positive = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 130; ++j) {
      float pre = rowDot(a + i * 3, bt + j * 3, 3) + bias[j];
      float grad = 0;
      for (int p = 0; p < 5; ++p)
        grad += g[i * 5 + p] * w[p * 130 + j];
      positive += pre > 0;
      EXPECT_EQ(h[i * 130 + j], pre > 0 ? pre : 0.0f) << i << "," << j;
      EXPECT_EQ(dh[i * 130 + j], pre > 0 ? grad : 0.0f) << i << "," << j;
    }
  EXPECT_GT(positive, 40);
  EXPECT_LT(positive, 220);

  // A mask epilogue without a mask never reaches cuBLASLt.
  EXPECT_EQ(createOneEntryStatus(text,
                                 [](void *const *args) {
                                   dlc_cuda_gemm(args[8], DLC_F32, DLC_F32, 1,
                                                 2, 130, 5, args[3], 5, 0, 0,
                                                 args[4], 130, 0, 0, 0.0f,
                                                 args[6], 130, 0,
                                                 DLC_GEMM_EPILOGUE_DRELU,
                                                 nullptr, nullptr);
                                 }),
            DLC_ERR_INTERNAL);
  EXPECT_TRUE(errorContains("bad epilogue 7")) << dlc_last_error();
}

TEST_F(FakeCuda, Bf16GemmStoresFp32OrRoundedBf16) {
  // a (1x2) * b (2x2), bf16 operands, in an fp32 C and in a bf16 C: the
  // second is the first rounded to nearest even. 1 + 2^-8 is halfway
  // between two bf16 values (rounds down to 1, the even one), 1 + 3 * 2^-8
  // rounds up to 1 + 2^-6.
  static const char *const text = "dlc-model 1\nname g\nentry e\n"
                                  "in a bf16 1,2\nin b bf16 2,2\n"
                                  "out c f32 1,2\nout h bf16 1,2\nend\n";
  ModelPtr m = createOneEntry(text, [](void *const *args) {
    // a, b, c, h, workspace, ctx
    for (int32_t dtypeC : {DLC_F32, DLC_BF16})
      dlc_cuda_gemm(args[5], DLC_BF16, dtypeC, 1, 1, 2, 2, args[0], 2, 0, 0,
                    args[1], 2, 0, 0, 0.0f, args[dtypeC == DLC_F32 ? 2 : 3], 2,
                    0, DLC_GEMM_EPILOGUE_NONE, nullptr, nullptr);
  });
  ASSERT_TRUE(m);
  // bf16 bits: 1.0 = 0x3f80, 2^-8 = 0x3b80, 3 * 2^-8 = 0x3c40, 0 = 0.
  const uint16_t a[2] = {0x3f80, 0x3f80};
  const uint16_t b[4] = {0x3f80, 0x3f80, 0x3b80, 0x3c40};
  float c[2] = {};
  uint16_t h[2] = {};
  const void *inputs[] = {a, b};
  void *outputs[] = {c, h};
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK)
      << dlc_last_error();
  EXPECT_EQ(c[0], 1.0f + 0x1p-8f);
  EXPECT_EQ(c[1], 1.0f + 3 * 0x1p-8f);
  EXPECT_EQ(h[0], 0x3f80); // 1
  EXPECT_EQ(h[1], 0x3f82); // 1 + 2^-6
}

TEST_F(FakeCuda, Fp16GemmAccumulatesInFp32) {
  // a (1x2) * b (2x2), fp16 operands, an fp32 C: products of normal and
  // subnormal halves summed in fp32, where fp16 would have lost them.
  static const char *const text = "dlc-model 1\nname g\nentry e\n"
                                  "in a f16 1,2\nin b f16 2,2\n"
                                  "out c f32 1,2\nend\n";
  ModelPtr m = createOneEntry(text, [](void *const *args) {
    // a, b, c, workspace, ctx
    dlc_cuda_gemm(args[4], DLC_F16, DLC_F32, 1, 1, 2, 2, args[0], 2, 0, 0,
                  args[1], 2, 0, 0, 0.0f, args[2], 2, 0, DLC_GEMM_EPILOGUE_NONE,
                  nullptr, nullptr);
  });
  ASSERT_TRUE(m);
  // fp16 bits: 1.0 = 0x3c00, -2.0 = 0xc000, 2^-11 = 0x1000, 2^-24 (the
  // least subnormal) = 0x0001.
  const uint16_t a[2] = {0x3c00, 0xc000};
  const uint16_t b[4] = {0x3c00, 0x3c00, 0x1000, 0x0001};
  float c[2] = {};
  const void *inputs[] = {a, b};
  void *outputs[] = {c};
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK)
      << dlc_last_error();
  EXPECT_EQ(c[0], 1.0f - 0x1p-10f);
  EXPECT_EQ(c[1], 1.0f - 0x1p-23f);
}

TEST_F(FakeCuda, UnsupportedGemmIsReported) {
  // fp16 inputs with an fp16 result: the fake cuBLASLt has no algorithm
  // (the real one has; dlc's steps keep fp16 GEMMs' results in fp32).
  static const char *const text = "dlc-model 1\nname g\nentry e\nend\n";
  ModelPtr m = createOneEntry(text, [](void *const *args) {
    dlc_cuda_gemm(args[1], DLC_F16, DLC_F16, 1, 1, 1, 1, args[0], 1, 0, 0,
                  args[0], 1, 0, 0, 0.0f, args[0], 1, 0, DLC_GEMM_EPILOGUE_NONE,
                  nullptr, nullptr);
  });
  ASSERT_TRUE(m);
  EXPECT_EQ(dlc_model_run(m.get(), 0, nullptr, nullptr),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains("model 'g', entry 'e' on cuda:0 (Fake GPU 0): "
                            "dlc_cuda_gemm (f16 x f16 -> f16, batch 1, m 1, "
                            "n 1, k 1): cublasLtMatmul failed: "
                            "CUBLAS_STATUS_NOT_SUPPORTED (15)"))
      << dlc_last_error();

  // Bad dtypes never reach cuBLASLt.
  EXPECT_EQ(createOneEntryStatus(
                text,
                [](void *const *args) {
                  dlc_cuda_gemm(args[1], DLC_F32, DLC_F16, 1, 1, 1, 1, args[0],
                                1, 0, 0, args[0], 1, 0, 0, 0.0f, args[0], 1, 0,
                                DLC_GEMM_EPILOGUE_NONE, nullptr, nullptr);
                }),
            DLC_ERR_INTERNAL);
  EXPECT_TRUE(errorContains("unsupported dtypes")) << dlc_last_error();
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
                                      kCpuEntries,     nullptr, &noKernels};
  int loadsBefore = fake().moduleLoads;
  ModelPtr m = create(desc);
  ASSERT_TRUE(m);
  EXPECT_EQ(dlc_model_device(m.get()), DLC_DEVICE_CUDA);
  EXPECT_EQ(fake().moduleLoads, loadsBefore);
}
