//===- FuseKernels.cpp - dlc-fuse-kernels ---------------------------------===//
//
// Fuses adjacent `gpu.launch` ops of a CUDA entry: kernels over one thread
// space into one body, run one after the other by each thread, small
// kernels into one block with barriers between them, and independent
// kernels side by side in one grid. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/BufferViews.h"
#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCFUSEKERNELSPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// Whether `a` and `b` view the same memory the same way: one value, or
/// results of two identical pure ops of the same operands.
bool sameView(Value a, Value b) {
  if (a == b)
    return true;
  auto ra = dyn_cast<OpResult>(a), rb = dyn_cast<OpResult>(b);
  return ra && rb && ra.getResultNumber() == rb.getResultNumber() &&
         isMemoryEffectFree(ra.getOwner()) &&
         OperationEquivalence::isEquivalentTo(
             ra.getOwner(), rb.getOwner(),
             OperationEquivalence::exactValueMatch,
             /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

/// One access of a kernel to a buffer: through which view, whether it
/// writes, the element as a function of the thread's point (null if
/// dlc-map-to-gpu did not say), and whether every lane of the point's warp
/// makes it (else the point's first thread).
struct Access {
  Value view;
  AffineMap pointMap;
  bool write;
  bool everyLane = false;
};

/// Every buffer a kernel touches, by root, or `opaque` when some memory
/// effect cannot be attributed to a buffer.
struct Summary {
  bool opaque = false;
  llvm::MapVector<Value, SmallVector<Access, 2>> byRoot;

  bool writes(Value root) const {
    auto it = byRoot.find(root);
    return it != byRoot.end() &&
           llvm::any_of(it->second, [](const Access &a) { return a.write; });
  }
};

Summary summarize(gpu::LaunchOp launch) {
  Summary s;
  launch.getBody().walk([&](Operation *op) {
    // Lanes exchanging values in registers touch no memory.
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        isMemoryEffectFree(op) ||
        isa<gpu::SubgroupReduceOp, gpu::ShuffleOp>(op))
      return;
    auto pointMap = [&] {
      auto attr = op->getAttrOfType<AffineMapAttr>(kPointMapAttrName);
      return attr ? attr.getValue() : AffineMap();
    };
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      s.byRoot[viewedBuffer(load.getMemRef())].push_back(
          {load.getMemRef(), pointMap(), /*write=*/false,
           op->hasAttr(kEveryLaneAttrName)});
      return;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      s.byRoot[viewedBuffer(store.getMemRef())].push_back(
          {store.getMemRef(), pointMap(), /*write=*/true});
      return;
    }
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface) {
      s.opaque = true;
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (MemoryEffects::EffectInstance &effect : effects) {
      Value v = effect.getValue();
      if (!v || !isa<MemRefType>(v.getType())) {
        s.opaque = true;
        continue;
      }
      s.byRoot[viewedBuffer(v)].push_back(
          {v, AffineMap(), !isa<MemoryEffects::Read>(effect.getEffect())});
    }
  });
  return s;
}

/// The grid and block of a launch that uses x alone, with constant sizes
/// and none of the features dlc does not emit.
struct Config {
  int64_t grid, block;
  bool operator==(const Config &o) const {
    return grid == o.grid && block == o.block;
  }
};

std::optional<Config> configOf(gpu::LaunchOp launch) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getDynamicSharedMemorySize() || launch.hasClusterSize() ||
      !launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() ||
      !launch.getBody().hasOneBlock())
    return std::nullopt;
  for (Value v : {grid.y, grid.z, block.y, block.z})
    if (!matchPattern(v, m_One()))
      return std::nullopt;
  APInt g, b;
  if (!matchPattern(grid.x, m_ConstantInt(&g)) ||
      !matchPattern(block.x, m_ConstantInt(&b)))
    return std::nullopt;
  return Config{g.getSExtValue(), b.getSExtValue()};
}

/// The threads of each point of a kernel of dlc-map-to-gpu: a warp's, or 1.
int64_t lanesOf(gpu::LaunchOp launch) {
  auto lanes = launch->getAttrOfType<IntegerAttr>(kLanesAttrName);
  return lanes ? lanes.getInt() : 1;
}

/// Whether a kernel's threads work together (warp shuffles, barriers):
/// they must all reach those ops, which only fusion over the same points
/// keeps sure (and the emulator finds at the top level of the body).
bool hasCollectives(gpu::LaunchOp launch) {
  return launch.getBody()
      .walk([](Operation *op) {
        return isa<gpu::SubgroupReduceOp, gpu::ShuffleOp, gpu::BarrierOp,
                   gpu::AllReduceOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// How two kernels can share their threads.
enum class Sharing {
  None,
  /// Each thread runs the first body and then the second.
  InOrder,
  /// The same with a barrier in between: the lanes of a point's warp
  /// exchange elements through memory.
  AfterBarrier,
};

/// Whether `earlier` and `later` may become one kernel in which each point
/// runs the body of `earlier` and then that of `later`: the same points,
/// and no buffer that one writes seen by the threads of another point in
/// the other. A kernel of a thread per point joins a kernel of a warp per
/// point on the warp's first lane, which makes every annotated access but
/// the ones marked `dlc.every_lane`; where those meet the first lane's
/// writes, a barrier separates the two bodies.
Sharing canShareThreads(gpu::LaunchOp earlier, gpu::LaunchOp later) {
  auto pa = earlier->getAttrOfType<DenseI64ArrayAttr>(kPointsAttrName);
  auto pb = later->getAttrOfType<DenseI64ArrayAttr>(kPointsAttrName);
  std::optional<Config> ca = configOf(earlier), cb = configOf(later);
  if (!pa || !pb || pa != pb || !ca || !cb)
    return Sharing::None;
  if (lanesOf(earlier) == lanesOf(later)) {
    if (!(*ca == *cb))
      return Sharing::None;
  } else {
    // A thread per point, on the first lanes of a warp per point: never
    // inside the warp's collective operations.
    gpu::LaunchOp single = lanesOf(earlier) == 1 ? earlier : later;
    if ((lanesOf(earlier) != 1 && lanesOf(later) != 1) ||
        hasCollectives(single))
      return Sharing::None;
  }
  Summary a = summarize(earlier), b = summarize(later);
  if (a.opaque || b.opaque)
    return Sharing::None;
  // A single thread sees its own writes.
  if (ca->grid == 1 && ca->block == 1 && *ca == *cb)
    return Sharing::InOrder;
  Sharing sharing = Sharing::InOrder;
  for (auto &[root, accesses] : a.byRoot) {
    auto other = b.byRoot.find(root);
    if (other == b.byRoot.end() || (!a.writes(root) && !b.writes(root)))
      continue;
    // Each thread touches only its own elements of a buffer when every
    // access, in both kernels, is one injective function of its point
    // through one view whose layout maps distinct indices to distinct
    // elements.
    const Access &first = accesses.front();
    auto type = dyn_cast<MemRefType>(first.view.getType());
    if (!type || !type.getLayout().isIdentity() || !first.pointMap ||
        !first.pointMap.isPermutation())
      return Sharing::None;
    for (ArrayRef<Access> list : {ArrayRef(accesses), ArrayRef(other->second)})
      for (const Access &access : list) {
        if (access.pointMap != first.pointMap ||
            !sameView(access.view, first.view))
          return Sharing::None;
        if (access.everyLane)
          sharing = Sharing::AfterBarrier;
      }
  }
  return sharing;
}

/// Whether neither kernel writes a buffer that the other touches.
bool independent(const Summary &a, const Summary &b) {
  if (a.opaque || b.opaque)
    return false;
  for (auto &entry : a.byRoot)
    if (b.byRoot.count(entry.first) &&
        (a.writes(entry.first) || b.writes(entry.first)))
      return false;
  return true;
}

/// Host ops that may lie between two launches that are fused: they do no
/// device work and free nothing.
bool separatesNothing(Operation &op) {
  return isMemoryEffectFree(&op) || isa<memref::AllocOp, memref::AllocaOp>(op);
}

/// The values a launch's body uses from outside it, which become the
/// outlined kernel's parameters: all but constants, which
/// gpu-launch-sink-index-computations moves into the kernel.
llvm::SetVector<Value> parametersOf(gpu::LaunchOp launch) {
  llvm::SetVector<Value> used, parameters;
  getUsedValuesDefinedAbove(launch.getBody(), used);
  for (Value v : used)
    if (!matchPattern(v, m_Constant()))
      parameters.insert(v);
  return parameters;
}

/// The parameters of a run of kernels being fused, against a budget of
/// bytes: at most 8 bytes each (memrefs pass as bare pointers, scalars are
/// at most 64-bit).
class ParameterSpace {
public:
  explicit ParameterSpace(int64_t maxBytes) : maxBytes(maxBytes) {}

  /// Starts over with no kernel.
  void clear() { parameters.clear(); }
  /// Starts over with `launch` alone.
  void restart(gpu::LaunchOp launch) { parameters = parametersOf(launch); }
  /// Adds `launch`'s parameters if they fit with those so far and returns
  /// true; else starts over with `launch` alone (the first of the next
  /// run) and returns false. A first kernel always fits: not fusing it
  /// cannot make it smaller.
  bool join(gpu::LaunchOp launch) {
    llvm::SetVector<Value> own = parametersOf(launch);
    llvm::SetVector<Value> joined = parameters;
    joined.insert_range(own);
    bool fits = parameters.empty() ||
                static_cast<int64_t>(joined.size()) * 8 <= maxBytes;
    parameters = fits ? std::move(joined) : std::move(own);
    return fits;
  }

private:
  int64_t maxBytes;
  llvm::SetVector<Value> parameters;
};

/// Replaces the uses of `from`'s block and thread ids and sizes by `to`'s.
void replaceIds(gpu::LaunchOp from, gpu::KernelDim3 blockIds,
                gpu::KernelDim3 threadIds, gpu::KernelDim3 gridSize,
                gpu::KernelDim3 blockSize) {
  auto replace = [](gpu::KernelDim3 old, gpu::KernelDim3 now) {
    old.x.replaceAllUsesWith(now.x);
    old.y.replaceAllUsesWith(now.y);
    old.z.replaceAllUsesWith(now.z);
  };
  replace(from.getBlockIds(), blockIds);
  replace(from.getThreadIds(), threadIds);
  replace(from.getGridSize(), gridSize);
  replace(from.getBlockSize(), blockSize);
}

/// Moves the body of `from`, but its terminator, before `before`.
void moveBody(gpu::LaunchOp from, Operation *before) {
  Block &body = from.getBody().front();
  before->getBlock()->getOperations().splice(before->getIterator(),
                                             body.getOperations(), body.begin(),
                                             std::prev(body.end()));
}

/// Moves the body of `kernel`, but its terminator, before `before` inside
/// `into`, run as the thread `linear` of `kernel`'s whole grid: its block
/// linear / block and thread linear % block.
void moveAsThread(gpu::LaunchOp kernel, Value linear, gpu::LaunchOp into,
                  Operation *before) {
  Config own = *configOf(kernel);
  Location loc = kernel.getLoc();
  OpBuilder b(before);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value blockId =
      own.grid == 1
          ? idx(0)
          : arith::DivUIOp::create(b, loc, linear, idx(own.block)).getResult();
  Value threadId =
      own.grid == 1
          ? linear
          : arith::RemUIOp::create(b, loc, linear, idx(own.block)).getResult();
  gpu::KernelDim3 ids = into.getBlockIds(), threads = into.getThreadIds(),
                  grid = into.getGridSize(), block = into.getBlockSize();
  replaceIds(kernel, {blockId, ids.y, ids.z}, {threadId, threads.y, threads.z},
             {idx(own.grid), grid.y, grid.z},
             {idx(own.block), block.y, block.z});
  moveBody(kernel, before);
}

/// Moves the body of `kernel` (a thread per point) into `warps` (a warp per
/// point, over the same points), before `before`, run by the first lane of
/// each warp as the thread of the warp's point.
void moveToFirstLanes(gpu::LaunchOp kernel, gpu::LaunchOp warps,
                      Operation *before) {
  Config theirs = *configOf(warps);
  int64_t lanes = lanesOf(warps);
  Location loc = kernel.getLoc();
  OpBuilder b(before);
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value threadId = warps.getThreadIds().x;
  Value lane = arith::RemUIOp::create(b, loc, threadId, idx(lanes));
  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, idx(0)),
      /*withElseRegion=*/false);
  b.setInsertionPoint(first.thenBlock()->getTerminator());
  // The warp's point: the thread of `kernel` that ran it.
  Value point = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, warps.getBlockIds().x,
                            idx(theirs.block / lanes)),
      arith::DivUIOp::create(b, loc, threadId, idx(lanes)));
  moveAsThread(kernel, point, warps, first.thenBlock()->getTerminator());
}

/// One kernel, in place of `later`, running `earlier`'s body and then
/// `later`'s for each point, with a barrier in between if `sharing` says.
void shareThreads(gpu::LaunchOp earlier, gpu::LaunchOp later, Sharing sharing) {
  Location loc =
      FusedLoc::get(later.getContext(), {earlier.getLoc(), later.getLoc()});
  // Where the later body starts in the fused kernel.
  auto startOfLater = [&](Operation *before) {
    if (sharing != Sharing::AfterBarrier)
      return before;
    OpBuilder b(before);
    return gpu::BarrierOp::create(b, loc).getOperation();
  };
  if (lanesOf(earlier) == lanesOf(later)) {
    Operation *start = startOfLater(&later.getBody().front().front());
    replaceIds(earlier, later.getBlockIds(), later.getThreadIds(),
               later.getGridSize(), later.getBlockSize());
    moveBody(earlier, start);
    later->setLoc(loc);
    earlier.erase();
    return;
  }
  if (lanesOf(later) != 1) {
    Operation *start = startOfLater(&later.getBody().front().front());
    moveToFirstLanes(earlier, later, start);
    later->setLoc(loc);
    earlier.erase();
    return;
  }
  // Only host arithmetic and allocations lie between the two: the warps'
  // launch can move down to the later one.
  earlier->moveBefore(later);
  Operation *end = earlier.getBody().front().getTerminator();
  startOfLater(end);
  moveToFirstLanes(later, earlier, end);
  earlier->setLoc(loc);
  later.erase();
}

/// One launch, in place of the last of `kernels`, whose blocks run the
/// blocks of each kernel in turn. Its block is that of the kernel with the
/// most threads, so that the largest kernel runs as it was mapped. A kernel
/// of that block, or of a single smaller block, keeps its blocks (the
/// surplus threads idle); any other runs its threads in order over blocks
/// of the new size, as its linear thread (none of them work together).
void sideBySide(ArrayRef<gpu::LaunchOp> kernels) {
  gpu::LaunchOp last = kernels.back();
  MLIRContext *ctx = last.getContext();
  SmallVector<Config> configs;
  SmallVector<Location> locs;
  int64_t block = 0, most = 0;
  for (gpu::LaunchOp k : kernels) {
    configs.push_back(*configOf(k));
    int64_t threads = configs.back().grid * configs.back().block;
    if (threads > most) {
      most = threads;
      block = configs.back().block;
    }
    locs.push_back(k.getLoc());
  }
  // Whether a kernel keeps its own blocks, and how many blocks it takes.
  auto keepsBlocks = [&](const Config &c) {
    return c.block == block || (c.grid == 1 && c.block < block);
  };
  auto blocksOf = [&](const Config &c) {
    return keepsBlocks(c) ? c.grid : llvm::divideCeil(c.grid * c.block, block);
  };
  int64_t grid = 0;
  for (const Config &c : configs)
    grid += blocksOf(c);
  Location loc = FusedLoc::get(ctx, locs);
  OpBuilder b(last);
  auto idx = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };
  Value one = idx(b, 1);
  auto fused = gpu::LaunchOp::create(b, loc, idx(b, grid), one, one,
                                     idx(b, block), one, one);
  Block &body = fused.getBody().front();
  OpBuilder kb = OpBuilder::atBlockBegin(&body);
  auto terminator = gpu::TerminatorOp::create(kb, loc);
  kb.setInsertionPoint(terminator);
  Value blockId = fused.getBlockIds().x, threadId = fused.getThreadIds().x;
  int64_t first = 0;
  for (auto [kernel, config] : llvm::zip(kernels, configs)) {
    gpu::LaunchOp k = kernel;
    int64_t blocks = blocksOf(config);
    // Blocks [first, first + blocks) are this kernel's.
    Value mine = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                       blockId, idx(kb, first + blocks));
    if (first)
      mine = arith::AndIOp::create(
          kb, loc, mine,
          arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::uge, blockId,
                                idx(kb, first)));
    // A kernel that keeps its blocks: threads [0, its block) of them.
    if (keepsBlocks(config) && config.block < block)
      mine = arith::AndIOp::create(
          kb, loc, mine,
          arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, threadId,
                                idx(kb, config.block)));
    auto guard = scf::IfOp::create(kb, loc, mine, /*withElseRegion=*/false);
    Operation *before = guard.thenBlock()->getTerminator();
    OpBuilder ib(before);
    Value ownBlockId =
        first ? arith::SubIOp::create(ib, loc, blockId, idx(ib, first))
                    .getResult()
              : blockId;
    if (keepsBlocks(config)) {
      gpu::KernelDim3 ids = fused.getBlockIds(), sizes = fused.getGridSize(),
                      blockSizes = fused.getBlockSize();
      replaceIds(k, {ownBlockId, ids.y, ids.z}, fused.getThreadIds(),
                 {idx(ib, config.grid), sizes.y, sizes.z},
                 {idx(ib, config.block), blockSizes.y, blockSizes.z});
      moveBody(k, before);
    } else {
      // Any other: its linear thread, below its thread count.
      Value linear = arith::AddIOp::create(
          ib, loc, arith::MulIOp::create(ib, loc, ownBlockId, idx(ib, block)),
          threadId);
      int64_t threads = config.grid * config.block;
      if (blocks * block != threads)
        before = scf::IfOp::create(
                     ib, loc,
                     arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::ult,
                                           linear, idx(ib, threads)),
                     /*withElseRegion=*/false)
                     .thenBlock()
                     ->getTerminator();
      moveAsThread(k, linear, fused, before);
    }
    first += blocks;
    k.erase();
  }
}

/// The most threads of a block on every GPU dlc targets (sm_80 and later).
constexpr int64_t kMaxBlockThreads = 1024;

/// Whether a kernel is one of dlc-map-to-gpu's of a warp per point, whose
/// threads work together within their warp alone (no barrier): whole warps
/// of it run the same anywhere in a block.
bool warpsAlone(gpu::LaunchOp launch, const Config &config) {
  return lanesOf(launch) == kWarpSize && config.block % kWarpSize == 0 &&
         !launch.getBody()
              .walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
}

/// The threads of a kernel that fits one block as a whole, and whose
/// threads never work together beyond their warp (so they can run it
/// anywhere in a block, whole warps for a warp's work).
std::optional<int64_t> threadsIfOneBlock(gpu::LaunchOp launch) {
  std::optional<Config> config = configOf(launch);
  if (!config || config->grid * config->block > kMaxBlockThreads ||
      (hasCollectives(launch) && !warpsAlone(launch, *config)))
    return std::nullopt;
  return config->grid * config->block;
}

/// One launch of a single block, in place of the last of `kernels`, whose
/// thread t runs thread t of each kernel in turn (its block t / block,
/// thread t % block), with a barrier before a kernel that touches what an
/// earlier one since the last barrier wrote, or writes what it touched.
void intoOneBlock(ArrayRef<gpu::LaunchOp> kernels) {
  gpu::LaunchOp last = kernels.back();
  SmallVector<Location> locs;
  int64_t threads = 1;
  for (gpu::LaunchOp k : kernels) {
    threads = std::max(threads, *threadsIfOneBlock(k));
    locs.push_back(k.getLoc());
  }
  // Whole warps, as a GPU allocates them.
  threads = llvm::alignTo(threads, kWarpSize);
  Location loc = FusedLoc::get(last.getContext(), locs);
  OpBuilder b(last);
  auto idx = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };
  Value one = idx(b, 1);
  auto fused =
      gpu::LaunchOp::create(b, loc, one, one, one, idx(b, threads), one, one);
  OpBuilder kb = OpBuilder::atBlockBegin(&fused.getBody().front());
  auto terminator = gpu::TerminatorOp::create(kb, loc);
  kb.setInsertionPoint(terminator);
  Value threadId = fused.getThreadIds().x;
  SmallVector<Summary> sinceBarrier;
  for (gpu::LaunchOp k : kernels) {
    Config config = *configOf(k);
    Summary summary = summarize(k);
    if (llvm::any_of(sinceBarrier, [&](const Summary &earlier) {
          return !independent(earlier, summary);
        })) {
      gpu::BarrierOp::create(kb, loc);
      sinceBarrier.clear();
    }
    sinceBarrier.push_back(std::move(summary));
    Operation *before = terminator;
    int64_t own = config.grid * config.block;
    // A kernel of a warp per point runs unguarded, so that its warps reach
    // their reductions whole: dlc-map-to-gpu guards its every access by the
    // point's range, out of which a thread beyond the kernel's grid falls
    // (its block index is at least the grid).
    if (own < threads && lanesOf(k) == 1) {
      auto guard = scf::IfOp::create(
          kb, loc,
          arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, threadId,
                                idx(kb, own)),
          /*withElseRegion=*/false);
      before = guard.thenBlock()->getTerminator();
    }
    moveAsThread(k, threadId, fused, before);
    k.erase();
  }
}

/// The buffers (by root) a runtime call may touch: those whose addresses
/// its operands carry (`addressOf` in dlc-map-to-gpu: an aligned pointer,
/// maybe plus a constant, cast to i64). Null if an operand is neither such
/// an address, nor a constant, nor the CUDA context.
std::optional<SmallVector<Value>> callFootprint(func::CallOp call) {
  SmallVector<Value> roots;
  for (Value v : call.getOperands()) {
    if (isa<LLVM::LLVMPointerType>(v.getType()) && isa<BlockArgument>(v))
      continue; // the CUDA context
    if (matchPattern(v, m_Constant()))
      continue;
    if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
      v = cast.getIn();
    if (auto add = v.getDefiningOp<arith::AddIOp>())
      v = matchPattern(add.getRhs(), m_Constant()) ? add.getLhs() : Value();
    auto base =
        v ? v.getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>() : nullptr;
    if (!base)
      return std::nullopt;
    roots.push_back(viewedBuffer(base.getSource()));
  }
  return roots;
}

/// Moves a launch up past the runtime calls before it (GEMMs, copies) that
/// touch none of its buffers, to just after the launch before them, with
/// the allocations and pure ops it uses that lie in between; so that it
/// can fuse with that launch. A kernel that only needs the optimizer's step
/// count moves above the backward GEMMs to the loss's kernel.
void hoistPastCalls(gpu::LaunchOp launch) {
  Summary summary = summarize(launch);
  if (summary.opaque)
    return;
  bool pastCall = false;
  Operation *target = nullptr;
  for (Operation *op = launch->getPrevNode(); op; op = op->getPrevNode()) {
    if (isa<gpu::LaunchOp>(op)) {
      target = op;
      break;
    }
    if (separatesNothing(*op))
      continue;
    auto call = dyn_cast<func::CallOp>(op);
    std::optional<SmallVector<Value>> roots =
        call ? callFootprint(call) : std::nullopt;
    if (!roots || llvm::any_of(*roots, [&](Value root) {
          return summary.byRoot.count(root);
        }))
      return;
    pastCall = true;
  }
  if (!target || !pastCall)
    return;
  // The ops between the two launches that define what the launch uses
  // (transitively), in order; each must move, and may, being pure or an
  // allocation.
  llvm::SetVector<Operation *> needed;
  SmallVector<Value> worklist;
  launch->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      worklist.push_back(v);
  });
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != launch->getBlock() ||
        !target->isBeforeInBlock(def) || !def->isBeforeInBlock(launch) ||
        needed.contains(def))
      continue;
    if (!separatesNothing(*def))
      return;
    needed.insert(def);
    for (Value v : def->getOperands())
      worklist.push_back(v);
  }
  SmallVector<Operation *> moved(needed.begin(), needed.end());
  llvm::sort(moved,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *after = target;
  for (Operation *op : moved) {
    op->moveAfter(after);
    after = op;
  }
  launch->moveAfter(after);
}

/// What a launch does to the run of adjacent launches before it.
enum class Joins {
  /// It ends the run and joins none.
  Refused,
  /// It joins the run.
  Run,
  /// It ends the run and starts the next one.
  NewRun,
};

/// Calls `fuse` on every run of two or more adjacent launches of `block`
/// (only ops that separate nothing between them), as `joins` forms them
/// from the run so far and the next launch.
void forEachRun(
    Block &block,
    function_ref<Joins(ArrayRef<gpu::LaunchOp>, gpu::LaunchOp)> joins,
    function_ref<void(ArrayRef<gpu::LaunchOp>)> fuse) {
  SmallVector<gpu::LaunchOp> run;
  auto flush = [&] {
    if (run.size() > 1)
      fuse(run);
    run.clear();
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto launch = dyn_cast<gpu::LaunchOp>(op);
    if (!launch) {
      if (!separatesNothing(op))
        flush();
      continue;
    }
    switch (joins(run, launch)) {
    case Joins::Refused:
      flush();
      continue;
    case Joins::NewRun:
      flush();
      break;
    case Joins::Run:
      break;
    }
    run.push_back(launch);
  }
  flush();
}

struct DlcFuseKernelsPass
    : dlc::impl::DlcFuseKernelsPassBase<DlcFuseKernelsPass> {
  using DlcFuseKernelsPassBase::DlcFuseKernelsPassBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      for (Block &block : func.getBody())
        fuseIn(block);
    getOperation().walk([](Operation *op) {
      op->removeAttr(kPointsAttrName);
      op->removeAttr(kPointMapAttrName);
      op->removeAttr(kEveryLaneAttrName);
    });
  }

  /// Fuses the launches of `block`, and of the host loops' and branches'
  /// blocks in it (a recurrent layer's step), each block on its own: no
  /// launch moves into or out of a loop or a branch.
  void fuseIn(Block &block) {
    for (Operation &op : block)
      if (isa<scf::ForOp, scf::IfOp>(op))
        for (Region &region : op.getRegions())
          for (Block &inner : region)
            fuseIn(inner);
    if (oneBlock)
      for (auto launch :
           llvm::make_early_inc_range(block.getOps<gpu::LaunchOp>()))
        hoistPastCalls(launch);
    shareThreadSpaces(block, maxParamBytes);
    if (oneBlock)
      fuseIntoOneBlock(block, maxParamBytes);
    placeSideBySide(block, maxParamBytes);
  }

  static void shareThreadSpaces(Block &block, int64_t maxParamBytes) {
    gpu::LaunchOp previous;
    // The parameters of `previous`, fused or not: a fused kernel's are
    // those of the two it was made of, so a chain of fusions gathers each
    // launch's once.
    ParameterSpace space(maxParamBytes);
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      if (!launch) {
        if (!separatesNothing(op))
          previous = {};
        continue;
      }
      Sharing sharing =
          previous ? canShareThreads(previous, launch) : Sharing::None;
      if (sharing == Sharing::None)
        space.restart(launch);
      else if (!space.join(launch)) // restarts with `launch` when refused
        sharing = Sharing::None;
      if (sharing != Sharing::None) {
        // The fused kernel is the warps' launch, if either is one.
        gpu::LaunchOp fused =
            lanesOf(launch) == 1 && lanesOf(previous) != 1 ? previous : launch;
        shareThreads(previous, launch, sharing);
        launch = fused;
      }
      previous = launch;
    }
  }

  static void fuseIntoOneBlock(Block &block, int64_t maxParamBytes) {
    ParameterSpace space(maxParamBytes);
    forEachRun(
        block,
        [&](ArrayRef<gpu::LaunchOp> run, gpu::LaunchOp launch) {
          if (!threadsIfOneBlock(launch))
            return Joins::Refused;
          if (run.empty())
            space.clear();
          return space.join(launch) ? Joins::Run : Joins::NewRun;
        },
        intoOneBlock);
  }

  static void placeSideBySide(Block &block, int64_t maxParamBytes) {
    // The summaries and parameters of the current run's launches.
    SmallVector<Summary> summaries;
    ParameterSpace space(maxParamBytes);
    forEachRun(
        block,
        [&](ArrayRef<gpu::LaunchOp> run, gpu::LaunchOp launch) {
          Summary summary = summarize(launch);
          if (!configOf(launch) || summary.opaque || hasCollectives(launch))
            return Joins::Refused;
          summaries.resize(run.size());
          if (run.empty())
            space.clear();
          bool apart = llvm::any_of(summaries, [&](const Summary &other) {
            return !independent(other, summary);
          });
          if (apart)
            space.restart(launch);
          else
            apart = !space.join(launch);
          if (apart)
            summaries.clear();
          summaries.push_back(std::move(summary));
          return apart ? Joins::NewRun : Joins::Run;
        },
        sideBySide);
  }
};

} // namespace
