//===- Compile.h - reading, lowering and emitting a model -------*- C++ -*-===//
//
// The driver's path from a model file to an LLVM module: the model read
// (.dlc, .onnx or .mlir) and taken through the dlc-level pipeline
// (loadModel), then lowered for the CPU and CUDA (lowerToLLVM), and
// `dlc MODEL`'s ladder of stages on top of them (compileModel).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DRIVER_COMPILE_H
#define DLC_DRIVER_COMPILE_H

#include "dlc/Driver/Options.h"
#include "dlc/Target/ModelInfo.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class SourceMgr;
class TargetMachine;
} // namespace llvm

namespace dlc::driver {

/// A model in the dlc dialect and its facts.
struct Compiled {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::dlc::ModelInfo info;
};

/// The input language: -x, else by the file's extension.
std::string inputLanguage(const CompileOptions &options);

/// Diagnostics of a binary (ONNX) input: there is no source line to show,
/// so each is `FILE: error: MESSAGE`, and an op's location (a NameLoc of its
/// ONNX node) is named when the message does not already name it.
class OnnxDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  OnnxDiagnosticHandler(mlir::MLIRContext &ctx, llvm::StringRef modelPath);
};

/// Reads the model and runs the dlc-level pipeline, at batch
/// `batchOverride` (0: as the options say) and in `precisionOverride`
/// (none: as the options say); diagnostics go to the context's handler
/// (`sm` holds a text model's source).
std::optional<Compiled>
loadModel(mlir::MLIRContext &ctx, llvm::SourceMgr &sm,
          const CompileOptions &options, int64_t batchOverride = 0,
          std::optional<Precision> precisionOverride = std::nullopt);

/// The CPU code generator's choices for `tm` and the options.
mlir::dlc::CpuCodegenOptions codegenOptions(const CompileOptions &options,
                                            llvm::TargetMachine &tm);

/// Lowers a loaded model to an optimised LLVM module for `tm`: the CPU code
/// and, unless the target is x86, the CUDA code (a model the CUDA lowering
/// cannot take is a warning with --target=all); null after an error. With
/// `--cpu=portable`, `tm` is the base CPU (x86-64-v3) and the module also
/// holds the entries compiled for the richer CPUs of portableCpus(), each
/// workspace the largest of their plans.
std::unique_ptr<llvm::Module> lowerToLLVM(Compiled &c,
                                          const CompileOptions &options,
                                          llvm::LLVMContext &llctx,
                                          llvm::TargetMachine &tm,
                                          bool weightPlaceholders = false);

/// `dlc MODEL`: compiles the model down to the stage `options.emit` and
/// writes it (an object with its header by default); returns the exit
/// status.
int compileModel(mlir::MLIRContext &ctx, const CompileOptions &options);

} // namespace dlc::driver

#endif // DLC_DRIVER_COMPILE_H
