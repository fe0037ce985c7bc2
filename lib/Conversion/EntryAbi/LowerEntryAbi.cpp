//===- LowerEntryAbi.cpp - dlc-lower-entry-abi ----------------------------===//
//
// Gives every dlc entry point the runtime's calling convention: one memref
// per parameter, per input and per output, no results. See Passes.td and
// docs/runtime-abi.md.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCLOWERENTRYABIPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

MemRefType bufferTypeOf(Type t) {
  auto tt = cast<RankedTensorType>(t);
  return MemRefType::get(tt.getShape(), tt.getElementType());
}

/// pack_weights: `value`, assigned to a packed parameter, is computed into
/// the parameter's buffer `param` rather than a temporary then copied: the
/// empty tensor its chain of destination-passing ops (a transpose, the
/// insert_slices of a concat) starts from becomes the parameter.
void computeInPlace(Value value, Value param) {
  while (value.hasOneUse()) {
    auto dps = value.getDefiningOp<DestinationStyleOpInterface>();
    if (!dps)
      return;
    OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(value));
    if (!init)
      return;
    if (init->get().getDefiningOp<tensor::EmptyOp>() &&
        init->get().getType() == param.getType()) {
      init->set(param);
      return;
    }
    value = init->get();
  }
}

struct DlcLowerEntryAbiPass
    : dlc::impl::DlcLowerEntryAbiPassBase<DlcLowerEntryAbiPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ParameterOp> params(module.getOps<ParameterOp>());
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (func->hasAttr(kEntryAttrName) && failed(lowerEntry(func, params)))
        return signalPassFailure();
    // Any dlc.param left is outside an entry point: nothing could bind it.
    WalkResult stray = module.walk([](ParamOp op) {
      op.emitOpError("is used outside a dlc.entry function");
      return WalkResult::interrupt();
    });
    if (stray.wasInterrupted())
      return signalPassFailure();
    for (ParameterOp p : params)
      p.erase();
  }

  LogicalResult lowerEntry(func::FuncOp func, ArrayRef<ParameterOp> params) {
    if (func.isExternal())
      return func.emitOpError("entry point has no body");
    MLIRContext *ctx = &getContext();
    Block &entry = func.front();
    Location loc = func.getLoc();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    auto noalias = NamedAttribute(StringAttr::get(ctx, "llvm.noalias"),
                                  UnitAttr::get(ctx));
    SmallVector<Type> argTypes;
    SmallVector<DictionaryAttr> argAttrs;
    auto addArg = [&](Type tensorTy, StringRef name) {
      MemRefType mt = bufferTypeOf(tensorTy);
      argTypes.push_back(mt);
      argAttrs.push_back(DictionaryAttr::get(
          ctx, {noalias, NamedAttribute(StringAttr::get(ctx, kNameAttrName),
                                        StringAttr::get(ctx, name))}));
      return entry.addArgument(mt, loc);
    };

    // Parameters first: one tensor view each, writable for the parameters
    // the entry assigns (the training step updates them in place).
    SmallVector<AssignOp> assigns;
    func.walk([&](AssignOp op) { assigns.push_back(op); });
    llvm::StringSet<> assigned;
    for (AssignOp op : assigns)
      assigned.insert(op.getName());
    llvm::StringMap<Value> paramValues, paramBuffers;
    for (ParameterOp p : params) {
      BlockArgument a = addArg(p.getType(), p.getSymName());
      paramBuffers[p.getSymName()] = a;
      paramValues[p.getSymName()] = bufferization::ToTensorOp::create(
          b, loc, p.getType(), a, /*restrict=*/true,
          /*writable=*/assigned.contains(p.getSymName()));
    }
    // An assignment writes the new value into the parameter's buffer; when
    // the value was computed in place there, the copy folds away.
    for (AssignOp op : assigns) {
      auto it = paramBuffers.find(op.getName());
      if (it == paramBuffers.end())
        return op.emitOpError("refers to an unknown parameter");
      if (func->hasAttr(kPackWeightsAttrName))
        computeInPlace(op.getValue(), paramValues[op.getName()]);
      OpBuilder ab(op);
      bufferization::MaterializeInDestinationOp::create(
          ab, op.getLoc(), TypeRange{}, op.getValue(), it->second,
          UnitAttr::get(ctx), UnitAttr::get(ctx));
      op.erase();
    }
    WalkResult bad = func.walk([&](ParamOp op) {
      auto it = paramValues.find(op.getName());
      if (it == paramValues.end()) {
        op.emitOpError("refers to an unknown parameter");
        return WalkResult::interrupt();
      }
      op.replaceAllUsesWith(it->second);
      op.erase();
      return WalkResult::advance();
    });
    if (bad.wasInterrupted())
      return failure();

    // Then the inputs, in order. (The walk above may have erased the op the
    // builder was inserting before.)
    b.setInsertionPointToStart(&entry);
    unsigned numOld = entry.getNumArguments() - params.size();
    for (unsigned i = 0; i < numOld; ++i) {
      BlockArgument old = entry.getArgument(i);
      if (!isa<RankedTensorType>(old.getType()))
        return func.emitOpError("entry argument ")
               << i << " is not a ranked tensor";
      auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName);
      BlockArgument a =
          addArg(old.getType(),
                 name ? name.getValue() : StringRef("arg" + std::to_string(i)));
      old.replaceAllUsesWith(bufferization::ToTensorOp::create(
          b, loc, old.getType(), a, /*restrict=*/true, /*writable=*/false));
    }

    // Then the outputs: each returned tensor is written into its buffer.
    SmallVector<BlockArgument> outs;
    for (auto [i, t] : llvm::enumerate(func.getResultTypes())) {
      if (!isa<RankedTensorType>(t))
        return func.emitOpError("entry result ")
               << i << " is not a ranked tensor";
      auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttrName);
      outs.push_back(addArg(t, name ? name.getValue()
                                    : StringRef("out" + std::to_string(i))));
    }
    SmallVector<func::ReturnOp> returns;
    func.walk([&](func::ReturnOp r) { returns.push_back(r); });
    for (func::ReturnOp r : returns) {
      OpBuilder rb(r);
      for (auto [v, buf] : llvm::zip(r.getOperands(), outs)) {
        auto m = bufferization::MaterializeInDestinationOp::create(
            rb, r.getLoc(), TypeRange{}, v, buf, UnitAttr::get(ctx),
            UnitAttr::get(ctx));
        (void)m;
      }
      func::ReturnOp::create(rb, r.getLoc());
      r.erase();
    }

    // Drop the old tensor arguments and install the new signature.
    llvm::BitVector drop(entry.getNumArguments());
    drop.set(0, numOld);
    entry.eraseArguments(drop);
    func.setType(FunctionType::get(ctx, argTypes, {}));
    func.setAllArgAttrs(argAttrs);
    func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    return success();
  }
};

} // namespace
