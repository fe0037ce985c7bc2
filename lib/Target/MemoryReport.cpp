//===- MemoryReport.cpp - dlc --memory-report -----------------------------===//
//
// The memory of a compiled model by category, from the model facts and the
// workspace sizes dlc-plan-memory computed. See docs/memory.md.
//
//===----------------------------------------------------------------------===//

#include "dlc/Target/ModelInfo.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dlc;

MemoryUse mlir::dlc::memoryUse(const ModelInfo &info, const EntryInfo &e) {
  MemoryUse u;
  u.weights = info.paramBytes();
  for (const ParamInfo &p : info.params)
    if (p.optimizerState)
      (p.shape.empty() ? u.stepCount : u.optimizerState) += p.bytes;
  u.packed = info.packedBytes();
  u.gradients = e.gradientBytes;
  u.savedActivations = e.savedActivationBytes;
  u.workspace = std::max<int64_t>(e.workspaceBytes, 0);
  u.io = e.ioBytes();
  u.buffers = e.bufferBytes;
  u.communication = e.commBytes;
  u.peak = info.persistentArenaBytes() + u.workspace + u.io + u.communication;
  return u;
}

namespace {
struct Row {
  const char *label, *json;
  int64_t MemoryUse::*field;
  const char *note;
};
const Row kRows[] = {
    {"weights", "weights", &MemoryUse::weights, ""},
    {"packed weights", "packed_weights", &MemoryUse::packed,
     "  (computed once, dlc-pack-weights)"},
    {"gradients", "gradients", &MemoryUse::gradients, "  (in the workspace)"},
    {"optimizer state", "optimizer_state", &MemoryUse::optimizerState,
     "  (moments)"},
    {"step count", "step_count", &MemoryUse::stepCount, ""},
    {"saved activations", "saved_activations", &MemoryUse::savedActivations,
     "  (in the workspace)"},
    {"workspace", "workspace", &MemoryUse::workspace,
     "  (peak of the temporaries)"},
    {"inputs + outputs", "inputs_outputs", &MemoryUse::io,
     "  (the caller's buffers)"},
    {"communication", "communication", &MemoryUse::communication,
     "  (staging of the largest bucket)"},
    {"peak", "peak", &MemoryUse::peak, ""},
};
} // namespace

void mlir::dlc::printMemoryReport(const ModelInfo &info, int64_t batch,
                                  bool json, raw_ostream &os, int64_t ranks) {
  if (json) {
    os << "{\"model\": \"" << info.name << "\", \"batch\": " << batch;
    if (ranks > 1)
      os << ", \"ranks\": " << ranks;
    os << ", \"model_bytes\": " << info.arenaBytes()
       << ", \"persistent_bytes\": " << info.persistentArenaBytes()
       << ", \"workspace_bytes\": " << info.workspaceBytes()
       << ", \"entries\": {";
    for (auto [i, e] : llvm::enumerate(info.entries)) {
      MemoryUse u = memoryUse(info, e);
      os << (i ? ", " : "") << "\"" << e.name << "\": {";
      for (auto [k, row] : llvm::enumerate(kRows))
        if ((row.field != &MemoryUse::communication || e.usesComm) &&
            (row.field != &MemoryUse::packed || u.packed))
          os << (k ? ", " : "") << "\"" << row.json << "\": " << u.*row.field;
      os << ", \"buffers_without_reuse\": " << u.buffers;
      if (e.cudaWorkspaceBytes >= 0)
        os << ", \"cuda_workspace\": " << e.cudaWorkspaceBytes;
      os << "}";
    }
    os << "}}\n";
    return;
  }
  os << "memory plan of model " << info.name << " (batch " << batch;
  if (ranks > 1)
    os << " per rank, " << ranks << " ranks: global batch " << batch * ranks
       << "), bytes per rank\n";
  else
    os << "), bytes\n";
  for (const EntryInfo &e : info.entries) {
    MemoryUse u = memoryUse(info, e);
    os << "  " << e.name << "\n";
    for (const Row &row : kRows) {
      int64_t v = u.*row.field;
      if ((row.field == &MemoryUse::communication && !e.usesComm) ||
          (row.field == &MemoryUse::packed && !v))
        continue;
      std::string n = withCommas(v);
      os << "    " << llvm::left_justify(row.label, 18)
         << llvm::right_justify(n, 16) << "  "
         << llvm::left_justify(humanBytes(v), 10) << row.note << "\n";
    }
    if (u.workspace > 0)
      os << "    (the workspace's " << withCommas(u.buffers)
         << " bytes of buffers share " << withCommas(u.workspace)
         << ": reuse factor "
         << llvm::format("%.2f", double(u.buffers) / u.workspace) << ")\n";
    if (e.cudaWorkspaceBytes >= 0)
      os << "    (on CUDA the workspace is " << withCommas(e.cudaWorkspaceBytes)
         << " bytes, in device memory)\n";
  }
  os << "  the model allocates " << withCommas(info.arenaBytes()) << " bytes ("
     << humanBytes(info.arenaBytes())
     << ") once, at creation: params and optimizer state, then one "
        "workspace for the largest entry\n";
}

void mlir::dlc::printPrecisionSaving(const ModelInfo &info,
                                     const ModelInfo &fp32, StringRef precision,
                                     raw_ostream &os) {
  os << "against fp32 (" << precision << " activations, fp32 master "
     << "weights), bytes\n";
  // The 16-bit copies dlc-pack-weights made once, outside the workspace.
  int64_t packedCopies = 0;
  for (const ParamInfo &p : info.params)
    if (p.packed && (p.dtype == "bf16" || p.dtype == "f16"))
      packedCopies += p.bytes;
  for (const EntryInfo &e : info.entries) {
    const EntryInfo *f = nullptr;
    for (const EntryInfo &g : fp32.entries)
      if (g.name == e.name)
        f = &g;
    if (!f)
      continue;
    MemoryUse u = memoryUse(info, e), v = memoryUse(fp32, *f);
    os << "  " << e.name << ": " << precision << " weight copies "
       << withCommas(e.weightCopyBytes);
    if (e.packedCastBytes)
      os << " (" << withCommas(e.packedCastBytes)
         << " bytes of 16-bit casts rounded in the matmul packing, not stored)";
    if (packedCopies)
      os << ", and " << withCommas(packedCopies)
         << " packed once (dlc-pack-weights)";
    os << "; saved activations " << withCommas(u.savedActivations)
       << " (fp32: " << withCommas(v.savedActivations) << "); workspace "
       << withCommas(u.workspace) << " (fp32: " << withCommas(v.workspace)
       << "); peak " << withCommas(u.peak) << " (fp32: " << withCommas(v.peak)
       << ", " << (v.peak >= u.peak ? "saves " : "costs ")
       << humanBytes(v.peak >= u.peak ? v.peak - u.peak : u.peak - v.peak)
       << ")\n";
  }
}
