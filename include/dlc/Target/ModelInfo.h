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

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

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
  std::string init; ///< uniform, zeros, ones
  double bound = 0;
  bool optimizerState = false; ///< role optimizer_state: a `state` line
};

struct EntryInfo {
  std::string name;   ///< user-facing: forward, train_step, ...
  std::string symbol; ///< the func.func symbol in the module
  std::vector<TensorInfo> inputs, outputs;
  int64_t multiplyAdds = 0;   ///< of one call
  int64_t activationBytes = 0; ///< sum of all intermediate tensors
};

struct TrainingInfo {
  bool hasLoss = false;
  std::string optimizer;  ///< "" when none, else sgd/adam/adamw
  int64_t stateCopies = 0; ///< optimizer state tensors per weight
};

struct ModelInfo {
  std::string name;
  std::vector<ParamInfo> params;
  std::vector<EntryInfo> entries;
  TrainingInfo training;

  /// Elements and bytes of the weights (optimizer state excluded).
  int64_t paramCount() const;
  int64_t paramBytes() const;
  /// The descriptor text of docs/runtime-abi.md.
  std::string descriptorText() const;
};

/// Reads the model facts from a module in the dlc dialect (before lowering).
/// Fails with a diagnostic on the module when an entry signature is not
/// representable (non-tensor arguments, unsupported element types).
mlir::FailureOr<ModelInfo> extractModelInfo(mlir::ModuleOp module);

/// `dlc --stats`: parameters, multiply-adds, training operations, memory.
void printStats(const ModelInfo &info, llvm::raw_ostream &os);

/// The C header of a compiled model (docs/c-api.md).
std::string generateHeader(const ModelInfo &info);

/// The C symbol of an entry point's kernel.
std::string entrySymbol(llvm::StringRef model, llvm::StringRef entry);

} // namespace mlir::dlc

#endif // DLC_TARGET_MODELINFO_H
