//===- Run.h - dlc run: a model compiled in memory and called ---*- C++ -*-===//
//
// `dlc run` compiles a model in memory (ORC LLJIT) for this machine and
// calls one entry point through libdlcrt, exactly as a linked program
// would: inputs from .npy or .safetensors files, outputs to files or
// printed, training steps, a benchmark. jitCompile and the small helpers
// below are shared with `dlc train`.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DRIVER_RUN_H
#define DLC_DRIVER_RUN_H

#include "dlc/Driver/Options.h"
#include "dlc/dlc_runtime.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace dlc::driver {

/// A model compiled in memory: the JIT holds its code and its descriptor.
/// Destroy every dlc_model made from `desc` before this.
struct JitModel {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  const dlc_model_desc *desc = nullptr;
  ~JitModel();
};

/// Compiles the model in memory (JIT) to run on this machine on `device`,
/// at batch `batch` (0: as the options say), with class labels of
/// `labelType` ("": as the options say); diagnostics are printed, and null
/// is returned after an error.
std::unique_ptr<JitModel> jitCompile(mlir::MLIRContext &ctx,
                                     CompileOptions options,
                                     dlc_device_kind device, int64_t batch = 0,
                                     llvm::StringRef labelType = "");

/// `dlc run`; returns the exit status.
int runModel(mlir::MLIRContext &ctx, const RunOptions &options);

/// --data-parallel (`dlc run`, `dlc train`): joins the MPI job the process
/// was started in, checks a given --data-parallel=N (`ranksGiven`; 0: none)
/// against the job's size, and runs `body` with the communicator. A
/// failure on a job of several ranks ends the job (the other ranks would
/// wait for this one). Returns the exit status.
int runInJob(int64_t ranksGiven, llvm::StringRef command,
             llvm::function_ref<int(dlc_comm *)> body);

/// Creates a model of a rank of `comm`'s job (none: a process alone) on
/// `device`, on the GPU of its local rank when on CUDA, and gives it the
/// communicator; in a job, every rank must run on the same kind of device
/// (NCCL and MPI ranks cannot be mixed). Errors are printed; returns the
/// exit status.
int createRankModel(const dlc_model_desc *desc, dlc_device_kind device,
                    dlc_comm *comm, dlc_model **out);

/// "f32[16, 10]".
std::string describe(const dlc_tensor_info &t);
/// Whether `name`, as a user wrote it, names the model's input `modelName`:
/// the model's (C identifier) name or the ONNX graph's own name.
bool namesInput(llvm::StringRef name, llvm::StringRef modelName);
/// The class-label check of cross-entropy training: every label of
/// `count` `dtype` values at `data` (the input `label`) is a class of the
/// forward output of `m` (or -100). A label out of range is an error
/// (printed); returns whether all are in range.
bool checkClassLabels(dlc_model *m, llvm::StringRef label, int classDim,
                      dlc_dtype dtype, const void *data, int64_t count);

} // namespace dlc::driver

#endif // DLC_DRIVER_RUN_H
