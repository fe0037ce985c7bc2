//===- ModelConcurrencyTest.cpp - concurrent calls of one dlc_model ------===//
//
// Calls of entries that only read the params (the descriptor's `concurrent`
// line) run at once, each in a workspace of its own, and give the results
// of single-threaded calls bit for bit; a training step runs alone; a
// version-1 model runs one call at a time (docs/c-api.md, "Threads").
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

using namespace dlc::test;

namespace {

ModelPtr create(const dlc_model_desc &desc) {
  return createModel(desc, DLC_DEVICE_CPU);
}

//===-- Concurrent runs -----------------------------------------------===//

// `forward` only reads the params (`concurrent`): its calls run at once,
// each in a workspace of its own. `train_step` writes them and runs alone.
const char *const kConcurrentText = "dlc-model 2\n"
                                    "name conc\n"
                                    "param w f32 64 uniform 0.5\n"
                                    "entry forward\n"
                                    "workspace 4096\n"
                                    "concurrent\n"
                                    "in x f32 64\n"
                                    "out y f32 64\n"
                                    "end\n"
                                    "entry train_step\n"
                                    "workspace 4096\n"
                                    "end\n";

std::atomic<int> ForwardsInside{0};
std::atomic<int> ForwardsEntered{0};
std::atomic<int> MaxInside{0};
std::atomic<int> TrainOverlaps{0};
std::atomic<bool> WaitForPair{false};

void concForward(void *const *args) {
  int inside = ++ForwardsInside;
  ++ForwardsEntered;
  for (int seen = MaxInside; inside > seen;)
    MaxInside.compare_exchange_weak(seen, inside);
  const auto *w = static_cast<const float *>(args[0]);
  const auto *x = static_cast<const float *>(args[1]);
  auto *y = static_cast<float *>(args[2]);
  auto *ws = static_cast<float *>(args[3]);
  // Wait (2 s at most) until a second call has come in: if calls are
  // serialised, it cannot come in while this one waits.
  if (WaitForPair)
    for (int i = 0; i < 2000 && ForwardsEntered < 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Through the workspace, with a pause between writing and reading it: a
  // workspace shared by two calls mixes their values.
  for (int i = 0; i < 1024; ++i)
    ws[i] = x[i % 64] * w[i % 64] + float(i / 64);
  std::this_thread::yield();
  for (int i = 0; i < 64; ++i) {
    float sum = 0;
    for (int j = i; j < 1024; j += 64)
      sum += ws[j];
    y[i] = sum;
  }
  --ForwardsInside;
}

void concTrain(void *const *args) {
  if (ForwardsInside != 0)
    ++TrainOverlaps;
  auto *w = static_cast<float *>(args[0]);
  auto *ws = static_cast<float *>(args[1]);
  // Changes the weights for a while, then puts them back exactly.
  for (int i = 0; i < 64; ++i)
    w[i] = -w[i];
  ws[0] = w[0];
  std::this_thread::yield();
  for (int i = 0; i < 64; ++i)
    w[i] = -w[i];
  if (ForwardsInside != 0)
    ++TrainOverlaps;
}

const dlc_entry_fn kConcurrentEntries[] = {concForward, concTrain};
const dlc_model_desc kConcurrent = {
    DLC_ABI_VERSION, kConcurrentText, 2,       kConcurrentEntries,
    nullptr,         nullptr,         nullptr, 0,
    nullptr};

TEST(ModelTest, ConcurrentEntriesRunAtOnceAndBitExact) {
  ModelPtr m = create(kConcurrent);
  ASSERT_EQ(dlc_model_init(m.get(), 7), DLC_OK);
  float x[64];
  for (int i = 0; i < 64; ++i)
    x[i] = float(i) * 0.37f - 5.f;
  const void *in[] = {x};
  float want[64];
  void *out[] = {want};
  ASSERT_EQ(dlc_model_run(m.get(), 0, in, out), DLC_OK);

  // Two calls of `forward` are inside the model at the same time.
  WaitForPair = true;
  MaxInside = 0;
  ForwardsEntered = 0;
  float y1[64], y2[64];
  auto once = [&](float *y) {
    void *o[] = {y};
    EXPECT_EQ(dlc_model_run(m.get(), 0, in, o), DLC_OK);
  };
  std::thread a(once, y1), b(once, y2);
  a.join();
  b.join();
  WaitForPair = false;
  EXPECT_EQ(MaxInside.load(), 2);
  EXPECT_EQ(std::memcmp(y1, want, sizeof(want)), 0);
  EXPECT_EQ(std::memcmp(y2, want, sizeof(want)), 0);

  // Four threads of `forward` and one of `train_step`: every forward result
  // is bit-exact (no workspace shared, no weights changed under it), and no
  // training step overlaps a forward.
  TrainOverlaps = 0;
  std::atomic<int> wrong{0};
  std::atomic<bool> stop{false};
  // Each thread its own input, and its result computed alone first.
  float xs[4][64], wants[4][64];
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < 64; ++i)
      xs[t][i] = x[i] * float(t + 1);
    const void *xin[] = {xs[t]};
    void *wout[] = {wants[t]};
    ASSERT_EQ(dlc_model_run(m.get(), 0, xin, wout), DLC_OK);
  }
  auto forwards = [&](int t) {
    float y[64];
    const void *xin[] = {xs[t]};
    void *o[] = {y};
    for (int i = 0; i < 300; ++i) {
      if (dlc_model_run(m.get(), 0, xin, o) != DLC_OK ||
          std::memcmp(y, wants[t], sizeof(y)) != 0)
        ++wrong;
    }
  };
  auto train = [&] {
    while (!stop)
      EXPECT_EQ(dlc_model_run(m.get(), 1, nullptr, nullptr), DLC_OK);
  };
  std::thread t(train);
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i)
    readers.emplace_back(forwards, i);
  for (std::thread &r : readers)
    r.join();
  stop = true;
  t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(TrainOverlaps.load(), 0);
}

// A model without params or workspace: each call in turn gets the arena's
// (null) workspace back, not a spare one.
void *SeenWorkspace = reinterpret_cast<void *>(1);
void recordWorkspace(void *const *args) { SeenWorkspace = args[2]; }

TEST(ModelTest, SequentialCallsReuseTheArenaWorkspace) {
  const char *text = "dlc-model 2\nname nows\nentry f\nconcurrent\n"
                     "in x f32 4\nout y f32 4\nend\n";
  const dlc_entry_fn entries[] = {recordWorkspace};
  const dlc_model_desc desc = {DLC_ABI_VERSION, text,    1, entries, nullptr,
                               nullptr,         nullptr, 0, nullptr};
  ModelPtr m = create(desc);
  float x[4] = {}, y[4];
  const void *in[] = {x};
  void *out[] = {y};
  for (int i = 0; i < 3; ++i) {
    SeenWorkspace = reinterpret_cast<void *>(1);
    ASSERT_EQ(dlc_model_run(m.get(), 0, in, out), DLC_OK);
    EXPECT_EQ(SeenWorkspace, nullptr) << "call " << i;
  }
}

// A version 1 description has no `concurrent` lines: every call has the
// model to itself, as before.
TEST(ModelTest, VersionOneEntriesRunOneAtATime) {
  std::string text = kConcurrentText;
  text.replace(text.find("dlc-model 2"), 11, "dlc-model 1");
  text.erase(text.find("concurrent\n"), 11);
  const dlc_model_desc desc = {
      DLC_ABI_VERSION, text.c_str(), 2,       kConcurrentEntries,
      nullptr,         nullptr,      nullptr, 0,
      nullptr};
  ModelPtr m = create(desc);
  float x[64] = {}, y1[64], y2[64];
  const void *in[] = {x};
  WaitForPair = true;
  MaxInside = 0;
  ForwardsEntered = 0;
  auto once = [&](float *y) {
    void *o[] = {y};
    EXPECT_EQ(dlc_model_run(m.get(), 0, in, o), DLC_OK);
  };
  // Each call waits for the other (2 s) in vain: they never overlap.
  std::thread a(once, y1), b(once, y2);
  a.join();
  b.join();
  WaitForPair = false;
  EXPECT_EQ(MaxInside.load(), 1);
}

} // namespace
