//===- InsertLossScaling.cpp - dlc-insert-loss-scaling --------------------===//
//
// fp16 dynamic loss scaling in the compiled training step: the backward
// pass is seeded with the loss scale, and the fused optimizer update
// unscales, checks and skips. See Passes.td and docs/mixed-precision.md.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCINSERTLOSSSCALINGPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

struct DlcInsertLossScalingPass
    : dlc::impl::DlcInsertLossScalingPassBase<DlcInsertLossScalingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kTrainStepAttrName) && failed(rewrite(module, func)))
        return signalPassFailure();
  }

  LogicalResult rewrite(ModuleOp module, func::FuncOp func) {
    MLIRContext *ctx = module.getContext();
    Operation *seed = nullptr;
    OptimizerUpdateOp update;
    func.walk([&](Operation *op) {
      if (op->hasAttr(kGradSeedAttrName))
        seed = op;
      if (auto u = dyn_cast<OptimizerUpdateOp>(op))
        update = u;
    });
    if (!seed || !update)
      return func.emitOpError("is not a training step built by "
                              "dlc-build-train-step");
    if (!update.getScaler().empty())
      return success(); // already scaled

    // The scaler's state, after the optimizer's.
    SymbolTable symbols(module);
    ParameterOp last;
    for (auto p : module.getOps<ParameterOp>())
      last = p;
    OpBuilder mb(ctx);
    mb.setInsertionPointAfter(last);
    auto scalarTy = RankedTensorType::get({}, Float32Type::get(ctx));
    SmallVector<ParameterOp> decls;
    for (StringRef name : {kLossScaleStateName, kGrowthTrackerStateName}) {
      if (symbols.lookup(name))
        return module.emitError("the optimizer state '")
               << name << "' clashes with a symbol of the model";
      auto p = ParameterOp::create(mb, func.getLoc(), name, scalarTy,
                                   ParameterInit::zeros, llvm::APFloat(0.0),
                                   ParameterRole::optimizer_state,
                                   /*value=*/nullptr, /*shard_of=*/nullptr,
                                   /*shard_ranks=*/nullptr);
      mb.setInsertionPointAfter(p);
      decls.push_back(p);
    }
    auto read = [&](OpBuilder &b, ParameterOp p) {
      return ParamOp::create(b, func.getLoc(), p.getType(),
                             FlatSymbolRefAttr::get(p.getSymNameAttr()))
          .getResult();
    };

    // The backward pass starts from the scale: every gradient is scaled.
    OpBuilder b(seed);
    Value scale = read(b, decls[0]);
    auto seedValue = LossScaleOp::create(b, seed->getLoc(), scalarTy, scale,
                                         b.getF64FloatAttr(initScale));
    seedValue->setAttr(kGradSeedAttrName, b.getUnitAttr());
    seed->replaceAllUsesWith(seedValue);
    seed->erase();

    // The update with the scaler; the old results map onto the new ones.
    b.setInsertionPoint(update);
    Location loc = update.getLoc();
    SmallVector<NamedAttribute> config(update.getConfig().getValue());
    config.push_back(
        b.getNamedAttr("init_scale", b.getF64FloatAttr(initScale)));
    Value tracker = read(b, decls[1]);
    auto scaled = OptimizerUpdateOp::create(
        b, loc, update.getStep(), update.getParams(), update.getGrads(),
        update.getStates(), ValueRange{scale, tracker},
        b.getDictionaryAttr(config));
    for (auto [from, to] : llvm::zip(update.getResults(), scaled.getResults()))
      from.replaceAllUsesWith(to);
    update.erase();
    ValueRange extra = scaled.getScalerResults();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    b.setInsertionPoint(ret);
    for (auto [decl, v] : llvm::zip(decls, extra.take_front(2)))
      AssignOp::create(b, loc, FlatSymbolRefAttr::get(decl.getSymNameAttr()),
                       v);

    // train_step reports whether it skipped the update.
    SmallVector<Value> results(ret.getOperands());
    results.push_back(extra[2]);
    ret->setOperands(results);
    SmallVector<Type> resultTypes(func.getResultTypes());
    resultTypes.push_back(extra[2].getType());
    func.setType(FunctionType::get(ctx, func.getArgumentTypes(), resultTypes));
    func.setResultAttr(resultTypes.size() - 1, kNameAttrName,
                       b.getStringAttr("skipped"));
    return success();
  }
};

} // namespace
