//===- Pipeline.h - the compilation pipeline --------------------*- C++ -*-===//
//
// The stages of `dlc`, each a function so that the driver can stop after any
// of them (`--emit=`): dlc-level optimisation, lowering to linalg with the
// runtime calling convention, CPU code generation down to the LLVM dialect,
// and translation to an LLVM module that carries the model descriptor.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TARGET_PIPELINE_H
#define DLC_TARGET_PIPELINE_H

#include "dlc/Dialect/Dlc/IR/DlcContracts.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::dlc {
struct ModelInfo;

/// The training step: dlc-build-train-step's options, typed (the loss,
/// label, optimizer and hyperparameters; -1 and "" keep the model's own).
struct TrainOptions {
  DlcBuildTrainStepPassOptions step;
  /// fp16 training: the loss scale a fresh model starts from.
  double initLossScale = 65536.0;
  /// Data-parallel training: dlc-insert-gradient-allreduce, with its
  /// options.
  bool dataParallel = false;
  DlcInsertGradientAllreducePassOptions allreduce;
  /// ZeRO stage 1 (--shard-optimizer-state): dlc-shard-optimizer-state
  /// after the all-reduce, when its `ranks` is set (> 0).
  DlcShardOptimizerStatePassOptions shard;
};

/// Adds the dlc-level pipeline to `pm`: inlining of helper calls,
/// canonicalisation, dlc-raise-decompositions; with `precision` bf16 or
/// fp16, dlc-insert-autocast; with `train`, dlc-build-train-step (and, in
/// fp16, dlc-insert-loss-scaling; data-parallel, dlc-insert-gradient-
/// allreduce and, sharded, dlc-shard-optimizer-state); then
/// dlc-fuse-layers.
void buildDlcPipeline(mlir::OpPassManager &pm, llvm::StringRef precision,
                      const TrainOptions *train = nullptr);

/// Runs buildDlcPipeline on `module`.
mlir::LogicalResult runDlcPipeline(mlir::ModuleOp module,
                                   const TrainOptions *train = nullptr,
                                   llvm::StringRef precision = "fp32");

/// dlc-pack-weights: the weights that the entries which only read them
/// re-lay out become packed parameters, within `maxMiB` MiB.
mlir::LogicalResult runPackWeightsPipeline(mlir::ModuleOp module,
                                           int64_t maxMiB);

/// dlc-place-devices: every entry on `device` (cpu or cuda), transfers at
/// the host boundary.
mlir::LogicalResult runPlacementPipeline(mlir::ModuleOp module,
                                         llvm::StringRef device);

/// Places the entries on `device` (runPlacementPipeline), drops what no
/// entry needs (the kept loss function), names the entry kernels after the
/// module's model (dlc-prepare-entries), lowers to linalg on tensors and
/// applies the entry ABI.
mlir::LogicalResult runLinalgPipeline(mlir::ModuleOp module,
                                      llvm::StringRef device = "cpu");

/// What the CPU code generator needs to know about the target.
struct CpuCodegenOptions {
  unsigned vectorBits = 512; ///< widest vector register (256: AVX2)
  /// {M, N} overrides the matmul register tile; empty: the pass's choice.
  llvm::SmallVector<int64_t> registerTile;
  /// {M, N, K} overrides the cache tile bounds; empty: the pass's choice.
  llvm::SmallVector<int64_t> cacheTile;
  /// The target has AVX512_BF16: bf16 matmuls run on vdpbf16ps.
  bool bf16Dot = false;
  /// Data parallelism: buckets reduced on the runtime's communication
  /// thread while the backward pass goes on (dlc-lower-collectives).
  bool overlapComm = false;
};

/// Adds the placement and lowering to linalg of runLinalgPipeline to `pm`.
void buildLinalgPipeline(mlir::OpPassManager &pm, llvm::StringRef device);

/// Adds runMemoryPlanPipeline's passes to `pm`.
void buildMemoryPlanPipeline(mlir::OpPassManager &pm,
                             const CpuCodegenOptions &options);

/// Adds runCpuCodegenPipeline's passes to `pm`: from linalg on tensors to
/// the LLVM dialect.
void buildCpuCodegenPipeline(mlir::OpPassManager &pm,
                             const CpuCodegenOptions &options);

/// Elementwise fusion, bufferization, matmul tiling and dlc-plan-memory:
/// the first part of runCpuCodegenPipeline, enough to know every entry's
/// workspace.
mlir::LogicalResult runMemoryPlanPipeline(mlir::ModuleOp module,
                                          const CpuCodegenOptions &options);

/// Fusion, bufferization, tiling and vectorization, the memory plan,
/// lowering to the LLVM dialect.
mlir::LogicalResult runCpuCodegenPipeline(mlir::ModuleOp module,
                                          const CpuCodegenOptions &options);

/// The CUDA code of a model: the PTX of every kernel and their names, in
/// the order of dlc_cuda_launch's kernel index.
struct CudaCode {
  std::string ptx;
  std::vector<std::string> kernels;
  /// The planned workspace of each CUDA entry, by its CPU symbol.
  std::map<std::string, int64_t> workspaceBytes;
};

/// The GPU to generate PTX for: sm_80 PTX, which the driver compiles for
/// any later GPU (sm_90 included) when the model is created.
inline constexpr const char *kCudaChip = "sm_80";

/// Choices of the CUDA lowering.
struct CudaOptions {
  /// GEMMs of at most this many multiply-adds run as kernels instead of
  /// cuBLASLt calls (dlc-map-gemms's small-gemm-fmas); negative: the
  /// pass's default.
  int64_t smallGemmFmas = -1;
  /// A data-parallel step's collectives overlap the code after them
  /// (dlc-lower-collectives's overlap).
  bool overlapComm = false;
};

/// Adds runCudaCodegenPipeline's passes to `pm`.
void buildCudaCodegenPipeline(mlir::OpPassManager &pm,
                              const CudaOptions &options = {});

/// Adds runCudaEmulationPipeline's passes to `pm`.
void buildCudaEmulationPipeline(mlir::OpPassManager &pm,
                                const CudaOptions &options = {},
                                bool reverseThreads = false);

/// Registers the pipelines by name, for dlc-opt (docs/architecture.md):
/// dlc-pipeline, dlc-linalg-pipeline, dlc-memory-plan-pipeline,
/// dlc-cpu-codegen-pipeline, dlc-cpu-pipeline (the linalg and CPU codegen
/// pipelines in one: from `dlc --emit=dlc` to `--emit=llvm-dialect`),
/// dlc-cuda-codegen-pipeline and dlc-cuda-emulation-pipeline.
void registerPipelines();

/// The CUDA half of an object, from a module lowered by runLinalgPipeline
/// with device "cuda": fusion, bufferization, dlc-map-to-gpu, the memory
/// plan, kernel outlining, NVVM and PTX (into `code`), and the host side of
/// every entry, renamed `<symbol>_cuda`, lowered to the LLVM dialect.
mlir::LogicalResult runCudaCodegenPipeline(mlir::ModuleOp module,
                                           CudaCode &code,
                                           const CudaOptions &options = {});

/// The CUDA lowering run on the host, for tests without a GPU: the kernels
/// of dlc-map-to-gpu become host loops (dlc-emulate-gpu-launches) and the
/// GEMM and copy calls go to host references (dlc_emulated_gemm,
/// dlc_emulated_memcpy, which the caller provides); the entries keep the
/// CPU ABI. With `reverseThreads`, each kernel's blocks, warps and threads
/// run last to first (a check that none depends on their order).
mlir::LogicalResult runCudaEmulationPipeline(mlir::ModuleOp module,
                                             const CudaOptions &options = {},
                                             bool reverseThreads = false);

/// The widest vector register of `tm`'s CPU, in bits (512 with AVX-512F,
/// 256 with AVX, else 128).
unsigned vectorBitsOf(const llvm::TargetMachine &tm);

/// Whether `tm`'s CPU has AVX512_BF16 (bf16 dot products, vdpbf16ps).
bool hasBf16DotOf(const llvm::TargetMachine &tm);

/// A TargetMachine for x86-64; `cpu` is "native", "x86-64-v3",
/// "x86-64-v4" or any CPU name LLVM knows, optionally followed by features
/// to add, "+feature" each (`x86-64-v4+avx512bf16`). Errors are returned as
/// text.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createX86TargetMachine(llvm::StringRef cpu);

/// The CPUs of `--cpu=portable`, best first: each a further variant of the
/// CPU entries in one object, the last the base every x86-64 CPU since 2013
/// runs (docs/runtime-abi.md). The first needs avx512bf16 and is built only
/// for models with bf16 values.
llvm::ArrayRef<llvm::StringLiteral> portableCpus();

/// One more compilation of a model's CPU entries for a richer CPU: its
/// LLVM-dialect module and its target machine.
struct CpuVariant {
  std::string name; ///< The --cpu value it was compiled for.
  mlir::ModuleOp module;
  llvm::TargetMachine *tm = nullptr;
};

/// Translates the LLVM-dialect module, adds the packed entry wrappers and
/// the model descriptor (docs/runtime-abi.md) and optimises at O3. With
/// `cuda` (the LLVM-dialect module of runCudaCodegenPipeline) and its
/// `cudaCode`, the object also carries the CUDA entries and the PTX
/// (descriptor version 3).
///
/// `variants` (best first) are further compilations of `module` for richer
/// CPUs: their functions are linked in with a suffix and their own target
/// CPU and features (function attributes), and the descriptor lists them
/// for the runtime to choose from (`cpu_variants`, version 4). `cpuName`
/// names the CPU of `module` itself in the descriptor.
///
/// With `weightPlaceholders`, the initial value of every `data` parameter
/// of at least kPlaceholderBytes is a zero placeholder of its size in a
/// section of its own (`.rodata.dlc.param.<index>`), which writeWeights
/// fills once the object is on disk: large weights then never pass through
/// LLVM, which would hold them twice (as a constant and as section data).
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVM(mlir::ModuleOp module, const ModelInfo &info,
                llvm::LLVMContext &llvmContext, llvm::TargetMachine &tm,
                mlir::ModuleOp cuda = {}, const CudaCode *cudaCode = nullptr,
                bool weightPlaceholders = false,
                llvm::ArrayRef<CpuVariant> variants = {},
                llvm::StringRef cpuName = "");

/// Parameters below this size are emitted as LLVM constants even with
/// weight placeholders.
inline constexpr size_t kPlaceholderBytes = 4096;

/// Fills the weight placeholders of the ELF object file at `objectPath`
/// (written from translateToLLVM(..., weightPlaceholders=true)) with the
/// parameters' initial values, streamed from their storage (an ONNX
/// model's mapped external data file: its pages are released as they are
/// written).
llvm::Error writeWeights(llvm::StringRef objectPath, const ModelInfo &info);

/// Emits an object file (or assembly) for `module`.
llvm::Error emitMachineCode(llvm::Module &module, llvm::TargetMachine &tm,
                            llvm::raw_pwrite_stream &os, bool assembly);

} // namespace mlir::dlc

#endif // DLC_TARGET_PIPELINE_H
