//===- MLIRGen.cpp - .dlc AST to the dlc dialect --------------------------===//
//
// The whole file is emitted, in source order, into one scratch function
// whose arguments are every `input` and `label`. `@forward` and `@loss` are
// then clones of it that return their results and drop the ops and
// arguments those results do not use. Every check happens before the op it
// guards is created, so the dlc verifiers never see a malformed op.
//
// This file holds the module, the statements and the expressions; the
// calls' arguments, the ops and the training statements have files of
// their own (MLIRGenImpl.h lists them).
//
//===----------------------------------------------------------------------===//

#include "dlc/Frontend/MLIRGen.h"

#include "MLIRGenImpl.h"
#include "Suggest.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Frontend/ModelImporter.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace dlc;
using namespace ::dlc::mlirgen;
using namespace mlir;
using llvm::StringRef;
using llvm::Twine;

static const StringRef kDtypes[] = {"f32", "f16", "bf16", "f64", "i64", "i32"};

//===----------------------------------------------------------------------===//
// Formatting helpers
//===----------------------------------------------------------------------===//

namespace dlc::mlirgen {

std::string dtypeName(Type type) {
  StringRef name = mlir::dlc::elementTypeName(type);
  if (!name.empty())
    return name.str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i > 0)
      s += ", ";
    s += std::to_string(d);
  }
  return s + "]";
}

/// "f32[8, 784]", the notation of `input` statements.
std::string typeStr(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return dtypeName(tensor.getElementType()) + shapeStr(tensor.getShape());
}

std::string typeStr(Value value) { return typeStr(value.getType()); }

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

std::string lineStr(SrcLoc loc) { return "line " + std::to_string(loc.line); }

/// How a non-tensor argument reads in a message.
std::string describe(const ExprAST &expr) {
  if (auto *num = dyn_cast<NumberExprAST>(&expr))
    return num->getSpelling().str();
  if (auto *str = dyn_cast<StringExprAST>(&expr))
    return "\"" + str->getValue().str() + "\"";
  if (auto *b = dyn_cast<BoolExprAST>(&expr))
    return b->getValue() ? "true" : "false";
  if (auto *name = dyn_cast<NameExprAST>(&expr))
    return "'" + name->getName().str() + "'";
  if (isa<ListExprAST>(&expr))
    return "a list";
  return "a call to '" + cast<CallExprAST>(&expr)->getCallee().str() + "'";
}

} // namespace dlc::mlirgen

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> MLIRGenImpl::generate(const ModelAST &model) {
  if (model.statements.empty())
    return error({1, 1}, "file contains no model",
                 "start the file with a line like 'model digits'");
  modelStmt = dyn_cast<ModelStmtAST>(model.statements.front().get());
  if (!modelStmt)
    return error(model.statements.front()->loc(),
                 "expected 'model NAME' as the first statement",
                 "start the file with a line like 'model digits'");

  if (options.batch && (*options.batch < 1 || *options.batch > kMaxElements))
    return error(modelStmt->loc(),
                 "--batch must be a positive integer, got " +
                     Twine(*options.batch),
                 "pass the batch size, e.g. --batch 32");

  for (const auto &stmt : model.statements) {
    StringRef name;
    SrcLoc l;
    if (auto *decl = dyn_cast<TensorDeclStmtAST>(stmt.get())) {
      name = decl->getName();
      l = decl->getNameLoc();
    } else if (auto *bind = dyn_cast<BindStmtAST>(stmt.get())) {
      name = bind->getName();
      l = bind->loc();
    } else {
      continue;
    }
    firstBinding.try_emplace(name, l);
  }

  OwningOpRef<ModuleOp> owned(
      ModuleOp::create(loc(modelStmt->loc()), modelStmt->getName()));
  module = *owned;
  module->setAttr("dlc.model", builder.getStringAttr(modelStmt->getName()));

  builder.setInsertionPointToEnd(module.getBody());
  graph = func::FuncOp::create(builder, loc(modelStmt->loc()), "__dlc_graph",
                               builder.getFunctionType({}, {}));
  body = graph.addEntryBlock();
  builder.setInsertionPointToEnd(body);

  for (const auto &stmt : llvm::drop_begin(model.statements)) {
    currentStmt = stmt.get();
    if (failed(emitStatement(*stmt)))
      return nullptr;
  }

  if (!outputStmt)
    return error(modelStmt->loc(), "model has no 'output' statement",
                 "add a line like 'output logits' that names the values to "
                 "return");

  // Give the scratch function its real signature, then derive the entries.
  llvm::SmallVector<Type> argTypes;
  for (auto &arg : arguments)
    argTypes.push_back(arg.second);
  graph.setFunctionType(builder.getFunctionType(argTypes, {}));
  for (auto [i, arg] : llvm::enumerate(arguments))
    graph.setArgAttr(i, mlir::dlc::kNameAttrName,
                     builder.getStringAttr(arg.first));

  func::FuncOp forward = buildEntry("forward", outputs, outputStmt->loc());
  forward->setAttr(mlir::dlc::kEntryAttrName, builder.getUnitAttr());
  if (lossValue) {
    func::FuncOp loss =
        buildEntry("loss", {{"loss", lossValue}}, lossStmt->loc());
    loss->setAttr("dlc.loss", builder.getUnitAttr());
  }
  graph.erase();

  if (optimizer)
    module->setAttr("dlc.optimizer", optimizer);
  return owned;
}

func::FuncOp
MLIRGenImpl::buildEntry(StringRef name,
                        llvm::ArrayRef<std::pair<std::string, Value>> results,
                        SrcLoc returnLoc) {
  IRMapping mapping;
  auto fn = cast<func::FuncOp>(graph->clone(mapping));
  module.push_back(fn);
  fn.setSymName(name);

  Block &block = fn.front();
  llvm::SmallVector<Value> values;
  llvm::SmallVector<Type> types;
  for (auto &result : results) {
    values.push_back(mapping.lookup(result.second));
    types.push_back(result.second.getType());
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&block);
  Operation *ret = func::ReturnOp::create(builder, loc(returnLoc), values);

  // Drop what the results do not use: every op here is pure, and walking
  // backwards sees each op after all of its users.
  for (Operation *op = ret->getPrevNode(); op;) {
    Operation *prev = op->getPrevNode();
    if (op->use_empty())
      op->erase();
    op = prev;
  }
  llvm::BitVector unused(block.getNumArguments());
  for (BlockArgument arg : block.getArguments())
    if (arg.use_empty())
      unused.set(arg.getArgNumber());
  (void)fn.eraseArguments(unused);

  fn.setFunctionType(builder.getFunctionType(fn.getArgumentTypes(), types));
  for (auto [i, result] : llvm::enumerate(results))
    fn.setResultAttr(i, mlir::dlc::kNameAttrName,
                     builder.getStringAttr(result.first));
  return fn;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

LogicalResult MLIRGenImpl::emitStatement(const StmtAST &stmt) {
  switch (stmt.getKind()) {
  case StmtAST::Stmt_Model:
    return error(stmt.loc(), "duplicate 'model' statement",
                 "the model is already named '" + modelStmt->getName() +
                     "' at " + lineStr(modelStmt->loc()));
  case StmtAST::Stmt_TensorDecl:
    return emitTensorDecl(cast<TensorDeclStmtAST>(stmt));
  case StmtAST::Stmt_Bind: {
    auto &bind = cast<BindStmtAST>(stmt);
    if (failed(checkNotBound(bind.getName(), bind.loc())))
      return failure();
    Value value = emitExpr(bind.getValue());
    if (!value)
      return failure();
    symbols[bind.getName()] = {value, bind.loc()};
    return success();
  }
  case StmtAST::Stmt_Output:
    return emitOutput(cast<OutputStmtAST>(stmt));
  case StmtAST::Stmt_Loss:
    return emitLoss(cast<LossStmtAST>(stmt));
  case StmtAST::Stmt_Optim:
    if (failed(
            checkUnique(optimStmt, stmt, "optim", "a model has one optimizer")))
      return failure();
    optimizer = buildOptimizer(cast<OptimStmtAST>(stmt).getCall());
    return success(optimizer != nullptr);
  }
  return failure();
}

LogicalResult MLIRGenImpl::checkUnique(const StmtAST *&first,
                                       const StmtAST &stmt, StringRef keyword,
                                       const Twine &hint) {
  if (first)
    return error(stmt.loc(),
                 "duplicate '" + keyword + "' statement (the first is at " +
                     lineStr(first->loc()) + ")",
                 hint);
  first = &stmt;
  return success();
}

LogicalResult MLIRGenImpl::checkNotBound(StringRef name, SrcLoc l) {
  auto it = symbols.find(name);
  if (it == symbols.end())
    return success();
  return error(
      l, "name '" + name + "' is already bound at " + lineStr(it->second.loc),
      "every name is bound once; choose a new name such as '" + name + "2'");
}

LogicalResult MLIRGenImpl::emitTensorDecl(const TensorDeclStmtAST &decl) {
  if (failed(checkNotBound(decl.getName(), decl.getNameLoc())))
    return failure();

  StringRef dtype = decl.getDtype();
  Type elementType = llvm::StringSwitch<Type>(dtype)
                         .Case("f32", builder.getF32Type())
                         .Case("f16", builder.getF16Type())
                         .Case("bf16", builder.getBF16Type())
                         .Case("f64", builder.getF64Type())
                         .Case("i64", builder.getI64Type())
                         .Case("i32", builder.getI32Type())
                         .Default(Type());
  if (!elementType) {
    return error(
        decl.getDtypeLoc(), "unknown dtype '" + dtype + "'",
        didYouMeanThen(dtype, kDtypes, "the dtypes are " + joinWords(kDtypes)));
  }

  llvm::SmallVector<int64_t> shape;
  for (const auto &dim : decl.getDims()) {
    if (!dim->isInteger())
      return error(dim->loc(),
                   "dimension must be a positive integer, got " +
                       dim->getSpelling(),
                   "shapes are static, e.g. f32[64, 784]");
    if (!dim->getIntValue() || *dim->getIntValue() > kMaxElements)
      return error(dim->loc(),
                   "dimension " + dim->getSpelling() + " is too large",
                   "a tensor has at most 2^40 elements");
    if (*dim->getIntValue() < 1)
      return error(dim->loc(),
                   "dimension must be positive, got " + dim->getSpelling(),
                   "every dimension is at least 1; a scalar is written f32[]");
    shape.push_back(*dim->getIntValue());
  }
  if (options.batch && !shape.empty())
    shape[0] = *options.batch;

  RankedTensorType type = makeType(decl.getDtypeLoc(), shape, elementType);
  if (!type)
    return failure();
  Value arg = body->addArgument(type, loc(decl.getNameLoc()));
  arguments.push_back({decl.getName().str(), type});
  symbols[decl.getName()] = {arg, decl.getNameLoc()};
  return success();
}

LogicalResult MLIRGenImpl::emitOutput(const OutputStmtAST &output) {
  if (failed(checkUnique(outputStmt, output, "output",
                         "list every output in one statement, e.g. 'output "
                         "logits, probs'")))
    return failure();
  llvm::StringMap<SrcLoc> seen;
  for (const auto &entry : output.getNames()) {
    if (!seen.try_emplace(entry.name, entry.loc).second)
      return error(entry.loc,
                   "'" + entry.name + "' is listed twice in 'output'",
                   "each output is returned once");
    Value value = lookupName(entry.name, entry.loc);
    if (!value)
      return failure();
    outputs.push_back({entry.name, value});
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Value MLIRGenImpl::emitExpr(const ExprAST &expr) {
  switch (expr.getKind()) {
  case ExprAST::Expr_Name:
    return lookupName(cast<NameExprAST>(expr).getName(), expr.loc());
  case ExprAST::Expr_Call:
    return emitCall(cast<CallExprAST>(expr));
  case ExprAST::Expr_Number:
    return error(expr.loc(), "a number is not a tensor",
                 "numbers can only be operands of add, sub, mul and div, "
                 "e.g. mul(x, 0.5)");
  default:
    return error(expr.loc(), "expected a tensor, got " + describe(expr),
                 "a tensor is a name bound earlier or a call like relu(x)");
  }
}

Value MLIRGenImpl::lookupName(StringRef name, SrcLoc l) {
  auto it = symbols.find(name);
  if (it != symbols.end())
    return it->second.value;

  auto later = firstBinding.find(name);
  if (later != firstBinding.end()) {
    if (currentStmt && later->second.line == currentStmt->loc().line)
      return error(l, "'" + name + "' is used in its own definition",
                   "bind '" + name + "' from values bound earlier");
    return error(l,
                 "'" + name + "' is used before it is bound at " +
                     lineStr(later->second),
                 "move this statement below " + lineStr(later->second));
  }
  auto layer = layers.find(name);
  if (layer != layers.end())
    return error(l, "'" + name + "' is a layer name, not a value",
                 "bind the layer's result to a name, e.g. 'h = linear(x, "
                 "256, name=" +
                     name + ")', and use that name");
  if (lookupOp(name))
    return error(l, "'" + name + "' is an op, not a value",
                 "call it, e.g. " + name + "(x)");

  llvm::SmallVector<StringRef> bound;
  for (auto &entry : symbols)
    bound.push_back(entry.getKey());
  llvm::sort(bound);
  return error(l, "unknown name '" + name + "'",
               didYouMean(name, bound,
                          "bind it first with '" + name.str() +
                              " = EXPR', or declare it with 'input " +
                              name.str() + ": f32[...]'"));
}

Value MLIRGenImpl::emitCall(const CallExprAST &ast) {
  const OpSpec *spec = lookupOp(ast.getCallee());
  if (!spec) {
    StringRef callee = ast.getCallee();
    llvm::SmallVector<StringRef> names = opNames();
    std::string hint;
    if (mlir::dlc::symbolizeOptimizerKind(callee))
      hint = "optimizers belong in an 'optim' statement, e.g. 'optim " +
             callee.str() + "(lr=0.01)'";
    else
      hint = didYouMean(callee, names, "the ops are " + joinWords(names));
    return error(ast.loc(), "unknown op '" + callee + "'", hint);
  }

  Call c{ast, *spec, {}};
  if (failed(bindArgs(c)))
    return {};
  switch (spec->kind) {
  case OpKind::Unary:
    return emitUnary(c);
  case OpKind::Gelu:
    return emitGelu(c);
  case OpKind::Binary:
    return emitBinary(c);
  case OpKind::Linear:
    return emitLinear(c);
  case OpKind::Matmul:
    return emitMatmul(c);
  case OpKind::Softmax:
    return emitSoftmax(c);
  case OpKind::LayerNorm:
    return emitLayerNorm(c);
  case OpKind::Conv2d:
    return emitConv2d(c);
  case OpKind::Pool2d:
    return emitPool2d(c);
  case OpKind::BatchNorm2d:
    return emitBatchNorm2d(c);
  case OpKind::Recurrent:
    return emitRecurrent(c);
  case OpKind::Reshape:
    return emitReshape(c);
  case OpKind::Flatten:
    return emitFlatten(c);
  case OpKind::Transpose:
    return emitTranspose(c);
  case OpKind::Permute:
    return emitPermute(c);
  case OpKind::Reduce:
    return emitReduce(c);
  case OpKind::MseLoss:
    return emitMseLoss(c);
  case OpKind::CrossEntropy:
    return emitCrossEntropy(c);
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

namespace dlc {
OwningOpRef<ModuleOp> mlirGen(MLIRContext &ctx, const ModelAST &model,
                              StringRef fileName, const ImportOptions &options,
                              DiagnosticReporter &diag) {
  return MLIRGenImpl(ctx, fileName, options, diag).generate(model);
}
} // namespace dlc
