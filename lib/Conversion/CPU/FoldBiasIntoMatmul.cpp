//===- FoldBiasIntoMatmul.cpp - dlc-fold-bias-into-matmul -----------------===//
//
// Starts a matmul's accumulators from its bias, broadcast over the rows,
// instead of from zero with the bias added by the epilogue afterwards: one
// pass over the result instead of a fill, a read and a write. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCFOLDBIASINTOMATMULPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// An epilogue whose input `mmOperand` is a matmul's result (through
/// row-splitting expand_shapes), and whose payload adds `biasOperand`,
/// broadcast over every dimension but the last, to it.
struct BiasAdd {
  linalg::GenericOp epilogue;
  linalg::MatmulOp matmul;
  unsigned mmOperand, biasOperand;
  arith::AddFOp add;
};

/// Whether `v` is a zero-filled tensor.
bool isZeroFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// The matmul `v` is the result of, through expand_shapes that keep the
/// last dimension as a group of its own, each with one use.
linalg::MatmulOp matmulThroughRowSplits(Value v) {
  while (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
    auto groups = expand.getReassociationIndices();
    if (groups.empty() || groups.back().size() != 1 ||
        !expand.getSrc().hasOneUse())
      return {};
    v = expand.getSrc();
  }
  auto mm = v.getDefiningOp<linalg::MatmulOp>();
  if (!mm || mm.hasUserDefinedMaps() || !v.hasOneUse())
    return {};
  return mm;
}

std::optional<BiasAdd> matchBiasAdd(linalg::GenericOp g, DominanceInfo &dom) {
  if (!g.hasPureTensorSemantics() || g.getNumLoops() != g.getNumParallelLoops())
    return std::nullopt;
  unsigned rank = g.getNumLoops();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, g.getContext());
  AffineMap lastDim = AffineMap::get(
      rank, 0, getAffineDimExpr(rank - 1, g.getContext()), g.getContext());
  Block &body = g.getRegion().front();
  for (OpOperand *in : g.getDpsInputOperands()) {
    linalg::MatmulOp mm = matmulThroughRowSplits(in->get());
    if (!mm || g.getMatchingIndexingMap(in) != identity ||
        !isZeroFill(mm.getDpsInits()[0]))
      continue;
    BlockArgument acc = body.getArgument(in->getOperandNumber());
    if (!acc.hasOneUse())
      continue;
    auto add = dyn_cast<arith::AddFOp>(*acc.getUsers().begin());
    if (!add)
      continue;
    Value other = add.getLhs() == acc ? add.getRhs() : add.getLhs();
    auto bias = dyn_cast<BlockArgument>(other);
    if (!bias || bias.getOwner() != &body ||
        bias.getArgNumber() >= g.getNumDpsInputs() ||
        g.getIndexingMapsArray()[bias.getArgNumber()] != lastDim ||
        bias.getType() != acc.getType() ||
        // The bias is broadcast before the matmul: it must exist there.
        !dom.properlyDominates(g.getDpsInputs()[bias.getArgNumber()], mm))
      continue;
    return BiasAdd{g, mm, in->getOperandNumber(), bias.getArgNumber(), add};
  }
  return std::nullopt;
}

/// `m.matmul` recomputed into an accumulator holding `m.epilogue`'s bias in
/// every row, and the epilogue reading it without adding the bias again.
void fold(BiasAdd m) {
  linalg::MatmulOp mm = m.matmul;
  OpBuilder b(mm);
  Location loc = mm.getLoc();
  auto accTy = cast<RankedTensorType>(mm.getResult(0).getType());
  MLIRContext *ctx = b.getContext();
  Value empty =
      tensor::EmptyOp::create(b, loc, accTy.getShape(), accTy.getElementType());
  Value bias = m.epilogue.getDpsInputs()[m.biasOperand];
  SmallVector<AffineMap> maps{
      AffineMap::get(2, 0, getAffineDimExpr(1, ctx), ctx),
      AffineMap::getMultiDimIdentityMap(2, ctx)};
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  Value rows =
      linalg::GenericOp::create(b, loc, TypeRange{accTy}, ValueRange{bias},
                                ValueRange{empty}, maps, iters,
                                [](OpBuilder &nb, Location nloc, ValueRange a) {
                                  linalg::YieldOp::create(nb, nloc, a[0]);
                                })
          .getResult(0);
  mm.getDpsInitsMutable()[0].set(rows);
  // The epilogue's input is still mm's result (through its reshapes): only
  // the addition goes.
  m.add.getResult().replaceAllUsesWith(
      m.epilogue.getRegion().front().getArgument(m.mmOperand));
  m.add.erase();
}

struct DlcFoldBiasIntoMatmulPass
    : dlc::impl::DlcFoldBiasIntoMatmulPassBase<DlcFoldBiasIntoMatmulPass> {
  void runOnOperation() override {
    SmallVector<BiasAdd> matches;
    DominanceInfo dom(getOperation());
    getOperation()->walk([&](linalg::GenericOp g) {
      if (std::optional<BiasAdd> m = matchBiasAdd(g, dom))
        matches.push_back(*m);
    });
    SmallVector<Operation *> epilogues;
    for (BiasAdd &m : matches) {
      fold(m);
      epilogues.push_back(m.epilogue);
    }
    // The epilogues drop the bias input; one left copying the matmul's
    // result goes.
    RewritePatternSet patterns(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(epilogues, std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
