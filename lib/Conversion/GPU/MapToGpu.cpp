//===- MapToGpu.cpp - dlc-map-to-gpu --------------------------------------===//
//
// Turns every op of a bufferized CUDA entry (and of its host loops' bodies,
// a recurrent layer's steps) that dlc-map-gemms left into a GPU kernel
// (`gpu.launch`, built by KernelBuilder.h) or a device copy (a runtime
// call), leaving only address arithmetic and loops on the host. Scalars
// computed from device memory run in single-thread kernels, which leave them
// in scratch buffers for the later kernels. See Passes.td and docs/gpu.md.
//
//===----------------------------------------------------------------------===//

#include "GpuMapping.h"
#include "KernelBuilder.h"

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCMAPTOGPUPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::gpu_mapping;

namespace {

struct DlcMapToGpuPass : dlc::impl::DlcMapToGpuPassBase<DlcMapToGpuPass> {
  using DlcMapToGpuPassBase::DlcMapToGpuPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (func->hasAttr(kEntryAttrName) && !func.isExternal() &&
          failed(mapEntry(module, func)))
        return signalPassFailure();
  }

  LogicalResult mapEntry(ModuleOp module, func::FuncOp func) {
    FailureOr<Value> cudaCtx = addCudaContext(func);
    if (failed(cudaCtx))
      return failure();
    Block &body = func.front();

    // Scalars computed from device memory (the optimizer's step count and
    // bias corrections) are computed by single-thread kernels that leave
    // them in device scratch buffers, which later kernels read.
    scratch.clear();
    deviceValues.clear();
    SmallVector<Operation *> hostScalarOps;
    if (failed(mapBlock(module, func, body, *cudaCtx, hostScalarOps)))
      return failure();
    // The host copies of the device scalars are dead now, unless a host op
    // (an address computation) needed one.
    for (Operation *op : llvm::reverse(hostScalarOps)) {
      if (op->use_empty()) {
        op->erase();
        continue;
      }
      if (!isa<arith::ConstantOp>(op))
        return (*op->user_begin())
            ->emitOpError("uses a value computed from device memory on the "
                          "host");
    }
    return success();
  }

  /// Maps the ops of `block` (the entry's, or a host loop's body), adding
  /// the host copies of the device scalars it computes to `hostScalarOps`.
  LogicalResult mapBlock(ModuleOp module, func::FuncOp func, Block &block,
                         Value cudaCtx,
                         SmallVectorImpl<Operation *> &hostScalarOps) {
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation &op = *ops[i];
      if (isDeviceScalar(op)) {
        SmallVector<Operation *> run = {&op};
        while (i + 1 < ops.size() && (isDeviceScalar(*ops[i + 1]) ||
                                      isa<arith::ConstantOp>(ops[i + 1])))
          run.push_back(ops[++i]);
        mapScalars(run);
        hostScalarOps.append(run);
        continue;
      }
      // A loop over device work without loop-carried values (a recurrent
      // layer's steps) stays on the host, its body mapped like the entry's:
      // each iteration launches its kernels and calls its GEMMs, all
      // recorded in the entry's CUDA graph.
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        if (loop.getNumResults() != 0)
          return loop.emitOpError(
              "cannot run in a CUDA entry: its loop-carried values would be "
              "computed on the host");
        if (failed(mapBlock(module, func, *loop.getBody(), cudaCtx,
                            hostScalarOps)))
          return failure();
        continue;
      }
      // An op that reads or writes one of two buffers, chosen on the host
      // (a recurrent layer's backward step reads the initial state at the
      // first step, the state saved by the step before at the others),
      // becomes an scf.if on the host, each branch the op on one buffer:
      // the entry's CUDA graph records the branch each iteration takes.
      if (isa<linalg::LinalgOp, memref::CopyOp>(op))
        if (auto [operand, select] = selectedOperand(op); select) {
          if (failed(splitOnSelect(module, func, op, *operand, select, cudaCtx,
                                   hostScalarOps)))
            return failure();
          continue;
        }
      // Address arithmetic (views, casts, pointers, index math) and buffer
      // allocation stay on the host, as do the GEMM calls and kernels of
      // dlc-map-gemms, and a data-parallel step's collectives
      // (dlc-lower-collectives makes them NCCL calls on the stream).
      if ((isPure(&op) && !isa<linalg::LinalgOp>(op)) ||
          isa<func::ReturnOp, func::CallOp, gpu::LaunchOp, memref::AllocOp,
              memref::DeallocOp, scf::YieldOp, AllReduceOp, ReduceScatterOp,
              AllGatherOp, ShardOp>(op))
        continue;
      LogicalResult mapped = failure();
      if (auto copy = dyn_cast<memref::CopyOp>(op))
        mapped = mapCopy(module, func, copy, cudaCtx);
      else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
        mapped = mapToKernel(linalgOp, scratch, getArgument());
      else
        return op.emitOpError("cannot run in a CUDA entry: it would touch "
                              "device memory from the host");
      if (failed(mapped))
        return failure();
    }
    return success();
  }

  /// `v` without the memref.casts that produced it.
  static Value withoutCasts(Value v) {
    while (auto cast = v.getDefiningOp<memref::CastOp>())
      v = cast.getSource();
    return v;
  }

  /// The first operand of `op` that is a host-side arith.select of two
  /// buffers (through memref.casts), and that select.
  static std::pair<OpOperand *, arith::SelectOp>
  selectedOperand(Operation &op) {
    for (OpOperand &operand : op.getOpOperands()) {
      auto select =
          withoutCasts(operand.get()).getDefiningOp<arith::SelectOp>();
      if (select && isa<MemRefType>(select.getType()))
        return {&operand, select};
    }
    return {nullptr, {}};
  }

  /// `op` as an scf.if on `select`'s condition whose branches run it on
  /// the select's true and false buffers (the casts in between dropped:
  /// each branch keeps its buffer's own layout), each branch mapped.
  LogicalResult splitOnSelect(ModuleOp module, func::FuncOp func, Operation &op,
                              OpOperand &operand, arith::SelectOp select,
                              Value cudaCtx,
                              SmallVectorImpl<Operation *> &hostScalarOps) {
    if (deviceValues.contains(select.getCondition()))
      return op.emitOpError("chooses a buffer by a value in device memory");
    OpBuilder b(&op);
    auto branch = scf::IfOp::create(b, op.getLoc(), select.getCondition(),
                                    /*withElseRegion=*/true);
    unsigned index = operand.getOperandNumber();
    for (auto [block, chosen] :
         {std::pair(branch.thenBlock(), select.getTrueValue()),
          std::pair(branch.elseBlock(), select.getFalseValue())}) {
      OpBuilder bb = OpBuilder::atBlockBegin(block);
      Operation *clone = bb.clone(op);
      clone->setOperand(index, withoutCasts(chosen));
      if (failed(mapBlock(module, func, *block, cudaCtx, hostScalarOps)))
        return failure();
    }
    op.erase();
    return success();
  }

  /// Results of device-scalar ops, and the scratch buffer of each one that
  /// a later kernel reads.
  DenseSet<Value> deviceValues;
  ScratchBuffers scratch;

  /// A load from or a store to device memory, or a pure scalar op of a
  /// device scalar.
  bool isDeviceScalar(Operation &op) {
    bool scalar = isa<memref::LoadOp, memref::StoreOp>(op) ||
                  (!op.getNumRegions() && op.getNumResults() && isPure(&op) &&
                   llvm::none_of(op.getResultTypes(),
                                 [](Type t) { return isa<ShapedType>(t); }) &&
                   llvm::any_of(op.getOperands(), [&](Value v) {
                     return deviceValues.contains(v);
                   }));
    if (scalar)
      deviceValues.insert(op.getResults().begin(), op.getResults().end());
    return scalar;
  }

  /// A single-thread kernel computing `run` and storing each value that a
  /// later op uses into a 0-d device buffer (placed by dlc-plan-memory).
  void mapScalars(ArrayRef<Operation *> run) {
    DenseSet<Operation *> inRun(run.begin(), run.end());
    OpBuilder b(run.front());
    Location loc = run.front()->getLoc();
    Block *body = run.front()->getBlock();
    SmallVector<std::pair<Value, Value>> escaping;
    for (Operation *op : run) {
      if (isa<arith::ConstantOp>(op))
        continue;
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *u) {
              return !inRun.contains(body->findAncestorOpInBlock(*u));
            }))
          escaping.push_back(
              {r, memref::AllocOp::create(b, loc,
                                          MemRefType::get({}, r.getType()))});
    }
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
    launch->setAttr(kPointsAttrName, b.getDenseI64ArrayAttr({}));
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    IRMapping mapping;
    loadScratch(kb, mapping, run, scratch);
    for (Operation *op : run)
      kb.clone(*op, mapping);
    for (auto [value, buffer] : escaping) {
      memref::StoreOp::create(kb, loc, mapping.lookup(value), buffer,
                              ValueRange{});
      scratch[value] = buffer;
    }
    gpu::TerminatorOp::create(kb, loc);
  }

  /// A copy between contiguous buffers is one device-to-device memcpy;
  /// any other copy is a kernel.
  LogicalResult mapCopy(ModuleOp module, func::FuncOp func, memref::CopyOp op,
                        Value cudaCtx) {
    auto src = cast<MemRefType>(op.getSource().getType());
    auto dst = cast<MemRefType>(op.getTarget().getType());
    OpBuilder b(op);
    Location loc = op.getLoc();
    // A copy of at most a block's worth of elements (an output of a small
    // step, the loss, the step count) is a kernel, which fuses with the
    // step's others, where a device copy would be a launch of its own.
    if (src.getLayout().isIdentity() && dst.getLayout().isIdentity() &&
        src.hasStaticShape() && src.getElementType() == dst.getElementType() &&
        src.getNumElements() > kThreadsPerBlock) {
      int64_t bytes = src.getNumElements() * src.getElementTypeBitWidth() / 8;
      func::FuncOp memcpy = declareRuntimeFunction(
          module, func, "dlc_cuda_memcpy",
          {cudaCtx.getType(), b.getI64Type(), b.getI64Type(), b.getI64Type()});
      func::CallOp::create(
          b, loc, memcpy,
          ValueRange{cudaCtx, addressOf(b, loc, op.getTarget(), 0),
                     addressOf(b, loc, op.getSource(), 0), i64(b, loc, bytes)});
      op->erase();
      return success();
    }
    auto copy = linalg::CopyOp::create(b, loc, op.getSource(), op.getTarget());
    op->erase();
    return mapToKernel(cast<linalg::LinalgOp>(copy.getOperation()), scratch,
                       getArgument());
  }
};

} // namespace
