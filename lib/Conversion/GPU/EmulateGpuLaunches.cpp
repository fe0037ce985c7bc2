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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCEMULATEGPULAUNCHESPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

bool isOne(Value v) { return matchPattern(v, m_One()); }

struct DlcEmulateGpuLaunchesPass
    : dlc::impl::DlcEmulateGpuLaunchesPassBase<DlcEmulateGpuLaunchesPass> {
  using DlcEmulateGpuLaunchesPassBase::DlcEmulateGpuLaunchesPassBase;

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
    // Warp reductions and barriers: the threads wait for each other there.
    SmallVector<Operation *> collectives;
    WalkResult nested = launch.getBody().walk([&](Operation *op) {
      if (!isa<gpu::SubgroupReduceOp, gpu::ShuffleOp, gpu::BarrierOp,
               gpu::AllReduceOp>(op))
        return WalkResult::advance();
      auto reduce = dyn_cast<gpu::SubgroupReduceOp>(op);
      if ((!reduce && !isa<gpu::BarrierOp>(op)) ||
          op->getParentOp() != launch.getOperation() ||
          (reduce && reduce.getClusterSize()))
        return WalkResult::interrupt();
      collectives.push_back(op);
      return WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return launch.emitOpError(
          "has a warp operation or barrier that is not a gpu.subgroup_reduce "
          "of the whole warp or a gpu.barrier at the top level of the "
          "kernel; dlc-emulate-gpu-launches runs the threads one after the "
          "other and can only stop them there");
    if (!collectives.empty())
      return emulateInParts(launch, collectives);

    OpBuilder b(launch);
    Location loc = launch.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto blocks = scf::ForOp::create(b, loc, zero, grid.x, one);
    b.setInsertionPoint(blocks.getBody()->getTerminator());
    Value blockId = inOrder(b, loc, blocks.getInductionVar(), grid.x);
    auto threads = scf::ForOp::create(b, loc, zero, block.x, one);
    b.setInsertionPoint(threads.getBody()->getTerminator());
    Value threadId = inOrder(b, loc, threads.getInductionVar(), block.x);

    IRMapping mapping;
    mapIds(mapping, launch, blockId, threadId, zero, one);
    for (Operation &op : launch.getBody().front().without_terminator())
      b.clone(op, mapping);
    launch.erase();
    return success();
  }

  /// Maps the ids and sizes of `launch`'s body to those of the emulated
  /// thread: block `blockId`, thread `threadId`, x alone.
  static void mapIds(IRMapping &mapping, gpu::LaunchOp launch, Value blockId,
                     Value threadId, Value zero, Value one) {
    gpu::KernelDim3 ids = launch.getBlockIds(), tids = launch.getThreadIds();
    gpu::KernelDim3 gridArgs = launch.getGridSize(),
                    blockArgs = launch.getBlockSize();
    mapping.map(ids.x, blockId);
    mapping.map(tids.x, threadId);
    for (Value v : {ids.y, ids.z, tids.y, tids.z})
      mapping.map(v, zero);
    mapping.map(gridArgs.x, launch.getGridSizeOperandValues().x);
    mapping.map(blockArgs.x, launch.getBlockSizeOperandValues().x);
    for (Value v : {gridArgs.y, gridArgs.z, blockArgs.y, blockArgs.z})
      mapping.map(v, one);
  }

  /// The `i`th of `count` ids in the order of the emulation: `i`, or
  /// `count - 1 - i` with `reverse`.
  Value inOrder(OpBuilder &b, Location loc, Value i, Value count) {
    if (!reverse)
      return i;
    Value last = arith::SubIOp::create(
        b, loc, count, arith::ConstantIndexOp::create(b, loc, 1));
    return arith::SubIOp::create(b, loc, last, i);
  }

  /// `x` combined with `y` as gpu.subgroup_reduce of `kind` combines lanes.
  static FailureOr<Value> combine(OpBuilder &b, Location loc,
                                  gpu::AllReduceOperation kind, Value x,
                                  Value y) {
    switch (kind) {
    case gpu::AllReduceOperation::ADD:
      return arith::AddFOp::create(b, loc, x, y).getResult();
    case gpu::AllReduceOperation::MUL:
      return arith::MulFOp::create(b, loc, x, y).getResult();
    case gpu::AllReduceOperation::MAXIMUMF:
      return arith::MaximumFOp::create(b, loc, x, y).getResult();
    case gpu::AllReduceOperation::MINIMUMF:
      return arith::MinimumFOp::create(b, loc, x, y).getResult();
    case gpu::AllReduceOperation::MAXNUMF:
      return arith::MaxNumFOp::create(b, loc, x, y).getResult();
    case gpu::AllReduceOperation::MINNUMF:
      return arith::MinNumFOp::create(b, loc, x, y).getResult();
    default:
      return failure();
    }
  }

  /// A kernel whose threads wait for each other at the top level of its
  /// body (gpu.barrier; gpu.subgroup_reduce, whose warp combines its lanes'
  /// values): for each block, the threads run the body up to the first
  /// such op one after the other (warp by warp, lane by lane), leaving the
  /// values each reduction takes in a buffer; each warp's values are
  /// combined as the GPU's butterfly does (every lane combines its value
  /// with that of the lane whose index differs in bit i, for i = 0 to 4,
  /// so that each lane gets the result in its order); then the threads
  /// run the body up to the next one, and so on. Values that a later part
  /// uses from an earlier one are recomputed when they are pure (index
  /// arithmetic on the ids), else refused.
  LogicalResult emulateInParts(gpu::LaunchOp launch,
                               SmallVector<Operation *> collectives) {
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    APInt threads;
    if (!matchPattern(block.x, m_ConstantInt(&threads)) ||
        threads.getSExtValue() % dlc::kWarpSize)
      return launch.emitOpError("has warp reductions or barriers but a "
                                "block that is not a constant number of "
                                "whole warps");
    for (Operation *op : collectives)
      if (auto reduce = dyn_cast<gpu::SubgroupReduceOp>(op);
          reduce && !isa<FloatType>(reduce.getType()))
        return reduce.emitOpError("is not a floating-point reduction; "
                                  "dlc-emulate-gpu-launches cannot run it");

    OpBuilder b(launch);
    Location loc = launch.getLoc();
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    int64_t warpsPerBlock = threads.getSExtValue() / dlc::kWarpSize;
    Value zero = idx(0), one = idx(1), warpSize = idx(dlc::kWarpSize),
          warpCount = idx(warpsPerBlock);
    // Each reduction's values, per warp and lane, and the butterfly's
    // next step.
    DenseMap<Operation *, std::pair<Value, Value>> buffers;
    for (Operation *op : collectives)
      if (auto reduce = dyn_cast<gpu::SubgroupReduceOp>(op)) {
        auto type =
            MemRefType::get({warpsPerBlock, dlc::kWarpSize}, reduce.getType());
        buffers[op] = {memref::AllocaOp::create(b, loc, type),
                       memref::AllocaOp::create(b, loc, type)};
      }
    auto blocks = scf::ForOp::create(b, loc, zero, grid.x, one);
    b.setInsertionPoint(blocks.getBody()->getTerminator());
    Value blockId = inOrder(b, loc, blocks.getInductionVar(), grid.x);
    /// A loop over the warps of the block and their lanes, in the order of
    /// the emulation; the builder is left inside, and the warp and lane.
    auto eachLane =
        [&](OpBuilder &builder) -> std::tuple<Operation *, Value, Value> {
      auto warps = scf::ForOp::create(builder, loc, zero, warpCount, one);
      builder.setInsertionPoint(warps.getBody()->getTerminator());
      Value warp = inOrder(builder, loc, warps.getInductionVar(), warpCount);
      auto lanes = scf::ForOp::create(builder, loc, zero, warpSize, one);
      builder.setInsertionPoint(lanes.getBody()->getTerminator());
      Value lane = inOrder(builder, loc, lanes.getInductionVar(), warpSize);
      return {warps, warp, lane};
    };

    Block &body = launch.getBody().front();
    Operation *start = &body.front();
    for (size_t part = 0; part <= collectives.size(); ++part) {
      Operation *end =
          part < collectives.size() ? collectives[part] : body.getTerminator();
      OpBuilder::InsertionGuard guard(b);
      auto [loop, warp, lane] = eachLane(b);
      IRMapping mapping;
      mapIds(mapping, launch, blockId,
             arith::AddIOp::create(
                 b, loc, arith::MulIOp::create(b, loc, warp, warpSize), lane),
             zero, one);
      // The thread's result of each reduction before this part.
      for (size_t c = 0; c < part; ++c)
        if (auto it = buffers.find(collectives[c]); it != buffers.end())
          mapping.map(collectives[c]->getResult(0),
                      memref::LoadOp::create(b, loc, it->second.first,
                                             ValueRange{warp, lane}));
      std::function<LogicalResult(Value)> recompute =
          [&](Value v) -> LogicalResult {
        Operation *def = v.getDefiningOp();
        if (mapping.contains(v) || !def || def->getBlock() != &body ||
            !def->isBeforeInBlock(start))
          return success();
        if (!isMemoryEffectFree(def) || def->getNumRegions())
          return def->emitOpError(
              "is used across a warp reduction or barrier but is not pure; "
              "dlc-emulate-gpu-launches cannot recompute it for each thread");
        for (Value operand : def->getOperands())
          if (failed(recompute(operand)))
            return failure();
        b.clone(*def, mapping);
        return success();
      };
      for (Operation *op = start; op != end; op = op->getNextNode()) {
        WalkResult walked = op->walk([&](Operation *inner) {
          for (Value operand : inner->getOperands())
            if (failed(recompute(operand)))
              return WalkResult::interrupt();
          return WalkResult::advance();
        });
        if (walked.wasInterrupted())
          return failure();
        b.clone(*op, mapping);
      }
      if (part == collectives.size())
        break;
      start = end->getNextNode();
      auto reduce = dyn_cast<gpu::SubgroupReduceOp>(end);
      if (!reduce)
        continue;
      auto [values, next] = buffers[end];
      memref::StoreOp::create(b, loc, mapping.lookup(reduce.getValue()), values,
                              ValueRange{warp, lane});
      // The butterfly, warp by warp.
      b.setInsertionPointAfter(loop);
      for (int64_t bit = 1; bit < dlc::kWarpSize; bit <<= 1) {
        Value distance = idx(bit);
        OpBuilder lb(b);
        auto [steps, w, l] = eachLane(lb);
        Value own = memref::LoadOp::create(lb, loc, values, ValueRange{w, l});
        Value partner = arith::XOrIOp::create(lb, loc, l, distance).getResult();
        Value other =
            memref::LoadOp::create(lb, loc, values, ValueRange{w, partner});
        FailureOr<Value> combined =
            combine(lb, loc, reduce.getOp(), own, other);
        if (failed(combined))
          return reduce.emitOpError("combines with an operation "
                                    "dlc-emulate-gpu-launches cannot run");
        memref::StoreOp::create(lb, loc, *combined, next, ValueRange{w, l});
        b.setInsertionPointAfter(steps);
        memref::CopyOp::create(b, loc, next, values);
      }
    }
    launch.erase();
    return success();
  }
};

} // namespace
