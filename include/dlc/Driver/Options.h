//===- Options.h - what the driver's entry points take ----------*- C++ -*-===//
//
// The options of `dlc MODEL`, `dlc run` and the memory budget as plain
// structs. The command-line driver (tools/dlc) fills them from its flags;
// other callers (a Python package, a distributed launcher) fill them
// themselves: nothing in lib/Driver reads a command-line option.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DRIVER_OPTIONS_H
#define DLC_DRIVER_OPTIONS_H

#include "dlc/Target/Pipeline.h"
#include "dlc/dlc_runtime.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dlc::driver {

/// The stage `dlc MODEL` stops after (--emit).
enum class Emit {
  Dlc,
  DlcPlaced,
  Linalg,
  LlvmDialect,
  Llvm,
  Asm,
  Ptx,
  Obj,
  Header
};
/// The code generated (--target): x86 and CUDA in one object, or one.
enum class CodeTarget { All, X86, Nvptx };
/// The precision of matmuls and linear layers (--precision).
enum class Precision { FP32, BF16, FP16 };

/// The stage's name on the command line ("llvm-dialect").
llvm::StringRef emitName(Emit emit);
/// The precision's name on the command line and in the pipeline ("bf16").
llvm::StringRef precisionName(Precision precision);

/// The memory budget a model's plan must fit.
struct MemoryBudgetOptions {
  /// The budget as the user wrote it (--device-memory): "8GiB", "500MB",
  /// "1.5G" or a number of bytes; empty: this machine's physical memory.
  std::string deviceMemory;
};

/// How a model is read and lowered, for `dlc MODEL`, `dlc run` and
/// `dlc train` alike; the last fields are `dlc MODEL`'s own.
struct CompileOptions {
  std::string model;    ///< the model's path ("-": standard input)
  std::string language; ///< -x: dlc, onnx or mlir; empty: by extension
  int64_t batch = 0;    ///< --batch: dimension 0 of the inputs (0: as is)
  /// --data-parallel=N: compiled for one of N ranks, each with batch / N
  /// rows (1: one process; dlc run gives the rows itself).
  int64_t ranks = 1;
  /// --overlap-comm: each gradient bucket is reduced on the runtime's
  /// communication thread while the backward pass goes on.
  bool overlapComm = false;
  /// --shard-optimizer-state: ZeRO stage 1 over the `ranks` ranks.
  bool shardOptimizerState = false;
  std::vector<std::string> inputShapes; ///< --input-shape NAME=D0,D1,...
  /// --train: also compile the training step, with the options that
  /// trainOptions returns; it is called once the model is imported (its
  /// errors come after the model's), with the class labels' element type
  /// when the data says it (`labelType`), and returns nothing after
  /// printing an error.
  bool train = false;
  std::function<std::optional<mlir::dlc::TrainOptions>(
      llvm::StringRef labelType)>
      trainOptions;
  /// The class labels' element type (i64 or i32) that the data says;
  /// empty: as trainOptions decides.
  std::string labelType;
  Precision precision = Precision::FP32;
  /// --cpu: native, portable (one object for every x86-64 CPU since 2013:
  /// docs/runtime-abi.md), x86-64-v3, x86-64-v4, an LLVM CPU, each with
  /// optional "+feature"s.
  std::string cpu = "native";
  CodeTarget target = CodeTarget::All;
  unsigned vectorBits = 0; ///< --vector-bits (0: the CPU's)
  /// --register-tile {M, N} and --cache-tile {M, N, K}; empty: the CPU
  /// code generator's choice.
  llvm::SmallVector<int64_t> registerTile;
  llvm::SmallVector<int64_t> cacheTile;
  /// --cuda-emulate: the CUDA lowering as the CPU code (kernels as loops);
  /// --cuda-emulate-reverse: their threads last to first.
  bool cudaEmulate = false;
  bool cudaEmulateReverse = false;
  int64_t cudaSmallGemmFmas = -1; ///< --cuda-small-gemm-fmas (-1: default)
  /// --pack-weights-mib: the most MiB of weights re-laid out once for the
  /// entries that only read them (dlc-pack-weights); 0: none. Not with
  /// --train.
  int64_t packWeightsMiB = 64;
  MemoryBudgetOptions budget;

  // `dlc MODEL` only.
  Emit emit = Emit::Obj;
  std::string output; ///< -o (default: <model>.o; "-": standard output)
  bool stats = false; ///< --stats: print the model's facts instead
  /// --memory-report's format, "", "text" or "json"; none: no report.
  std::optional<std::string> memoryReport;
};

/// `dlc run`: one entry point of a model compiled in memory, on this
/// machine.
struct RunOptions {
  CompileOptions compile;
  dlc_device_kind device = DLC_DEVICE_AUTO; ///< --device
  std::string weights;                      ///< --weights FILE.safetensors
  uint64_t seed = 0;                        ///< --seed, without --weights
  std::vector<std::string> inputs;          ///< --input NAME=FILE | FILE
  std::vector<std::string> outputs;         ///< --output FILE | NAME=FILE
  /// --entry; none: forward, or train_step with --train.
  std::optional<std::string> entry;
  std::optional<unsigned> steps; ///< --steps (--train; default 1)
  bool printLoss = false;        ///< --print-loss
  std::string save;              ///< --save FILE.safetensors at the end
  unsigned benchmark = 0;        ///< --benchmark N
  // The training flags `dlc run` reads itself.
  std::string loss;            ///< --loss ("" : the model's own)
  std::string label = "y";     ///< --label
  bool labelTypeGiven = false; ///< --label-type was given
  int classDim = 1;            ///< --class-dim
  /// --data-parallel: one rank of an MPI job (docs/distributed.md): the
  /// step is compiled for this rank's share of the batch in the input
  /// files, and rank 0 prints, writes and saves.
  bool dataParallel = false;
};

} // namespace dlc::driver

#endif // DLC_DRIVER_OPTIONS_H
