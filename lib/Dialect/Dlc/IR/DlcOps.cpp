//===- DlcOps.cpp - dlc dialect operations --------------------------------===//
//
// Verifiers, folders and canonicalisation patterns of the dlc ops. Verifier
// messages name the offending shapes so that a user reading a diagnostic on
// their model description knows which operand is wrong.
//
// The ops are split by family. This file holds element type names, the
// parameters, the contractions, the elementwise ops, the normalisations,
// the reductions and the losses, and includes the generated op
// definitions; DlcWindowOps.cpp has the convolutions and pools,
// DlcShapeOps.cpp the shape manipulation, DlcTrainingOps.cpp the ops of the
// training step, DlcGradients.cpp the gradient rules and DlcDevices.cpp the
// device checks. DlcOpsUtils.h holds what they share.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "DlcOpsUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <cstdint>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::oputils;

int64_t mlir::dlc::tensorBytes(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t ? t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8) : 0;
}

bool mlir::dlc::writesParameters(Operation *function) {
  return function
      ->walk([](Operation *op) {
        return isa<AssignOp, OptimizerUpdateOp>(op) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
      })
      .wasInterrupted();
}

Value mlir::dlc::matrixTransposeInput(Value value) {
  auto t = value.getDefiningOp<TransposeOp>();
  return t && t.getPermutation() == ArrayRef<int64_t>{1, 0} ? t.getInput()
                                                            : Value();
}

StringRef mlir::dlc::elementTypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF64())
    return "f64";
  if (t.isSignlessInteger(64))
    return "i64";
  if (t.isSignlessInteger(32))
    return "i32";
  if (t.isSignlessInteger(8))
    return "i8";
  return "";
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

LogicalResult ParameterOp::verify() {
  bool fromData = getInit() == ParameterInit::data;
  if (fromData != bool(getValueAttr()))
    return emitOpError(fromData
                           ? "with init 'data' needs a 'value' attribute"
                           : "has a 'value' attribute but init is not 'data'");
  if (ElementsAttr value = getValueAttr()) {
    if (value.getType() != getType())
      return emitOpError("value type ")
             << value.getType() << " does not match the parameter's type "
             << getType();
    if (!isa<DenseElementsAttr, DenseResourceElementsAttr>(value))
      return emitOpError("value must be a dense or dense_resource attribute");
  }
  if (!getTensorType().hasStaticShape())
    return emitOpError("must have a static shape");
  if (getBound().convertToDouble() < 0)
    return emitOpError("has a negative bound");
  if (bool(getShardOfAttr()) != bool(getShardRanksAttr()))
    return emitOpError("needs both 'shard_of' and 'shard_ranks', or neither");
  if (auto whole = getShardOfAttr()) {
    if (getRole() != ParameterRole::optimizer_state)
      return emitOpError("is sharded, but only optimizer state can be");
    int64_t ranks = *getShardRanks(), elements = 1;
    if (ranks < 1)
      return emitOpError("has 'shard_ranks' ") << ranks << ", not positive";
    for (int64_t d : whole.asArrayRef()) {
      if (d < 0 || (d > 0 && elements > INT64_MAX / d))
        return emitOpError("has a bad 'shard_of' shape");
      elements *= d;
    }
    int64_t expected = shardElements(elements, ranks);
    if (getTensorType().getRank() != 1 ||
        getTensorType().getDimSize(0) != expected)
      return emitOpError("is a shard over ")
             << ranks << " ranks of a tensor of " << elements
             << " elements: its type must be "
             << RankedTensorType::get({expected},
                                      getTensorType().getElementType());
  }
  return success();
}

LogicalResult ParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!param)
    return emitOpError("refers to '")
           << getName() << "', which is not a dlc.parameter";
  if (param.getType() != getType())
    return emitOpError("result type ")
           << getType() << " does not match the parameter's type "
           << param.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  auto in = tensorTy(getInput()), w = tensorTy(getWeight()),
       out = tensorTy(getResult());
  if (in.getRank() < 1)
    return emitOpError("input must have rank >= 1");
  if (w.getRank() != 2)
    return emitOpError("weight must be [out, in], got ")
           << shapeStr(w.getShape());
  int64_t inF = in.getShape().back(), outF = w.getDimSize(0);
  if (w.getDimSize(1) != inF)
    return emitOpError("weight ")
           << shapeStr(w.getShape()) << " expects " << w.getDimSize(1)
           << " input features but the input " << shapeStr(in.getShape())
           << " has " << inF;
  if (getBias()) {
    auto b = tensorTy(getBias());
    if (b.getRank() != 1 || b.getDimSize(0) != outF)
      return emitOpError("bias must be [")
             << outF << "], got " << shapeStr(b.getShape());
    if (b.getElementType() != in.getElementType())
      return emitOpError("bias element type must match the input's");
  }
  if (w.getElementType() != in.getElementType() ||
      out.getElementType() != in.getElementType())
    return emitOpError("input, weight and result must have one element type");
  SmallVector<int64_t> expected(in.getShape());
  expected.back() = outF;
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be ")
           << shapeStr(expected) << ", got " << shapeStr(out.getShape());
  return success();
}

LogicalResult MatmulOp::verify() {
  auto a = tensorTy(getLhs()), b = tensorTy(getRhs()),
       c = tensorTy(getResult());
  if (a.getRank() != b.getRank() || (a.getRank() != 2 && a.getRank() != 3))
    return emitOpError("operands must both be rank 2 or both rank 3, got ")
           << shapeStr(a.getShape()) << " and " << shapeStr(b.getShape());
  if (a.getElementType() != b.getElementType() ||
      c.getElementType() != a.getElementType())
    return emitOpError("operands and result must have one element type");
  int64_t r = a.getRank();
  if (r == 3 && a.getDimSize(0) != b.getDimSize(0))
    return emitOpError("batch dimensions differ: ")
           << shapeStr(a.getShape()) << " and " << shapeStr(b.getShape());
  if (a.getDimSize(r - 1) != b.getDimSize(r - 2))
    return emitOpError("inner dimensions differ: ")
           << shapeStr(a.getShape()) << " x " << shapeStr(b.getShape());
  SmallVector<int64_t> expected(a.getShape());
  expected.back() = b.getShape().back();
  if (c.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be ")
           << shapeStr(expected) << ", got " << shapeStr(c.getShape());
  return success();
}

LogicalResult AttentionOp::verify() {
  auto q = tensorTy(getQuery()), k = tensorTy(getKey()),
       v = tensorTy(getValue()), o = tensorTy(getResult());
  int64_t r = q.getRank();
  if (r < 2 || k.getRank() != r || v.getRank() != r)
    return emitOpError("query, key and value must have one rank of at least "
                       "2, got ")
           << shapeStr(q.getShape()) << ", " << shapeStr(k.getShape())
           << " and " << shapeStr(v.getShape());
  Type elem = q.getElementType();
  if (k.getElementType() != elem || v.getElementType() != elem ||
      o.getElementType() != elem)
    return emitOpError("query, key, value and result must have one element "
                       "type");
  ArrayRef<int64_t> batch = q.getShape().drop_back(2);
  if (k.getShape().drop_back(2) != batch || v.getShape().drop_back(2) != batch)
    return emitOpError("batch dimensions differ: ")
           << shapeStr(q.getShape()) << ", " << shapeStr(k.getShape())
           << " and " << shapeStr(v.getShape());
  int64_t lq = q.getDimSize(r - 2), lk = k.getDimSize(r - 2);
  if (k.getDimSize(r - 1) != q.getDimSize(r - 1))
    return emitOpError("query and key must have one feature size, got ")
           << shapeStr(q.getShape()) << " and " << shapeStr(k.getShape());
  if (v.getDimSize(r - 2) != lk)
    return emitOpError("key and value must have one sequence length, got ")
           << shapeStr(k.getShape()) << " and " << shapeStr(v.getShape());
  SmallVector<int64_t> scores(batch);
  scores.append({lq, lk});
  if (Value mask = getMask()) {
    auto m = tensorTy(mask);
    if (m.getElementType() != elem)
      return emitOpError("mask element type must match the query's");
    auto b = broadcastShapes(m.getShape(), scores);
    if (failed(b) || ArrayRef<int64_t>(*b) != ArrayRef<int64_t>(scores))
      return emitOpError("mask ")
             << shapeStr(m.getShape()) << " does not broadcast to the scores "
             << shapeStr(scores);
  }
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError("scale must be finite");
  SmallVector<int64_t> expected(batch);
  expected.append({lq, v.getDimSize(r - 1)});
  if (o.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be ")
           << shapeStr(expected) << ", got " << shapeStr(o.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// NumPy broadcasting of two static shapes; fails when a pair of dimensions
/// is neither equal nor 1.
FailureOr<SmallVector<int64_t>> oputils::broadcastShapes(ArrayRef<int64_t> a,
                                                         ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

static LogicalResult verifyBinary(Operation *op) {
  auto a = tensorTy(op->getOperand(0)), b = tensorTy(op->getOperand(1)),
       c = tensorTy(op->getResult(0));
  if (a.getElementType() != b.getElementType() ||
      c.getElementType() != a.getElementType())
    return op->emitOpError(
               "operands and result must have one element type, got ")
           << a.getElementType() << " and " << b.getElementType();
  auto shape = broadcastShapes(a.getShape(), b.getShape());
  if (failed(shape))
    return op->emitOpError("operand shapes ")
           << shapeStr(a.getShape()) << " and " << shapeStr(b.getShape())
           << " do not broadcast";
  if (c.getShape() != ArrayRef<int64_t>(*shape))
    return op->emitOpError("result must be ")
           << shapeStr(*shape) << ", got " << shapeStr(c.getShape());
  return success();
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

static LogicalResult verifyDim(Operation *op, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError("dim ")
           << dim << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyDim(*this, getDim(), tensorTy(getInput()).getRank());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyDim(*this, getDim(), tensorTy(getInput()).getRank());
}

LogicalResult LayerNormOp::verify() {
  auto in = tensorTy(getInput());
  if (in.getRank() < 1)
    return emitOpError("input must have rank >= 1");
  int64_t d = in.getShape().back();
  for (Value v : {getWeight(), getBias()}) {
    auto t = tensorTy(v);
    if (t.getRank() != 1 || t.getDimSize(0) != d ||
        t.getElementType() != in.getElementType())
      return emitOpError("weight and bias must be [")
             << d << "] of " << in.getElementType() << ", got " << t;
  }
  if (getEpsilon().convertToDouble() <= 0)
    return emitOpError("epsilon must be positive");
  return success();
}

LogicalResult BatchNormOp::verify() {
  auto in = tensorTy(getInput());
  if (in.getRank() < 2)
    return emitOpError("input must be [N, C, ...], got ")
           << shapeStr(in.getShape());
  int64_t c = in.getDimSize(1);
  StringRef names[] = {"scale", "bias", "mean", "var"};
  Value values[] = {getScale(), getBias(), getMean(), getVar()};
  for (auto [name, v] : llvm::zip(names, values)) {
    auto t = tensorTy(v);
    if (t.getRank() != 1 || t.getDimSize(0) != c ||
        t.getElementType() != in.getElementType())
      return emitOpError() << name << " must be [" << c << "] of "
                           << in.getElementType() << " (one per channel of "
                           << shapeStr(in.getShape()) << "), got " << t;
  }
  if (getEpsilon().convertToDouble() <= 0)
    return emitOpError("epsilon must be positive");
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static LogicalResult verifyReduction(Operation *op, ArrayRef<int64_t> dims,
                                     bool keepdim) {
  auto in = tensorTy(op->getOperand(0)), out = tensorTy(op->getResult(0));
  if (out.getElementType() != in.getElementType())
    return op->emitOpError("must keep the element type");
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= in.getRank())
      return op->emitOpError("dim ")
             << dims[i] << " is out of range for rank " << in.getRank();
    if (i > 0 && dims[i] <= dims[i - 1])
      return op->emitOpError("dims must be sorted and unique, got ")
             << shapeStr(dims);
  }
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!llvm::is_contained(dims, d))
      expected.push_back(in.getDimSize(d));
    else if (keepdim)
      expected.push_back(1);
  }
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("result must be ")
           << shapeStr(expected) << ", got " << shapeStr(out.getShape());
  return success();
}

LogicalResult SumOp::verify() {
  return verifyReduction(*this, getDims(), getKeepdim());
}
LogicalResult MeanOp::verify() {
  return verifyReduction(*this, getDims(), getKeepdim());
}
LogicalResult MaxOp::verify() {
  return verifyReduction(*this, getDims(), getKeepdim());
}
LogicalResult MinOp::verify() {
  return verifyReduction(*this, getDims(), getKeepdim());
}
LogicalResult ExtremumGradOp::verify() {
  auto in = tensorTy(getInput());
  ArrayRef<int64_t> dims = getDims();
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0 || dims[i] >= in.getRank() ||
        (i > 0 && dims[i] <= dims[i - 1]))
      return emitOpError("dims must be sorted, unique and in range for rank ")
             << in.getRank() << ", got " << shapeStr(dims);
  SmallVector<int64_t> reduced;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!llvm::is_contained(getDims(), d))
      reduced.push_back(in.getDimSize(d));
    else if (getKeepdim())
      reduced.push_back(1);
  }
  for (Value v : {getExtremum(), getGrad()})
    if (tensorTy(v).getShape() != ArrayRef<int64_t>(reduced))
      return emitOpError("extremum and grad must be ")
             << shapeStr(reduced) << ", got "
             << shapeStr(tensorTy(v).getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult MseLossOp::verify() {
  auto a = tensorTy(getInput()), b = tensorTy(getTarget());
  if (a != b)
    return emitOpError("input and target must have the same type, got ")
           << a << " and " << b;
  if (tensorTy(getResult()).getElementType() != a.getElementType())
    return emitOpError("result must be a scalar of ") << a.getElementType();
  return success();
}

/// Logits [N, C] and labels [N], as cross-entropy and its gradient take.
LogicalResult oputils::verifyLogitsAndLabels(Operation *op, Value logitsValue,
                                             Value labelsValue) {
  auto logits = tensorTy(logitsValue), labels = tensorTy(labelsValue);
  if (logits.getRank() != 2)
    return op->emitOpError("logits must be [N, C], got ")
           << shapeStr(logits.getShape());
  if (labels.getRank() != 1 || labels.getDimSize(0) != logits.getDimSize(0))
    return op->emitOpError("labels must be [")
           << logits.getDimSize(0) << "] class indices, got "
           << shapeStr(labels.getShape());
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(verifyLogitsAndLabels(*this, getLogits(), getLabels())))
    return failure();
  auto logits = tensorTy(getLogits());
  if (tensorTy(getResult()).getElementType() != logits.getElementType())
    return emitOpError("result must be a scalar of ")
           << logits.getElementType();
  if (getCount() &&
      tensorTy(getCount()).getElementType() != logits.getElementType())
    return emitOpError("count must be a scalar of ") << logits.getElementType();
  return success();
}

LogicalResult CountLabelsOp::verify() {
  auto labels = tensorTy(getLabels());
  if (labels.getRank() != 1)
    return emitOpError("labels must be 1-D, got ")
           << shapeStr(labels.getShape());
  return success();
}

#include "dlc/Dialect/Dlc/IR/DlcInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dlc/Dialect/Dlc/IR/DlcOps.cpp.inc"
