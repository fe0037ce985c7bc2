//===- ModelTest.cpp - dlc_model: create, init, run, save, load -----------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

using namespace dlc::test;

namespace {

//===-- A hand-written "compiled model" -----------------------------------===//

// y[i] = x[i] * scale[i % 4] + bias[i % 4] for x, y of shape [2, 4]; the
// entry also records the args it was given.
const char *const kTinyText = "dlc-model 1\n"
                              "name tiny\n"
                              "param scale f32 4 uniform 0.5\n"
                              "param bias f32 4 zeros 0\n"
                              "param ln.weight f32 3 ones 0\n"
                              "param count i64 - zeros 0\n"
                              "entry forward\n"
                              "in x f32 2,4\n"
                              "out y f32 2,4\n"
                              "end\n"
                              "entry stats\n"
                              "in x f32 2,4\n"
                              "in k i32 -\n"
                              "out sum f64 -\n"
                              "out n i64 -\n"
                              "end\n";

void *RecordedArgs[16];
int Calls = 0;

void tinyForward(void *const *args) {
  ++Calls;
  for (int i = 0; i < 6; ++i)
    RecordedArgs[i] = args[i];
  const auto *scale = static_cast<const float *>(args[0]);
  const auto *bias = static_cast<const float *>(args[1]);
  auto *count = static_cast<int64_t *>(args[3]);
  const auto *x = static_cast<const float *>(args[4]);
  auto *y = static_cast<float *>(args[5]);
  for (int i = 0; i < 8; ++i)
    y[i] = x[i] * scale[i % 4] + bias[i % 4];
  ++*count;
}

void tinyStats(void *const *args) {
  ++Calls;
  for (int i = 0; i < 8; ++i)
    RecordedArgs[i] = args[i];
  const auto *x = static_cast<const float *>(args[4]);
  int32_t k = *static_cast<const int32_t *>(args[5]);
  double sum = 0;
  for (int i = 0; i < 8; ++i)
    sum += x[i];
  *static_cast<double *>(args[6]) = sum * k;
  *static_cast<int64_t *>(args[7]) = 8;
}

const dlc_entry_fn kTinyEntries[] = {tinyForward, tinyStats};
const dlc_model_desc kTiny = {DLC_ABI_VERSION, kTinyText, 2,
                              kTinyEntries,    nullptr,   nullptr,
                              nullptr,         0,         nullptr};

ModelPtr create(const dlc_model_desc &desc = kTiny) {
  return createModel(desc, DLC_DEVICE_CPU);
}

std::vector<uint8_t> params(const dlc_model *m) {
  std::vector<uint8_t> bytes;
  for (int32_t i = 0; i < dlc_model_num_params(m); ++i) {
    dlc_tensor_info info;
    EXPECT_EQ(dlc_model_param_info(m, i, &info), DLC_OK);
    const auto *p = static_cast<const uint8_t *>(info.data);
    bytes.insert(bytes.end(), p, p + info.nbytes);
  }
  return bytes;
}

float *paramF32(dlc_model *m, int32_t i) {
  dlc_tensor_info info;
  EXPECT_EQ(dlc_model_param_info(m, i, &info), DLC_OK);
  return static_cast<float *>(info.data);
}

//===-- Creation and introspection ----------------------------------------===//

TEST(ModelTest, CreateAndDescribe) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  EXPECT_STREQ(dlc_last_error(), "");
  EXPECT_STREQ(dlc_model_name(m.get()), "tiny");
  EXPECT_EQ(dlc_model_device(m.get()), DLC_DEVICE_CPU);
  EXPECT_EQ(dlc_model_num_params(m.get()), 4);
  EXPECT_EQ(dlc_model_param_bytes(m.get()), 64 * 4);

  dlc_tensor_info info;
  ASSERT_EQ(dlc_model_param_info(m.get(), 2, &info), DLC_OK);
  EXPECT_STREQ(info.name, "ln.weight");
  EXPECT_EQ(info.dtype, DLC_F32);
  EXPECT_EQ(info.rank, 1);
  EXPECT_EQ(info.shape[0], 3);
  EXPECT_EQ(info.shape[1], 0);
  EXPECT_EQ(info.numel, 3);
  EXPECT_EQ(info.nbytes, 12);
  ASSERT_NE(info.data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(info.data) % 64, 0u);

  ASSERT_EQ(dlc_model_param_info(m.get(), 3, &info), DLC_OK);
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.numel, 1);
  EXPECT_EQ(info.nbytes, 8);

  // The arena starts 2 MiB aligned and is zeroed at create.
  ASSERT_EQ(dlc_model_param_info(m.get(), 0, &info), DLC_OK);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(info.data) % (2 << 20), 0u);
  for (uint8_t byte : params(m.get()))
    EXPECT_EQ(byte, 0);

  EXPECT_EQ(dlc_model_param_info(m.get(), 4, &info), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("param index 4 out of range"));
  EXPECT_EQ(dlc_model_param_info(m.get(), -1, &info), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_model_param_info(m.get(), 0, nullptr),
            DLC_ERR_INVALID_ARGUMENT);

  EXPECT_EQ(dlc_model_num_entries(m.get()), 2);
  EXPECT_EQ(dlc_model_find_entry(m.get(), "stats"), 1);
  EXPECT_STREQ(dlc_last_error(), "");
  EXPECT_EQ(dlc_model_find_entry(m.get(), "backward"), -1);
  EXPECT_TRUE(errorContains("no entry 'backward'"));
  EXPECT_STREQ(dlc_model_entry_name(m.get(), 0), "forward");
  EXPECT_EQ(dlc_model_entry_name(m.get(), 2), nullptr);
  EXPECT_EQ(dlc_model_entry_num_inputs(m.get(), 1), 2);
  EXPECT_EQ(dlc_model_entry_num_outputs(m.get(), 1), 2);
  EXPECT_EQ(dlc_model_entry_num_inputs(m.get(), 5), -1);

  ASSERT_EQ(dlc_model_entry_input_info(m.get(), 1, 1, &info), DLC_OK);
  EXPECT_STREQ(info.name, "k");
  EXPECT_EQ(info.dtype, DLC_I32);
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.data, nullptr);
  ASSERT_EQ(dlc_model_entry_output_info(m.get(), 0, 0, &info), DLC_OK);
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(info.shape[1], 4);
  EXPECT_EQ(info.nbytes, 32);
  EXPECT_EQ(dlc_model_entry_output_info(m.get(), 0, 1, &info),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_model_entry_input_info(m.get(), -1, 0, &info),
            DLC_ERR_INVALID_ARGUMENT);
}

TEST(ModelTest, NullModel) {
  EXPECT_EQ(dlc_model_name(nullptr), nullptr);
  EXPECT_TRUE(errorContains("model is NULL"));
  EXPECT_EQ(dlc_model_num_params(nullptr), -1);
  EXPECT_EQ(dlc_model_param_bytes(nullptr), -1);
  EXPECT_EQ(dlc_model_num_entries(nullptr), -1);
  EXPECT_EQ(dlc_model_device(nullptr), DLC_DEVICE_AUTO);
  EXPECT_EQ(dlc_model_init(nullptr, 1), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_model_load(nullptr, "x"), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_model_save(nullptr, "x"), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_model_run(nullptr, 0, nullptr, nullptr),
            DLC_ERR_INVALID_ARGUMENT);
  dlc_model_destroy(nullptr);
}

TEST(ModelTest, BadDescriptors) {
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(nullptr, DLC_DEVICE_CPU, &m),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_model_create(&kTiny, DLC_DEVICE_CPU, nullptr),
            DLC_ERR_INVALID_ARGUMENT);

  dlc_model_desc desc = kTiny;
  desc.abi_version = DLC_ABI_VERSION + 1;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_ERR_FORMAT);
  EXPECT_TRUE(
      errorContains("ABI version " + std::to_string(DLC_ABI_VERSION + 1)));
  EXPECT_EQ(m, nullptr);
  desc.abi_version = 0;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_ERR_FORMAT);

  desc = kTiny;
  desc.text = nullptr;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_ERR_FORMAT);

  desc = kTiny;
  desc.num_entries = 1;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_ERR_FORMAT);
  EXPECT_TRUE(errorContains("num_entries is 1 but the description has 2"));

  desc = kTiny;
  desc.entries = nullptr;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_ERR_FORMAT);

  const dlc_entry_fn withNull[] = {tinyForward, nullptr};
  desc = kTiny;
  desc.entries = withNull;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_ERR_FORMAT);
  EXPECT_TRUE(errorContains("entry function 'stats' is NULL"));

  EXPECT_EQ(dlc_model_create(&kTiny, static_cast<dlc_device_kind>(3), &m),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
}

TEST(ModelTest, NoParams) {
  const char *text = "dlc-model 1\nname empty\n";
  dlc_model_desc desc = {DLC_ABI_VERSION, text,    0, nullptr, nullptr,
                         nullptr,         nullptr, 0, nullptr};
  ModelPtr m = create(desc);
  ASSERT_TRUE(m);
  EXPECT_EQ(dlc_model_num_params(m.get()), 0);
  EXPECT_EQ(dlc_model_param_bytes(m.get()), 0);
  EXPECT_EQ(dlc_model_init(m.get(), 1), DLC_OK);
  TempDir dir;
  ASSERT_EQ(dlc_model_save(m.get(), dir.file("w.safetensors").c_str()), DLC_OK);
  EXPECT_EQ(dlc_model_load(m.get(), dir.file("w.safetensors").c_str()), DLC_OK);
}

TEST(ModelTest, LargeArenaUsesHugePages) {
  // 3 MiB + 4 bytes: rounded up to whole 2 MiB pages, all zeroed.
  const char *text = "dlc-model 1\nname big\n"
                     "param a f32 786432 uniform 1\n"
                     "param b f32 1 ones 0\n";
  dlc_model_desc desc = {DLC_ABI_VERSION, text,    0, nullptr, nullptr,
                         nullptr,         nullptr, 0, nullptr};
  ModelPtr m = create(desc);
  ASSERT_TRUE(m);
  EXPECT_EQ(dlc_model_param_bytes(m.get()), 3 * 1024 * 1024 + 64);
  ASSERT_EQ(dlc_model_init(m.get(), 3), DLC_OK);
  EXPECT_EQ(paramF32(m.get(), 1)[0], 1.0f);
}

TEST(ModelTest, OutOfMemoryNamesTheSize) {
  // 2^59 f32 elements = 2^61 bytes: valid, but no machine has that much.
  const char *text = "dlc-model 1\nname huge\n"
                     "param w f32 536870912,1073741824 zeros 0\n";
  dlc_model_desc desc = {DLC_ABI_VERSION, text,    0, nullptr, nullptr,
                         nullptr,         nullptr, 0, nullptr};
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(m, nullptr);
  EXPECT_TRUE(errorContains("2305843009213693952 bytes")) << dlc_last_error();

  // With a workspace: the message gives the plan's parts.
  const char *withWorkspace = "dlc-model 1\nname huge\n"
                              "param w f32 536870912,1073741824 zeros 0\n"
                              "entry forward\nworkspace 4096\nend\n";
  const dlc_entry_fn entries[] = {[](void *const *) {}};
  dlc_model_desc desc2 = {DLC_ABI_VERSION, withWorkspace, 1, entries, nullptr,
                          nullptr,         nullptr,       0, nullptr};
  EXPECT_EQ(dlc_model_create(&desc2, DLC_DEVICE_CPU, &m),
            DLC_ERR_OUT_OF_MEMORY);
  EXPECT_TRUE(errorContains(
      "cannot allocate the memory of model 'huge': 2305843009213698048 bytes "
      "(params and optimizer state 2305843009213693952, workspace 4096, as "
      "planned at compile time)"))
      << dlc_last_error();
}

TEST(ModelTest, WorkspaceFollowsTheParams) {
  const char *text = "dlc-model 1\nname ws\n"
                     "param w f32 3 zeros 0\n"
                     "entry a\nworkspace 100\nend\n"
                     "entry b\nworkspace 1000\nend\n";
  static void *seen[2];
  const dlc_entry_fn entries[] = {[](void *const *args) { seen[0] = args[1]; },
                                  [](void *const *args) { seen[1] = args[1]; }};
  dlc_model_desc desc = {DLC_ABI_VERSION, text,    2, entries, nullptr,
                         nullptr,         nullptr, 0, nullptr};
  ModelPtr m = create(desc);
  // 64 bytes of params, then the largest workspace (1000 -> 1024).
  EXPECT_EQ(dlc_model_memory_bytes(m.get()), 64 + 1024);
  EXPECT_EQ(dlc_model_workspace_bytes(m.get()), 1024);
  ASSERT_EQ(dlc_model_run(m.get(), 0, nullptr, nullptr), DLC_OK);
  ASSERT_EQ(dlc_model_run(m.get(), 1, nullptr, nullptr), DLC_OK);
  // Both entries get the same workspace, right after the params.
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(static_cast<char *>(seen[0]) -
                reinterpret_cast<char *>(paramF32(m.get(), 0)),
            64);
  EXPECT_EQ(dlc_model_memory_bytes(nullptr), -1);
}

//===-- Init
//---------------------------------------------------------------===//

TEST(ModelTest, InitIsDeterministic) {
  ModelPtr a = create(), b = create(), c = create();
  ASSERT_EQ(dlc_model_init(a.get(), 42), DLC_OK);
  ASSERT_EQ(dlc_model_init(b.get(), 42), DLC_OK);
  ASSERT_EQ(dlc_model_init(c.get(), 43), DLC_OK);
  EXPECT_EQ(params(a.get()), params(b.get()));
  EXPECT_NE(params(a.get()), params(c.get()));

  // Init resets every param, including ones changed since.
  paramF32(b.get(), 1)[0] = 5;
  ASSERT_EQ(dlc_model_init(b.get(), 42), DLC_OK);
  EXPECT_EQ(params(a.get()), params(b.get()));

  const float *scale = paramF32(a.get(), 0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_LE(std::fabs(scale[i]), 0.5f);
    EXPECT_NE(scale[i], 0.0f);
  }
  const float *bias = paramF32(a.get(), 1);
  const float *ones = paramF32(a.get(), 2);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(ones[i], 1.0f);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(bias[i], 0.0f);
}

TEST(ModelTest, DataParamsGetTheirEmbeddedValue) {
  const char *text = "dlc-model 1\nname emb\n"
                     "param w f32 3 data 0\nparam b f32 2 zeros 0\n";
  const float w[3] = {1.5f, -2.0f, 0.25f};
  const void *data[2] = {w, nullptr};
  dlc_model_desc desc = {DLC_ABI_VERSION, text,    0, nullptr, data,
                         nullptr,         nullptr, 0, nullptr};
  ModelPtr m = create(desc);
  ASSERT_TRUE(m);
  // Right after creation, and again after an init with any seed.
  for (int round = 0; round < 2; ++round) {
    const float *p = paramF32(m.get(), 0);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(p[i], w[i]);
    paramF32(m.get(), 0)[1] = 7;
    ASSERT_EQ(dlc_model_init(m.get(), 99), DLC_OK);
  }

  // A `data` param without its value, or in a version 1 object, is rejected.
  dlc_model *bad = nullptr;
  const void *none[2] = {nullptr, nullptr};
  desc.param_data = none;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &bad), DLC_ERR_FORMAT);
  EXPECT_TRUE(errorContains("param 'w' has init 'data'"));
  desc.param_data = data;
  desc.abi_version = 1;
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &bad), DLC_ERR_FORMAT);
  EXPECT_EQ(bad, nullptr);
}

TEST(ModelTest, UniformRespectsTheBound) {
  const char *text = "dlc-model 1\nname u\n"
                     "param w f32 100000 uniform 0.25\n"
                     "param v f64 1000 uniform 3\n";
  dlc_model_desc desc = {DLC_ABI_VERSION, text,    0, nullptr, nullptr,
                         nullptr,         nullptr, 0, nullptr};
  ModelPtr m = create(desc);
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 0), DLC_OK);
  const float *w = paramF32(m.get(), 0);
  double sum = 0, minV = 1, maxV = -1;
  for (int i = 0; i < 100000; ++i) {
    ASSERT_GE(w[i], -0.25f);
    ASSERT_LE(w[i], 0.25f);
    sum += w[i];
    minV = std::min<double>(minV, w[i]);
    maxV = std::max<double>(maxV, w[i]);
  }
  EXPECT_NEAR(sum / 100000, 0.0, 0.005); // Mean of U(-b, b) is 0.
  EXPECT_LT(minV, -0.249);
  EXPECT_GT(maxV, 0.249);

  dlc_tensor_info info;
  ASSERT_EQ(dlc_model_param_info(m.get(), 1, &info), DLC_OK);
  const auto *v = static_cast<const double *>(info.data);
  for (int i = 0; i < 1000; ++i)
    ASSERT_LE(std::fabs(v[i]), 3.0);
}

//===-- Run
//----------------------------------------------------------------===//

TEST(ModelTest, RunPassesParamsInputsOutputsInOrder) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 5), DLC_OK);
  std::vector<void *> paramPtrs;
  for (int i = 0; i < 4; ++i) {
    dlc_tensor_info info;
    ASSERT_EQ(dlc_model_param_info(m.get(), i, &info), DLC_OK);
    paramPtrs.push_back(info.data);
  }

  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float y[8] = {};
  const void *inputs[] = {x};
  void *outputs[] = {y};
  Calls = 0;
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK)
      << dlc_last_error();
  EXPECT_EQ(Calls, 1);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(RecordedArgs[i], paramPtrs[i]) << i;
  EXPECT_EQ(RecordedArgs[4], x);
  EXPECT_EQ(RecordedArgs[5], y);
  const float *scale = paramF32(m.get(), 0);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y[i], x[i] * scale[i % 4]);
  EXPECT_EQ(*static_cast<int64_t *>(paramPtrs[3]), 1);

  int32_t k = 3;
  double sum = 0;
  int64_t n = 0;
  const void *statsInputs[] = {x, &k};
  void *statsOutputs[] = {&sum, &n};
  ASSERT_EQ(dlc_model_run(m.get(), 1, statsInputs, statsOutputs), DLC_OK);
  EXPECT_EQ(RecordedArgs[4], x);
  EXPECT_EQ(RecordedArgs[5], &k);
  EXPECT_EQ(RecordedArgs[6], &sum);
  EXPECT_EQ(RecordedArgs[7], &n);
  EXPECT_EQ(sum, 108.0);
  EXPECT_EQ(n, 8);
}

TEST(ModelTest, HostBuffersOnTheCpu) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 5), DLC_OK);
  void *xp = nullptr, *yp = nullptr;
  ASSERT_EQ(dlc_model_alloc_host(m.get(), 8 * sizeof(float), &xp), DLC_OK)
      << dlc_last_error();
  ASSERT_EQ(dlc_model_alloc_host(m.get(), 8 * sizeof(float), &yp), DLC_OK);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(xp) % 64, 0u);
  auto *x = static_cast<float *>(xp), *y = static_cast<float *>(yp);
  for (int i = 0; i < 8; ++i)
    x[i] = float(i);
  const void *inputs[] = {x};
  void *outputs[] = {y};
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK)
      << dlc_last_error();
  EXPECT_EQ(RecordedArgs[4], x); // used in place, as any buffer on the CPU
  const float *scale = paramF32(m.get(), 0);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y[i], x[i] * scale[i % 4]);
  EXPECT_EQ(dlc_model_free_host(m.get(), xp), DLC_OK);
  EXPECT_EQ(dlc_model_free_host(m.get(), xp), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("not host memory of this model"));
  EXPECT_EQ(dlc_model_free_host(nullptr, yp), DLC_ERR_INVALID_ARGUMENT);
  // yp goes with the model.
}

TEST(ModelTest, MeasuresEntriesOnTheCpu) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  float x[8] = {}, y[8];
  const void *inputs[] = {x};
  void *outputs[] = {y};
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK);
  EXPECT_EQ(dlc_model_last_entry_us(m.get()), -1.0);
  ASSERT_EQ(dlc_model_measure_entries(m.get(), 1), DLC_OK);
  EXPECT_EQ(dlc_model_last_entry_us(m.get()), -1.0);
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK);
  EXPECT_GE(dlc_model_last_entry_us(m.get()), 0.0);
  ASSERT_EQ(dlc_model_measure_entries(m.get(), 0), DLC_OK);
  EXPECT_EQ(dlc_model_last_entry_us(m.get()), -1.0);
  EXPECT_EQ(dlc_model_measure_entries(nullptr, 1), DLC_ERR_INVALID_ARGUMENT);
}

TEST(ModelTest, RunChecksItsArguments) {
  ModelPtr m = create();
  ASSERT_TRUE(m);
  float x[9] = {};
  float y[8] = {};
  const void *inputs[] = {x};
  void *outputs[] = {y};
  Calls = 0;

  EXPECT_EQ(dlc_model_run(m.get(), 2, inputs, outputs),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("entry index 2 out of range"));
  EXPECT_EQ(dlc_model_run(m.get(), -1, inputs, outputs),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_model_run(m.get(), 0, nullptr, outputs),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("input is NULL"));
  EXPECT_EQ(dlc_model_run(m.get(), 0, inputs, nullptr),
            DLC_ERR_INVALID_ARGUMENT);

  const void *nullInput[] = {nullptr};
  EXPECT_EQ(dlc_model_run(m.get(), 0, nullInput, outputs),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("input 0 ('x') is NULL")) << dlc_last_error();
  void *nullOutput[] = {nullptr};
  EXPECT_EQ(dlc_model_run(m.get(), 0, inputs, nullOutput),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("output 0 ('y') is NULL"));

  const void *misaligned[] = {reinterpret_cast<const char *>(x) + 2};
  EXPECT_EQ(dlc_model_run(m.get(), 0, misaligned, outputs),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("not aligned"));
  EXPECT_EQ(Calls, 0);
}

//===-- Save and load
//------------------------------------------------------===//

TEST(ModelTest, SaveLoadRoundTrip) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  ModelPtr a = create(), b = create();
  ASSERT_EQ(dlc_model_init(a.get(), 11), DLC_OK);
  *static_cast<int64_t *>([&] {
    dlc_tensor_info info;
    dlc_model_param_info(a.get(), 3, &info);
    return info.data;
  }()) = 77;
  ASSERT_EQ(dlc_model_save(a.get(), path.c_str()), DLC_OK) << dlc_last_error();
  EXPECT_EQ(dir.list(), std::vector<std::string>{"w.safetensors"});
  ASSERT_EQ(dlc_model_load(b.get(), path.c_str()), DLC_OK) << dlc_last_error();
  EXPECT_EQ(params(a.get()), params(b.get()));

  // The file is readable as a tensor list, sorted by name.
  dlc_tensor_list *list = nullptr;
  ASSERT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_AUTO, &list), DLC_OK);
  ASSERT_EQ(dlc_tensor_list_size(list), 4);
  const char *sorted[] = {"bias", "count", "ln.weight", "scale"};
  for (int i = 0; i < 4; ++i) {
    dlc_tensor_info info;
    ASSERT_EQ(dlc_tensor_list_get(list, i, &info), DLC_OK);
    EXPECT_STREQ(info.name, sorted[i]);
  }
  dlc_tensor_list_free(list);

  std::string bytes = readFile(path);
  EXPECT_NE(bytes.find("\"__metadata__\":{\"format\":\"pt\"}"),
            std::string::npos);

  // Saving over an existing file replaces it.
  ASSERT_EQ(dlc_model_init(a.get(), 12), DLC_OK);
  ASSERT_EQ(dlc_model_save(a.get(), path.c_str()), DLC_OK);
  ASSERT_EQ(dlc_model_load(b.get(), path.c_str()), DLC_OK);
  EXPECT_EQ(params(a.get()), params(b.get()));
  EXPECT_EQ(dir.list(), std::vector<std::string>{"w.safetensors"});
}

TEST(ModelTest, SaveThroughSymlinkUpdatesTarget) {
  TempDir dir;
  std::string target = dir.file("real.safetensors");
  std::string link = dir.file("link.safetensors");
  ModelPtr a = create(), b = create();
  ASSERT_EQ(dlc_model_init(a.get(), 5), DLC_OK);
  ASSERT_EQ(dlc_model_save(a.get(), target.c_str()), DLC_OK);
  ASSERT_EQ(::symlink("real.safetensors", link.c_str()), 0);
  ASSERT_EQ(dlc_model_init(a.get(), 6), DLC_OK);
  ASSERT_EQ(dlc_model_save(a.get(), link.c_str()), DLC_OK) << dlc_last_error();
  // The link is still a link, and its target holds the new weights.
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(dlc_model_load(b.get(), target.c_str()), DLC_OK);
  EXPECT_EQ(params(a.get()), params(b.get()));
  EXPECT_EQ(dir.list(),
            (std::vector<std::string>{"link.safetensors", "real.safetensors"}));
}

TEST(ModelTest, SaveToSpecialFileWritesThrough) {
  // /dev/null stays a device: it is written to, never replaced.
  ModelPtr m = create();
  ASSERT_EQ(dlc_model_init(m.get(), 5), DLC_OK);
  EXPECT_EQ(dlc_model_save(m.get(), "/dev/null"), DLC_OK) << dlc_last_error();
  struct stat st;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(ModelTest, SaveWithLongNameLeavesNoTemporary) {
  // A 250-character name: the temporary's name must still fit NAME_MAX.
  TempDir dir;
  std::string path = dir.file(std::string(236, 'w') + ".safetensors");
  ModelPtr a = create(), b = create();
  ASSERT_EQ(dlc_model_init(a.get(), 5), DLC_OK);
  ASSERT_EQ(dlc_model_save(a.get(), path.c_str()), DLC_OK) << dlc_last_error();
  ASSERT_EQ(dlc_model_load(b.get(), path.c_str()), DLC_OK);
  EXPECT_EQ(params(a.get()), params(b.get()));
  EXPECT_EQ(dir.list().size(), 1u);
}

TEST(ModelTest, ConcurrentSavesToOnePathAllSucceed) {
  // Threads of one process saving to one path: every save succeeds and the
  // file is always one model's complete weights, never a mixture.
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  ModelPtr a = create(), b = create();
  ASSERT_EQ(dlc_model_init(a.get(), 1), DLC_OK);
  ASSERT_EQ(dlc_model_init(b.get(), 2), DLC_OK);
  std::atomic<int> failures{0};
  auto saver = [&](dlc_model *m) {
    for (int i = 0; i < 50; ++i)
      if (dlc_model_save(m, path.c_str()) != DLC_OK)
        ++failures;
  };
  std::thread t1(saver, a.get()), t2(saver, b.get());
  t1.join();
  t2.join();
  EXPECT_EQ(failures.load(), 0);
  ModelPtr c = create();
  ASSERT_EQ(dlc_model_load(c.get(), path.c_str()), DLC_OK);
  EXPECT_TRUE(params(c.get()) == params(a.get()) ||
              params(c.get()) == params(b.get()));
  EXPECT_EQ(dir.list(), std::vector<std::string>{"w.safetensors"});
}

TEST(ModelTest, SaveReportsIOErrors) {
  ModelPtr m = create();
  EXPECT_EQ(dlc_model_save(m.get(), "/nonexistent-dir/w.safetensors"),
            DLC_ERR_IO);
  EXPECT_TRUE(errorContains("/nonexistent-dir/w.safetensors"))
      << dlc_last_error();
  EXPECT_EQ(dlc_model_save(m.get(), nullptr), DLC_ERR_INVALID_ARGUMENT);
}

TEST(ModelTest, LoadIgnoresExtraTensors) {
  TempDir dir;
  ModelPtr a = create(), b = create();
  ASSERT_EQ(dlc_model_init(a.get(), 1), DLC_OK);
  std::string path = dir.file("w.safetensors");
  ASSERT_EQ(dlc_model_save(a.get(), path.c_str()), DLC_OK);

  // Add an extra tensor by rewriting through a tensor list.
  dlc_tensor_list *list = nullptr;
  ASSERT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_AUTO, &list), DLC_OK);
  int64_t shape[] = {2};
  ASSERT_EQ(dlc_tensor_list_add(list, "optimizer.m", DLC_F32, 1, shape, nullptr,
                                nullptr),
            DLC_OK);
  ASSERT_EQ(dlc_tensor_file_write(path.c_str(), DLC_FILE_AUTO, list), DLC_OK);
  dlc_tensor_list_free(list);

  ASSERT_EQ(dlc_model_load(b.get(), path.c_str()), DLC_OK) << dlc_last_error();
  EXPECT_EQ(params(a.get()), params(b.get()));
}

/// Writes a weights file for the tiny model with one tensor altered.
struct LoadCase {
  const char *name;
  std::string file; ///< The whole file.
  dlc_status status;
  const char *message;
};

std::string tinyHeader(const std::string &scale,
                       const std::string &extra = "") {
  return "{\"scale\":" + scale +
         ",\"bias\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16,32]}"
         ",\"ln.weight\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[32,"
         "44]},\"count\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[44,"
         "52]}" +
         extra + "}";
}

const std::string kTinyData(52, '\x01');

TEST(ModelTest, LoadRejectsBadFilesAndKeepsParams) {
  const std::string goodScale =
      "{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}";
  std::string good = safetensorsBytes(tinyHeader(goodScale), kTinyData);
  std::vector<LoadCase> cases = {
      {"missing param",
       safetensorsBytes(
           "{\"bias\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}"
           ",\"ln.weight\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":["
           "16,28]},\"count\":{\"dtype\":\"I64\",\"shape\":[],"
           "\"data_offsets\":[28,36]}}",
           std::string(36, '\x01')),
       DLC_ERR_FORMAT, "no tensor 'scale' (1 of the model's 4 params"},
      {"wrong shape",
       safetensorsBytes(
           tinyHeader("{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,"
                      "16]}"),
           kTinyData),
       DLC_ERR_FORMAT, "tensor 'scale' has shape [2, 2], the model needs [4]"},
      {"wrong dtype",
       safetensorsBytes(
           tinyHeader("{\"dtype\":\"I32\",\"shape\":[4],\"data_offsets\":[0,"
                      "16]}"),
           kTinyData),
       DLC_ERR_FORMAT, "tensor 'scale' has dtype I32, the model needs F32"},
      {"truncated file", good.substr(0, good.size() - 1), DLC_ERR_FORMAT,
       "out of range"},
      {"truncated header", good.substr(0, 20), DLC_ERR_FORMAT,
       "exceeds the file size"},
      {"shorter than 8 bytes", std::string("\x10\0\0", 3), DLC_ERR_FORMAT,
       "fewer than the 8-byte header length"},
      {"header length too big",
       std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}",
       DLC_ERR_FORMAT, "exceeds the file size"},
      {"garbage JSON", safetensorsBytes("{\"scale\": [1, 2", kTinyData),
       DLC_ERR_FORMAT, "invalid JSON header"},
      {"overlapping offsets",
       safetensorsBytes(
           tinyHeader("{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[12,"
                      "28]}"),
           kTinyData),
       DLC_ERR_FORMAT, "overlap"},
  };

  TempDir dir;
  ModelPtr m = create();
  ASSERT_TRUE(m);
  ASSERT_EQ(dlc_model_init(m.get(), 9), DLC_OK);
  std::vector<uint8_t> before = params(m.get());
  for (const LoadCase &c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.file("bad.safetensors");
    writeFile(path, c.file);
    EXPECT_EQ(dlc_model_load(m.get(), path.c_str()), c.status);
    EXPECT_TRUE(errorContains(c.message)) << dlc_last_error();
    EXPECT_TRUE(errorContains(path)) << dlc_last_error();
    EXPECT_EQ(params(m.get()), before);
  }

  // The good file loads (every param byte becomes 0x01).
  std::string path = dir.file("good.safetensors");
  writeFile(path, good);
  ASSERT_EQ(dlc_model_load(m.get(), path.c_str()), DLC_OK) << dlc_last_error();
  for (uint8_t byte : params(m.get()))
    EXPECT_EQ(byte, 1);

  EXPECT_EQ(dlc_model_load(m.get(), dir.file("absent.safetensors").c_str()),
            DLC_ERR_IO);
  EXPECT_TRUE(errorContains("No such file"));
  EXPECT_EQ(dlc_model_load(m.get(), dir.path().c_str()), DLC_ERR_IO);
  EXPECT_TRUE(errorContains("not a regular file"));
}

} // namespace

namespace {
// A model with optimizer state: `state` lines after the weights.
const char *const kStatefulText = "dlc-model 1\n"
                                  "name stateful\n"
                                  "param w f32 4 uniform 0.5\n"
                                  "state optimizer.step f32 -\n"
                                  "state optimizer.w.exp_avg f32 4\n"
                                  "entry forward\n"
                                  "end\n";
void nothing(void *const *) {}
const dlc_entry_fn kStatefulEntries[] = {nothing};
const dlc_model_desc kStateful = {
    DLC_ABI_VERSION, kStatefulText, 1, kStatefulEntries, nullptr,
    nullptr,         nullptr,       0, nullptr};

TEST(ModelTest, OptimizerStateIsOptionalWhenLoading) {
  TempDir dir;
  ModelPtr a = create(kStateful), b = create(kStateful);
  ASSERT_EQ(dlc_model_num_params(a.get()), 3);
  ASSERT_EQ(dlc_model_init(a.get(), 3), DLC_OK);
  EXPECT_EQ(*paramF32(a.get(), 1), 0.0f); // state starts at zero
  *paramF32(a.get(), 1) = 7.0f;
  paramF32(a.get(), 2)[3] = 0.25f;

  // A checkpoint restores the state...
  std::string ckpt = dir.file("ckpt.safetensors");
  ASSERT_EQ(dlc_model_save(a.get(), ckpt.c_str()), DLC_OK) << dlc_last_error();
  ASSERT_EQ(dlc_model_load(b.get(), ckpt.c_str()), DLC_OK) << dlc_last_error();
  EXPECT_EQ(params(a.get()), params(b.get()));

  // ...a weights-only file (PyTorch's state_dict) resets it to zero...
  dlc_tensor_list *list = nullptr;
  ASSERT_EQ(dlc_tensor_file_read(ckpt.c_str(), DLC_FILE_AUTO, &list), DLC_OK);
  dlc_tensor_info w;
  ASSERT_EQ(dlc_tensor_list_get(list, dlc_tensor_list_find(list, "w"), &w),
            DLC_OK);
  dlc_tensor_list *weights = nullptr;
  ASSERT_EQ(dlc_tensor_list_create(&weights), DLC_OK);
  ASSERT_EQ(dlc_tensor_list_add(weights, "w", w.dtype, w.rank, w.shape, w.data,
                                nullptr),
            DLC_OK);
  std::string weightsPath = dir.file("w.safetensors");
  ASSERT_EQ(dlc_tensor_file_write(weightsPath.c_str(), DLC_FILE_AUTO, weights),
            DLC_OK);
  ASSERT_EQ(dlc_model_load(b.get(), weightsPath.c_str()), DLC_OK)
      << dlc_last_error();
  EXPECT_EQ(paramF32(b.get(), 0)[1], paramF32(a.get(), 0)[1]);
  EXPECT_EQ(*paramF32(b.get(), 1), 0.0f);
  EXPECT_EQ(paramF32(b.get(), 2)[3], 0.0f);

  // ...and a file with part of the state is refused, the model unchanged.
  int64_t scalar[1] = {0};
  ASSERT_EQ(dlc_tensor_list_add(weights, "optimizer.step", DLC_F32, 0, scalar,
                                nullptr, nullptr),
            DLC_OK);
  std::string partial = dir.file("partial.safetensors");
  ASSERT_EQ(dlc_tensor_file_write(partial.c_str(), DLC_FILE_AUTO, weights),
            DLC_OK);
  *paramF32(b.get(), 1) = 5.0f;
  EXPECT_EQ(dlc_model_load(b.get(), partial.c_str()), DLC_ERR_FORMAT);
  EXPECT_TRUE(errorContains("no tensor 'optimizer.w.exp_avg' (the file has 1 "
                            "of the model's 2 optimizer-state tensors"))
      << dlc_last_error();
  EXPECT_EQ(*paramF32(b.get(), 1), 5.0f);
  dlc_tensor_list_free(weights);
  dlc_tensor_list_free(list);
}
} // namespace
