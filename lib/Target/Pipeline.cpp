//===- Pipeline.cpp - the compilation pipeline ----------------------------===//
//
// The stages of `dlc` as typed pass pipelines: each is built by a
// `build*Pipeline` function from one options struct, run on a module by
// its `run*Pipeline` function (with the command line's pass-manager
// options: --mlir-print-ir-after-all, --mlir-timing, ...), and registered
// by name (registerPipelines) so that `dlc-opt --dlc-cpu-pipeline`
// replays a stage on the output of the one before.
//
//===----------------------------------------------------------------------===//
#include "dlc/Target/Pipeline.h"

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"
#include "dlc/Target/ModelInfo.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::dlc;

/// Runs the pipeline that `build` adds on `module`, with the command-line
/// pass manager options applied.
static LogicalResult
runPipeline(ModuleOp module, llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  build(pm);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  return pm.run(module);
}

//===----------------------------------------------------------------------===//
// The dlc dialect
//===----------------------------------------------------------------------===//

void mlir::dlc::buildDlcPipeline(OpPassManager &pm, StringRef precision,
                                 const TrainOptions *train) {
  pm.addPass(createInlinerPass());
  pm.addPass(createCanonicalizerPass());
  // Imported subgraphs become dlc ops first, so that they autocast and
  // fuse like native ones.
  pm.addPass(createDlcRaiseDecompositionsPass());
  if (precision != "fp32") {
    DlcInsertAutocastPassOptions autocast;
    autocast.precision = precision.str();
    pm.addPass(createDlcInsertAutocastPass(autocast));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (train) {
    pm.addPass(createDlcBuildTrainStepPass(train->step));
    pm.addPass(createCanonicalizerPass());
    // fp16 has a narrow range: the step scales its loss (bf16 needs none).
    if (precision == "fp16") {
      DlcInsertLossScalingPassOptions scaling;
      scaling.initScale = train->initLossScale;
      pm.addPass(createDlcInsertLossScalingPass(scaling));
      pm.addPass(createCanonicalizerPass());
    }
    // Data parallelism: gradients and loss reduced over the ranks.
    if (train->dataParallel) {
      pm.addPass(createDlcInsertGradientAllreducePass(train->allreduce));
      if (train->shard.ranks > 0)
        pm.addPass(createDlcShardOptimizerStatePass(train->shard));
    }
  }
  pm.addPass(createDlcFuseLayersPass());
  pm.addPass(createCSEPass());
}

LogicalResult mlir::dlc::runDlcPipeline(ModuleOp module,
                                        const TrainOptions *train,
                                        StringRef precision) {
  return runPipeline(module, [&](OpPassManager &pm) {
    buildDlcPipeline(pm, precision, train);
  });
}

LogicalResult mlir::dlc::runPackWeightsPipeline(ModuleOp module,
                                                int64_t maxMiB) {
  return runPipeline(module, [&](OpPassManager &pm) {
    DlcPackWeightsPassOptions pack;
    pack.maxMiB = maxMiB;
    pm.addPass(createDlcPackWeightsPass(pack));
  });
}

static void buildPlacementPipeline(OpPassManager &pm, StringRef device) {
  DlcPlaceDevicesPassOptions placement;
  placement.device = device.str();
  pm.addPass(createDlcPlaceDevicesPass(placement));
}

LogicalResult mlir::dlc::runPlacementPipeline(ModuleOp module,
                                              StringRef device) {
  return runPipeline(
      module, [&](OpPassManager &pm) { buildPlacementPipeline(pm, device); });
}

//===----------------------------------------------------------------------===//
// Lowering to linalg
//===----------------------------------------------------------------------===//

void mlir::dlc::buildLinalgPipeline(OpPassManager &pm, StringRef device) {
  buildPlacementPipeline(pm, device);
  // The loss function is kept for training; inference compiles entries and
  // the helpers they call, which become private to the object.
  pm.addPass(createDlcPrepareEntriesPass());
  pm.addPass(createSymbolDCEPass());
  // A recurrent layer's batch rows split into blocks for the CPU's threads;
  // on CUDA each step's kernels take the whole batch (its loop over the
  // steps stays on the host, recorded in the entry's CUDA graph).
  DlcLowerToLinalgPassOptions lowering;
  if (device == "cuda")
    lowering.recurrentBlocks = 1;
  pm.addPass(createDlcLowerToLinalgPass(lowering));
  pm.addPass(createDlcLowerEntryAbiPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

LogicalResult mlir::dlc::runLinalgPipeline(ModuleOp module, StringRef device) {
  return runPipeline(
      module, [&](OpPassManager &pm) { buildLinalgPipeline(pm, device); });
}

//===----------------------------------------------------------------------===//
// CPU code generation
//===----------------------------------------------------------------------===//

/// Fusion and bufferization, on the CPU (`cpu`) and for CUDA.
static void addFuseAndBufferize(OpPassManager &pm, bool cpu) {
  // Fuse elementwise producers into their consumers (epilogues, softmax
  // steps; reshapes stay off the matmuls), then bufferize, each output's
  // ops computing in the caller's buffer where nothing else can see it.
  pm.addPass(createDlcFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The CPU's register tiles start from the bias (cuBLASLt adds it in its
  // own epilogue, which dlc-map-gemms matches on the zero-filled form).
  if (cpu) {
    pm.addPass(createDlcFoldBiasIntoMatmulPass());
    pm.addPass(createCanonicalizerPass());
  }
  pm.addNestedPass<func::FuncOp>(createDlcWriteOutputsInPlacePass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
}

void mlir::dlc::buildMemoryPlanPipeline(OpPassManager &pm,
                                        const CpuCodegenOptions &options) {
  addFuseAndBufferize(pm, /*cpu=*/true);
  // CSE merges the equal subviews of a slice written in place and the
  // canonicalizer then drops the copy of it onto itself (a recurrent
  // step's slice of its sequence; the CUDA code has no loop over steps).
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Batched matmuls and transposes (attention) as loops of the 2-D ones
  // that the tiling handles.
  pm.addNestedPass<func::FuncOp>(createDlcSplitBatchesPass());
  // Matmuls: cache and register tiling, AVX-512 FMAs. Before the memory
  // plan: hoisting the accumulators out of the K loop needs to see that the
  // operands are distinct buffers, not views of one workspace.
  DlcTileAndVectorizePassOptions tiling;
  tiling.vectorBits = options.vectorBits;
  tiling.registerTile = options.registerTile;
  tiling.cacheTile = options.cacheTile;
  tiling.bf16Dot = options.bf16Dot;
  pm.addPass(createDlcTileAndVectorizePass(tiling));
  // The other large loop nests: parallel tiles too.
  pm.addNestedPass<func::FuncOp>(createDlcParallelizeLoopsPass());
  // Reductions along a row (softmax, normalisations) on vectors.
  DlcVectorizeReductionsPassOptions reductions;
  reductions.vectorBits = options.vectorBits;
  pm.addNestedPass<func::FuncOp>(createDlcVectorizeReductionsPass(reductions));
  // Copies along a row at a constant stride (im2col) on vectors.
  DlcVectorizeCopiesPassOptions copies;
  copies.vectorBits = options.vectorBits;
  pm.addNestedPass<func::FuncOp>(createDlcVectorizeCopiesPass(copies));
  // Every intermediate buffer gets its place in the entry's workspace; what
  // is left (the matmul packing buffers, inside the parallel loops) comes
  // with its deallocation from the tiling.
  pm.addPass(createDlcPlanMemoryPass());
}

LogicalResult
mlir::dlc::runMemoryPlanPipeline(ModuleOp module,
                                 const CpuCodegenOptions &options) {
  return runPipeline(
      module, [&](OpPassManager &pm) { buildMemoryPlanPipeline(pm, options); });
}

/// 16-bit floats: arithmetic in fp32, and bf16 conversions as integer code
/// (no compiler-rt calls; fp16 conversions are F16C or PTX instructions).
static void addEmulate16BitFloats(OpPassManager &pm) {
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  emulate.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
}

/// Host functions on memrefs to the LLVM dialect, with the runtime's
/// bare-pointer calling convention. The matmul kernels' packing buffers
/// come from libdlcrt (dlc_workspace_*, see ObjectEmitter.cpp), which keeps
/// them from one call to the next.
static void addHostToLLVM(OpPassManager &pm, bool openmp) {
  FinalizeMemRefToLLVMConversionPassOptions memref;
  memref.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  if (openmp)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// From bufferized, memory-planned loops and vectors to the LLVM dialect.
static void addCpuLowering(OpPassManager &pm) {
  // Repeated loop nests (a deep model's layers) become one function each.
  pm.addPass(createDlcShareRepeatedLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The matmul cache tiles (scf.forall) become OpenMP worksharing loops;
  // libdlcrt implements the __kmpc entry points on its thread pool.
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createDlcApproximateMathPass());
  addEmulate16BitFloats(pm);
  VectorTransferToSCFOptions vectorToScf;
  vectorToScf.enableFullUnroll();
  pm.addPass(createConvertVectorToSCFPass(vectorToScf));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // x86vector: the bf16 dot products of dlc-tile-and-vectorize.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  addHostToLLVM(pm, /*openmp=*/true);
}

void mlir::dlc::buildCpuCodegenPipeline(OpPassManager &pm,
                                        const CpuCodegenOptions &options) {
  buildMemoryPlanPipeline(pm, options);
  // Collectives on planned buffers: calls of the runtime's communicator.
  DlcLowerCollectivesPassOptions collectives;
  collectives.overlap = options.overlapComm;
  pm.addPass(createDlcLowerCollectivesPass(collectives));
  addCpuLowering(pm);
}

LogicalResult
mlir::dlc::runCpuCodegenPipeline(ModuleOp module,
                                 const CpuCodegenOptions &options) {
  return runPipeline(
      module, [&](OpPassManager &pm) { buildCpuCodegenPipeline(pm, options); });
}

//===----------------------------------------------------------------------===//
// CUDA code generation
//===----------------------------------------------------------------------===//

/// Kernels and cuBLASLt calls, fused kernels, the memory plan (after the
/// kernels: the device scalars' scratch buffers are planned with the rest).
static void addMapToGpu(OpPassManager &pm, const CudaOptions &options) {
  DlcMapGemmsPassOptions gemms;
  if (options.smallGemmFmas >= 0)
    gemms.smallGemmFmas = options.smallGemmFmas;
  pm.addPass(createDlcMapGemmsPass(gemms));
  pm.addPass(createDlcMapToGpuPass());
  pm.addPass(createDlcFuseKernelsPass());
  pm.addPass(createDlcPlanMemoryPass());
}

void mlir::dlc::buildCudaEmulationPipeline(OpPassManager &pm,
                                           const CudaOptions &options,
                                           bool reverseThreads) {
  addFuseAndBufferize(pm, /*cpu=*/false);
  addMapToGpu(pm, options);
  DlcEmulateGpuLaunchesPassOptions emulate;
  emulate.reverse = reverseThreads;
  pm.addPass(createDlcEmulateGpuLaunchesPass(emulate));
  // Emulated device buffers are host memory: the CPU's communicator.
  DlcLowerCollectivesPassOptions collectives;
  collectives.overlap = options.overlapComm;
  pm.addPass(createDlcLowerCollectivesPass(collectives));
  addCpuLowering(pm);
}

LogicalResult mlir::dlc::runCudaEmulationPipeline(ModuleOp module,
                                                  const CudaOptions &options,
                                                  bool reverseThreads) {
  return runPipeline(module, [&](OpPassManager &pm) {
    buildCudaEmulationPipeline(pm, options, reverseThreads);
  });
}

void mlir::dlc::buildCudaCodegenPipeline(OpPassManager &pm,
                                         const CudaOptions &options) {
  DlcPrepareEntriesPassOptions entries;
  entries.prefix = false;
  entries.suffix = kCudaEntrySuffix.str();
  pm.addPass(createDlcPrepareEntriesPass(entries));
  addFuseAndBufferize(pm, /*cpu=*/false);
  addMapToGpu(pm, options);
  // Collectives on planned device buffers: NCCL calls on the CUDA context.
  DlcLowerCollectivesPassOptions collectives;
  collectives.overlap = options.overlapComm;
  collectives.device = "cuda";
  pm.addPass(createDlcLowerCollectivesPass(collectives));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createDlcLowerGpuLaunchesPass());
  // Kernels: polynomial math (no libdevice), 16-bit arithmetic in fp32,
  // NVVM, PTX text.
  pm.addPass(createDlcApproximateMathPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = kCudaChip;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createDlcLowerWarpReductionsPass());
  pm.addPass(createDlcLowerMathToNvptxPass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  addEmulate16BitFloats(kernels);
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  // The PTX becomes data of the object (ObjectEmitter.cpp); the host side
  // lowers to the LLVM dialect.
  pm.addPass(createDlcCollectCudaCodePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // A recurrent layer's host loop over its steps, and the branches that
  // choose a step's buffers.
  pm.addPass(createSCFToControlFlowPass());
  addHostToLLVM(pm, /*openmp=*/false);
}

LogicalResult mlir::dlc::runCudaCodegenPipeline(ModuleOp module, CudaCode &code,
                                                const CudaOptions &options) {
  if (failed(runPipeline(module, [&](OpPassManager &pm) {
        buildCudaCodegenPipeline(pm, options);
      })))
    return failure();
  code = CudaCode();
  if (auto ptx = module->getAttrOfType<StringAttr>(kCudaPtxAttrName))
    code.ptx = ptx.str();
  if (auto names = module->getAttrOfType<ArrayAttr>(kCudaKernelsAttrName))
    for (Attribute name : names)
      code.kernels.push_back(cast<StringAttr>(name).getValue().str());
  // The entries' planned workspaces, by their CPU symbols (the functions
  // are in the LLVM dialect by now).
  for (Operation &op : module.getBody()->getOperations()) {
    auto bytes = op.getAttrOfType<IntegerAttr>(kWorkspaceBytesAttrName);
    auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (bytes && name && name.getValue().ends_with(kCudaEntrySuffix))
      code.workspaceBytes
          [name.getValue().drop_back(kCudaEntrySuffix.size()).str()] =
          bytes.getInt();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

namespace {

struct DlcPipelineOptions : PassPipelineOptions<DlcPipelineOptions> {
  Option<std::string> precision{*this, "precision",
                                llvm::cl::desc("fp32, bf16 or fp16"),
                                llvm::cl::init("fp32")};
};

struct LinalgPipelineOptions : PassPipelineOptions<LinalgPipelineOptions> {
  Option<std::string> device{*this, "device", llvm::cl::desc("cpu or cuda"),
                             llvm::cl::init("cpu")};
};

struct CpuPipelineOptions : PassPipelineOptions<CpuPipelineOptions> {
  Option<unsigned> vectorBits{*this, "vector-bits",
                              llvm::cl::desc("Widest vector register"),
                              llvm::cl::init(512)};
  ListOption<int64_t> registerTile{*this, "register-tile",
                                   llvm::cl::desc("M,N register tile")};
  ListOption<int64_t> cacheTile{*this, "cache-tile",
                                llvm::cl::desc("M,N,K cache tile bounds")};
  Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 matmuls on vdpbf16ps (AVX512_BF16)"),
      llvm::cl::init(false)};

  CpuCodegenOptions get() const {
    CpuCodegenOptions o;
    o.vectorBits = vectorBits;
    o.registerTile.assign(registerTile.begin(), registerTile.end());
    o.cacheTile.assign(cacheTile.begin(), cacheTile.end());
    o.bf16Dot = bf16Dot;
    return o;
  }
};

struct CudaPipelineOptions : PassPipelineOptions<CudaPipelineOptions> {
  Option<int64_t> smallGemmFmas{
      *this, "small-gemm-fmas",
      llvm::cl::desc("GEMMs of at most this many multiply-adds run as "
                     "kernels (-1: dlc-map-gemms's default)"),
      llvm::cl::init(-1)};
  Option<bool> reverse{*this, "reverse",
                       llvm::cl::desc("Emulation: run the threads of each "
                                      "kernel last to first"),
                       llvm::cl::init(false)};

  CudaOptions get() const {
    CudaOptions o;
    o.smallGemmFmas = smallGemmFmas;
    return o;
  }
};

} // namespace

void mlir::dlc::registerPipelines() {
  PassPipelineRegistration<DlcPipelineOptions>(
      "dlc-pipeline",
      "The dlc-level pipeline of `dlc` (inlining, raising, autocast, layer "
      "fusion), as `dlc --emit=dlc` runs it without training",
      [](OpPassManager &pm, const DlcPipelineOptions &o) {
        buildDlcPipeline(pm, o.precision);
      });
  PassPipelineRegistration<LinalgPipelineOptions>(
      "dlc-linalg-pipeline",
      "Device placement, entry naming and lowering to linalg with the entry "
      "ABI (`dlc --emit=linalg`)",
      [](OpPassManager &pm, const LinalgPipelineOptions &o) {
        buildLinalgPipeline(pm, o.device);
      });
  PassPipelineRegistration<CpuPipelineOptions>(
      "dlc-memory-plan-pipeline",
      "Fusion, bufferization, matmul tiling and the memory plan",
      [](OpPassManager &pm, const CpuPipelineOptions &o) {
        buildMemoryPlanPipeline(pm, o.get());
      });
  PassPipelineRegistration<CpuPipelineOptions>(
      "dlc-cpu-codegen-pipeline",
      "From linalg on tensors to the LLVM dialect for the CPU",
      [](OpPassManager &pm, const CpuPipelineOptions &o) {
        buildCpuCodegenPipeline(pm, o.get());
      });
  PassPipelineRegistration<CpuPipelineOptions>(
      "dlc-cpu-pipeline",
      "From the dlc dialect (`dlc --emit=dlc`) to the LLVM dialect for the "
      "CPU (`dlc --target=x86 --emit=llvm-dialect`)",
      [](OpPassManager &pm, const CpuPipelineOptions &o) {
        buildLinalgPipeline(pm, "cpu");
        buildCpuCodegenPipeline(pm, o.get());
      });
  PassPipelineRegistration<CudaPipelineOptions>(
      "dlc-cuda-codegen-pipeline",
      "From linalg on tensors (device cuda) to PTX in `dlc.cuda_ptx` and the "
      "host side in the LLVM dialect",
      [](OpPassManager &pm, const CudaPipelineOptions &o) {
        buildCudaCodegenPipeline(pm, o.get());
      });
  PassPipelineRegistration<CudaPipelineOptions>(
      "dlc-cuda-emulation-pipeline",
      "The CUDA lowering with its kernels as host loops (`dlc "
      "--cuda-emulate`)",
      [](OpPassManager &pm, const CudaPipelineOptions &o) {
        buildCudaEmulationPipeline(pm, o.get(), o.reverse);
      });
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

bool mlir::dlc::hasBf16DotOf(const llvm::TargetMachine &tm) {
  return tm.getMCSubtargetInfo()->checkFeatures("+avx512bf16");
}
