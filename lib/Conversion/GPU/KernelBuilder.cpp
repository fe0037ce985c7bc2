//===- KernelBuilder.cpp - one linalg op as GPU kernels -------------------===//
//
// The kernels of dlc-map-to-gpu (KernelBuilder.h). A thread per point of the
// parallel loops (256 a block, the last parallel dimension fastest) runs the
// reduction loops of its point sequentially, its outputs in registers where
// nothing else views their memory. A reduction that combines the output once
// per element (add, max, min, any-of) over at least a warp's worth of
// elements per point and few points runs a warp per point instead, and over
// fewer points of many elements, a warp per slice of a point and a second
// kernel over the slices. Strided views cross as the flat buffers under them.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "GpuMapping.h"

#include "dlc/Conversion/BufferViews.h"
#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::gpu_mapping;

/// A reduction runs a warp per point when it has at least a warp's worth of
/// elements per point (kWarpSize) and at most this many points (beyond, a
/// thread per point already fills the GPU).
static constexpr int64_t kMaxWarpPoints = 32768;
/// A warp-per-point reduction whose points are too few to fill the GPU
/// splits each point's elements into slices of at least this many (32 a
/// lane: a lane's loads are sequential, and a memory-bound reduction wants
/// as many in flight as it can have), a warp per slice, ...
static constexpr int64_t kMinSliceElements = 1024;
/// ... into about this many warps in all (an H100 or H200 holds 132 x 64
/// resident warps); a second kernel combines each point's slices.
static constexpr int64_t kSplitTargetWarps = 8192;

namespace {
/// How a warp-per-point reduction splits each point's elements: `count`
/// slices (1 where it does not split) of `size` elements, the last one
/// shorter but not empty.
struct Slices {
  int64_t count, size;
};
} // namespace

static Slices reductionSlices(int64_t points, int64_t elements) {
  int64_t count = std::min(elements / kMinSliceElements,
                           kSplitTargetWarps / std::max<int64_t>(points, 1));
  if (count < 2)
    return {1, elements};
  int64_t size = (elements + count - 1) / count;
  return {(elements + size - 1) / size, size};
}

/// The op combining the output's value with each element, in a reduction
/// that a warp can share: one fp32 output, whose value enters the payload
/// only as an operand of one addf / maximumf / minimumf / maxnumf /
/// minnumf whose result the payload yields, and no input aliasing it.
static Operation *warpCombiner(linalg::GenericOp generic) {
  if (generic.getNumDpsInits() != 1)
    return nullptr;
  OpOperand *init = generic.getDpsInitOperand(0);
  auto type = dyn_cast<MemRefType>(init->get().getType());
  if (!type || !type.getElementType().isF32())
    return nullptr;
  Block &payload = generic.getRegion().front();
  BlockArgument acc = payload.getArgument(init->getOperandNumber());
  Operation *combiner = cast<linalg::YieldOp>(payload.getTerminator())
                            .getValues()[0]
                            .getDefiningOp();
  if (!combiner || combiner->getBlock() != &payload ||
      !isa<arith::AddFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp, arith::SelectOp>(combiner) ||
      !acc.hasOneUse() || *acc.user_begin() != combiner ||
      !combiner->hasOneUse())
    return nullptr;
  // An any-of reduction: the output becomes a constant where some
  // element's condition holds (fp16 loss scaling's check for infinities).
  if (auto select = dyn_cast<arith::SelectOp>(combiner))
    if (select.getFalseValue() != acc ||
        !matchPattern(select.getTrueValue(), m_Constant()))
      return nullptr;
  Value out = viewedBuffer(init->get());
  for (OpOperand *input : generic.getDpsInputOperands())
    if (isa<MemRefType>(input->get().getType()) &&
        viewedBuffer(input->get()) == out)
      return nullptr;
  return combiner;
}

/// The warp-wide reduction of a combiner, and its identity: for an
/// any-of reduction (`select`), of its elements' 0/1 flags.
static std::pair<gpu::AllReduceOperation, double>
warpReductionOf(Operation *combiner) {
  double inf = std::numeric_limits<double>::infinity();
  return TypeSwitch<Operation *, std::pair<gpu::AllReduceOperation, double>>(
             combiner)
      .Case([&](arith::AddFOp) {
        return std::pair{gpu::AllReduceOperation::ADD, -0.0};
      })
      .Case([&](arith::MaximumFOp) {
        return std::pair{gpu::AllReduceOperation::MAXIMUMF, -inf};
      })
      .Case([&](arith::MinimumFOp) {
        return std::pair{gpu::AllReduceOperation::MINIMUMF, inf};
      })
      .Case([&](arith::MaxNumFOp) {
        return std::pair{gpu::AllReduceOperation::MAXNUMF, -inf};
      })
      .Case([&](arith::MinNumFOp) {
        return std::pair{gpu::AllReduceOperation::MINNUMF, inf};
      })
      .Case([&](arith::SelectOp) {
        return std::pair{gpu::AllReduceOperation::MAXIMUMF, 0.0};
      })
      .Default([&](Operation *) -> std::pair<gpu::AllReduceOperation, double> {
        llvm_unreachable("warpCombiner admits the six combiners above");
      });
}

/// Whether a reduction's outputs can live in registers through its
/// loops: each output's element is a function of the point alone, and
/// no input reads an output's memory (which would see the stores).
static bool accumulatesInRegisters(linalg::GenericOp generic) {
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    AffineMap map = generic.getMatchingIndexingMap(&init);
    for (unsigned d = 0; d < map.getNumDims(); ++d)
      if (generic.getIteratorTypesArray()[d] ==
              utils::IteratorType::reduction &&
          map.isFunctionOfDim(d))
        return false;
    Value root = viewedBuffer(init.get());
    for (Value input : generic.getDpsInputs())
      if (isa<MemRefType>(input.getType()) && viewedBuffer(input) == root)
        return false;
  }
  return true;
}

void gpu_mapping::loadScratch(OpBuilder &kb, IRMapping &mapping,
                              ArrayRef<Operation *> cloned,
                              const ScratchBuffers &scratch) {
  for (Operation *op : cloned)
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        auto it = scratch.find(v);
        if (it == scratch.end() || mapping.contains(v))
          continue;
        mapping.map(v, memref::LoadOp::create(kb, v.getLoc(), it->second,
                                              ValueRange{}));
      }
    });
}

LogicalResult gpu_mapping::mapToKernel(linalg::LinalgOp op,
                                       const ScratchBuffers &scratch,
                                       StringRef pass) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError("must be bufferized before ") << pass;
  for (Value v : op.getDpsInits())
    if (!isa<MemRefType>(v.getType()))
      return op.emitOpError("has a non-buffer output; ")
             << pass << " expects memrefs";
  // A small GEMM's k is short: a thread per output, which fuses with
  // more kernels than a warp's would.
  bool gemm = isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op);
  IRRewriter rewriter(op.getContext());
  rewriter.setInsertionPoint(op);
  linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
    if (failed(g))
      return op.emitOpError("cannot be generalized for the GPU");
    generic = *g;
  }
  return KernelBuilder(generic, scratch, /*warps=*/!gemm).build();
}

KernelBuilder::KernelBuilder(linalg::GenericOp generic,
                             const ScratchBuffers &scratch, bool warps)
    : generic(generic), scratch(scratch), warps(warps), loc(generic.getLoc()),
      b(generic), kb(generic), payload(generic.getRegion().front()),
      yield(cast<linalg::YieldOp>(payload.getTerminator())) {}

LogicalResult KernelBuilder::build() {
  ranges = generic.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return generic.emitOpError("has dynamic loop bounds; the GPU lowering "
                               "needs static shapes");
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  for (auto [d, it] : llvm::enumerate(iterators))
    (it == utils::IteratorType::parallel ? parallel : reduction).push_back(d);
  for (unsigned d : parallel)
    points *= ranges[d];
  for (unsigned d : reduction)
    elements *= ranges[d];
  // A warp per point where a thread per point would leave most of the GPU
  // idle while each thread walks a long reduction.
  combiner = warps && elements >= kWarpSize && points <= kMaxWarpPoints
                 ? warpCombiner(generic)
                 : nullptr;
  lanes = combiner ? kWarpSize : 1;
  // Few points of many elements each: a warp per slice of a point.
  Slices split =
      combiner ? reductionSlices(points, elements) : Slices{1, elements};
  slices = split.count;
  sliceSize = split.size;
  int64_t units = points * slices;

  for (unsigned d : parallel)
    parallelRanges.push_back(ranges[d]);
  // A split reduction's slices are a dimension of their own.
  SmallVector<int64_t> unitRanges = parallelRanges;
  if (slices > 1)
    unitRanges.push_back(slices);
  launch = makeLaunch(units, unitRanges);
  dims.assign(ranges.size(), Value());
  if (failed(flattenStridedOperands()))
    return failure();

  if (!combiner)
    return buildThreadPerPoint();

  // A warp per point (or per slice of a point). Each lane combines
  // elements lane, lane + 32, ... of the flattened reduction loops (of
  // the slice's range of them), the last fastest, so that the lanes of a
  // row reduction read consecutive elements.
  init = generic.getDpsInitOperand(0);
  acc = payload.getArgument(init->getOperandNumber());
  // An any-of reduction's lanes and slices combine 0/1 flags of its
  // condition (`element`) with maximumf; lane 0 selects the constant into
  // the output where the total is 1.
  anyOf = isa<arith::SelectOp>(combiner);
  // What the combiner combines the output with: the other operand, or an
  // any-of reduction's condition.
  element = anyOf                            ? combiner->getOperand(0)
            : combiner->getOperand(0) == acc ? combiner->getOperand(1)
                                             : combiner->getOperand(0);
  std::tie(kind, identityValue) = warpReductionOf(combiner);
  if (slices == 1)
    return buildWarpPerPoint();
  return buildSplitReduction();
}

Value KernelBuilder::idx(OpBuilder &ob, int64_t v) {
  return arith::ConstantIndexOp::create(ob, loc, v);
}

KernelBuilder::Launch KernelBuilder::makeLaunch(int64_t count,
                                                ArrayRef<int64_t> pointsAttr) {
  int64_t perBlock = std::min(count, kThreadsPerBlock / lanes);
  int64_t blocks = (count + perBlock - 1) / perBlock;
  Value one = idx(b, 1);
  auto launch = gpu::LaunchOp::create(b, loc, idx(b, blocks), one, one,
                                      idx(b, perBlock * lanes), one, one);
  launch->setAttr(kPointsAttrName, b.getDenseI64ArrayAttr(pointsAttr));
  if (combiner)
    launch->setAttr(kLanesAttrName, b.getI64IntegerAttr(lanes));
  kb.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(kb, loc);
  kb.setInsertionPointToStart(&launch.getBody().front());
  Value threadId = launch.getThreadIds().x;
  Value linear = arith::AddIOp::create(
      kb, loc,
      arith::MulIOp::create(kb, loc, launch.getBlockIds().x, idx(kb, perBlock)),
      combiner ? arith::DivUIOp::create(kb, loc, threadId, idx(kb, lanes))
                     .getResult()
               : threadId);
  Value lane = combiner
                   ? arith::RemUIOp::create(kb, loc, threadId, idx(kb, lanes))
                         .getResult()
                   : Value();
  Value inRange = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                        linear, idx(kb, count));
  return Launch{launch, linear, lane, inRange};
}

LogicalResult KernelBuilder::flattenStridedOperands() {
  // Kernels take identity-layout buffers (bare pointers): a strided view
  // crosses as the flat buffer under it, indexed with its strides.
  for (OpOperand &operand : generic->getOpOperands()) {
    Value buffer = operand.get();
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || type.getLayout().isIdentity() || flats.count(buffer))
      continue;
    std::optional<Strided> s = stridedOf(buffer, /*dynamicOffset=*/true);
    // A view at an offset known at run time only (a host loop's step of a
    // recurrent layer) crosses as the whole buffer it views, which must
    // have a static shape, indexed from its offset, read on the host.
    auto viewed = dyn_cast<MemRefType>(viewedBuffer(buffer).getType());
    const bool dynamic = s && ShapedType::isDynamic(s->offset);
    if (!s || (dynamic && (!viewed || !viewed.hasStaticShape() ||
                           !viewed.getLayout().isIdentity())))
      return generic.emitOpError("reads or writes a buffer with a dynamic "
                                 "layout; the GPU lowering needs static "
                                 "strides");
    int64_t extent = dynamic ? viewed.getNumElements() : s->offset + 1;
    if (!dynamic)
      for (auto [size, stride] : llvm::zip(type.getShape(), s->strides))
        extent += (size - 1) * stride;
    OpBuilder hb(launch.op);
    Value flat = memref::ReinterpretCastOp::create(
        hb, loc, MemRefType::get({extent}, type.getElementType()), buffer,
        /*offset=*/0, ArrayRef<int64_t>{extent}, ArrayRef<int64_t>{1});
    Value dynamicOffset =
        dynamic ? memref::ExtractStridedMetadataOp::create(hb, loc, buffer)
                      .getOffset()
                : Value();
    flats[buffer] =
        Flat{flat, dynamic ? 0 : s->offset, s->strides, dynamicOffset};
  }
  return success();
}

void KernelBuilder::delinearize(Value index, ArrayRef<unsigned> which) {
  int64_t stride = 1;
  for (unsigned d : llvm::reverse(which)) {
    Value q = stride == 1
                  ? index
                  : arith::DivUIOp::create(kb, loc, index, idx(kb, stride));
    dims[d] = arith::RemUIOp::create(kb, loc, q, idx(kb, ranges[d]));
    stride *= ranges[d];
  }
}

void KernelBuilder::outsideReductionLoops() {
  for (unsigned d : reduction)
    dims[d] = idx(kb, 0);
}

std::pair<Value, SmallVector<Value>> KernelBuilder::access(OpOperand &operand) {
  AffineMap map = generic.getMatchingIndexingMap(&operand);
  SmallVector<Value> indices;
  for (AffineExpr e : map.getResults())
    indices.push_back(affine::AffineApplyOp::create(
        kb, loc, AffineMap::get(map.getNumDims(), 0, e), dims));
  auto it = flats.find(operand.get());
  if (it == flats.end())
    return {operand.get(), indices};
  Value flatIndex = it->second.dynamicOffset ? it->second.dynamicOffset
                                             : idx(kb, it->second.offset);
  for (auto [i, stride] : llvm::zip(indices, it->second.strides))
    flatIndex = arith::AddIOp::create(
        kb, loc, flatIndex, arith::MulIOp::create(kb, loc, i, idx(kb, stride)));
  return {it->second.buffer, {flatIndex}};
}

AffineMapAttr KernelBuilder::pointMap(OpOperand &operand) {
  AffineMap map = generic.getMatchingIndexingMap(&operand);
  SmallVector<AffineExpr> dimsOfPoint(map.getNumDims());
  for (unsigned d : reduction) {
    if (llvm::any_of(map.getResults(),
                     [&](AffineExpr e) { return e.isFunctionOfDim(d); }))
      return {};
    dimsOfPoint[d] = getAffineConstantExpr(0, kb.getContext());
  }
  for (auto [i, d] : llvm::enumerate(parallel))
    dimsOfPoint[d] = getAffineDimExpr(i, kb.getContext());
  return AffineMapAttr::get(
      map.replaceDimsAndSymbols(dimsOfPoint, {}, parallel.size(), 0));
}

Value KernelBuilder::load(OpOperand &operand, bool everyLane) {
  auto [buffer, indices] = access(operand);
  auto loaded = memref::LoadOp::create(kb, loc, buffer, indices);
  if (AffineMapAttr map = pointMap(operand)) {
    loaded->setAttr(kPointMapAttrName, map);
    if (everyLane)
      loaded->setAttr(kEveryLaneAttrName, kb.getUnitAttr());
  }
  return loaded;
}

void KernelBuilder::store(Value value, OpOperand &operand) {
  auto [buffer, indices] = access(operand);
  auto stored = memref::StoreOp::create(kb, loc, value, buffer, indices);
  if (AffineMapAttr map = pointMap(operand))
    stored->setAttr(kPointMapAttrName, map);
}

void KernelBuilder::runPayload(IRMapping &mapping, BlockArgument skip,
                               Operation *stop, bool everyLane) {
  for (OpOperand &operand : generic->getOpOperands()) {
    BlockArgument arg = payload.getArgument(operand.getOperandNumber());
    if (arg.use_empty() || arg == skip || mapping.contains(arg))
      continue;
    // A scalar operand (a fill value) is passed as it is, or read from
    // its scratch buffer if it was computed on the device.
    if (!isa<MemRefType>(operand.get().getType())) {
      auto it = scratch.find(operand.get());
      mapping.map(
          arg, it == scratch.end()
                   ? operand.get()
                   : memref::LoadOp::create(kb, loc, it->second, ValueRange{})
                         .getResult());
      continue;
    }
    mapping.map(arg, load(operand, everyLane));
  }
  SmallVector<Operation *> payloadOps;
  for (Operation &inner : payload)
    payloadOps.push_back(&inner);
  loadScratch(kb, mapping, payloadOps, scratch);
  for (Operation &inner : payload.without_terminator()) {
    if (&inner == stop)
      break;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), dims[index.getDim()]);
      continue;
    }
    kb.clone(inner, mapping);
  }
}

LogicalResult KernelBuilder::buildThreadPerPoint() {
  auto guard = scf::IfOp::create(kb, loc, launch.inRange, /*withElse=*/false);
  kb.setInsertionPointToStart(&guard.getThenRegion().front());
  delinearize(launch.linear, parallel);
  if (!reduction.empty() && accumulatesInRegisters(generic))
    return buildRegisterReduction();
  // The reduction loops, outermost first.
  for (unsigned d : reduction) {
    auto loop =
        scf::ForOp::create(kb, loc, idx(kb, 0), idx(kb, ranges[d]), idx(kb, 1));
    dims[d] = loop.getInductionVar();
    kb.setInsertionPoint(loop.getBody()->getTerminator());
  }
  IRMapping mapping;
  runPayload(mapping, BlockArgument(), nullptr, /*everyLane=*/false);
  for (auto [value, init] :
       llvm::zip(yield.getValues(), generic.getDpsInitsMutable()))
    store(mapping.lookupOrDefault(value), init);
  generic->erase();
  return success();
}

LogicalResult KernelBuilder::buildRegisterReduction() {
  // The outputs' elements are the point's alone: read once, carried
  // through the reduction loops, written once.
  outsideReductionLoops();
  SmallVector<Value> values;
  for (OpOperand &init : generic.getDpsInitsMutable())
    values.push_back(load(init, /*everyLane=*/false));
  SmallVector<scf::ForOp> loops;
  for (unsigned d : reduction) {
    auto loop = scf::ForOp::create(kb, loc, idx(kb, 0), idx(kb, ranges[d]),
                                   idx(kb, 1), values);
    dims[d] = loop.getInductionVar();
    if (!loops.empty())
      scf::YieldOp::create(kb, loc, loop.getResults());
    kb.setInsertionPointToStart(loop.getBody());
    values.assign(loop.getRegionIterArgs().begin(),
                  loop.getRegionIterArgs().end());
    loops.push_back(loop);
  }
  IRMapping mapping;
  for (auto [init, value] : llvm::zip(generic.getDpsInitsMutable(), values))
    mapping.map(payload.getArgument(init.getOperandNumber()), value);
  runPayload(mapping, BlockArgument(), nullptr, /*everyLane=*/false);
  SmallVector<Value> yielded;
  for (Value v : yield.getValues())
    yielded.push_back(mapping.lookupOrDefault(v));
  scf::YieldOp::create(kb, loc, yielded);
  kb.setInsertionPointAfter(loops.front());
  outsideReductionLoops();
  for (auto [value, init] :
       llvm::zip(loops.front().getResults(), generic.getDpsInitsMutable()))
    store(value, init);
  generic->erase();
  return success();
}

Value KernelBuilder::warpTotal(Value inRange,
                               function_ref<std::pair<Value, Value>()> range,
                               function_ref<Value(Value, Value)> combine) {
  Type f32 = kb.getF32Type();
  Value identity =
      arith::ConstantOp::create(kb, loc, kb.getFloatAttr(f32, identityValue));
  auto partial = scf::IfOp::create(kb, loc, TypeRange{f32}, inRange,
                                   /*withElse=*/true);
  OpBuilder::InsertionGuard g(kb);
  kb.setInsertionPointToStart(&partial.getElseRegion().front());
  scf::YieldOp::create(kb, loc, identity);
  kb.setInsertionPointToStart(&partial.getThenRegion().front());
  auto [from, to] = range();
  auto loop = scf::ForOp::create(kb, loc, from, to, idx(kb, lanes),
                                 ValueRange{identity});
  scf::YieldOp::create(kb, loc, loop.getResults());
  kb.setInsertionPointToStart(loop.getBody());
  scf::YieldOp::create(
      kb, loc, combine(loop.getInductionVar(), loop.getRegionIterArgs()[0]));
  kb.setInsertionPointAfter(partial);
  return gpu::SubgroupReduceOp::create(kb, loc, partial.getResult(0), kind,
                                       /*uniform=*/true)
      .getResult();
}

Value KernelBuilder::combineValues(Value into, Value value) {
  if (anyOf)
    return arith::MaximumFOp::create(kb, loc, into, value);
  IRMapping mapping;
  mapping.map(acc, into);
  mapping.map(element, value);
  return kb.clone(*combiner, mapping)->getResult(0);
}

Value KernelBuilder::combineElement(Value e, Value into) {
  Type f32 = kb.getF32Type();
  delinearize(e, reduction);
  IRMapping mapping;
  // Every lane reads the inputs.
  runPayload(mapping, acc, combiner, /*everyLane=*/true);
  Value value = mapping.lookupOrDefault(element);
  if (anyOf)
    value = arith::SelectOp::create(
        kb, loc, value,
        arith::ConstantOp::create(kb, loc, kb.getFloatAttr(f32, 1.0)),
        arith::ConstantOp::create(kb, loc, kb.getFloatAttr(f32, 0.0)));
  return combineValues(into, value);
}

Value KernelBuilder::firstLane(Value lane) {
  return arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::eq, lane,
                               idx(kb, 0));
}

void KernelBuilder::combineIntoOutput(Value point, Value lane, Value inRange,
                                      Value total) {
  Type f32 = kb.getF32Type();
  auto last = scf::IfOp::create(
      kb, loc, arith::AndIOp::create(kb, loc, inRange, firstLane(lane)),
      /*withElse=*/false);
  kb.setInsertionPointToStart(&last.getThenRegion().front());
  delinearize(point, parallel);
  outsideReductionLoops();
  IRMapping mapping;
  mapping.map(acc, load(*init, /*everyLane=*/false));
  if (anyOf) {
    total = arith::CmpFOp::create(
        kb, loc, arith::CmpFPredicate::OGT, total,
        arith::ConstantOp::create(kb, loc, kb.getFloatAttr(f32, 0.0)));
    // The constant, where the payload defines it.
    Value constant = cast<arith::SelectOp>(combiner).getTrueValue();
    if (constant.getParentBlock() == &payload)
      mapping.map(constant, kb.clone(*constant.getDefiningOp())->getResult(0));
  }
  mapping.map(element, total);
  store(kb.clone(*combiner, mapping)->getResult(0), *init);
}

LogicalResult KernelBuilder::buildWarpPerPoint() {
  Value total = warpTotal(
      launch.inRange,
      [&] {
        delinearize(launch.linear, parallel);
        return std::pair{launch.lane, idx(kb, elements)};
      },
      [&](Value e, Value into) { return combineElement(e, into); });
  combineIntoOutput(launch.linear, launch.lane, launch.inRange, total);
  generic->erase();
  return success();
}

LogicalResult KernelBuilder::buildSplitReduction() {
  // Split: warp u = point * slices + slice combines the slice's elements
  // into partials[u]; a second kernel, a warp per point, combines the
  // point's partials (lane l those l, l + 32, ...) into the output. The
  // partials are no function of a point: nothing fuses through them.
  int64_t perSlice = sliceSize;
  int64_t units = points * slices;
  Type f32 = kb.getF32Type();
  Value linear = launch.linear, lane = launch.lane, inRange = launch.inRange;
  OpBuilder hb(launch.op);
  Value partials =
      memref::AllocOp::create(hb, loc, MemRefType::get({units}, f32));
  Value total = warpTotal(
      inRange,
      [&] {
        delinearize(arith::DivUIOp::create(kb, loc, linear, idx(kb, slices)),
                    parallel);
        Value slice = arith::RemUIOp::create(kb, loc, linear, idx(kb, slices));
        Value begin = arith::AddIOp::create(
            kb, loc, arith::MulIOp::create(kb, loc, slice, idx(kb, perSlice)),
            lane);
        Value sliceEnd = arith::MulIOp::create(
            kb, loc, arith::AddIOp::create(kb, loc, slice, idx(kb, 1)),
            idx(kb, perSlice));
        return std::pair<Value, Value>{
            begin,
            arith::MinUIOp::create(kb, loc, sliceEnd, idx(kb, elements))};
      },
      [&](Value e, Value into) { return combineElement(e, into); });
  auto stored = scf::IfOp::create(
      kb, loc, arith::AndIOp::create(kb, loc, inRange, firstLane(lane)),
      /*withElse=*/false);
  kb.setInsertionPointToStart(&stored.getThenRegion().front());
  memref::StoreOp::create(kb, loc, total, partials, ValueRange{linear});
  // The slices' reads are no function of the slice: none of them tells
  // dlc-fuse-kernels a point.
  launch.op.getBody().walk([](Operation *op) {
    op->removeAttr(kPointMapAttrName);
    op->removeAttr(kEveryLaneAttrName);
  });

  b.setInsertionPointAfter(launch.op);
  Launch pointLaunch = makeLaunch(points, parallelRanges);
  Value point = pointLaunch.linear, pointLane = pointLaunch.lane,
        pointInRange = pointLaunch.inRange;
  Value pointTotal = warpTotal(
      pointInRange, [&] { return std::pair{pointLane, idx(kb, slices)}; },
      [&](Value s, Value into) -> Value {
        Value u = arith::AddIOp::create(
            kb, loc, arith::MulIOp::create(kb, loc, point, idx(kb, slices)), s);
        return combineValues(
            into, memref::LoadOp::create(kb, loc, partials, ValueRange{u}));
      });
  combineIntoOutput(point, pointLane, pointInRange, pointTotal);
  generic->erase();
  return success();
}
