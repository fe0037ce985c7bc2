//===- fuzz_model_descriptor.cpp - libFuzzer target: the model descriptor -===//
//
// Each input is the text of a compiled model's descriptor
// (docs/runtime-abi.md; `dlc_model_desc::text`, so it ends at its first NUL
// byte). parseModelText reads it; an accepted description must keep the
// arena's promises (params 64-byte aligned, in order, inside paramBytes).
// A description whose memory is small is then made into a model as
// dlc_model_create makes it (a descriptor with placeholder entry functions,
// which are never called, and a zero initial value for every `data` param),
// initialised, and described through the C API. A refusal must come with a
// message. A finding is a crash, a sanitizer report, a hang, a leak, or a
// broken promise (an abort with the reason on stderr).
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include "dlc/dlc_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace dlc::rt;

namespace {
[[noreturn]] void broken(const char *what) {
  std::fprintf(stderr, "fuzz_model_descriptor: %s\n", what);
  std::abort();
}

void neverCalled(void *const *) { broken("an entry function was called"); }

/// The largest model that is also created (the arena is zeroed, so each
/// run costs its size).
constexpr int64_t kMaxCreateBytes = int64_t(16) << 20;

void checkLayout(const ModelDecl &model) {
  int64_t end = 0;
  for (const ParamDecl &p : model.params) {
    if (p.offset % 64 != 0 || p.offset < end || p.nbytes < 0)
      broken("a param is misaligned or overlaps the one before");
    end = p.offset + p.nbytes;
  }
  if (model.paramBytes < end || model.paramBytes % 64 != 0 ||
      model.workspaceBytes < 0 || model.workspaceBytes % 64 != 0)
    broken("the arena does not hold the params and the workspace");
  // The packed params and the pack_weights entry come last, hidden.
  for (size_t i = 0; i < model.params.size(); ++i)
    if (model.params[i].isPacked != (i >= model.numParams))
      broken("a packed param before a param or state");
  for (size_t e = 0; e < model.entries.size(); ++e)
    if (model.entries[e].packWeights != (e >= model.numEntries))
      broken("the pack_weights entry is not the last");
  if (model.hasPackWeights() != (model.numParams < model.params.size()))
    broken("packed params without their entry, or the other way round");
}

void create(const std::string &text, const ModelDecl &decl) {
  int64_t largest = 0;
  for (const ParamDecl &p : decl.params)
    largest = std::max(largest, p.nbytes);
  std::vector<unsigned char> zeros(static_cast<size_t>(largest));
  std::vector<const void *> paramData;
  for (const ParamDecl &p : decl.params)
    paramData.push_back(p.init == InitKind::Data ? zeros.data() : nullptr);
  std::vector<dlc_entry_fn> entries(decl.entries.size(), neverCalled);

  dlc_model_desc desc{};
  desc.abi_version = DLC_ABI_VERSION;
  desc.text = text.c_str();
  desc.num_entries = static_cast<int32_t>(entries.size());
  desc.entries = entries.data();
  desc.param_data = paramData.data();
  dlc_model *m = nullptr;
  if (dlc_model_create_on(&desc, DLC_DEVICE_CPU, -1, &m) != DLC_OK) {
    if (!*dlc_last_error())
      broken("dlc_model_create refuses without a message");
    return;
  }
  if (dlc_model_init(m, 42) != DLC_OK)
    broken("dlc_model_init fails on a created model");
  if (dlc_model_num_params(m) != static_cast<int32_t>(decl.numParams) ||
      dlc_model_num_entries(m) != static_cast<int32_t>(decl.numEntries))
    broken("the C API shows packed params or the pack_weights entry");
  dlc_tensor_info info;
  for (int32_t i = 0; i < dlc_model_num_params(m); ++i)
    if (dlc_model_param_info(m, i, &info) != DLC_OK)
      broken("a param of a created model has no info");
  for (int32_t e = 0; e < dlc_model_num_entries(m); ++e) {
    if (dlc_model_find_entry(m, dlc_model_entry_name(m, e)) < 0)
      broken("an entry cannot be found by its name");
    for (int32_t i = 0; i < dlc_model_entry_num_inputs(m, e); ++i)
      if (dlc_model_entry_input_info(m, e, i, &info) != DLC_OK)
        broken("an input of an entry has no info");
    for (int32_t i = 0; i < dlc_model_entry_num_outputs(m, e); ++i)
      if (dlc_model_entry_output_info(m, e, i, &info) != DLC_OK)
        broken("an output of an entry has no info");
  }
  dlc_model_destroy(m);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // As the runtime sees it: a NUL-terminated string.
  std::string text(reinterpret_cast<const char *>(data), size);
  text.resize(text.find('\0') == std::string::npos ? text.size()
                                                   : text.find('\0'));
  ModelDecl decl;
  std::string err;
  if (!parseModelText(text, decl, err)) {
    if (err.empty())
      broken("a refusal without a message");
    return 0;
  }
  checkLayout(decl);
  if (decl.paramBytes <= kMaxCreateBytes &&
      decl.workspaceBytes <= kMaxCreateBytes)
    create(text, decl);
  return 0;
}
