//===- MapToGpu.cpp - dlc-map-to-gpu --------------------------------------===//
//
// Turns every top-level op of a bufferized CUDA entry into a GPU kernel
// (`gpu.launch`), a cuBLASLt GEMM or a device copy (runtime calls), leaving
// only address arithmetic on the host. See Passes.td and docs/gpu.md.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/BufferViews.h"
#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/dlc_cuda_abi.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>
#include <tuple>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCMAPTOGPUPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

constexpr int64_t kThreadsPerBlock = 256;
/// A reduction runs a warp per point when it has at least a warp's worth of
/// elements per point (kWarpSize) and at most this many points (beyond, a
/// thread per point already fills the GPU).
constexpr int64_t kMaxWarpPoints = 32768;
/// A warp-per-point reduction whose points are too few to fill the GPU
/// splits each point's elements into slices of at least this many (32 a
/// lane: a lane's loads are sequential, and a memory-bound reduction wants
/// as many in flight as it can have), a warp per slice, ...
constexpr int64_t kMinSliceElements = 1024;
/// ... into about this many warps in all (an H100 or H200 holds 132 x 64
/// resident warps); a second kernel combines each point's slices.
constexpr int64_t kSplitTargetWarps = 8192;

/// A GEMM runs as a kernel (see isSmallGemm) only with at most this many
/// elements per dot product: each thread walks its k sequentially.
constexpr int64_t kSmallGemmMaxK = 64;

/// How a warp-per-point reduction splits each point's elements: `count`
/// slices (1 where it does not split) of `size` elements, the last one
/// shorter but not empty.
struct Slices {
  int64_t count, size;
};

Slices reductionSlices(int64_t points, int64_t elements) {
  int64_t count = std::min(elements / kMinSliceElements,
                           kSplitTargetWarps / std::max<int64_t>(points, 1));
  if (count < 2)
    return {1, elements};
  int64_t size = (elements + count - 1) / count;
  return {(elements + size - 1) / size, size};
}

/// The dlc_dtype code of an element type (dlc/dlc_runtime.h).
std::optional<int32_t> dtypeCode(Type t) {
  if (t.isF32())
    return DLC_F32;
  if (t.isF16())
    return DLC_F16;
  if (t.isBF16())
    return DLC_BF16;
  return std::nullopt;
}

/// A memref the runtime can take as a pointer: static strides and offset.
struct Strided {
  SmallVector<int64_t> strides;
  int64_t offset = 0;
};

std::optional<Strided> stridedOf(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Strided s;
  if (failed(type.getStridesAndOffset(s.strides, s.offset)) ||
      ShapedType::isDynamic(s.offset) ||
      llvm::any_of(s.strides, ShapedType::isDynamic))
    return std::nullopt;
  return s;
}

/// The address of `buffer`'s first element, as i64.
Value addressOf(OpBuilder &b, Location loc, Value buffer, int64_t offset) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  if (offset) {
    int64_t bytes =
        cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8;
    base = arith::AddIOp::create(
        b, loc, base, arith::ConstantIndexOp::create(b, loc, offset * bytes));
  }
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), base);
}

Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
}

Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}

} // namespace

BlockArgument mlir::dlc::cudaContextArgument(func::FuncOp func) {
  if (func.isExternal())
    return {};
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName);
        name && name.getValue() == kCudaContextName)
      return func.getArgument(i);
  return {};
}

namespace {

struct DlcMapToGpuPass : dlc::impl::DlcMapToGpuPassBase<DlcMapToGpuPass> {
  using DlcMapToGpuPassBase::DlcMapToGpuPassBase;

  /// Whether GEMMs may take an activation (ReLU, GELU) into their
  /// epilogue (see matchEpilogue).
  bool activationEpilogues = true;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (func->hasAttr(kEntryAttrName) && !func.isExternal() &&
          failed(mapEntry(module, func)))
        return signalPassFailure();
  }

  /// Declares `name` with `args` and no results, once per module.
  func::FuncOp runtimeFunction(ModuleOp module, StringRef name,
                               TypeRange args) {
    if (auto f = module.lookupSymbol<func::FuncOp>(name))
      return f;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto f = func::FuncOp::create(b, module.getLoc(), name,
                                  b.getFunctionType(args, {}));
    f.setPrivate();
    return f;
  }

  LogicalResult mapEntry(ModuleOp module, func::FuncOp func) {
    MLIRContext *ctx = &getContext();
    Block &body = func.front();
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
    Value cudaCtx = body.getArgument(ctxIndex);
    // fp16 loss scaling must see every NaN and infinity: no activation
    // epilogues then.
    activationEpilogues = true;
    for (unsigned i = 0; i < ctxIndex; ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName))
        if (name.getValue() == kLossScaleStateName)
          activationEpilogues = false;

    // GEMMs first, so that they can take in the transposes and the zero
    // fills that feed them before those become kernels.
    fillCopiesOfFills(body);
    reluGrads.clear();
    SmallVector<linalg::LinalgOp> gemms;
    for (Operation &op : body)
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          !isSmallGemm(cast<linalg::LinalgOp>(op)))
        gemms.push_back(cast<linalg::LinalgOp>(op));
    for (linalg::LinalgOp gemm : gemms)
      if (failed(mapGemm(module, gemm, cudaCtx)))
        return failure();

    // Scalars computed from device memory (the optimizer's step count and
    // bias corrections) are computed by single-thread kernels that leave
    // them in device scratch buffers, which later kernels read.
    scratch.clear();
    deviceValues.clear();
    SmallVector<Operation *> ops, hostScalarOps;
    for (Operation &op : body)
      ops.push_back(&op);
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation &op = *ops[i];
      if (isDeviceScalar(op)) {
        SmallVector<Operation *> run = {&op};
        while (i + 1 < ops.size() && (isDeviceScalar(*ops[i + 1]) ||
                                      isa<arith::ConstantOp>(ops[i + 1])))
          run.push_back(ops[++i]);
        mapScalars(run);
        hostScalarOps.append(run);
        continue;
      }
      // Address arithmetic (views, casts, pointers, index math) and buffer
      // allocation stay on the host, as do the GEMM calls and the kernels
      // made above.
      if ((isPure(&op) && !isa<linalg::LinalgOp>(op)) ||
          isa<func::ReturnOp, func::CallOp, gpu::LaunchOp, memref::AllocOp,
              memref::DeallocOp>(op))
        continue;
      LogicalResult mapped = failure();
      if (auto copy = dyn_cast<memref::CopyOp>(op))
        mapped = mapCopy(module, copy, cudaCtx);
      else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
        mapped = mapToKernel(linalgOp);
      else
        return op.emitOpError("cannot run in a CUDA entry: it would touch "
                              "device memory from the host");
      if (failed(mapped))
        return failure();
    }
    // The host copies of the device scalars are dead now, unless a host op
    // (an address computation) needed one.
    for (Operation *op : llvm::reverse(hostScalarOps)) {
      if (op->use_empty()) {
        op->erase();
        continue;
      }
      if (!isa<arith::ConstantOp>(op))
        return (*op->user_begin())
            ->emitOpError("uses a value computed from device memory on the "
                          "host");
    }
    return success();
  }

  /// Whether a GEMM is small enough to run as a kernel of a thread per
  /// output element (see the pass's small-gemm-fmas option): fp32
  /// accumulation, static shapes, at most kSmallGemmMaxK elements per dot
  /// product and smallGemmFmas multiply-adds in all. Such a kernel fuses
  /// with its neighbours (dlc-fuse-kernels), where a cuBLASLt call would be
  /// a launch of its own, mostly overhead at that size.
  bool isSmallGemm(linalg::LinalgOp op) {
    auto out = dyn_cast<ShapedType>(op.getDpsInits()[0].getType());
    if (!out || !out.getElementType().isF32())
      return false;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t fmas = 1;
    for (int64_t r : ranges) {
      if (ShapedType::isDynamic(r))
        return false;
      fmas *= r;
    }
    return ranges.back() <= kSmallGemmMaxK && fmas <= smallGemmFmas;
  }

  /// Results of device-scalar ops, and the scratch buffer of each one that
  /// a later kernel reads.
  DenseSet<Value> deviceValues;
  DenseMap<Value, Value> scratch;

  /// A load from or a store to device memory, or a pure scalar op of a
  /// device scalar.
  bool isDeviceScalar(Operation &op) {
    bool scalar = isa<memref::LoadOp, memref::StoreOp>(op) ||
                  (!op.getNumRegions() && op.getNumResults() && isPure(&op) &&
                   llvm::none_of(op.getResultTypes(),
                                 [](Type t) { return isa<ShapedType>(t); }) &&
                   llvm::any_of(op.getOperands(), [&](Value v) {
                     return deviceValues.contains(v);
                   }));
    if (scalar)
      deviceValues.insert(op.getResults().begin(), op.getResults().end());
    return scalar;
  }

  /// Maps the device scalars that the ops about to be cloned into a kernel
  /// use to loads of their scratch buffers, at the insertion point.
  void loadScratch(OpBuilder &kb, IRMapping &mapping,
                   ArrayRef<Operation *> cloned) {
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

  /// A single-thread kernel computing `run` and storing each value that a
  /// later op uses into a 0-d device buffer (placed by dlc-plan-memory).
  void mapScalars(ArrayRef<Operation *> run) {
    DenseSet<Operation *> inRun(run.begin(), run.end());
    OpBuilder b(run.front());
    Location loc = run.front()->getLoc();
    Block *body = run.front()->getBlock();
    SmallVector<std::pair<Value, Value>> escaping;
    for (Operation *op : run) {
      if (isa<arith::ConstantOp>(op))
        continue;
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *u) {
              return !inRun.contains(body->findAncestorOpInBlock(*u));
            }))
          escaping.push_back(
              {r, memref::AllocOp::create(b, loc,
                                          MemRefType::get({}, r.getType()))});
    }
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
    launch->setAttr(kPointsAttrName, b.getDenseI64ArrayAttr({}));
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    IRMapping mapping;
    loadScratch(kb, mapping, run);
    for (Operation *op : run)
      kb.clone(*op, mapping);
    for (auto [value, buffer] : escaping) {
      memref::StoreOp::create(kb, loc, mapping.lookup(value), buffer,
                              ValueRange{});
      scratch[value] = buffer;
    }
    gpu::TerminatorOp::create(kb, loc);
  }

  /// Makes each copy of a buffer that a fill wrote last a fill of the
  /// copy's target. CSE merges the zero-filled accumulators of GEMMs of one
  /// shape, and bufferization gives all but the last GEMM a copy of the
  /// zeros: as a fill, a GEMM takes it in as beta = 0 (and then its
  /// epilogue) instead of a device copy and a read of the zeros.
  static void fillCopiesOfFills(Block &body) {
    for (auto copy :
         llvm::make_early_inc_range(body.getOps<memref::CopyOp>())) {
      Value src = copy.getSource();
      auto fill = producerOf<linalg::FillOp>(src, copy);
      if (!fill || fill.getOutputs()[0] != src ||
          copy.getSource().getType() != copy.getTarget().getType())
        continue;
      OpBuilder b(copy);
      linalg::FillOp::create(b, copy.getLoc(), fill.getInputs()[0],
                             copy.getTarget());
      copy.erase();
    }
  }

  /// Whether an op strictly between `from` and `to` (both in one block)
  /// uses `buffer` or a view of it; with `writesOnly`, only uses that may
  /// write (anything but an input of a linalg op).
  static bool usedBetween(Value buffer, Operation *from, Operation *to,
                          bool writesOnly, Operation *except = nullptr) {
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

  /// The top-level op that writes `buffer` last before `user`, if it is a
  /// `T` and nothing in between touches the buffer.
  template <typename T> static T producerOf(Value buffer, Operation *user) {
    for (Operation *op = user->getPrevNode(); op; op = op->getPrevNode()) {
      auto producer = dyn_cast<T>(op);
      if (producer &&
          llvm::is_contained(cast<linalg::LinalgOp>(op).getDpsInits(), buffer))
        return usedBetween(buffer, op, user, /*writesOnly=*/false) ? T()
                                                                   : producer;
    }
    return T();
  }

  /// A GEMM operand read through the transpose that produced it: the
  /// transpose's source, with cuBLASLt transposing it. Only when nothing
  /// else reads the transposed buffer (after the GEMM, it is overwritten
  /// before it is read again: bufferization reuses one buffer for the
  /// transposes of a step) and the source is not written in between; the
  /// transpose is then dead.
  linalg::TransposeOp foldableTranspose(Value operand, Operation *gemm,
                                        bool batched) {
    auto t = producerOf<linalg::TransposeOp>(operand, gemm);
    SmallVector<int64_t> perm =
        batched ? SmallVector<int64_t>{0, 2, 1} : SmallVector<int64_t>{1, 0};
    if (!t || SmallVector<int64_t>(t.getPermutation()) != perm ||
        usedBetween(t.getInput(), t, gemm, /*writesOnly=*/true))
      return {};
    SmallVector<Operation *> users;
    for (Operation *u : operand.getUsers()) {
      if (u->getBlock() != gemm->getBlock())
        return {};
      users.push_back(u);
    }
    if (llvm::any_of(users,
                     [&](Operation *u) { return gemm->isBeforeInBlock(u); }) &&
        !overwrittenBeforeRead(operand, gemm, users))
      return {};
    std::optional<Strided> s = stridedOf(t.getInput());
    if (!s || s->strides.back() != 1)
      return {};
    return t;
  }

  /// Whether y = (x < 0 ? 0 : x), PyTorch's ReLU as DlcToLinalg writes it.
  static bool isRelu(Value y, Value x) {
    auto sel = y.getDefiningOp<arith::SelectOp>();
    auto cmp = sel ? sel.getCondition().getDefiningOp<arith::CmpFOp>()
                   : arith::CmpFOp();
    return cmp && cmp.getPredicate() == arith::CmpFPredicate::OLT &&
           cmp.getLhs() == x && matchPattern(cmp.getRhs(), m_AnyZeroFloat()) &&
           matchPattern(sel.getTrueValue(), m_AnyZeroFloat()) &&
           sel.getFalseValue() == x;
  }

  /// Whether y = (x > 0 ? g : 0), the gradient g of a ReLU of x.
  static bool isReluGrad(Value y, Value x, Value g) {
    auto sel = y.getDefiningOp<arith::SelectOp>();
    auto cmp = sel ? sel.getCondition().getDefiningOp<arith::CmpFOp>()
                   : arith::CmpFOp();
    return cmp && cmp.getPredicate() == arith::CmpFPredicate::OGT &&
           cmp.getLhs() == x && matchPattern(cmp.getRhs(), m_AnyZeroFloat()) &&
           sel.getTrueValue() == g &&
           matchPattern(sel.getFalseValue(), m_AnyZeroFloat());
  }

  /// Whether `v` is a float constant equal to `expected` rounded to its
  /// type.
  static bool isConstant(Value v, double expected) {
    FloatAttr attr;
    if (!matchPattern(v, m_Constant(&attr)))
      return false;
    APFloat want(expected);
    bool lost;
    want.convert(attr.getValue().getSemantics(), APFloat::rmNearestTiesToEven,
                 &lost);
    return attr.getValue().bitwiseIsEqual(want);
  }

  /// Whether `v` is an `OpTy` (commutative, binary) whose operands satisfy
  /// `pred` in one order or the other.
  template <typename OpTy>
  static bool commuted(Value v, function_ref<bool(Value, Value)> pred) {
    auto op = v.getDefiningOp<OpTy>();
    return op &&
           (pred(op.getLhs(), op.getRhs()) || pred(op.getRhs(), op.getLhs()));
  }

  /// Whether y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), PyTorch's
  /// GELU(approximate="tanh") as DlcToLinalg writes it, up to the order of
  /// operands: the GELU of cuBLASLt's epilogues. The erf form is not it.
  static bool isGeluTanh(Value y, Value x) {
    auto mulf = [](Value v, function_ref<bool(Value, Value)> pred) {
      return commuted<arith::MulFOp>(v, pred);
    };
    auto addf = [](Value v, function_ref<bool(Value, Value)> pred) {
      return commuted<arith::AddFOp>(v, pred);
    };
    auto cube = [&](Value v) {
      return mulf(v, [&](Value p, Value q) {
        return p == x &&
               mulf(q, [&](Value r, Value s) { return r == x && s == x; });
      });
    };
    auto inner = [&](Value v) { // sqrt(2/pi) (x + 0.044715 x^3)
      return mulf(v, [&](Value k, Value poly) {
        return isConstant(k, std::sqrt(2.0 / M_PI)) &&
               addf(poly, [&](Value p, Value w) {
                 return p == x && mulf(w, [&](Value c, Value x3) {
                          return isConstant(c, 0.044715) && cube(x3);
                        });
               });
      });
    };
    return mulf(y, [&](Value hx, Value s) {
      return mulf(hx, [&](Value h,
                          Value v) { return isConstant(h, 0.5) && v == x; }) &&
             addf(s, [&](Value one, Value t) {
               auto tanh = t.getDefiningOp<math::TanhOp>();
               return isConstant(one, 1.0) && tanh && inner(tanh.getOperand());
             });
    });
  }

  /// What cuBLASLt's epilogue can take over from the elementwise op that
  /// follows a GEMM: `op` computes D[i, j] = C[i, j] + bias[j] (or reads C
  /// transposed, C[j, i]), then maybe a ReLU or a tanh GELU, all in fp32, and
  /// is the only other reader of C.
  struct Epilogue {
    linalg::GenericOp op;
    Value bias, out;
    int32_t code = DLC_GEMM_EPILOGUE_BIAS; // or RELU_BIAS or GELU_BIAS
    bool transposed = false;
  };

  /// Whether `v` exists at `op`, or is a static allocation after it (in
  /// its block) that can move before it; with `move`, moves it.
  static bool availableAt(Value v, Operation *op, bool move) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != op->getBlock() || def->isBeforeInBlock(op))
      return true;
    auto alloc = dyn_cast<memref::AllocOp>(def);
    if (!alloc || alloc->getNumOperands())
      return false;
    if (move)
      alloc->moveBefore(op);
    return true;
  }

  /// A bias gradient that cuBLASLt computes next to the GEMM: `op` sums
  /// one of its operands over k into `grad` (zeroed by `fill` just before),
  /// in fp32. `ofA`: the operand is A (`grad` has m elements), else B.
  struct BiasGrad {
    linalg::GenericOp op;
    linalg::FillOp fill;
    Value grad;
    bool ofA = true;
  };

  /// The bias gradient of a 2-D fp32 GEMM reading `a` and `b` (the
  /// sources of folded transposes, with their flags): a later reduction
  /// grad[x] += X[..] whose input X is `a` or `b` and whose reduced
  /// dimension is the GEMM's k, into a buffer zeroed just before. Between
  /// the two, nothing may write X or touch `grad` (the GEMM reads X and
  /// writes `grad` at its own place), and `grad` is none of a, b and `c`.
  std::optional<BiasGrad> matchBiasGrad(Operation *gemm, Value a, bool transA,
                                        Value b, bool transB, Value c) {
    MLIRContext *ctx = gemm->getContext();
    auto f32 = Float32Type::get(ctx);
    AffineExpr d0, d1;
    bindDims(ctx, d0, d1);
    for (Operation *op = gemm->getNextNode(); op; op = op->getNextNode()) {
      auto r = dyn_cast<linalg::GenericOp>(op);
      if (!r || r.getNumDpsInputs() != 1 || r.getNumDpsInits() != 1 ||
          r.getNumLoops() != 2 || r.getNumReductionLoops() != 1 ||
          !r.hasPureBufferSemantics())
        continue;
      Value x = r.getDpsInputs()[0];
      bool ofA = x == a;
      if (!ofA && x != b)
        continue;
      // Which dimension of X is summed: k is X's row dimension for A
      // transposed and B as it is, its column dimension otherwise.
      bool sumsRows = ofA ? transA : !transB;
      auto iterators = r.getIteratorTypesArray();
      auto maps = r.getIndexingMapsArray();
      if (iterators[sumsRows ? 0 : 1] != utils::IteratorType::reduction ||
          !maps[0].isIdentity() ||
          maps[1] != AffineMap::get(2, 0, {sumsRows ? d1 : d0}, ctx))
        continue;
      Value grad = r.getDpsInits()[0];
      auto xTy = dyn_cast<MemRefType>(x.getType());
      auto gTy = dyn_cast<MemRefType>(grad.getType());
      if (!xTy || !gTy || xTy.getElementType() != f32 ||
          gTy.getElementType() != f32)
        return std::nullopt;
      Block &body = r.getRegion().front();
      auto add = dyn_cast<arith::AddFOp>(body.front());
      if (!add || body.getOperations().size() != 2 ||
          body.getTerminator()->getOperand(0) != add ||
          !((add.getLhs() == body.getArgument(0) &&
             add.getRhs() == body.getArgument(1)) ||
            (add.getLhs() == body.getArgument(1) &&
             add.getRhs() == body.getArgument(0))))
        return std::nullopt;
      auto fill = producerOf<linalg::FillOp>(grad, r);
      std::optional<Strided> sg = stridedOf(grad);
      Value root = viewedBuffer(grad);
      if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
          !sg || sg->strides.back() != 1 || root == viewedBuffer(a) ||
          root == viewedBuffer(b) || root == viewedBuffer(c) ||
          usedBetween(x, gemm, r, /*writesOnly=*/true) ||
          usedBetween(grad, gemm, r, /*writesOnly=*/false, fill))
        return std::nullopt;
      // The gradient's buffer must exist at the GEMM.
      if (!availableAt(grad, gemm, /*move=*/true))
        return std::nullopt;
      return BiasGrad{r, fill, grad, ofA};
    }
    return std::nullopt;
  }

  /// Whether the first op after `after` that touches `buffer` (one of
  /// `users`, top-level ops) overwrites all of it without reading it: a
  /// fill, or an all-parallel linalg op that writes it through a
  /// permutation and neither reads it nor its old value (a transpose, a
  /// copy, an elementwise op). The buffer's content after `after` is then
  /// dead (bufferization reused it).
  static bool overwrittenBeforeRead(Value buffer, Operation *after,
                                    ArrayRef<Operation *> users) {
    Operation *next = nullptr;
    for (Operation *u : users)
      if (after->isBeforeInBlock(u) && (!next || u->isBeforeInBlock(next)))
        next = u;
    return next && overwrites(next, buffer);
  }

  /// Whether `op` writes all of `buffer` without reading it or its old
  /// value (see overwrittenBeforeRead).
  static bool overwrites(Operation *op, Value buffer) {
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

  /// The uses of `from` after `after` (in its block) up to the next op
  /// that overwrites it, if they can read `to` instead: `from` is an
  /// allocation used only in that block, each of those uses is a read (a
  /// linalg input, a copy's source), and nothing writes `to` until the
  /// last of them.
  static std::optional<SmallVector<OpOperand *>>
  redirectableReads(Value from, Value to, Operation *after) {
    if (!from.getDefiningOp<memref::AllocOp>() ||
        llvm::any_of(from.getUsers(), [&](Operation *u) {
          return u->getBlock() != after->getBlock();
        }))
      return std::nullopt;
    SmallVector<OpOperand *> reads;
    Operation *last = after;
    for (Operation *op = after->getNextNode(); op; op = op->getNextNode()) {
      if (!llvm::is_contained(op->getOperands(), from))
        continue;
      if (overwrites(op, from))
        break;
      for (OpOperand &use : op->getOpOperands()) {
        if (use.get() != from)
          continue;
        auto l = dyn_cast<linalg::LinalgOp>(op);
        if (!(l && l.isDpsInput(&use)) &&
            !(isa<memref::CopyOp>(op) && use.getOperandNumber() == 0))
          return std::nullopt;
        reads.push_back(&use);
      }
      last = op;
    }
    if (usedBetween(to, after, last->getNextNode(), /*writesOnly=*/true))
      return std::nullopt;
    return reads;
  }

  /// The epilogue of a 2-D GEMM `gemm` writing `c` with beta = 0 (`fill`
  /// was its zero fill), reading `a` and `b`. An activation only with
  /// `activation` (GELU: see isGeluTanh):
  /// cuBLASLt's ReLU makes a NaN 0 where PyTorch (and the CPU code) keep
  /// it, which fp16 loss scaling must see.
  std::optional<Epilogue> matchEpilogue(Operation *gemm, Value c,
                                        Operation *fill, Value a, Value b,
                                        bool activation) {
    // The first reader of C after the GEMM; later ones only if it writes
    // its result over C (they read the final value then).
    SmallVector<Operation *> readers;
    for (Operation *u : c.getUsers()) {
      if (u == gemm || u == fill)
        continue;
      Operation *top = gemm->getBlock()->findAncestorOpInBlock(*u);
      if (!top)
        return std::nullopt;
      if (!llvm::is_contained(readers, top))
        readers.push_back(top);
    }
    if (readers.empty())
      return std::nullopt;
    Operation *user =
        *llvm::min_element(readers, [](Operation *x, Operation *y) {
          return x->isBeforeInBlock(y);
        });
    auto e = dyn_cast<linalg::GenericOp>(user);
    if (!e || !gemm->isBeforeInBlock(e) || e.getNumDpsInputs() != 2 ||
        e.getNumDpsInits() != 1 || e.getNumLoops() != 2 ||
        e.getNumParallelLoops() != 2 || !e.hasPureBufferSemantics())
      return std::nullopt;
    MLIRContext *ctx = e.getContext();
    AffineExpr i, j;
    bindDims(ctx, i, j);
    Epilogue epi;
    epi.op = e;
    epi.out = e.getDpsInits()[0];
    unsigned cIndex = e.getDpsInputs()[0] == c ? 0 : 1;
    if (e.getDpsInputs()[cIndex] != c)
      return std::nullopt;
    epi.bias = e.getDpsInputs()[1 - cIndex];
    if (readers.size() > 1 && epi.out != c &&
        !overwrittenBeforeRead(c, e, readers))
      return std::nullopt;
    auto maps = e.getIndexingMapsArray();
    if (maps[cIndex] == AffineMap::get(2, 0, {j, i}, ctx))
      epi.transposed = true;
    else if (!maps[cIndex].isIdentity())
      return std::nullopt;
    auto f32 = Float32Type::get(ctx);
    auto biasTy = dyn_cast<MemRefType>(epi.bias.getType());
    auto outTy = dyn_cast<MemRefType>(epi.out.getType());
    if (maps[1 - cIndex] != AffineMap::get(2, 0, {j}, ctx) ||
        !maps[2].isIdentity() || !biasTy || !outTy ||
        biasTy.getElementType() != f32 || outTy.getElementType() != f32 ||
        cast<MemRefType>(c.getType()).getElementType() != f32)
      return std::nullopt;
    // The body: add, then maybe cmpf olt 0 + select 0 or a tanh GELU, then
    // yield.
    Block &body = e.getRegion().front();
    Value cArg = body.getArgument(cIndex), bArg = body.getArgument(1 - cIndex);
    auto ops = llvm::map_to_vector(body.without_terminator(),
                                   [](Operation &o) { return &o; });
    auto add = ops.empty() ? arith::AddFOp() : dyn_cast<arith::AddFOp>(ops[0]);
    if (!add || !((add.getLhs() == cArg && add.getRhs() == bArg) ||
                  (add.getLhs() == bArg && add.getRhs() == cArg)))
      return std::nullopt;
    Value result = body.getTerminator()->getOperand(0);
    if (ops.size() == 3 && activation && isRelu(result, add))
      epi.code = DLC_GEMM_EPILOGUE_RELU_BIAS;
    else if (ops.size() == 10 && activation && isGeluTanh(result, add))
      epi.code = DLC_GEMM_EPILOGUE_GELU_BIAS;
    else if (ops.size() != 1 || result != add)
      return std::nullopt;
    // The GEMM writes D and reads the bias at its own place, not the
    // epilogue's: nothing in between may touch D or write the bias, and D
    // is none of the GEMM's inputs.
    std::optional<Strided> so = stridedOf(epi.out), sb = stridedOf(epi.bias);
    Value root = viewedBuffer(epi.out);
    if (!so || !sb || so->strides.back() != 1 || sb->strides.back() != 1 ||
        root == viewedBuffer(a) || root == viewedBuffer(b) ||
        root == viewedBuffer(epi.bias) ||
        usedBetween(epi.out, gemm, e, /*writesOnly=*/false) ||
        usedBetween(epi.bias, gemm, e, /*writesOnly=*/true) ||
        usedBetween(c, gemm, e, /*writesOnly=*/false))
      return std::nullopt;
    // Both must exist at the GEMM: a buffer allocated in between (the
    // epilogue's output, usually) is allocated before it instead.
    if (!availableAt(epi.out, gemm, /*move=*/false) ||
        !availableAt(epi.bias, gemm, /*move=*/false))
      return std::nullopt;
    availableAt(epi.out, gemm, /*move=*/true);
    availableAt(epi.bias, gemm, /*move=*/true);
    return epi;
  }

  /// A GEMM whose epilogue applies a ReLU's gradient through the bit mask
  /// that an earlier GEMM's epilogue wrote (recorded when that one was
  /// mapped): the gradient loop it replaces, the mask, and the
  /// pre-activation the loop read, which dies with it.
  struct ReluGrad {
    linalg::GenericOp op;
    Value mask, pre;
  };
  DenseMap<Operation *, ReluGrad> reluGrads;

  /// The ReLU of a training step's linear layer, in the forward pass and
  /// in the backward pass at once: after `gemm`'s bias epilogue `epi`
  /// (writing the pre-activation), a ReLU loop, and later the ReLU's
  /// gradient loop (pre > 0 ? g : 0), the pre-activation's only readers;
  /// g written last by a later GEMM. The first GEMM then writes the ReLU's
  /// output with cuBLASLt's RELU_AUX_BIAS and a bit mask of where the
  /// pre-activation was positive, and the later GEMM's DRELU epilogue
  /// applies the gradient through the mask, in place over g: the
  /// pre-activation is never stored, and both loops disappear. Where the
  /// gradient loop wrote another buffer, its readers read g instead (see
  /// redirectableReads; nothing else may read g's raw product). Returns the
  /// ReLU loop and its output, and the new mask; records the gradient in
  /// `reluGrads`.
  struct ReluMask {
    linalg::GenericOp relu;
    Value out, mask;
  };
  std::optional<ReluMask> matchReluMask(Operation *gemm, const Epilogue &epi,
                                        Value a, Value b) {
    Value pre = epi.out;
    auto alloc = pre.getDefiningOp<memref::AllocOp>();
    auto type = cast<MemRefType>(pre.getType());
    if (!alloc || alloc->getBlock() != gemm->getBlock() ||
        type.getRank() != 2 || !type.getLayout().isIdentity())
      return std::nullopt;
    linalg::GenericOp relu, reluGrad;
    for (Operation *u : pre.getUsers()) {
      auto g = dyn_cast<linalg::GenericOp>(u);
      if (u == epi.op)
        continue;
      if (!g || g->getBlock() != gemm->getBlock())
        return std::nullopt;
      if (!relu && g.getNumDpsInputs() == 1)
        relu = g;
      else if (!reluGrad && g.getNumDpsInputs() == 2)
        reluGrad = g;
      else
        return std::nullopt;
    }
    auto elementwise = [](linalg::GenericOp g) {
      return g.hasPureBufferSemantics() && g.getNumDpsInits() == 1 &&
             g.getNumLoops() == 2 && g.getNumParallelLoops() == 2 &&
             llvm::all_of(g.getIndexingMapsArray(),
                          [](AffineMap m) { return m.isIdentity(); });
    };
    if (!relu || !reluGrad || !epi.op->isBeforeInBlock(relu) ||
        !relu->isBeforeInBlock(reluGrad) || !elementwise(relu) ||
        !elementwise(reluGrad))
      return std::nullopt;
    Block &rb = relu.getRegion().front();
    Block &gb = reluGrad.getRegion().front();
    unsigned preIndex = reluGrad.getDpsInputs()[0] == pre ? 0 : 1;
    Value g = reluGrad.getDpsInputs()[1 - preIndex];
    // Both read the pre-activation (and neither writes it).
    if (relu.getDpsInputs()[0] != pre ||
        reluGrad.getDpsInputs()[preIndex] != pre ||
        relu.getDpsInits()[0] == pre || rb.getOperations().size() != 3 ||
        !isRelu(rb.getTerminator()->getOperand(0), rb.getArgument(0)) ||
        g == pre || reluGrad.getDpsInits()[0] == pre ||
        gb.getOperations().size() != 3 ||
        !isReluGrad(gb.getTerminator()->getOperand(0), gb.getArgument(preIndex),
                    gb.getArgument(1 - preIndex)))
      return std::nullopt;
    // The ReLU's output, written at the GEMM instead: nothing in between
    // touches it, and the GEMM does not read it.
    Value out = relu.getDpsInits()[0];
    std::optional<Strided> so = stridedOf(out);
    Value root = viewedBuffer(out);
    if (!so || so->strides.back() != 1 || root == viewedBuffer(a) ||
        root == viewedBuffer(b) || root == viewedBuffer(epi.bias) ||
        usedBetween(out, gemm, relu, /*writesOnly=*/false) ||
        !availableAt(out, gemm, /*move=*/false))
      return std::nullopt;
    // The gradient's GEMM: after the ReLU, the last to write g (nothing
    // touches g in between), a cuBLASLt call of the same output shape.
    auto gemm2 = producerOf<linalg::MatmulOp>(g, reluGrad);
    if (!gemm2 || !relu->isBeforeInBlock(gemm2) || !isCublasGemm(gemm2) ||
        g.getType() != pre.getType() || reluGrads.contains(gemm2))
      return std::nullopt;
    Value gradOut = reluGrad.getDpsInits()[0];
    std::optional<SmallVector<OpOperand *>> redirected;
    if (gradOut != g) {
      if (gradOut.getType() != g.getType() ||
          llvm::any_of(g.getUsers(),
                       [&](Operation *u) {
                         return u != gemm2 && u != reluGrad &&
                                (u->getBlock() != gemm->getBlock() ||
                                 gemm2->isBeforeInBlock(u));
                       }) ||
          !(redirected = redirectableReads(gradOut, g, reluGrad)))
        return std::nullopt;
      for (OpOperand *use : *redirected)
        use->set(g);
    }
    availableAt(out, gemm, /*move=*/true);
    OpBuilder builder(gemm);
    int64_t bytes =
        dlc_gemm_relu_mask_bytes(type.getDimSize(0), type.getDimSize(1));
    Value mask = memref::AllocOp::create(
        builder, gemm->getLoc(),
        MemRefType::get({bytes}, builder.getIntegerType(8)));
    reluGrads[gemm2] = {reluGrad, mask, pre};
    return ReluMask{relu, out, mask};
  }

  /// Whether `op` is a GEMM that dlc_cuda_gemm computes: a named matmul
  /// with the default maps (transposes are kernels), row-major operands
  /// with a unit inner stride and static strides, dtypes it takes, and not
  /// small enough to be a kernel.
  bool isCublasGemm(linalg::LinalgOp op) {
    bool batched = isa<linalg::BatchMatmulOp>(op);
    if ((!batched && !isa<linalg::MatmulOp>(op)) || isSmallGemm(op))
      return false;
    MLIRContext *ctx = op.getContext();
    AffineExpr b_, m, n, k;
    SmallVector<AffineMap> expected;
    if (batched) {
      bindDims(ctx, b_, m, n, k);
      expected = {AffineMap::get(4, 0, {b_, m, k}, ctx),
                  AffineMap::get(4, 0, {b_, k, n}, ctx),
                  AffineMap::get(4, 0, {b_, m, n}, ctx)};
    } else {
      bindDims(ctx, m, n, k);
      expected = {AffineMap::get(3, 0, {m, k}, ctx),
                  AffineMap::get(3, 0, {k, n}, ctx),
                  AffineMap::get(3, 0, {m, n}, ctx)};
    }
    if (op.getIndexingMapsArray() != expected)
      return false;
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
          c = op.getDpsInits()[0];
    auto sa = stridedOf(a), sb = stridedOf(b), sc = stridedOf(c);
    auto dtA = dtypeCode(cast<MemRefType>(a.getType()).getElementType()),
         dtB = dtypeCode(cast<MemRefType>(b.getType()).getElementType()),
         dtC = dtypeCode(cast<MemRefType>(c.getType()).getElementType());
    return sa && sb && sc && dtA && dtB && dtC && *dtA == *dtB &&
           sa->strides.back() == 1 && sb->strides.back() == 1 &&
           sc->strides.back() == 1;
  }

  /// The linalg ops that read a GEMM's fp32 result only to round it to
  /// `narrow` (autocast's bf16 copy of a weight gradient, rounded where
  /// the optimizer reads it), when nothing else touches the buffer: then
  /// cuBLASLt can store the rounded result itself, in half the bytes. The
  /// buffer `c` must be a whole allocation, written by `fill` (zeros) and
  /// `gemm` alone, and every reader must take it as an input whose block
  /// argument has one use, an arith.truncf to `narrow`.
  static std::optional<SmallVector<linalg::GenericOp>>
  roundingReaders(Value c, Operation *gemm, Operation *fill, Type narrow) {
    auto alloc = c.getDefiningOp<memref::AllocOp>();
    if (!alloc || !alloc.getType().getLayout().isIdentity() ||
        !alloc.getType().hasStaticShape())
      return std::nullopt;
    SmallVector<linalg::GenericOp> readers;
    for (OpOperand &use : c.getUses()) {
      Operation *user = use.getOwner();
      if (user == gemm || user == fill)
        continue;
      auto reader = dyn_cast<linalg::GenericOp>(user);
      if (!reader || reader->getBlock() != gemm->getBlock() ||
          !gemm->isBeforeInBlock(reader) || !reader.isDpsInput(&use) ||
          !reader.hasPureBufferSemantics())
        return std::nullopt;
      BlockArgument arg = reader.getMatchingBlockArgument(&use);
      auto round = arg.hasOneUse()
                       ? dyn_cast<arith::TruncFOp>(*arg.getUsers().begin())
                       : nullptr;
      if (!round || round.getType() != narrow || round->getAttr("roundingmode"))
        return std::nullopt;
      if (!llvm::is_contained(readers, reader))
        readers.push_back(reader);
    }
    if (readers.empty())
      return std::nullopt;
    return readers;
  }

  /// Gives `readers` (roundingReaders of `c`) the buffer `narrowed` in
  /// place of `c`, its element in place of their rounding.
  static void readNarrowed(ArrayRef<linalg::GenericOp> readers, Value c,
                           Value narrowed) {
    for (linalg::GenericOp reader : readers)
      for (OpOperand *input : reader.getDpsInputOperands()) {
        if (input->get() != c)
          continue;
        BlockArgument arg = reader.getMatchingBlockArgument(input);
        auto round = cast<arith::TruncFOp>(*arg.getUsers().begin());
        input->set(narrowed);
        arg.setType(round.getType());
        round.replaceAllUsesWith(arg);
        round.erase();
      }
  }

  /// C = A * B (+ C) through cuBLASLt; row-major operands with a unit inner
  /// stride, any leading dimension. An operand produced by a transpose is
  /// read through it (cuBLASLt's transpose flag), and an accumulator
  /// filled with zeros just before gives beta = 0 instead of the fill.
  LogicalResult mapGemm(ModuleOp module, linalg::LinalgOp op, Value cudaCtx) {
    if (!op.hasPureBufferSemantics())
      return op.emitOpError("must be bufferized before dlc-map-to-gpu");
    if (!isCublasGemm(op))
      return mapToKernel(op);
    bool batched = isa<linalg::BatchMatmulOp>(op);
    Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1],
          c = op.getDpsInits()[0], gemmOut = c;
    auto sa = stridedOf(a), sb = stridedOf(bm), sc = stridedOf(c);
    auto ta = cast<MemRefType>(a.getType()), tc = cast<MemRefType>(c.getType());
    auto dtA = dtypeCode(ta.getElementType()),
         dtC = dtypeCode(tc.getElementType());

    OpBuilder b(op);
    Location loc = op.getLoc();
    unsigned r = ta.getRank();
    ArrayRef<int64_t> shapeA = ta.getShape(), shapeC = tc.getShape();
    int64_t batch = batched ? shapeC[0] : 1;
    int64_t mm = shapeC[r - 2], nn = shapeC[r - 1], kk = shapeA[r - 1];

    // Transposed operands and a zero accumulator, folded into the call.
    int32_t transA = 0, transB = 0;
    linalg::TransposeOp foldA = foldableTranspose(a, op, batched);
    linalg::TransposeOp foldB = foldableTranspose(bm, op, batched);
    if (foldA) {
      a = foldA.getInput();
      sa = stridedOf(a);
      transA = 1;
    }
    if (foldB) {
      bm = foldB.getInput();
      sb = stridedOf(bm);
      transB = 1;
    }
    float beta = 1.0f;
    auto fill = producerOf<linalg::FillOp>(c, op);
    if (fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      beta = 0.0f;
    else
      fill = {};
    // A bias (and ReLU) right after: cuBLASLt's epilogue writes the final
    // result. When the epilogue reads C transposed, the GEMM computes
    // C^T = op(B)^T op(A)^T instead (swapped operands, flipped flags).
    // A ReLU's gradient through the mask of an earlier GEMM's ReLU.
    std::optional<ReluGrad> reluGrad;
    if (auto it = reluGrads.find(op); it != reluGrads.end())
      reluGrad = it->second;
    std::optional<Epilogue> epi;
    if (!batched && fill && !reluGrad)
      epi = matchEpilogue(op, c, fill, a, bm, activationEpilogues);
    // The ReLU after a bias, with its mask for the backward pass.
    std::optional<ReluMask> reluMask;
    if (epi && epi->code == DLC_GEMM_EPILOGUE_BIAS && activationEpilogues)
      reluMask = matchReluMask(op, *epi, a, bm);
    // Else a bias gradient summing A or B over k, next to a weight
    // gradient (a transposed batch of output gradients times the inputs).
    std::optional<BiasGrad> grad;
    if (!batched && !epi && !reluGrad && *dtA == DLC_F32 && *dtC == DLC_F32)
      grad = matchBiasGrad(op, a, transA, bm, transB, c);
    int32_t epilogueCode = DLC_GEMM_EPILOGUE_NONE;
    if (grad)
      epilogueCode =
          grad->ofA ? DLC_GEMM_EPILOGUE_BGRAD_A : DLC_GEMM_EPILOGUE_BGRAD_B;
    if (reluGrad)
      epilogueCode = DLC_GEMM_EPILOGUE_DRELU;
    if (epi) {
      epilogueCode = reluMask ? DLC_GEMM_EPILOGUE_RELU_AUX_BIAS : epi->code;
      c = reluMask ? reluMask->out : epi->out;
      sc = stridedOf(c);
      if (epi->transposed) {
        std::swap(a, bm);
        std::swap(sa, sb);
        std::swap(mm, nn);
        std::tie(transA, transB) = std::make_pair(!transB, !transA);
      }
    }
    // A bf16 GEMM whose fp32 result is only ever rounded to bf16 stores it
    // rounded (cuBLASLt rounds to nearest even, as arith.truncf does), in a
    // buffer of half the size. Not fp16: whether cuBLASLt's conversion
    // overflows to infinity, as the loss scaler's finiteness check needs,
    // is for a GPU to confirm.
    if (epilogueCode == DLC_GEMM_EPILOGUE_NONE && fill && !epi &&
        *dtA == DLC_BF16 && *dtC == DLC_F32)
      if (auto readers = roundingReaders(c, op, fill, ta.getElementType())) {
        OpBuilder ab(c.getDefiningOp());
        Value narrowed = memref::AllocOp::create(
            ab, loc, MemRefType::get(tc.getShape(), ta.getElementType()),
            c.getDefiningOp<memref::AllocOp>().getAlignmentAttr());
        readNarrowed(*readers, c, narrowed);
        c = narrowed;
        sc = stridedOf(c);
        dtC = dtA;
      }
    auto batchStride = [&](const Strided &s) {
      return batched ? s.strides[0] : 0;
    };
    auto i64Ty = b.getI64Type(), i32Ty = b.getI32Type();
    SmallVector<Value> args = {
        cudaCtx,
        i32(b, loc, *dtA),
        i32(b, loc, *dtC),
        i64(b, loc, batch),
        i64(b, loc, mm),
        i64(b, loc, nn),
        i64(b, loc, kk),
        addressOf(b, loc, a, sa->offset),
        i64(b, loc, sa->strides[r - 2]),
        i64(b, loc, batchStride(*sa)),
        i32(b, loc, transA),
        addressOf(b, loc, bm, sb->offset),
        i64(b, loc, sb->strides[r - 2]),
        i64(b, loc, batchStride(*sb)),
        i32(b, loc, transB),
        arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(beta)),
        addressOf(b, loc, c, sc->offset),
        i64(b, loc, sc->strides[r - 2]),
        i64(b, loc, batchStride(*sc)),
        i32(b, loc, epilogueCode),
        epi    ? addressOf(b, loc, epi->bias, stridedOf(epi->bias)->offset)
        : grad ? addressOf(b, loc, grad->grad, stridedOf(grad->grad)->offset)
               : i64(b, loc, 0),
        reluMask   ? addressOf(b, loc, reluMask->mask, 0)
        : reluGrad ? addressOf(b, loc, reluGrad->mask, 0)
                   : i64(b, loc, 0)};
    SmallVector<Type> types = {cudaCtx.getType(),
                               i32Ty,
                               i32Ty,
                               i64Ty,
                               i64Ty,
                               i64Ty,
                               i64Ty,
                               i64Ty,
                               i64Ty,
                               i64Ty,
                               i32Ty,
                               i64Ty,
                               i64Ty,
                               i64Ty,
                               i32Ty,
                               b.getF32Type(),
                               i64Ty,
                               i64Ty,
                               i64Ty,
                               i32Ty,
                               i64Ty,
                               i64Ty};
    func::FuncOp gemm = runtimeFunction(module, "dlc_cuda_gemm", types);
    func::CallOp::create(b, loc, gemm, args);
    op->erase();
    // What the call took in is dead now, with the buffer it wrote (the
    // epilogue: the one it read) if nothing else uses it.
    std::pair<Operation *, Value> dead[] = {
        {foldA, foldA ? foldA.getInit() : Value()},
        {foldB, foldB ? foldB.getInit() : Value()},
        {fill, fill ? fill.getOutputs()[0] : Value()},
        {epi ? epi->op : nullptr, gemmOut},
        {grad ? grad->fill : nullptr, Value()},
        {grad ? grad->op : nullptr, Value()},
        {reluMask ? reluMask->relu : nullptr, Value()},
        {reluGrad ? reluGrad->op : nullptr,
         reluGrad ? reluGrad->pre : Value()}};
    for (auto [deadOp, buffer] : dead) {
      if (!deadOp)
        continue;
      deadOp->erase();
      if (auto alloc =
              buffer ? buffer.getDefiningOp<memref::AllocOp>() : nullptr;
          alloc && alloc->use_empty())
        alloc->erase();
    }
    return success();
  }

  /// A copy between contiguous buffers is one device-to-device memcpy;
  /// any other copy is a kernel.
  LogicalResult mapCopy(ModuleOp module, memref::CopyOp op, Value cudaCtx) {
    auto src = cast<MemRefType>(op.getSource().getType());
    auto dst = cast<MemRefType>(op.getTarget().getType());
    OpBuilder b(op);
    Location loc = op.getLoc();
    // A copy of at most a block's worth of elements (an output of a small
    // step, the loss, the step count) is a kernel, which fuses with the
    // step's others, where a device copy would be a launch of its own.
    if (src.getLayout().isIdentity() && dst.getLayout().isIdentity() &&
        src.hasStaticShape() && src.getElementType() == dst.getElementType() &&
        src.getNumElements() > kThreadsPerBlock) {
      int64_t bytes = src.getNumElements() * src.getElementTypeBitWidth() / 8;
      func::FuncOp memcpy = runtimeFunction(
          module, "dlc_cuda_memcpy",
          {cudaCtx.getType(), b.getI64Type(), b.getI64Type(), b.getI64Type()});
      func::CallOp::create(
          b, loc, memcpy,
          ValueRange{cudaCtx, addressOf(b, loc, op.getTarget(), 0),
                     addressOf(b, loc, op.getSource(), 0), i64(b, loc, bytes)});
      op->erase();
      return success();
    }
    auto copy = linalg::CopyOp::create(b, loc, op.getSource(), op.getTarget());
    op->erase();
    return mapToKernel(cast<linalg::LinalgOp>(copy.getOperation()));
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
        .Default(
            [&](Operation *) -> std::pair<gpu::AllReduceOperation, double> {
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

  /// One thread per point of the parallel loops, the reduction loops
  /// running sequentially inside it; or, for a reduction of at least
  /// kWarpSize elements per point over few points, a warp per point: each
  /// lane combines every 32nd element, `gpu.subgroup_reduce` combines the
  /// lanes, and lane 0 combines the result into the output.
  LogicalResult mapToKernel(linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return op.emitOpError("must be bufferized before dlc-map-to-gpu");
    for (Value v : op.getDpsInits())
      if (!isa<MemRefType>(v.getType()))
        return op.emitOpError("has a non-buffer output; dlc-map-to-gpu "
                              "expects memrefs");
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
    SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return generic.emitOpError("has dynamic loop bounds; the GPU lowering "
                                 "needs static shapes");
    SmallVector<utils::IteratorType> iterators =
        generic.getIteratorTypesArray();
    SmallVector<unsigned> parallel, reduction;
    for (auto [d, it] : llvm::enumerate(iterators))
      (it == utils::IteratorType::parallel ? parallel : reduction).push_back(d);
    int64_t points = 1, elements = 1;
    for (unsigned d : parallel)
      points *= ranges[d];
    for (unsigned d : reduction)
      elements *= ranges[d];
    // A warp per point where a thread per point would leave most of the GPU
    // idle while each thread walks a long reduction.
    Operation *combiner =
        !gemm && elements >= kWarpSize && points <= kMaxWarpPoints
            ? warpCombiner(generic)
            : nullptr;
    int64_t lanes = combiner ? kWarpSize : 1;
    // Few points of many elements each: a warp per slice of a point.
    Slices split =
        combiner ? reductionSlices(points, elements) : Slices{1, elements};
    int64_t slices = split.count;
    int64_t units = points * slices;

    Location loc = generic.getLoc();
    OpBuilder b(generic);
    auto idx = [&](OpBuilder &ob, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ob, loc, v);
    };
    SmallVector<int64_t> parallelRanges;
    for (unsigned d : parallel)
      parallelRanges.push_back(ranges[d]);
    /// A launch of `count` units (points, or slices) of `lanes` threads
    /// each, 256 threads a block, that tells dlc-fuse-kernels its points;
    /// `kb` at its body's start. Returns the launch, the linear index of
    /// this thread's unit, its lane and whether the unit is in range.
    OpBuilder kb(generic);
    auto makeLaunch = [&](int64_t count, ArrayRef<int64_t> pointsAttr) {
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
          arith::MulIOp::create(kb, loc, launch.getBlockIds().x,
                                idx(kb, perBlock)),
          combiner ? arith::DivUIOp::create(kb, loc, threadId, idx(kb, lanes))
                         .getResult()
                   : threadId);
      Value lane =
          combiner ? arith::RemUIOp::create(kb, loc, threadId, idx(kb, lanes))
                         .getResult()
                   : Value();
      Value inRange = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                            linear, idx(kb, count));
      return std::make_tuple(launch, linear, lane, inRange);
    };
    // A split reduction's slices are a dimension of their own.
    SmallVector<int64_t> unitRanges = parallelRanges;
    if (slices > 1)
      unitRanges.push_back(slices);
    gpu::LaunchOp launch;
    Value linear, lane, inRange;
    std::tie(launch, linear, lane, inRange) = makeLaunch(units, unitRanges);

    // Delinearize, the last dimension fastest.
    SmallVector<Value> dims(ranges.size());
    auto delinearize = [&](Value index, ArrayRef<unsigned> which) {
      int64_t stride = 1;
      for (unsigned d : llvm::reverse(which)) {
        Value q = stride == 1
                      ? index
                      : arith::DivUIOp::create(kb, loc, index, idx(kb, stride));
        dims[d] = arith::RemUIOp::create(kb, loc, q, idx(kb, ranges[d]));
        stride *= ranges[d];
      }
    };

    // Outside the reduction loops, for the outputs' elements, which do not
    // move with them: the reduction dimensions at 0.
    auto outsideReductionLoops = [&] {
      for (unsigned d : reduction)
        dims[d] = idx(kb, 0);
    };

    // Kernels take identity-layout buffers (bare pointers): a strided view
    // crosses as the flat buffer under it, indexed with its strides.
    struct Flat {
      Value buffer;
      int64_t offset;
      SmallVector<int64_t> strides;
    };
    DenseMap<Value, Flat> flats;
    for (OpOperand &operand : generic->getOpOperands()) {
      Value buffer = operand.get();
      auto type = dyn_cast<MemRefType>(buffer.getType());
      if (!type || type.getLayout().isIdentity() || flats.count(buffer))
        continue;
      std::optional<Strided> s = stridedOf(buffer);
      if (!s)
        return generic.emitOpError("reads or writes a buffer with a dynamic "
                                   "layout; the GPU lowering needs static "
                                   "strides");
      int64_t extent = s->offset + 1;
      for (auto [size, stride] : llvm::zip(type.getShape(), s->strides))
        extent += (size - 1) * stride;
      OpBuilder hb(launch);
      Value flat = memref::ReinterpretCastOp::create(
          hb, loc, MemRefType::get({extent}, type.getElementType()), buffer,
          /*offset=*/0, ArrayRef<int64_t>{extent}, ArrayRef<int64_t>{1});
      flats[buffer] = Flat{flat, s->offset, s->strides};
    }
    /// The buffer to access for `operand` at the current point, and its
    /// indices there.
    auto access =
        [&](OpOperand &operand) -> std::pair<Value, SmallVector<Value>> {
      AffineMap map = generic.getMatchingIndexingMap(&operand);
      SmallVector<Value> indices;
      for (AffineExpr e : map.getResults())
        indices.push_back(affine::AffineApplyOp::create(
            kb, loc, AffineMap::get(map.getNumDims(), 0, e), dims));
      auto it = flats.find(operand.get());
      if (it == flats.end())
        return {operand.get(), indices};
      Value flatIndex = idx(kb, it->second.offset);
      for (auto [i, stride] : llvm::zip(indices, it->second.strides))
        flatIndex = arith::AddIOp::create(
            kb, loc, flatIndex,
            arith::MulIOp::create(kb, loc, i, idx(kb, stride)));
      return {it->second.buffer, {flatIndex}};
    };
    /// The element of `operand` at a point, as a function of the parallel
    /// loops alone (dlc-fuse-kernels), or null if a reduction loop moves it.
    auto pointMap = [&](OpOperand &operand) -> AffineMapAttr {
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
    };
    auto load = [&](OpOperand &operand, bool everyLane) -> Value {
      auto [buffer, indices] = access(operand);
      auto loaded = memref::LoadOp::create(kb, loc, buffer, indices);
      if (AffineMapAttr map = pointMap(operand)) {
        loaded->setAttr(kPointMapAttrName, map);
        if (everyLane)
          loaded->setAttr(kEveryLaneAttrName, kb.getUnitAttr());
      }
      return loaded;
    };
    auto store = [&](Value value, OpOperand &operand) {
      auto [buffer, indices] = access(operand);
      auto stored = memref::StoreOp::create(kb, loc, value, buffer, indices);
      if (AffineMapAttr map = pointMap(operand))
        stored->setAttr(kPointMapAttrName, map);
    };
    /// Maps the payload's arguments but `skip` and those `mapping` has to
    /// the operands at the current point, and clones the payload up to (not
    /// including) `stop`.
    Block &payload = generic.getRegion().front();
    auto runPayload = [&](IRMapping &mapping, BlockArgument skip,
                          Operation *stop, bool everyLane) {
      for (OpOperand &operand : generic->getOpOperands()) {
        BlockArgument arg = payload.getArgument(operand.getOperandNumber());
        if (arg.use_empty() || arg == skip || mapping.contains(arg))
          continue;
        // A scalar operand (a fill value) is passed as it is, or read from
        // its scratch buffer if it was computed on the device.
        if (!isa<MemRefType>(operand.get().getType())) {
          auto it = scratch.find(operand.get());
          mapping.map(arg, it == scratch.end()
                               ? operand.get()
                               : memref::LoadOp::create(kb, loc, it->second,
                                                        ValueRange{})
                                     .getResult());
          continue;
        }
        mapping.map(arg, load(operand, everyLane));
      }
      SmallVector<Operation *> payloadOps;
      for (Operation &inner : payload)
        payloadOps.push_back(&inner);
      loadScratch(kb, mapping, payloadOps);
      for (Operation &inner : payload.without_terminator()) {
        if (&inner == stop)
          break;
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          mapping.map(index.getResult(), dims[index.getDim()]);
          continue;
        }
        kb.clone(inner, mapping);
      }
    };
    auto yield = cast<linalg::YieldOp>(payload.getTerminator());

    if (!combiner) {
      auto guard = scf::IfOp::create(kb, loc, inRange, /*withElse=*/false);
      kb.setInsertionPointToStart(&guard.getThenRegion().front());
      delinearize(linear, parallel);
      if (!reduction.empty() && accumulatesInRegisters(generic)) {
        // The outputs' elements are the point's alone: read once, carried
        // through the reduction loops, written once.
        outsideReductionLoops();
        SmallVector<Value> values;
        for (OpOperand &init : generic.getDpsInitsMutable())
          values.push_back(load(init, /*everyLane=*/false));
        SmallVector<scf::ForOp> loops;
        for (unsigned d : reduction) {
          auto loop = scf::ForOp::create(
              kb, loc, idx(kb, 0), idx(kb, ranges[d]), idx(kb, 1), values);
          dims[d] = loop.getInductionVar();
          if (!loops.empty())
            scf::YieldOp::create(kb, loc, loop.getResults());
          kb.setInsertionPointToStart(loop.getBody());
          values.assign(loop.getRegionIterArgs().begin(),
                        loop.getRegionIterArgs().end());
          loops.push_back(loop);
        }
        IRMapping mapping;
        for (auto [init, value] :
             llvm::zip(generic.getDpsInitsMutable(), values))
          mapping.map(payload.getArgument(init.getOperandNumber()), value);
        runPayload(mapping, BlockArgument(), nullptr, /*everyLane=*/false);
        SmallVector<Value> yielded;
        for (Value v : yield.getValues())
          yielded.push_back(mapping.lookupOrDefault(v));
        scf::YieldOp::create(kb, loc, yielded);
        kb.setInsertionPointAfter(loops.front());
        outsideReductionLoops();
        for (auto [value, init] : llvm::zip(loops.front().getResults(),
                                            generic.getDpsInitsMutable()))
          store(value, init);
        generic->erase();
        return success();
      }
      // The reduction loops, outermost first.
      for (unsigned d : reduction) {
        auto loop = scf::ForOp::create(kb, loc, idx(kb, 0), idx(kb, ranges[d]),
                                       idx(kb, 1));
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

    // A warp per point (or per slice of a point). Each lane combines
    // elements lane, lane + 32, ... of the flattened reduction loops (of
    // the slice's range of them), the last fastest, so that the lanes of a
    // row reduction read consecutive elements.
    OpOperand &init = *generic.getDpsInitOperand(0);
    BlockArgument acc = payload.getArgument(init.getOperandNumber());
    // An any-of reduction's lanes and slices combine 0/1 flags of its
    // condition (`element`) with maximumf; lane 0 selects the constant into
    // the output where the total is 1.
    bool anyOf = isa<arith::SelectOp>(combiner);
    // What the combiner combines the output with: the other operand, or an
    // any-of reduction's condition.
    Value element = anyOf                            ? combiner->getOperand(0)
                    : combiner->getOperand(0) == acc ? combiner->getOperand(1)
                                                     : combiner->getOperand(0);
    gpu::AllReduceOperation kind;
    double identityValue;
    std::tie(kind, identityValue) = warpReductionOf(combiner);
    Type f32 = kb.getF32Type();
    /// This warp's combination of the elements [begin, end) that `range()`
    /// computes (for a unit in range; lane l takes begin + l, begin + l +
    /// 32, ...), `combine(index, into)` combining one of them into `into`
    /// at the insertion point; the identity for a unit out of range.
    auto warpTotal = [&](Value inRange,
                         function_ref<std::pair<Value, Value>()> range,
                         function_ref<Value(Value, Value)> combine) {
      Value identity = arith::ConstantOp::create(
          kb, loc, kb.getFloatAttr(f32, identityValue));
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
          kb, loc,
          combine(loop.getInductionVar(), loop.getRegionIterArgs()[0]));
      kb.setInsertionPointAfter(partial);
      return gpu::SubgroupReduceOp::create(kb, loc, partial.getResult(0), kind,
                                           /*uniform=*/true)
          .getResult();
    };
    /// `into` combined with `value`, an element, a lane's or a slice's.
    auto combineValues = [&](Value into, Value value) -> Value {
      if (anyOf)
        return arith::MaximumFOp::create(kb, loc, into, value);
      IRMapping mapping;
      mapping.map(acc, into);
      mapping.map(element, value);
      return kb.clone(*combiner, mapping)->getResult(0);
    };
    /// The payload's element at flattened reduction index `e`, combined
    /// into `into`.
    auto combineElement = [&](Value e, Value into) -> Value {
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
    };
    auto firstLane = [&](Value lane) {
      return arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::eq, lane,
                                   idx(kb, 0));
    };
    /// Lane 0 of each point's warp combines `total` into the output.
    auto combineIntoOutput = [&](Value point, Value lane, Value inRange,
                                 Value total) {
      auto last = scf::IfOp::create(
          kb, loc, arith::AndIOp::create(kb, loc, inRange, firstLane(lane)),
          /*withElse=*/false);
      kb.setInsertionPointToStart(&last.getThenRegion().front());
      delinearize(point, parallel);
      outsideReductionLoops();
      IRMapping mapping;
      mapping.map(acc, load(init, /*everyLane=*/false));
      if (anyOf) {
        total = arith::CmpFOp::create(
            kb, loc, arith::CmpFPredicate::OGT, total,
            arith::ConstantOp::create(kb, loc, kb.getFloatAttr(f32, 0.0)));
        // The constant, where the payload defines it.
        Value constant = cast<arith::SelectOp>(combiner).getTrueValue();
        if (constant.getParentBlock() == &payload)
          mapping.map(constant,
                      kb.clone(*constant.getDefiningOp())->getResult(0));
      }
      mapping.map(element, total);
      store(kb.clone(*combiner, mapping)->getResult(0), init);
    };

    if (slices == 1) {
      Value total = warpTotal(
          inRange,
          [&] {
            delinearize(linear, parallel);
            return std::pair{lane, idx(kb, elements)};
          },
          combineElement);
      combineIntoOutput(linear, lane, inRange, total);
      generic->erase();
      return success();
    }

    // Split: warp u = point * slices + slice combines the slice's elements
    // into partials[u]; a second kernel, a warp per point, combines the
    // point's partials (lane l those l, l + 32, ...) into the output. The
    // partials are no function of a point: nothing fuses through them.
    int64_t perSlice = split.size;
    OpBuilder hb(launch);
    Value partials =
        memref::AllocOp::create(hb, loc, MemRefType::get({units}, f32));
    Value total = warpTotal(
        inRange,
        [&] {
          delinearize(arith::DivUIOp::create(kb, loc, linear, idx(kb, slices)),
                      parallel);
          Value slice =
              arith::RemUIOp::create(kb, loc, linear, idx(kb, slices));
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
        combineElement);
    auto stored = scf::IfOp::create(
        kb, loc, arith::AndIOp::create(kb, loc, inRange, firstLane(lane)),
        /*withElse=*/false);
    kb.setInsertionPointToStart(&stored.getThenRegion().front());
    memref::StoreOp::create(kb, loc, total, partials, ValueRange{linear});
    // The slices' reads are no function of the slice: none of them tells
    // dlc-fuse-kernels a point.
    launch.getBody().walk([](Operation *op) {
      op->removeAttr(kPointMapAttrName);
      op->removeAttr(kEveryLaneAttrName);
    });

    b.setInsertionPointAfter(launch);
    Value point, pointLane, pointInRange;
    std::tie(std::ignore, point, pointLane, pointInRange) =
        makeLaunch(points, parallelRanges);
    Value pointTotal = warpTotal(
        pointInRange, [&] { return std::pair{pointLane, idx(kb, slices)}; },
        [&](Value s, Value into) -> Value {
          Value u = arith::AddIOp::create(
              kb, loc, arith::MulIOp::create(kb, loc, point, idx(kb, slices)),
              s);
          return combineValues(
              into, memref::LoadOp::create(kb, loc, partials, ValueRange{u}));
        });
    combineIntoOutput(point, pointLane, pointInRange, pointTotal);
    generic->erase();
    return success();
  }
};

} // namespace
