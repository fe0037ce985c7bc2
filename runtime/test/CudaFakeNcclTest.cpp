//===- CudaFakeNcclTest.cpp - data-parallel CUDA entries on a fake NCCL ---===//
//
// The NCCL side of the runtime (lib/nccl.cpp) against the fake
// libnccl.so.2 (test/fake_cuda/fake_nccl.cpp), which plays the other ranks
// of a job: hand-written CUDA entries call dlc_cuda_comm_* as generated
// code does, on a communicator outside MPI (createDetachedComm).
//
//===----------------------------------------------------------------------===//

#include "FakeCudaModel.h"
#include "comm.h"

#include <chrono>
#include <cstdlib>

using namespace dlc::test;
using namespace dlc::test::fake_cuda;

namespace {

struct CommDeleter {
  void operator()(dlc_comm *c) const { dlc_comm_destroy(c); }
};
using CommPtr = std::unique_ptr<dlc_comm, CommDeleter>;

CommPtr detached(int rank, int size) {
  return CommPtr(dlc::rt::createDetachedComm(rank, size));
}

class FakeNccl : public FakeCuda {
protected:
  void SetUp() override {
    FakeCuda::SetUp();
    fakeNccl().reset();
    fake().streamsBusy = false;
  }
  void TearDown() override {
    FakeCuda::TearDown();
    // Every communicator that was not aborted was destroyed with its model.
    EXPECT_EQ(fakeNccl().destroys + fakeNccl().aborts, fakeNccl().inits);
    ::unsetenv("DLC_NCCL_LIBRARY");
    ::unsetenv("DLC_COMM_TIMEOUT");
  }
};

int64_t address(void *p) { return reinterpret_cast<int64_t>(p); }

// r = g, then r averaged over the ranks in place (a gradient bucket).
const char *const kAllReduce = "dlc-model 2\nname dp\nentry step\n"
                               "workspace 64\ncommunicator\n"
                               "in g f32 5\nout r f32 5\nend\n";
void allReduceStep(void *const *args) {
  dlc_cuda_memcpy(args[3], args[1], args[0], 5 * sizeof(float));
  dlc_cuda_comm_bucket_add(args[3], address(args[1]), 5, DLC_F32);
  dlc_cuda_comm_bucket_reduce(args[3], DLC_REDUCE_MEAN);
}

// The same buffer as two pieces of one bucket, summed.
void twoPieceSumStep(void *const *args) {
  dlc_cuda_memcpy(args[3], args[1], args[0], 5 * sizeof(float));
  auto *r = static_cast<float *>(args[1]);
  dlc_cuda_comm_bucket_add(args[3], address(r), 2, DLC_F32);
  dlc_cuda_comm_bucket_add(args[3], address(r + 2), 3, DLC_F32);
  dlc_cuda_comm_bucket_start(args[3], DLC_REDUCE_SUM);
  dlc_cuda_comm_wait(args[3]);
}

dlc_status runStep(dlc_model *m, const float *g, float *r) {
  const void *in[] = {g};
  void *out[] = {r};
  return dlc_model_run(m, 0, in, out);
}

const float kG[5] = {1, 2, 3, 4, 5};

TEST_F(FakeNccl, AllReduceAveragesTheBucketOverTheRanks) {
  ModelPtr m = createOneEntry(kAllReduce, allReduceStep);
  ASSERT_TRUE(m) << dlc_last_error();
  CommPtr comm = detached(0, 2);
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK)
      << dlc_last_error();
  EXPECT_EQ(fakeNccl().inits, 1);
  EXPECT_EQ(fakeNccl().rank, 0);
  EXPECT_EQ(fakeNccl().nranks, 2);
  // The other rank holds 3 g: the mean is 2 g. The second run replays the
  // entry's CUDA graph, the all-reduce in it.
  fakeNccl().peerFactor = 3;
  for (int run = 0; run < 2; ++run) {
    float r[5] = {};
    ASSERT_EQ(runStep(m.get(), kG, r), DLC_OK) << dlc_last_error();
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(r[i], 2 * kG[i]) << run << ": " << i;
  }
  // Enqueued at the first run and while capturing; replayed at the second.
  EXPECT_EQ(fakeNccl().calls,
            (std::vector<std::string>{"all_reduce 5 avg", "all_reduce 5 avg"}));
  EXPECT_EQ(fakeNccl().fromGraph, 1);
  EXPECT_EQ(fakeNccl().groups, 2);
}

TEST_F(FakeNccl, StartedBucketIsOneGroupOnTheCommunicationStream) {
  ModelPtr m = createOneEntry(kAllReduce, twoPieceSumStep);
  ASSERT_TRUE(m) << dlc_last_error();
  CommPtr comm = detached(1, 4);
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK)
      << dlc_last_error();
  fakeNccl().peerFactor = 0.5f;
  for (int run = 0; run < 3; ++run) {
    float r[5] = {};
    ASSERT_EQ(runStep(m.get(), kG, r), DLC_OK) << dlc_last_error();
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(r[i], kG[i] * 2.5f) << run << ": " << i; // 1 + 3 * 0.5
  }
  // The first run and the capture enqueue the group; the capture forks
  // into the communication stream and joins back (the graph is valid, and
  // replayed by the second and third runs).
  EXPECT_EQ(fakeNccl().calls,
            (std::vector<std::string>{"all_reduce 2 sum", "all_reduce 3 sum",
                                      "all_reduce 2 sum", "all_reduce 3 sum"}));
  EXPECT_EQ(fakeNccl().groups, 2);
  EXPECT_EQ(fake().streamWaits, 4);
  EXPECT_EQ(fake().graphsInstantiated, 1);
  EXPECT_EQ(fakeNccl().fromGraph, 4);
}

// A bucket started and never waited for: the runtime joins it after the
// host function, so that the capture ends joined.
void startOnlyStep(void *const *args) {
  dlc_cuda_memcpy(args[3], args[1], args[0], 5 * sizeof(float));
  dlc_cuda_comm_bucket_add(args[3], address(args[1]), 5, DLC_F32);
  dlc_cuda_comm_bucket_start(args[3], DLC_REDUCE_MEAN);
}

TEST_F(FakeNccl, BucketLeftInFlightIsJoined) {
  ModelPtr m = createOneEntry(kAllReduce, startOnlyStep);
  ASSERT_TRUE(m) << dlc_last_error();
  CommPtr comm = detached(0, 2);
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK);
  for (int run = 0; run < 3; ++run) {
    float r[5] = {};
    ASSERT_EQ(runStep(m.get(), kG, r), DLC_OK) << dlc_last_error();
    EXPECT_EQ(r[4], kG[4]) << run; // the other rank's are the same
  }
  EXPECT_EQ(fake().graphsInstantiated, 1);
  EXPECT_EQ(fakeNccl().fromGraph, 2);

  // A new communicator drops the graphs, which hold the old one's
  // collectives: the next run is direct, the one after captures again.
  int64_t launches = fake().graphLaunches;
  CommPtr other = detached(0, 2);
  ASSERT_EQ(dlc_model_set_comm(m.get(), other.get()), DLC_OK);
  EXPECT_EQ(fakeNccl().inits, 2);
  EXPECT_EQ(fakeNccl().destroys, 1);
  float r[5];
  ASSERT_EQ(runStep(m.get(), kG, r), DLC_OK) << dlc_last_error();
  EXPECT_EQ(fake().graphLaunches, launches);
  ASSERT_EQ(runStep(m.get(), kG, r), DLC_OK) << dlc_last_error();
  EXPECT_EQ(fake().graphsInstantiated, 2);
}

TEST_F(FakeNccl, EntryNeedsACommunicator) {
  ModelPtr m = createOneEntry(kAllReduce, allReduceStep);
  ASSERT_TRUE(m) << dlc_last_error();
  float r[5];
  EXPECT_EQ(runStep(m.get(), kG, r), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("dlc_model_set_comm"));
  EXPECT_TRUE(fakeNccl().calls.empty());
  // Taking it away again works too.
  CommPtr comm = detached(0, 2);
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK);
  ASSERT_EQ(dlc_model_set_comm(m.get(), nullptr), DLC_OK);
  EXPECT_EQ(fakeNccl().destroys, 1);
  EXPECT_EQ(runStep(m.get(), kG, r), DLC_ERR_INVALID_ARGUMENT);
}

// A sharded optimizer's collectives over 2 ranks, of a tensor of 5 values
// (shards of 3): s = this rank's shard of the mean of g, w = every rank's
// s gathered, t = this rank's shard of g.
const char *const kSharded = "dlc-model 2\nname zero\nentry step\n"
                             "workspace 64\ncommunicator\n"
                             "in g f32 5\nout s f32 3\nout w f32 5\n"
                             "out t f32 3\nend\n";
void shardedStep(void *const *args) {
  void *ctx = args[5];
  dlc_cuda_comm_bucket_add_pair(ctx, address(args[0]), 5, address(args[1]), 3,
                                DLC_F32);
  dlc_cuda_comm_bucket_reduce_scatter(ctx, DLC_REDUCE_MEAN);
  dlc_cuda_comm_bucket_add_pair(ctx, address(args[1]), 3, address(args[2]), 5,
                                DLC_F32);
  dlc_cuda_comm_bucket_all_gather(ctx);
  dlc_cuda_comm_bucket_add_pair(ctx, address(args[0]), 5, address(args[3]), 3,
                                DLC_F32);
  dlc_cuda_comm_bucket_shard(ctx);
}

dlc_status runSharded(dlc_model *m, float *s, float *w, float *t) {
  const void *in[] = {kG};
  void *out[] = {s, w, t};
  return dlc_model_run(m, 0, in, out);
}

TEST_F(FakeNccl, ShardedCollectivesPadTheLastShard) {
  ModelPtr m = createOneEntry(kSharded, shardedStep);
  ASSERT_TRUE(m) << dlc_last_error();
  CommPtr comm = detached(1, 2);
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK)
      << dlc_last_error();
  fakeNccl().peerFactor = 2;
  for (int run = 0; run < 2; ++run) {
    float s[3] = {-1, -1, -1}, w[5] = {}, t[3] = {-1, -1, -1};
    ASSERT_EQ(runSharded(m.get(), s, w, t), DLC_OK) << dlc_last_error();
    // Rank 1's shard: values 3 and 4 of the mean (g + 2 g) / 2, and zero
    // past the tensor's end.
    EXPECT_EQ(s[0], 6.0f);
    EXPECT_EQ(s[1], 7.5f);
    EXPECT_EQ(s[2], 0.0f);
    // Rank 0's shard (the peer's: 2 s) first, then this rank's part.
    const float wantW[5] = {12, 15, 0, 6, 7.5f};
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(w[i], wantW[i]) << run << ": " << i;
    EXPECT_EQ(t[0], 4.0f);
    EXPECT_EQ(t[1], 5.0f);
    EXPECT_EQ(t[2], 0.0f);
  }
  // Two ranks' blocks of 3 values, in one message each.
  EXPECT_EQ(fakeNccl().calls[0], "reduce_scatter 3 avg");
  EXPECT_EQ(fakeNccl().calls[1], "all_gather 3");
  EXPECT_EQ(fakeNccl().fromGraph, 2);
}

TEST_F(FakeNccl, ShardsOfAnotherJobSizeAreRefused) {
  ModelPtr m = createOneEntry(kSharded, shardedStep);
  ASSERT_TRUE(m) << dlc_last_error();
  CommPtr comm = detached(0, 3); // shards of 2, not 3
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK);
  float s[3], w[5], t[3];
  EXPECT_EQ(runSharded(m.get(), s, w, t), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("--data-parallel=3"));
  EXPECT_TRUE(fakeNccl().calls.empty());
}

// An entry whose collectives grow after the planning call (no compiled
// code does that) cannot overrun the staging.
int GrowingCalls = 0;
void growingStep(void *const *args) {
  void *ctx = args[5];
  for (int i = 0; i <= (GrowingCalls > 0 ? 1 : 0); ++i)
    dlc_cuda_comm_bucket_add_pair(ctx, address(args[0]), 5, address(args[1]), 3,
                                  DLC_F32);
  dlc_cuda_comm_bucket_reduce_scatter(ctx, DLC_REDUCE_MEAN);
  ++GrowingCalls;
}

TEST_F(FakeNccl, ShardedBucketLargerThanPlannedIsRefused) {
  GrowingCalls = 0;
  ModelPtr m = createOneEntry(kSharded, growingStep);
  ASSERT_TRUE(m) << dlc_last_error();
  CommPtr comm = detached(0, 2);
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK);
  float s[3], w[5], t[3];
  EXPECT_EQ(runSharded(m.get(), s, w, t), DLC_ERR_INTERNAL);
  EXPECT_TRUE(errorContains("more than the 3 planned"));
  EXPECT_TRUE(fakeNccl().calls.empty());
}

TEST_F(FakeNccl, LostRankTimesOutAndAborts) {
  ::setenv("DLC_COMM_TIMEOUT", "0.3", 1);
  ModelPtr m = createOneEntry(kAllReduce, allReduceStep);
  ASSERT_TRUE(m) << dlc_last_error();
  CommPtr comm = detached(0, 2);
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK);
  fakeNccl().hang = true;
  float r[5];
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(runStep(m.get(), kG, r), DLC_ERR_COMMUNICATION);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_GE(seconds, 0.3);
  EXPECT_TRUE(errorContains("rank 0 of 2"));
  EXPECT_TRUE(errorContains("one of them died or hangs"));
  EXPECT_EQ(fakeNccl().aborts, 1);
  // The communicator is gone: later runs fail at once.
  fakeNccl().hang = false;
  EXPECT_EQ(runStep(m.get(), kG, r), DLC_ERR_COMMUNICATION);
  EXPECT_TRUE(errorContains("aborted"));
}

TEST_F(FakeNccl, AsynchronousErrorAborts) {
  ModelPtr m = createOneEntry(kAllReduce, allReduceStep);
  ASSERT_TRUE(m) << dlc_last_error();
  CommPtr comm = detached(1, 2);
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK);
  fakeNccl().hang = true;
  fakeNccl().asyncError = 6; // ncclRemoteError
  float r[5];
  EXPECT_EQ(runStep(m.get(), kG, r), DLC_ERR_COMMUNICATION);
  EXPECT_TRUE(errorContains("rank 1 of 2"));
  EXPECT_TRUE(errorContains("remote process exited"));
  EXPECT_EQ(fakeNccl().aborts, 1);
}

TEST_F(FakeNccl, UnusableNcclIsReported) {
  ModelPtr m = createOneEntry(kAllReduce, allReduceStep);
  ASSERT_TRUE(m) << dlc_last_error();
  CommPtr comm = detached(0, 2);
  ASSERT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_OK);
  ::setenv("DLC_NCCL_LIBRARY", "libnccl-not-here.so.2", 1);
  EXPECT_EQ(dlc_model_set_comm(m.get(), comm.get()),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains("libnccl-not-here.so.2"));
  EXPECT_TRUE(errorContains("DLC_DEVICE=cpu"));
  ::unsetenv("DLC_NCCL_LIBRARY");
  fakeNccl().version = 20903; // 2.9.3: no ncclAvg
  EXPECT_EQ(dlc_model_set_comm(m.get(), comm.get()),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_TRUE(errorContains("2.10"));
  fakeNccl().version = 22304;
  fakeNccl().failInitRank = 5; // ncclInvalidUsage
  EXPECT_EQ(dlc_model_set_comm(m.get(), comm.get()), DLC_ERR_COMMUNICATION);
  EXPECT_TRUE(errorContains("ncclCommInitRank"));
  EXPECT_TRUE(errorContains("dlc_comm_local_rank"));
  EXPECT_EQ(fakeNccl().inits, 1);
  EXPECT_EQ(fakeNccl().destroys, 1);
  // The failed calls took the first communicator away: the entry cannot
  // run.
  float r[5];
  EXPECT_EQ(runStep(m.get(), kG, r), DLC_ERR_INVALID_ARGUMENT);
}

TEST_F(FakeNccl, LocalRankComesFromTheLauncher) {
  CommPtr comm = detached(3, 4);
  ::unsetenv("LOCAL_RANK");
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  EXPECT_EQ(dlc_comm_local_rank(comm.get()), 1);
  ::setenv("LOCAL_RANK", "2", 1); // torchrun's comes first
  EXPECT_EQ(dlc_comm_local_rank(comm.get()), 2);
  ::setenv("LOCAL_RANK", "9", 1); // out of range: the next one
  EXPECT_EQ(dlc_comm_local_rank(comm.get()), 1);
  ::unsetenv("LOCAL_RANK");
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(dlc_comm_local_rank(comm.get()), 3);
  EXPECT_EQ(dlc_comm_local_rank(nullptr), -1);
}

} // namespace
