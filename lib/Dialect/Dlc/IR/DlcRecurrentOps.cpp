//===- DlcRecurrentOps.cpp - Recurrent layers -----------------------------===//
//
// The verifiers of the recurrent ops: dlc.lstm and dlc.gru and their
// backpropagation through time, dlc.lstm_grad and dlc.gru_grad. Their
// gradient rules are in DlcGradients.cpp, their lowering to an scf.for over
// the steps in lib/Conversion/DlcToLinalg/Recurrent.cpp.
//
//===----------------------------------------------------------------------===//

#include "DlcOpsUtils.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::oputils;

namespace {

/// Checks that every value of `named` has the expected static shape and
/// the element type of the first.
LogicalResult verifyShapes(
    Operation *op,
    ArrayRef<std::tuple<StringRef, Value, SmallVector<int64_t>>> named) {
  Type elem = tensorTy(std::get<1>(named.front())).getElementType();
  for (auto &[name, value, shape] : named) {
    auto ty = tensorTy(value);
    if (ty.getElementType() != elem)
      return op->emitOpError("'")
             << name << "' has element type " << ty.getElementType()
             << ", expected " << elem << " like the others";
    if (ty.getShape() != ArrayRef<int64_t>(shape))
      return op->emitOpError("'") << name << "' must be " << shapeStr(shape)
                                  << ", got " << shapeStr(ty.getShape());
  }
  return success();
}

/// Steps, batch and hidden size of a recurrent op whose `projection` is
/// [T, B, G * H] for G gates.
FailureOr<std::array<int64_t, 3>> sequenceDims(Operation *op, Value projection,
                                               int64_t numGates) {
  auto ty = tensorTy(projection);
  if (ty.getRank() != 3 || !ty.hasStaticShape() || ty.getDimSize(0) < 1 ||
      ty.getDimSize(2) % numGates != 0 || ty.getDimSize(2) == 0)
    return op->emitOpError("needs a static [T, B, ")
           << numGates << "H] sequence with T >= 1, got "
           << shapeStr(ty.getShape());
  return std::array<int64_t, 3>{ty.getDimSize(0), ty.getDimSize(1),
                                ty.getDimSize(2) / numGates};
}

} // namespace

LogicalResult LstmOp::verify() {
  auto dims = sequenceDims(*this, getProjection(), 4);
  if (failed(dims))
    return failure();
  auto [t, b, h] = *dims;
  return verifyShapes(*this,
                      {{"projection", getProjection(), {t, b, 4 * h}},
                       {"recurrent_weight", getRecurrentWeight(), {4 * h, h}},
                       {"initial_h", getInitialH(), {b, h}},
                       {"initial_c", getInitialC(), {b, h}},
                       {"y", getY(), {t, b, h}},
                       {"c", getC(), {t, b, h}},
                       {"gates", getGates(), {t, b, 4 * h}}});
}

LogicalResult LstmGradOp::verify() {
  auto dims = sequenceDims(*this, getGates(), 4);
  if (failed(dims))
    return failure();
  auto [t, b, h] = *dims;
  return verifyShapes(*this,
                      {{"gates", getGates(), {t, b, 4 * h}},
                       {"y_grad", getYGrad(), {t, b, h}},
                       {"c_grad", getCGrad(), {t, b, h}},
                       {"recurrent_weight", getRecurrentWeight(), {4 * h, h}},
                       {"initial_c", getInitialC(), {b, h}},
                       {"c", getC(), {t, b, h}},
                       {"gates_grad", getGatesGrad(), {t, b, 4 * h}},
                       {"initial_h_grad", getInitialHGrad(), {b, h}},
                       {"initial_c_grad", getInitialCGrad(), {b, h}}});
}

LogicalResult GruOp::verify() {
  auto dims = sequenceDims(*this, getProjection(), 3);
  if (failed(dims))
    return failure();
  auto [t, b, h] = *dims;
  return verifyShapes(*this,
                      {{"projection", getProjection(), {t, b, 3 * h}},
                       {"recurrent_weight", getRecurrentWeight(), {3 * h, h}},
                       {"recurrent_bias", getRecurrentBias(), {3 * h}},
                       {"initial_h", getInitialH(), {b, h}},
                       {"y", getY(), {t, b, h}},
                       {"gates", getGates(), {t, b, 3 * h}}});
}

LogicalResult GruGradOp::verify() {
  auto dims = sequenceDims(*this, getGates(), 3);
  if (failed(dims))
    return failure();
  auto [t, b, h] = *dims;
  return verifyShapes(*this,
                      {{"gates", getGates(), {t, b, 3 * h}},
                       {"y_grad", getYGrad(), {t, b, h}},
                       {"recurrent_weight", getRecurrentWeight(), {3 * h, h}},
                       {"initial_h", getInitialH(), {b, h}},
                       {"projection", getProjection(), {t, b, 3 * h}},
                       {"y", getY(), {t, b, h}},
                       {"projection_grad", getProjectionGrad(), {t, b, 3 * h}},
                       {"gates_grad", getGatesGrad(), {t, b, 3 * h}},
                       {"initial_h_grad", getInitialHGrad(), {b, h}}});
}
