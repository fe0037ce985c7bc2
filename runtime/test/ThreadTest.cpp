//===- ThreadTest.cpp - DLC_NUM_THREADS and dlc_parallel_for --------------===//

#include "TestUtil.h"
#include "internal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

using namespace dlc::rt;
using namespace dlc::test;

namespace {

TEST(ThreadTest, ParseNumThreads) {
  EXPECT_EQ(parseNumThreads("1"), 1);
  EXPECT_EQ(parseNumThreads("8"), 8);
  EXPECT_EQ(parseNumThreads("0012"), 12);
  EXPECT_EQ(parseNumThreads("1024"), 1024);
  EXPECT_EQ(parseNumThreads("1025"), 0);
  EXPECT_EQ(parseNumThreads("99999999999999999999"), 0);
  EXPECT_EQ(parseNumThreads("0"), 0);
  EXPECT_EQ(parseNumThreads("-2"), 0);
  EXPECT_EQ(parseNumThreads("+2"), 0);
  EXPECT_EQ(parseNumThreads("2x"), 0);
  EXPECT_EQ(parseNumThreads(" 2"), 0);
  EXPECT_EQ(parseNumThreads(""), 0);
  EXPECT_EQ(parseNumThreads(nullptr), 0);
}

TEST(ThreadTest, NumThreadsFromTheEnvironment) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  {
    EnvGuard env("DLC_NUM_THREADS", std::nullopt);
    EXPECT_EQ(dlc_num_threads(), cores);
  }
  {
    EnvGuard env("DLC_NUM_THREADS", "3");
    EXPECT_EQ(dlc_num_threads(), 3);
  }
  {
    EnvGuard env("DLC_NUM_THREADS", "0");
    EXPECT_EQ(dlc_num_threads(), cores);
  }
  {
    EnvGuard env("DLC_NUM_THREADS", "many");
    EXPECT_EQ(dlc_num_threads(), cores);
  }
}

struct Coverage {
  std::vector<std::atomic<int>> hits;
  std::atomic<int> calls{0};
  explicit Coverage(int64_t n) : hits(static_cast<size_t>(n)) {}
  static void fn(void *ctx, int64_t begin, int64_t end) {
    auto *self = static_cast<Coverage *>(ctx);
    ++self->calls;
    for (int64_t i = begin; i < end; ++i)
      ++self->hits[static_cast<size_t>(i)];
  }
  bool eachOnce() const {
    for (const auto &h : hits)
      if (h.load() != 1)
        return false;
    return true;
  }
};

TEST(ThreadTest, ParallelForCoversEachIndexOnce) {
  // The pool is sized at its first use; make it bigger than the machine.
  EnvGuard env("DLC_NUM_THREADS", "4");
  for (int64_t n : {1, 2, 3, 4, 5, 7, 16, 17, 100, 1000, 12345}) {
    Coverage c(n);
    dlc_parallel_for(n, Coverage::fn, &c);
    EXPECT_TRUE(c.eachOnce()) << n;
    EXPECT_GE(c.calls.load(), 1);
    EXPECT_LE(c.calls.load(), n);
  }
  for (int64_t n : {0, -5}) {
    Coverage c(1);
    dlc_parallel_for(n, Coverage::fn, &c);
    EXPECT_EQ(c.calls.load(), 0);
  }
  dlc_parallel_for(10, nullptr, nullptr); // Ignored.
}

TEST(ThreadTest, ParallelForUsesSeveralThreads) {
  EnvGuard env("DLC_NUM_THREADS", "4");
  std::mutex mu;
  std::set<std::thread::id> ids;
  struct Ctx {
    std::mutex *mu;
    std::set<std::thread::id> *ids;
  } ctx{&mu, &ids};
  // Slow chunks, so that every worker gets some.
  for (int round = 0; round < 20 && ids.size() < 2; ++round)
    dlc_parallel_for(
        64,
        [](void *p, int64_t, int64_t) {
          auto *c = static_cast<Ctx *>(p);
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          std::lock_guard<std::mutex> lock(*c->mu);
          c->ids->insert(std::this_thread::get_id());
        },
        &ctx);
  EXPECT_GE(ids.size(), 2u);
}

TEST(ThreadTest, NestedAndConcurrentCalls) {
  EnvGuard env("DLC_NUM_THREADS", "4");
  constexpr int64_t kOuter = 8, kInner = 100;
  Coverage inner(kOuter * kInner);
  struct Ctx {
    Coverage *inner;
  } ctx{&inner};
  auto outerFn = [](void *p, int64_t begin, int64_t end) {
    auto *c = static_cast<Ctx *>(p);
    for (int64_t o = begin; o < end; ++o) {
      struct Slice {
        Coverage *inner;
        int64_t base;
      } slice{c->inner, o * kInner};
      dlc_parallel_for(
          kInner,
          [](void *q, int64_t b, int64_t e) {
            auto *s = static_cast<Slice *>(q);
            Coverage::fn(s->inner, s->base + b, s->base + e);
          },
          &slice);
    }
  };

  // Several host threads at once, each with nested calls.
  std::vector<std::thread> threads;
  std::vector<std::unique_ptr<Coverage>> covers;
  std::vector<Ctx> ctxs(4);
  for (int t = 0; t < 4; ++t)
    covers.push_back(std::make_unique<Coverage>(kOuter * kInner));
  for (int t = 0; t < 4; ++t) {
    ctxs[static_cast<size_t>(t)].inner = covers[static_cast<size_t>(t)].get();
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 1; ++rep)
        dlc_parallel_for(kOuter, outerFn, &ctxs[static_cast<size_t>(t)]);
    });
  }
  dlc_parallel_for(kOuter, outerFn, &ctx);
  for (std::thread &t : threads)
    t.join();
  EXPECT_TRUE(inner.eachOnce());
  for (const auto &c : covers)
    EXPECT_TRUE(c->eachOnce());
}

TEST(ThreadTest, ManySmallJobs) {
  EnvGuard env("DLC_NUM_THREADS", "4");
  for (int rep = 0; rep < 2000; ++rep) {
    Coverage c(3 + rep % 13);
    dlc_parallel_for(static_cast<int64_t>(c.hits.size()), Coverage::fn, &c);
    ASSERT_TRUE(c.eachOnce()) << rep;
  }
}

} // namespace

namespace {
TEST(WorkspaceTest, ReusesFreedBlocksOfTheSameSize) {
  void *a = dlc_workspace_aligned_alloc(64, 1000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  std::memset(a, 0xab, 1000);
  dlc_workspace_free(a);
  void *b = dlc_workspace_aligned_alloc(64, 1000);
  EXPECT_EQ(a, b); // the cached block comes back
  void *c = dlc_workspace_aligned_alloc(64, 1000);
  EXPECT_NE(b, c); // a second live block is a new one
  void *big = dlc_workspace_aligned_alloc(4096, 1 << 20);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % 4096, 0u);
  void *small = dlc_workspace_alloc(1);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  dlc_workspace_free(b);
  dlc_workspace_free(c);
  dlc_workspace_free(big);
  dlc_workspace_free(small);
  dlc_workspace_free(nullptr);
  EXPECT_EQ(dlc_workspace_aligned_alloc(3, 8), nullptr); // not a power of 2
}
} // namespace
