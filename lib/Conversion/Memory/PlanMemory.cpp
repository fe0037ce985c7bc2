//===- PlanMemory.cpp - dlc-plan-memory -----------------------------------===//
//
// Places the intermediate buffers of every entry in one workspace argument,
// reusing memory between buffers whose lifetimes do not overlap. See
// Passes.td for the contract and docs/memory.md for how the plan is used.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCPLANMEMORYPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

constexpr int64_t kAlignment = 64;

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  int64_t start = 0, end = 0; ///< live range, in top-level op positions
  int64_t offset = -1;
};

constexpr int64_t kMaxBufferBytes = int64_t(1) << 48;
int64_t alignUp(int64_t n) {
  return (n + kAlignment - 1) / kAlignment * kAlignment;
}

/// The position of the top-level op of `body` that contains `op`.
int64_t positionIn(Block &body, Operation *op,
                   const llvm::DenseMap<Operation *, int64_t> &position) {
  Operation *top = body.findAncestorOpInBlock(*op);
  return top ? position.lookup(top) : 0;
}

/// The last position at which `value` or a view of it is used.
int64_t lastUse(Block &body, Value value,
                const llvm::DenseMap<Operation *, int64_t> &position) {
  int64_t last = 0;
  SmallVector<Value> work{value};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      // Freeing is not a use: the workspace replaces it.
      if (isa<memref::DeallocOp>(user))
        continue;
      last = std::max(last, positionIn(body, user, position));
      // Views alias the buffer: their uses keep it alive.
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v)
        for (Value r : user->getResults())
          work.push_back(r);
    }
  }
  return last;
}

bool livesOverlap(const Buffer &a, const Buffer &b) {
  return a.start <= b.end && b.start <= a.end;
}
bool bytesOverlap(const Buffer &a, const Buffer &b) {
  return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

struct DlcPlanMemoryPass : dlc::impl::DlcPlanMemoryPassBase<DlcPlanMemoryPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func->hasAttr(kEntryAttrName) && !func.isExternal() &&
          failed(plan(func)))
        return signalPassFailure();
  }

  LogicalResult plan(func::FuncOp func) {
    MLIRContext *ctx = &getContext();
    if (!func.getBody().hasOneBlock())
      return func.emitOpError("entry has more than one block; cannot plan "
                              "its memory");
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, int64_t> position;
    int64_t pos = 0;
    for (Operation &op : body)
      position[&op] = pos++;

    // The buffers: every static, identity-layout allocation of the body.
    // An allocation nested in a loop (the matmul kernels' per-thread packing
    // buffers) is one per iteration, not one per call: it stays.
    SmallVector<Buffer> buffers;
    WalkResult nested = func.walk([&](memref::AllocOp alloc) {
      if (alloc->getBlock() != &body)
        return WalkResult::advance();
      MemRefType t = alloc.getType();
      if (!t.hasStaticShape() || !t.getLayout().isIdentity() ||
          !alloc.getDynamicSizes().empty() ||
          !alloc.getSymbolOperands().empty()) {
        alloc.emitOpError("has no static shape and identity layout; cannot "
                          "place it in the workspace");
        return WalkResult::interrupt();
      }
      // No machine has more than 2^48 bytes; with every buffer below that,
      // the offsets below cannot overflow.
      int64_t bytes = 1, elementBytes = (t.getElementTypeBitWidth() + 7) / 8;
      for (int64_t d : t.getShape())
        if (llvm::MulOverflow(bytes, d, bytes) || bytes > kMaxBufferBytes)
          break;
      if (bytes > kMaxBufferBytes ||
          llvm::MulOverflow(bytes, elementBytes, bytes) ||
          bytes > kMaxBufferBytes) {
        alloc.emitOpError("needs more than 2^48 bytes (256 TiB), more than "
                          "any machine's memory");
        return WalkResult::interrupt();
      }
      Buffer b;
      b.alloc = alloc;
      b.bytes = alignUp(std::max<int64_t>(1, bytes));
      b.start = position.lookup(alloc);
      b.end = std::max(b.start, lastUse(body, alloc.getResult(), position));
      buffers.push_back(b);
      return WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return failure();

    // Greedy by size: the largest first, each at the lowest offset that
    // overlaps no placed buffer alive at the same time.
    SmallVector<Buffer *> order;
    for (Buffer &b : buffers)
      order.push_back(&b);
    llvm::stable_sort(order,
                      [](Buffer *a, Buffer *b) { return a->bytes > b->bytes; });
    SmallVector<Buffer *> placed;
    int64_t total = 0;
    for (Buffer *b : order) {
      SmallVector<Buffer *> conflicts;
      for (Buffer *p : placed)
        if (livesOverlap(*b, *p))
          conflicts.push_back(p);
      llvm::sort(conflicts,
                 [](Buffer *x, Buffer *y) { return x->offset < y->offset; });
      int64_t offset = 0;
      for (Buffer *c : conflicts) {
        if (offset + b->bytes <= c->offset)
          break;
        offset = std::max(offset, c->offset + c->bytes);
      }
      b->offset = offset;
      int64_t end;
      if (llvm::AddOverflow(offset, b->bytes, end))
        return b->alloc.emitOpError("does not fit in a workspace of 2^63 "
                                    "bytes");
      total = std::max(total, end);
      placed.push_back(b);
    }

    // The plan's invariant, checked over every pair.
    for (size_t i = 0; i < buffers.size(); ++i)
      for (size_t j = i + 1; j < buffers.size(); ++j)
        if (livesOverlap(buffers[i], buffers[j]) &&
            bytesOverlap(buffers[i], buffers[j]))
          return buffers[j].alloc.emitOpError(
              "internal error: the memory plan gives it bytes of a "
              "buffer that is alive at the same time");

    // The workspace argument, last, and the views into it.
    auto wsType = MemRefType::get({total}, IntegerType::get(ctx, 8));
    unsigned idx = func.getNumArguments();
    Builder attrs(ctx);
    if (failed(func.insertArgument(
            idx, wsType,
            attrs.getDictionaryAttr(
                {attrs.getNamedAttr(kNameAttrName,
                                    attrs.getStringAttr("workspace")),
                 attrs.getNamedAttr("llvm.noalias", attrs.getUnitAttr())}),
            func.getLoc())))
      return failure();
    Value ws = func.getArgument(idx);
    for (Buffer &b : buffers) {
      OpBuilder builder(b.alloc);
      Value offset =
          arith::ConstantIndexOp::create(builder, b.alloc.getLoc(), b.offset);
      auto view =
          memref::ViewOp::create(builder, b.alloc.getLoc(), b.alloc.getType(),
                                 ws, offset, ValueRange{});
      // Deallocations belong to the workspace now.
      for (Operation *user :
           llvm::make_early_inc_range(b.alloc.getResult().getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      b.alloc.replaceAllUsesWith(view.getResult());
      b.alloc.erase();
    }
    int64_t unshared = 0;
    for (Buffer &b : buffers)
      unshared += b.bytes;
    func->setAttr(kWorkspaceBytesAttrName,
                  IntegerAttr::get(IntegerType::get(ctx, 64), total));
    // Without reuse the buffers would take this much (the report's reuse
    // factor).
    func->setAttr(kBufferBytesAttrName,
                  IntegerAttr::get(IntegerType::get(ctx, 64), unshared));
    return success();
  }
};

} // namespace
