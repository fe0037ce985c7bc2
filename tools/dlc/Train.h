//===- Train.h - dlc train: epochs over a data set -------------*- C++ -*-===//
//
//   [mpirun -np R] dlc train MODEL --data train.npz [--val val.npz]
//       --epochs N --batch-size B [--shuffle --seed S]
//       [--save-every-epoch DIR] [--resume DIR/epoch-K.safetensors]
//       [--log metrics.jsonl] [--data-parallel]
//
// The command-line twin of the Python package's Model.fit (docs/training.md,
// "dlc train"). The driver (dlc.cpp) parses the shared flags and compiles
// (lib/Driver's jitCompile); this header is the small interface between the
// two.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TOOLS_DLC_TRAIN_H
#define DLC_TOOLS_DLC_TRAIN_H

#include "dlc/Driver/Errors.h"
#include "dlc/Driver/Run.h"
#include "dlc/dlc_runtime.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace dlc::driver {

/// What `dlc train` takes from the driver's command line.
struct TrainSetup {
  std::string model;      ///< the model's path
  dlc_device_kind device; ///< --device
  std::string label;      ///< --label (default y)
  std::string loss;       ///< --loss; "" is the model's own
  int classDim;           ///< --class-dim
  bool labelTypeGiven;    ///< --label-type was given
  uint64_t seed;          ///< --seed: the shuffle's seed
  bool seedGiven;
  std::string weights; ///< --weights: initial parameters
  std::string save;    ///< --save: the final checkpoint
  int64_t batch;       ///< --batch (0 when not given)
  /// --data-parallel: the job this process is a rank of (else null); each
  /// global batch of --batch-size rows is split over its ranks, and
  /// `compile` takes one rank's share (0: the model's batch over the
  /// ranks).
  dlc_comm *comm = nullptr;
  /// Compiles the model and its training step at batch `batch` (0: as the
  /// model says), with class labels of `labelType` ("" : as the flags say);
  /// prints the diagnostics and returns null on failure.
  std::function<std::unique_ptr<JitModel>(int64_t batch,
                                          llvm::StringRef labelType)>
      compile;
};

//===-- Defined in Train.cpp ----------------------------------------------===//

/// The options only `dlc train` takes.
extern llvm::cl::OptionCategory trainCategory;
/// Whether any of them was given (they belong to `dlc train` only).
bool trainFlagGiven();
/// Runs `dlc train`; returns the exit status.
int trainMain(const TrainSetup &setup);

} // namespace dlc::driver

#endif // DLC_TOOLS_DLC_TRAIN_H
