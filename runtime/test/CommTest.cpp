//===- CommTest.cpp - data-parallel entries without MPI ------------------===//
//
// What the C API does with an entry that reduces over ranks (the
// descriptor's `communicator` line: ModelTextTest.cpp) when the model has
// no communicator. The
// collectives themselves run under mpirun (test/e2e/distributed/): MPI is
// not loaded here, so that the sanitizer builds of these tests stay clean.
//
//===----------------------------------------------------------------------===//

#include "comm.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <string>

using namespace dlc::test;

namespace {

int StepCalls = 0;
void step(void *const *) { ++StepCalls; }
void forward(void *const *) {}

const char *const kText = "dlc-model 2\n"
                          "name dp\n"
                          "param w f32 4 zeros 0\n"
                          "entry forward\n"
                          "workspace 64\n"
                          "concurrent\n"
                          "in x f32 4\n"
                          "end\n"
                          "entry train_step\n"
                          "workspace 64\n"
                          "communicator\n"
                          "in x f32 4\n"
                          "end\n";
const dlc_entry_fn kEntries[] = {forward, step};
const dlc_model_desc kDesc = {DLC_ABI_VERSION, kText,   2, kEntries, nullptr,
                              nullptr,         nullptr, 0, nullptr};

TEST(CommTest, EntryNeedsACommunicator) {
  ModelPtr m = createModel(kDesc, DLC_DEVICE_CPU);
  ASSERT_TRUE(m) << dlc_last_error();
  EXPECT_EQ(dlc_model_entry_uses_comm(m.get(), 0), 0);
  EXPECT_EQ(dlc_model_entry_uses_comm(m.get(), 1), 1);
  EXPECT_EQ(dlc_model_entry_uses_comm(m.get(), 2), -1);
  EXPECT_EQ(dlc_model_entry_uses_comm(nullptr, 0), -1);

  float x[4] = {};
  const void *in[] = {x};
  StepCalls = 0;
  EXPECT_EQ(dlc_model_run(m.get(), 1, in, nullptr), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("entry 'train_step' reduces over the ranks"));
  EXPECT_TRUE(errorContains("dlc_model_set_comm"));
  EXPECT_EQ(StepCalls, 0);
  // The other entries run as usual.
  EXPECT_EQ(dlc_model_run(m.get(), 0, in, nullptr), DLC_OK);

  int32_t same = -1;
  EXPECT_EQ(dlc_model_check_replicas(m.get(), &same), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("no communicator"));
  EXPECT_EQ(dlc_model_set_comm(nullptr, nullptr), DLC_ERR_INVALID_ARGUMENT);
}

TEST(CommTest, CommunicatorWithoutMpiCalls) {
  EXPECT_EQ(dlc_comm_rank(nullptr), -1);
  EXPECT_EQ(dlc_comm_size(nullptr), -1);
  dlc_comm_destroy(nullptr);
  dlc_comm_abort(nullptr, 1);
  EXPECT_EQ(dlc_comm_create_mpi(nullptr), DLC_ERR_INVALID_ARGUMENT);
  float v = 1;
  EXPECT_EQ(dlc_comm_all_reduce(nullptr, &v, 1, DLC_REDUCE_SUM),
            DLC_ERR_INVALID_ARGUMENT);
  int32_t same = 0;
  EXPECT_EQ(dlc_comm_same_bytes(nullptr, &v, 4, &same),
            DLC_ERR_INVALID_ARGUMENT);
  // A bad timeout and a library that does not load fail before MPI starts.
  {
    EnvGuard timeout("DLC_COMM_TIMEOUT", "-3");
    dlc_comm *c = nullptr;
    EXPECT_EQ(dlc_comm_create_mpi(&c), DLC_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(c, nullptr);
    EXPECT_TRUE(errorContains("DLC_COMM_TIMEOUT"));
  }
  {
    EnvGuard lib("DLC_MPI_LIBRARY", "libdlc-no-such-mpi.so");
    dlc_comm *c = nullptr;
    EXPECT_EQ(dlc_comm_create_mpi(&c), DLC_ERR_DEVICE_UNAVAILABLE);
    EXPECT_EQ(c, nullptr);
    EXPECT_TRUE(errorContains("cannot load DLC_MPI_LIBRARY"));
  }
}

// A process started alone is a job of one rank without MPI: its
// collectives are the rank's own data.
TEST(CommTest, OneRankNeedsNoMpi) {
  EnvGuard lib("DLC_MPI_LIBRARY", "none");
  dlc_comm *c = nullptr;
  ASSERT_EQ(dlc_comm_create_mpi(&c), DLC_OK) << dlc_last_error();
  EXPECT_EQ(dlc_comm_rank(c), 0);
  EXPECT_EQ(dlc_comm_size(c), 1);
  EXPECT_EQ(dlc_comm_local_rank(c), 0);
  float v[3] = {1, 2, 3};
  EXPECT_EQ(dlc_comm_all_reduce(c, v, 3, DLC_REDUCE_MEAN), DLC_OK);
  EXPECT_EQ(v[2], 3.f);
  int32_t same = 0;
  EXPECT_EQ(dlc_comm_same_bytes(c, v, sizeof v, &same), DLC_OK);
  EXPECT_EQ(same, 1);
  float whole[3];
  EXPECT_EQ(dlc::rt::gatherShards(c, v, 3, whole, 3), DLC_OK);
  EXPECT_EQ(whole[1], 2.f);
  dlc_comm_abort(c, 1); // nothing to abort
  dlc_comm_destroy(c);

  // A launcher that started several ranks needs MPI.
  EnvGuard size("OMPI_COMM_WORLD_SIZE", "2");
  EXPECT_EQ(dlc_comm_create_mpi(&c), DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  EXPECT_TRUE(errorContains("OMPI_COMM_WORLD_SIZE=2"));
}

// A communicator outside MPI that claims several ranks has no collectives.
TEST(CommTest, DetachedCommunicatorOfSeveralRanksRefusesCollectives) {
  dlc_comm *c = dlc::rt::createDetachedComm(1, 2);
  float v[2] = {1, 2};
  EXPECT_EQ(dlc_comm_all_reduce(c, v, 2, DLC_REDUCE_SUM), DLC_ERR_INTERNAL);
  EXPECT_TRUE(errorContains("outside MPI"));
  float whole[4] = {};
  EXPECT_EQ(dlc::rt::gatherShards(c, v, 2, whole, 4), DLC_ERR_INTERNAL);
  dlc_comm_destroy(c);
}

// The generated code's calls after a failure of the run do nothing, and
// the failure is what the run reports.
TEST(CommTest, FailuresAreSticky) {
  dlc::rt::CommContext ctx;
  ctx.status = DLC_ERR_COMMUNICATION;
  ctx.message = "rank 1 of 2: an all-reduce waited";
  float g[4] = {1, 2, 3, 4};
  dlc_comm_bucket_add(&ctx, reinterpret_cast<int64_t>(g), 4, DLC_F32);
  dlc_comm_bucket_reduce(&ctx, DLC_REDUCE_MEAN);
  EXPECT_TRUE(ctx.bucket.empty());
  EXPECT_EQ(g[3], 4.f);
  EXPECT_EQ(ctx.status, DLC_ERR_COMMUNICATION);
  ctx.reset();
  EXPECT_EQ(ctx.status, DLC_OK);
  // Only f32 buffers: anything else is a compiler bug, reported as such.
  dlc_comm_bucket_add(&ctx, reinterpret_cast<int64_t>(g), 2, DLC_F16);
  EXPECT_EQ(ctx.status, DLC_ERR_INTERNAL);
  EXPECT_NE(ctx.message.find("only f32"), std::string::npos) << ctx.message;
}

} // namespace
