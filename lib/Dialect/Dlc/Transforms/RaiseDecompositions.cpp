//===- RaiseDecompositions.cpp - dlc-raise-decompositions -----------------===//
//
// Folds the op-by-op subgraphs that ONNX exporters emit for GELU (erf and
// tanh forms) and layer norm back into dlc.gelu and dlc.layer_norm. See
// Passes.td for the contract and the accepted forms.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <functional>
#include <optional>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCRAISEDECOMPOSITIONSPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// Constants pass through f32 (and a printed decimal): they match the
/// exact value within this relative tolerance.
constexpr double kRelTol = 1e-6;

/// The value of a one-element `dlc.fill`, or of a one-element parameter of
/// role `constant` with its value embedded (an exporter's initializer),
/// or nothing.
std::optional<double> scalarConstant(Value v) {
  if (cast<RankedTensorType>(v.getType()).getNumElements() != 1)
    return std::nullopt;
  if (auto fill = v.getDefiningOp<FillOp>())
    return fill.getValue().convertToDouble();
  auto param = v.getDefiningOp<ParamOp>();
  if (!param)
    return std::nullopt;
  auto decl = SymbolTable::lookupNearestSymbolFrom<ParameterOp>(
      param, param.getNameAttr());
  if (!decl || decl.getRole() != ParameterRole::constant || !decl.getValue())
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(*decl.getValue());
  if (!dense)
    return std::nullopt;
  return (*dense.value_begin<APFloat>()).convertToDouble();
}

bool isConstant(Value v, double expected) {
  std::optional<double> c = scalarConstant(v);
  return c && std::abs(*c - expected) <= kRelTol * std::abs(expected);
}

/// The op of type `OpTy` that defines `v` if `v` has no other user than
/// the op being matched, else null.
template <typename OpTy> OpTy singleUse(Value v) {
  if (!v || !v.hasOneUse())
    return nullptr;
  return v.getDefiningOp<OpTy>();
}

/// For a commutative binary op with the constant `c` as one operand, the
/// other operand; else null.
template <typename OpTy> Value operandBesideConstant(OpTy op, double c) {
  if (isConstant(op.getRhs(), c))
    return op.getLhs();
  if (isConstant(op.getLhs(), c))
    return op.getRhs();
  return nullptr;
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

/// `erf(x / sqrt(2))` or `erf(x * (1 / sqrt(2)))`: returns x.
Value matchErfOfScaledInput(Value t) {
  auto erf = singleUse<ErfOp>(t);
  if (!erf)
    return nullptr;
  Value s = erf.getInput();
  if (auto div = singleUse<DivOp>(s))
    return isConstant(div.getRhs(), M_SQRT2) ? div.getLhs() : nullptr;
  if (auto mul = singleUse<MulOp>(s))
    return operandBesideConstant(mul, M_SQRT1_2);
  return nullptr;
}

/// `x * (x * x)` or `(x * x) * x` for the given x.
bool isCube(Value v, Value x) {
  auto outer = singleUse<MulOp>(v);
  if (!outer)
    return false;
  Value sq = outer.getLhs() == x   ? outer.getRhs()
             : outer.getRhs() == x ? outer.getLhs()
                                   : nullptr;
  auto inner = singleUse<MulOp>(sq);
  return inner && inner.getLhs() == x && inner.getRhs() == x;
}

/// `tanh(sqrt(2/pi) * (x + 0.044715 * x^3))`: returns x.
Value matchTanhOfCubicInput(Value t) {
  auto th = singleUse<TanhOp>(t);
  if (!th)
    return nullptr;
  auto scaled = singleUse<MulOp>(th.getInput());
  if (!scaled)
    return nullptr;
  auto poly =
      singleUse<AddOp>(operandBesideConstant(scaled, std::sqrt(2.0 / M_PI)));
  if (!poly)
    return nullptr;
  for (auto [x, term] : {std::pair(poly.getLhs(), poly.getRhs()),
                         std::pair(poly.getRhs(), poly.getLhs())}) {
    auto cubic = singleUse<MulOp>(term);
    if (cubic && isCube(operandBesideConstant(cubic, 0.044715), x))
      return x;
  }
  return nullptr;
}

/// The factors of the product rooted at `op`: its operands, with a dlc.mul
/// operand used only there replaced by its own two operands (so the three
/// factors of `(a * b) * c` or `a * (b * c)`).
SmallVector<Value, 4> factorsOf(MulOp op) {
  SmallVector<Value, 4> factors;
  for (Value v : {op.getLhs(), op.getRhs()}) {
    if (auto inner = singleUse<MulOp>(v))
      factors.append({inner.getLhs(), inner.getRhs()});
    else
      factors.push_back(v);
  }
  return factors;
}

/// `0.5 * x * (1 + erf(x / sqrt(2)))` -> `dlc.gelu x`, and the tanh form
/// -> `dlc.gelu x {approximate = #dlc.approximate<tanh>}`: any association and
/// order of the three factors, either order of the `1 +`.
struct RaiseGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value, 4> factors = factorsOf(root);
    if (factors.size() != 3)
      return rewriter.notifyMatchFailure(root, "not a product of 3 factors");
    for (unsigned i = 0; i < 3; ++i) {
      auto onePlus = singleUse<AddOp>(factors[i]);
      if (!onePlus)
        continue;
      Value t = operandBesideConstant(onePlus, 1.0);
      if (!t)
        continue;
      GeluApproximation approximate = GeluApproximation::none;
      Value x = matchErfOfScaledInput(t);
      if (!x) {
        approximate = GeluApproximation::tanh;
        x = matchTanhOfCubicInput(t);
      }
      if (!x)
        continue;
      Value a = factors[(i + 1) % 3], b = factors[(i + 2) % 3];
      if (!((a == x && isConstant(b, 0.5)) || (b == x && isConstant(a, 0.5))))
        continue;
      // The constants must broadcast into x without growing it.
      if (root.getType() != x.getType())
        return rewriter.notifyMatchFailure(root, "constants broadcast x");
      rewriter.replaceOpWithNewOp<GeluOp>(root, x.getType(), x, approximate);
      return success();
    }
    return rewriter.notifyMatchFailure(root, "not a GELU");
  }
};

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

/// `dlc.mean` over the last dimension of its input, keeping it.
MeanOp lastDimMean(Value v) {
  auto mean = singleUse<MeanOp>(v);
  if (!mean || !mean.getKeepdim())
    return nullptr;
  int64_t rank = cast<RankedTensorType>(mean.getInput().getType()).getRank();
  ArrayRef<int64_t> dims = mean.getDims();
  if (dims.size() != 1 || dims[0] != rank - 1)
    return nullptr;
  return mean;
}

/// The operand of a binary op beside `v` if it is a `[D]` vector of `v`'s
/// element type (a layer norm's weight or bias), else null.
template <typename OpTy> Value affineOperand(OpTy op, Value v) {
  Value other = op.getLhs() == v ? op.getRhs() : op.getLhs();
  auto vt = cast<RankedTensorType>(v.getType());
  auto ot = cast<RankedTensorType>(other.getType());
  if (other == v || ot.getRank() != 1 ||
      ot.getDimSize(0) != vt.getShape().back() ||
      ot.getElementType() != vt.getElementType() || op.getType() != vt)
    return nullptr;
  return other;
}

/// `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)` over the last
/// dimension, then optionally `* weight` and `+ bias` -> `dlc.layer_norm`.
/// Rooted at the division: the affine ops after it are taken along.
struct RaiseLayerNorm : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp norm,
                                PatternRewriter &rewriter) const override {
    auto sqrt = singleUse<SqrtOp>(norm.getRhs());
    if (!sqrt)
      return rewriter.notifyMatchFailure(norm, "divisor is not a sqrt");
    auto shifted = singleUse<AddOp>(sqrt.getInput());
    if (!shifted)
      return rewriter.notifyMatchFailure(norm, "no variance + eps");
    Value var;
    std::optional<double> eps;
    for (auto [v, c] : {std::pair(shifted.getLhs(), shifted.getRhs()),
                        std::pair(shifted.getRhs(), shifted.getLhs())})
      if ((eps = scalarConstant(c))) {
        var = v;
        break;
      }
    if (!eps || *eps <= 0)
      return rewriter.notifyMatchFailure(norm, "no positive epsilon");
    MeanOp varMean = lastDimMean(var);
    if (!varMean)
      return rewriter.notifyMatchFailure(norm, "no variance over the last dim");
    auto square = singleUse<MulOp>(varMean.getInput());
    Value centered = norm.getLhs();
    if (!square || square.getLhs() != centered || square.getRhs() != centered)
      return rewriter.notifyMatchFailure(norm, "variance of another value");
    auto sub = centered.getDefiningOp<SubOp>();
    if (!sub || llvm::any_of(centered.getUsers(), [&](Operation *user) {
          return user != square && user != norm;
        }))
      return rewriter.notifyMatchFailure(norm,
                                         "centered value has other users");
    Value x = sub.getLhs();
    MeanOp mean = lastDimMean(sub.getRhs());
    if (!mean || mean.getInput() != x)
      return rewriter.notifyMatchFailure(norm, "not centered on its mean");
    auto xt = cast<RankedTensorType>(x.getType());
    if (norm.getType() != xt)
      return rewriter.notifyMatchFailure(norm, "epsilon broadcasts x");

    // The affine part, when present: `* weight`, then `+ bias`.
    Operation *root = norm;
    Value weight, bias;
    Value result = norm.getResult();
    if (result.hasOneUse()) {
      if (auto mul = dyn_cast<MulOp>(*result.getUsers().begin()))
        if ((weight = affineOperand(mul, result))) {
          root = mul;
          result = mul.getResult();
        }
    }
    if (result.hasOneUse()) {
      if (auto add = dyn_cast<AddOp>(*result.getUsers().begin()))
        if ((bias = affineOperand(add, result)))
          root = add;
    }

    rewriter.setInsertionPoint(root);
    auto vecTy =
        RankedTensorType::get({xt.getShape().back()}, xt.getElementType());
    Location loc = root->getLoc();
    if (!weight)
      weight =
          FillOp::create(rewriter, loc, vecTy, rewriter.getF64FloatAttr(1.0));
    if (!bias)
      bias =
          FillOp::create(rewriter, loc, vecTy, rewriter.getF64FloatAttr(0.0));
    rewriter.replaceOpWithNewOp<LayerNormOp>(root, xt, x, weight, bias,
                                             rewriter.getF64FloatAttr(*eps));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Whether `r` only regroups the leading (batch) dimensions: the last two
/// dimensions, the ones a batched matmul contracts and keeps, are equal.
bool isBatchReshape(ReshapeOp r) {
  auto in = cast<RankedTensorType>(r.getInput().getType());
  auto out = cast<RankedTensorType>(r.getType());
  return in.getRank() >= 2 && out.getRank() >= 2 &&
         in.getShape().take_back(2) == out.getShape().take_back(2);
}

/// Walks up from a matmul operand through what exporters put between the
/// attention's inputs and its matmuls: batch reshapes (rank 4 to 3 and
/// back), multiplications and divisions by a one-element constant (the
/// scale, folded into `scale`) and, when `transpose` is given, at most one
/// transpose (`*transpose` gets its permutation; only scalings are
/// walked through above it, so that the permutation applies to the value
/// returned). Every value passed has no other user.
Value peelOperand(Value v, double &scale,
                  std::optional<SmallVector<int64_t>> *transpose = nullptr) {
  while (v.hasOneUse()) {
    Operation *def = v.getDefiningOp();
    bool transposed = transpose && *transpose;
    if (auto r = dyn_cast_or_null<ReshapeOp>(def)) {
      if (transposed || !isBatchReshape(r))
        break;
      v = r.getInput();
      continue;
    }
    if (auto mul = dyn_cast_or_null<MulOp>(def)) {
      auto take = [&](Value x, Value c) {
        std::optional<double> k = scalarConstant(c);
        if (!k || x.getType() != mul.getType())
          return false;
        scale *= *k;
        v = x;
        return true;
      };
      if (take(mul.getLhs(), mul.getRhs()) || take(mul.getRhs(), mul.getLhs()))
        continue;
      break;
    }
    if (auto div = dyn_cast_or_null<DivOp>(def)) {
      std::optional<double> k = scalarConstant(div.getRhs());
      if (!k || *k == 0 || div.getLhs().getType() != div.getType())
        break;
      scale /= *k;
      v = div.getLhs();
      continue;
    }
    if (auto t = dyn_cast_or_null<TransposeOp>(def)) {
      if (!transpose || transposed)
        break;
      *transpose = SmallVector<int64_t>(t.getPermutation());
      v = t.getInput();
      continue;
    }
    break;
  }
  return v;
}

/// A masked_fill value: -inf or a float at most -1e30 (PyTorch writes
/// `finfo.min`).
bool isMaskFill(Value v) {
  std::optional<double> c = scalarConstant(v);
  return c && *c <= -1e30;
}

/// `softmax(scale * (q @ k^T) + mask, -1) @ v` as exporters write it ->
/// `dlc.attention`. Rooted at the second matmul. The scores may be scaled
/// before or after the first matmul (on q and k^T separately, as the
/// dynamo exporter's scaled_dot_product_attention), the matmuls may work
/// on the batch and heads flattened into one dimension (reshapes around
/// them), the mask is an `add` or a `where(cond, fill, scores)` with a
/// -inf (or finfo.min) fill. The op is built at the rank of the softmax.
struct RaiseAttention : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The scores below the mask: `scale * (q @ x)` through reshapes.
  static MatmulOp scoresMatmul(Value v, double &scale) {
    Value m = peelOperand(v, scale);
    auto mm = m.getDefiningOp<MatmulOp>();
    return mm && m.hasOneUse() ? mm : nullptr;
  }

  LogicalResult matchAndRewrite(MatmulOp pv,
                                PatternRewriter &rewriter) const override {
    double unused = 1;
    auto softmax = peelOperand(pv.getLhs(), unused).getDefiningOp<SoftmaxOp>();
    if (!softmax || unused != 1 || !softmax.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(pv, "lhs is not a softmax");
    auto scoresTy = cast<RankedTensorType>(softmax.getType());
    int64_t rank = scoresTy.getRank();
    if (static_cast<int64_t>(softmax.getDim()) != rank - 1)
      return rewriter.notifyMatchFailure(pv, "softmax not over the last dim");

    // The mask, when there is one, and the scores' matmul.
    Location loc = pv.getLoc();
    double scale = 1;
    Value s = softmax.getInput();
    MatmulOp qk;
    std::function<Value(OpBuilder &)> buildMask;
    if ((qk = scoresMatmul(s, scale))) {
    } else if (auto add = s.getDefiningOp<AddOp>(); add && s.hasOneUse()) {
      for (auto [x, m] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())}) {
        double sc = 1;
        if (x.getType() != scoresTy || !(qk = scoresMatmul(x, sc)))
          continue;
        scale = sc;
        buildMask = [m = m](OpBuilder &) { return m; };
        break;
      }
    } else if (auto where = s.getDefiningOp<WhereOp>();
               where && s.hasOneUse()) {
      Value cond = where.getCondition();
      for (auto [x, fill, fillIfTrue] :
           {std::tuple(where.getRhs(), where.getLhs(), true),
            std::tuple(where.getLhs(), where.getRhs(), false)}) {
        double sc = 1;
        if (x.getType() != scoresTy || !isMaskFill(fill) ||
            !(qk = scoresMatmul(x, sc)))
          continue;
        scale = sc;
        // where(cond, fill, s) == s + where(cond, fill, 0) for finite s.
        buildMask = [=, fill = fill, fillIfTrue = fillIfTrue](OpBuilder &b) {
          auto elem = scoresTy.getElementType();
          Value zero = FillOp::create(b, loc, RankedTensorType::get({}, elem),
                                      b.getF64FloatAttr(0.0));
          auto condTy = cast<RankedTensorType>(cond.getType());
          auto fillTy = cast<RankedTensorType>(fill.getType());
          SmallVector<int64_t> shape(condTy.getShape());
          if (fillTy.getRank() > condTy.getRank())
            shape.insert(shape.begin(), fillTy.getRank() - condTy.getRank(), 1);
          auto ty = RankedTensorType::get(shape, elem);
          return fillIfTrue
                     ? WhereOp::create(b, loc, ty, cond, fill, zero).getResult()
                     : WhereOp::create(b, loc, ty, cond, zero, fill)
                           .getResult();
        };
        break;
      }
    }
    if (!qk)
      return rewriter.notifyMatchFailure(pv, "no q @ k^T under the softmax");

    // q, k^T and v.
    Value q = peelOperand(qk.getLhs(), scale);
    std::optional<SmallVector<int64_t>> perm;
    Value kt = peelOperand(qk.getRhs(), scale, &perm);
    double valueScale = 1;
    Value v = peelOperand(pv.getRhs(), valueScale);
    if (valueScale != 1)
      return rewriter.notifyMatchFailure(pv, "the values are scaled");
    if (!perm)
      return rewriter.notifyMatchFailure(pv, "k^T is not a transpose");
    if (!std::isfinite(scale) || scale == 0)
      return rewriter.notifyMatchFailure(pv, "no finite scale");
    // k = transpose(x, perm) with the last two dims swapped back.
    SmallVector<int64_t> kperm = *perm;
    std::swap(kperm[kperm.size() - 1], kperm[kperm.size() - 2]);

    // The op works at the softmax's rank: [B..., Lq, Lk] scores.
    ArrayRef<int64_t> batch = scoresTy.getShape().drop_back(2);
    int64_t lq = scoresTy.getDimSize(rank - 2),
            lk = scoresTy.getDimSize(rank - 1);
    auto qTy = cast<RankedTensorType>(q.getType());
    auto vTy = cast<RankedTensorType>(v.getType());
    auto xTy = cast<RankedTensorType>(kt.getType());
    int64_t d = qTy.getShape().back(), dv = vTy.getShape().back();
    auto shaped = [&](int64_t l, int64_t f) {
      SmallVector<int64_t> shape(batch);
      shape.append({l, f});
      return RankedTensorType::get(shape, scoresTy.getElementType());
    };
    RankedTensorType qWant = shaped(lq, d), kWant = shaped(lk, d),
                     vWant = shaped(lk, dv);
    if (qTy.getElementType() != scoresTy.getElementType() ||
        qTy.getNumElements() != qWant.getNumElements() ||
        qTy.getShape().take_back(2) != qWant.getShape().take_back(2) ||
        vTy.getNumElements() != vWant.getNumElements() ||
        vTy.getShape().take_back(2) != vWant.getShape().take_back(2) ||
        xTy.getNumElements() != kWant.getNumElements() ||
        static_cast<int64_t>(kperm.size()) != xTy.getRank())
      return rewriter.notifyMatchFailure(pv, "operands do not line up");

    SmallVector<int64_t> kShape;
    for (int64_t p : kperm)
      kShape.push_back(xTy.getDimSize(p));
    if (ArrayRef<int64_t>(kShape).take_back(2) != kWant.getShape().take_back(2))
      return rewriter.notifyMatchFailure(pv, "key does not line up");

    // Matched: nothing was changed before this point.
    rewriter.setInsertionPoint(pv);
    // Reshapes x, looking through a reshape that defines it (the operands
    // were often flattened for the matmuls and come back unflattened; a
    // reshape of a reshape is the reshape of the original).
    auto reshapeTo = [&](Value x, RankedTensorType ty) -> Value {
      if (auto r = x.getDefiningOp<ReshapeOp>())
        x = r.getInput();
      return x.getType() == ty ? x : ReshapeOp::create(rewriter, loc, ty, x);
    };
    Value k = kt;
    if (!llvm::equal(kperm, llvm::seq<int64_t>(0, kperm.size())))
      k = TransposeOp::create(
          rewriter, loc, RankedTensorType::get(kShape, xTy.getElementType()),
          kt, kperm);
    Value mask = buildMask ? buildMask(rewriter) : Value();
    auto attn = AttentionOp::create(
        rewriter, loc, shaped(lq, dv), reshapeTo(q, qWant), reshapeTo(k, kWant),
        reshapeTo(v, vWant), mask, rewriter.getF64FloatAttr(scale));
    rewriter.replaceOp(pv, reshapeTo(attn.getResult(), pv.getType()));
    return success();
  }
};

struct DlcRaiseDecompositionsPass
    : dlc::impl::DlcRaiseDecompositionsPassBase<DlcRaiseDecompositionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseGelu, RaiseLayerNorm, RaiseAttention>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
