//===- ShardOptimizerState.cpp - dlc-shard-optimizer-state ----------------===//
//
// ZeRO stage 1: the gradient buckets are reduce-scattered, each rank
// updates its shard of the parameters with its shard of the optimizer
// state, and the shards are gathered back. See Passes.td and
// docs/distributed.md.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCSHARDOPTIMIZERSTATEPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

struct DlcShardOptimizerStatePass
    : dlc::impl::DlcShardOptimizerStatePassBase<DlcShardOptimizerStatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1) {
      module.emitError("dlc-shard-optimizer-state needs ranks >= 1, not ")
          << static_cast<int64_t>(ranks);
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kTrainStepAttrName) && failed(rewrite(module, func)))
        return signalPassFailure();
  }

  /// The type of one rank's shard of `t`.
  RankedTensorType shardType(Type t) {
    auto whole = cast<RankedTensorType>(t);
    return RankedTensorType::get({shardElements(whole.getNumElements(), ranks)},
                                 whole.getElementType());
  }

  /// New shard tensors for `wholes` to be written into: allocations, which
  /// CSE never merges (two collectives writing into one tensor.empty would
  /// bufferize to one buffer).
  SmallVector<Value> newShards(OpBuilder &b, Location loc, ValueRange wholes) {
    SmallVector<Value> out;
    for (Value v : wholes)
      out.push_back(bufferization::AllocTensorOp::create(
          b, loc, shardType(v.getType()), ValueRange{}));
    return out;
  }

  /// Makes the optimizer-state parameter that `state` reads one rank's
  /// shard (`state` and every other read of it then have the shard's type).
  LogicalResult shardState(ModuleOp module, Value state) {
    auto read = state.getDefiningOp<ParamOp>();
    auto decl =
        read ? module.lookupSymbol<ParameterOp>(read.getNameAttr()) : nullptr;
    if (!decl || decl.getRole() != ParameterRole::optimizer_state)
      return failure();
    RankedTensorType whole = decl.getTensorType();
    RankedTensorType shard = shardType(whole);
    if (!decl.getShardOfAttr()) {
      decl.setType(shard);
      decl.setShardOf(whole.getShape());
      decl.setShardRanks(static_cast<int64_t>(ranks));
      // Every read of the parameter now has the shard's type.
      if (auto uses = SymbolTable::getSymbolUses(decl, module))
        for (const SymbolTable::SymbolUse &use : *uses)
          if (auto p = dyn_cast<ParamOp>(use.getUser()))
            p.getResult().setType(shard);
    }
    return success();
  }

  LogicalResult rewrite(ModuleOp module, func::FuncOp func) {
    OptimizerUpdateOp update;
    func.walk([&](OptimizerUpdateOp u) { update = u; });
    if (!update)
      return func.emitOpError("is not a training step built by "
                              "dlc-build-train-step");
    if (llvm::any_of(update.getParams(), [](Value p) {
          return p.getDefiningOp<ShardOp>() != nullptr;
        }))
      return success(); // already sharded
    // The buckets: the all-reduces of the gradients.
    SmallVector<AllReduceOp> buckets;
    for (Value g : update.getGrads()) {
      auto reduce = g.getDefiningOp<AllReduceOp>();
      if (!reduce)
        return update.emitOpError("reads a gradient that is not all-reduced")
                   .attachNote()
               << "run dlc-insert-gradient-allreduce first";
      if (!llvm::is_contained(buckets, reduce))
        buckets.push_back(reduce);
    }

    // Each bucket is reduce-scattered where it was all-reduced.
    IRMapping gradShards;
    for (AllReduceOp reduce : buckets) {
      OpBuilder b(reduce);
      auto scatter = ReduceScatterOp::create(
          b, reduce.getLoc(), reduce.getInputs(),
          newShards(b, reduce.getLoc(), reduce.getInputs()),
          static_cast<int64_t>(ranks), reduce.getReduction());
      for (auto [old, shard] :
           llvm::zip(reduce.getResults(), scatter.getResults()))
        gradShards.map(old, shard);
    }

    // The update of this rank's shards.
    OpBuilder b(update);
    Location loc = update.getLoc();
    auto params = ShardOp::create(b, loc, update.getParams(),
                                  newShards(b, loc, update.getParams()),
                                  static_cast<int64_t>(ranks));
    SmallVector<Value> grads, states;
    for (Value g : update.getGrads())
      grads.push_back(gradShards.lookup(g));
    for (Value s : update.getStates()) {
      if (failed(shardState(module, s)))
        return update.emitOpError("reads optimizer state that is not a "
                                  "dlc.param of an optimizer_state parameter");
      states.push_back(s);
    }
    auto sharded = OptimizerUpdateOp::create(
        b, loc, update.getStep(), params.getResults(), grads, states,
        update.getScaler(), update.getConfig());

    // The new parameters gathered back, bucket by bucket.
    update.getNewStep().replaceAllUsesWith(sharded.getNewStep());
    for (auto [old, shard] :
         llvm::zip(update.getNewStates(), sharded.getNewStates()))
      old.replaceAllUsesWith(shard);
    unsigned firstGrad = update.getGrads().getBeginOperandIndex();
    for (AllReduceOp reduce : buckets) {
      SmallVector<Value> shards, wholes, olds;
      for (Value r : reduce.getResults())
        for (OpOperand &use : r.getUses()) {
          if (use.getOwner() != update)
            return reduce.emitOpError("is read by an op other than the "
                                      "optimizer update");
          unsigned i = use.getOperandNumber() - firstGrad;
          shards.push_back(sharded.getNewParams()[i]);
          wholes.push_back(update.getParams()[i]);
          olds.push_back(update.getNewParams()[i]);
        }
      auto gather = AllGatherOp::create(b, reduce.getLoc(), shards, wholes,
                                        static_cast<int64_t>(ranks));
      for (auto [old, whole] : llvm::zip(olds, gather.getResults()))
        old.replaceAllUsesWith(whole);
    }
    update.erase();
    for (AllReduceOp reduce : buckets)
      reduce.erase();
    return success();
  }
};

} // namespace
