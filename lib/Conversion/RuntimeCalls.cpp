//===- RuntimeCalls.cpp - arguments of calls into libdlcrt ----------------===//
//
// See RuntimeCalls.h.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/RuntimeCalls.h"

#include "dlc/dlc_runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

std::optional<int32_t> mlir::dlc::dtypeCode(Type t) {
  if (t.isF32())
    return DLC_F32;
  if (t.isF16())
    return DLC_F16;
  if (t.isBF16())
    return DLC_BF16;
  return std::nullopt;
}

Value mlir::dlc::addressOf(OpBuilder &b, Location loc, Value buffer,
                           int64_t offset) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  if (offset) {
    int64_t bytes =
        cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8;
    base = arith::AddIOp::create(
        b, loc, base, arith::ConstantIndexOp::create(b, loc, offset * bytes));
  }
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), base);
}

Value mlir::dlc::i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
}

Value mlir::dlc::i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}
