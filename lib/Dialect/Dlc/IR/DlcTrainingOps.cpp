//===- DlcTrainingOps.cpp - Ops of the training step ----------------------===//
//
// The verifiers and folders of the ops that dlc-build-train-step and the
// mixed-precision passes build: fill, broadcast_to, the fused gradients
// (activation, cross-entropy, layer norm), optimizer_update with its
// result types, assign, cast, the integer arithmetic and cumsum.
//
//===----------------------------------------------------------------------===//

#include "DlcOpsUtils.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::oputils;

//===----------------------------------------------------------------------===//
// Helpers of the training step
//===----------------------------------------------------------------------===//

LogicalResult FillOp::verify() {
  if (!tensorTy(getResult()).hasStaticShape())
    return emitOpError("must have a static shape");
  if (auto it = dyn_cast<IntegerType>(tensorTy(getResult()).getElementType())) {
    double v = getValue().convertToDouble();
    double limit =
        std::min(std::ldexp(1.0, 53), std::ldexp(1.0, int(it.getWidth()) - 1));
    bool isBool = it.getWidth() == 1;
    if (v != std::trunc(v) ||
        (isBool ? (v != 0 && v != 1) : (v < -limit || v >= limit)))
      return emitOpError("value ")
             << v << " is not an integer that " << it
             << " holds (and a double represents exactly)";
  }
  return success();
}

LogicalResult BroadcastToOp::verify() {
  auto in = tensorTy(getInput()), out = tensorTy(getResult());
  if (in.getElementType() != out.getElementType())
    return emitOpError("must keep the element type");
  auto shape = broadcastShapes(in.getShape(), out.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != out.getShape())
    return emitOpError("cannot broadcast ")
           << shapeStr(in.getShape()) << " to " << shapeStr(out.getShape());
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult ActivationGradOp::verify() {
  if (getActivation() == Activation::none)
    return emitOpError("needs an activation, got none");
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  if (failed(verifyLogitsAndLabels(*this, getLogits(), getLabels())))
    return failure();
  auto logits = tensorTy(getLogits());
  if (tensorTy(getGrad()).getElementType() != logits.getElementType())
    return emitOpError("grad must be a scalar of ") << logits.getElementType();
  if (getCount() &&
      tensorTy(getCount()).getElementType() != logits.getElementType())
    return emitOpError("count must be a scalar of ") << logits.getElementType();
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  auto x = tensorTy(getInput()), w = tensorTy(getWeight());
  if (x.getRank() < 1 || w.getRank() != 1 ||
      w.getDimSize(0) != x.getShape().back())
    return emitOpError("weight must be [")
           << (x.getRank() ? x.getShape().back() : 0) << "], got "
           << shapeStr(w.getShape());
  if (w.getElementType() != x.getElementType())
    return emitOpError("weight and input must have one element type");
  return success();
}

unsigned OptimizerUpdateOp::statesPerParam(DictionaryAttr config) {
  auto kind = config.getAs<OptimizerKindAttr>("kind");
  if (!kind)
    return 0;
  if (kind.getValue() != OptimizerKind::sgd)
    return 2;
  auto momentum = config.getAs<FloatAttr>("momentum");
  return momentum && momentum.getValueAsDouble() != 0.0 ? 1 : 0;
}

LogicalResult OptimizerUpdateOp::verify() {
  DictionaryAttr config = getConfig();
  auto kind = config.getAs<OptimizerKindAttr>("kind");
  if (!kind)
    return emitOpError("config needs a kind, #dlc.optimizer<sgd>, "
                       "#dlc.optimizer<adam> or #dlc.optimizer<adamw>");
  bool sgd = kind.getValue() == OptimizerKind::sgd;
  SmallVector<StringRef> needed{"lr", "weight_decay"};
  if (sgd)
    needed.append({"momentum", "dampening"});
  else
    needed.append({"eps"});
  for (StringRef key : needed)
    if (!config.getAs<FloatAttr>(key))
      return emitOpError("config needs a float '") << key << "'";
  if (sgd && !config.getAs<BoolAttr>("nesterov"))
    return emitOpError("config needs a bool 'nesterov'");
  if (!sgd) {
    auto betas = config.getAs<ArrayAttr>("betas");
    if (!betas || betas.size() != 2 ||
        !llvm::all_of(betas, [](Attribute a) { return isa<FloatAttr>(a); }))
      return emitOpError("config needs 'betas', two floats");
    if (auto amsgrad = config.getAs<BoolAttr>("amsgrad");
        amsgrad && amsgrad.getValue())
      return emitOpError("amsgrad is not supported");
  }
  if (!getScaler().empty() && getScaler().size() != 2)
    return emitOpError("scaler takes the scale and the growth tracker");
  if (!getScaler().empty() && !config.getAs<FloatAttr>("init_scale"))
    return emitOpError("config needs a float 'init_scale' with a scaler");
  size_t n = getParams().size();
  if (getGrads().size() != n)
    return emitOpError("has ")
           << n << " params but " << getGrads().size() << " grads";
  unsigned per = statesPerParam(config);
  if (getStates().size() != per * n)
    return emitOpError("needs ") << per * n << " state tensors (" << per
                                 << " per param), got " << getStates().size();
  for (size_t i = 0; i < n; ++i) {
    Type t = getParams()[i].getType();
    if (getGrads()[i].getType() != t)
      return emitOpError("grad ")
             << i << " has type " << getGrads()[i].getType() << ", its param "
             << t;
    for (unsigned k = 0; k < per; ++k)
      if (getStates()[k * n + i].getType() != t)
        return emitOpError("state ")
               << k * n + i << " has type " << getStates()[k * n + i].getType()
               << ", its param " << t;
  }
  return success();
}

LogicalResult OptimizerUpdateOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  inferred.push_back(adaptor.getStep().getType());
  for (Value v : adaptor.getParams())
    inferred.push_back(v.getType());
  for (Value v : adaptor.getStates())
    inferred.push_back(v.getType());
  if (!adaptor.getScaler().empty()) {
    for (Value v : adaptor.getScaler())
      inferred.push_back(v.getType());
    inferred.push_back(RankedTensorType::get(
        {}, IntegerType::get(adaptor.getStep().getContext(), 32)));
  }
  return success();
}

LogicalResult AssignOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!param)
    return emitOpError("refers to '")
           << getName() << "', which is not a dlc.parameter";
  if (param.getType() != getValue().getType())
    return emitOpError("value type ")
           << getValue().getType() << " does not match the parameter's type "
           << param.getType();
  return success();
}

LogicalResult CastOp::verify() {
  auto in = tensorTy(getInput()), out = tensorTy(getResult());
  if (in.getShape() != out.getShape())
    return emitOpError("must keep the shape: ")
           << shapeStr(in.getShape()) << " to " << shapeStr(out.getShape());
  if (isa<IntegerType>(out.getElementType()) &&
      !isa<IntegerType>(in.getElementType()))
    return emitOpError("converts integers to integers, not ")
           << in.getElementType() << " to " << out.getElementType();
  return success();
}

LogicalResult IntArithOp::verify() {
  Type lhs = getElementTypeOrSelf(getLhs().getType());
  if (lhs != getElementTypeOrSelf(getRhs().getType()) ||
      lhs != getElementTypeOrSelf(getType()))
    return emitOpError("operands and result must have one element type");
  return verifyBroadcastOperands(*this, cast<RankedTensorType>(getType()));
}

LogicalResult CumSumOp::verify() {
  int64_t rank = tensorTy(getInput()).getRank();
  auto axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ")
           << axis << " is not a dimension of " << getInput().getType();
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // x -> wider -> x is exact: fold the round trip.
  if (auto inner = getInput().getDefiningOp<CastOp>())
    if (inner.getInput().getType() == getType() &&
        tensorTy(inner.getResult()).getElementTypeBitWidth() >
            tensorTy(getResult()).getElementTypeBitWidth())
      return inner.getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  bool tensors = isa<RankedTensorType>(getInputs()[0].getType());
  for (Value v : getInputs())
    if (isa<RankedTensorType>(v.getType()) != tensors)
      return emitOpError("takes tensors or buffers, not both");
  return success();
}

LogicalResult
AllReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                              ValueRange operands, DictionaryAttr attributes,
                              OpaqueProperties properties, RegionRange regions,
                              SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  // The buffer form reduces in place and has no results.
  for (Value v : adaptor.getInputs())
    if (isa<RankedTensorType>(v.getType()))
      inferred.push_back(v.getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Sharding collectives: ReduceScatterOp, AllGatherOp, ShardOp
//===----------------------------------------------------------------------===//

int64_t mlir::dlc::shardElements(int64_t elements, int64_t ranks) {
  return ranks > 0 ? (elements + ranks - 1) / ranks : 0;
}

/// The checks the three ops share: inputs and inits pair up, all tensors or
/// all buffers, one side whole (`wholeInputs`: the inputs) and the other
/// its 1-D shards over `ranks`.
static LogicalResult verifySharding(Operation *op, ValueRange inputs,
                                    ValueRange inits, int64_t ranks,
                                    bool wholeInputs) {
  if (inputs.empty())
    return op->emitOpError("needs at least one input");
  if (inputs.size() != inits.size())
    return op->emitOpError("has ")
           << inputs.size() << " inputs but " << inits.size() << " inits";
  bool tensors = isa<RankedTensorType>(inputs[0].getType());
  for (Value v : llvm::concat<const Value>(inputs, inits))
    if (isa<RankedTensorType>(v.getType()) != tensors)
      return op->emitOpError("takes tensors or buffers, not both");
  for (auto [i, in, init] : llvm::enumerate(inputs, inits)) {
    auto whole = cast<ShapedType>((wholeInputs ? in : init).getType());
    auto shard = cast<ShapedType>((wholeInputs ? init : in).getType());
    if (whole.getElementType() != shard.getElementType())
      return op->emitOpError("pair ")
             << i << " mixes element types " << whole.getElementType()
             << " and " << shard.getElementType();
    if (!whole.hasStaticShape() || !shard.hasStaticShape())
      return op->emitOpError("pair ") << i << " has a dynamic shape";
    int64_t expected = shardElements(whole.getNumElements(), ranks);
    if (shard.getRank() != 1 || shard.getDimSize(0) != expected)
      return op->emitOpError("pair ")
             << i << ": a shard of " << whole << " over " << ranks
             << " ranks has shape [" << expected << "], not " << shard;
  }
  return success();
}

/// On tensors, one result per init, of its type; none on buffers.
static void inferShardingResults(ValueRange inits,
                                 SmallVectorImpl<Type> &inferred) {
  for (Value v : inits)
    if (isa<RankedTensorType>(v.getType()))
      inferred.push_back(v.getType());
}

template <typename Op>
static LogicalResult
inferSharding(ValueRange operands, DictionaryAttr attributes,
              OpaqueProperties properties, RegionRange regions,
              SmallVectorImpl<Type> &inferred) {
  typename Op::Adaptor adaptor(operands, attributes, properties, regions);
  inferShardingResults(adaptor.getInits(), inferred);
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  return verifySharding(*this, getInputs(), getInits(), getRanks(),
                        /*wholeInputs=*/true);
}

LogicalResult ReduceScatterOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  return inferSharding<ReduceScatterOp>(operands, attributes, properties,
                                        regions, inferred);
}

LogicalResult AllGatherOp::verify() {
  return verifySharding(*this, getInputs(), getInits(), getRanks(),
                        /*wholeInputs=*/false);
}

LogicalResult
AllGatherOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                              ValueRange operands, DictionaryAttr attributes,
                              OpaqueProperties properties, RegionRange regions,
                              SmallVectorImpl<Type> &inferred) {
  return inferSharding<AllGatherOp>(operands, attributes, properties, regions,
                                    inferred);
}

LogicalResult ShardOp::verify() {
  return verifySharding(*this, getInputs(), getInits(), getRanks(),
                        /*wholeInputs=*/true);
}

LogicalResult ShardOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                        ValueRange operands,
                                        DictionaryAttr attributes,
                                        OpaqueProperties properties,
                                        RegionRange regions,
                                        SmallVectorImpl<Type> &inferred) {
  return inferSharding<ShardOp>(operands, attributes, properties, regions,
                                inferred);
}
