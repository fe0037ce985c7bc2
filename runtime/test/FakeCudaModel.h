//===- FakeCudaModel.h - a hand-written CUDA model for the fake driver ----===//
//
// What the fake-driver tests share (CudaFakeTest.cpp, CudaFakeGemmTest.cpp):
// the fake driver's state, a hand-written "compiled model" with CUDA code
// and its entries, helpers to create and run models, and the fixture that
// checks every model gave back what it took.
//
//===----------------------------------------------------------------------===//
#ifndef DLCRT_TEST_FAKECUDAMODEL_H
#define DLCRT_TEST_FAKECUDAMODEL_H

#include "TestUtil.h"
#include "fake_cuda/fake_cuda.h"

#include "dlc/dlc_cuda_abi.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

namespace dlc::test::fake_cuda {

/// The fake driver's state (the fake libcuda.so.1 on LD_LIBRARY_PATH).
FakeCudaState &fake();
/// The fake NCCL's state (the fake libnccl.so.2 beside it).
FakeNcclState &fakeNccl();

// forward: y = x * w (fake_mul), through the workspace with two device
// copies. train: w += 1 (fake_add_one). gemm: c1 = a * bt^T (2x3 by 3x4),
// c2[b] = at[b]^T * b2[b] (batch 2 of 2x3 by 3x2, at stored 3x2).
extern const char *const kText;
extern const char *const kPtx;
extern const char *const kKernels[2];

int64_t i64(void *p);

/// The arguments of the last cudaForward call.
extern void *LastArgs[16];
void cudaForward(void *const *args);
void cudaTrain(void *const *args);
void cudaGemm(void *const *args);
void cudaBad(void *const *args);

/// Calls of the CPU entries.
extern int CpuCalls;
void cpuEntry(void *const *);

extern const dlc_entry_fn kCudaEntries[4];
extern const dlc_entry_fn kCpuEntries[4];
extern const dlc_cuda_module kModule;
extern const dlc_model_desc kDesc;

ModelPtr create(const dlc_model_desc &desc = kDesc,
                dlc_device_kind device = DLC_DEVICE_AUTO);

/// The descriptor of a one-entry model described by `text`, without
/// kernels, whose CUDA entry is `cuda`. It lives as long as the process
/// (models point into it).
const dlc_model_desc &oneEntry(const char *text, dlc_entry_fn cuda);

/// That model, created on the fake GPU.
ModelPtr createOneEntry(const char *text, dlc_entry_fn cuda);

/// The status of creating that model on the fake GPU (which runs its entry
/// once to plan its GEMMs); the model, if created, is destroyed.
dlc_status createOneEntryStatus(const char *text, dlc_entry_fn cuda);

/// sum_p x[p] * y[p] over p < k, in order, in fp32: the reference of one
/// element of a GEMM whose operands are rows x and y.
float rowDot(const float *x, const float *y, int k);

dlc_status forward(dlc_model *m, const float *x, float *y);

float *paramF32(dlc_model *m, int32_t i);

class FakeCuda : public ::testing::Test {
protected:
  void SetUp() override {
    FakeCudaState &f = fake();
    f.resetRecords();
    f.failLaunchAt = -1;
    f.failBeginCapture = false;
    f.algoMs.clear();
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

} // namespace dlc::test::fake_cuda

#endif // DLCRT_TEST_FAKECUDAMODEL_H
