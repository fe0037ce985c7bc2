//===- Importer.cpp - The model, graph, operands and op table
//---------------===//
//
// Reads the ModelProto, its initializers and inputs, dispatches every node
// through the op table, and builds the forward function; the operand and
// attribute accessors every handler uses.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace dlc::onnx_import {

//===----------------------------------------------------------------------===//
// The op table
//===----------------------------------------------------------------------===//

/// The op table: each supported op type with the first opset that has it
/// (13, the lowest dlc imports, unless the op is newer) and its handler, in
/// the manner of torch-mlir's `onOp("Gelu", 20, ...)`. A model importing an
/// older opset than an op's is refused at that op.
const llvm::StringMap<OnnxImporter::OpHandler> &OnnxImporter::handlers() {
  static const llvm::StringMap<OpHandler> table = [] {
    llvm::StringMap<OpHandler> t;
    auto onOp = [&](StringRef op, int64_t since, Handler h) {
      t[op] = OpHandler{h, since};
    };
    onOp("Identity", 13, &OnnxImporter::importIdentity);
    onOp("Dropout", 13, &OnnxImporter::importDropout);
    for (const char *op : {"Add", "Sub", "Mul", "Div"})
      onOp(op, 13, &OnnxImporter::importBinary);
    for (const char *op :
         {"Relu", "Tanh", "Sigmoid", "Sqrt", "Exp", "Log", "Neg", "Erf"})
      onOp(op, 13, &OnnxImporter::importUnary);
    onOp("Pow", 13, &OnnxImporter::importPow);
    for (const char *op :
         {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
      onOp(op, 13, &OnnxImporter::importCompare);
    for (const char *op : {"And", "Or", "Xor", "Not"})
      onOp(op, 13, &OnnxImporter::importLogical);
    onOp("Gelu", 20, &OnnxImporter::importGelu);
    for (const char *op : {"LeakyRelu", "Abs", "Elu", "Softplus", "HardSigmoid",
                           "Clip", "Reciprocal"})
      onOp(op, 13, &OnnxImporter::importComposite);
    onOp("HardSwish", 14, &OnnxImporter::importComposite);
    onOp("Gemm", 13, &OnnxImporter::importGemm);
    onOp("MatMul", 13, &OnnxImporter::importMatMul);
    onOp("Softmax", 13, &OnnxImporter::importSoftmax);
    onOp("LogSoftmax", 13, &OnnxImporter::importSoftmax);
    onOp("Flatten", 13, &OnnxImporter::importFlatten);
    onOp("Reshape", 13, &OnnxImporter::importReshape);
    onOp("Squeeze", 13, &OnnxImporter::importSqueezeLike);
    onOp("Unsqueeze", 13, &OnnxImporter::importSqueezeLike);
    onOp("Transpose", 13, &OnnxImporter::importTranspose);
    onOp("Constant", 13, &OnnxImporter::importConstant);
    onOp("Shape", 13, &OnnxImporter::importShapeOps);
    onOp("Cast", 13, &OnnxImporter::importCast);
    onOp("Gather", 13, &OnnxImporter::importGather);
    onOp("GatherND", 13, &OnnxImporter::importGatherND);
    onOp("GatherElements", 13, &OnnxImporter::importGatherElements);
    onOp("CumSum", 13, &OnnxImporter::importCumSum);
    onOp("Expand", 13, &OnnxImporter::importExpand);
    onOp("Where", 13, &OnnxImporter::importWhere);
    onOp("Tile", 13, &OnnxImporter::importTile);
    onOp("Concat", 13, &OnnxImporter::importConcat);
    onOp("Slice", 13, &OnnxImporter::importSlice);
    onOp("Split", 13, &OnnxImporter::importSplit);
    onOp("ReduceMean", 13, &OnnxImporter::importReduce);
    onOp("ReduceSum", 13, &OnnxImporter::importReduce);
    onOp("ReduceMax", 13, &OnnxImporter::importReduce);
    onOp("ReduceMin", 13, &OnnxImporter::importReduce);
    onOp("LayerNormalization", 17, &OnnxImporter::importLayerNorm);
    onOp("Pad", 13, &OnnxImporter::importPad);
    onOp("Conv", 13, &OnnxImporter::importConv);
    onOp("MaxPool", 13, &OnnxImporter::importPool);
    onOp("AveragePool", 13, &OnnxImporter::importPool);
    onOp("GlobalAveragePool", 13, &OnnxImporter::importGlobalAveragePool);
    onOp("BatchNormalization", 13, &OnnxImporter::importBatchNorm);
    onOp("InstanceNormalization", 13, &OnnxImporter::importGroupNorm);
    onOp("GroupNormalization", 18, &OnnxImporter::importGroupNorm);
    onOp("ConvTranspose", 13, &OnnxImporter::importConvTranspose);
    onOp("Resize", 13, &OnnxImporter::importResize);
    onOp("LSTM", 13, &OnnxImporter::importRecurrent);
    onOp("GRU", 13, &OnnxImporter::importRecurrent);
    onOp("RNN", 13, &OnnxImporter::importRecurrent);
    return t;
  }();
  return table;
}

//===----------------------------------------------------------------------===//
// Model and graph
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> OnnxImporter::import(StringRef bytes) {
  ctx.loadDialect<ddlc::DlcDialect, func::FuncDialect, arith::ArithDialect>();
  onnx::ModelProto model;
  if (bytes.size() > size_t(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    fileError("cannot be parsed as an ONNX ModelProto (the file is truncated, "
              "corrupt or not an ONNX model)")
            .attachNote()
        << "hint: check the file with onnx.checker.check_model, or export "
           "it again";
    return nullptr;
  }
  if (!model.has_graph() || model.graph().node_size() == 0) {
    fileError("the ONNX model has no graph (an empty or incomplete "
              "ModelProto)");
    return nullptr;
  }
  bool found = false;
  for (const auto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      opset = o.version();
      found = true;
    }
  if (!found) {
    fileError("the model imports no version of the default ONNX opset");
    return nullptr;
  }
  if (opset < ::dlc::kMinOnnxOpset || opset > ::dlc::kMaxOnnxOpset) {
    fileError("opset " + Twine(opset) +
              " is not supported: dlc imports "
              "default-domain opsets " +
              Twine(::dlc::kMinOnnxOpset) + " to " +
              Twine(::dlc::kMaxOnnxOpset))
            .attachNote()
        << "hint: export again with torch.onnx.export(..., opset_version="
        << ::dlc::kMaxOnnxOpset
        << "), or convert with "
           "onnx.version_converter.convert_version(model, "
        << ::dlc::kMaxOnnxOpset << ")";
    return nullptr;
  }
  const onnx::GraphProto &graph = model.graph();
  this->graph = &graph;

  std::string modelName = sanitizeModelName(llvm::sys::path::stem(fileName));
  OwningOpRef<ModuleOp> owned(ModuleOp::create(fileLoc, modelName));
  module = *owned;
  module->setAttr("dlc.model", builder.getStringAttr(modelName));
  builder.setInsertionPointToEnd(module.getBody());

  for (const auto &node : graph.node())
    for (const auto &in : node.input())
      ++readers[in];
  for (const auto &out : graph.output())
    ++readers[out.name()];

  if (failed(importInitializers(graph)) || failed(importInputs(graph)))
    return nullptr;
  for (const auto &node : graph.node()) {
    if (failed(importNode(node)))
      return nullptr;
    traceBatchDim(node);
  }

  // The outputs.
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  SmallVector<std::string> resultNames;
  for (const auto &out : graph.output()) {
    auto it = items.find(out.name());
    if (it == items.end()) {
      fileError("graph output '" + out.name() +
                "' is not produced by any node, input or initializer");
      return nullptr;
    }
    if (it->second.pendingPad) {
      fileError("graph output '" + out.name() + "' is the result of a Pad")
              .attachNote()
          << "hint: dlc supports Pad only when a Conv or AveragePool reads "
             "its result";
      return nullptr;
    }
    auto v = materialize(out.name(), it->second, fileLoc);
    if (failed(v))
      return nullptr;
    results.push_back(*v);
    resultTypes.push_back(v->getType());
    resultNames.push_back(sanitizeTensorName(out.name()));
  }
  if (results.empty()) {
    fileError("the graph has no outputs");
    return nullptr;
  }
  auto fn = cast<func::FuncOp>(body->getParentOp());
  builder.setInsertionPointToEnd(body);
  func::ReturnOp::create(builder, fileLoc, results);
  fn.setFunctionType(
      builder.getFunctionType(body->getArgumentTypes(), resultTypes));
  for (auto [i, name] : llvm::enumerate(resultNames))
    fn.setResultAttr(i, ddlc::kNameAttrName, builder.getStringAttr(name));

  // Drop what the outputs do not use (dead nodes, unused parameters).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (op.use_empty() && !isa<func::ReturnOp>(op))
      op.erase();
  llvm::StringSet<> used;
  fn.walk([&](ddlc::ParamOp p) { used.insert(p.getName()); });
  for (auto p : llvm::make_early_inc_range(module.getOps<ddlc::ParameterOp>()))
    if (!used.contains(p.getSymName()))
      p.erase();

  if (failed(verify(module)))
    return nullptr;
  return owned;
}

FailureOr<Type> OnnxImporter::floatElementType(int32_t t, const Twine &what,
                                               Location loc) {
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return Type(builder.getF32Type());
  case onnx::TensorProto::FLOAT16:
    return Type(builder.getF16Type());
  case onnx::TensorProto::BFLOAT16:
    return Type(builder.getBF16Type());
  default:
    emitError(loc, what + " has element type " + onnxTypeName(t) +
                       ", which dlc does not support")
            .attachNote()
        << "hint: dlc computes in float32, float16 and bfloat16 (int64 only "
           "for shapes); cast the model to float32 before exporting";
    return failure();
  }
}

FailureOr<std::shared_ptr<Constant>>
OnnxImporter::readTensor(const onnx::TensorProto &t, const Twine &what,
                         Location loc) {
  auto c = std::make_shared<Constant>();
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && numel > kMaxElements / d)) {
      emitError(loc,
                what + " has an invalid shape (dimension " + Twine(d) + ")");
      return failure();
    }
    numel *= d;
    c->shape.push_back(d);
  }
  StringRef raw = t.raw_data();
  bool hasRaw = t.has_raw_data();
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    size_t width = 0;
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
      width = 4;
      break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      width = 2;
      break;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
      width = 8;
      break;
    case onnx::TensorProto::BOOL:
      width = 1;
      break;
    default:
      break; // Refused below with the element type.
    }
    if (width) {
      auto bytes = externalData.read(t, uint64_t(numel) * width);
      if (!bytes) {
        std::string msg = toString(bytes.takeError());
        auto [text, hint] = StringRef(msg).split("\nhint: ");
        emitError(loc, what + ": " + text).attachNote() << "hint: " << hint;
        return failure();
      }
      raw = bytes->bytes;
      hasRaw = true;
      // Weights stay in the mapped file until they are emitted; small
      // tensors (shapes, scalars) are decoded for folding.
      auto et = t.data_type() == onnx::TensorProto::FLOAT ? builder.getF32Type()
                : t.data_type() == onnx::TensorProto::FLOAT16
                    ? Type(builder.getF16Type())
                : t.data_type() == onnx::TensorProto::BFLOAT16
                    ? Type(builder.getBF16Type())
                    : Type();
      if (et && numel > kMaxDecodedExternal) {
        c->isFloat = true;
        c->elementType = et;
        c->external = std::move(*bytes);
        return c;
      }
    }
  }
  auto sizeError = [&](int64_t have) {
    emitError(loc, what + " has " + Twine(have) +
                       " values but its shape "
                       "needs " +
                       Twine(numel));
    return failure();
  };
  auto rawCount = [&](size_t width) -> FailureOr<int64_t> {
    if (raw.size() % width != 0 || int64_t(raw.size() / width) != numel) {
      emitError(loc, what + " has " + Twine(raw.size()) +
                         " bytes of raw data but its shape needs " +
                         Twine(numel * int64_t(width)));
      return failure();
    }
    return numel;
  };
  // The values come from raw_data (little-endian elements of type Raw) or
  // else from the typed field; each is passed through `convert`.
  auto read = [&](auto rawElement, const auto &field, auto &out,
                  auto convert) -> LogicalResult {
    using Raw = decltype(rawElement);
    if (hasRaw) {
      if (failed(rawCount(sizeof(Raw))))
        return failure();
      out.reserve(numel);
      for (int64_t i = 0; i < numel; ++i) {
        Raw v;
        std::memcpy(&v, raw.data() + sizeof(Raw) * i, sizeof(Raw));
        out.push_back(convert(v));
      }
      return success();
    }
    if (field.size() != numel)
      return sizeError(field.size());
    for (auto v : field)
      out.push_back(convert(static_cast<Raw>(v)));
    return success();
  };
  auto same = [](auto v) { return v; };
  LogicalResult status = success();
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: {
    c->isFloat = true;
    auto et = floatElementType(t.data_type(), what, loc);
    if (failed(et))
      return failure();
    c->elementType = *et;
    if (t.data_type() == onnx::TensorProto::FLOAT)
      status = read(float(), t.float_data(), c->floats,
                    [](float v) { return double(v); });
    else if (t.data_type() == onnx::TensorProto::FLOAT16)
      status = read(uint16_t(), t.int32_data(), c->floats, halfToDouble);
    else
      status = read(uint16_t(), t.int32_data(), c->floats, bf16ToDouble);
    break;
  }
  case onnx::TensorProto::DOUBLE:
    // Kept for folding (PyTorch writes Python float scalars as float64
    // Constants followed by a Cast when it does not fold constants); used
    // as data it is an error (materialize).
    c->isFloat = true;
    c->elementType = builder.getF64Type();
    status = read(double(), t.double_data(), c->floats, same);
    break;
  case onnx::TensorProto::INT64:
    status = read(int64_t(), t.int64_data(), c->ints, same);
    break;
  case onnx::TensorProto::INT32:
    status = read(int32_t(), t.int32_data(), c->ints,
                  [](int32_t v) { return int64_t(v); });
    break;
  case onnx::TensorProto::BOOL:
    // Masks: folded with the other integers, as 0 and 1.
    status = read(uint8_t(), t.int32_data(), c->ints,
                  [](uint8_t v) { return int64_t(v != 0); });
    break;
  default:
    emitError(loc, what + " has element type " + onnxTypeName(t.data_type()) +
                       ", which dlc does not support")
            .attachNote()
        << "hint: dlc reads float32, float16 and bfloat16 tensors, and "
           "int64/int32 ones for shapes";
    return failure();
  }
  if (failed(status))
    return failure();
  return c;
}

LogicalResult OnnxImporter::importInitializers(const onnx::GraphProto &graph) {
  for (const auto &t : graph.initializer()) {
    Location loc = NameLoc::get(StringAttr::get(&ctx, t.name()), fileLoc);
    auto c = readTensor(t, "initializer '" + t.name() + "'", loc);
    if (failed(c))
      return failure();
    (*c)->initializer = t.name();
    (*c)->written = true;
    items[t.name()] = Item{Value(), *c, std::nullopt};
  }
  return success();
}

LogicalResult OnnxImporter::importInputs(const onnx::GraphProto &graph) {
  SmallVector<Type> types;
  SmallVector<std::string> names;
  for (const auto &in : graph.input()) {
    if (items.count(in.name()))
      continue; // An initializer also listed as an input (old exporters).
    Location loc = NameLoc::get(StringAttr::get(&ctx, in.name()), fileLoc);
    const auto &type = in.type();
    if (!type.has_tensor_type()) {
      emitError(loc, "graph input '" + in.name() + "' is not a tensor");
      return failure();
    }
    const auto &tt = type.tensor_type();
    // Integer inputs (token ids, class labels) keep their type.
    FailureOr<Type> et = Type(builder.getI64Type());
    if (tt.elem_type() == onnx::TensorProto::INT32)
      et = Type(builder.getI32Type());
    else if (tt.elem_type() != onnx::TensorProto::INT64)
      et = floatElementType(tt.elem_type(), "graph input '" + in.name() + "'",
                            loc);
    if (failed(et))
      return failure();
    auto given = options.inputShapes.find(in.name());
    SmallVector<int64_t> shape;
    if (!tt.has_shape()) {
      if (given == options.inputShapes.end()) {
        emitError(loc, "graph input '" + in.name() + "' has no shape")
                .attachNote()
            << "hint: give it one with --input-shape " << in.name()
            << "=D0,D1,...";
        return failure();
      }
    } else {
      for (auto [d, dim] : llvm::enumerate(tt.shape().dim())) {
        int64_t v = dim.has_dim_value() ? dim.dim_value() : -1;
        if (v <= 0 && d == 0 && options.batch)
          v = *options.batch;
        if (v <= 0 && given == options.inputShapes.end()) {
          std::string sym = dim.has_dim_param() && !dim.dim_param().empty()
                                ? " ('" + dim.dim_param() + "')"
                                : "";
          emitError(loc, "graph input '" + in.name() +
                             "' has a dynamic "
                             "dimension " +
                             Twine(d) + sym + "; dlc compiles static shapes")
                  .attachNote()
              << "hint: fix it with --input-shape " << in.name() << "=D0,D1,..."
              << (d == 0 ? " (or --batch N)" : "");
          return failure();
        }
        if (v > kMaxElements) {
          emitError(loc, "graph input '" + in.name() + "' dimension " +
                             Twine(d) + " is too large (" + Twine(v) + ")");
          return failure();
        }
        shape.push_back(v);
      }
      if (given == options.inputShapes.end() && options.batch &&
          !shape.empty()) {
        const auto &dim0 = tt.shape().dim(0);
        if (!dim0.has_dim_value() || dim0.dim_value() != *options.batch) {
          batchOverridden[in.name()] = BatchDim{};
          // The batch a static export was made with, where the inputs
          // that have one agree (a dynamic dimension says nothing).
          int64_t b0 = dim0.has_dim_value() ? dim0.dim_value() : 0;
          if (b0 > 0 && exportedBatch == 0)
            exportedBatch = b0;
          else if (b0 > 0 && b0 != exportedBatch)
            exportedBatch = -1;
        }
        shape[0] = *options.batch;
      }
    }
    if (given != options.inputShapes.end()) {
      if (tt.has_shape() &&
          int64_t(given->second.size()) != tt.shape().dim_size()) {
        emitError(loc, "--input-shape " + in.name() + " has rank " +
                           Twine(given->second.size()) +
                           " but the graph input has rank " +
                           Twine(tt.shape().dim_size()));
        return failure();
      }
      for (auto [d, v] : llvm::enumerate(given->second)) {
        if (tt.has_shape() && tt.shape().dim(d).has_dim_value() &&
            tt.shape().dim(d).dim_value() > 0 &&
            tt.shape().dim(d).dim_value() != v) {
          emitError(loc, "--input-shape " + in.name() + " sets dimension " +
                             Twine(d) + " to " + Twine(v) +
                             " but the model fixes it to " +
                             Twine(tt.shape().dim(d).dim_value()));
          return failure();
        }
      }
      shape.assign(given->second.begin(), given->second.end());
    }
    int64_t numel = 1;
    for (int64_t d : shape)
      if (d > 0 && numel <= kMaxElements / d)
        numel *= d;
      else if (d > 0)
        numel = kMaxElements + 1;
    if (numel > kMaxElements) {
      emitError(loc, "graph input '" + in.name() +
                         "' has more than 2^40 "
                         "elements")
              .attachNote()
          << "hint: its shape is [" << ArrayRef<int64_t>(shape) << "]"
          << "; set a smaller one with --input-shape " << in.name()
          << "=D0,D1,... or --batch N";
      return failure();
    }
    types.push_back(RankedTensorType::get(shape, *et));
    names.push_back(in.name());
  }
  for (const auto &[name, shape] : options.inputShapes)
    if (!llvm::is_contained(names, name)) {
      std::string list = llvm::join(names, ", ");
      fileError("--input-shape names '" + name +
                "', which is not an input of the graph")
              .attachNote()
          << "hint: the graph's inputs are: " << list;
      return failure();
    }

  auto fn = func::FuncOp::create(builder, fileLoc, "forward",
                                 builder.getFunctionType(types, {}));
  fn->setAttr(ddlc::kEntryAttrName, builder.getUnitAttr());
  body = fn.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(names)) {
    fn.setArgAttr(i, ddlc::kNameAttrName,
                  builder.getStringAttr(sanitizeTensorName(name)));
    items[name] = Item{body->getArgument(i), nullptr, std::nullopt};
  }
  builder.setInsertionPointToEnd(body);
  return success();
}

LogicalResult OnnxImporter::importNode(const onnx::NodeProto &node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    std::string list = llvm::join(::dlc::supportedOnnxOps(), ", ");
    nodeError(node, "ops of domain '" + node.domain() + "' are not supported")
            .attachNote()
        << "hint: dlc supports these default-domain ops: " << list;
    return failure();
  }
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && !items.count(node.input(i))) {
      nodeError(node, "input " + Twine(i) + " '" + node.input(i) +
                          "' is not defined by any graph input, "
                          "initializer or earlier node");
      return failure();
    }
  for (const auto &out : node.output())
    if (!out.empty() && items.count(out)) {
      nodeError(node, "output '" + out +
                          "' is defined twice (the graph is "
                          "not in SSA form)");
      return failure();
    }
  if (node.output_size() == 0) {
    nodeError(node, "has no outputs");
    return failure();
  }
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty())
      continue;
    Item &in = items[node.input(i)];
    if (in.pendingPad && node.op_type() != "Conv" &&
        node.op_type() != "AveragePool") {
      nodeError(node, "reads the result of a Pad").attachNote()
          << "hint: dlc supports Pad only when a Conv or AveragePool reads "
             "its result";
      return failure();
    }
  }

  // Integer shape arithmetic on constants is folded whatever the op.
  bool folded = false;
  if (failed(foldConstantNode(node, folded)))
    return failure();
  if (folded)
    return success();

  auto it = handlers().find(node.op_type());
  if (it == handlers().end()) {
    std::string list = llvm::join(::dlc::supportedOnnxOps(), ", ");
    InFlightDiagnostic d =
        nodeError(node, "op '" + node.op_type() + "' is not supported");
    // The other unsupported ops of the graph, so that the first one (an
    // Expand before an LSTM) does not hide the one that matters.
    SmallVector<std::string> others;
    llvm::StringSet<> seen;
    seen.insert(node.op_type());
    if (graph)
      for (const auto &n : graph->node())
        if (!handlers().count(n.op_type()) && n.op_type() != "ReduceProd" &&
            seen.insert(n.op_type()).second)
          others.push_back(n.op_type());
    if (!others.empty())
      d.attachNote() << "the graph also uses these unsupported ops: "
                     << llvm::join(others, ", ");
    d.attachNote() << "hint: dlc supports these ONNX ops (opsets "
                   << ::dlc::kMinOnnxOpset << " to " << ::dlc::kMaxOnnxOpset
                   << "): " << list;
    return failure();
  }
  if (opset < it->second.since)
    return nodeError(
        node, node.op_type() + " is an op of opset " + Twine(it->second.since) +
                  " and later; this model imports opset " + Twine(opset));
  if (failed(checkFloatInputs(node)))
    return failure();
  builder.setInsertionPointToEnd(body);
  return (this->*(it->second.handle))(node);
}

/// Ops whose dlc ops compute on float tensors only, and which of their
/// inputs are such data: input 0, or (true) every input. An integer value
/// there (a graph input of token ids, an integer Cast) is refused at the
/// node; it used to reach the verifier of the op built from it.
static const llvm::StringMap<bool> &floatDataOps() {
  static const llvm::StringMap<bool> ops = [] {
    llvm::StringMap<bool> m;
    for (const char *op :
         {"Relu",       "Tanh",      "Sigmoid",     "Sqrt",
          "Exp",        "Log",       "Neg",         "Erf",
          "Pow",        "Gelu",      "LeakyRelu",   "Abs",
          "Elu",        "Softplus",  "HardSigmoid", "Clip",
          "Reciprocal", "HardSwish", "Softmax",     "LogSoftmax",
          "ReduceMean", "ReduceSum", "ReduceMax",   "ReduceMin",
          "Pad",        "MaxPool",   "AveragePool", "GlobalAveragePool",
          "Resize"})
      m[op] = false;
    for (const char *op :
         {"Gemm", "MatMul", "Conv", "ConvTranspose", "LayerNormalization",
          "BatchNormalization", "InstanceNormalization", "GroupNormalization"})
      m[op] = true;
    return m;
  }();
  return ops;
}

LogicalResult OnnxImporter::checkFloatInputs(const onnx::NodeProto &node) {
  auto it = floatDataOps().find(node.op_type());
  if (it == floatDataOps().end())
    return success();
  for (int i = 0, e = it->second ? node.input_size() : 1; i < e; ++i) {
    Item *in = lookup(node, i);
    if (!in || !in->value)
      continue;
    Type et = typeOf(in->value).getElementType();
    if (isa<FloatType>(et))
      continue;
    std::string type;
    llvm::raw_string_ostream os(type);
    os << et;
    return nodeError(node, node.op_type() +
                               " computes on float tensors; "
                               "input " +
                               Twine(i) + " ('" + node.input(i) + "') holds " +
                               type);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Operands and attributes
//===----------------------------------------------------------------------===//

Item *OnnxImporter::lookup(const onnx::NodeProto &node, int i) {
  if (!hasInput(node, i))
    return nullptr;
  auto it = items.find(node.input(i));
  return it == items.end() ? nullptr : &it->second;
}

FailureOr<Value> OnnxImporter::materialize(const std::string &name, Item &item,
                                           Location loc) {
  if (item.value)
    return item.value;
  Constant &c = *item.constant;
  if (!c.isFloat) {
    emitError(loc, "the integer tensor '" + name + "' is used as data")
            .attachNote()
        << "hint: dlc uses integer tensors only as shapes, axes and "
           "indices known at compile time";
    return failure();
  }
  if (c.elementType.isF64()) {
    emitError(loc, "the float64 tensor '" + name +
                       "' is used as data, "
                       "which dlc does not support")
            .attachNote()
        << "hint: dlc computes in float32, float16 and bfloat16; cast the "
           "model to float32 before exporting";
    return failure();
  }
  builder.setInsertionPointToEnd(body);
  if (c.numel() == 1 && c.initializer.empty() && !c.external) {
    item.value = fill(loc, c.floats[0], c.shape, c.elementType);
    return item.value;
  }
  // A parameter whose initial value is embedded in the object.
  std::string base =
      sanitizeTensorName(c.initializer.empty() ? name : c.initializer);
  std::string sym = base;
  for (int k = 1; paramNames.contains(sym); ++k)
    sym = base + "_" + std::to_string(k);
  paramNames.insert(sym);
  auto type = RankedTensorType::get(c.shape, c.elementType);
  ElementsAttr value;
  if (c.external) {
    // The mapped bytes, not a copy: the blob keeps the mapping alive.
    std::shared_ptr<llvm::MemoryBuffer> owner = c.external->owner;
    StringRef bytes = c.external->bytes;
    AsmResourceBlob blob(
        ArrayRef<char>(bytes.data(), bytes.size()), /*dataAlignment=*/1,
        [owner](void *, size_t, size_t) mutable { owner.reset(); },
        /*dataIsMutable=*/false);
    value = DenseResourceElementsAttr::get(type, sym, std::move(blob));
  } else if (c.elementType.isF32()) {
    std::vector<float> data(c.floats.begin(), c.floats.end());
    value = DenseElementsAttr::get(type, ArrayRef<float>(data));
  } else {
    SmallVector<APFloat> data;
    const llvm::fltSemantics &sem =
        cast<FloatType>(c.elementType).getFloatSemantics();
    for (double d : c.floats) {
      APFloat f(d);
      bool lost;
      f.convert(sem, APFloat::rmNearestTiesToEven, &lost);
      data.push_back(f);
    }
    value = DenseElementsAttr::get(type, data);
  }
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(body->getParentOp());
    ddlc::ParameterOp::create(builder, loc, sym, type,
                              ddlc::ParameterInit::data, llvm::APFloat(0.0),
                              isTrainable(c) ? ddlc::ParameterRole::weight
                                             : ddlc::ParameterRole::constant,
                              value, /*shard_of=*/nullptr,
                              /*shard_ranks=*/nullptr);
  }
  item.value = ddlc::ParamOp::create(builder, loc, type, sym).getResult();
  return item.value;
}

FailureOr<Value> OnnxImporter::maskTensor(const std::string &name,
                                          ArrayRef<int64_t> shape,
                                          std::vector<double> values,
                                          Location loc) {
  auto mask = std::make_shared<Constant>();
  mask->isFloat = true;
  mask->elementType = builder.getF32Type();
  mask->shape.assign(shape.begin(), shape.end());
  mask->floats = std::move(values);
  Item item{Value(), mask, std::nullopt};
  return materialize(name, item, loc);
}

FailureOr<Value> OnnxImporter::tensor(const onnx::NodeProto &node, int i) {
  Item *item = lookup(node, i);
  if (!item) {
    nodeError(node, "needs input " + Twine(i));
    return failure();
  }
  if (item->pendingPad) {
    nodeError(node, "reads the result of a Pad");
    return failure();
  }
  return materialize(node.input(i), *item, nodeLoc(node));
}

FailureOr<std::shared_ptr<Constant>>
OnnxImporter::constInput(const onnx::NodeProto &node, int i,
                         const Twine &what) {
  Item *item = lookup(node, i);
  if (!item) {
    nodeError(node, "needs input " + Twine(i) + " (" + what + ")");
    return failure();
  }
  if (!item->constant) {
    nodeError(node, what + " (input " + Twine(i) + " '" + node.input(i) +
                        "') must be known at compile time")
            .attachNote()
        << "hint: dlc compiles static shapes; if it depends on a dynamic "
           "input dimension, fix that with --input-shape";
    return failure();
  }
  return item->constant;
}

LogicalResult OnnxImporter::onlyFirstOutputUsed(const onnx::NodeProto &node) {
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty() && readers.lookup(node.output(i)) > 0)
      return nodeError(node, "output " + Twine(i) + " '" + node.output(i) +
                                 "' is used, but dlc computes only the first "
                                 "output of this op");
  return success();
}

const onnx::AttributeProto *OnnxImporter::attr(const onnx::NodeProto &node,
                                               StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t OnnxImporter::intAttr(const onnx::NodeProto &node, StringRef name,
                              int64_t def) {
  const auto *a = attr(node, name);
  return a ? a->i() : def;
}

float OnnxImporter::floatAttr(const onnx::NodeProto &node, StringRef name,
                              float def) {
  const auto *a = attr(node, name);
  return a ? a->f() : def;
}

SmallVector<int64_t> OnnxImporter::intsAttr(const onnx::NodeProto &node,
                                            StringRef name) {
  const auto *a = attr(node, name);
  if (!a)
    return {};
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string OnnxImporter::stringAttr(const onnx::NodeProto &node,
                                     StringRef name, StringRef def) {
  const auto *a = attr(node, name);
  return a ? a->s() : def.str();
}

FailureOr<int64_t> OnnxImporter::normAxis(const onnx::NodeProto &node,
                                          int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    nodeError(node, "axis " + Twine(axis) + " is out of range for rank " +
                        Twine(rank));
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// IR helpers
//===----------------------------------------------------------------------===//

FailureOr<Value> OnnxImporter::reshape(const onnx::NodeProto &node, Value x,
                                       ArrayRef<int64_t> shape) {
  auto t = typeOf(x);
  if (t.getShape() == shape)
    return x;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > kMaxElements / d)) {
      nodeError(node, "invalid target shape");
      return failure();
    }
    n *= d;
  }
  if (n != t.getNumElements()) {
    nodeError(node, "cannot reshape " + Twine(t.getNumElements()) +
                        " elements into " + Twine(n));
    return failure();
  }
  return ddlc::ReshapeOp::create(
             builder, nodeLoc(node),
             RankedTensorType::get(shape, t.getElementType()), x)
      .getResult();
}

FailureOr<Value> OnnxImporter::binary(const onnx::NodeProto &node, StringRef op,
                                      Value a, Value b) {
  auto ta = typeOf(a), tb = typeOf(b);
  if (ta.getElementType() != tb.getElementType()) {
    nodeError(node, "mixes element types " +
                        ddlc::elementTypeName(ta.getElementType()) + " and " +
                        ddlc::elementTypeName(tb.getElementType()));
    return failure();
  }
  ArrayRef<int64_t> sa = ta.getShape(), sb = tb.getShape();
  size_t rank = std::max(sa.size(), sb.size());
  SmallVector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - sa.size() ? 1 : sa[i - (rank - sa.size())];
    int64_t db = i < rank - sb.size() ? 1 : sb[i - (rank - sb.size())];
    if (da != db && da != 1 && db != 1) {
      nodeError(node, "operand shapes do not broadcast (dimension " + Twine(i) +
                          ": " + Twine(da) + " vs " + Twine(db) + ")");
      return failure();
    }
    shape[i] = da == 1 ? db : da;
  }
  auto type = RankedTensorType::get(shape, ta.getElementType());
  Location loc = nodeLoc(node);
  if (op == "Add")
    return ddlc::AddOp::create(builder, loc, type, a, b).getResult();
  if (op == "Sub")
    return ddlc::SubOp::create(builder, loc, type, a, b).getResult();
  if (op == "Mul")
    return ddlc::MulOp::create(builder, loc, type, a, b).getResult();
  return ddlc::DivOp::create(builder, loc, type, a, b).getResult();
}

} // namespace dlc::onnx_import
