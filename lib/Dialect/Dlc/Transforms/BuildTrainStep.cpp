//===- BuildTrainStep.cpp - dlc-build-train-step --------------------------===//
//
// Builds the `train_step` entry: the loss function's forward pass, the
// reverse-mode gradients of every parameter (from the ops'
// DifferentiableOpInterface rules) and one fused optimizer update whose
// results are assigned back to the parameters and the optimizer state. See
// Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <cmath>
#include <cstdio>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCBUILDTRAINSTEPPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// 0.9 rather than 9.000000e-01, for messages.
std::string shortNumber(double v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

Value makeActivation(OpBuilder &b, Location loc, Activation act, Value x) {
  Type t = x.getType();
  if (act == Activation::relu)
    return ReluOp::create(b, loc, t, x);
  if (act == Activation::tanh)
    return TanhOp::create(b, loc, t, x);
  if (act == Activation::sigmoid)
    return SigmoidOp::create(b, loc, t, x);
  return GeluOp::create(b, loc, t, x,
                        act == Activation::gelu_tanh ? GeluApproximation::tanh
                                                     : GeluApproximation::none);
}

/// Splits every `dlc.linear` with a fused activation into the plain layer
/// and the activation op, so that the gradient reads the pre-activation
/// value instead of computing the layer twice.
void splitFusedActivations(func::FuncOp func) {
  SmallVector<Operation *> fused;
  func.walk([&](Operation *op) {
    if (auto linear = dyn_cast<LinearOp>(op);
        linear && linear.getActivation() != Activation::none)
      fused.push_back(op);
    if (auto conv = dyn_cast<Conv2DOp>(op);
        conv && conv.getActivation() != Activation::none)
      fused.push_back(op);
  });
  for (Operation *op : fused) {
    OpBuilder b(op);
    Operation *plain = b.clone(*op);
    Activation activation;
    if (auto linear = dyn_cast<LinearOp>(plain)) {
      activation = linear.getActivation();
      linear.setActivation(Activation::none);
    } else {
      auto conv = cast<Conv2DOp>(plain);
      activation = conv.getActivation();
      conv.setActivation(Activation::none);
    }
    Value act =
        makeActivation(b, op->getLoc(), activation, plain->getResult(0));
    op->getResult(0).replaceAllUsesWith(act);
    op->erase();
  }
}

struct DlcBuildTrainStepPass
    : dlc::impl::DlcBuildTrainStepPassBase<DlcBuildTrainStepPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(build(getOperation())))
      signalPassFailure();
  }

  LogicalResult build(ModuleOp module);
  FailureOr<func::FuncOp> lossFromOption(ModuleOp module);
  FailureOr<DictionaryAttr> optimizerConfig(ModuleOp module);
};

/// Replaces the model's loss function with `loss` (mse or cross_entropy)
/// applied to the forward entry's single result against a new label input.
FailureOr<func::FuncOp> DlcBuildTrainStepPass::lossFromOption(ModuleOp module) {
  if (loss != "mse" && loss != "cross_entropy")
    return module.emitError("unknown loss '")
           << loss << "'; expected 'mse' or 'cross_entropy'";
  func::FuncOp forward;
  SmallVector<func::FuncOp> entries;
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr(kEntryAttrName))
      entries.push_back(f);
  for (func::FuncOp f : entries)
    if (f.getSymName() == "forward")
      forward = f;
  if (!forward && entries.size() == 1)
    forward = entries.front();
  if (!forward)
    return module.emitError("--loss needs the model's 'forward' entry");
  if (forward.getNumResults() != 1)
    return forward.emitError("--loss needs a forward entry with one output, "
                             "this one has ")
           << forward.getNumResults();
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    if (auto name = forward.getArgAttrOfType<StringAttr>(i, kNameAttrName);
        name && name.getValue() == label)
      return forward.emitError("the model already has an input named '")
             << label << "'; name the label input with --label";

  for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (f->hasAttr(kLossAttrName))
      f.erase();
  auto fn = forward.clone();
  module.push_back(fn);
  fn.setSymName("loss");
  fn->removeAttr(kEntryAttrName);
  fn->setAttr(kLossAttrName, UnitAttr::get(module.getContext()));

  auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  Value out = ret.getOperand(0);
  auto outTy = cast<RankedTensorType>(out.getType());
  Location loc = forward.getLoc();
  Type labelTy = outTy;
  int64_t rank = outTy.getRank(),
          cdim = classDim < 0 ? classDim + rank : classDim;
  if (loss == "cross_entropy") {
    if (rank < 2)
      return forward.emitError("cross_entropy needs a [N, C] output (or "
                               "[N, C, d...], [N, T, C]), got ")
             << outTy;
    if (cdim < 1 || cdim >= rank)
      return forward.emitError("class-dim ")
             << classDim << " is not a dimension after the batch of " << outTy;
    SmallVector<int64_t> labelShape;
    for (int64_t d = 0; d < rank; ++d)
      if (d != cdim)
        labelShape.push_back(outTy.getDimSize(d));
    if (labelType != "i64" && labelType != "i32")
      return module.emitError("unknown label-type '")
             << labelType << "'; expected i64 or i32";
    labelTy = RankedTensorType::get(
        labelShape,
        IntegerType::get(module.getContext(), labelType == "i32" ? 32 : 64));
  }
  unsigned idx = fn.getNumArguments();
  Builder attrs(module.getContext());
  if (failed(fn.insertArgument(idx, labelTy,
                               attrs.getDictionaryAttr(attrs.getNamedAttr(
                                   kNameAttrName, attrs.getStringAttr(label))),
                               loc)))
    return failure();
  Value y = fn.getArgument(idx);
  OpBuilder b(ret);
  auto scalarTy = RankedTensorType::get({}, outTy.getElementType());
  Value l;
  if (loss == "mse") {
    l = MseLossOp::create(b, loc, scalarTy, out, y, LossReduction::mean);
  } else {
    // Every position is a row of its own: the classes last, then [M, C]
    // logits against [M] labels (PyTorch's mean over all positions).
    Value logits = out, labels = y;
    if (rank > 2) {
      SmallVector<int64_t> perm, shape;
      for (int64_t d = 0; d < rank; ++d)
        if (d != cdim)
          perm.push_back(d);
      perm.push_back(cdim);
      for (int64_t p : perm)
        shape.push_back(outTy.getDimSize(p));
      if (cdim != rank - 1)
        logits = TransposeOp::create(
            b, loc, RankedTensorType::get(shape, outTy.getElementType()),
            logits, perm);
      int64_t rows = outTy.getNumElements() / outTy.getDimSize(cdim);
      logits = ReshapeOp::create(
          b, loc,
          RankedTensorType::get({rows, outTy.getDimSize(cdim)},
                                outTy.getElementType()),
          logits);
      labels = ReshapeOp::create(
          b, loc,
          RankedTensorType::get(
              {rows}, cast<RankedTensorType>(labelTy).getElementType()),
          labels);
    }
    l = CrossEntropyOp::create(b, loc, scalarTy, logits, labels,
                               /*count=*/Value(), LossReduction::mean,
                               /*ignore_index=*/-100);
  }
  ret->setOperands(ValueRange{l});
  fn.setType(FunctionType::get(module.getContext(),
                               fn.getBody().getArgumentTypes(), {scalarTy}));
  fn.setResultAttr(0, kNameAttrName, attrs.getStringAttr("loss"));
  return fn;
}

/// The optimizer: the module's, with the pass options applied.
FailureOr<DictionaryAttr>
DlcBuildTrainStepPass::optimizerConfig(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  auto base = module->getAttrOfType<DictionaryAttr>(kOptimizerAttrName);
  std::optional<OptimizerKind> baseKind;
  if (Attribute k = base ? base.get("kind") : Attribute()) {
    auto kindAttr = dyn_cast<OptimizerKindAttr>(k);
    if (!kindAttr)
      return module.emitError("the optimizer's kind must be a "
                              "#dlc.optimizer (sgd, adam or adamw), got ")
             << k;
    baseKind = kindAttr.getValue();
  }
  std::optional<OptimizerKind> chosen = baseKind;
  if (!optimizer.empty()) {
    chosen = symbolizeOptimizerKind(optimizer);
    if (!chosen)
      return module.emitError("unknown optimizer '")
             << optimizer << "'; expected 'sgd', 'adam' or 'adamw'";
  }
  if (!chosen)
    return module.emitError("the model has no optimizer: add an 'optim' line "
                            "to the model, or pass --optimizer "
                            "sgd|adam|adamw");
  OptimizerKind kind = *chosen;
  StringRef kindName = stringifyOptimizerKind(kind);
  bool sgd = kind == OptimizerKind::sgd;
  if (baseKind && *baseKind != kind)
    base = nullptr; // another kind: start from its defaults

  // PyTorch's defaults.
  llvm::StringMap<double> num{
      {"lr", 1e-3},
      {"weight_decay", kind == OptimizerKind::adamw ? 1e-2 : 0.0}};
  bool nest = false;
  double b1 = 0.9, b2 = 0.999;
  if (sgd) {
    num["momentum"] = 0.0;
    num["dampening"] = 0.0;
  } else {
    num["eps"] = 1e-8;
  }
  if (base) {
    for (auto &kv : num)
      if (auto f = base.getAs<FloatAttr>(kv.getKey()))
        kv.second = f.getValueAsDouble();
    if (auto n = base.getAs<BoolAttr>("nesterov"))
      nest = n.getValue();
    if (auto betas = base.getAs<ArrayAttr>("betas");
        betas && betas.size() == 2) {
      b1 = cast<FloatAttr>(betas[0]).getValueAsDouble();
      b2 = cast<FloatAttr>(betas[1]).getValueAsDouble();
    }
  }
  auto override = [&](StringRef key, double v) -> LogicalResult {
    if (v < 0)
      return success();
    if (!num.count(key))
      return module.emitError("--")
             << key << " does not apply to the " << kindName << " optimizer";
    num[key] = v;
    return success();
  };
  if (failed(override("lr", lr)) || failed(override("momentum", momentum)) ||
      failed(override("dampening", dampening)) ||
      failed(override("weight_decay", weightDecay)) ||
      failed(override("eps", eps)))
    return failure();
  if (sgd) {
    if (beta1 >= 0 || beta2 >= 0)
      return module.emitError("--betas does not apply to the sgd optimizer");
    if (nesterov >= 0)
      nest = nesterov != 0;
  } else {
    if (nesterov >= 0)
      return module.emitError("--nesterov applies only to the sgd optimizer");
    if (beta1 >= 0)
      b1 = beta1;
    if (beta2 >= 0)
      b2 = beta2;
    if (!(b1 < 1.0) || !(b2 < 1.0))
      return module.emitError("betas must be in [0, 1), got ")
             << "(" << shortNumber(b1) << ", " << shortNumber(b2) << ")";
  }
  for (auto &kv : num)
    if (!std::isfinite(kv.second))
      return module.emitError("optimizer ") << kv.getKey() << " must be finite";
  if (sgd && nest && (num["momentum"] <= 0 || num["dampening"] != 0))
    return module.emitError("nesterov needs momentum > 0 and dampening = 0");

  SmallVector<NamedAttribute> attrs;
  attrs.push_back(b.getNamedAttr("kind", OptimizerKindAttr::get(ctx, kind)));
  for (auto &kv : num)
    attrs.push_back(b.getNamedAttr(kv.getKey(), b.getF64FloatAttr(kv.second)));
  if (sgd) {
    attrs.push_back(b.getNamedAttr("nesterov", b.getBoolAttr(nest)));
  } else {
    attrs.push_back(b.getNamedAttr(
        "betas",
        b.getArrayAttr({b.getF64FloatAttr(b1), b.getF64FloatAttr(b2)})));
    attrs.push_back(b.getNamedAttr("amsgrad", b.getBoolAttr(false)));
  }
  return b.getDictionaryAttr(attrs);
}

LogicalResult DlcBuildTrainStepPass::build(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  if (SymbolTable::lookupSymbolIn(module, "train_step"))
    return module.emitError("the model already has a 'train_step'");

  func::FuncOp lossFn;
  if (!loss.empty()) {
    FailureOr<func::FuncOp> fn = lossFromOption(module);
    if (failed(fn))
      return failure();
    lossFn = *fn;
  } else {
    for (auto f : module.getOps<func::FuncOp>())
      if (f->hasAttr(kLossAttrName))
        lossFn = f;
  }
  if (!lossFn)
    return module.emitError("the model has no loss to train: add a 'loss' "
                            "line to the model, or pass --loss "
                            "mse|cross_entropy");
  if (lossFn.isExternal() || !lossFn.getBody().hasOneBlock())
    return lossFn.emitError("the loss function must have one block");
  if (lossFn.getNumResults() != 1 ||
      cast<RankedTensorType>(lossFn.getResultTypes()[0]).getRank() != 0)
    return lossFn.emitError("the loss must be one scalar");

  FailureOr<DictionaryAttr> config = optimizerConfig(module);
  if (failed(config))
    return failure();
  module->setAttr(kOptimizerAttrName, *config);

  // The step starts as a copy of the loss function.
  auto fn = lossFn.clone();
  module.push_back(fn);
  fn.setSymName("train_step");
  fn->removeAttr(kLossAttrName);
  fn->setAttr(kEntryAttrName, UnitAttr::get(ctx));
  fn->setAttr(kTrainStepAttrName, UnitAttr::get(ctx));
  splitFusedActivations(fn);

  SymbolTable symbols(module);
  Block &body = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());

  // Activity: the values that depend on a trained parameter.
  llvm::DenseSet<Value> active;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0)
      return op.emitOpError("has regions; the training step cannot be built");
    if (auto p = dyn_cast<ParamOp>(op)) {
      auto decl = symbols.lookup<ParameterOp>(p.getName());
      if (decl && decl.getRole() == ParameterRole::weight &&
          isa<FloatType>(p.getType().getElementType()))
        active.insert(p.getResult());
      continue;
    }
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : op.getResults())
        active.insert(r);
  }
  Value lossValue = ret.getOperand(0);
  if (!active.contains(lossValue))
    return lossFn.emitError("the loss does not depend on any parameter");

  // Reverse sweep: gradients in reverse program order, accumulated over
  // every use of a value.
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  OpBuilder b(ret);
  Location loc = fn.getLoc();
  llvm::DenseMap<Value, Value> grads;
  llvm::MapVector<StringRef, Value> paramGrads;
  auto accumulate = [&](Value &slot, Value g) {
    slot =
        slot ? AddOp::create(b, g.getLoc(), slot.getType(), slot, g).getResult()
             : g;
  };
  auto seed =
      FillOp::create(b, loc, lossValue.getType(), b.getF64FloatAttr(1.0));
  // Marks where the backward pass starts (the memory report counts the
  // forward values used after it as saved activations).
  seed->setAttr(kGradSeedAttrName, b.getUnitAttr());
  grads[lossValue] = seed;
  for (Operation *op : llvm::reverse(ops)) {
    // One gradient per result, null where the loss does not depend on it.
    SmallVector<Value> resultGrads;
    for (Value r : op->getResults())
      resultGrads.push_back(grads.lookup(r));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    if (auto p = dyn_cast<ParamOp>(op)) {
      accumulate(paramGrads[p.getName()], resultGrads.front());
      continue;
    }
    auto diff = dyn_cast<DifferentiableOpInterface>(op);
    if (!diff)
      return op->emitOpError("has no gradient rule, but lies between a "
                             "parameter and the loss");
    SmallVector<Value> operandGrads =
        diff.buildGradientsOfResults(b, resultGrads);
    if (operandGrads.size() != op->getNumOperands())
      return op->emitOpError("internal error: its gradient rule returned ")
             << operandGrads.size() << " gradients for " << op->getNumOperands()
             << " operands";
    for (auto [operand, og] : llvm::zip(op->getOperands(), operandGrads)) {
      // A null gradient marks an operand the op is not differentiable in
      // (integer labels, a batch norm's running statistics): nothing flows
      // back through it, and a parameter reached only that way receives no
      // gradient and is not updated.
      if (!og || !active.contains(operand))
        continue;
      accumulate(grads[operand], og);
    }
  }

  // The optimizer state, zero-initialised parameters after the weights.
  SmallVector<ParameterOp> weights;
  ParameterOp lastParam;
  for (auto p : module.getOps<ParameterOp>()) {
    lastParam = p;
    if (paramGrads.count(p.getSymName()))
      weights.push_back(p);
  }
  DictionaryAttr cfg = *config;
  SmallVector<StringRef> stateNames;
  if (cfg.getAs<OptimizerKindAttr>("kind").getValue() != OptimizerKind::sgd)
    stateNames = {"exp_avg", "exp_avg_sq"};
  else if (OptimizerUpdateOp::statesPerParam(cfg) == 1)
    stateNames = {"momentum_buffer"};

  OpBuilder mb(ctx);
  mb.setInsertionPointAfter(lastParam);
  auto declareState = [&](const std::string &name,
                          RankedTensorType type) -> FailureOr<ParameterOp> {
    if (symbols.lookup(name))
      return module.emitError("the optimizer state '")
             << name << "' clashes with a symbol of the model";
    auto p =
        ParameterOp::create(mb, loc, name, type, ParameterInit::zeros,
                            llvm::APFloat(0.0), ParameterRole::optimizer_state,
                            /*value=*/nullptr, /*shard_of=*/nullptr,
                            /*shard_ranks=*/nullptr);
    mb.setInsertionPointAfter(p);
    return p;
  };
  auto stepTy = RankedTensorType::get({}, Float32Type::get(ctx));
  FailureOr<ParameterOp> stepDecl = declareState("optimizer.step", stepTy);
  if (failed(stepDecl))
    return failure();
  SmallVector<ParameterOp> stateDecls;
  for (StringRef s : stateNames)
    for (ParameterOp w : weights) {
      FailureOr<ParameterOp> d = declareState(
          ("optimizer." + w.getSymName() + "." + s).str(), w.getTensorType());
      if (failed(d))
        return failure();
      stateDecls.push_back(*d);
    }

  // One fused update of every parameter, written back at the end.
  auto read = [&](ParameterOp p) {
    return ParamOp::create(b, loc, p.getType(),
                           FlatSymbolRefAttr::get(p.getSymNameAttr()))
        .getResult();
  };
  SmallVector<Value> params, paramGradValues, states;
  for (ParameterOp w : weights) {
    params.push_back(read(w));
    paramGradValues.push_back(paramGrads[w.getSymName()]);
  }
  for (ParameterOp s : stateDecls)
    states.push_back(read(s));
  auto update =
      OptimizerUpdateOp::create(b, loc, read(*stepDecl), params,
                                paramGradValues, states, ValueRange{}, cfg);
  auto assign = [&](ParameterOp p, Value v) {
    AssignOp::create(b, loc, FlatSymbolRefAttr::get(p.getSymNameAttr()), v);
  };
  for (auto [w, v] : llvm::zip(weights, update.getNewParams()))
    assign(w, v);
  for (auto [s, v] : llvm::zip(stateDecls, update.getNewStates()))
    assign(s, v);
  assign(*stepDecl, update.getNewStep());
  fn.setResultAttr(0, kNameAttrName, b.getStringAttr("loss"));
  return success();
}

} // namespace
