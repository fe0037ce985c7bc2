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

/// The value of a one-element `dlc.fill`, or nothing.
std::optional<double> scalarConstant(Value v) {
  auto fill = v.getDefiningOp<FillOp>();
  if (!fill || cast<RankedTensorType>(fill.getType()).getNumElements() != 1)
    return std::nullopt;
  return fill.getValue().convertToDouble();
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
/// -> `dlc.gelu x {approximate = "tanh"}`: any association and order of
/// the three factors, either order of the `1 +`.
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
      StringRef approximate = "none";
      Value x = matchErfOfScaledInput(t);
      if (!x) {
        approximate = "tanh";
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

struct DlcRaiseDecompositionsPass
    : dlc::impl::DlcRaiseDecompositionsPassBase<DlcRaiseDecompositionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseGelu, RaiseLayerNorm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
