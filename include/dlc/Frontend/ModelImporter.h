//===- ModelImporter.h - .dlc model description to MLIR ---------*- C++ -*-===//
//
// Entry point of the frontend: reads a `.dlc` model description (see
// docs/model-format.md) and builds a module in the `dlc` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_MODELIMPORTER_H
#define DLC_FRONTEND_MODELIMPORTER_H

#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <optional>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace dlc {

struct ImportOptions {
  /// When set (`dlc --batch N`), replaces dimension 0 of every `input` and
  /// `label` of rank 1 or more; every other shape follows from it.
  std::optional<int64_t> batch;
};

/// Parses the .dlc buffer that is the main file of `sourceMgr` and builds a
/// module in the dlc dialect: one `dlc.parameter` per model parameter, the
/// `@forward` entry and, when the model has a `loss` statement, `@loss`.
///
/// Errors are reported through the context's diagnostic engine at
/// FileLineColLoc locations of the offending token, each followed by a note
/// that starts with "hint: ". Returns null on any error.
mlir::OwningOpRef<mlir::ModuleOp> importDlcModel(llvm::SourceMgr &sourceMgr,
                                                 mlir::MLIRContext &ctx,
                                                 const ImportOptions &options);

} // namespace dlc

#endif // DLC_FRONTEND_MODELIMPORTER_H
