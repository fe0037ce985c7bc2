//===- TileAndVectorize.cpp - dlc-tile-and-vectorize ----------------------===//
//
// Builds a transform-dialect schedule for the module's matmuls, with tile
// sizes chosen per shape so that every tile is full, and applies it with the
// transform interpreter. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCTILEANDVECTORIZEPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// The largest divisor of `n` that is at most `cap` and a multiple of `step`
/// (or `n` itself when it is below `cap`); 0 when there is none.
int64_t largestDivisor(int64_t n, int64_t cap, int64_t step = 1) {
  if (n <= cap && n % step == 0)
    return n;
  for (int64_t d = cap - cap % step; d >= step; d -= step)
    if (n % d == 0)
      return d;
  return 0;
}

/// Cache tile [Mt, Nt, Kt] and register tile [mr, nr, 1] for an M x N x K
/// matmul; every tile divides its dimension.
struct MatmulTiles {
  int64_t mt, nt, kt, mr, nr;
  bool operator<(const MatmulTiles &o) const {
    return std::tie(mt, nt, kt, mr, nr) <
           std::tie(o.mt, o.nt, o.kt, o.mr, o.nr);
  }
};

MatmulTiles chooseTiles(int64_t m, int64_t n, int64_t k) {
  MatmulTiles t;
  t.mt = largestDivisor(m, 64);
  t.mr = largestDivisor(t.mt, 8);
  // 32 lanes = two zmm registers per accumulator row; narrower if needed.
  t.nr = 0;
  for (int64_t w : {32, 16, 8})
    if (n % w == 0) {
      t.nr = w;
      break;
    }
  if (!t.nr)
    t.nr = n <= 32 ? n : largestDivisor(n, 32);
  t.nt = largestDivisor(n, 512, t.nr);
  t.kt = largestDivisor(k, 256);
  return t;
}

constexpr const char *kScheduleHead = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
)mlir";

constexpr const char *kTileGroup = R"mlir(
    %mm{0} = transform.structured.match ops{{["linalg.matmul"]} attributes {{dlc.tile_group = {0} : i64} in %root : (!transform.any_op) -> !transform.any_op
    %t{0}, %l{0}:3 = transform.structured.tile_using_for %mm{0} tile_sizes [{1}, {2}, {3}]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %r{0}, %rl{0}:3 = transform.structured.tile_using_for %t{0} tile_sizes [{4}, {5}, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %r{0} {{create_named_contraction} : !transform.any_op
)mlir";

// Fold subviews into transfer indices (hoisting refuses view-like sources),
// hoist the accumulator tile out of the k loop, then lower the contraction
// to outer products (FMAs) and the transfers to 1-D loads and stores.
constexpr const char *kScheduleTail = R"mlir(
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %f : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %loops : !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    %f2 = transform.structured.hoist_redundant_vector_transfers %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
    } : !transform.any_op
    transform.yield
  }
}
)mlir";

struct DlcTileAndVectorizePass
    : dlc::impl::DlcTileAndVectorizePassBase<DlcTileAndVectorizePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    std::map<MatmulTiles, int64_t> groups;
    module.walk([&](linalg::MatmulOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      auto a = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
      auto c = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
      if (!a || !c || !a.hasStaticShape() || !c.hasStaticShape())
        return;
      // Only the default (non-transposed, non-broadcast) indexing maps.
      if (op.hasUserDefinedMaps())
        return;
      MatmulTiles t = chooseTiles(c.getDimSize(0), c.getDimSize(1),
                                  a.getDimSize(1));
      auto [it, inserted] = groups.try_emplace(t, groups.size());
      op->setAttr("dlc.tile_group",
                  IntegerAttr::get(IntegerType::get(ctx, 64), it->second));
    });
    if (groups.empty())
      return;

    std::string script = kScheduleHead;
    for (auto &[t, id] : groups)
      script += llvm::formatv(kTileGroup, id, t.mt, t.nt, t.kt, t.mr, t.nr)
                    .str();
    script += kScheduleTail;
    OwningOpRef<ModuleOp> schedule = parseSourceString<ModuleOp>(script, ctx);
    if (!schedule) {
      module.emitError("internal error: the matmul schedule does not parse");
      return signalPassFailure();
    }
    auto entry = schedule->lookupSymbol("__transform_main");
    if (failed(transform::applyTransformNamedSequence(
            module, entry, *schedule, transform::TransformOptions())))
      return signalPassFailure();
    module.walk([](linalg::MatmulOp op) { op->removeAttr("dlc.tile_group"); });
  }
};

} // namespace
