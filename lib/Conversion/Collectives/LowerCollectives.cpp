//===- LowerCollectives.cpp - dlc-lower-collectives -----------------------===//
//
// The buffer form of dlc.all_reduce becomes calls of libdlcrt's
// communicator, through a context argument the entry gains. See Passes.td
// and docs/runtime-abi.md.
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

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCLOWERCOLLECTIVESPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

constexpr StringLiteral kBucketAdd = "dlc_comm_bucket_add";
constexpr StringLiteral kBucketReduce = "dlc_comm_bucket_reduce";
constexpr StringLiteral kBucketStart = "dlc_comm_bucket_start";
constexpr StringLiteral kWait = "dlc_comm_wait";

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

/// The communicator context argument of `func`, added last if missing.
FailureOr<Value> commContext(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName);
        name && name.getValue() == kCommContextName)
      return Value(func.getArgument(i));
  MLIRContext *ctx = func.getContext();
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(
          index, LLVM::LLVMPointerType::get(ctx),
          DictionaryAttr::get(
              ctx, {NamedAttribute(StringAttr::get(ctx, kNameAttrName),
                                   StringAttr::get(ctx, kCommContextName))}),
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

func::FuncOp declare(ModuleOp module, StringRef name, TypeRange args) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  auto b = OpBuilder::atBlockEnd(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(args, {}));
  f.setPrivate();
  return f;
}

struct DlcLowerCollectivesPass
    : dlc::impl::DlcLowerCollectivesPassBase<DlcLowerCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AllReduceOp> reduces;
    module.walk([&](AllReduceOp op) { reduces.push_back(op); });
    for (AllReduceOp op : reduces)
      if (failed(lower(module, op)))
        return signalPassFailure();
  }

  LogicalResult lower(ModuleOp module, AllReduceOp op) {
    if (op.getNumResults() != 0)
      return op.emitOpError("must be bufferized before dlc-lower-collectives");
    auto func = op->getParentOfType<func::FuncOp>();
    FailureOr<Value> ctxArg = failure();
    if (func)
      ctxArg = commContext(func);
    if (failed(ctxArg))
      return op.emitOpError("is not in a function that can take the "
                            "communicator context");
    Value ctx = *ctxArg;
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type i64Ty = b.getI64Type(), i32Ty = b.getI32Type();
    func::FuncOp add =
        declare(module, kBucketAdd, {ctx.getType(), i64Ty, i64Ty, i32Ty});
    func::FuncOp reduce = declare(
        module, overlap ? kBucketStart : kBucketReduce, {ctx.getType(), i32Ty});
    // Buffers that are not one block go through a contiguous copy.
    SmallVector<std::pair<Value, Value>> copies;
    for (Value buffer : op.getInputs()) {
      auto type = cast<MemRefType>(buffer.getType());
      std::optional<int32_t> dtype = dtypeCode(type.getElementType());
      if (!dtype || !type.hasStaticShape())
        return op.emitOpError("cannot reduce a buffer of type ") << type;
      Value dense = buffer;
      if (!isContiguous(type)) {
        dense = memref::AllocOp::create(
            b, loc, MemRefType::get(type.getShape(), type.getElementType()));
        memref::CopyOp::create(b, loc, buffer, dense);
        copies.emplace_back(dense, buffer);
      }
      func::CallOp::create(b, loc, add,
                           ValueRange{ctx, addressOf(b, loc, dense, 0),
                                      i64(b, loc, type.getNumElements()),
                                      i32(b, loc, *dtype)});
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
    for (auto [dense, buffer] : copies) {
      memref::CopyOp::create(b, loc, dense, buffer);
      memref::DeallocOp::create(b, loc, dense);
    }
    op.erase();
    return success();
  }
};

} // namespace
