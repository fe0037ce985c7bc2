//===- VectorizeReductions.cpp - dlc-vectorize-reductions -----------------===//
//
// Rewrites the linalg reductions along a row (softmax's max and sum, a
// normalisation's mean and variance, a loss's sum) into vector loops that
// keep the row's partial results in the lanes of one register. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCVECTORIZEREDUCTIONSPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

/// The combiner of a reduction's body: the op that folds the output's
/// block argument into the row's result, and the value that leaves a lane
/// unchanged.
struct Combiner {
  Operation *op;
  vector::CombiningKind kind;
  double identity;
};

/// The combiner of `generic` (one output, f32): the yielded value is
/// `addf`, `mulf`, `maximumf`, `minimumf`, `maxnumf` or `minnumf` of the
/// output's block argument and a value computed from the inputs, and the
/// block argument has no other use.
std::optional<Combiner> findCombiner(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  BlockArgument acc = body.getArgument(generic.getNumDpsInputs());
  Operation *op = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!op || !acc.hasOneUse() || *acc.getUsers().begin() != op ||
      op->getNumOperands() != 2 || op->getOperand(0) == op->getOperand(1))
    return std::nullopt;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // x + -0.0 is x, also for x = -0.0; maximumf(-inf, x) is x, NaN included;
  // maxnumf(NaN, x) is x.
  if (isa<arith::AddFOp>(op))
    return Combiner{op, vector::CombiningKind::ADD, -0.0};
  if (isa<arith::MulFOp>(op))
    return Combiner{op, vector::CombiningKind::MUL, 1.0};
  if (isa<arith::MaximumFOp>(op))
    return Combiner{op, vector::CombiningKind::MAXIMUMF, -inf};
  if (isa<arith::MinimumFOp>(op))
    return Combiner{op, vector::CombiningKind::MINIMUMF, inf};
  if (isa<arith::MaxNumFOp>(op))
    return Combiner{op, vector::CombiningKind::MAXNUMF, nan};
  if (isa<arith::MinNumFOp>(op))
    return Combiner{op, vector::CombiningKind::MINNUMF, nan};
  return std::nullopt;
}

/// How an operand is read in the loop over a row: the loop dims (or
/// constants) of its subscripts, and whether its last subscript is the
/// row's dim (a vector of consecutive elements) or not (one element,
/// broadcast to every lane).
struct Access {
  SmallVector<AffineExpr> subscripts;
  bool alongRow;
};

/// The access of an operand whose map is `map`, or none when a subscript
/// is not a loop dim or a constant, or the row's dim `rowDim` is not its
/// last subscript over a unit-stride dimension.
std::optional<Access> accessOf(AffineMap map, MemRefType type,
                               unsigned rowDim) {
  Access access{SmallVector<AffineExpr>(map.getResults()), false};
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (!isa<AffineDimExpr, AffineConstantExpr>(e))
      return std::nullopt;
    if (e.isFunctionOfDim(rowDim)) {
      if (i + 1 != map.getNumResults() || !type.isLastDimUnitStride())
        return std::nullopt;
      access.alongRow = true;
    }
  }
  return access;
}

/// Whether the ops of the body other than the combiner and the yield are
/// element-wise ops on scalars that can run on vectors as they are.
bool elementwiseBody(linalg::GenericOp generic, Operation *combiner) {
  for (Operation &op : generic.getRegion().front().without_terminator()) {
    if (&op == combiner)
      continue;
    if (isa<arith::ConstantOp>(op))
      continue;
    if (!op.hasTrait<OpTrait::Elementwise>() || op.getNumRegions() != 0 ||
        !isMemoryEffectFree(&op))
      return false;
    for (Type t : op.getResultTypes())
      if (!t.isIntOrFloat())
        return false;
  }
  return true;
}

class Vectorizer {
public:
  Vectorizer(linalg::GenericOp generic, int64_t lanes)
      : Generic(generic), Lanes(lanes) {}

  /// Rewrites the reduction, or leaves it (false) when it is not one this
  /// pass handles.
  bool run();

private:
  /// `expr`'s index: the loop variable of its dim or its constant.
  Value indexOf(OpBuilder &b, AffineExpr expr);
  SmallVector<Value> indicesOf(OpBuilder &b, const Access &access);
  /// `v` as a vector of `Lanes` (a scalar from outside the body, or a
  /// constant, broadcast).
  Value vectorOf(OpBuilder &b, Value v);

  linalg::GenericOp Generic;
  int64_t Lanes;
  SmallVector<Value> Ivs;
  IRMapping Vectors;
};

Value Vectorizer::indexOf(OpBuilder &b, AffineExpr expr) {
  if (auto d = dyn_cast<AffineDimExpr>(expr))
    return Ivs[d.getPosition()];
  return arith::ConstantIndexOp::create(
      b, Generic.getLoc(), cast<AffineConstantExpr>(expr).getValue());
}

SmallVector<Value> Vectorizer::indicesOf(OpBuilder &b, const Access &access) {
  SmallVector<Value> indices;
  for (AffineExpr e : access.subscripts)
    indices.push_back(indexOf(b, e));
  return indices;
}

Value Vectorizer::vectorOf(OpBuilder &b, Value v) {
  if (Value mapped = Vectors.lookupOrNull(v))
    return mapped;
  auto type = VectorType::get({Lanes}, v.getType());
  Value splat = vector::BroadcastOp::create(b, Generic.getLoc(), type, v);
  Vectors.map(v, splat);
  return splat;
}

bool Vectorizer::run() {
  linalg::GenericOp op = Generic;
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumLoops() == 0)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  const unsigned rowDim = iterators.size() - 1;
  for (unsigned d = 0; d < rowDim; ++d)
    if (iterators[d] != utils::IteratorType::parallel)
      return false;
  if (iterators[rowDim] != utils::IteratorType::reduction)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) ||
      ranges[rowDim] % Lanes != 0)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32())
      return false;
  }
  std::optional<Combiner> combiner = findCombiner(op);
  if (!combiner || !elementwiseBody(op, combiner->op))
    return false;
  SmallVector<Access> accesses;
  for (OpOperand &operand : op->getOpOperands()) {
    auto access = accessOf(op.getMatchingIndexingMap(&operand),
                           cast<MemRefType>(operand.get().getType()), rowDim);
    if (!access)
      return false;
    accesses.push_back(*access);
  }
  // The output's subscripts are the parallel dims (or constants).
  if (accesses.back().alongRow)
    return false;

  Location loc = op.getLoc();
  OpBuilder b(op);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // One loop per parallel dim, then the vector loop along the row.
  Ivs.assign(ranges.size(), Value());
  for (unsigned d = 0; d < rowDim; ++d) {
    Value ub = arith::ConstantIndexOp::create(b, loc, ranges[d]);
    auto loop = scf::ForOp::create(b, loc, zero, ub, one);
    Ivs[d] = loop.getInductionVar();
    b.setInsertionPointToStart(loop.getBody());
  }
  auto vecTy = VectorType::get({Lanes}, b.getF32Type());
  Value output = op.getDpsInits()[0];
  SmallVector<Value> outIndices = indicesOf(b, accesses.back());
  // Lane 0 starts from the output's value, the others from the identity.
  Value init = memref::LoadOp::create(b, loc, output, outIndices);
  Value identity = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          vecTy, b.getFloatAttr(b.getF32Type(), combiner->identity)));
  Value acc0 = vector::InsertOp::create(b, loc, init, identity, 0);
  Value rowEnd = arith::ConstantIndexOp::create(b, loc, ranges[rowDim]);
  Value step = arith::ConstantIndexOp::create(b, loc, Lanes);
  auto row = scf::ForOp::create(b, loc, zero, rowEnd, step, ValueRange{acc0});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(row.getBody());
    Ivs[rowDim] = row.getInductionVar();
    Block &body = op.getRegion().front();
    for (auto [i, input] : llvm::enumerate(op.getDpsInputs())) {
      SmallVector<Value> indices = indicesOf(b, accesses[i]);
      Value v =
          accesses[i].alongRow
              ? vector::LoadOp::create(b, loc, vecTy, input, indices)
                    .getResult()
              : memref::LoadOp::create(b, loc, input, indices).getResult();
      if (!accesses[i].alongRow)
        v = vector::BroadcastOp::create(b, loc, vecTy, v);
      Vectors.map(body.getArgument(i), v);
    }
    Vectors.map(body.getArgument(op.getNumDpsInputs()),
                row.getRegionIterArgs()[0]);
    for (Operation &inner : body.without_terminator()) {
      if (isa<arith::ConstantOp>(inner)) {
        Operation *c = b.clone(inner);
        Vectors.map(inner.getResult(0),
                    vector::BroadcastOp::create(
                        b, loc,
                        VectorType::get({Lanes}, c->getResult(0).getType()),
                        c->getResult(0)));
        continue;
      }
      SmallVector<Value> operands;
      for (Value v : inner.getOperands())
        operands.push_back(vectorOf(b, v));
      SmallVector<Type> types;
      for (Type t : inner.getResultTypes())
        types.push_back(VectorType::get({Lanes}, t));
      Operation *vec = b.create(loc, inner.getName().getIdentifier(), operands,
                                types, inner.getAttrs());
      Vectors.map(inner.getResults(), vec->getResults());
    }
    scf::YieldOp::create(b, loc, Vectors.lookup(combiner->op->getResult(0)));
  }
  b.setInsertionPointAfter(row);
  // The lanes, combined in a tree (reassociation: the row's elements are
  // summed in lanes, then the lanes pairwise).
  auto reduce = vector::ReductionOp::create(
      b, loc, combiner->kind, row.getResult(0), arith::FastMathFlags::reassoc);
  memref::StoreOp::create(b, loc, reduce.getResult(), output, outIndices);
  op->erase();
  return true;
}

struct DlcVectorizeReductionsPass
    : dlc::impl::DlcVectorizeReductionsPassBase<DlcVectorizeReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    const int64_t lanes = vectorBits / 32;
    if (lanes < 2)
      return;
    SmallVector<linalg::GenericOp> reductions;
    getOperation().walk(
        [&](linalg::GenericOp op) { reductions.push_back(op); });
    for (linalg::GenericOp op : reductions)
      Vectorizer(op, lanes).run();
  }
};

} // namespace
