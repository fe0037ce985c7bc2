//===- LowerCollectives.cpp - dlc-lower-collectives -----------------------===//
//
// The buffer forms of dlc.all_reduce, dlc.reduce_scatter, dlc.all_gather
// and dlc.shard become calls of libdlcrt's communicator: on the CPU through
// a context argument the entry gains, on CUDA through the entry's CUDA
// context (the same calls, named dlc_cuda_comm_*). See Passes.td and
// docs/runtime-abi.md.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/BufferViews.h"
#include "dlc/Conversion/Passes.h"
#include "dlc/Conversion/RuntimeCalls.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCLOWERCOLLECTIVESPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// The CPU calls' prefix; their CUDA forms replace it with dlc_cuda_.
constexpr StringLiteral kCpuPrefix = "dlc_";
constexpr StringLiteral kBucketAdd = "dlc_comm_bucket_add";
constexpr StringLiteral kBucketReduce = "dlc_comm_bucket_reduce";
constexpr StringLiteral kBucketStart = "dlc_comm_bucket_start";
constexpr StringLiteral kWait = "dlc_comm_wait";
constexpr StringLiteral kBucketAddPair = "dlc_comm_bucket_add_pair";
constexpr StringLiteral kBucketReduceScatter = "dlc_comm_bucket_reduce_scatter";
constexpr StringLiteral kBucketAllGather = "dlc_comm_bucket_all_gather";
constexpr StringLiteral kBucketShard = "dlc_comm_bucket_shard";

/// The first op after `from` in its block that uses one of `buffers` or a
/// view of one (in a nested region too), else the block's terminator.
Operation *firstUseAfter(Operation *from, ValueRange buffers) {
  llvm::DenseSet<Value> aliases;
  for (Value b : buffers)
    for (Value v : bufferAndViews(b))
      aliases.insert(v);
  for (Operation *op = from->getNextNode(); op; op = op->getNextNode()) {
    bool uses = false;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (aliases.contains(v))
          uses = true;
      return uses ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (uses || op->hasTrait<OpTrait::IsTerminator>())
      return op;
  }
  return nullptr;
}

/// The context argument named `argName` of `func` (the communicator's on
/// the CPU, the CUDA context on CUDA), added last if missing.
FailureOr<Value> contextArgument(func::FuncOp func, StringRef argName) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName);
        name && name.getValue() == argName)
      return Value(func.getArgument(i));
  MLIRContext *ctx = func.getContext();
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(
          index, LLVM::LLVMPointerType::get(ctx),
          DictionaryAttr::get(
              ctx, {NamedAttribute(StringAttr::get(ctx, kNameAttrName),
                                   StringAttr::get(ctx, argName))}),
          func.getLoc())))
    return failure();
  return Value(func.getArgument(index));
}

/// Whether `buffer` is one dense row-major block (identity layout, or
/// strides that are the row-major ones).
bool isContiguous(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset))
    return false;
  int64_t expected = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (type.getDimSize(d) != 1 && strides[d] != expected)
      return false;
    expected *= type.getDimSize(d);
  }
  return true;
}

/// The runtime function `name` (a CPU communicator call, dlc_comm_*), or
/// its CUDA form (dlc_cuda_comm_*), declared private in `module`.
func::FuncOp declare(ModuleOp module, StringRef name, TypeRange args,
                     bool cuda) {
  std::string symbol =
      cuda ? ("dlc_cuda_" + name.drop_front(kCpuPrefix.size())).str()
           : name.str();
  name = symbol;
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  auto b = OpBuilder::atBlockEnd(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(args, {}));
  f.setPrivate();
  return f;
}

/// A buffer of a collective made one dense block: `dense` is `buffer`, or
/// a copy of it when it is a strided view.
struct DenseBuffer {
  Value buffer, dense;
  bool copied() const { return buffer != dense; }
};

/// `buffer` as one dense block; a copy in (`read`) is made before the
/// collective. Null when its type cannot be communicated, or when it is a
/// strided view in device memory (`cuda`: the host cannot copy it).
FailureOr<DenseBuffer> denseBuffer(OpBuilder &b, Location loc, Value buffer,
                                   bool read, bool cuda) {
  auto type = cast<MemRefType>(buffer.getType());
  if (!dtypeCode(type.getElementType()) || !type.hasStaticShape())
    return failure();
  if (isContiguous(type))
    return DenseBuffer{buffer, buffer};
  if (cuda)
    return failure();
  Value dense = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()));
  if (read)
    memref::CopyOp::create(b, loc, buffer, dense);
  return DenseBuffer{buffer, dense};
}

Value elementCount(OpBuilder &b, Location loc, Value buffer) {
  return i64(b, loc, cast<MemRefType>(buffer.getType()).getNumElements());
}

struct DlcLowerCollectivesPass
    : dlc::impl::DlcLowerCollectivesPassBase<DlcLowerCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (device != "cpu" && device != "cuda") {
      module.emitError("dlc-lower-collectives: device must be cpu or cuda, "
                       "not '")
          << device << "'";
      return signalPassFailure();
    }
    SmallVector<Operation *> collectives;
    module.walk([&](Operation *op) {
      if (isa<AllReduceOp, ReduceScatterOp, AllGatherOp, ShardOp>(op))
        collectives.push_back(op);
    });
    for (Operation *op : collectives) {
      FailureOr<Value> ctx = contextFor(op);
      if (failed(ctx))
        return signalPassFailure();
      LogicalResult lowered =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](AllReduceOp r) { return lower(module, *ctx, r); })
              .Default(
                  [&](Operation *) { return lowerSharding(module, *ctx, op); });
      if (failed(lowered))
        return signalPassFailure();
    }
  }

  bool onCuda() const { return device == "cuda"; }

  func::FuncOp declare(ModuleOp module, StringRef name, TypeRange args) {
    return ::declare(module, name, args, onCuda());
  }

  FailureOr<DenseBuffer> denseBuffer(OpBuilder &b, Location loc, Value buffer,
                                     bool read) {
    return ::denseBuffer(b, loc, buffer, read, onCuda());
  }

  /// The communicator context of the entry `op` is in; an error on `op`
  /// when it is still on tensors or outside a function.
  FailureOr<Value> contextFor(Operation *op) {
    if (op->getNumResults() != 0) {
      op->emitOpError("must be bufferized before dlc-lower-collectives");
      return failure();
    }
    FailureOr<Value> ctx = failure();
    if (auto func = op->getParentOfType<func::FuncOp>())
      ctx =
          contextArgument(func, onCuda() ? kCudaContextName : kCommContextName);
    if (failed(ctx))
      op->emitOpError("is not in a function that can take the communicator "
                      "context");
    return ctx;
  }

  LogicalResult lower(ModuleOp module, Value ctx, AllReduceOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type i64Ty = b.getI64Type(), i32Ty = b.getI32Type();
    func::FuncOp add =
        declare(module, kBucketAdd, {ctx.getType(), i64Ty, i64Ty, i32Ty});
    func::FuncOp reduce = declare(
        module, overlap ? kBucketStart : kBucketReduce, {ctx.getType(), i32Ty});
    // Buffers that are not one block go through a contiguous copy.
    SmallVector<DenseBuffer> copies;
    for (Value buffer : op.getInputs()) {
      FailureOr<DenseBuffer> dense = denseBuffer(b, loc, buffer, /*read=*/true);
      if (failed(dense))
        return op.emitOpError("cannot reduce a buffer of type ")
               << buffer.getType()
               << (onCuda() ? " on CUDA (a strided view of device memory, or "
                              "a type without a dtype)"
                            : "");
      if (dense->copied())
        copies.push_back(*dense);
      func::CallOp::create(
          b, loc, add,
          ValueRange{ctx, addressOf(b, loc, dense->dense, 0),
                     elementCount(b, loc, buffer),
                     i32(b, loc, *dtypeCode(getElementTypeOrSelf(buffer)))});
    }
    func::CallOp::create(
        b, loc, reduce,
        ValueRange{ctx, i32(b, loc, static_cast<int32_t>(op.getReduction()))});
    // The copies back wait for the bucket; the buffers reduced in place
    // are waited for before their next use.
    if (overlap) {
      func::FuncOp wait = declare(module, kWait, {ctx.getType()});
      if (!copies.empty()) {
        func::CallOp::create(b, loc, wait, ValueRange{ctx});
      } else if (Operation *next = firstUseAfter(op, op.getInputs())) {
        OpBuilder wb(next);
        func::CallOp::create(wb, loc, wait, ValueRange{ctx});
      }
    }
    copyBack(b, loc, copies);
    op.erase();
    return success();
  }

  /// dlc.reduce_scatter, dlc.all_gather and dlc.shard: one bucket of
  /// (input, init) pairs, then the call that runs it (always synchronous).
  LogicalResult lowerSharding(ModuleOp module, Value ctx, Operation *op) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Type i64Ty = b.getI64Type(), i32Ty = b.getI32Type();
    func::FuncOp add =
        declare(module, kBucketAddPair,
                {ctx.getType(), i64Ty, i64Ty, i64Ty, i64Ty, i32Ty});
    unsigned numInputs = op->getNumOperands() / 2;
    SmallVector<DenseBuffer> copies, inputCopies;
    for (unsigned i = 0; i < numInputs; ++i) {
      Value in = op->getOperand(i), init = op->getOperand(numInputs + i);
      FailureOr<DenseBuffer> denseIn = denseBuffer(b, loc, in, /*read=*/true);
      FailureOr<DenseBuffer> denseInit =
          denseBuffer(b, loc, init, /*read=*/false);
      if (failed(denseIn) || failed(denseInit))
        return op->emitOpError("cannot communicate buffers of type ")
               << in.getType() << " and " << init.getType();
      if (denseIn->copied())
        inputCopies.push_back(*denseIn);
      if (denseInit->copied())
        copies.push_back(*denseInit);
      func::CallOp::create(
          b, loc, add,
          ValueRange{ctx, addressOf(b, loc, denseIn->dense, 0),
                     elementCount(b, loc, in),
                     addressOf(b, loc, denseInit->dense, 0),
                     elementCount(b, loc, init),
                     i32(b, loc, *dtypeCode(getElementTypeOrSelf(in)))});
    }
    if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
      func::FuncOp run =
          declare(module, kBucketReduceScatter, {ctx.getType(), i32Ty});
      func::CallOp::create(
          b, loc, run,
          ValueRange{
              ctx, i32(b, loc, static_cast<int32_t>(scatter.getReduction()))});
    } else {
      func::FuncOp run = declare(
          module, isa<AllGatherOp>(op) ? kBucketAllGather : kBucketShard,
          {ctx.getType()});
      func::CallOp::create(b, loc, run, ValueRange{ctx});
    }
    for (const DenseBuffer &c : inputCopies)
      memref::DeallocOp::create(b, loc, c.dense);
    copyBack(b, loc, copies);
    op->erase();
    return success();
  }

  /// The results of the dense copies go back into their strided buffers.
  void copyBack(OpBuilder &b, Location loc, ArrayRef<DenseBuffer> copies) {
    for (const DenseBuffer &c : copies) {
      memref::CopyOp::create(b, loc, c.dense, c.buffer);
      memref::DeallocOp::create(b, loc, c.dense);
    }
  }
};

} // namespace
