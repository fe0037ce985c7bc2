//===- InsertAutocast.cpp - dlc-insert-autocast ---------------------------===//
//
// Mixed precision by op policy, like torch.autocast: contractions in 16
// bits with fp32 accumulation, numerically sensitive ops in fp32, the rest
// following their operands; fp32 master weights cast once per function.
// See Passes.td for the contract and docs/mixed-precision.md.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCINSERTAUTOCASTPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

enum class Policy { Low, Fp32, Follow, Keep };

Policy policyOf(Operation *op) {
  if (isa<LinearOp, MatmulOp>(op))
    return Policy::Low;
  if (isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, ExpOp, LogOp, SumOp, MeanOp,
          MseLossOp, CrossEntropyOp>(op))
    return Policy::Fp32;
  if (isa<ReluOp, TanhOp, SigmoidOp, GeluOp, NegOp, SqrtOp, ErfOp, AddOp, SubOp,
          MulOp, DivOp, ReshapeOp, TransposeOp, BroadcastToOp, ScaleOp>(op))
    return Policy::Follow;
  // Reads of parameters, casts, transfers, and ops of other dialects.
  if (isa<ParamOp, ParameterOp, CastOp, TransferOp>(op) ||
      !isa<DlcDialect>(op->getDialect()))
    return Policy::Keep;
  // Every other dlc op computes in fp32 until it is given a 16-bit
  // kernel: the image ops (conv2d, the pools, batch_norm) today. Left as
  // they were, they would read a 16-bit operand into an fp32 result,
  // which they do not accept.
  return Policy::Fp32;
}

RankedTensorType withElement(Type t, Type elem) {
  auto tt = cast<RankedTensorType>(t);
  return RankedTensorType::get(tt.getShape(), elem);
}

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

struct DlcInsertAutocastPass
    : dlc::impl::DlcInsertAutocastPassBase<DlcInsertAutocastPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Type low;
    if (precision == "bf16")
      low = BFloat16Type::get(ctx);
    else if (precision == "fp16")
      low = Float16Type::get(ctx);
    else {
      getOperation().emitError("unknown precision '")
          << precision << "'; expected bf16 or fp16";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        autocast(func, low);
  }

  void autocast(func::FuncOp func, Type low) {
    Type f32 = Float32Type::get(&getContext());
    // The cast cache: one cast of a value to a type, right after the value
    // is defined, shared by every user.
    llvm::DenseMap<std::pair<Value, Type>, Value> casts;
    auto castTo = [&](Value v, Type elem) -> Value {
      auto t = cast<RankedTensorType>(v.getType());
      if (t.getElementType() == elem)
        return v;
      auto key = std::make_pair(v, elem);
      if (Value c = casts.lookup(key))
        return c;
      OpBuilder b(func.getContext());
      if (auto arg = dyn_cast<BlockArgument>(v))
        b.setInsertionPointToStart(arg.getOwner());
      else
        b.setInsertionPointAfter(v.getDefiningOp());
      Value c = CastOp::create(b, v.getLoc(), withElement(t, elem), v);
      casts[key] = c;
      return c;
    };

    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (op->getParentOp() == func)
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        // Results keep their declared types.
        for (auto [i, v] : llvm::enumerate(ret.getOperands()))
          if (isFloatTensor(v))
            ret.setOperand(
                i, castTo(v, cast<RankedTensorType>(func.getResultTypes()[i])
                                 .getElementType()));
        continue;
      }
      Policy policy = policyOf(op);
      if (policy == Policy::Keep)
        continue;
      Type target = f32;
      if (policy == Policy::Low)
        target = low;
      else if (policy == Policy::Follow) {
        bool allLow = llvm::all_of(op->getOperands(), [&](Value v) {
          return !isFloatTensor(v) ||
                 cast<RankedTensorType>(v.getType()).getElementType() == low;
        });
        target = allLow ? low : f32;
      }
      for (OpOperand &operand : op->getOpOperands())
        if (isFloatTensor(operand.get()))
          operand.set(castTo(operand.get(), target));
      // Contractions and followers produce the type they computed in; the
      // fp32 ops already produce fp32.
      if (policy != Policy::Fp32)
        for (Value r : op->getResults())
          if (isFloatTensor(r))
            r.setType(withElement(r.getType(), target));
    }
  }
};

} // namespace
