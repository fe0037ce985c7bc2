//===- GpuMapping.cpp - helpers of the CUDA mapping passes ----------------===//
//
// The helpers that dlc-map-gemms and dlc-map-to-gpu share (GpuMapping.h):
// buffers as the runtime takes them, runtime declarations, the CUDA context
// argument, and the questions both passes ask of a bufferized block.
//
//===----------------------------------------------------------------------===//

#include "GpuMapping.h"

#include "dlc/Conversion/BufferViews.h"
#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/dlc_cuda_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::gpu_mapping;

std::optional<Strided> gpu_mapping::stridedOf(Value buffer,
                                              bool dynamicOffset) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Strided s;
  if (failed(type.getStridesAndOffset(s.strides, s.offset)) ||
      (ShapedType::isDynamic(s.offset) && !dynamicOffset) ||
      llvm::any_of(s.strides, ShapedType::isDynamic))
    return std::nullopt;
  return s;
}

Value gpu_mapping::addressOfView(OpBuilder &b, Location loc, Value buffer,
                                 const Strided &s) {
  if (!ShapedType::isDynamic(s.offset))
    return addressOf(b, loc, buffer, s.offset);
  Value offset =
      memref::ExtractStridedMetadataOp::create(b, loc, buffer).getOffset();
  int64_t bytes =
      cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8;
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  base = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, offset,
                            arith::ConstantIndexOp::create(b, loc, bytes)));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), base);
}

BlockArgument mlir::dlc::cudaContextArgument(func::FuncOp func) {
  if (func.isExternal())
    return {};
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName);
        name && name.getValue() == kCudaContextName)
      return func.getArgument(i);
  return {};
}

FailureOr<Value> gpu_mapping::addCudaContext(func::FuncOp func) {
  if (BlockArgument existing = cudaContextArgument(func))
    return Value(existing);
  MLIRContext *ctx = func.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  // The runtime's CUDA context comes last (docs/runtime-abi.md).
  unsigned ctxIndex = func.getNumArguments();
  if (failed(func.insertArgument(
          ctxIndex, ptrTy,
          DictionaryAttr::get(
              ctx, {NamedAttribute(StringAttr::get(ctx, kNameAttrName),
                                   StringAttr::get(ctx, kCudaContextName))}),
          func.getLoc())))
    return failure();
  return Value(func.front().getArgument(ctxIndex));
}

func::FuncOp gpu_mapping::declareRuntimeFunction(ModuleOp module,
                                                 func::FuncOp caller,
                                                 StringRef name,
                                                 TypeRange args) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  // What `caller` and the functions before it call already.
  DenseSet<StringRef> calledBefore;
  for (auto f : module.getOps<func::FuncOp>()) {
    f.walk([&](func::CallOp call) { calledBefore.insert(call.getCallee()); });
    if (f == caller)
      break;
  }
  Operation *before = nullptr;
  for (auto f : module.getOps<func::FuncOp>())
    if (f.isExternal() && f.getSymName().starts_with("dlc_cuda_") &&
        !calledBefore.contains(f.getSymName())) {
      before = f;
      break;
    }
  OpBuilder b =
      before ? OpBuilder(before) : OpBuilder::atBlockEnd(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(args, {}));
  f.setPrivate();
  return f;
}

bool gpu_mapping::usedBetween(Value buffer, Operation *from, Operation *to,
                              bool writesOnly, Operation *except) {
  SmallVector<Value> aliases = bufferAndViews(buffer);
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (op == except)
      continue;
    bool used = false;
    op->walk([&](Operation *inner) {
      for (OpOperand &use : inner->getOpOperands()) {
        if (!llvm::is_contained(aliases, use.get()))
          continue;
        auto linalgOp = dyn_cast<linalg::LinalgOp>(inner);
        bool read = linalgOp && linalgOp.isDpsInput(&use);
        used |= !writesOnly || !read;
      }
    });
    if (used)
      return true;
  }
  return false;
}

bool gpu_mapping::overwrites(Operation *op, Value buffer) {
  auto l = dyn_cast<linalg::LinalgOp>(op);
  if (!l || !l.hasPureBufferSemantics() ||
      l.getNumLoops() != l.getNumParallelLoops() ||
      llvm::is_contained(l.getDpsInputs(), buffer))
    return false;
  for (OpOperand &init : l.getDpsInitsMutable())
    if (init.get() == buffer &&
        (!l.getMatchingIndexingMap(&init).isPermutation() ||
         l.payloadUsesValueFromOperand(&init)))
      return false;
  return llvm::is_contained(l.getDpsInits(), buffer);
}

bool gpu_mapping::overwrittenBeforeRead(Value buffer, Operation *after,
                                        ArrayRef<Operation *> users) {
  Operation *next = nullptr;
  for (Operation *u : users)
    if (after->isBeforeInBlock(u) && (!next || u->isBeforeInBlock(next)))
      next = u;
  return next && overwrites(next, buffer);
}
