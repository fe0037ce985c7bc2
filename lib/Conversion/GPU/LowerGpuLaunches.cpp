//===- LowerGpuLaunches.cpp - dlc-lower-gpu-launches ----------------------===//
//
// Gathers the outlined kernels into one gpu.module and turns every
// gpu.launch_func into a call of the runtime's dlc_cuda_launch. See
// Passes.td and docs/runtime-abi.md.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCLOWERGPULAUNCHESPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

constexpr StringLiteral kKernelModule = "dlc_kernels";

struct DlcLowerGpuLaunchesPass
    : dlc::impl::DlcLowerGpuLaunchesPassBase<DlcLowerGpuLaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<gpu::GPUModuleOp> outlined(module.getOps<gpu::GPUModuleOp>());
    if (outlined.empty())
      return;

    // One module for every kernel; kernel k is named after the module it
    // was outlined into, which the outlining made unique.
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto merged = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModule);
    merged->setDiscardableAttrs(
        outlined.front()->getDiscardableAttrDictionary());
    llvm::MapVector<std::pair<StringAttr, StringAttr>, int32_t> index;
    SmallVector<Attribute> names;
    Block &dest = merged.getBodyRegion().front();
    for (gpu::GPUModuleOp m : outlined) {
      for (auto kernel :
           llvm::make_early_inc_range(m.getOps<gpu::GPUFuncOp>())) {
        index[std::make_pair(m.getSymNameAttr(), kernel.getNameAttr())] =
            names.size();
        kernel->moveBefore(&dest, dest.end());
        kernel.setName(m.getSymName());
        names.push_back(m.getSymNameAttr());
      }
      m.erase();
    }
    module->setAttr(kCudaKernelsAttrName, ArrayAttr::get(ctx, names));

    // dlc-plan-memory appended the workspace after the CUDA context, which
    // comes last (docs/runtime-abi.md).
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kEntryAttrName) && failed(moveContextLast(func)))
        return signalPassFailure();

    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto key =
          std::make_pair(launch.getKernelModuleName(), launch.getKernelName());
      auto it = index.find(key);
      if (it == index.end()) {
        launch.emitOpError("launches a kernel that was not outlined");
        return WalkResult::interrupt();
      }
      if (failed(lowerLaunch(module, launch, it->second)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
  }

  LogicalResult moveContextLast(func::FuncOp func) {
    BlockArgument old = cudaContextArgument(func);
    unsigned n = func.getNumArguments(), i = old ? old.getArgNumber() : n;
    if (i + 1 >= n)
      return success();
    if (failed(func.insertArgument(n, old.getType(), func.getArgAttrDict(i),
                                   old.getLoc())))
      return failure();
    old.replaceAllUsesWith(func.getArgument(n));
    return func.eraseArgument(i);
  }

  LogicalResult lowerLaunch(ModuleOp module, gpu::LaunchFuncOp launch,
                            int32_t kernel) {
    auto func = launch->getParentOfType<func::FuncOp>();
    Value cudaCtx = func ? cudaContextArgument(func) : BlockArgument();
    if (!cudaCtx)
      return launch.emitOpError(
          "is not in an entry that dlc-map-to-gpu gave a CUDA context");
    if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
        launch.getDynamicSharedMemorySize() || launch.hasClusterSize())
      return launch.emitOpError("uses launch features dlc does not emit");

    OpBuilder b(launch);
    Location loc = launch.getLoc();
    Type i64 = b.getI64Type();
    auto toI64 = [&](Value v) -> Value {
      return arith::IndexCastOp::create(b, loc, i64, v);
    };
    // The kernel parameters, 8 bytes each, in a host array.
    SmallVector<Value> params;
    for (Value operand : launch.getKernelOperands()) {
      if (auto type = dyn_cast<MemRefType>(operand.getType())) {
        if (!type.getLayout().isIdentity() || !type.hasStaticShape())
          return launch.emitOpError("passes a ")
                 << type
                 << " to a kernel; kernels take identity-layout buffers "
                    "(bare pointers)";
        params.push_back(toI64(
            memref::ExtractAlignedPointerAsIndexOp::create(b, loc, operand)));
      } else if (operand.getType().isIndex()) {
        params.push_back(toI64(operand));
      } else if (operand.getType().isInteger(64)) {
        params.push_back(operand);
      } else {
        return launch.emitOpError("passes a ")
               << operand.getType()
               << " to a kernel; kernel parameters are 8-byte pointers or "
                  "integers";
      }
    }
    // The array lives in the entry's frame, allocated once at its start:
    // a launch in a host loop (a recurrent layer's step) reuses it, as the
    // driver copies the parameters when the launch is issued.
    int64_t n = std::max<int64_t>(params.size(), 1);
    Block &first = func.front();
    auto start = first.begin();
    while (start != first.end() && isa<memref::AllocaOp>(*start))
      ++start;
    OpBuilder entry(&first, start);
    Value array =
        memref::AllocaOp::create(entry, loc, MemRefType::get({n}, i64));
    for (auto [i, p] : llvm::enumerate(params))
      memref::StoreOp::create(
          b, loc, p, array,
          ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
    Value arrayAddress =
        toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, array));

    SmallVector<Value> args = {
        cudaCtx, arith::ConstantIntOp::create(b, loc, b.getI32Type(), kernel)};
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    for (Value v : {grid.x, grid.y, grid.z, block.x, block.y, block.z})
      args.push_back(toI64(v));
    args.push_back(
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), params.size()));
    args.push_back(arrayAddress);

    auto fn = module.lookupSymbol<func::FuncOp>("dlc_cuda_launch");
    if (!fn) {
      OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
      fn = func::FuncOp::create(
          mb, module.getLoc(), "dlc_cuda_launch",
          mb.getFunctionType(ValueRange(args).getTypes(), {}));
      fn.setPrivate();
    }
    func::CallOp::create(b, loc, fn, args);
    launch.erase();
    return success();
  }
};

} // namespace
