//===- PackWeightsTest.cpp - packed params and the pack_weights entry -----===//
//
// A model whose forward pass reads a packed copy of its weight (as
// dlc-pack-weights compiles it): the runtime recomputes the copy, with the
// pack_weights entry, before the first concurrent call after the weights
// changed, and hides both from the C API.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "internal.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace dlc::test;

namespace {

// forward: y = x * packed; packed = 2 * w (pack_weights); train_step:
// w += x. Args: w, packed, then the entry's inputs and outputs.
const char *const kPackedText = "dlc-model 2\n"
                                "name pk\n"
                                "param w f32 4 uniform 1\n"
                                "packed w.packed f32 4\n"
                                "entry forward\n"
                                "workspace 0\n"
                                "concurrent\n"
                                "in x f32 4\n"
                                "out y f32 4\n"
                                "end\n"
                                "entry train_step\n"
                                "workspace 0\n"
                                "in x f32 4\n"
                                "end\n"
                                "entry pack_weights\n"
                                "workspace 0\n"
                                "pack_weights\n"
                                "end\n";

std::atomic<int> Packs{0};

void pkForward(void *const *args) {
  const auto *packed = static_cast<const float *>(args[1]);
  const auto *x = static_cast<const float *>(args[2]);
  auto *y = static_cast<float *>(args[3]);
  for (int i = 0; i < 4; ++i)
    y[i] = x[i] * packed[i];
}

void pkTrain(void *const *args) {
  auto *w = static_cast<float *>(args[0]);
  const auto *x = static_cast<const float *>(args[2]);
  for (int i = 0; i < 4; ++i)
    w[i] += x[i];
}

void pkPack(void *const *args) {
  ++Packs;
  const auto *w = static_cast<const float *>(args[0]);
  auto *packed = static_cast<float *>(args[1]);
  for (int i = 0; i < 4; ++i)
    packed[i] = 2 * w[i];
}

const dlc_entry_fn kPackedEntries[] = {pkForward, pkTrain, pkPack};
const dlc_model_desc kPacked = {DLC_ABI_VERSION, kPackedText, 3,
                                kPackedEntries,  nullptr,     nullptr,
                                nullptr,         0,           nullptr};

float *weight(dlc_model *m) {
  dlc_tensor_info info;
  EXPECT_EQ(dlc_model_param_info(m, 0, &info), DLC_OK);
  return static_cast<float *>(info.data);
}

std::vector<float> forward(dlc_model *m, std::vector<float> x) {
  std::vector<float> y(4, -1);
  const void *in[] = {x.data()};
  void *out[] = {y.data()};
  EXPECT_EQ(dlc_model_run(m, 0, in, out), DLC_OK) << dlc_last_error();
  return y;
}

TEST(PackWeightsTest, HiddenFromTheCApi) {
  ModelPtr m = createModel(kPacked, DLC_DEVICE_CPU);
  ASSERT_TRUE(m) << dlc_last_error();
  EXPECT_EQ(dlc_model_num_params(m.get()), 1);
  EXPECT_EQ(dlc_model_num_entries(m.get()), 2);
  EXPECT_EQ(dlc_model_find_entry(m.get(), "pack_weights"), -1);
  dlc_tensor_info info;
  EXPECT_EQ(dlc_model_param_info(m.get(), 1, &info), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_model_run(m.get(), 2, nullptr, nullptr),
            DLC_ERR_INVALID_ARGUMENT);
  // The arena holds the packed copy too.
  EXPECT_EQ(dlc_model_param_bytes(m.get()), 128);
}

TEST(PackWeightsTest, PackedAgainWhenTheWeightsChange) {
  ModelPtr m = createModel(kPacked, DLC_DEVICE_CPU);
  ASSERT_TRUE(m) << dlc_last_error();
  Packs = 0;
  float *w = weight(m.get());
  for (int i = 0; i < 4; ++i)
    w[i] = float(i + 1);
  EXPECT_EQ(forward(m.get(), {1, 1, 1, 1}), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(forward(m.get(), {1, 0, 1, 0}), (std::vector<float>{2, 0, 6, 0}));
  EXPECT_EQ(Packs, 1) << "packed once for two calls";

  // A training step writes the weights.
  std::vector<float> dx{1, 1, 1, 1};
  const void *in[] = {dx.data()};
  ASSERT_EQ(dlc_model_run(m.get(), 1, in, nullptr), DLC_OK);
  EXPECT_EQ(forward(m.get(), {1, 1, 1, 1}), (std::vector<float>{4, 6, 8, 10}));
  EXPECT_EQ(Packs, 2);

  // A write through dlc_model_param_info.
  weight(m.get())[0] = 10;
  EXPECT_EQ(forward(m.get(), {1, 1, 1, 1}), (std::vector<float>{20, 6, 8, 10}));
  EXPECT_EQ(Packs, 3);

  // init and load.
  ASSERT_EQ(dlc_model_init(m.get(), 7), DLC_OK);
  std::vector<float> w7(weight(m.get()), weight(m.get()) + 4);
  std::vector<float> y = forward(m.get(), {1, 1, 1, 1});
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(y[i], 2 * w7[i]);
  TempDir dir;
  std::string file = dir.file("w.safetensors");
  ASSERT_EQ(dlc_model_save(m.get(), file.c_str()), DLC_OK);
  EXPECT_EQ(readFile(file).find("w.packed"), std::string::npos)
      << "packed params are not saved";
  weight(m.get())[1] = 100;
  EXPECT_EQ(forward(m.get(), {1, 1, 1, 1})[1], 200);
  ASSERT_EQ(dlc_model_load(m.get(), file.c_str()), DLC_OK) << dlc_last_error();
  EXPECT_EQ(forward(m.get(), {1, 1, 1, 1})[1], 2 * w7[1]);
  EXPECT_EQ(Packs, 6);
}

TEST(PackWeightsTest, ConcurrentFirstCallsPackOnce) {
  ModelPtr m = createModel(kPacked, DLC_DEVICE_CPU);
  ASSERT_TRUE(m) << dlc_last_error();
  float *w = weight(m.get());
  for (int i = 0; i < 4; ++i)
    w[i] = 1;
  Packs = 0;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) {
        std::vector<float> x{1, 2, 3, 4}, y(4);
        const void *in[] = {x.data()};
        void *out[] = {y.data()};
        if (dlc_model_run(m.get(), 0, in, out) != DLC_OK ||
            y != std::vector<float>{2, 4, 6, 8})
          ++wrong;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(Packs, 1);
}

TEST(PackWeightsTest, DescriptorRules) {
  dlc::rt::ModelDecl model;
  std::string err;
  ASSERT_TRUE(dlc::rt::parseModelText(kPackedText, model, err)) << err;
  EXPECT_EQ(model.numParams, 1u);
  EXPECT_EQ(model.numEntries, 2u);
  EXPECT_TRUE(model.params[1].isPacked);
  EXPECT_FALSE(model.params[1].isState);
  EXPECT_EQ(model.params[1].offset, 64);
  EXPECT_TRUE(model.entries[2].packWeights);
  auto rejects = [&](const std::string &text, const std::string &why) {
    dlc::rt::ModelDecl bad;
    std::string e;
    EXPECT_FALSE(dlc::rt::parseModelText(text, bad, e)) << text;
    EXPECT_NE(e.find(why), std::string::npos) << e;
  };
  const std::string head = "dlc-model 2\nname pk\n";
  const std::string fwd = "entry forward\nconcurrent\nin x f32 4\nend\n";
  const std::string pack = "entry pack_weights\npack_weights\nend\n";
  rejects(head + "packed p f32 4\nparam w f32 4 zeros 0\n" + fwd + pack,
          "packed weights come last");
  rejects(head + "param w f32 4 zeros 0\npacked p f32 4\n" + fwd,
          "without a pack_weights entry");
  rejects(head + "param w f32 4 zeros 0\n" + fwd + pack,
          "without 'packed' params");
  rejects(head + "param w f32 4 zeros 0\npacked p f32 4\n" + pack + fwd,
          "after the pack_weights entry");
  rejects(head + "param w f32 4 zeros 0\npacked p f32 4\n" + fwd +
              "entry pack_weights\npack_weights\nin x f32 4\nend\n",
          "takes no inputs or outputs");
  rejects(head + "param w f32 4 zeros 0\npacked p f32 4 zeros 0\n" + fwd + pack,
          "packed NAME DTYPE SHAPE");
  rejects(head + "param w f32 4 zeros 0\npacked p f32 4\n" + pack,
          "the only entry");
  rejects("dlc-model 1\nname pk\nparam w f32 4 zeros 0\npacked p f32 4\n",
          "'packed' needs version 2");
}

} // namespace
