//===- InsertGradientAllreduce.cpp - dlc-insert-gradient-allreduce --------===//
//
// Data-parallel training: the gradients the optimizer update reads, and the
// loss the step returns, are reduced over the ranks of the job in buckets.
// See Passes.td and docs/distributed.md.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCINSERTGRADIENTALLREDUCEPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

int64_t tensorBytes(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getNumElements() * t.getElementTypeBitWidth() / 8;
}

/// The last op of `block` that defines one of `values` (block arguments
/// count as defined before the first op); null when none does.
Operation *lastDefinition(Block &block, ArrayRef<Value> values) {
  Operation *last = nullptr;
  for (Value v : values) {
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    def = block.findAncestorOpInBlock(*def);
    if (def && (!last || last->isBeforeInBlock(def)))
      last = def;
  }
  return last;
}

/// Gives every mean cross entropy of `func`, and its gradient, the mean
/// over the ranks of the number of rows it counts: each rank's loss is then
/// its rows' sum over the global count divided by the number of ranks, and
/// the mean over the ranks that the loss and gradients get is the global
/// batch's mean even when the ranks ignore different numbers of rows. One
/// count per labels, placed where the labels are known, early in the step.
void useGlobalLabelCounts(func::FuncOp func) {
  // Collected first: the counts are inserted before the ops walked.
  SmallVector<Operation *> losses;
  func.walk([&](Operation *op) {
    if (isa<CrossEntropyOp, CrossEntropyGradOp>(op))
      losses.push_back(op);
  });
  DenseMap<std::tuple<Value, int64_t, Type>, Value> counts;
  auto giveCount = [&](auto op) {
    if (op.getReduction() != LossReduction::mean || op.getCount())
      return;
    Type et = cast<RankedTensorType>(op.getLogits().getType()).getElementType();
    Value labels = op.getLabels();
    Value &count = counts[{labels, op.getIgnoreIndex(), et}];
    if (!count) {
      OpBuilder b(func.getContext());
      if (Operation *def = labels.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(labels.getParentBlock());
      Value local =
          CountLabelsOp::create(b, op.getLoc(), RankedTensorType::get({}, et),
                                labels, op.getIgnoreIndex());
      count = AllReduceOp::create(b, op.getLoc(), local, LossReduction::mean)
                  .getResult(0);
    }
    op.getCountMutable().assign(count);
  };
  for (Operation *op : losses)
    TypeSwitch<Operation *>(op).Case<CrossEntropyOp, CrossEntropyGradOp>(
        giveCount);
}

struct DlcInsertGradientAllreducePass
    : dlc::impl::DlcInsertGradientAllreducePassBase<
          DlcInsertGradientAllreducePass> {
  using Base::Base;

  void runOnOperation() override {
    if (bucketBytes <= 0) {
      getOperation().emitError("bucket-bytes must be positive, not ")
          << static_cast<int64_t>(bucketBytes);
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func->hasAttr(kTrainStepAttrName) && failed(rewrite(func)))
        return signalPassFailure();
  }

  LogicalResult rewrite(func::FuncOp func) {
    OptimizerUpdateOp update;
    func.walk([&](OptimizerUpdateOp u) { update = u; });
    if (!update || func.getNumResults() == 0)
      return func.emitOpError("is not a training step built by "
                              "dlc-build-train-step");
    if (llvm::any_of(update.getGrads(), [](Value g) {
          return g.getDefiningOp<AllReduceOp>() != nullptr;
        }))
      return success(); // already reduced
    if (!update.getScaler().empty())
      return update
                 .emitOpError(
                     "fp16 loss scaling cannot run data-parallel yet: its "
                     "overflow check would see one rank's gradients")
                 .attachNote()
             << "train with --precision=bf16 or fp32";
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    Value loss = ret.getOperand(0);
    auto reductionOf = [](Operation *op) -> LossReductionAttr {
      return op ? op->getAttrOfType<LossReductionAttr>("reduction") : nullptr;
    };
    LossReductionAttr reduction = reductionOf(loss.getDefiningOp());
    if (!reduction)
      return (loss.getDefiningOp() ? loss.getDefiningOp()->emitOpError()
                                   : func.emitOpError())
                 .append("computes the loss, but data parallelism needs to "
                         "know whether it is a mean or a sum over the batch")
                 .attachNote()
             << "end the loss function with a loss op (mse_loss, "
                "cross_entropy, ...) that has a reduction";

    for (Value g : update.getGrads())
      if (!cast<RankedTensorType>(g.getType()).getElementType().isF32())
        return update.emitOpError("reduces a gradient of type ")
               << g.getType()
               << " over the ranks: data parallelism takes fp32 gradients "
                  "(autocast keeps fp32 master weights)";

    useGlobalLabelCounts(func);

    // Buckets in reverse parameter order: the backward pass finishes the
    // last layer's gradients first.
    Block &body = func.getBody().front();
    SmallVector<SmallVector<unsigned>> buckets;
    int64_t bytes = 0;
    for (unsigned i = update.getGrads().size(); i-- > 0;) {
      int64_t b = tensorBytes(update.getGrads()[i]);
      if (buckets.empty() || bytes + b > bucketBytes) {
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().push_back(i);
      bytes += b;
    }
    unsigned firstGrad = update.getGrads().getBeginOperandIndex();
    for (ArrayRef<unsigned> bucket : buckets) {
      SmallVector<Value> grads;
      for (unsigned i : bucket)
        grads.push_back(update.getGrads()[i]);
      OpBuilder b(func.getContext());
      if (Operation *last = lastDefinition(body, grads))
        b.setInsertionPointAfter(last);
      else
        b.setInsertionPointToStart(&body);
      auto reduce =
          AllReduceOp::create(b, update.getLoc(), grads, reduction.getValue());
      for (auto [i, r] : llvm::zip(bucket, reduce.getResults()))
        update->setOperand(firstGrad + i, r);
    }
    OpBuilder b(ret);
    auto reduceLoss =
        AllReduceOp::create(b, loss.getLoc(), loss, reduction.getValue());
    ret->setOperand(0, reduceLoss.getResult(0));
    return success();
  }
};

} // namespace
