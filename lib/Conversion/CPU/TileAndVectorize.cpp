//===- TileAndVectorize.cpp - dlc-tile-and-vectorize ----------------------===//
//
// Builds a transform-dialect schedule for the module's matmuls, with tile
// sizes chosen per shape so that every tile is full, and applies it with the
// transform interpreter. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "Bf16DotTiles.h"
#include "HoistAccumulators.h"
#include "dlc/Conversion/BufferViews.h"
#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcContracts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <set>

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
  /// Whether an operand is 16-bit: its cache tiles are widened into fp32
  /// packing buffers (packNarrowOperands) instead of being promoted.
  bool widen = false;
  /// Whether both operands are bf16 and the cache tiles run the AVX512_BF16
  /// dot-product kernel (Bf16DotTiles.h) instead of the widened fp32 one.
  bool dot = false;
  bool operator<(const MatmulTiles &o) const {
    return std::tie(mt, nt, kt, mr, nr, widen, dot) <
           std::tie(o.mt, o.nt, o.kt, o.mr, o.nr, o.widen, o.dot);
  }
};

/// Fewest parallel cache tiles worth aiming for.
constexpr int64_t kMinParallelTiles = 4;

/// A register tile: `rows` x `cols` accumulators.
struct RegisterTile {
  int64_t rows, cols;
};

/// The rows of the `preferred` register tile `nr` columns wide (the last
/// one's when none is).
int64_t preferredRows(ArrayRef<RegisterTile> preferred, int64_t nr) {
  for (RegisterTile r : preferred)
    if (r.cols == nr)
      return r.rows;
  return preferred.back().rows;
}

/// The register tile's rows in an M tile of `mt`: the preferred `regM` when
/// the M tile is big enough (a remainder is peeled off, see kMarkPeel); a
/// small M tile takes a divisor.
int64_t registerRows(int64_t mt, int64_t regM) {
  return mt >= 4 * regM ? regM : largestDivisor(mt, regM);
}

/// The first of the `preferred` register tiles whose width divides N (or,
/// when none does, `fallbackWidth` columns or fewer, on the last tile's
/// rows); smaller tiles are used where the dimensions do not divide.
MatmulTiles chooseTiles(int64_t m, int64_t n, int64_t k,
                        ArrayRef<RegisterTile> preferred, int64_t fallbackWidth,
                        ArrayRef<int64_t> cache) {
  MatmulTiles t;
  t.mt = largestDivisor(m, cache[0]);
  t.nr = 0;
  for (RegisterTile r : preferred)
    if (n % r.cols == 0) {
      t.nr = r.cols;
      break;
    }
  if (!t.nr)
    t.nr = n <= fallbackWidth ? n : largestDivisor(n, fallbackWidth);
  t.mr = registerRows(t.mt, preferredRows(preferred, t.nr));
  t.nt = largestDivisor(n, cache[1], t.nr);
  // Small-batch layers (M = 64) are a single tile in M: split N finer so
  // that the parallel loop has work for several threads, down to 4
  // register tiles or 128 columns.
  while ((m / t.mt) * (n / t.nt) < kMinParallelTiles && t.nt % 2 == 0 &&
         (t.nt / 2) % t.nr == 0 && t.nt / 2 >= std::min<int64_t>(4 * t.nr, 128))
    t.nt /= 2;
  t.kt = largestDivisor(k, cache[2]);
  return t;
}

/// Bytes of a right operand beyond which a product one cache tile wide in N
/// takes taller and deeper cache tiles (deepenSkinnyTiles): past L2, every
/// M tile reads its B again from L3 or memory.
constexpr int64_t kSkinnyOperandBytes = 1 << 20;

/// Rows and depth of the cache tiles of a skinny product with a large B.
constexpr int64_t kSkinnyRows = 256, kSkinnyDepth = 512;

/// A product whose N is a single cache tile (`t.nt == n`) and whose right
/// operand holds more than kSkinnyOperandBytes: a large weight `[N_out, K]`
/// times a small batch's `[K, 64]`, where each M tile streams its rows of
/// the weight once and the whole of B. With M tiles of 64, B is as many
/// bytes again as the weight (the big MLP's first layer: 2.4 GB of each per
/// call); taller M tiles, as many as still give kMinParallelTiles tiles,
/// read B a quarter as often, and deeper K tiles load and store each
/// accumulator tile once per 512 steps instead of 128. The big MLP forward
/// on Zen 5 then runs 1.27x (1 thread) and 1.34x (2 threads) as fast
/// (docs/performance.md).
void deepenSkinnyTiles(MatmulTiles &t, int64_t m, int64_t n, int64_t k,
                       int64_t bBytes, ArrayRef<RegisterTile> preferred) {
  if (t.nt != n || bBytes <= kSkinnyOperandBytes)
    return;
  for (int64_t rows = kSkinnyRows; rows > t.mt; --rows) {
    if (m % rows || m / rows < kMinParallelTiles)
      continue;
    t.mt = rows;
    t.mr = registerRows(t.mt, preferredRows(preferred, t.nr));
    break;
  }
  t.kt = std::max(t.kt, largestDivisor(k, kSkinnyDepth));
}

constexpr const char *kScheduleHead = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
)mlir";

constexpr const char *kPromoteB = R"mlir(
    %pb{0} = transform.structured.promote %k{0} {{operands_to_promote = [1], alignment = 64} : (!transform.any_op) -> !transform.any_op)mlir";

// Cache tiles: the parallel M x N tiles, then the K loop inside each.
constexpr const char *kCacheTileGroup = R"mlir(
    %mm{0} = transform.structured.match ops{{["linalg.matmul"]} attributes {{dlc.tile_group = {0} : i64} in %root : (!transform.any_op) -> !transform.any_op
    %t{0}, %f{0} = transform.structured.tile_using_forall %mm{0} tile_sizes [{1}, {2}]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %k{0}, %kl{0} = transform.structured.tile_using_for %t{0} tile_sizes [0, 0, {3}]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
{4}
)mlir";

// Register tiles of the (packed) cache tiles, marked for the last script.
constexpr const char *kRegisterTileGroup = R"mlir(
    %p{0} = transform.structured.match ops{{["linalg.matmul"]} attributes {{dlc.tile_group = {0} : i64} in %root : (!transform.any_op) -> !transform.any_op
    %r{0}, %rl{0}:3 = transform.structured.tile_using_for %p{0} tile_sizes [{1}, {2}, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
{3}
)mlir";

// Marks the register tile for the last script, and (when the register
// tile does not divide the M tile) its M loop for peeling.
constexpr const char *kMarkTile = R"mlir(
    transform.annotate %r{0} "dlc.vectorize" : !transform.any_op)mlir";
constexpr const char *kMarkPeel = R"mlir(
    transform.annotate %rl{0}#0 "dlc.peel" : !transform.any_op)mlir";

// The last script: peel the marked M loops so that both the main loop and
// the remainder have static, full tiles (canonicalisation folds their
// sizes), then vectorise every marked register tile. It runs on fresh
// handles, so the canonicalisation cannot invalidate any.
constexpr const char *kPeel = R"mlir(
    %pl = transform.structured.match ops{["scf.for"]} attributes {dlc.peel} in %root : (!transform.any_op) -> !transform.any_op
    %plc = transform.cast %pl : !transform.any_op to !transform.op<"scf.for">
    %pm, %pr = transform.loop.peel %plc : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    %fp = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fp {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
)mlir";

constexpr const char *kVectorizeTiles = R"mlir(
    %vt = transform.structured.match ops{["linalg.matmul"]} attributes {dlc.vectorize} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %vt {create_named_contraction} : !transform.any_op
)mlir";

constexpr const char *kScheduleEnd = R"mlir(
    transform.yield
  }
}
)mlir";

// 2-D transposes (a linear's weight) in square register tiles, vectorised
// and lowered to in-register shuffles.
constexpr const char *kTransposes = R"mlir(
    %tr = transform.structured.match ops{{["linalg.transpose"]} attributes {{dlc.tile_transpose} in %root : (!transform.any_op) -> !transform.any_op
    %trt, %trl:2 = transform.structured.tile_using_for %tr tile_sizes [{0}, {0}]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %trt : !transform.any_op
)mlir";

// Fold subviews into transfer indices (hoisting refuses view-like sources),
// hoist the accumulator tile out of the k loop (hoistAccumulators then takes
// the tiles this refuses).
constexpr const char *kScheduleTail = R"mlir(
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %loops : !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    transform.foreach %f : !transform.any_op {
    ^bb0(%fn: !transform.any_op):
      %f2 = transform.structured.hoist_redundant_vector_transfers %fn : (!transform.any_op) -> !transform.any_op
    }
)mlir";

// Lower the contraction to outer products (FMAs) and the transfers to 1-D
// loads and stores.
constexpr const char *kLowerVectors = R"mlir(
    %f = transform.structured.match ops{{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {{
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_transpose {0}
    } : !transform.any_op
)mlir";

/// The generic that rounds `buffer` from another buffer and is the only op
/// that writes it: `buffer[i] = truncf(source[i])` over identity maps.
/// autocast's weight casts look like this once bufferized.
linalg::GenericOp roundingProducer(Value buffer) {
  linalg::GenericOp cast;
  for (Operation *user : buffer.getUsers()) {
    auto g = dyn_cast<linalg::GenericOp>(user);
    if (!g || g.getNumDpsInits() != 1 || g.getDpsInits()[0] != buffer)
      continue;
    if (cast)
      return {};
    cast = g;
  }
  if (!cast || cast.getNumDpsInputs() != 1 ||
      !llvm::all_of(cast.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = cast.getRegion().front();
  auto trunc = dyn_cast<arith::TruncFOp>(body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 2 || !trunc || !yield ||
      trunc.getIn() != body.getArgument(0) ||
      yield.getOperand(0) != trunc.getResult())
    return {};
  return cast;
}

/// Whether `op` or an op nested in it may write memory that `aliases`
/// names (an op that does not describe its effects may).
bool mayWrite(Operation *op, ArrayRef<Value> aliases) {
  bool writes = false;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      if (!llvm::is_contained(aliases, operand) ||
          isa<ViewLikeOpInterface>(nested))
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
      if (!effects || effects.getEffectOnValue<MemoryEffects::Write>(operand) ||
          (nested->getNumRegions() && !isa<linalg::LinalgOp>(nested))) {
        writes = true;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return writes;
}

/// If the 16-bit cache tile `tile` (a view of a whole buffer, or the buffer)
/// reads a buffer that a rounding generic fills from a function argument
/// (autocast's cast of a weight or an input), and neither buffer is written
/// between the generic and the matmul: the same view of the argument, to be
/// rounded while it is packed. Returns null otherwise.
Value roundedSource(Value tile, Operation *matmul,
                    linalg::GenericOp &rounding) {
  // The tile is a view of a view (M x N tile, then K) of the buffer.
  SmallVector<memref::SubViewOp> views;
  Value buffer = tile;
  while (auto view = buffer.getDefiningOp<memref::SubViewOp>()) {
    if (view.getType().getRank() != view.getSourceType().getRank())
      return {};
    views.push_back(view);
    buffer = view.getSource();
  }
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return {};
  rounding = roundingProducer(buffer);
  if (!rounding)
    return {};
  // The identity maps give the argument the buffer's shape.
  Value source = rounding.getDpsInputs()[0];
  auto arg = dyn_cast<BlockArgument>(source);
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return {};
  // Nothing between the rounding and the matmul writes either buffer.
  Operation *anchor = rounding->getBlock()->findAncestorOpInBlock(*matmul);
  if (!anchor || !rounding->isBeforeInBlock(anchor))
    return {};
  SmallVector<Value> aliases = dlc::bufferAndViews(source);
  llvm::append_range(aliases, dlc::bufferAndViews(buffer));
  for (Operation *op = rounding->getNextNode();; op = op->getNextNode()) {
    if (mayWrite(op, aliases))
      return {};
    if (op == anchor)
      break;
  }
  // The same views of the argument.
  for (memref::SubViewOp view : llvm::reverse(views)) {
    OpBuilder b(view);
    source = memref::SubViewOp::create(
        b, view.getLoc(), source, view.getMixedOffsets(), view.getMixedSizes(),
        view.getMixedStrides());
  }
  return source;
}

/// Erases `view` if nothing uses it, and so on up its chain of subviews
/// (the views of a rounded copy that packing now reads from the argument).
void eraseUnusedViews(Value view) {
  while (view.use_empty()) {
    auto op = view.getDefiningOp<memref::SubViewOp>();
    if (!op)
      break;
    view = op.getSource();
    op->erase();
  }
}

/// A cache tile `tile` of a 2-D buffer defined outside `scope`, through a
/// chain of unit-stride subviews (the M x N tiles, then the K tiles): the
/// buffer and the tile's offsets in it, computed at `b`'s insertion point.
struct TileOrigin {
  Value buffer;
  Value row, col;
};
std::optional<TileOrigin> tileOrigin(Value tile, Operation *scope, OpBuilder &b,
                                     Location loc) {
  Value row = arith::ConstantIndexOp::create(b, loc, 0);
  Value col = row;
  Value v = tile;
  while (true) {
    Operation *def = v.getDefiningOp();
    Region *home = def ? def->getParentRegion()
                       : cast<BlockArgument>(v).getOwner()->getParent();
    if (!scope->isAncestor(home->getParentOp()))
      break;
    auto sub = dyn_cast_or_null<memref::SubViewOp>(def);
    if (!sub || sub.getSourceType().getRank() != 2 ||
        sub.getType().getRank() != 2 ||
        !llvm::all_of(sub.getStaticStrides(), [](int64_t s) { return s == 1; }))
      return std::nullopt;
    SmallVector<OpFoldResult> offsets = sub.getMixedOffsets();
    row = arith::AddIOp::create(
        b, loc, row, getValueOrCreateConstantIndexOp(b, loc, offsets[0]));
    col = arith::AddIOp::create(
        b, loc, col, getValueOrCreateConstantIndexOp(b, loc, offsets[1]));
    v = sub.getSource();
  }
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape())
    return std::nullopt;
  return TileOrigin{v, row, col};
}

/// Largest right operand of the dot-product kernel packed into row pairs
/// once for all the M tiles of a matmul (the packed bytes); a larger one is
/// packed per cache tile.
constexpr int64_t kMaxPackedPairsBytes = 32 << 20;

/// The dot-product kernel's B tile `b` (a `[Kt, Nt]` view of a `[K, N]`
/// buffer, or of the fp32 one autocast rounds it from) packed into row
/// pairs once for every M tile of the parallel loop: a block of the pairs
/// of the whole buffer, packed before the loop (and kept in `packedWhole`
/// for the loop's other tiles); null when the matmul has a single M tile,
/// the tile does not start on a pair, or the pairs exceed
/// kMaxPackedPairsBytes. A small-batch layer (a weight `[N, K]` times the
/// batch's `[K, 64]`) otherwise packs its whole input again for each of
/// its N / 64 M tiles.
Value packedPairsBlock(
    linalg::MatmulOp op, Value b,
    DenseMap<std::pair<Operation *, Value>, Value> &packedWhole) {
  auto forall = op->getParentOfType<scf::ForallOp>();
  if (!forall)
    return {};
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value acc = op.getDpsInits()[0];
  std::optional<TileOrigin> bOrigin = tileOrigin(b, forall, builder, loc);
  std::optional<TileOrigin> cOrigin = tileOrigin(acc, forall, builder, loc);
  if (!bOrigin || !cOrigin)
    return {};
  auto wholeTy = cast<MemRefType>(bOrigin->buffer.getType());
  auto tileTy = cast<MemRefType>(b.getType());
  int64_t k = wholeTy.getDimSize(0), n = wholeTy.getDimSize(1);
  int64_t kt = tileTy.getDimSize(0), nt = tileTy.getDimSize(1);
  int64_t m = cast<MemRefType>(cOrigin->buffer.getType()).getDimSize(0);
  int64_t mt = cast<MemRefType>(acc.getType()).getDimSize(0);
  int64_t bytes = (k + 1) / 2 * 2 * n * 2;
  if (m / mt < 2 || (kt % 2 && kt != k) || n % 16 ||
      bytes > kMaxPackedPairsBytes || !wholeTy.isLastDimUnitStride())
    return {};
  Value &whole = packedWhole[{forall.getOperation(), bOrigin->buffer}];
  if (!whole) {
    OpBuilder pb(forall);
    whole = dlc::packBf16Pairs(pb, forall.getLoc(), bOrigin->buffer);
    pb.setInsertionPointAfter(forall);
    memref::DeallocOp::create(pb, forall.getLoc(), whole);
  }
  // whole[row / 2 : kt / 2 (rounded up)][2 col : 2 nt]
  Value two = arith::ConstantIndexOp::create(builder, loc, 2);
  SmallVector<OpFoldResult> offsets{
      arith::DivUIOp::create(builder, loc, bOrigin->row, two).getResult(),
      arith::MulIOp::create(builder, loc, bOrigin->col, two).getResult()};
  SmallVector<OpFoldResult> sizes{builder.getIndexAttr((kt + 1) / 2),
                                  builder.getIndexAttr(2 * nt)};
  SmallVector<OpFoldResult> strides(2, builder.getIndexAttr(1));
  return memref::SubViewOp::create(builder, loc, whole, offsets, sizes,
                                   strides);
}

/// The 16-bit operands of the cache-tile matmuls (inside the K loop) are
/// copied, widened to fp32, into a 64-byte-aligned packing buffer right
/// before the matmul: the register tile then runs the fp32 kernel on
/// contiguous data, and the conversion costs one pass over each tile
/// instead of one per use (an M x K tile is read N / nr times). Exact: every
/// bf16 or fp16 value is an fp32 one.
///
/// A 16-bit operand that autocast rounded from a function argument (a
/// weight, an input) is read from the argument and rounded in the packing
/// instead: the same bits, and once no other op reads the 16-bit copy, the
/// copy and its buffer are gone (the bytes are recorded on the function as
/// `dlc.packed_cast_bytes` for the memory report).
void packNarrowOperands(ModuleOp module, const std::set<int64_t> &dotGroups,
                        dlc::Bf16DotTile dotTile) {
  SmallVector<linalg::MatmulOp> tiles;
  module.walk([&](linalg::MatmulOp op) {
    if (op->hasAttr("dlc.tile_group") && op.hasPureBufferSemantics())
      tiles.push_back(op);
  });
  SetVector<linalg::GenericOp> fusedCasts;
  DenseMap<std::pair<Operation *, Value>, Value> packedWhole;
  for (linalg::MatmulOp op : tiles) {
    auto group = op->getAttrOfType<IntegerAttr>("dlc.tile_group");
    if (dotGroups.count(group.getInt()) && dlc::canUseBf16Dot(op)) {
      SmallVector<Value> sources;
      for (Value from : op.getDpsInputs()) {
        linalg::GenericOp rounding;
        if (Value source = roundedSource(from, op, rounding)) {
          fusedCasts.insert(rounding);
          from = source;
        }
        sources.push_back(from);
      }
      SmallVector<Value> old(op.getDpsInputs());
      Value packedB = packedPairsBlock(op, sources[1], packedWhole);
      dlc::lowerToBf16Dot(op, sources[0], sources[1], dotTile, packedB);
      for (Value v : old)
        eraseUnusedViews(v);
      continue;
    }
    Type acc = cast<MemRefType>(op.getDpsInits()[0].getType()).getElementType();
    for (OpOperand *operand : op.getDpsInputOperands()) {
      auto srcTy = cast<MemRefType>(operand->get().getType());
      Type elem = srcTy.getElementType();
      if (elem == acc || !isa<FloatType>(elem) || !isa<FloatType>(acc) ||
          !srcTy.hasStaticShape())
        continue;
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value from = operand->get();
      linalg::GenericOp rounding;
      if (Value source = roundedSource(from, op, rounding)) {
        from = source;
        fusedCasts.insert(rounding);
      }
      auto bufTy = MemRefType::get(srcTy.getShape(), acc);
      Value buf = memref::AllocOp::create(b, loc, bufTy, ValueRange{},
                                          b.getI64IntegerAttr(64));
      unsigned rank = srcTy.getRank();
      linalg::GenericOp::create(
          b, loc, ValueRange{from}, ValueRange{buf},
          SmallVector<AffineMap>(2, b.getMultiDimIdentityMap(rank)),
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nloc, ValueRange a) {
            Value v = a[0];
            if (v.getType() != elem) // round as autocast's cast did
              v = arith::TruncFOp::create(nb, nloc, elem, v);
            linalg::YieldOp::create(
                nb, nloc, arith::ExtFOp::create(nb, nloc, acc, v).getResult());
          });
      Value old = operand->get();
      operand->set(buf);
      eraseUnusedViews(old);
      b.setInsertionPointAfter(op);
      memref::DeallocOp::create(b, loc, buf);
    }
  }
  // The rounded copies nothing reads any more.
  for (linalg::GenericOp rounding : fusedCasts) {
    Value buffer = rounding.getDpsInits()[0];
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc || !llvm::all_of(buffer.getUsers(), [&](Operation *u) {
          return u == rounding || isa<memref::DeallocOp>(u);
        }))
      continue;
    auto func = rounding->getParentOfType<func::FuncOp>();
    auto ty = alloc.getType();
    int64_t bytes = ty.getNumElements() * ty.getElementTypeBitWidth() / 8;
    if (auto prev =
            func->getAttrOfType<IntegerAttr>(dlc::kPackedCastBytesAttrName))
      bytes += prev.getInt();
    func->setAttr(
        dlc::kPackedCastBytesAttrName,
        IntegerAttr::get(IntegerType::get(func.getContext(), 64), bytes));
    for (Operation *u : llvm::make_early_inc_range(buffer.getUsers()))
      u->erase();
    alloc.erase();
  }
}

/// Fewest rows of a cache tile whose B is copied into micro-panels: fewer
/// rows of A use each element of B a few times, and the copy would cost
/// more than the FMAs it serves (a recurrent layer's block of 8 rows, whose
/// B is the same weight at every step).
constexpr int64_t kMinPackedRows = 32;

/// B's rows are copied into micro-panels only when they lie a multiple of
/// this many bytes apart: an L1 of 64 sets of 64 bytes (Zen 4 and 5, and
/// Intel's cores) then maps every row to the same set, or to one of two, and
/// the register tile's reads of consecutive rows evict each other (a
/// 1024-wide fp32 B: 4 KiB). Rows at other strides spread over at least
/// four groups of sets and are read in place, from L2 where L1 cannot hold
/// them: the digits MLP's first layer (B 784 x 256, rows 1 KiB apart) runs
/// 8% faster so on Zen 5 than with its copy, which is a load and a store
/// per element of B on every call (docs/performance.md).
constexpr int64_t kPanelStrideBytes = 2048;

/// Largest right operand copied into micro-panels once for all the M tiles
/// of a matmul, before its parallel loop; a larger one is copied per cache
/// tile. The big MLP's first layer reads its batch's input (38.5 MB as
/// `[K, 64]`) from each of its 64 M tiles: copied per tile, that is as many
/// bytes per call as the 2.4 GB weight itself.
constexpr int64_t kMaxPackedOperandBytes = 64 << 20;

/// Copies the row-major `[K, N]` buffer `rhs` (rows contiguous) into a new
/// `[N/nr][K][nr]` buffer, row by row: B is read in order (a column of
/// panels would touch rows 4N bytes apart, a page each), the panels are
/// written as N/nr sequential streams. The rows are independent iterations
/// (dlc-parallelize-loops runs them on the thread pool).
Value copyIntoPanels(OpBuilder &b, Location loc, Value rhs, int64_t nr,
                     bool parallel) {
  auto ty = cast<MemRefType>(rhs.getType());
  int64_t k = ty.getDimSize(0), panels = ty.getDimSize(1) / nr;
  Type elem = ty.getElementType();
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value zero = index(0), one = index(1);
  Value packed =
      memref::AllocOp::create(b, loc, MemRefType::get({panels, k, nr}, elem),
                              ValueRange{}, b.getI64IntegerAttr(64));
  auto rows = scf::ForOp::create(b, loc, zero, index(k), one);
  if (parallel)
    rows->setAttr(dlc::kIndependentIterationsAttrName, b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(rows.getBody());
  Value row = rows.getInductionVar();
  auto copy = scf::ForOp::create(b, loc, zero, index(panels), one);
  b.setInsertionPointToStart(copy.getBody());
  Value j = copy.getInductionVar();
  Value col = arith::MulIOp::create(b, loc, j, index(nr));
  Value v = vector::LoadOp::create(b, loc, VectorType::get({nr}, elem), rhs,
                                   ValueRange{row, col});
  vector::StoreOp::create(b, loc, v, packed, ValueRange{j, row, zero});
  return packed;
}

/// The fp32 right operand of each cache-tile matmul of the groups in
/// `panelWidth` (group -> register tile width nr), a `[Kt, Nt]` view of a
/// row-major `[K, N]` buffer, is copied into `[Nt/nr][Kt][nr]` micro-panels
/// (64-byte aligned) before the matmul, which becomes one matmul per panel:
/// the register tile then streams its B rows from consecutive 128-byte
/// lines instead of rows `4N` bytes apart (every row of a 2048-wide weight
/// on the same L1 sets, out of reach of the prefetchers), and a panel stays
/// in L1 while the register tiles sweep the rows of A. The copy is one pass
/// over the cache tile, against `Mt` multiply-adds per element.
void packRightPanels(ModuleOp module,
                     const std::map<int64_t, int64_t> &panelWidth) {
  SmallVector<linalg::MatmulOp> tiles;
  module.walk([&](linalg::MatmulOp op) {
    auto group = op->getAttrOfType<IntegerAttr>("dlc.tile_group");
    if (group && panelWidth.count(group.getInt()) &&
        op.hasPureBufferSemantics())
      tiles.push_back(op);
  });
  // The operands packed whole before their matmul's parallel loop.
  DenseMap<std::pair<Operation *, Value>, Value> packedWhole;
  for (linalg::MatmulOp op : tiles) {
    auto group = op->getAttrOfType<IntegerAttr>("dlc.tile_group");
    int64_t nr = panelWidth.at(group.getInt());
    Value a = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
    Value acc = op.getDpsInits()[0];
    auto bTy = cast<MemRefType>(rhs.getType());
    auto cTy = cast<MemRefType>(acc.getType());
    // Rows of B are copied as vectors: they must be contiguous.
    if (!bTy.hasStaticShape() || !cTy.hasStaticShape() ||
        !bTy.isLastDimUnitStride() || bTy.getDimSize(1) % nr)
      continue;
    SmallVector<int64_t> bStrides;
    int64_t bOffset;
    if (failed(bTy.getStridesAndOffset(bStrides, bOffset)) ||
        ShapedType::isDynamic(bStrides[0]) ||
        bStrides[0] * bTy.getElementTypeBitWidth() / 8 % kPanelStrideBytes)
      continue;
    int64_t kt = bTy.getDimSize(0), panels = bTy.getDimSize(1) / nr;
    int64_t mt = cTy.getDimSize(0);
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto index = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    Value zero = index(0), one = index(1), width = index(nr);
    // Several M tiles read each cache tile of B: B is copied into panels
    // once, before the parallel loop over the tiles, when it is small
    // enough; each cache tile is then a block of its panels.
    auto forall = op->getParentOfType<scf::ForallOp>();
    std::optional<TileOrigin> bOrigin, cOrigin;
    if (forall) {
      bOrigin = tileOrigin(rhs, forall, b, loc);
      cOrigin = tileOrigin(acc, forall, b, loc);
    }
    // A B that a single M tile reads is read in place: its copy, a load
    // and a store per element, costs more than the L1 conflicts it saves
    // with only Mt rows to serve (measured on Zen 5: a 64 x 1024 x 1024
    // matmul 0.54 -> 0.49 ms at one thread, ResNet-18's 64-channel layers).
    int64_t mTiles =
        cOrigin ? cast<MemRefType>(cOrigin->buffer.getType()).getDimSize(0) / mt
                : 0;
    if (mTiles == 1)
      continue;
    Value whole;
    if (bOrigin && cOrigin) {
      auto wholeTy = cast<MemRefType>(bOrigin->buffer.getType());
      int64_t bytes = wholeTy.getNumElements() *
                      wholeTy.getElementType().getIntOrFloatBitWidth() / 8;
      if (mTiles >= 2 && bytes <= kMaxPackedOperandBytes &&
          wholeTy.isLastDimUnitStride() && wholeTy.getDimSize(1) % nr == 0) {
        Value &slot = packedWhole[{forall.getOperation(), bOrigin->buffer}];
        if (!slot) {
          OpBuilder pb(forall);
          slot = copyIntoPanels(pb, forall.getLoc(), bOrigin->buffer, nr,
                                /*parallel=*/true);
          pb.setInsertionPointAfter(forall);
          memref::DeallocOp::create(pb, forall.getLoc(), slot);
        }
        whole = slot;
      }
    }
    Value packed, panelBase = zero, rowBase = zero;
    if (whole) {
      packed = whole;
      panelBase = arith::DivUIOp::create(b, loc, bOrigin->col, width);
      rowBase = bOrigin->row;
    } else {
      packed = copyIntoPanels(b, loc, rhs, nr, /*parallel=*/false);
    }
    auto matmuls = scf::ForOp::create(b, loc, zero, index(panels), one);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(matmuls.getBody());
      Value j = matmuls.getInductionVar();
      Value col = arith::MulIOp::create(b, loc, j, width);
      // packed[panelBase + j][rowBase : rowBase + kt][:]
      auto packedTy = cast<MemRefType>(packed.getType());
      SmallVector<OpFoldResult> offsets{
          arith::AddIOp::create(b, loc, panelBase, j).getResult(), rowBase,
          b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(kt),
                                      b.getIndexAttr(nr)};
      SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
      MemRefType panelTy = memref::SubViewOp::inferRankReducedResultType(
          {kt, nr}, packedTy, offsets, sizes, strides);
      Value panel = memref::SubViewOp::create(b, loc, panelTy, packed, offsets,
                                              sizes, strides);
      Value accPanel = memref::SubViewOp::create(
          b, loc, acc, ArrayRef<OpFoldResult>{b.getIndexAttr(0), col},
          ArrayRef<OpFoldResult>{b.getIndexAttr(mt), b.getIndexAttr(nr)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
      auto tile = linalg::MatmulOp::create(
          b, loc, TypeRange{}, ValueRange{a, panel}, ValueRange{accPanel});
      tile->setAttr("dlc.tile_group", group);
    }
    if (!whole) {
      b.setInsertionPointAfter(matmuls);
      memref::DeallocOp::create(b, loc, packed);
    }
    op->erase();
    eraseUnusedViews(rhs);
  }
}

/// The contiguous reshapes (memref.expand_shape and collapse_shape chains of
/// an identity-layout buffer, which a `reshape` bufferizes to) that `op`
/// reads or writes, directly or through subviews, replaced by one
/// memref.reinterpret_cast of the buffer.
/// The schedule's fold_memref_alias_ops never converges on a
/// vector.transfer_read of a subview of an expand_shape (MLIR 22: the
/// greedy driver, unbounded in a transform script, spins forever), and the
/// tiles of a matmul or transpose are such subviews. Through a
/// collapse_shape they fold every access into a delinearisation (an
/// im2col buffer [C*KH*KW, N, OH, OW] read as [C*KH*KW, N*OH*OW]: two
/// divisions per row of B copied into panels). A reinterpret_cast is left
/// alone by those patterns and lowers to the same pointer.
void castReshapedOperands(Operation *op) {
  for (OpOperand &use : op->getOpOperands()) {
    // Through the subviews of one (a recurrent step's slice of the
    // projection that accumulates its GEMM).
    OpOperand *slot = &use;
    while (auto sub = slot->get().getDefiningOp<memref::SubViewOp>())
      slot = &sub.getSourceMutable();
    OpOperand &operand = *slot;
    Value root = operand.get();
    bool reshaped = false;
    while (true) {
      if (auto e = root.getDefiningOp<memref::ExpandShapeOp>()) {
        reshaped = true;
        root = e.getSrc();
      } else if (auto c = root.getDefiningOp<memref::CollapseShapeOp>()) {
        reshaped = true;
        root = c.getSrc();
      } else {
        break;
      }
    }
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    auto rootType = dyn_cast<MemRefType>(root.getType());
    if (!reshaped || !type || !rootType || !type.hasStaticShape() ||
        !type.getLayout().isIdentity() || !rootType.getLayout().isIdentity())
      continue;
    auto [strides, offset] = type.getStridesAndOffset();
    OpBuilder b(operand.getOwner());
    if (Operation *def = root.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(root).getOwner());
    operand.set(memref::ReinterpretCastOp::create(
        b, op->getLoc(), type, root, offset, type.getShape(), strides));
  }
}

struct DlcTileAndVectorizePass
    : dlc::impl::DlcTileAndVectorizePassBase<DlcTileAndVectorizePass> {
  using DlcTileAndVectorizePassBase::DlcTileAndVectorizePassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
    int64_t regM = lanes >= 16 ? 8 : 4, regN = 2 * lanes;
    if (registerTile.size() == 2) {
      regM = registerTile[0];
      regN = registerTile[1];
    } else if (!registerTile.empty()) {
      module.emitError("register-tile takes two sizes, M and N");
      return signalPassFailure();
    }
    // Register tiles: regM rows of two vectors (AVX-512: 8 x 32, 16
    // accumulators; AVX2: 4 x 16), then narrower ones. An fp32 matmul whose
    // N is a multiple of four vectors takes rows of four vectors first:
    // AVX-512 6 x 64 (24 accumulators: 4 loads of B and 6 broadcasts of A
    // per 24 FMAs instead of 2 and 8 per 16), its micro-panels 32 KiB at K
    // tiles of 128; AVX2 3 x 32 (12 accumulators instead of 8, enough to
    // hide the FMAs' latency on two pipes).
    SmallVector<RegisterTile> narrowTiles;
    for (int64_t w = regN; w >= 8; w /= 2)
      narrowTiles.push_back({regM, w});
    SmallVector<RegisterTile> wideTiles = narrowTiles;
    bool wideDefault = registerTile.empty();
    if (wideDefault)
      wideTiles.insert(wideTiles.begin(),
                       RegisterTile{lanes >= 16 ? 6 : 3, 4 * lanes});
    // AVX2 (measured on Zen 3): the B panel of a cache tile (K x N) is
    // copied into a contiguous buffer (`promote`) so the register tile
    // streams it without 4 KiB-stride cache-set conflicts, and M tiles of
    // 128 amortise the copy. AVX-512 keeps the recipe measured on Zen 5
    // (docs/performance.md): 64 x 512 x 256 tiles read in place.
    bool promoteB = lanes < 16;
    SmallVector<int64_t> cache{lanes >= 16 ? 64 : 128, lanes >= 16 ? 512 : 256,
                               256};
    if (cacheTile.size() == 3)
      cache.assign(cacheTile.begin(), cacheTile.end());
    else if (!cacheTile.empty()) {
      module.emitError("cache-tile takes three sizes, M, N and K");
      return signalPassFailure();
    }
    std::map<MatmulTiles, int64_t> groups;
    module.walk([&](linalg::MatmulOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      auto a = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
      auto b = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
      auto c = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
      if (!a || !b || !c || !a.hasStaticShape() || !b.hasStaticShape() ||
          !c.hasStaticShape())
        return;
      // Only the default (non-transposed, non-broadcast) indexing maps.
      if (op.hasUserDefinedMaps())
        return;
      bool widen = llvm::any_of(op.getDpsInputs(), [&](Value v) {
        return cast<ShapedType>(v.getType()).getElementType() !=
               c.getElementType();
      });
      bool fp32 = c.getElementType().isF32() && !widen;
      MatmulTiles t =
          chooseTiles(c.getDimSize(0), c.getDimSize(1), a.getDimSize(1),
                      fp32 ? wideTiles : narrowTiles, regN, cache);
      t.widen = widen;
      // By default, four vectors wide is only ever the fp32 tile.
      if (wideDefault && lanes >= 16 && cacheTile.empty() && t.nr == 4 * lanes)
        t.kt = largestDivisor(a.getDimSize(1), cache[2] / 2);
      // AVX512_BF16: bf16 x bf16 -> fp32 on dot products, whose accumulator
      // rows are 16 columns wide.
      t.dot =
          bf16Dot && lanes == 16 && c.getElementType().isF32() &&
          llvm::all_of(
              op.getDpsInputs(),
              [](Value v) {
                return cast<ShapedType>(v.getType()).getElementType().isBF16();
              }) &&
          t.nt % 16 == 0;
      // Measured with fp32 operands and the dot-product kernel; the widened
      // 16-bit tiles would pack larger blocks of A.
      if (cacheTile.empty() && (!t.widen || t.dot))
        deepenSkinnyTiles(t, c.getDimSize(0), c.getDimSize(1), a.getDimSize(1),
                          b.getNumElements() * b.getElementTypeBitWidth() / 8,
                          fp32 ? wideTiles : narrowTiles);
      // Longer K tiles for the dot-product kernel while its packed B panel
      // (kt x nt bf16) stays within 256 KiB: fewer, longer streams from an
      // A that is read once (a large weight; measured on Zen 5).
      if (t.dot && cacheTile.empty())
        t.kt =
            largestDivisor(a.getDimSize(1),
                           std::clamp<int64_t>((128 << 10) / t.nt, 256, 1024));
      auto [it, inserted] = groups.try_emplace(t, groups.size());
      op->setAttr("dlc.tile_group",
                  IntegerAttr::get(IntegerType::get(ctx, 64), it->second));
    });
    // Transposes whose both dimensions are multiples of the vector width.
    int64_t tr = lanes >= 16 ? 16 : 8;
    bool anyTranspose = false;
    module.walk([&](linalg::TransposeOp op) {
      auto t = dyn_cast<MemRefType>(op.getInit().getType());
      if (!op.hasPureBufferSemantics() || !t || t.getRank() != 2 ||
          !t.hasStaticShape() || t.getDimSize(0) % tr || t.getDimSize(1) % tr)
        return;
      op->setAttr("dlc.tile_transpose", UnitAttr::get(ctx));
      anyTranspose = true;
    });
    if (groups.empty() && !anyTranspose)
      return;
    module.walk([](Operation *op) {
      if (op->hasAttr("dlc.tile_group") || op->hasAttr("dlc.tile_transpose"))
        castReshapedOperands(op);
    });

    // First script: cache tiling (and the transposes, start to finish);
    // then the packing of 16-bit operands; the second script: register
    // tiling.
    std::string cacheTiling = kScheduleHead, registerTiling = kScheduleHead;
    if (anyTranspose)
      cacheTiling += llvm::formatv(kTransposes, tr).str();
    bool anyPeel = false, anyVectorized = false;
    std::set<int64_t> dotGroups;
    std::map<int64_t, int64_t> panelGroups;
    for (auto &[t, id] : groups) {
      cacheTiling += llvm::formatv(kCacheTileGroup, id, t.mt, t.nt, t.kt,
                                   promoteB && !t.widen
                                       ? llvm::formatv(kPromoteB, id).str()
                                       : std::string())
                         .str();
      if (t.dot) {
        dotGroups.insert(id);
        continue;
      }
      anyVectorized = true;
      // fp32 tiles on 512-bit vectors (AVX2 copies its B tile whole, above).
      if (!promoteB && !t.widen && t.nr % lanes == 0 &&
          t.mt >= kMinPackedRows && packPanels)
        panelGroups[id] = t.nr;
      std::string marks = llvm::formatv(kMarkTile, id).str();
      if (t.mt % t.mr) {
        marks += llvm::formatv(kMarkPeel, id).str();
        anyPeel = true;
      }
      registerTiling +=
          llvm::formatv(kRegisterTileGroup, id, t.mr, t.nr, marks).str();
    }
    cacheTiling += kScheduleEnd;
    registerTiling += kScheduleEnd;
    // Third script: peeling, vectorisation of the register tiles, and the
    // lowering of what was vectorised.
    std::string vectorizing = kScheduleHead;
    if (anyPeel)
      vectorizing += kPeel;
    if (anyVectorized)
      vectorizing += kVectorizeTiles;
    vectorizing += kScheduleTail;
    vectorizing += kScheduleEnd;
    std::string lowering = kScheduleHead;
    lowering +=
        llvm::formatv(kLowerVectors,
                      lanes >= 16 ? "lowering_strategy = \"shuffle_16x16\""
                                  : "avx2_lowering_strategy = true")
            .str();
    lowering += kScheduleEnd;
    auto apply = [&](const std::string &script) -> LogicalResult {
      OwningOpRef<ModuleOp> schedule = parseSourceString<ModuleOp>(script, ctx);
      if (!schedule)
        return module.emitError(
            "internal error: the matmul schedule does not parse");
      auto entry = schedule->lookupSymbol("__transform_main");
      return transform::applyTransformNamedSequence(
          module, entry, *schedule, transform::TransformOptions());
    };
    if (failed(apply(cacheTiling)))
      return signalPassFailure();
    dlc::Bf16DotTile dotTile;
    if (!dotGroups.empty() && registerTile.size() == 2) {
      dotTile.mr = registerTile[0];
      dotTile.nr = registerTile[1];
      if (dotTile.mr < 1 || dotTile.nr < 16 || dotTile.nr % 16) {
        module.emitError("register-tile: the bf16 dot-product tile takes M "
                         "rows and a multiple of 16 columns");
        return signalPassFailure();
      }
    }
    packNarrowOperands(module, dotGroups, dotTile);
    packRightPanels(module, panelGroups);
    if (failed(apply(registerTiling)) || failed(apply(vectorizing)))
      return signalPassFailure();
    dlc::hoistAccumulators(module);
    if (failed(apply(lowering)))
      return signalPassFailure();
    module.walk([](Operation *op) {
      op->removeAttr("dlc.vectorize");
      op->removeAttr("dlc.peel");
    });
    module.walk([](linalg::MatmulOp op) { op->removeAttr("dlc.tile_group"); });
    module.walk(
        [](linalg::TransposeOp op) { op->removeAttr("dlc.tile_transpose"); });
  }
};

} // namespace
