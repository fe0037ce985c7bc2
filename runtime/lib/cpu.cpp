//===- cpu.cpp - the x86 features a model's CPU code needs
//-----------------===//
//
// An object compiled for an AVX-512 machine dies with SIGILL on one without
// it. dlc records the instruction-set features its CPU code was compiled
// for (the description's `cpu` line, docs/runtime-abi.md), and may add
// variants of the entries for richer CPUs (--cpu=portable); a model created
// on the CPU runs the best variant this CPU has the features of, else the
// base entries, or fails with the missing features named.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <cstdlib>
#include <set>
#include <string_view>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace dlc::rt;

namespace {

struct Feature {
  const char *name; ///< LLVM's name, as dlc writes it.
  unsigned leaf, subleaf;
  char reg; ///< 'b', 'c' or 'd' (or 'a').
  unsigned bit;
  /// The register state the OS must save: 0 none, 1 AVX (XCR0 bits 1-2),
  /// 2 AVX-512 (bits 1-2 and 5-7), 3 AMX (bits 17-18).
  int state;
};

const Feature kFeatures[] = {
    {"sse4.2", 1, 0, 'c', 20, 0},    {"avx", 1, 0, 'c', 28, 1},
    {"fma", 1, 0, 'c', 12, 1},       {"f16c", 1, 0, 'c', 29, 1},
    {"bmi", 7, 0, 'b', 3, 0},        {"avx2", 7, 0, 'b', 5, 1},
    {"bmi2", 7, 0, 'b', 8, 0},       {"avx512f", 7, 0, 'b', 16, 2},
    {"avx512dq", 7, 0, 'b', 17, 2},  {"avx512bw", 7, 0, 'b', 30, 2},
    {"avx512vl", 7, 0, 'b', 31, 2},  {"avx512vnni", 7, 0, 'c', 11, 2},
    {"avx512bf16", 7, 1, 'a', 5, 2}, {"avx512fp16", 7, 0, 'd', 23, 2},
    {"amx-bf16", 7, 0, 'd', 22, 3},
};

#if defined(__x86_64__)
uint64_t xcr0() {
  uint32_t lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}
#endif

/// The comma-separated names of `list`.
std::vector<std::string> splitFeatures(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos)
      end = list.size();
    out.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

/// The features of this CPU (and OS) among kFeatures, less those named in
/// DLC_CPU_FEATURES_DISABLE (comma-separated: a test's view of an older
/// CPU).
std::set<std::string> detectedFeatures() {
  std::set<std::string> have;
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return have;
  bool osxsave = (c >> 27) & 1;
  uint64_t xcr = osxsave ? xcr0() : 0;
  bool avxState = (xcr & 0x6) == 0x6;
  bool avx512State = avxState && (xcr & 0xe0) == 0xe0;
  bool amxState = (xcr & 0x60000) == 0x60000;
  for (const Feature &f : kFeatures) {
    if (!__get_cpuid_count(f.leaf, f.subleaf, &a, &b, &c, &d))
      continue;
    unsigned r = f.reg == 'a' ? a : f.reg == 'b' ? b : f.reg == 'c' ? c : d;
    bool state = f.state == 0   ? true
                 : f.state == 1 ? avxState
                 : f.state == 2 ? avx512State
                                : amxState;
    if (((r >> f.bit) & 1) && state)
      have.insert(f.name);
  }
#endif
  if (const char *off = std::getenv("DLC_CPU_FEATURES_DISABLE"))
    for (const std::string &f : splitFeatures(off))
      have.erase(f);
  return have;
}

} // namespace

bool dlc::rt::isKnownCpuFeature(std::string_view name) {
  for (const Feature &f : kFeatures)
    if (name == f.name)
      return true;
  return false;
}

bool dlc::rt::cpuHasFeature(std::string_view name) {
  return detectedFeatures().count(std::string(name)) != 0;
}

dlc_status dlc::rt::checkCpuVariants(const dlc_model_desc &desc,
                                     const ModelDecl &model) {
  if (desc.abi_version < 4 || desc.num_cpu_variants == 0)
    return DLC_OK;
  std::string prefix = "model " + quote(model.name) + ": ";
  if (desc.num_cpu_variants < 0 || !desc.cpu_variants)
    return fail(DLC_ERR_FORMAT, prefix + "num_cpu_variants is " +
                                    std::to_string(desc.num_cpu_variants) +
                                    (desc.cpu_variants ? ""
                                                       : " but cpu_variants "
                                                         "is NULL"));
  for (int32_t v = 0; v < desc.num_cpu_variants; ++v) {
    const dlc_cpu_variant &variant = desc.cpu_variants[v];
    std::string which = prefix + "CPU variant " + std::to_string(v);
    if (!variant.name || !variant.features || !variant.entries)
      return fail(DLC_ERR_FORMAT,
                  which + " lacks its name, features or entries");
    for (size_t e = 0; e < model.entries.size(); ++e)
      if (!variant.entries[e])
        return fail(DLC_ERR_FORMAT, which + ": entry function " +
                                        quote(model.entries[e].name) +
                                        " is NULL");
    for (const std::string &f : splitFeatures(variant.features))
      if (!isKnownCpuFeature(f))
        return fail(DLC_ERR_FORMAT,
                    which + " needs the unknown CPU feature " + quote(f));
  }
  return DLC_OK;
}

dlc_status dlc::rt::chooseCpuEntries(const dlc_model_desc &desc,
                                     const ModelDecl &model,
                                     const dlc_entry_fn *&entries,
                                     std::string &name) {
  std::set<std::string> have = detectedFeatures();
  auto missingOf = [&](const std::vector<std::string> &needed) {
    std::string missing;
    for (const std::string &f : needed)
      if (!have.count(f))
        missing += (missing.empty() ? "" : ", ") + f;
    return missing;
  };
  if (desc.abi_version >= 4)
    for (int32_t v = 0; v < desc.num_cpu_variants; ++v) {
      const dlc_cpu_variant &variant = desc.cpu_variants[v];
      if (missingOf(splitFeatures(variant.features)).empty()) {
        entries = variant.entries;
        name = variant.name;
        return DLC_OK;
      }
    }
  entries = desc.entries;
  name = desc.abi_version >= 4 && desc.cpu_name ? desc.cpu_name : "";
  std::string missing = missingOf(model.cpuFeatures);
  if (missing.empty())
    return DLC_OK;
  return fail(DLC_ERR_DEVICE_UNAVAILABLE,
              "model " + quote(model.name) +
                  " was compiled for a CPU with instructions this CPU "
                  "lacks: " +
                  missing +
                  "; recompile it for this CPU, or for every x86-64 CPU "
                  "since 2013 with dlc --cpu=portable (the default of -o) "
                  "or --cpu=x86-64-v3");
}
