//===- CudaFakeGemmTest.cpp - cuBLASLt GEMMs against the fake driver -----===//
//
// dlc_cuda_gemm against the fake libcublasLt.so.13 (fake_cuda.h): layouts,
// epilogues (bias, activations and their gradients), 16-bit operands and
// the errors. Runs in the FakeCuda suite of CudaFakeTest.cpp's process
// (FakeCudaModel.h).
//
//===----------------------------------------------------------------------===//

#include "FakeCudaModel.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace dlc::test;
using namespace dlc::test::fake_cuda;

namespace {

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

/// The bias-gradient tests' operands: dy (3x2) and x (3x4).
const float kDy[6] = {1, -2, 3, 0.5f, 4, -1};
void fillX(float *x) {
  for (int i = 0; i < 12; ++i)
    x[i] = float(i % 5) - 2;
}

/// Checks dw = dy^T * x (2x4) and, unless null, ga = the sums of dy's
/// columns (dw's bias gradient).
void expectWeightGrad(const float *dy, const float *x, const float *dw,
                      const float *ga) {
  for (int i = 0; i < 2; ++i) {
    if (ga) {
      EXPECT_EQ(ga[i], dy[i] + dy[2 + i] + dy[4 + i]) << i;
    }
    for (int j = 0; j < 4; ++j) {
      float want = 0;
      for (int p = 0; p < 3; ++p)
        want += dy[p * 2 + i] * x[p * 4 + j];
      EXPECT_EQ(dw[i * 4 + j], want) << i << "," << j;
    }
  }
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
  float x[12];
  fillX(x);
  float dw1[8], ga[2], dw2[8], gb[4];
  const void *inputs[] = {kDy, x};
  void *outputs[] = {dw1, ga, dw2, gb};
  ASSERT_EQ(dlc_model_run(m.get(), 0, inputs, outputs), DLC_OK)
      << dlc_last_error();
  expectWeightGrad(kDy, x, dw1, ga);
  expectWeightGrad(kDy, x, dw2, nullptr);
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

/// The bias-gradient model's pointers, as its entry last saw them.
void *const *BiasGradArgs = nullptr;

/// dw = dy^T * x with its bias gradient (BGRAD_A) into dw and ga: a
/// weight gradient's GEMM, which writes two buffers.
ModelPtr biasGradModel() {
  static const char *const text =
      "dlc-model 1\nname g\nentry e\nin dy f32 3,2\nin x f32 3,4\n"
      "out dw f32 2,4\nout ga f32 2\nend\n";
  return createOneEntry(text, [](void *const *args) {
    BiasGradArgs = args; // dy, x, dw, ga, workspace, ctx
    dlc_cuda_gemm(args[5], DLC_F32, DLC_F32, 1, 2, 4, 3, args[0], 2, 0, 1,
                  args[1], 4, 0, 0, 0.0f, args[2], 4, 0,
                  DLC_GEMM_EPILOGUE_BGRAD_A, args[3], nullptr);
  });
}

/// Runs the bias-gradient model once and checks its outputs.
void runBiasGradModel(dlc_model *m) {
  float x[12];
  fillX(x);
  float dw[8], ga[2];
  const void *inputs[] = {kDy, x};
  void *outputs[] = {dw, ga};
  ASSERT_EQ(dlc_model_run(m, 0, inputs, outputs), DLC_OK) << dlc_last_error();
  expectWeightGrad(kDy, x, dw, ga);
}

/// DLC_CUDA_GEMM_TUNE set while a test runs.
class GemmTuning {
public:
  explicit GemmTuning(const char *value) {
    ::setenv("DLC_CUDA_GEMM_TUNE", value, 1);
  }
  ~GemmTuning() { ::unsetenv("DLC_CUDA_GEMM_TUNE"); }
};

TEST_F(FakeCuda, GemmPlanTimesTheHeuristicsAlgorithms) {
  // The heuristic ranks three algorithms: 42 takes 1 ms a matmul, 43
  // 0.25 ms, 44 fails. With DLC_CUDA_GEMM_TUNE=1, creation times 42 and 43
  // (a warm-up and 5 timed matmuls each) into scratch buffers, never the
  // call's own: its product and bias gradient are written by the runs
  // alone, with 43.
  GemmTuning tuning("1");
  fake().algoMs = {1.0, 0.25, -1.0};
  ModelPtr m = biasGradModel();
  ASSERT_TRUE(m);
  EXPECT_EQ(fake().heuristics, 1);
  EXPECT_EQ(fake().matmuls, 12);
  ASSERT_NE(BiasGradArgs, nullptr);
  for (const void *written : fake().matmulWrites) {
    EXPECT_NE(written, BiasGradArgs[2]);
    EXPECT_NE(written, BiasGradArgs[3]);
  }
  fake().resetRecords();
  runBiasGradModel(m.get());
  runBiasGradModel(m.get());
  EXPECT_EQ(fake().matmulAlgos, (std::vector<int>{43, 43}));
  EXPECT_EQ(fake().heuristics, 0);
}

TEST_F(FakeCuda, GemmPlanKeepsTheHeuristicsFirstUnlessClearlySlower) {
  // By default, the heuristic's first, nothing timed.
  fake().algoMs = {1.0, 0.25};
  ModelPtr untuned = biasGradModel();
  ASSERT_TRUE(untuned);
  EXPECT_EQ(fake().matmuls, 0);
  runBiasGradModel(untuned.get());
  EXPECT_EQ(fake().matmulAlgos, (std::vector<int>{42}));

  // Timed, 43 is 4% faster than 42: within what timing cannot tell apart.
  GemmTuning tuning("1");
  fake().algoMs = {1.0, 0.96};
  ModelPtr m = biasGradModel();
  ASSERT_TRUE(m);
  fake().resetRecords();
  runBiasGradModel(m.get());
  EXPECT_EQ(fake().matmulAlgos, (std::vector<int>{42}));
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

} // namespace
