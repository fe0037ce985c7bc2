//===- FakeCudaModel.cpp - a hand-written CUDA model for the fake driver --===//
//
// The definitions of FakeCudaModel.h.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaModel.h"

#include <deque>
#include <dlfcn.h>

namespace dlc::test::fake_cuda {

/// The state a fake library exports through `symbol`, found with dlopen
/// (the library the runtime loads) once per State; a stand-in, and a test
/// failure, when it is not on LD_LIBRARY_PATH.
template <typename State>
static State &fakeState(const char *library, const char *symbol) {
  static void *lib = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
  static auto *get =
      lib ? reinterpret_cast<State *(*)()>(::dlsym(lib, symbol)) : nullptr;
  if (!get) {
    ADD_FAILURE() << "the fake " << library << " is not on LD_LIBRARY_PATH";
    static State none;
    return none;
  }
  return *get();
}

FakeCudaState &fake() {
  return fakeState<FakeCudaState>("libcuda.so.1", "fake_cuda_state");
}

FakeNcclState &fakeNccl() {
  return fakeState<FakeNcclState>("libnccl.so.2", "fake_nccl_state");
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
const dlc_model_desc kDesc = {DLC_ABI_VERSION, kText,   4, kCpuEntries, nullptr,
                              &kModule,        nullptr, 0, nullptr};

ModelPtr create(const dlc_model_desc &desc, dlc_device_kind device) {
  return createModel(desc, device);
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
  d.desc = {DLC_ABI_VERSION, text,    1, &d.cpu, nullptr,
            &d.module,       nullptr, 0, nullptr};
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

} // namespace dlc::test::fake_cuda
