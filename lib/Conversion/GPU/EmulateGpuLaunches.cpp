//===- EmulateGpuLaunches.cpp - dlc-emulate-gpu-launches ------------------===//
//
// Runs the kernels of dlc-map-to-gpu as host loops, so that the numerics of
// the CUDA lowering are tested against PyTorch without a GPU. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCEMULATEGPULAUNCHESPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

bool isOne(Value v) { return matchPattern(v, m_One()); }

struct DlcEmulateGpuLaunchesPass
    : dlc::impl::DlcEmulateGpuLaunchesPassBase<DlcEmulateGpuLaunchesPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(launch)))
        return signalPassFailure();
    // The runtime calls go to host references (`dlc run --cuda-emulate`
    // defines them), and the entries lose the CUDA context: they keep the
    // CPU calling convention.
    ModuleOp module = getOperation();
    for (auto [from, to] : {std::pair{"dlc_cuda_gemm", "dlc_emulated_gemm"},
                            {"dlc_cuda_memcpy", "dlc_emulated_memcpy"}})
      if (auto f = module.lookupSymbol<func::FuncOp>(from)) {
        if (failed(SymbolTable::replaceAllSymbolUses(
                f, StringAttr::get(&getContext(), to), module)))
          return signalPassFailure();
        f.setSymName(to);
      }
    for (auto func : module.getOps<func::FuncOp>()) {
      BlockArgument context = dlc::cudaContextArgument(func);
      if (!context)
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&func.front());
      context.replaceAllUsesWith(LLVM::ZeroOp::create(
          b, func.getLoc(), LLVM::LLVMPointerType::get(&getContext())));
      if (failed(func.eraseArgument(context.getArgNumber())))
        return signalPassFailure();
    }
  }

  LogicalResult emulate(gpu::LaunchOp launch) {
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    if (!isOne(grid.y) || !isOne(grid.z) || !isOne(block.y) ||
        !isOne(block.z) || launch.getAsyncToken() ||
        !launch.getBody().hasOneBlock())
      return launch.emitOpError("is not a one-dimensional synchronous "
                                "launch; dlc-emulate-gpu-launches cannot "
                                "run it on the host");
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto blocks = scf::ForOp::create(b, loc, zero, grid.x, one);
    b.setInsertionPoint(blocks.getBody()->getTerminator());
    auto threads = scf::ForOp::create(b, loc, zero, block.x, one);
    b.setInsertionPoint(threads.getBody()->getTerminator());

    IRMapping mapping;
    gpu::KernelDim3 ids = launch.getBlockIds(), tids = launch.getThreadIds();
    gpu::KernelDim3 gridArgs = launch.getGridSize(),
                    blockArgs = launch.getBlockSize();
    mapping.map(ids.x, blocks.getInductionVar());
    mapping.map(tids.x, threads.getInductionVar());
    for (Value v : {ids.y, ids.z, tids.y, tids.z})
      mapping.map(v, zero);
    mapping.map(gridArgs.x, grid.x);
    mapping.map(blockArgs.x, block.x);
    for (Value v : {gridArgs.y, gridArgs.z, blockArgs.y, blockArgs.z})
      mapping.map(v, one);
    for (Operation &op : launch.getBody().front().without_terminator())
      b.clone(op, mapping);
    launch.erase();
    return success();
  }
};

} // namespace
