//===- MemoryBudget.h - a model's memory against a budget -------*- C++ -*-===//
//
// A model's memory plan must fit the device: its parameters, optimizer
// state and largest workspace, and that entry's inputs and outputs. Over
// the budget (--device-memory, or this machine's physical memory) the
// check is an error that says what takes the memory and what would fit:
// the largest batch (found by planning the model again, by bisection),
// 16-bit activations, evaluation without the training step.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DRIVER_MEMORYBUDGET_H
#define DLC_DRIVER_MEMORYBUDGET_H

#include "dlc/Driver/Compile.h"

#include <optional>

namespace dlc::driver {

/// "8GiB", "500MB", "1.5G", "1000000" -> bytes; K/M/G/T and KiB/MiB/GiB/TiB
/// are powers of 1024, KB/MB/GB/TB powers of 1000.
std::optional<int64_t> parseSize(llvm::StringRef text);

/// The batch of a model: dimension 0 of the first input that has one.
int64_t batchOf(const mlir::dlc::ModelInfo &info);

/// The model planned again at batch `batch` (0: as the options say) and
/// precision `precision` (none: as the options say), lowered as far as the
/// memory plan, without diagnostics.
std::optional<mlir::dlc::ModelInfo>
plannedAt(mlir::MLIRContext &ctx, llvm::TargetMachine &tm,
          const CompileOptions &options, int64_t batch,
          std::optional<Precision> precision);

/// Checks the plan of `c` against `options.budget`; over it, explains what
/// does not fit and what would (an error with notes at the model), and
/// fails.
mlir::LogicalResult checkBudget(mlir::MLIRContext &ctx, llvm::TargetMachine &tm,
                                Compiled &c, const CompileOptions &options);

} // namespace dlc::driver

#endif // DLC_DRIVER_MEMORYBUDGET_H
