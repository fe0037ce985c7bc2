//===- MapGemms.cpp - dlc-map-gemms ---------------------------------------===//
//
// Turns the GEMMs of a bufferized CUDA entry into calls of the runtime's
// cuBLASLt GEMM (dlc_cuda_gemm), taking in what feeds them (transposes, zero
// fills) and the loops after them that cuBLASLt's epilogues compute
// (GemmEpilogues.h); a GEMM that cuBLASLt cannot take becomes a kernel
// (KernelBuilder.h), one small enough to fuse with its neighbours is left to
// dlc-map-to-gpu, which runs next. See Passes.td and docs/gpu.md.
//
//===----------------------------------------------------------------------===//

#include "GemmEpilogues.h"
#include "GpuMapping.h"
#include "KernelBuilder.h"

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/dlc_cuda_abi.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

#include <functional>
#include <tuple>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCMAPGEMMSPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::gpu_mapping;

/// A GEMM runs as a kernel (see isSmallGemm) only with at most this many
/// elements per dot product: each thread walks its k sequentially.
static constexpr int64_t kSmallGemmMaxK = 64;

/// Makes each copy of a buffer that a fill wrote last a fill of the
/// copy's target. CSE merges the zero-filled accumulators of GEMMs of one
/// shape, and bufferization gives all but the last GEMM a copy of the
/// zeros: as a fill, a GEMM takes it in as beta = 0 (and then its
/// epilogue) instead of a device copy and a read of the zeros.
static void fillCopiesOfFills(Block &body) {
  for (auto copy : llvm::make_early_inc_range(body.getOps<memref::CopyOp>())) {
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

namespace {

struct DlcMapGemmsPass : dlc::impl::DlcMapGemmsPassBase<DlcMapGemmsPass> {
  using DlcMapGemmsPassBase::DlcMapGemmsPassBase;

  /// Whether GEMMs may take an activation (ReLU, GELU) into their
  /// epilogue (see matchEpilogue).
  bool activationEpilogues = true;
  /// The GEMMs whose epilogue applies a ReLU's gradient (matchReluMask).
  ReluGrads reluGrads;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (func->hasAttr(kEntryAttrName) && !func.isExternal() &&
          failed(mapEntry(module, func)))
        return signalPassFailure();
  }

  LogicalResult mapEntry(ModuleOp module, func::FuncOp func) {
    FailureOr<Value> cudaCtx = addCudaContext(func);
    if (failed(cudaCtx))
      return failure();
    Block &body = func.front();
    // fp16 loss scaling must see every NaN and infinity: no activation
    // epilogues then.
    activationEpilogues = true;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName))
        if (name.getValue() == kLossScaleStateName)
          activationEpilogues = false;

    // Before the kernels, so that the GEMMs can take in the transposes and
    // the zero fills that feed them before those become kernels.
    fillCopiesOfFills(body);
    reluGrads.clear();
    SmallVector<linalg::LinalgOp> gemms;
    // The entry's GEMMs, and those of its host loops (a recurrent layer's
    // steps): a call in the loop's body runs once per iteration.
    std::function<void(Block &)> collect = [&](Block &block) {
      for (Operation &op : block) {
        if (auto loop = dyn_cast<scf::ForOp>(op))
          collect(*loop.getBody());
        else if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
                 !isSmallGemm(cast<linalg::LinalgOp>(op)))
          gemms.push_back(cast<linalg::LinalgOp>(op));
      }
    };
    collect(body);
    for (linalg::LinalgOp gemm : gemms)
      if (failed(mapGemm(module, func, gemm, *cudaCtx)))
        return failure();
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
    auto sa = stridedOf(a, true), sb = stridedOf(b, true),
         sc = stridedOf(c, true);
    auto dtA = dtypeCode(cast<MemRefType>(a.getType()).getElementType()),
         dtB = dtypeCode(cast<MemRefType>(b.getType()).getElementType()),
         dtC = dtypeCode(cast<MemRefType>(c.getType()).getElementType());
    return sa && sb && sc && dtA && dtB && dtC && *dtA == *dtB &&
           sa->strides.back() == 1 && sb->strides.back() == 1 &&
           sc->strides.back() == 1;
  }

  /// C = A * B (+ C) through cuBLASLt; row-major operands with a unit inner
  /// stride, any leading dimension. An operand produced by a transpose is
  /// read through it (cuBLASLt's transpose flag), and an accumulator
  /// filled with zeros just before gives beta = 0 instead of the fill.
  LogicalResult mapGemm(ModuleOp module, func::FuncOp func, linalg::LinalgOp op,
                        Value cudaCtx) {
    if (!op.hasPureBufferSemantics())
      return op.emitOpError("must be bufferized before dlc-map-gemms");
    if (!isCublasGemm(op))
      return mapToKernel(op, ScratchBuffers(), getArgument());
    bool batched = isa<linalg::BatchMatmulOp>(op);
    Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1],
          c = op.getDpsInits()[0], gemmOut = c;
    auto sa = stridedOf(a, true), sb = stridedOf(bm, true),
         sc = stridedOf(c, true);
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
      reluMask = matchReluMask(
          op, *epi, a, bm,
          [&](linalg::LinalgOp gemm) { return isCublasGemm(gemm); }, reluGrads);
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
        addressOfView(b, loc, a, *sa),
        i64(b, loc, sa->strides[r - 2]),
        i64(b, loc, batchStride(*sa)),
        i32(b, loc, transA),
        addressOfView(b, loc, bm, *sb),
        i64(b, loc, sb->strides[r - 2]),
        i64(b, loc, batchStride(*sb)),
        i32(b, loc, transB),
        arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(beta)),
        addressOfView(b, loc, c, *sc),
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
    func::FuncOp gemm =
        declareRuntimeFunction(module, func, "dlc_cuda_gemm", types);
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
};

} // namespace
