//===- PackWeights.cpp - dlc-pack-weights ---------------------------------===//
//
// Moves the re-layout of weights out of the entries that only read them:
// what an entry computes from parameters alone and re-lays out becomes a
// `#dlc.role<packed>` parameter, computed by the entry `pack_weights`, which
// the runtime runs when the weights change. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcContracts.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCPACKWEIGHTSPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// The values of one entry that depend on parameters alone: a dlc.param, or
/// a pure dlc op in the entry's body (no region, no cast: a 16-bit copy of a
/// weight is packed as it is, not re-laid out) whose operands all are.
class ParamOnly {
public:
  explicit ParamOnly(func::FuncOp f) : body(&f.getBody().front()) {}

  bool operator()(Value v) {
    auto it = known.find(v);
    if (it != known.end())
      return it->second;
    bool result = compute(v);
    known[v] = result;
    return result;
  }

private:
  bool compute(Value v) {
    Operation *op = v.getDefiningOp();
    if (!op || op->getBlock() != body || !isa<RankedTensorType>(v.getType()))
      return false;
    if (isa<ParamOp>(op))
      return true;
    if (!isa<DlcDialect>(op->getDialect()) || isa<CastOp>(op) ||
        op->getNumRegions() || !isMemoryEffectFree(op) ||
        op->getNumOperands() == 0)
      return false;
    return llvm::all_of(op->getOperands(), [&](Value o) { return (*this)(o); });
  }

  Block *body;
  DenseMap<Value, bool> known;
};

struct DlcPackWeightsPass
    : dlc::impl::DlcPackWeightsPassBase<DlcPackWeightsPass> {
  using DlcPackWeightsPassBase::DlcPackWeightsPassBase;

  void runOnOperation() override {
    if (maxMiB <= 0)
      return;
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> readers;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f->hasAttr(kPackWeightsAttrName))
        return; // packed already
      if (f->hasAttr(kEntryAttrName) && !f.isExternal() &&
          f.getBody().hasOneBlock() && !writesParameters(f))
        readers.push_back(f);
    }
    int64_t budget = maxMiB * (int64_t(1) << 20);
    SmallVector<std::pair<func::FuncOp, Value>> roots;
    for (func::FuncOp f : readers)
      relayout(f, budget, roots);
    if (roots.empty())
      return;
    hoist(module, roots);
  }

  /// Step 1: the weights the lowering would transpose on every call are
  /// written as the transpose of their transpose; the inner one is a root.
  /// Step 2 of the same entry: other roots (param-only values that end in
  /// a layout change and are read by the rest of the entry).
  void relayout(func::FuncOp f, int64_t &budget,
                SmallVectorImpl<std::pair<func::FuncOp, Value>> &roots) {
    ParamOnly paramOnly(f);
    DenseMap<Value, Value> transposed; // a weight -> its [K, N] root
    DenseSet<Value> wrappers;          // the transposes of the roots
    auto packTransposed = [&](Operation *op, OpOperand &weight) {
      Value w = weight.get();
      auto wTy = dyn_cast<RankedTensorType>(w.getType());
      if (!wTy || wTy.getRank() != 2 || matrixTransposeInput(w) ||
          !paramOnly(w))
        return;
      Value &root = transposed[w];
      if (!root) {
        if (tensorBytes(wTy) > budget)
          return;
        budget -= tensorBytes(wTy);
        OpBuilder b(op);
        if (Operation *def = w.getDefiningOp())
          b.setInsertionPointAfter(def);
        root = TransposeOp::create(
            b, op->getLoc(),
            RankedTensorType::get({wTy.getDimSize(1), wTy.getDimSize(0)},
                                  wTy.getElementType()),
            w, ArrayRef<int64_t>{1, 0});
        roots.push_back({f, root});
      }
      OpBuilder b(op);
      Value back = TransposeOp::create(b, op->getLoc(), wTy, root,
                                       ArrayRef<int64_t>{1, 0});
      wrappers.insert(back);
      weight.set(back);
    };
    f.walk([&](Operation *op) {
      if (auto lin = dyn_cast<LinearOp>(op)) {
        auto wTy = cast<RankedTensorType>(lin.getWeight().getType());
        int64_t rows =
            cast<RankedTensorType>(lin.getInput().getType()).getNumElements() /
            std::max<int64_t>(wTy.getDimSize(1), 1);
        if (rows > kLinearDotProductRows)
          packTransposed(op, lin.getWeightMutable());
      } else if (auto lstm = dyn_cast<LstmOp>(op)) {
        packTransposed(op, lstm.getRecurrentWeightMutable());
      } else if (auto gru = dyn_cast<GruOp>(op)) {
        packTransposed(op, gru.getRecurrentWeightMutable());
      }
    });
    // Param-only values read by the rest of the entry whose computation
    // re-lays out (a slice, concat or transpose of weights).
    llvm::SetVector<Value> chosen;
    for (auto &[g, r] : roots)
      if (g == f)
        chosen.insert(r);
    // Autocast's 16-bit copies of weights, whatever the budget: half the
    // weight's bytes, against a rounding per call that reads all of them.
    for (Operation &op : f.getBody().front()) {
      auto cast = dyn_cast<CastOp>(op);
      if (cast &&
          isa<BFloat16Type, Float16Type>(
              getElementTypeOrSelf(cast.getResult().getType())) &&
          paramOnly(cast.getInput()) && chosen.insert(cast.getResult()))
        roots.push_back({f, cast.getResult()});
    }
    for (Operation &op : f.getBody().front()) {
      if (isa<ParamOp>(op) || !isa<TransposeOp, SliceOp, ConcatOp>(op) ||
          op.getNumResults() != 1)
        continue;
      Value r = op.getResult(0);
      if (chosen.contains(r) || wrappers.contains(r) || !paramOnly(r))
        continue;
      // (Not through a 16-bit copy chosen above, which packs it.)
      bool readByEntry = llvm::any_of(r.getUsers(), [&](Operation *user) {
        return llvm::any_of(user->getResults(),
                            [&](Value u) {
                              return !paramOnly(u) && !chosen.contains(u);
                            }) ||
               user->getNumResults() == 0;
      });
      if (!readByEntry || tensorBytes(r.getType()) > budget)
        continue;
      budget -= tensorBytes(r.getType());
      chosen.insert(r);
      roots.push_back({f, r});
    }
  }

  /// A name for the packed form of a root computed by `slice`: the
  /// weight's, when one weight is read, with ".packed" (and a number when
  /// it is taken).
  std::string nameFor(const SetVector<Operation *> &slice,
                      SymbolTable &symbols) {
    // The weight it reads, when it reads one (twice, for a gate reorder).
    std::optional<StringRef> weight;
    bool one = true;
    for (Operation *op : slice)
      if (auto p = dyn_cast<ParamOp>(op)) {
        one = one && (!weight || *weight == p.getName());
        weight = p.getName();
      }
    std::string base =
        weight && one ? (*weight + ".packed").str() : std::string("packed");
    std::string name = base;
    for (int i = 1; symbols.lookup(name); ++i)
      name = base + "." + std::to_string(i);
    return name;
  }

  /// Step 3: every root becomes a packed parameter that the entry reads,
  /// and pack_weights computes it.
  void hoist(ModuleOp module, ArrayRef<std::pair<func::FuncOp, Value>> roots) {
    MLIRContext *ctx = &getContext();
    SymbolTable symbols(module);
    Location loc = module.getLoc();
    // After the last parameter: weights, optimizer state, then packed.
    Operation *lastParam = nullptr;
    for (auto p : module.getOps<ParameterOp>())
      lastParam = p;
    OpBuilder mb(ctx);
    if (lastParam)
      mb.setInsertionPointAfter(lastParam);
    else
      mb.setInsertionPointToStart(module.getBody());
    OpBuilder fb(ctx);
    fb.setInsertionPointToEnd(module.getBody());
    auto pack = func::FuncOp::create(fb, loc, "pack_weights",
                                     FunctionType::get(ctx, {}, {}));
    pack->setAttr(kEntryAttrName, UnitAttr::get(ctx));
    pack->setAttr(kPackWeightsAttrName, UnitAttr::get(ctx));
    Block *body = pack.addEntryBlock();
    OpBuilder pb = OpBuilder::atBlockEnd(body);
    DenseMap<Operation *, IRMapping> cloned; // per entry function
    for (auto [f, root] : roots) {
      // What computes it: its param-only slice.
      SetVector<Operation *> slice;
      BackwardSliceOptions opts;
      opts.omitBlockArguments = true;
      (void)getBackwardSlice(root, &slice, opts);
      slice.insert(root.getDefiningOp());
      std::string name = nameFor(slice, symbols);
      auto type = cast<RankedTensorType>(root.getType());
      auto param = ParameterOp::create(
          mb, root.getLoc(), name, type, ParameterInit::zeros,
          llvm::APFloat(0.0), ParameterRole::packed, /*value=*/nullptr,
          /*shard_of=*/nullptr, /*shard_ranks=*/nullptr);
      symbols.insert(param);
      mb.setInsertionPointAfter(param);

      // pack_weights computes it: the slice, in order.
      SmallVector<Operation *> ordered(slice.begin(), slice.end());
      llvm::sort(ordered, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      IRMapping &map = cloned[f.getOperation()];
      for (Operation *op : ordered)
        if (!map.contains(op->getResult(0)))
          pb.clone(*op, map);
      auto symbol = FlatSymbolRefAttr::get(param.getSymNameAttr());
      AssignOp::create(pb, root.getLoc(), symbol, map.lookup(root));

      // The entry reads it.
      OpBuilder eb(root.getDefiningOp());
      Value read = ParamOp::create(eb, root.getLoc(), type, symbol);
      root.replaceAllUsesWith(read);
    }
    func::ReturnOp::create(pb, loc);
    // What the entries no longer read.
    for (auto &entry : cloned) {
      Block &body = cast<func::FuncOp>(entry.first).getBody().front();
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
        if (op.use_empty() && isMemoryEffectFree(&op) &&
            !op.hasTrait<OpTrait::IsTerminator>())
          op.erase();
    }
  }
};

} // namespace
