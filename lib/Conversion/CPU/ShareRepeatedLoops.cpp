//===- ShareRepeatedLoops.cpp - dlc-share-repeated-loops ------------------===//
//
// Outlines the loop nests that a module's functions repeat (a deep model's
// layers, after tiling and vectorisation) into one function per distinct
// nest, so that LLVM compiles each once. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCSHAREREPEATEDLOOPSPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// The symbol every candidate function has while it is compared, so that
/// names play no part; the shared ones are renamed when inserted.
constexpr llvm::StringLiteral kCandidateName = "dlc_shared_loop";

/// Whether a value of `type` can be an argument (or, `result`, a result)
/// of a function that convert-func-to-llvm lowers with bare pointers:
/// integers, indices and floats; memrefs of static shape, strides and
/// offset as arguments.
bool isPassable(Type type, bool result) {
  if (type.isIntOrIndexOrFloat())
    return true;
  if (result)
    return false;
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return false;
  return !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// Whether `v` is a constant defined by an op without operands or regions,
/// which the outlined function clones rather than takes.
bool isClonedConstant(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         matchPattern(v, m_Constant());
}

/// The memory a buffer covers: bytes [begin, end) of `base`, an entry
/// argument or an allocation (end < 0: all of it, as far as is known).
struct Extent {
  Value base;
  int64_t begin = 0, end = -1;
};

/// The bytes that the elements of `type` span from its start, when static.
std::optional<int64_t> spanBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  int64_t last = offset; // the element farthest from the base pointer
  for (auto [size, stride] : llvm::zip(type.getShape(), strides)) {
    if (size == 0)
      return 0;
    last += (size - 1) * stride;
  }
  return (last + 1) * int64_t(type.getElementTypeBitWidth() / 8);
}

/// What `v` covers: through memref.view ops with constant shifts, exactly;
/// through any other view, all of its source.
Extent extentOf(Value v) {
  std::optional<int64_t> span = spanBytes(cast<MemRefType>(v.getType()));
  int64_t shift = 0;
  bool exact = span.has_value();
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      APInt bytes;
      if (!matchPattern(view.getByteShift(), m_ConstantInt(&bytes)))
        exact = false;
      else
        shift += bytes.getSExtValue();
      v = view.getSource();
    } else if (auto viewLike = dyn_cast<ViewLikeOpInterface>(def)) {
      exact = false;
      v = viewLike.getViewSource();
    } else {
      break;
    }
  }
  if (!exact)
    return {v};
  return {v, shift, shift + *span};
}

/// Whether `base` is memory that nothing but its own views reach: an
/// argument marked llvm.noalias, or an allocation.
bool isDistinctObject(Value base) {
  if (auto arg = dyn_cast<BlockArgument>(base)) {
    auto function = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return function && arg.getOwner()->isEntryBlock() &&
           function.getArgAttr(arg.getArgNumber(), "llvm.noalias");
  }
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
      base.getDefiningOp());
}

/// Whether the buffers in `values` are pairwise disjoint.
bool disjoint(ArrayRef<Value> values) {
  SmallVector<Extent> extents;
  for (Value v : values)
    if (isa<MemRefType>(v.getType()))
      extents.push_back(extentOf(v));
  for (size_t i = 0; i < extents.size(); ++i)
    for (size_t j = i + 1; j < extents.size(); ++j) {
      const Extent &a = extents[i], &b = extents[j];
      if (a.base != b.base) {
        if (!isDistinctObject(a.base) || !isDistinctObject(b.base))
          return false;
        continue;
      }
      if (a.end < 0 || b.end < 0 || (a.begin < b.end && b.begin < a.end))
        return false;
    }
  return true;
}

/// One top-level op with regions, and the function it would become.
struct Candidate {
  Operation *op;
  /// The values it uses from outside, in order of first use: the
  /// function's arguments.
  SmallVector<Value> captures;
  func::FuncOp function; ///< Detached, named kCandidateName.
};

/// The function that `op` becomes: its captures as arguments, its results
/// as results, its constants cloned; failure when something cannot be
/// passed.
FailureOr<Candidate> outline(Operation *op) {
  Candidate c{op, {}, nullptr};
  llvm::SetVector<Value> captures;
  llvm::SetVector<Value> constants;
  WalkResult walk = op->walk<WalkOrder::PreOrder>([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      if (op->isAncestor(v.getParentRegion()->getParentOp()))
        continue; // defined inside
      if (isClonedConstant(v)) {
        constants.insert(v);
        continue;
      }
      if (!isPassable(v.getType(), /*result=*/false))
        return WalkResult::interrupt();
      captures.insert(v);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || !llvm::all_of(op->getResultTypes(), [](Type t) {
        return isPassable(t, /*result=*/true);
      }))
    return failure();
  c.captures.assign(captures.begin(), captures.end());

  MLIRContext *ctx = op->getContext();
  SmallVector<Type> inputs;
  for (Value v : c.captures)
    inputs.push_back(v.getType());
  auto type = FunctionType::get(ctx, inputs, op->getResultTypes());
  OpBuilder b(ctx);
  c.function = func::FuncOp::create(op->getLoc(), kCandidateName, type);
  Block *entry = c.function.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  for (auto [v, arg] : llvm::zip(c.captures, entry->getArguments()))
    mapping.map(v, arg);
  for (Value v : constants)
    b.clone(*v.getDefiningOp(), mapping);
  Operation *clone = b.clone(*op, mapping);
  func::ReturnOp::create(b, op->getLoc(), clone->getResults());
  return c;
}

/// The text that identifies what `function` computes: its generic form
/// without locations, every constant in full.
std::string keyOf(func::FuncOp function) {
  std::string key;
  llvm::raw_string_ostream os(key);
  function->print(os, OpPrintingFlags().printGenericOpForm());
  return key;
}

struct DlcShareRepeatedLoopsPass
    : dlc::impl::DlcShareRepeatedLoopsPassBase<DlcShareRepeatedLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Candidates by what they compute, in the order they first occur.
    llvm::MapVector<std::string, SmallVector<Candidate>,
                    std::map<std::string, unsigned>>
        groups;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      for (Operation &op : function.getBody().getOps()) {
        if (op.getNumRegions() == 0 || op.hasTrait<OpTrait::IsTerminator>())
          continue;
        FailureOr<Candidate> c = outline(&op);
        if (failed(c))
          continue;
        std::string key = keyOf(c->function);
        groups[key].push_back(*c);
      }
    }

    SymbolTable symbols(module);
    OpBuilder b(&getContext());
    unsigned numShared = 0;
    for (auto &[key, members] : groups) {
      // Shared when a function repeats it: a nest that each function has
      // once (the forward pass of `forward` and of `train_step`) stays, so
      // that a model without repetition keeps the code it had.
      llvm::SmallPtrSet<Operation *, 4> functions;
      bool repeated = false;
      for (Candidate &c : members)
        repeated |= !functions.insert(c.op->getParentOp()).second;
      if (!repeated) {
        for (Candidate &c : members)
          c.function.erase();
        continue;
      }
      func::FuncOp shared = members.front().function;
      // Where every caller passes disjoint buffers, the arguments are
      // llvm.noalias, as the entries' are: the outlined code keeps what the
      // inlined code knew.
      if (llvm::all_of(members,
                       [](const Candidate &c) { return disjoint(c.captures); }))
        for (unsigned i = 0; i < shared.getNumArguments(); ++i)
          if (isa<MemRefType>(shared.getArgument(i).getType()))
            shared.setArgAttr(i, "llvm.noalias", b.getUnitAttr());
      shared.setPrivate();
      // Internal to the object, and called, not copied back into each caller
      // (which would undo the sharing).
      shared->setAttr(
          "llvm.linkage",
          LLVM::LinkageAttr::get(&getContext(), LLVM::Linkage::Internal));
      shared->setAttr("passthrough",
                      b.getArrayAttr({b.getStringAttr("noinline")}));
      shared.setSymName((kCandidateName + "_" + Twine(numShared++)).str());
      symbols.insert(shared); // renamed if the name is taken
      for (Candidate &c : members) {
        b.setInsertionPoint(c.op);
        auto call = func::CallOp::create(b, c.op->getLoc(), shared, c.captures);
        c.op->replaceAllUsesWith(call.getResults());
        c.op->erase();
        if (c.function != shared)
          c.function.erase();
      }
    }
  }
};

} // namespace
