//===- Elementwise.cpp - Elementwise ONNX ops
//-------------------------------===//
//
// Identity, Dropout, the arithmetic with NumPy broadcasting, the unary
// functions, Gelu, Pow and the activations composed of dlc ops.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace dlc::onnx_import {

//===----------------------------------------------------------------------===//
// Op handlers
//===----------------------------------------------------------------------===//

LogicalResult OnnxImporter::importIdentity(const onnx::NodeProto &node) {
  Item *in = lookup(node, 0);
  if (!in)
    return nodeError(node, "needs one input");
  items[node.output(0)] = *in;
  return success();
}

LogicalResult OnnxImporter::importDropout(const onnx::NodeProto &node) {
  // Inference: the identity. A constant-true training_mode is rejected.
  if (hasInput(node, 2)) {
    auto mode = constInput(node, 2, "training_mode");
    if (failed(mode))
      return failure();
    if ((*mode)->numel() != 1 || (*mode)->external)
      return nodeError(node, "training_mode must be a scalar");
    bool training =
        (*mode)->isFloat ? (*mode)->floats.at(0) != 0 : (*mode)->ints[0] != 0;
    // A ratio of 0 keeps every element even in training mode (PyTorch's
    // F.dropout(p=0.0, training=...) exports so): the identity too.
    bool zeroRatio = false;
    if (hasInput(node, 1)) {
      Item *r = lookup(node, 1);
      zeroRatio = r && r->constant && !r->constant->external &&
                  r->constant->numel() == 1 &&
                  (r->constant->isFloat ? r->constant->floats[0] == 0
                                        : r->constant->ints[0] == 0);
    }
    if (training && !zeroRatio)
      return nodeError(node, "training_mode is true; dlc imports Dropout "
                             "for inference only (the identity)");
  }
  if (failed(onlyFirstOutputUsed(node)))
    return failure();
  return importIdentity(node);
}

LogicalResult OnnxImporter::importBinary(const onnx::NodeProto &node) {
  // Integer values (position ids computed from a mask): dlc.int_arith.
  Item *ia = lookup(node, 0), *ib = lookup(node, 1);
  for (Item *item : {ia, ib})
    if (item && item->value &&
        isa<IntegerType>(typeOf(item->value).getElementType()))
      return importIntArith(node, typeOf(item->value).getElementType());
  auto a = tensor(node, 0);
  if (failed(a))
    return failure();
  auto b = tensor(node, 1);
  if (failed(b))
    return failure();
  auto r = binary(node, node.op_type(), *a, *b);
  if (failed(r))
    return failure();
  define(node, 0, *r);
  return success();
}

LogicalResult OnnxImporter::importUnary(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  Location loc = nodeLoc(node);
  StringRef op = node.op_type();
  Value r;
  if (op == "Relu")
    r = ddlc::ReluOp::create(builder, loc, *x);
  else if (op == "Tanh")
    r = ddlc::TanhOp::create(builder, loc, *x);
  else if (op == "Sigmoid")
    r = ddlc::SigmoidOp::create(builder, loc, *x);
  else if (op == "Sqrt")
    r = ddlc::SqrtOp::create(builder, loc, *x);
  else if (op == "Exp")
    r = ddlc::ExpOp::create(builder, loc, *x);
  else if (op == "Log")
    r = ddlc::LogOp::create(builder, loc, *x);
  else if (op == "Erf")
    r = ddlc::ErfOp::create(builder, loc, *x);
  else
    r = ddlc::NegOp::create(builder, loc, *x);
  define(node, 0, r);
  return success();
}

FailureOr<Value> OnnxImporter::maskOperand(const onnx::NodeProto &node, int i,
                                           Type et) {
  Item *item = lookup(node, i);
  if (!item)
    return nodeError(node, "needs input " + Twine(i)), failure();
  if (item->value || item->constant->isFloat || !et || !isa<IntegerType>(et))
    return tensor(node, i);
  const Constant &c = *item->constant;
  if (c.numel() != 1)
    return tensor(node, i); // The "integer tensor used as data" error.
  // One integer: exact in the fill's double up to 2^53 (fill's verifier).
  int64_t v = c.ints[0];
  if (et.isInteger(1))
    v = v != 0;
  if (v > (int64_t(1) << 53) || v < -(int64_t(1) << 53))
    return nodeError(node, "the constant " + Twine(v) + " (input " + Twine(i) +
                               ") is beyond 2^53, which dlc cannot compare "
                               "exactly"),
           failure();
  builder.setInsertionPointToEnd(body);
  return fill(nodeLoc(node), double(v), c.shape, et);
}

Value OnnxImporter::nonZero(Location loc, Value x) {
  auto t = typeOf(x);
  Value zero = fill(loc, 0.0, {}, t.getElementType());
  return ddlc::CompareOp::create(
      builder, loc, RankedTensorType::get(t.getShape(), builder.getI1Type()),
      ddlc::ComparePredicate::ne, x, zero);
}

LogicalResult OnnxImporter::importIntArith(const onnx::NodeProto &node,
                                           Type et) {
  StringRef op = node.op_type();
  if (op != "Add" && op != "Sub" && op != "Mul")
    return nodeError(node,
                     "integer values support Add, Sub and Mul, not " + op);
  auto x = maskOperand(node, 0, et), y = maskOperand(node, 1, et);
  if (failed(x) || failed(y))
    return failure();
  if (typeOf(*x).getElementType() != et || typeOf(*y).getElementType() != et)
    return nodeError(node, "combines ")
           << typeOf(*x).getElementType() << " with "
           << typeOf(*y).getElementType();
  auto shape = broadcastShapes(typeOf(*x).getShape(), typeOf(*y).getShape());
  if (!shape)
    return nodeError(node, "operands of shapes that do not broadcast");
  auto k = op == "Add"   ? ddlc::IntArithKind::add
           : op == "Sub" ? ddlc::IntArithKind::sub
                         : ddlc::IntArithKind::mul;
  builder.setInsertionPointToEnd(body);
  define(node, 0,
         ddlc::IntArithOp::create(builder, nodeLoc(node),
                                  RankedTensorType::get(*shape, et), k, *x,
                                  *y));
  return success();
}

/// CumSum of integer values (position ids from an attention mask).
LogicalResult OnnxImporter::importCumSum(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  if (!isa<IntegerType>(t.getElementType()) || t.getElementType().isInteger(1))
    return nodeError(node, "dlc computes CumSum of integers only (position "
                           "ids), not of ")
           << t.getElementType();
  auto axisConst = constInput(node, 1, "the axis");
  if (failed(axisConst))
    return failure();
  if ((*axisConst)->numel() != 1 || (*axisConst)->isFloat)
    return nodeError(node, "the axis must be one integer");
  auto axis = normAxis(node, (*axisConst)->ints[0], t.getRank());
  if (failed(axis))
    return failure();
  define(node, 0,
         ddlc::CumSumOp::create(
             builder, nodeLoc(node), t, *x, builder.getI64IntegerAttr(*axis),
             builder.getBoolAttr(intAttr(node, "exclusive", 0)),
             builder.getBoolAttr(intAttr(node, "reverse", 0))));
  return success();
}

/// Equal, Less, Greater, LessOrEqual, GreaterOrEqual of run-time values (the
/// constant ones were folded): booleans.
LogicalResult OnnxImporter::importCompare(const onnx::NodeProto &node) {
  Item *a = lookup(node, 0), *b = lookup(node, 1);
  if (!a || !b)
    return nodeError(node, "needs two inputs");
  // The element type comes from the run-time operand.
  Type et = a->value   ? typeOf(a->value).getElementType()
            : b->value ? typeOf(b->value).getElementType()
                       : Type();
  auto x = maskOperand(node, 0, et), y = maskOperand(node, 1, et);
  if (failed(x) || failed(y))
    return failure();
  if (typeOf(*x).getElementType() != typeOf(*y).getElementType())
    return nodeError(node, "compares ")
           << typeOf(*x).getElementType() << " with "
           << typeOf(*y).getElementType();
  auto shape = broadcastShapes(typeOf(*x).getShape(), typeOf(*y).getShape());
  if (!shape)
    return nodeError(node, "operands of shapes that do not broadcast");
  StringRef op = node.op_type();
  auto p = op == "Equal"         ? ddlc::ComparePredicate::eq
           : op == "Less"        ? ddlc::ComparePredicate::lt
           : op == "LessOrEqual" ? ddlc::ComparePredicate::le
           : op == "Greater"     ? ddlc::ComparePredicate::gt
                                 : ddlc::ComparePredicate::ge;
  builder.setInsertionPointToEnd(body);
  define(node, 0,
         ddlc::CompareOp::create(
             builder, nodeLoc(node),
             RankedTensorType::get(*shape, builder.getI1Type()), p, *x, *y));
  return success();
}

/// And, Or, Xor and Not of run-time booleans.
LogicalResult OnnxImporter::importLogical(const onnx::NodeProto &node) {
  Location loc = nodeLoc(node);
  Type i1 = builder.getI1Type();
  bool isNot = node.op_type() == "Not";
  auto x = maskOperand(node, 0, i1);
  if (failed(x))
    return failure();
  FailureOr<Value> y = isNot ? FailureOr<Value>(fill(loc, 1.0, {}, i1))
                             : maskOperand(node, 1, i1);
  if (failed(y))
    return failure();
  for (Value v : {*x, *y})
    if (!typeOf(v).getElementType().isInteger(1))
      return nodeError(node, "takes booleans, not ")
             << typeOf(v).getElementType();
  auto shape = broadcastShapes(typeOf(*x).getShape(), typeOf(*y).getShape());
  if (!shape)
    return nodeError(node, "operands of shapes that do not broadcast");
  StringRef op = node.op_type();
  auto k = op == "And"  ? ddlc::LogicalKind::and_
           : op == "Or" ? ddlc::LogicalKind::or_
                        : ddlc::LogicalKind::xor_; // Xor; Not: xor true.
  builder.setInsertionPointToEnd(body);
  define(node, 0,
         ddlc::LogicalOp::create(builder, loc,
                                 RankedTensorType::get(*shape, i1), k, *x, *y));
  return success();
}

/// Gelu (opset 20): the erf form, or the tanh one with approximate="tanh".
LogicalResult OnnxImporter::importGelu(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  std::string name = stringAttr(node, "approximate", "none");
  std::optional<ddlc::GeluApproximation> approximate =
      ddlc::symbolizeGeluApproximation(name);
  if (!approximate)
    return nodeError(node, "unknown approximate '" + name +
                               "' (expected 'none' or 'tanh')");
  define(node, 0,
         ddlc::GeluOp::create(builder, nodeLoc(node), *x, *approximate));
  return success();
}

LogicalResult OnnxImporter::importPow(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  Item *e = lookup(node, 1);
  if (!e || !e->constant || e->constant->numel() != 1)
    return nodeError(node, "the exponent must be a constant scalar");
  double p = e->constant->isFloat ? e->constant->floats[0]
                                  : double(e->constant->ints[0]);
  Location loc = nodeLoc(node);
  Value r;
  if (p == 1)
    r = *x;
  else if (p == 0.5)
    r = ddlc::SqrtOp::create(builder, loc, *x);
  else if (p == 2 || p == 3) {
    r = ddlc::MulOp::create(builder, loc, x->getType(), *x, *x);
    if (p == 3)
      r = ddlc::MulOp::create(builder, loc, x->getType(), r, *x);
  } else if (p == -1 || p == -0.5 || p == -2) {
    Value d = p == -1 ? *x
              : p == -2
                  ? ddlc::MulOp::create(builder, loc, x->getType(), *x, *x)
                        .getResult()
                  : ddlc::SqrtOp::create(builder, loc, *x).getResult();
    r = ddlc::DivOp::create(builder, loc, x->getType(),
                            fill(loc, 1.0, {}, typeOf(*x).getElementType()), d);
  } else {
    InFlightDiagnostic d =
        nodeError(node, "exponent " + formatNumber(p) + " is not supported");
    d.attachNote() << "hint: dlc supports Pow with the constant exponents "
                      "-2, -1, -0.5, 0.5, 1, 2 and 3";
    return failure();
  }
  // Broadcasting against a higher-rank exponent would change the shape.
  if (e->constant->shape.size() > size_t(typeOf(*x).getRank()))
    return nodeError(node, "the exponent has a higher rank than the base");
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importComposite(const onnx::NodeProto &node) {
  // Activations without a dlc op of their own, written with relu, exp, log
  // and arithmetic. min(x, hi) = x - relu(x - hi) and max(x, lo) = x +
  // relu(lo - x) are exact where x passes through; where it saturates they
  // are within an ulp of x of the bound.
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  Location loc = nodeLoc(node);
  StringRef op = node.op_type();
  Type et = typeOf(*x).getElementType();
  auto type = x->getType();
  auto relu = [&](Value v) -> Value {
    return ddlc::ReluOp::create(builder, loc, v);
  };
  auto neg = [&](Value v) -> Value {
    return ddlc::NegOp::create(builder, loc, v);
  };
  auto add = [&](Value a, Value b) -> Value {
    return ddlc::AddOp::create(builder, loc, type, a, b);
  };
  auto sub = [&](Value a, Value b) -> Value {
    return ddlc::SubOp::create(builder, loc, type, a, b);
  };
  auto scale = [&](Value v, double f) -> Value {
    return f == 1.0 ? v
                    : ddlc::ScaleOp::create(builder, loc, v,
                                            builder.getF64FloatAttr(f))
                          .getResult();
  };
  auto scalar = [&](double v) { return fill(loc, v, {}, et); };
  auto minimum = [&](Value v, double hi) {
    return sub(v, relu(add(v, scalar(-hi))));
  };
  auto maximum = [&](Value v, double lo) {
    return lo == 0 ? relu(v) : add(v, relu(sub(scalar(lo), v)));
  };
  // Ops are built in source order: every call below creates at most one of
  // its arguments' ops (argument evaluation order is the compiler's choice,
  // and the IR must not depend on it).
  auto hardSigmoid = [&](Value v, double alpha, double beta) {
    Value scaled = scale(v, alpha);
    Value y = add(scaled, scalar(beta));
    return minimum(maximum(y, 0.0), 1.0);
  };
  Value r;
  if (op == "LeakyRelu") {
    // relu(x) - alpha relu(-x): exact on both sides.
    Value pos = relu(*x);
    r = sub(pos, scale(relu(neg(*x)), floatAttr(node, "alpha", 0.01f)));
  } else if (op == "Abs") {
    Value pos = relu(*x);
    r = add(pos, relu(neg(*x)));
  } else if (op == "Reciprocal") {
    // 1 / x: exactly what ONNX computes (an RMSNorm's 1 / sqrt(...)).
    r = ddlc::DivOp::create(builder, loc, type, scalar(1.0), *x);
  } else if (op == "Elu") {
    // relu(x) + alpha (exp(-relu(-x)) - 1)
    Value e = ddlc::ExpOp::create(builder, loc, neg(relu(neg(*x))));
    Value pos = relu(*x);
    r = add(pos, scale(add(e, scalar(-1.0)), floatAttr(node, "alpha", 1.0f)));
  } else if (op == "Softplus") {
    // relu(x) + log(1 + exp(-|x|)): no overflow for large |x|.
    Value pos = relu(*x);
    Value abs = add(pos, relu(neg(*x)));
    Value e = ddlc::ExpOp::create(builder, loc, neg(abs));
    Value pos2 = relu(*x);
    r = add(pos2, ddlc::LogOp::create(builder, loc, add(e, scalar(1.0))));
  } else if (op == "HardSigmoid") {
    r = hardSigmoid(*x, floatAttr(node, "alpha", 0.2f),
                    floatAttr(node, "beta", 0.5f));
  } else if (op == "HardSwish") {
    r = ddlc::MulOp::create(builder, loc, type, *x,
                            hardSigmoid(*x, 1.0 / 6.0, 0.5));
  } else { // Clip: min and max are optional constant inputs (opset 11+).
    auto bound = [&](int i,
                     const char *what) -> FailureOr<std::optional<double>> {
      if (!hasInput(node, i))
        return std::optional<double>();
      auto c = constInput(node, i, what);
      if (failed(c))
        return failure();
      if ((*c)->numel() != 1 || !(*c)->isFloat) {
        nodeError(node, Twine(what) + " must be a float scalar");
        return failure();
      }
      return std::optional<double>((*c)->floats[0]);
    };
    auto lo = bound(1, "min");
    if (failed(lo))
      return failure();
    auto hi = bound(2, "max");
    if (failed(hi))
      return failure();
    r = *x;
    if (*lo)
      r = maximum(r, **lo);
    if (*hi)
      r = minimum(r, **hi);
    if (*lo && *hi && **lo > **hi) // ONNX: every element becomes max
      r = fill(loc, **hi, typeOf(*x).getShape(), et);
  }
  define(node, 0, r);
  return success();
}

} // namespace dlc::onnx_import
