//===- CpuVariantsTest.cpp - the CPU variants of one object
//----------------===//
//
// An object compiled with --cpu=portable carries its entries for several
// CPUs (dlc_model_desc::cpu_variants, ABI version 4); the runtime runs the
// first whose features the CPU has, else the base entries, whose features
// (the `cpu` line) it must have. DLC_CPU_FEATURES_DISABLE narrows the
// runtime's view of the CPU, as on an older one.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <string>

using namespace dlc::test;

namespace {

const char *const kText = "dlc-model 2\n"
                          "name variants\n"
                          "entry which\n"
                          "out v i32 -\n"
                          "end\n";
// The base entries need AVX2 (as x86-64-v3 does).
const char *const kTextAvx2 = "dlc-model 2\n"
                              "name variants\n"
                              "cpu avx2\n"
                              "entry which\n"
                              "out v i32 -\n"
                              "end\n";

// Each entry writes which compilation ran.
void base(void *const *args) { *static_cast<int32_t *>(args[0]) = 0; }
void first(void *const *args) { *static_cast<int32_t *>(args[0]) = 1; }
void second(void *const *args) { *static_cast<int32_t *>(args[0]) = 2; }
const dlc_entry_fn kBase[] = {base};
const dlc_entry_fn kFirst[] = {first};
const dlc_entry_fn kSecond[] = {second};

// Best first: AVX-512 with bf16 dot products, then SSE4.2, which every
// x86-64 CPU of the project's machines has.
const dlc_cpu_variant kVariants[] = {
    {"rich", "avx512f,avx512bf16", kFirst},
    {"plain", "sse4.2", kSecond},
};

dlc_model_desc desc(const char *text = kText,
                    const dlc_cpu_variant *variants = kVariants,
                    int32_t count = 2) {
  return {DLC_ABI_VERSION, text,       1,     kBase,   nullptr,
          nullptr,         "base-cpu", count, variants};
}

/// Hides `features` from the runtime's view of the CPU for a scope.
struct DisabledFeatures : EnvGuard {
  explicit DisabledFeatures(const char *features)
      : EnvGuard("DLC_CPU_FEATURES_DISABLE", std::string(features)) {}
};

/// Which compilation the model runs, and its name.
std::pair<int32_t, std::string> ran(const dlc_model_desc &d) {
  ModelPtr m = createModel(d, DLC_DEVICE_CPU);
  if (!m)
    return {-1, ""};
  int32_t v = -1;
  void *outputs[] = {&v};
  EXPECT_EQ(dlc_model_run(m.get(), 0, nullptr, outputs), DLC_OK)
      << dlc_last_error();
  return {v, dlc_model_cpu_name(m.get())};
}

#if defined(__x86_64__)
TEST(CpuVariantsTest, RunsTheFirstVariantTheCpuHas) {
  DisabledFeatures off("avx512bf16");
  EXPECT_EQ(ran(desc()), std::make_pair(2, std::string("plain")));
}

TEST(CpuVariantsTest, FallsBackToTheBaseEntries) {
  DisabledFeatures off("avx512f,sse4.2");
  EXPECT_EQ(ran(desc()), std::make_pair(0, std::string("base-cpu")));
}

TEST(CpuVariantsTest, ObjectWithoutVariantsNamesItsCpu) {
  EXPECT_EQ(ran(desc(kText, nullptr, 0)),
            std::make_pair(0, std::string("base-cpu")));
}

TEST(CpuVariantsTest, NoCompilationFitsNamesTheBaseFeatures) {
  DisabledFeatures off("avx512f,sse4.2,avx2");
  dlc_model_desc d = desc(kTextAvx2);
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&d, DLC_DEVICE_CPU, &m),
            DLC_ERR_DEVICE_UNAVAILABLE);
  EXPECT_EQ(m, nullptr);
  EXPECT_TRUE(errorContains("instructions this CPU lacks: avx2;"))
      << dlc_last_error();
}
#endif

TEST(CpuVariantsTest, VersionThreeHasNoCpuName) {
  dlc_model_desc d = desc(kText, nullptr, 0);
  d.abi_version = 3;
  d.cpu_name = "ignored";
  ModelPtr m = createModel(d, DLC_DEVICE_CPU);
  ASSERT_TRUE(m);
  EXPECT_STREQ(dlc_model_cpu_name(m.get()), "");
  EXPECT_EQ(dlc_model_cpu_name(nullptr), nullptr);
}

TEST(CpuVariantsTest, MalformedVariantsAreFormatErrors) {
  const dlc_entry_fn nullEntry[] = {nullptr};
  const dlc_cpu_variant unknown[] = {{"x", "avx512f,warp-drive", kFirst}};
  const dlc_cpu_variant noEntry[] = {{"x", "avx512f", nullEntry}};
  const dlc_cpu_variant noName[] = {{nullptr, "avx512f", kFirst}};
  struct Case {
    dlc_model_desc d;
    const char *message;
  } cases[] = {
      {desc(kText, kVariants, -1), "num_cpu_variants is -1"},
      {desc(kText, nullptr, 1), "cpu_variants is NULL"},
      {desc(kText, unknown, 1), "unknown CPU feature 'warp-drive'"},
      {desc(kText, noEntry, 1), "entry function 'which' is NULL"},
      {desc(kText, noName, 1), "lacks its name, features or entries"},
  };
  for (const Case &c : cases) {
    dlc_model *m = nullptr;
    EXPECT_EQ(dlc_model_create(&c.d, DLC_DEVICE_CPU, &m), DLC_ERR_FORMAT)
        << c.message;
    EXPECT_TRUE(errorContains(c.message)) << dlc_last_error();
    dlc_model_destroy(m);
  }
}

} // namespace
