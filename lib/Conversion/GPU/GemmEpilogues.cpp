//===- GemmEpilogues.cpp - what a cuBLASLt GEMM takes in ------------------===//
//
// The matchers of dlc-map-gemms (GemmEpilogues.h): a bias (+ ReLU or tanh
// GELU) loop after a GEMM becomes its BIAS, RELU_BIAS or GELU_BIAS epilogue;
// a ReLU whose pre-activation only its gradient reads, RELU_AUX_BIAS and a
// later GEMM's DRELU; a sum of an operand over k, BGRAD_A or BGRAD_B; readers
// that only round a bf16 GEMM's fp32 result, a result stored rounded. The
// payloads are recognised as DlcToLinalg writes them.
//
//===----------------------------------------------------------------------===//

#include "GemmEpilogues.h"
#include "GpuMapping.h"

#include "dlc/Conversion/BufferViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::gpu_mapping;

/// Whether y = (x < 0 ? 0 : x), PyTorch's ReLU as DlcToLinalg writes it.
static bool isRelu(Value y, Value x) {
  auto sel = y.getDefiningOp<arith::SelectOp>();
  auto cmp =
      sel ? sel.getCondition().getDefiningOp<arith::CmpFOp>() : arith::CmpFOp();
  return cmp && cmp.getPredicate() == arith::CmpFPredicate::OLT &&
         cmp.getLhs() == x && matchPattern(cmp.getRhs(), m_AnyZeroFloat()) &&
         matchPattern(sel.getTrueValue(), m_AnyZeroFloat()) &&
         sel.getFalseValue() == x;
}

/// Whether y = (x > 0 ? g : 0), the gradient g of a ReLU of x.
static bool isReluGrad(Value y, Value x, Value g) {
  auto sel = y.getDefiningOp<arith::SelectOp>();
  auto cmp =
      sel ? sel.getCondition().getDefiningOp<arith::CmpFOp>() : arith::CmpFOp();
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

std::optional<BiasGrad> gpu_mapping::matchBiasGrad(Operation *gemm, Value a,
                                                   bool transA, Value b,
                                                   bool transB, Value c) {
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
    if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) || !sg ||
        sg->strides.back() != 1 || root == viewedBuffer(a) ||
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

std::optional<Epilogue> gpu_mapping::matchEpilogue(Operation *gemm, Value c,
                                                   Operation *fill, Value a,
                                                   Value b, bool activation) {
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
  Operation *user = *llvm::min_element(readers, [](Operation *x, Operation *y) {
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

std::optional<ReluMask> gpu_mapping::matchReluMask(
    Operation *gemm, const Epilogue &epi, Value a, Value b,
    function_ref<bool(linalg::LinalgOp)> isCublasGemm, ReluGrads &reluGrads) {
  Value pre = epi.out;
  auto alloc = pre.getDefiningOp<memref::AllocOp>();
  auto type = cast<MemRefType>(pre.getType());
  if (!alloc || alloc->getBlock() != gemm->getBlock() || type.getRank() != 2 ||
      !type.getLayout().isIdentity())
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

std::optional<SmallVector<linalg::GenericOp>>
gpu_mapping::roundingReaders(Value c, Operation *gemm, Operation *fill,
                             Type narrow) {
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

void gpu_mapping::readNarrowed(ArrayRef<linalg::GenericOp> readers, Value c,
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
