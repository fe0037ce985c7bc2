//===- ModelTextTest.cpp - Parsing the model description ------------------===//

#include "TestUtil.h"
#include "internal.h"

#include <gtest/gtest.h>

using namespace dlc::rt;
using namespace dlc::test;

namespace {

const char *const kDigits =
    "dlc-model 1\n"
    "name digits\n"
    "param fc1.weight f32 256,784 uniform 0.03571428571\n"
    "param fc1.bias f32 256 uniform 0.03571428571\n"
    "param ln.weight f32 64 ones 0\n"
    "param ln.bias f32 3 zeros 0\n"
    "param step i64 - zeros 0\n"
    "entry forward\n"
    "in x f32 64,784\n"
    "out logits f32 64,10\n"
    "end\n"
    "entry train_step\n"
    "in x f32 64,784\n"
    "in y i64 64\n"
    "out loss f32 -\n"
    "end\n";

// Version 2 marks the entries whose calls only read the params; version 1
// has no such line, and every call of its entries runs alone.
TEST(ModelTextTest, ConcurrentEntries) {
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText("dlc-model 2\nname m\nparam w f32 4 zeros 0\n"
                             "entry forward\nworkspace 64\nconcurrent\n"
                             "in x f32 4\nout y f32 4\nend\n"
                             "entry train_step\nin x f32 4\nend\n",
                             model, err))
      << err;
  ASSERT_EQ(model.entries.size(), 2u);
  EXPECT_TRUE(model.entries[0].concurrent);
  EXPECT_EQ(model.entries[0].workspaceBytes, 64);
  EXPECT_FALSE(model.entries[1].concurrent);
  ModelDecl v1;
  ASSERT_TRUE(parseModelText(kDigits, v1, err)) << err;
  EXPECT_FALSE(v1.entries[0].concurrent);
  EXPECT_TRUE(v1.cpuFeatures.empty());
}

TEST(ModelTextTest, CpuFeatures) {
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText("dlc-model 2\nname m\ncpu sse4.2,avx2,avx512bf16\n"
                             "param w f32 4 zeros 0\n",
                             model, err))
      << err;
  EXPECT_EQ(model.cpuFeatures,
            (std::vector<std::string>{"sse4.2", "avx2", "avx512bf16"}));
}

TEST(ModelTextTest, ParsesTheExample) {
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText(kDigits, model, err)) << err;
  EXPECT_EQ(model.name, "digits");
  ASSERT_EQ(model.params.size(), 5u);

  const ParamDecl &w = model.params[0];
  EXPECT_EQ(w.name, "fc1.weight");
  EXPECT_EQ(w.dtype, DLC_F32);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{256, 784}));
  EXPECT_EQ(w.numel, 256 * 784);
  EXPECT_EQ(w.nbytes, 256 * 784 * 4);
  EXPECT_EQ(w.init, InitKind::Uniform);
  EXPECT_DOUBLE_EQ(w.bound, 0.03571428571);
  EXPECT_EQ(w.offset, 0);

  // Each param starts 64-byte aligned, right after the previous one.
  EXPECT_EQ(model.params[1].offset, 256 * 784 * 4);
  EXPECT_EQ(model.params[2].offset, 256 * 784 * 4 + 1024);
  EXPECT_EQ(model.params[2].init, InitKind::Ones);
  EXPECT_EQ(model.params[3].offset, model.params[2].offset + 256);
  EXPECT_EQ(model.params[3].nbytes, 12);
  EXPECT_EQ(model.params[4].offset, model.params[3].offset + 64);
  EXPECT_TRUE(model.params[4].shape.empty());
  EXPECT_EQ(model.params[4].numel, 1);
  EXPECT_EQ(model.params[4].nbytes, 8);
  EXPECT_EQ(model.paramBytes, model.params[4].offset + 64);

  ASSERT_EQ(model.entries.size(), 2u);
  EXPECT_EQ(model.entries[0].name, "forward");
  ASSERT_EQ(model.entries[0].inputs.size(), 1u);
  ASSERT_EQ(model.entries[0].outputs.size(), 1u);
  EXPECT_EQ(model.entries[0].outputs[0].name, "logits");
  EXPECT_EQ(model.entries[0].outputs[0].shape, (std::vector<int64_t>{64, 10}));
  ASSERT_EQ(model.entries[1].inputs.size(), 2u);
  EXPECT_EQ(model.entries[1].inputs[1].dtype, DLC_I64);
  EXPECT_TRUE(model.entries[1].outputs[0].shape.empty());
}

TEST(ModelTextTest, MinimalAndUnterminatedLastLine) {
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText("dlc-model 1\nname m", model, err)) << err;
  EXPECT_EQ(model.name, "m");
  EXPECT_TRUE(model.params.empty());
  EXPECT_TRUE(model.entries.empty());
  EXPECT_EQ(model.paramBytes, 0);

  ASSERT_TRUE(parseModelText("dlc-model 1\nname m\nentry e\nend", model, err))
      << err;
  ASSERT_EQ(model.entries.size(), 1u);
  EXPECT_TRUE(model.entries[0].inputs.empty());
}

TEST(ModelTextTest, OutputMayShareAnInputsName) {
  // A model that passes an input through: `output x` of `input x`.
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText(
      "dlc-model 1\nname m\nentry f\nin x f32 4\nout x f32 4\nend\n", model,
      err))
      << err;
  ASSERT_EQ(model.entries.size(), 1u);
  EXPECT_EQ(model.entries[0].inputs[0].name, "x");
  EXPECT_EQ(model.entries[0].outputs[0].name, "x");
}

TEST(ModelTextTest, AllDTypes) {
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText("dlc-model 1\nname m\n"
                             "param a f32 1 uniform 1\n"
                             "param b f16 1 uniform 1\n"
                             "param c bf16 1 uniform 1\n"
                             "param d f64 1 uniform 1\n"
                             "param e i64 1 ones 0\n"
                             "param f i32 1 zeros 0\n"
                             "param g i8 1 ones 0\n"
                             "param h u8 1 ones 0\n",
                             model, err))
      << err;
  const dlc_dtype expected[] = {DLC_F32, DLC_F16, DLC_BF16, DLC_F64,
                                DLC_I64, DLC_I32, DLC_I8,   DLC_U8};
  ASSERT_EQ(model.params.size(), 8u);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_EQ(model.params[i].dtype, expected[i]);
}

struct BadText {
  const char *text;
  int line;
  const char *message;
};

void PrintTo(const BadText &bad, std::ostream *os) {
  *os << "line " << bad.line << ": " << bad.message;
}

class BadModelTextTest : public ::testing::TestWithParam<BadText> {};

TEST_P(BadModelTextTest, IsRejectedWithItsLine) {
  const BadText &bad = GetParam();
  ModelDecl model;
  std::string err;
  ASSERT_FALSE(parseModelText(bad.text, model, err));
  std::string prefix = "line " + std::to_string(bad.line) + ": ";
  EXPECT_EQ(err.substr(0, prefix.size()), prefix) << err;
  EXPECT_NE(err.find(bad.message), std::string::npos) << err;
}

// A data-parallel entry: `communicator` before `concurrent` and the tensors.
TEST(ModelTextTest, CommunicatorEntries) {
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText(
      "dlc-model 2\nname m\nparam w f32 4 zeros 0\n"
      "entry forward\nworkspace 64\nconcurrent\nin x f32 4\nend\n"
      "entry train_step\nworkspace 64\ncommunicator\nin x f32 4\n"
      "out loss f32 -\nend\n",
      model, err))
      << err;
  ASSERT_EQ(model.entries.size(), 2u);
  EXPECT_FALSE(model.entries[0].communicator);
  EXPECT_TRUE(model.entries[1].communicator);
  EXPECT_FALSE(model.entries[1].concurrent);
}

// A sharded optimizer's state: the rank's shard, and the whole tensor.
TEST(ModelTextTest, ShardedState) {
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText("dlc-model 2\nname m\nparam w f32 3,3 zeros 0\n"
                             "state optimizer.step f32 -\n"
                             "state optimizer.w.exp_avg f32 5 shard 2 3,3\n",
                             model, err))
      << err;
  ASSERT_EQ(model.params.size(), 3u);
  EXPECT_EQ(model.params[1].shardRanks, 0);
  const ParamDecl &m = model.params[2];
  EXPECT_TRUE(m.isState);
  EXPECT_EQ(m.shardRanks, 2);
  EXPECT_EQ(m.shape, std::vector<int64_t>{5});
  EXPECT_EQ(m.nbytes, 20);
  EXPECT_EQ(m.whole.shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(m.whole.nbytes, 36);
  EXPECT_EQ(m.whole.name, "optimizer.w.exp_avg");
}

#define HEAD "dlc-model 1\nname m\n"

const BadText kBadTexts[] = {
    {"", 1, "empty model description"},
    {"dlc-model 3\nname m\n", 1, "unsupported model description version"},
    {"dlc-model 1\nname m\nentry f\nconcurrent\nend\n", 4,
     "'concurrent' needs version 2"},
    {"dlc-model 1\nname m\ncpu avx2\n", 3, "'cpu' needs version 2"},
    {"dlc-model 2\nname m\ncpu avx2,avx1024\n", 3,
     "unknown CPU feature 'avx1024'"},
    {"dlc-model 2\nname m\ncpu avx2,\n", 3, "unknown CPU feature ''"},
    {"dlc-model 2\nname m\nparam w f32 4 zeros 0\ncpu avx2\n", 4,
     "'cpu' must come once, before the params"},
    {"dlc-model 2\nname m\ncpu avx2\ncpu fma\n", 4, "'cpu' must come once"},
    {"dlc-model 2\nname m\nconcurrent\n", 3,
     "'concurrent' outside an entry block"},
    {"dlc-model 2\nname m\nentry f\nin x f32 4\nconcurrent\nend\n", 5,
     "'concurrent' must come once, before the entry's 'in'"},
    {"dlc-model 2\nname m\nentry f\nconcurrent\nconcurrent\nend\n", 5,
     "'concurrent' must come once"},
    {"dlc-model 2\nname m\nentry f\nconcurrent x\nend\n", 4,
     "expected 'concurrent'"},
    {"dlc-model 1\nname m\nentry f\ncommunicator\nend\n", 4,
     "'communicator' needs version 2"},
    {"dlc-model 2\nname m\ncommunicator\n", 3,
     "'communicator' outside an entry block"},
    {"dlc-model 2\nname m\nentry f\nin x f32 4\ncommunicator\nend\n", 5,
     "'communicator' must come once, before 'concurrent' and the entry's"},
    {"dlc-model 2\nname m\nentry f\nconcurrent\ncommunicator\nend\n", 5,
     "'communicator' must come once, before 'concurrent'"},
    {"dlc-model 2\nname m\nentry f\ncommunicator\ncommunicator\nend\n", 5,
     "'communicator' must come once"},
    {"dlc-model 2\nname m\nentry f\ncommunicator 2\nend\n", 4,
     "expected 'communicator'"},
    {"dlc-model 1\nname m\nstate s f32 5 shard 2 3,3\n", 3,
     "'shard' needs version 2"},
    {"dlc-model 2\nname m\nstate s f32 5 shard 2 3,3 x\n", 3,
     "state NAME DTYPE SHAPE [shard RANKS SHAPE]"},
    {"dlc-model 2\nname m\nstate s f32 5 shard 0 3,3\n", 3,
     "expected 'shard RANKS SHAPE'"},
    {"dlc-model 2\nname m\nstate s f32 5 shards 2 3,3\n", 3,
     "expected 'shard RANKS SHAPE'"},
    {"dlc-model 2\nname m\nstate s f32 5 shard 2x 3,3\n", 3,
     "expected 'shard RANKS SHAPE'"},
    {"dlc-model 2\nname m\nstate s f32 4 shard 2 3,3\n", 3,
     "a shard of 9 elements over 2 ranks has shape 5"},
    {"dlc-model 2\nname m\nstate s f32 5 shard 2 3,0\n", 3, "bad shape"},
    {"dlc-model 2\nname m\nstate s f64 5 shard 2 3,3\n", 3,
     "a sharded state must be f32, not f64"},
    {"dlc-modl 1\nname m\n", 1, "expected 'dlc-model 1'"},
    {"dlc-model 1 x\nname m\n", 1, "got 3 fields"},
    {"dlc-model 1\n", 2, "missing the 'name NAME' line"},
    {"dlc-model 1\nnom m\n", 2, "expected 'name NAME'"},
    {"dlc-model 1\nname 9m\n", 2, "bad model name"},
    {"dlc-model 1\nname m\nname n\n", 3, "may only appear once"},
    {HEAD "param w f32 4 uniform 0.1\n\n", 4, "empty line"},
    {HEAD "param w f32 4  uniform 0.1\n", 3, "single spaces"},
    {HEAD "param w f32 4 uniform 0.1 \n", 3, "single spaces"},
    {HEAD " param w f32 4 uniform 0.1\n", 3, "single spaces"},
    {HEAD "param w f32 4 uniform 0.1\r\n", 3, "unexpected byte 13"},
    {HEAD "param\tw f32 4 uniform 0.1\n", 3, "unexpected byte 9"},
    {HEAD "param w f17 4 uniform 0.1\n", 3, "unknown dtype 'f17'"},
    {HEAD "param w f32 4 uniform\n", 3, "expected 'param NAME DTYPE SHAPE"},
    {HEAD "param w f32 4,0 zeros 0\n", 3, "bad shape '4,0'"},
    {HEAD "param w f32 4,,2 zeros 0\n", 3, "bad shape"},
    {HEAD "param w f32 -4 zeros 0\n", 3, "bad shape"},
    {HEAD "param w f32 04 zeros 0\n", 3, "bad shape"},
    {HEAD "param w f32 4, zeros 0\n", 3, "bad shape"},
    {HEAD "param w f32 1,1,1,1,1,1,1,1,1 zeros 0\n", 3, "more than 8"},
    {HEAD "param w f32 99999999999999999999 zeros 0\n", 3, "bad shape"},
    {HEAD "param w f32 4294967296,4294967296 zeros 0\n", 3, "too large"},
    {HEAD "param w f32 4 normal 0.1\n", 3, "unknown init 'normal'"},
    {HEAD "param w i32 4 uniform 0.1\n", 3, "floating-point dtype"},
    {HEAD "param w f32 4 uniform -0.1\n", 3, "bad bound"},
    {HEAD "param w f32 4 uniform inf\n", 3, "bad bound"},
    {HEAD "param w f32 4 uniform nan\n", 3, "bad bound"},
    {HEAD "param w f32 4 uniform 0.1x\n", 3, "bad bound"},
    {HEAD "param w f32 4 zeros 0\nparam w f32 4 zeros 0\n", 4,
     "duplicate param 'w'"},
    {HEAD "param w-1 f32 4 zeros 0\n", 3, "bad param name"},
    {HEAD "param __metadata__ f32 4 zeros 0\n", 3, "reserved"},
    {HEAD "entry f\nend\nparam w f32 4 zeros 0\n", 5, "after the first"},
    {HEAD "entry f\nin x f32 4\n", 3, "has no 'end'"},
    {HEAD "entry f\nentry g\nend\n", 4, "missing 'end'"},
    {HEAD "entry f\nend\nentry f\nend\n", 5, "duplicate entry 'f'"},
    {HEAD "entry f.g\nend\n", 3, "bad entry name"},
    {HEAD "entry\nend\n", 3, "expected 'entry NAME'"},
    {HEAD "in x f32 4\n", 3, "outside an entry"},
    {HEAD "end\n", 3, "'end' outside"},
    {HEAD "entry f\nout y f32 4\nin x f32 4\nend\n", 5, "'in' after 'out'"},
    {HEAD "entry f\nin x f32 4\nin x f32 4\nend\n", 5, "duplicate input 'x'"},
    {HEAD "entry f\nout y f32 4\nout y f32 4\nend\n", 5,
     "duplicate output 'y'"},
    {HEAD "entry f\nin x f32\nend\n", 4, "expected 'in NAME DTYPE SHAPE'"},
    {HEAD "entry f\nend x\n", 4, "expected 'end'"},
    {HEAD "bogus\n", 3, "unknown keyword 'bogus'"},
    {HEAD "param w f32 4 zeros 0\n\xc3\xa9\n", 4, "unexpected byte 195"},
};

INSTANTIATE_TEST_SUITE_P(Cases, BadModelTextTest,
                         ::testing::ValuesIn(kBadTexts));

TEST(ModelTextTest, CreateReportsTheLine) {
  const char *text = "dlc-model 1\nname m\nparam w f32 4 uniform 0.1\n"
                     "param b f32 4 uniform 0.1 extra\n";
  dlc_model_desc desc = {DLC_ABI_VERSION, text,    0, nullptr, nullptr,
                         nullptr,         nullptr, 0, nullptr};
  dlc_model *m = reinterpret_cast<dlc_model *>(0x1);
  EXPECT_EQ(dlc_model_create(&desc, DLC_DEVICE_CPU, &m), DLC_ERR_FORMAT);
  EXPECT_EQ(m, nullptr);
  EXPECT_TRUE(errorContains("line 4: ")) << dlc_last_error();
  EXPECT_TRUE(errorContains("bad model description")) << dlc_last_error();
}

} // namespace

namespace {
TEST(ModelTextTest, OptimizerStateLines) {
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText("dlc-model 1\nname m\n"
                             "param w f32 4 uniform 0.5\n"
                             "state optimizer.step f32 -\n"
                             "state optimizer.w.exp_avg f32 4\n"
                             "entry train_step\nout loss f32 -\nend\n",
                             model, err))
      << err;
  ASSERT_EQ(model.params.size(), 3u);
  EXPECT_FALSE(model.params[0].isState);
  EXPECT_TRUE(model.params[1].isState);
  EXPECT_EQ(model.params[1].init, InitKind::Zeros);
  EXPECT_TRUE(model.params[1].shape.empty());
  EXPECT_EQ(model.params[2].offset, model.params[1].offset + 64);
  EXPECT_EQ(model.params[2].numel, 4);

  EXPECT_FALSE(parseModelText("dlc-model 1\nname m\n"
                              "state s f32 4\nparam w f32 4 zeros 0\n",
                              model, err));
  EXPECT_EQ(err, "line 4: 'param' after a 'state' (weights come first)");
  EXPECT_FALSE(parseModelText("dlc-model 1\nname m\nstate s f32 4 zeros 0\n",
                              model, err));
  EXPECT_NE(err.find("state NAME DTYPE SHAPE"), std::string::npos) << err;
  EXPECT_FALSE(parseModelText(
      "dlc-model 1\nname m\nentry e\nend\nstate s f32 4\n", model, err));
  EXPECT_NE(err.find("'state' after the first 'entry'"), std::string::npos)
      << err;
}
} // namespace

namespace {
TEST(ModelTextTest, WorkspaceLines) {
  ModelDecl model;
  std::string err;
  ASSERT_TRUE(parseModelText("dlc-model 1\nname m\nparam w f32 4 zeros 0\n"
                             "entry a\nworkspace 100\nin x f32 4\nend\n"
                             "entry b\nworkspace 70\nend\n",
                             model, err))
      << err;
  EXPECT_EQ(model.entries[0].workspaceBytes, 100);
  EXPECT_EQ(model.entries[1].workspaceBytes, 70);
  EXPECT_EQ(model.workspaceBytes, 128); // the largest, rounded to 64
  EXPECT_FALSE(parseModelText("dlc-model 1\nname m\nentry a\nin x f32 4\n"
                              "workspace 100\nend\n",
                              model, err));
  EXPECT_EQ(err, "line 5: 'workspace' must follow 'entry' directly");
  EXPECT_FALSE(parseModelText(
      "dlc-model 1\nname m\nentry a\nworkspace -1\nend\n", model, err));
  EXPECT_EQ(err, "line 4: bad workspace size '-1': expected a byte count");
  EXPECT_FALSE(
      parseModelText("dlc-model 1\nname m\nworkspace 1\n", model, err));
  EXPECT_EQ(err, "line 3: 'workspace' outside an entry block");
}

TEST(ModelTextTest, CudaWorkspaceLines) {
  ModelDecl model;
  std::string err;
  // The CUDA plan may be larger or smaller than the CPU one; an entry
  // without the line uses its CPU size on CUDA too.
  ASSERT_TRUE(parseModelText("dlc-model 1\nname m\nparam w f32 4 zeros 0\n"
                             "entry a\nworkspace 100\ncuda_workspace 300\n"
                             "in x f32 4\nend\n"
                             "entry b\nworkspace 700\ncuda_workspace 20\nend\n"
                             "entry c\nworkspace 10\nend\n",
                             model, err))
      << err;
  EXPECT_EQ(model.entries[0].workspaceBytes, 100);
  EXPECT_EQ(model.entries[0].cudaWorkspaceBytes, 300);
  EXPECT_EQ(model.entries[1].cudaWorkspaceBytes, 20);
  EXPECT_EQ(model.entries[2].cudaWorkspaceBytes, 10);
  EXPECT_EQ(model.workspaceBytes, 704);     // CPU: 700 rounded to 64
  EXPECT_EQ(model.cudaWorkspaceBytes, 320); // CUDA: 300 rounded to 64
  EXPECT_FALSE(parseModelText("dlc-model 1\nname m\nentry a\n"
                              "cuda_workspace 100\nend\n",
                              model, err));
  EXPECT_EQ(err, "line 4: 'cuda_workspace' must follow 'workspace' directly");
  EXPECT_FALSE(parseModelText("dlc-model 1\nname m\nentry a\nworkspace 1\n"
                              "cuda_workspace x\nend\n",
                              model, err));
  EXPECT_EQ(err, "line 5: bad cuda_workspace size 'x': expected a byte count");
}
} // namespace
