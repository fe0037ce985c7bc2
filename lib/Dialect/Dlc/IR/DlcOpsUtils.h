//===- DlcOpsUtils.h - Helpers the op verifiers share ----------*- C++ -*-===//
//
// What the verifiers in DlcOps.cpp, DlcWindowOps.cpp, DlcShapeOps.cpp and
// DlcTrainingOps.cpp have in common: printing a shape for a message,
// NumPy broadcasting, and the checks that ops of two families make alike.
// Private to lib/Dialect/Dlc/IR.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_DIALECT_DLC_IR_DLCOPSUTILS_H
#define DLC_LIB_DIALECT_DLC_IR_DLCOPSUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::dlc::oputils {

/// Prints a shape as `[a, b, c]` for diagnostics.
inline std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

inline RankedTensorType tensorTy(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// NumPy broadcasting of two static shapes; fails when a pair of dimensions
/// is neither equal nor 1 (DlcOps.cpp).
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);

/// Checks that every operand broadcasts (NumPy rules) to the result's shape
/// (DlcShapeOps.cpp).
LogicalResult verifyBroadcastOperands(Operation *op, RankedTensorType out);

/// Logits [N, C] and labels [N], as cross-entropy and its gradient take
/// (DlcOps.cpp).
LogicalResult verifyLogitsAndLabels(Operation *op, Value logitsValue,
                                    Value labelsValue);

} // namespace mlir::dlc::oputils

#endif // DLC_LIB_DIALECT_DLC_IR_DLCOPSUTILS_H
