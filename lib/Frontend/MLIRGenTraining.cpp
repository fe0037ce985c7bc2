//===- MLIRGenTraining.cpp - Losses and the optimizer ---------------------===//
//
// What a model needs to be trained: the `loss` statement (a 0-d float
// tensor, returned by `@loss`), the losses mse_loss and cross_entropy, and
// the `optim` statement, whose hyper-parameters (PyTorch's names and
// defaults) become the module's `dlc.optimizer` dictionary.
//
//===----------------------------------------------------------------------===//

#include "MLIRGenImpl.h"
#include "Suggest.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace dlc;
using namespace ::dlc::mlirgen;
using namespace mlir;
using llvm::StringRef;
using llvm::Twine;
using mlir::dlc::LossReduction;
using mlir::dlc::OptimizerKind;

//===----------------------------------------------------------------------===//
// The loss and the optimizer
//===----------------------------------------------------------------------===//

LogicalResult MLIRGenImpl::emitLoss(const LossStmtAST &loss) {
  if (failed(checkUnique(lossStmt, loss, "loss",
                         "a model has one loss; "
                         "add several with add(a, b)")))
    return failure();
  Value value = emitExpr(loss.getValue());
  if (!value)
    return failure();
  RankedTensorType type = tensorType(value);
  if (type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
    return error(loss.getValue().loc(),
                 "the loss must be a 0-d float tensor, got " + typeStr(type),
                 "reduce it to a scalar, e.g. with mean(...), sum(...), "
                 "cross_entropy(...) or mse_loss(...)");
  lossValue = value;
  return success();
}

DictionaryAttr MLIRGenImpl::buildOptimizer(const CallExprAST &call) {
  static const StringRef kinds[] = {"sgd", "adam", "adamw"};
  StringRef kind = call.getCallee();
  std::optional<OptimizerKind> optimizer =
      mlir::dlc::symbolizeOptimizerKind(kind);
  if (!optimizer)
    return error(
        call.loc(), "unknown optimizer '" + kind + "'",
        didYouMeanThen(kind, kinds, "the optimizers are " + joinWords(kinds)));
  if (!call.getArgs().empty())
    return error(call.getArgs().front()->loc(),
                 "optimizer hyper-parameters are passed by keyword",
                 "e.g. 'optim " + kind + "(lr=0.01)'");

  bool isSgd = *optimizer == OptimizerKind::sgd;
  llvm::SmallVector<StringRef> valid;
  if (isSgd)
    valid = {"lr", "momentum", "dampening", "weight_decay", "nesterov"};
  else
    valid = {"lr", "betas", "eps", "weight_decay", "amsgrad"};

  // PyTorch's defaults; SGD has no default learning rate.
  std::optional<double> lr;
  if (!isSgd)
    lr = 1e-3;
  double momentum = 0.0, dampening = 0.0, eps = 1e-8;
  double weightDecay = *optimizer == OptimizerKind::adamw ? 1e-2 : 0.0;
  double betas[2] = {0.9, 0.999};
  bool nesterov = false, amsgrad = false;
  SrcLoc nesterovLoc = call.loc();

  llvm::StringMap<SrcLoc> seen;
  for (const KeywordArg &kw : call.getKeywordArgs()) {
    StringRef key = kw.name;
    const ExprAST &value = *kw.value;
    if (!llvm::is_contained(valid, key))
      return error(kw.loc,
                   "'" + kind + "' has no hyper-parameter '" + key + "'",
                   didYouMeanThen(key, valid,
                                  "the hyper-parameters of " + kind.str() +
                                      " are " + joinWords(valid)));
    if (!seen.try_emplace(key, kw.loc).second)
      return error(kw.loc, "hyper-parameter '" + key + "' is given twice",
                   "give each hyper-parameter once");

    auto number = [&]() -> std::optional<double> {
      if (auto *num = dyn_cast<NumberExprAST>(&value)) {
        if (num->getValue() < 0)
          return error(value.loc(),
                       "hyper-parameter '" + key + "' must not be negative",
                       "PyTorch rejects negative values");
        return num->getValue();
      }
      return error(value.loc(),
                   "hyper-parameter '" + key + "' must be a number, got " +
                       describe(value),
                   "e.g. " + key + "=0.01");
    };
    auto boolean = [&]() -> std::optional<bool> {
      if (auto *b = dyn_cast<BoolExprAST>(&value))
        return b->getValue();
      return error(value.loc(),
                   "hyper-parameter '" + key + "' must be true or false, got " +
                       describe(value),
                   "e.g. " + key + "=true");
    };

    std::optional<double> d;
    std::optional<bool> b;
    if (key == "lr") {
      if (!(d = number()))
        return {};
      lr = *d;
    } else if (key == "momentum") {
      if (!(d = number()))
        return {};
      momentum = *d;
    } else if (key == "dampening") {
      if (!(d = number()))
        return {};
      dampening = *d;
    } else if (key == "weight_decay") {
      if (!(d = number()))
        return {};
      weightDecay = *d;
    } else if (key == "eps") {
      if (!(d = number()))
        return {};
      eps = *d;
    } else if (key == "nesterov") {
      if (!(b = boolean()))
        return {};
      nesterov = *b;
      nesterovLoc = kw.loc;
    } else if (key == "amsgrad") {
      if (!(b = boolean()))
        return {};
      amsgrad = *b;
      // Accepting it would train plain Adam under the AMSGrad name.
      if (amsgrad)
        return error(kw.loc, "amsgrad=true is not supported",
                     "dlc trains with Adam's update; drop amsgrad or write "
                     "amsgrad=false");
    } else if (key == "betas") {
      auto *list = dyn_cast<ListExprAST>(&value);
      const char *hint = "e.g. betas=[0.9, 0.999], each in [0, 1)";
      if (!list || list->getElements().size() != 2)
        return error(value.loc(), "'betas' must be a list of two numbers",
                     hint);
      for (unsigned i = 0; i < 2; ++i) {
        const ExprAST &element = *list->getElements()[i];
        auto *num = dyn_cast<NumberExprAST>(&element);
        if (!num || num->getValue() < 0 || num->getValue() >= 1)
          return error(element.loc(),
                       "each beta must be a number in [0, 1), got " +
                           describe(element),
                       hint);
        betas[i] = num->getValue();
      }
    }
  }

  if (!lr)
    return error(call.loc(), "'sgd' needs a learning rate",
                 "PyTorch's SGD has no default learning rate; write e.g. "
                 "'optim sgd(lr=0.01)'");
  if (nesterov && (momentum <= 0 || dampening != 0))
    return error(nesterovLoc, "nesterov needs momentum > 0 and dampening = 0",
                 "e.g. 'optim sgd(lr=0.01, momentum=0.9, nesterov=true)'");

  llvm::SmallVector<NamedAttribute> attrs;
  auto addF64 = [&](StringRef name, double v) {
    attrs.push_back(builder.getNamedAttr(name, builder.getF64FloatAttr(v)));
  };
  attrs.push_back(builder.getNamedAttr(
      "kind", builder.getAttr<mlir::dlc::OptimizerKindAttr>(*optimizer)));
  addF64("lr", *lr);
  addF64("weight_decay", weightDecay);
  if (isSgd) {
    addF64("momentum", momentum);
    addF64("dampening", dampening);
    attrs.push_back(
        builder.getNamedAttr("nesterov", builder.getBoolAttr(nesterov)));
  } else {
    attrs.push_back(builder.getNamedAttr(
        "betas", builder.getArrayAttr({builder.getF64FloatAttr(betas[0]),
                                       builder.getF64FloatAttr(betas[1])})));
    addF64("eps", eps);
    attrs.push_back(
        builder.getNamedAttr("amsgrad", builder.getBoolAttr(amsgrad)));
  }
  return builder.getDictionaryAttr(attrs);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

Value MLIRGenImpl::emitMseLoss(Call &c) {
  Value input = floatTensorArg(c, 0);
  if (!input)
    return {};
  Value target = floatTensorArg(c, 1);
  if (!target)
    return {};
  std::optional<LossReduction> reduction = enumArg(
      c, 2, LossReduction::mean, {LossReduction::mean, LossReduction::sum});
  if (!reduction)
    return {};
  RankedTensorType ti = tensorType(input), tt = tensorType(target);
  if (ti != tt)
    return error(c.loc(),
                 "'mse_loss' needs input and target of one type, got " +
                     typeStr(ti) + " and " + typeStr(tt),
                 "mse_loss does not broadcast; the prediction and the target "
                 "must have the same shape and dtype");
  auto resultType = RankedTensorType::get({}, ti.getElementType());
  return mlir::dlc::MseLossOp::create(builder, loc(c.loc()), resultType, input,
                                      target, *reduction)
      .getResult();
}

Value MLIRGenImpl::emitCrossEntropy(Call &c) {
  Value logits = floatTensorArg(c, 0);
  if (!logits)
    return {};
  Value labels = tensorArg(c, 1);
  if (!labels)
    return {};
  std::optional<LossReduction> reduction = enumArg(
      c, 2, LossReduction::mean, {LossReduction::mean, LossReduction::sum});
  if (!reduction)
    return {};

  RankedTensorType tl = tensorType(logits), ty = tensorType(labels);
  if (tl.getRank() != 2)
    return error(c.argLoc(0),
                 "'cross_entropy' expects logits of shape [N, C], got " +
                     typeStr(tl),
                 "one row of class scores per example");
  std::string got = typeStr(ty);
  if (auto *name = dyn_cast<NameExprAST>(c.arg(1)))
    got = "'" + name->getName().str() + "' of type " + got;
  if (!isa<IntegerType>(ty.getElementType()))
    return error(c.argLoc(1),
                 "'cross_entropy' expects integer class indices for "
                 "'labels', got " +
                     got,
                 "declare the labels as integers, e.g. 'label y: i64[" +
                     Twine(tl.getDimSize(0)) + "]'");
  if (ty.getRank() != 1 || ty.getDimSize(0) != tl.getDimSize(0))
    return error(c.argLoc(1),
                 "'cross_entropy' expects labels of shape [" +
                     Twine(tl.getDimSize(0)) + "] for logits " + typeStr(tl) +
                     ", got " + got,
                 "there is one class index per row of the logits");
  auto resultType = RankedTensorType::get({}, tl.getElementType());
  return mlir::dlc::CrossEntropyOp::create(builder, loc(c.loc()), resultType,
                                           logits, labels,
                                           /*count=*/mlir::Value(), *reduction)
      .getResult();
}
