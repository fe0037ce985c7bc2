//===- Pipeline.cpp - the compilation pipeline ----------------------------===//
#include "dlc/Target/Pipeline.h"

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Target/ModelInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;

/// Runs a textual pipeline on `module`, with the command-line pass manager
/// options (--mlir-print-ir-after-all, --mlir-timing, ...) applied.
static LogicalResult runPipeline(ModuleOp module, StringRef text) {
  // parsePassPipeline(text, pm) would nest "builtin.module(...)" inside the
  // module pass manager, which then silently does nothing: parse standalone
  // and move it into a pass manager with the same anchor.
  std::string errors;
  llvm::raw_string_ostream errStream(errors);
  FailureOr<OpPassManager> parsed = parsePassPipeline(text, errStream);
  if (failed(parsed))
    return module.emitError("internal error: bad pass pipeline: ") << errors;
  PassManager pm(module.getContext(), parsed->getOpAnchorName());
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  return pm.run(module);
}

LogicalResult mlir::dlc::runDlcPipeline(ModuleOp module,
                                        const TrainOptions *train,
                                        StringRef precision) {
  // Imported subgraphs become dlc ops first, so that they autocast and
  // fuse like native ones.
  std::string passes = "inline,canonicalize,dlc-raise-decompositions,";
  if (precision != "fp32")
    passes += "dlc-insert-autocast{precision=" + precision.str() +
              "},canonicalize,cse,";
  if (train) {
    passes += "dlc-build-train-step{" + train->passOptions + "},canonicalize,";
    // fp16 has a narrow range: the step scales its loss (bf16 needs none).
    if (precision == "fp16")
      passes += "dlc-insert-loss-scaling{init-scale=" +
                std::to_string(train->initLossScale) + "},canonicalize,";
  }
  return runPipeline(module,
                     "builtin.module(" + passes + "dlc-fuse-layers,cse)");
}

LogicalResult mlir::dlc::runPlacementPipeline(ModuleOp module,
                                              StringRef device) {
  return runPipeline(
      module, "builtin.module(dlc-place-devices{device=" + device.str() + "})");
}

LogicalResult mlir::dlc::runLinalgPipeline(ModuleOp module,
                                           const ModelInfo &info,
                                           StringRef device) {
  if (failed(runPlacementPipeline(module, device)))
    return failure();
  // The loss function is kept for training; inference compiles entries and
  // the helpers they call, which become private to the object.
  for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (f->hasAttr("dlc.loss"))
      f.erase();
    else if (!f->hasAttr(mlir::dlc::kEntryAttrName))
      f.setPrivate();
  }
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr(mlir::dlc::kEntryAttrName))
      f.setSymName(entrySymbol(info.name, f.getSymName()));
  return runPipeline(module, "builtin.module(symbol-dce,dlc-lower-to-linalg,"
                             "dlc-lower-entry-abi,canonicalize,cse)");
}

static std::string tilingPass(const mlir::dlc::CpuCodegenOptions &options) {
  std::string tile = "dlc-tile-and-vectorize{vector-bits=" +
                     std::to_string(options.vectorBits);
  if (!options.registerTile.empty())
    tile += " register-tile=" + options.registerTile;
  if (!options.cacheTile.empty())
    tile += " cache-tile=" + options.cacheTile;
  return tile + "}";
}

LogicalResult
mlir::dlc::runMemoryPlanPipeline(ModuleOp module,
                                 const CpuCodegenOptions &options) {
  return runPipeline(
      module,
      "builtin.module("
      // Fuse elementwise producers into their consumers (epilogues, softmax
      // steps; reshapes stay off the matmuls), then bufferize. No
      // eliminate-empty-tensors: once CSE has merged two identical zero-filled
      // accumulators, it makes two results share the caller's output buffer and
      // one-shot-bufferize then copies the wrong one out
      // (test/e2e/reductions.test). Outputs cost one copy.
      "dlc-fuse-elementwise,canonicalize,cse,"
      "one-shot-bufferize{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},canonicalize,"
          // Matmuls: cache and register tiling, AVX-512 FMAs. Before the memory
          // plan: hoisting the accumulators out of the K loop needs to see that
          // the operands are distinct buffers, not views of one workspace.
          + tilingPass(options) +
          // Every intermediate buffer gets its place in the entry's workspace;
          // what is left (the matmul packing buffers, inside the parallel
          // loops) comes with its deallocation from the tiling.
          ",dlc-plan-memory)");
}

/// From bufferized, memory-planned loops and vectors to the LLVM dialect.
static std::string cpuLowering() {
  // Repeated loop nests (a deep model's layers) become one function each.
  return "dlc-share-repeated-loops,canonicalize,"
         "convert-linalg-to-loops,canonicalize,cse,"
         // The matmul cache tiles (scf.forall) become OpenMP worksharing
         // loops; libdlcrt implements the __kmpc entry points on its thread
         // pool.
         "scf-forall-to-parallel,convert-scf-to-openmp,canonicalize,"
         "dlc-approximate-math,"
         // 16-bit floats: arithmetic in fp32, and bf16 conversions as integer
         // code (no compiler-rt calls; fp16 conversions are F16C
         // instructions).
         "arith-emulate-unsupported-floats{source-types=bf16,f16 "
         "target-type=f32},arith-expand{include-bf16=true},"
         "convert-vector-to-scf{full-unroll=true},lower-affine,"
         "convert-scf-to-cf,convert-vector-to-llvm,convert-math-to-llvm,"
         "expand-strided-metadata,lower-affine,"
         // The matmul kernels' packing buffers come from libdlcrt
         // (dlc_workspace_*, see ObjectEmitter.cpp), which keeps them from
         // one call to the next.
         "finalize-memref-to-llvm{use-generic-functions=1},"
         "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
         "convert-openmp-to-llvm,"
         "convert-to-llvm,reconcile-unrealized-casts";
}

/// Fusion and bufferization, as on the CPU.
static const char *kFuseAndBufferize =
    "dlc-fuse-elementwise,canonicalize,cse,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},canonicalize,";

/// Kernels and cuBLASLt calls, fused kernels, the memory plan (after the
/// kernels: the device scalars' scratch buffers are planned with the rest).
static std::string mapToGpu(const mlir::dlc::CudaOptions &options) {
  std::string map = "dlc-map-gemms";
  if (options.smallGemmFmas >= 0)
    map += "{small-gemm-fmas=" + std::to_string(options.smallGemmFmas) + "}";
  return map + ",dlc-map-to-gpu,dlc-fuse-kernels,dlc-plan-memory,";
}

LogicalResult mlir::dlc::runCudaEmulationPipeline(ModuleOp module,
                                                  const CudaOptions &options,
                                                  bool reverseThreads) {
  return runPipeline(module, std::string("builtin.module(") +
                                 kFuseAndBufferize + mapToGpu(options) +
                                 "dlc-emulate-gpu-launches{reverse=" +
                                 (reverseThreads ? "true" : "false") + "}," +
                                 cpuLowering() + ")");
}

LogicalResult
mlir::dlc::runCpuCodegenPipeline(ModuleOp module,
                                 const CpuCodegenOptions &options) {
  if (failed(runMemoryPlanPipeline(module, options)))
    return failure();
  return runPipeline(module, "builtin.module(" + cpuLowering() + ")");
}

LogicalResult mlir::dlc::runCudaCodegenPipeline(ModuleOp module, CudaCode &code,
                                                const CudaOptions &options) {
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr(kEntryAttrName))
      f.setSymName((f.getSymName() + kCudaEntrySuffix).str());
  if (failed(runPipeline(
          module,
          std::string("builtin.module(") + kFuseAndBufferize +
              mapToGpu(options) +
              "canonicalize,"
              "gpu-launch-sink-index-computations,gpu-kernel-outlining,"
              "dlc-lower-gpu-launches,"
              // Kernels: polynomial math (no libdevice), 16-bit arithmetic in
              // fp32, NVVM, PTX text.
              "dlc-approximate-math,nvvm-attach-target{chip=" +
              std::string(kCudaChip) +
              " O=3},"
              "dlc-lower-warp-reductions,dlc-lower-math-to-nvptx,"
              "gpu.module(lower-affine,arith-emulate-unsupported-floats{"
              "source-types=bf16,f16 target-type=f32},"
              "arith-expand{include-bf16=true},convert-scf-to-cf,"
              "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}),"
              "reconcile-unrealized-casts,gpu-module-to-binary{format=isa})")))
    return failure();

  // The PTX becomes data of the object (ObjectEmitter.cpp).
  code = CudaCode();
  for (auto f : module.getOps<func::FuncOp>())
    if (auto bytes = f->getAttrOfType<IntegerAttr>("dlc.workspace_bytes"))
      code.workspaceBytes
          [f.getSymName().drop_back(kCudaEntrySuffix.size()).str()] =
          bytes.getInt();
  for (auto binary :
       llvm::make_early_inc_range(module.getOps<gpu::BinaryOp>())) {
    for (Attribute object : binary.getObjects())
      code.ptx += cast<gpu::ObjectAttr>(object).getObject().getValue().str();
    binary.erase();
  }
  if (auto names = module->getAttrOfType<ArrayAttr>("dlc.cuda_kernels"))
    for (Attribute name : names)
      code.kernels.push_back(cast<StringAttr>(name).getValue().str());
  module->removeAttr("dlc.cuda_kernels");
  module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());

  return runPipeline(
      module, "builtin.module(canonicalize,expand-strided-metadata,"
              "lower-affine,finalize-memref-to-llvm{use-generic-"
              "functions=1},convert-func-to-llvm{use-bare-ptr-memref-"
              "call-conv=1},convert-to-llvm,reconcile-unrealized-casts)");
}

unsigned mlir::dlc::vectorBitsOf(const llvm::TargetMachine &tm) {
  // The subtarget knows the features a CPU name implies (x86-64-v4) as well
  // as those given explicitly (native).
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  if (sti->checkFeatures("+avx512f"))
    return 512;
  if (sti->checkFeatures("+avx"))
    return 256;
  return 128;
}
