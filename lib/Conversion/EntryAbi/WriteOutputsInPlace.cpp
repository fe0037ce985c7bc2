//===- WriteOutputsInPlace.cpp - dlc-write-outputs-in-place ---------------===//
//
// Lets the ops that produce an entry's output compute straight into the
// caller's buffer: the `tensor.empty` the output's chain of destination
// operands starts from becomes a `to_tensor` of that buffer, where nothing
// else can see it. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCWRITEOUTPUTSINPLACEPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// The destination operand at the start of `out`'s chain: from the op
/// that produces `out` back through the destination operands tied to the
/// results, to the operand that takes a `tensor.empty` (or a fill of one
/// that other ops share, which the caller clones). Every value between has
/// one use, so the chain is the only reader of the buffer it ends up in.
/// Null when the chain ends anywhere else.
OpOperand *chainStart(Value out) {
  Value v = out;
  while (true) {
    auto result = dyn_cast<OpResult>(v);
    if (!result)
      return nullptr;
    auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
    if (!dps || !dps.hasPureTensorSemantics())
      return nullptr;
    OpOperand *init = dps.getTiedOpOperand(result);
    Value next = init->get();
    if (next.getType() != v.getType())
      return nullptr;
    if (next.getDefiningOp<tensor::EmptyOp>())
      return init;
    if (!next.hasOneUse()) {
      auto fill = next.getDefiningOp<linalg::FillOp>();
      bool fillOfEmpty =
          fill && fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
      return fillOfEmpty ? init : nullptr;
    }
    v = next;
  }
}

struct DlcWriteOutputsInPlacePass
    : dlc::impl::DlcWriteOutputsInPlacePassBase<DlcWriteOutputsInPlacePass> {
  using DlcWriteOutputsInPlacePassBase::DlcWriteOutputsInPlacePassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](bufferization::MaterializeInDestinationOp m) {
      // An output buffer of the entry, seen by nothing but this op.
      Value dest = m.getDest();
      auto tensorType = dyn_cast<RankedTensorType>(m.getSource().getType());
      if (!isa<BlockArgument>(dest) || !isa<MemRefType>(dest.getType()) ||
          !m.getRestrict() || !m.getWritable() || !dest.hasOneUse() ||
          !tensorType || !tensorType.hasStaticShape())
        return;
      OpOperand *start = chainStart(m.getSource());
      if (!start)
        return;
      Operation *user = start->getOwner();
      rewriter.setInsertionPoint(user);
      Value buffer = bufferization::ToTensorOp::create(
          rewriter, m.getLoc(), tensorType, dest, /*restrict=*/true,
          /*writable=*/true);
      // A fill shared with other chains is cloned into the output's buffer.
      if (auto fill = start->get().getDefiningOp<linalg::FillOp>())
        buffer = linalg::FillOp::create(rewriter, fill.getLoc(),
                                        fill.getInputs()[0], buffer)
                     .getResult(0);
      rewriter.modifyOpInPlace(user, [&] { start->set(buffer); });
    });
  }
};

} // namespace
