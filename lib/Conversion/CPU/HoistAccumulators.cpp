//===- HoistAccumulators.cpp - register-tile accumulators out of k --------===//
//
// See HoistAccumulators.h.
//
//===----------------------------------------------------------------------===//
#include "HoistAccumulators.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace {

/// The allocation or block argument that `memref` is a view of.
Value rootOf(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

/// Whether `a` and `b` are views of different buffers. Distinct function
/// arguments are distinct buffers: the entry ABI's outputs must not overlap
/// its inputs, and the runtime owns the parameters and the workspace.
bool disjointBuffers(Value a, Value b) { return rootOf(a) != rootOf(b); }

/// The write of `read`'s tile back to where it was read, if nothing else in
/// `loop` writes memory or reads a buffer that may be `read`'s.
vector::TransferWriteOp matchingWrite(scf::ForOp loop,
                                      vector::TransferReadOp read) {
  vector::TransferWriteOp write;
  bool safe = true;
  loop.getBody()->walk([&](Operation *op) {
    if (op == read)
      return WalkResult::advance();
    if (auto w = dyn_cast<vector::TransferWriteOp>(op)) {
      bool same = w.getBase() == read.getBase() &&
                  w.getIndices() == read.getIndices() &&
                  w.getVectorType() == read.getVectorType() &&
                  w.getPermutationMap() == read.getPermutationMap() &&
                  !w.getMask() && w->getBlock() == read->getBlock();
      if (!same || write) {
        safe = false;
        return WalkResult::interrupt();
      }
      write = w;
      return WalkResult::advance();
    }
    // An op's own effects (a linalg op's on its operands), then those of
    // the ops nested in it, which the walk visits.
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface) {
      if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::advance();
      safe = false;
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &e : effects) {
      Value v = e.getValue();
      if (!isa<MemoryEffects::Read>(e.getEffect()) || !v ||
          !disjointBuffers(v, read.getBase())) {
        safe = false;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (!safe || !write || !read->isBeforeInBlock(write))
    return {};
  return write;
}

/// Hoists one pair out of `loop`; returns the loop that replaces it, or
/// null when there was nothing to hoist.
scf::ForOp hoistOne(RewriterBase &rewriter, scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  if (!lb || !ub || *lb >= *ub)
    return {};
  for (auto read : loop.getBody()->getOps<vector::TransferReadOp>()) {
    if (!isa<MemRefType>(read.getBase().getType()) || read.getMask() ||
        !loop.isDefinedOutsideOfLoop(read.getBase()) ||
        !llvm::all_of(read.getIndices(),
                      [&](Value i) { return loop.isDefinedOutsideOfLoop(i); }))
      continue;
    vector::TransferWriteOp write = matchingWrite(loop, read);
    if (!write)
      continue;
    rewriter.setInsertionPoint(loop);
    Value init = rewriter.clone(*read)->getResult(0);
    Value tile = write.getVector();
    FailureOr<LoopLikeOpInterface> grown = loop.replaceWithAdditionalYields(
        rewriter, init, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{tile};
        });
    if (failed(grown))
      return {};
    auto newLoop = cast<scf::ForOp>(grown->getOperation());
    rewriter.replaceOp(read, newLoop.getRegionIterArgs().back());
    rewriter.setInsertionPointAfter(newLoop);
    vector::TransferWriteOp::create(
        rewriter, write.getLoc(), newLoop.getResults().back(), write.getBase(),
        write.getIndices(), write.getPermutationMapAttr(),
        write.getInBoundsAttr());
    rewriter.eraseOp(write);
    return newLoop;
  }
  return {};
}

} // namespace

void mlir::dlc::hoistAccumulators(Operation *root) {
  IRRewriter rewriter(root->getContext());
  // Inner loops first (post-order), so that a tile hoisted out of one can
  // leave its enclosing loop too. Hoisting replaces only the loop itself.
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops)
    while (scf::ForOp grown = hoistOne(rewriter, loop))
      loop = grown;
}
