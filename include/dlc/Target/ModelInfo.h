//===- ModelInfo.h - what a compiled model exposes --------------*- C++ -*-===//
//
// The model-level facts every back end needs, read once from the module in
// the dlc dialect: parameters, entry points with their named inputs and
// outputs, and the work one forward pass does. The descriptor text in the
// object, the generated header and `dlc --stats` are all printed from it.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TARGET_MODELINFO_H
#define DLC_TARGET_MODELINFO_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::dlc {

struct TensorInfo {
  std::string name;
  std::string dtype; ///< f32, f16, bf16, f64, i64, i32, i8, u8
  llvm::SmallVector<int64_t> shape;
  int64_t numel = 1;
  int64_t bytes = 0;
};

struct ParamInfo : TensorInfo {
  std::string init; ///< uniform, zeros, ones, data
  /// init `data`: the initial value, embedded in the object.
  mlir::ElementsAttr value;
  double bound = 0;
  bool optimizerState = false; ///< role optimizer_state: a `state` line
  /// role packed (dlc-pack-weights): a `packed` line, computed by the
  /// pack_weights entry, never loaded or saved.
  bool packed = false;
  /// A sharded optimizer's state (dlc-shard-optimizer-state): the rank's
  /// shard of a tensor of shape `shardOf` over `shardRanks` ranks (0: whole).
  llvm::SmallVector<int64_t> shardOf;
  int64_t shardRanks = 0;
};

struct EntryInfo {
  std::string name;   ///< user-facing: forward, train_step, ...
  std::string symbol; ///< the func.func symbol in the module
  std::vector<TensorInfo> inputs, outputs;
  int64_t multiplyAdds = 0;    ///< of one call
  int64_t activationBytes = 0; ///< sum of all intermediate tensors
  /// The planned workspace of one call (dlc-plan-memory); -1 until the
  /// module has been lowered.
  int64_t workspaceBytes = -1;
  /// The same for the entry's CUDA code, when the object has it; -1 else.
  int64_t cudaWorkspaceBytes = -1;
  /// The sum of the sizes of the workspace's buffers (no reuse).
  int64_t bufferBytes = 0;
  /// Training step: the parameters' gradients, and the forward values the
  /// backward pass reads (both live in the workspace). 0 for other entries.
  int64_t gradientBytes = 0;
  int64_t savedActivationBytes = 0;
  /// Mixed precision: the 16-bit copies of the weights (autocast's casts).
  int64_t weightCopyBytes = 0;
  /// Of the 16-bit casts of weights and inputs, the bytes that only matmuls
  /// read, rounded inside their packing instead of stored (CPU code).
  int64_t packedCastBytes = 0;
  /// Whether a call writes the params (a training step): calls of the
  /// other entries may run at once (the descriptor's `concurrent` line).
  bool writesParams = false;
  /// Whether it reduces over the ranks of a data-parallel job
  /// (dlc.all_reduce; the descriptor's `communicator` line).
  bool usesComm = false;
  /// The runtime's staging buffer for its collectives, in bytes, not in
  /// the workspace: for an all-reduce, the sum of the small buffers
  /// (DLC_COMM_PACK_ELEMENTS) of a bucket of several (the others are
  /// reduced in place); for a reduce-scatter or all-gather over N ranks,
  /// (N + 1) times the shards of the same small tensors of a bucket of
  /// several. The largest bucket's; with reduce-scatters, plus N times
  /// DLC_COMM_SHARD_PIECE values (one piece of every rank's shard).
  int64_t commBytes = 0;
  int64_t ioBytes() const;
};

struct TrainingInfo {
  bool hasLoss = false;
  std::string optimizer;   ///< "" when none, else sgd/adam/adamw
  int64_t stateCopies = 0; ///< optimizer state tensors per weight
};

struct ModelInfo {
  std::string name;
  std::vector<ParamInfo> params;
  std::vector<EntryInfo> entries;
  /// The entry that computes the packed params (dlc-pack-weights), which
  /// the runtime runs itself: the descriptor's last entry, not one of
  /// `entries`.
  std::optional<EntryInfo> packWeights;
  TrainingInfo training;

  /// The entries of the object's table, in order: `entries`, then
  /// pack_weights.
  llvm::SmallVector<EntryInfo *> tableEntries();
  llvm::SmallVector<const EntryInfo *> tableEntries() const;

  /// Elements and bytes of the weights (optimizer state excluded).
  int64_t paramCount() const;
  int64_t paramBytes() const;
  /// Bytes of the optimizer state.
  int64_t stateBytes() const;
  /// Bytes of the packed params.
  int64_t packedBytes() const;
  /// The model's memory as libdlcrt lays it out: every param and state
  /// tensor at a 64-byte-aligned offset, then one workspace as large as
  /// the largest entry's (docs/memory.md).
  int64_t persistentArenaBytes() const;
  int64_t workspaceBytes() const;
  int64_t arenaBytes() const {
    return persistentArenaBytes() + workspaceBytes();
  }
  /// The descriptor text of docs/runtime-abi.md; `cpuFeatures`, the x86
  /// features the CPU code needs, become its `cpu` line.
  std::string
  descriptorText(llvm::ArrayRef<std::string> cpuFeatures = {}) const;
};

/// Reads the model facts from a module in the dlc dialect (before lowering).
/// Fails with a diagnostic on the module when an entry signature is not
/// representable (non-tensor arguments, unsupported element types).
mlir::FailureOr<ModelInfo> extractModelInfo(mlir::ModuleOp module);

/// Reads the workspace size dlc-plan-memory gave each entry kernel of a
/// lowered module into `info`.
void collectWorkspaceSizes(mlir::ModuleOp module, ModelInfo &info);

/// One entry's memory, by category, in bytes (docs/memory.md).
struct MemoryUse {
  int64_t weights = 0;
  int64_t optimizerState = 0; ///< moments: per weight, 2 (Adam) or 1
  int64_t packed = 0;         ///< weights re-laid out once (dlc-pack-weights)
  int64_t stepCount = 0;      ///< the optimizer's step counter
  int64_t gradients = 0, savedActivations = 0; ///< inside the workspace
  int64_t workspace = 0; ///< the entry's planned temporaries
  int64_t io = 0;        ///< inputs and outputs, in the caller's buffers
  int64_t buffers = 0;   ///< the workspace's buffers without any reuse
  /// Data parallelism: the runtime's staging buffer of the largest bucket.
  int64_t communication = 0;
  /// The model's memory while the entry runs: its persistent arena (params
  /// and optimizer state, aligned), the workspace, and the caller's I/O.
  int64_t peak = 0;
};
MemoryUse memoryUse(const ModelInfo &info, const EntryInfo &entry);

/// `dlc --memory-report`: the memory plan of every entry, as text or JSON;
/// with `ranks` > 1, of one rank of a data-parallel job (`batch` is its
/// share).
/// Needs the workspace sizes (a lowered module).
void printMemoryReport(const ModelInfo &info, int64_t batch, bool json,
                       llvm::raw_ostream &os, int64_t ranks = 1);

/// `--memory-report --precision=bf16|fp16`: per entry, the 16-bit copies
/// of the weights and the saved activations and peak against `fp32`, the
/// same model planned in fp32.
void printPrecisionSaving(const ModelInfo &info, const ModelInfo &fp32,
                          llvm::StringRef precision, llvm::raw_ostream &os);

/// 13008896 -> "13,008,896"; 814120 -> "795.0 KiB".
std::string withCommas(int64_t v);
std::string humanBytes(int64_t bytes);

/// `dlc --stats`: parameters, multiply-adds, training operations, memory.
void printStats(const ModelInfo &info, llvm::raw_ostream &os);

/// The C header of a compiled model (docs/c-api.md).
std::string generateHeader(const ModelInfo &info);

} // namespace mlir::dlc

#endif // DLC_TARGET_MODELINFO_H
