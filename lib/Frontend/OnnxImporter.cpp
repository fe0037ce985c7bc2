//===- OnnxImporter.cpp - ONNX models to the dlc dialect ------------------===//
//
// One pass over the graph's nodes (ONNX requires topological order). Every
// name maps to an `Item`: either an SSA value of the function being built,
// or a constant known at import time (an initializer, a `Constant` node, or
// the int64 shape arithmetic exporters emit around `Reshape`), which is only
// turned into IR when a float op reads it. Float initializers become
// `dlc.parameter`s with their data embedded; one-element float constants
// become `dlc.fill`, so that dlc-raise-decompositions can match them.
//
//===----------------------------------------------------------------------===//

#include "dlc/Frontend/OnnxImporter.h"

#include "dlc/Dialect/Dlc/IR/DlcDialect.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "Onnx/ExternalData.h"
#include "dlc/Support/ReleasePages.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

using namespace mlir;
namespace ddlc = mlir::dlc;

namespace {

/// Tensors above this many elements are rejected (a corrupt dims field).
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// External float tensors above this many elements are not decoded: they
/// become parameters straight from the mapped file.
constexpr int64_t kMaxDecodedExternal = 4096;

/// Convolution and pool inputs above this size along a spatial dimension
/// are rejected, so that window arithmetic on them cannot overflow.
constexpr int64_t kMaxSpatialDim = int64_t(1) << 32;

/// A tensor known at import time. Float tensors keep their values as
/// double (exact for f32/f16/bf16) and the element type they had; integer
/// tensors (shapes, axes, indices) as int64.
struct Constant {
  bool isFloat = false;
  Type elementType; ///< For float constants: f32, f16 or bf16.
  SmallVector<int64_t> shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  /// The initializer's name when this is one: it becomes a parameter.
  std::string initializer;
  /// A large float tensor kept in an external file: its little-endian
  /// bytes in the mapped file, not decoded into `floats`. Such a tensor is
  /// only ever a parameter, never folded.
  std::optional<::dlc::onnx_import::ExternalBytes> external;

  int64_t numel() const {
    if (external)
      return int64_t(external->bytes.size() /
                     (elementType.getIntOrFloatBitWidth() / 8));
    return isFloat ? int64_t(floats.size()) : int64_t(ints.size());
  }
};

/// Whether training updates the parameter a float constant becomes. An
/// ONNX file does not say which of its tensors the original model trained;
/// exporters write what PyTorch trains as initializers, and write as
/// initializers too, or as Constant nodes, what it does not: scalars (an
/// attention scale, -inf), masks (holding -inf, or float's lowest as
/// PyTorch's scaled_dot_product_attention does) and folded constants. So a
/// Constant node, a one-element initializer and an initializer holding a
/// non-finite or float-extreme value are constants; every other float
/// initializer is trained.
bool isTrainable(const Constant &c) {
  if (c.initializer.empty() || c.numel() == 1)
    return false;
  auto ordinary = [](double v) {
    return std::isfinite(v) && std::abs(v) < 3.4028234e38;
  };
  if (c.external) {
    // A large mask: an f32 tensor read straight from the mapped file.
    if (!c.elementType.isF32())
      return true;
    // Read once, in chunks whose pages go back to the kernel: the object
    // writer streams them again later.
    StringRef bytes = c.external->bytes;
    constexpr size_t kChunk = size_t(16) << 20;
    for (size_t at = 0; at < bytes.size(); at += kChunk) {
      size_t end = std::min(bytes.size(), at + kChunk) & ~size_t(3);
      bool ok = true;
      for (size_t i = at; ok && i + 4 <= end; i += 4) {
        float v;
        std::memcpy(&v, bytes.data() + i, 4);
        ok = ordinary(v);
      }
      ::dlc::releasePages(bytes.data() + at, end - at);
      if (!ok)
        return false;
    }
    return true;
  }
  return llvm::all_of(c.floats, ordinary);
}

/// What a name in the graph stands for.
struct Item {
  Value value;                       ///< Set once materialised.
  std::shared_ptr<Constant> constant; ///< Known at import time.
  /// A zero `Pad` that only a following Conv or AveragePool may absorb:
  /// `value` is the unpadded input, `pads` ONNX's [begins..., ends...].
  std::optional<SmallVector<int64_t>> pendingPad;
};

std::string onnxTypeName(int32_t t) {
  switch (t) {
  case onnx::TensorProto::FLOAT: return "float32";
  case onnx::TensorProto::UINT8: return "uint8";
  case onnx::TensorProto::INT8: return "int8";
  case onnx::TensorProto::UINT16: return "uint16";
  case onnx::TensorProto::INT16: return "int16";
  case onnx::TensorProto::INT32: return "int32";
  case onnx::TensorProto::INT64: return "int64";
  case onnx::TensorProto::STRING: return "string";
  case onnx::TensorProto::BOOL: return "bool";
  case onnx::TensorProto::FLOAT16: return "float16";
  case onnx::TensorProto::DOUBLE: return "float64";
  case onnx::TensorProto::UINT32: return "uint32";
  case onnx::TensorProto::UINT64: return "uint64";
  case onnx::TensorProto::BFLOAT16: return "bfloat16";
  default: return "element type " + std::to_string(t);
  }
}

/// Names the runtime accepts for tensors: letters, digits, '_' and '.'.
std::string sanitizeTensorName(StringRef name) {
  std::string s;
  for (char c : name)
    s += (isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c
                                                                          : '_';
  if (s.empty())
    s = "t";
  return s;
}

/// A C identifier for the model name (it prefixes the header's symbols).
std::string sanitizeModelName(StringRef name) {
  std::string s;
  for (char c : name)
    s += isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || isdigit(static_cast<unsigned char>(s[0])))
    s = "model_" + s;
  return s;
}

/// The NumPy broadcast of two shapes, or nothing when they do not broadcast.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

/// The row-major offset in a tensor of `shape`, broadcast into `out`, of
/// the element at row-major offset `i` of `out`.
int64_t broadcastOffset(int64_t i, ArrayRef<int64_t> out,
                        ArrayRef<int64_t> shape) {
  int64_t offset = 0, stride = 1;
  for (int64_t d = int64_t(out.size()) - 1; d >= 0; --d) {
    int64_t coord = i % out[d];
    i /= out[d];
    int64_t k = d - (int64_t(out.size()) - int64_t(shape.size()));
    if (k >= 0) {
      if (shape[k] != 1)
        offset += coord * stride;
      stride *= shape[k];
    }
  }
  return offset;
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string formatNumber(double v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%g", v);
  return s;
}

double halfToDouble(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(double(man), -24);
  else if (exp == 31)
    v = man ? NAN : INFINITY;
  else
    v = std::ldexp(double(man | 0x400), int(exp) - 25);
  return sign ? -v : v;
}

double bf16ToDouble(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

class OnnxImporter {
public:
  using Handler = LogicalResult (OnnxImporter::*)(const onnx::NodeProto &);
  static const llvm::StringMap<Handler> &handlers();

  OnnxImporter(MLIRContext &ctx, StringRef fileName,
               const ::dlc::OnnxImportOptions &options)
      : ctx(ctx), builder(&ctx), fileName(fileName), options(options) {
    fileLoc = FileLineColLoc::get(&ctx, fileName, 0, 0);
  }

  OwningOpRef<ModuleOp> import(StringRef bytes);

private:

  // Diagnostics.
  InFlightDiagnostic fileError(const Twine &msg) {
    return emitError(NameLoc::get(StringAttr::get(&ctx, fileName), fileLoc),
                     msg);
  }
  /// "node 'NAME' (TYPE, opset N): MSG"
  InFlightDiagnostic nodeError(const onnx::NodeProto &node, const Twine &msg) {
    return emitError(nodeLoc(node), "node '" + nodeName(node) + "' (" +
                                        node.op_type() + ", opset " +
                                        Twine(opset) + "): " + msg);
  }
  std::string nodeName(const onnx::NodeProto &node) const {
    if (!node.name().empty())
      return node.name();
    return node.output_size() ? node.output(0) : node.op_type();
  }
  Location nodeLoc(const onnx::NodeProto &node) {
    return NameLoc::get(StringAttr::get(&ctx, nodeName(node)), fileLoc);
  }

  // Graph structure.
  LogicalResult importInitializers(const onnx::GraphProto &graph);
  LogicalResult importInputs(const onnx::GraphProto &graph);
  LogicalResult importNode(const onnx::NodeProto &node);
  FailureOr<std::shared_ptr<Constant>>
  readTensor(const onnx::TensorProto &t, const Twine &what, Location loc);
  FailureOr<Type> floatElementType(int32_t onnxType, const Twine &what,
                                   Location loc);

  // Operand access.
  Item *lookup(const onnx::NodeProto &node, int i);
  bool hasInput(const onnx::NodeProto &node, int i) const {
    return i < node.input_size() && !node.input(i).empty();
  }
  /// A float tensor operand, materialised in the IR.
  FailureOr<Value> tensor(const onnx::NodeProto &node, int i);
  /// An int64 operand known at import time (shapes, axes).
  FailureOr<std::shared_ptr<Constant>> constInput(const onnx::NodeProto &node,
                                                  int i, const Twine &what);
  FailureOr<Value> materialize(const std::string &name, Item &item,
                               Location loc);
  void define(const onnx::NodeProto &node, int i, Value v) {
    items[node.output(i)] = Item{v, nullptr, std::nullopt};
  }
  void defineConst(const onnx::NodeProto &node, int i,
                   std::shared_ptr<Constant> c) {
    items[node.output(i)] = Item{Value(), std::move(c), std::nullopt};
  }
  LogicalResult onlyFirstOutputUsed(const onnx::NodeProto &node);

  // Attributes.
  const onnx::AttributeProto *attr(const onnx::NodeProto &node,
                                   StringRef name) const;
  int64_t intAttr(const onnx::NodeProto &node, StringRef name, int64_t def);
  float floatAttr(const onnx::NodeProto &node, StringRef name, float def);
  SmallVector<int64_t> intsAttr(const onnx::NodeProto &node, StringRef name);
  std::string stringAttr(const onnx::NodeProto &node, StringRef name,
                         StringRef def);
  FailureOr<int64_t> normAxis(const onnx::NodeProto &node, int64_t axis,
                              int64_t rank);

  // Helpers that build IR.
  RankedTensorType typeOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  Value fill(Location loc, double v, ArrayRef<int64_t> shape, Type et) {
    return ddlc::FillOp::create(builder, loc, RankedTensorType::get(shape, et),
                                builder.getF64FloatAttr(v))
        .getResult();
  }
  FailureOr<Value> reshape(const onnx::NodeProto &node, Value x,
                           ArrayRef<int64_t> shape);
  FailureOr<Value> binary(const onnx::NodeProto &node, StringRef op, Value a,
                          Value b);

  // Constant folding of the int64 shape arithmetic.
  LogicalResult foldConstantNode(const onnx::NodeProto &node, bool &folded);
  LogicalResult foldFloatConstant(const onnx::NodeProto &node, bool &folded);
  /// Folds what exporters compute on masks and shapes with NumPy
  /// broadcasting: comparisons, logic, Mod, Where, Expand, Trilu,
  /// ConstantOfShape and Range of constants (never of float initializers,
  /// which are trainable).
  LogicalResult foldMaskConstant(const onnx::NodeProto &node, bool &folded);

  // Op handlers (one per ONNX op type; see handlers()).
  LogicalResult importIdentity(const onnx::NodeProto &node);
  LogicalResult importDropout(const onnx::NodeProto &node);
  LogicalResult importBinary(const onnx::NodeProto &node);
  LogicalResult importUnary(const onnx::NodeProto &node);
  LogicalResult importPow(const onnx::NodeProto &node);
  LogicalResult importGelu(const onnx::NodeProto &node);
  LogicalResult importComposite(const onnx::NodeProto &node);
  LogicalResult importGemm(const onnx::NodeProto &node);
  LogicalResult importMatMul(const onnx::NodeProto &node);
  LogicalResult importSoftmax(const onnx::NodeProto &node);
  LogicalResult importFlatten(const onnx::NodeProto &node);
  LogicalResult importReshape(const onnx::NodeProto &node);
  LogicalResult importSqueezeLike(const onnx::NodeProto &node);
  LogicalResult importTranspose(const onnx::NodeProto &node);
  LogicalResult importConstant(const onnx::NodeProto &node);
  LogicalResult importShapeOps(const onnx::NodeProto &node);
  LogicalResult importConcat(const onnx::NodeProto &node);
  LogicalResult importSlice(const onnx::NodeProto &node);
  LogicalResult importSplit(const onnx::NodeProto &node);
  LogicalResult importGather(const onnx::NodeProto &node);
  LogicalResult importExpand(const onnx::NodeProto &node);
  LogicalResult importWhere(const onnx::NodeProto &node);
  /// A dlc.slice of `x` along `axis` from `start` (`size` elements,
  /// `step` apart), or `x` itself when that is the whole of it.
  Value sliceAlong(Location loc, Value x, int64_t axis, int64_t start,
                   int64_t size, int64_t step);
  LogicalResult importReduce(const onnx::NodeProto &node);
  LogicalResult importLayerNorm(const onnx::NodeProto &node);
  LogicalResult importPad(const onnx::NodeProto &node);
  LogicalResult importConv(const onnx::NodeProto &node);
  LogicalResult importPool(const onnx::NodeProto &node);
  LogicalResult importGlobalAveragePool(const onnx::NodeProto &node);
  LogicalResult importBatchNorm(const onnx::NodeProto &node);

  /// The spatial window of Conv and the pools: strides, dilations and
  /// dlc's padding [top, left, bottom, right], with auto_pad resolved and a
  /// pending zero Pad on input 0 absorbed (`padded` tells whether it was).
  struct Window {
    SmallVector<int64_t> strides, dilations, padding;
    bool padded = false;
  };
  /// `oneD`: the node is a 1-D Conv or pool, imported as a 2-D one on an
  /// [N, C, 1, L] view: its one-element attributes act on the W dimension.
  FailureOr<Window> window(const onnx::NodeProto &node, RankedTensorType input,
                           ArrayRef<int64_t> kernel, bool oneD = false);
  /// Input 0 of a Conv or pool: the unpadded value when it is a Pad's.
  FailureOr<Value> spatialInput(const onnx::NodeProto &node);

  MLIRContext &ctx;
  OpBuilder builder;
  std::string fileName;
  const ::dlc::OnnxImportOptions &options;
  ::dlc::onnx_import::ExternalDataReader externalData{fileName};
  Location fileLoc = UnknownLoc::get(&ctx);
  int64_t opset = 0;
  const onnx::GraphProto *graph = nullptr; ///< While importing.
  ModuleOp module;
  Block *body = nullptr; ///< The forward function's block.
  llvm::StringMap<Item> items;
  llvm::StringSet<> paramNames;
  /// How many nodes read each name (a pending Pad must have one reader).
  llvm::StringMap<int> readers;
};

//===----------------------------------------------------------------------===//
// The op table
//===----------------------------------------------------------------------===//

const llvm::StringMap<OnnxImporter::Handler> &OnnxImporter::handlers() {
  static const llvm::StringMap<Handler> table = [] {
    llvm::StringMap<Handler> t;
    t["Identity"] = &OnnxImporter::importIdentity;
    t["Dropout"] = &OnnxImporter::importDropout;
    for (const char *op : {"Add", "Sub", "Mul", "Div"})
      t[op] = &OnnxImporter::importBinary;
    for (const char *op : {"Relu", "Tanh", "Sigmoid", "Sqrt", "Exp", "Log",
                           "Neg", "Erf"})
      t[op] = &OnnxImporter::importUnary;
    t["Pow"] = &OnnxImporter::importPow;
    t["Gelu"] = &OnnxImporter::importGelu;
    for (const char *op : {"LeakyRelu", "Abs", "Elu", "Softplus",
                           "HardSigmoid", "HardSwish", "Clip"})
      t[op] = &OnnxImporter::importComposite;
    t["Gemm"] = &OnnxImporter::importGemm;
    t["MatMul"] = &OnnxImporter::importMatMul;
    t["Softmax"] = &OnnxImporter::importSoftmax;
    t["LogSoftmax"] = &OnnxImporter::importSoftmax;
    t["Flatten"] = &OnnxImporter::importFlatten;
    t["Reshape"] = &OnnxImporter::importReshape;
    t["Squeeze"] = &OnnxImporter::importSqueezeLike;
    t["Unsqueeze"] = &OnnxImporter::importSqueezeLike;
    t["Transpose"] = &OnnxImporter::importTranspose;
    t["Constant"] = &OnnxImporter::importConstant;
    for (const char *op : {"Shape", "Cast"})
      t[op] = &OnnxImporter::importShapeOps;
    t["Gather"] = &OnnxImporter::importGather;
    t["Expand"] = &OnnxImporter::importExpand;
    t["Where"] = &OnnxImporter::importWhere;
    t["Concat"] = &OnnxImporter::importConcat;
    t["Slice"] = &OnnxImporter::importSlice;
    t["Split"] = &OnnxImporter::importSplit;
    t["ReduceMean"] = &OnnxImporter::importReduce;
    t["ReduceSum"] = &OnnxImporter::importReduce;
    t["LayerNormalization"] = &OnnxImporter::importLayerNorm;
    t["Pad"] = &OnnxImporter::importPad;
    t["Conv"] = &OnnxImporter::importConv;
    t["MaxPool"] = &OnnxImporter::importPool;
    t["AveragePool"] = &OnnxImporter::importPool;
    t["GlobalAveragePool"] = &OnnxImporter::importGlobalAveragePool;
    t["BatchNormalization"] = &OnnxImporter::importBatchNorm;
    return t;
  }();
  return table;
}

} // namespace

namespace dlc {
std::string onnxTensorName(llvm::StringRef name) {
  return sanitizeTensorName(name);
}

std::vector<std::string> supportedOnnxOps() {
  std::vector<std::string> ops;
  for (const auto &entry : OnnxImporter::handlers())
    ops.push_back(entry.getKey().str());
  std::sort(ops.begin(), ops.end());
  return ops;
}
} // namespace dlc

namespace {

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
    fileError("opset " + Twine(opset) + " is not supported: dlc imports "
              "default-domain opsets " + Twine(::dlc::kMinOnnxOpset) + " to " +
              Twine(::dlc::kMaxOnnxOpset))
            .attachNote()
        << "hint: export again with torch.onnx.export(..., opset_version="
        << ::dlc::kMaxOnnxOpset << "), or convert with "
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
  for (const auto &node : graph.node())
    if (failed(importNode(node)))
      return nullptr;

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
  fn.setFunctionType(builder.getFunctionType(body->getArgumentTypes(),
                                             resultTypes));
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
      emitError(loc, what + " has an invalid shape (dimension " + Twine(d) +
                         ")");
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
    emitError(loc, what + " has " + Twine(have) + " values but its shape "
                          "needs " + Twine(numel));
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
    emitError(loc, what + " has element type " +
                       onnxTypeName(t.data_type()) +
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
          emitError(loc, "graph input '" + in.name() + "' has a dynamic "
                         "dimension " + Twine(d) + sym +
                         "; dlc compiles static shapes")
                  .attachNote()
              << "hint: fix it with --input-shape " << in.name()
              << "=D0,D1,..." << (d == 0 ? " (or --batch N)" : "");
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
          !shape.empty())
        shape[0] = *options.batch;
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
      nodeError(node, "output '" + out + "' is defined twice (the graph is "
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
      nodeError(node, "reads the result of a Pad")
              .attachNote()
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
  builder.setInsertionPointToEnd(body);
  return (this->*(it->second))(node);
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

FailureOr<Value> OnnxImporter::materialize(const std::string &name,
                                           Item &item, Location loc) {
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
    emitError(loc, "the float64 tensor '" + name + "' is used as data, "
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
    ddlc::ParameterOp::create(builder, loc, sym, type, "data",
                              llvm::APFloat(0.0),
                              isTrainable(c) ? ddlc::kRoleWeight
                                             : ddlc::kRoleConstant,
                              value);
  }
  item.value = ddlc::ParamOp::create(builder, loc, type, sym).getResult();
  return item.value;
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

const onnx::AttributeProto *
OnnxImporter::attr(const onnx::NodeProto &node, StringRef name) const {
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

FailureOr<Value> OnnxImporter::binary(const onnx::NodeProto &node,
                                      StringRef op, Value a, Value b) {
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
      nodeError(node, "operand shapes do not broadcast (dimension " +
                          Twine(i) + ": " + Twine(da) + " vs " + Twine(db) +
                          ")");
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
    bool training = (*mode)->isFloat ? (*mode)->floats.at(0) != 0
                                     : (*mode)->ints[0] != 0;
    if (training)
      return nodeError(node, "training_mode is true; dlc imports Dropout "
                             "for inference only (the identity)");
  }
  if (failed(onlyFirstOutputUsed(node)))
    return failure();
  return importIdentity(node);
}

LogicalResult OnnxImporter::importBinary(const onnx::NodeProto &node) {
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

/// Gelu (opset 20): the erf form, or the tanh one with approximate="tanh".
LogicalResult OnnxImporter::importGelu(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  if (opset < 20)
    return nodeError(node, "Gelu is an op of opset 20 and later; this model "
                           "imports opset " + Twine(opset));
  std::string approximate = stringAttr(node, "approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return nodeError(node, "unknown approximate '" + approximate +
                               "' (expected 'none' or 'tanh')");
  define(node, 0,
         ddlc::GeluOp::create(builder, nodeLoc(node), *x, approximate));
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
    Value d = p == -1    ? *x
              : p == -2  ? ddlc::MulOp::create(builder, loc, x->getType(), *x,
                                               *x)
                               .getResult()
                         : ddlc::SqrtOp::create(builder, loc, *x).getResult();
    r = ddlc::DivOp::create(
        builder, loc, x->getType(),
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
  auto hardSigmoid = [&](Value v, double alpha, double beta) {
    Value y = add(scale(v, alpha), scalar(beta));
    return minimum(maximum(y, 0.0), 1.0);
  };
  Value r;
  if (op == "LeakyRelu") {
    // relu(x) - alpha relu(-x): exact on both sides.
    r = sub(relu(*x), scale(relu(neg(*x)), floatAttr(node, "alpha", 0.01f)));
  } else if (op == "Abs") {
    r = add(relu(*x), relu(neg(*x)));
  } else if (op == "Elu") {
    // relu(x) + alpha (exp(-relu(-x)) - 1)
    Value e = ddlc::ExpOp::create(builder, loc, neg(relu(neg(*x))));
    r = add(relu(*x),
            scale(add(e, scalar(-1.0)), floatAttr(node, "alpha", 1.0f)));
  } else if (op == "Softplus") {
    // relu(x) + log(1 + exp(-|x|)): no overflow for large |x|.
    Value abs = add(relu(*x), relu(neg(*x)));
    Value e = ddlc::ExpOp::create(builder, loc, neg(abs));
    r = add(relu(*x), ddlc::LogOp::create(builder, loc, add(e, scalar(1.0))));
  } else if (op == "HardSigmoid") {
    r = hardSigmoid(*x, floatAttr(node, "alpha", 0.2f),
                    floatAttr(node, "beta", 0.5f));
  } else if (op == "HardSwish") {
    r = ddlc::MulOp::create(builder, loc, type, *x,
                            hardSigmoid(*x, 1.0 / 6.0, 0.5));
  } else { // Clip: min and max are optional constant inputs (opset 11+).
    auto bound = [&](int i, const char *what) -> FailureOr<std::optional<double>> {
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

LogicalResult OnnxImporter::importGemm(const onnx::NodeProto &node) {
  auto a = tensor(node, 0);
  if (failed(a))
    return failure();
  auto b = tensor(node, 1);
  if (failed(b))
    return failure();
  if (typeOf(*a).getRank() != 2 || typeOf(*b).getRank() != 2)
    return nodeError(node, "Gemm needs rank-2 operands, not " +
                               Twine(typeOf(*a).getRank()) + " and " +
                               Twine(typeOf(*b).getRank()));
  Location loc = nodeLoc(node);
  auto transpose = [&](Value v) -> Value {
    auto t = typeOf(v);
    auto type = RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)},
                                      t.getElementType());
    return ddlc::TransposeOp::create(builder, loc, type, v,
                                     ArrayRef<int64_t>{1, 0});
  };
  Value x = intAttr(node, "transA", 0) ? transpose(*a) : *a;
  // dlc.linear takes the weight as [out, in], which is B with transB = 1.
  Value w = intAttr(node, "transB", 0) ? *b : transpose(*b);
  auto tx = typeOf(x), tw = typeOf(w);
  if (tx.getDimSize(1) != tw.getDimSize(1))
    return nodeError(node, "inner dimensions differ (" +
                               Twine(tx.getDimSize(1)) + " vs " +
                               Twine(tw.getDimSize(1)) + ")");
  int64_t m = tx.getDimSize(0), n = tw.getDimSize(0);
  auto resultType = RankedTensorType::get({m, n}, tx.getElementType());
  float alpha = floatAttr(node, "alpha", 1.0f);
  float beta = floatAttr(node, "beta", 1.0f);
  if (alpha != 1.0f)
    x = ddlc::ScaleOp::create(builder, loc, x, builder.getF64FloatAttr(alpha));

  Value bias, rest;
  if (hasInput(node, 2) && beta != 0.0f) {
    auto c = tensor(node, 2);
    if (failed(c))
      return failure();
    Value cv = *c;
    if (beta != 1.0f)
      cv = ddlc::ScaleOp::create(builder, loc, cv,
                                 builder.getF64FloatAttr(beta));
    ArrayRef<int64_t> cs = typeOf(cv).getShape();
    bool isBias = (cs.size() == 1 && cs[0] == n) ||
                  (cs.size() == 2 && cs[0] == 1 && cs[1] == n);
    if (isBias) {
      auto r = reshape(node, cv, {n});
      if (failed(r))
        return failure();
      bias = *r;
    } else {
      rest = cv;
    }
  }
  Value y = ddlc::LinearOp::create(builder, loc, resultType, x, w, bias);
  if (rest) {
    auto r = binary(node, "Add", y, rest);
    if (failed(r))
      return failure();
    if (typeOf(*r).getShape() != resultType.getShape())
      return nodeError(node, "C does not broadcast to the result shape");
    y = *r;
  }
  define(node, 0, y);
  return success();
}

LogicalResult OnnxImporter::importMatMul(const onnx::NodeProto &node) {
  auto a = tensor(node, 0);
  if (failed(a))
    return failure();
  auto b = tensor(node, 1);
  if (failed(b))
    return failure();
  auto ta = typeOf(*a), tb = typeOf(*b);
  ArrayRef<int64_t> sa = ta.getShape(), sb = tb.getShape();
  Type et = ta.getElementType();
  Location loc = nodeLoc(node);
  if (sa.size() < 2 || sb.size() < 2)
    return nodeError(node, "rank-1 operands are not supported (ranks " +
                               Twine(sa.size()) + " and " + Twine(sb.size()) +
                               ")");
  int64_t m = sa[sa.size() - 2], k = sa.back();
  int64_t k2 = sb[sb.size() - 2], n = sb.back();
  if (k != k2)
    return nodeError(node, "inner dimensions differ (" + Twine(k) + " vs " +
                               Twine(k2) + ")");
  Value r;
  if (sb.size() == 2) {
    // [..., M, K] x [K, N]: one GEMM over all leading dimensions.
    int64_t rows = ta.getNumElements() / k;
    auto a2 = reshape(node, *a, {rows, k});
    if (failed(a2))
      return failure();
    Value mm = ddlc::MatmulOp::create(
        builder, loc, RankedTensorType::get({rows, n}, et), *a2, *b);
    SmallVector<int64_t> shape(sa.begin(), sa.end());
    shape.back() = n;
    auto out = reshape(node, mm, shape);
    if (failed(out))
      return failure();
    r = *out;
  } else {
    // One batched matmul over the batch dimensions, broadcast (NumPy rules)
    // when they differ: [M, K] x [B, K, N], [B, 1, M, K] x [H, K, N], ...
    ArrayRef<int64_t> ba = sa.drop_back(2), bb = sb.drop_back(2);
    size_t rank = std::max(ba.size(), bb.size());
    SmallVector<int64_t> bshape(rank);
    int64_t batch = 1;
    for (size_t i = 0; i < rank; ++i) {
      int64_t da = i < rank - ba.size() ? 1 : ba[i - (rank - ba.size())];
      int64_t db = i < rank - bb.size() ? 1 : bb[i - (rank - bb.size())];
      if (da != db && da != 1 && db != 1)
        return nodeError(node, "batch dimensions do not broadcast (dimension " +
                                   Twine(i) + ": " + Twine(da) + " vs " +
                                   Twine(db) + ")");
      bshape[i] = da == 1 ? db : da;
      batch *= bshape[i];
    }
    auto expand = [&](Value v, int64_t rows, int64_t cols) -> Value {
      SmallVector<int64_t> full(bshape);
      full.push_back(rows);
      full.push_back(cols);
      if (typeOf(v).getShape() == ArrayRef<int64_t>(full))
        return v;
      return ddlc::BroadcastToOp::create(builder, loc,
                                         RankedTensorType::get(full, et), v);
    };
    auto a3 = reshape(node, expand(*a, m, k), {batch, m, k});
    auto b3 = reshape(node, expand(*b, k, n), {batch, k, n});
    if (failed(a3) || failed(b3))
      return failure();
    Value mm = ddlc::MatmulOp::create(
        builder, loc, RankedTensorType::get({batch, m, n}, et), *a3, *b3);
    SmallVector<int64_t> shape(bshape);
    shape.push_back(m);
    shape.push_back(n);
    auto out = reshape(node, mm, shape);
    if (failed(out))
      return failure();
    r = *out;
  }
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importSoftmax(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto dim = normAxis(node, intAttr(node, "axis", -1), typeOf(*x).getRank());
  if (failed(dim))
    return failure();
  Location loc = nodeLoc(node);
  IntegerAttr d = builder.getI64IntegerAttr(*dim);
  Value r = node.op_type() == "Softmax"
                ? ddlc::SoftmaxOp::create(builder, loc, x->getType(), *x, d)
                      .getResult()
                : ddlc::LogSoftmaxOp::create(builder, loc, x->getType(), *x, d)
                      .getResult();
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importFlatten(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  int64_t rank = t.getRank();
  int64_t axis = intAttr(node, "axis", 1);
  if (axis < -rank || axis > rank)
    return nodeError(node, "axis " + Twine(axis) + " is out of range for rank " +
                               Twine(rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= t.getDimSize(i);
  auto r = reshape(node, *x, {outer, inner});
  if (failed(r))
    return failure();
  define(node, 0, *r);
  return success();
}

LogicalResult OnnxImporter::importReshape(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto shapeC = constInput(node, 1, "the target shape");
  if (failed(shapeC))
    return failure();
  if ((*shapeC)->isFloat || (*shapeC)->shape.size() != 1)
    return nodeError(node, "the target shape must be a 1-D int64 tensor");
  auto t = typeOf(*x);
  bool allowZero = intAttr(node, "allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  int inferred = -1;
  int64_t known = 1;
  for (auto [i, d] : llvm::enumerate((*shapeC)->ints)) {
    if (d == 0 && !allowZero) {
      if (int64_t(i) >= t.getRank())
        return nodeError(node, "target dimension " + Twine(i) +
                                   " copies a dimension the input lacks");
      d = t.getDimSize(i);
    } else if (d == -1) {
      if (inferred >= 0)
        return nodeError(node, "the target shape has more than one -1");
      inferred = i;
      shape.push_back(1);
      continue;
    } else if (d <= 0) {
      return nodeError(node, "invalid target dimension " + Twine(d));
    }
    if (d > kMaxElements || known > kMaxElements / d)
      return nodeError(node, "the target shape is too large");
    known *= d;
    shape.push_back(d);
  }
  if (inferred >= 0) {
    if (t.getNumElements() % known != 0)
      return nodeError(node, "cannot infer the -1 dimension: " +
                                 Twine(t.getNumElements()) +
                                 " elements do not divide by " + Twine(known));
    shape[inferred] = t.getNumElements() / known;
  }
  auto r = reshape(node, *x, shape);
  if (failed(r))
    return failure();
  define(node, 0, *r);
  return success();
}

LogicalResult OnnxImporter::importSqueezeLike(const onnx::NodeProto &node) {
  // Float tensors here; int64 constants are folded earlier.
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  SmallVector<int64_t> axes;
  if (hasInput(node, 1)) {
    auto c = constInput(node, 1, "axes");
    if (failed(c))
      return failure();
    axes.assign((*c)->ints.begin(), (*c)->ints.end());
  } else {
    axes = intsAttr(node, "axes");
  }
  bool unsqueeze = node.op_type() == "Unsqueeze";
  SmallVector<int64_t> shape(t.getShape());
  if (unsqueeze) {
    int64_t rank = t.getRank() + axes.size();
    SmallVector<bool> isNew(rank, false);
    for (int64_t a : axes) {
      auto n = normAxis(node, a, rank);
      if (failed(n))
        return failure();
      isNew[*n] = true;
    }
    shape.clear();
    int64_t src = 0;
    for (int64_t i = 0; i < rank; ++i)
      shape.push_back(isNew[i] ? 1 : t.getDimSize(src++));
  } else {
    SmallVector<bool> drop(t.getRank(), axes.empty());
    for (int64_t a : axes) {
      auto n = normAxis(node, a, t.getRank());
      if (failed(n))
        return failure();
      if (t.getDimSize(*n) != 1)
        return nodeError(node, "cannot squeeze dimension " + Twine(*n) +
                                   " of size " + Twine(t.getDimSize(*n)));
      drop[*n] = true;
    }
    shape.clear();
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (!drop[i] || t.getDimSize(i) != 1)
        shape.push_back(t.getDimSize(i));
  }
  auto r = reshape(node, *x, shape);
  if (failed(r))
    return failure();
  define(node, 0, *r);
  return success();
}

LogicalResult OnnxImporter::importTranspose(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  int64_t rank = t.getRank();
  SmallVector<int64_t> perm = intsAttr(node, "perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (int64_t(perm.size()) != rank)
    return nodeError(node, "perm has " + Twine(perm.size()) +
                               " entries for a rank-" + Twine(rank) + " input");
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t &p : perm) {
    if (p < 0)
      p += rank;
    if (p < 0 || p >= rank || seen[p])
      return nodeError(node, "perm is not a permutation");
    seen[p] = true;
    shape.push_back(t.getDimSize(p));
  }
  Value r = ddlc::TransposeOp::create(
      builder, nodeLoc(node), RankedTensorType::get(shape, t.getElementType()),
      *x, perm);
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importConstant(const onnx::NodeProto &node) {
  auto c = std::make_shared<Constant>();
  if (const auto *a = attr(node, "value")) {
    auto t = readTensor(a->t(), "the value of node '" + nodeName(node) + "'",
                        nodeLoc(node));
    if (failed(t))
      return failure();
    c = *t;
  } else if (const auto *a = attr(node, "value_float")) {
    c->isFloat = true;
    c->elementType = builder.getF32Type();
    c->floats = {a->f()};
  } else if (const auto *a = attr(node, "value_floats")) {
    c->isFloat = true;
    c->elementType = builder.getF32Type();
    c->floats.assign(a->floats().begin(), a->floats().end());
    c->shape = {int64_t(c->floats.size())};
  } else if (const auto *a = attr(node, "value_int")) {
    c->ints = {a->i()};
  } else if (const auto *a = attr(node, "value_ints")) {
    c->ints.assign(a->ints().begin(), a->ints().end());
    c->shape = {int64_t(c->ints.size())};
  } else {
    return nodeError(node, "needs a 'value', 'value_float(s)' or "
                           "'value_int(s)' attribute");
  }
  defineConst(node, 0, c);
  return success();
}

LogicalResult OnnxImporter::importShapeOps(const onnx::NodeProto &node) {
  // Reached only when foldConstantNode could not fold: the op reads a
  // float tensor's data (Shape is always folded: shapes are static).
  return nodeError(node, "is supported only on tensors known at compile "
                         "time (the int64 shape arithmetic around Reshape)");
}

//===----------------------------------------------------------------------===//
// Data movement on values (what foldConstantNode could not fold)
//===----------------------------------------------------------------------===//

Value OnnxImporter::sliceAlong(Location loc, Value x, int64_t axis,
                               int64_t start, int64_t size, int64_t step) {
  auto t = typeOf(x);
  if (start == 0 && step == 1 && size == t.getDimSize(axis))
    return x;
  SmallVector<int64_t> shape(t.getShape()), offsets(t.getRank(), 0),
      strides(t.getRank(), 1);
  shape[axis] = size;
  offsets[axis] = start;
  strides[axis] = step;
  return ddlc::SliceOp::create(builder, loc,
                               RankedTensorType::get(shape, t.getElementType()),
                               x, offsets, strides);
}

LogicalResult OnnxImporter::importConcat(const onnx::NodeProto &node) {
  SmallVector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    if (!hasInput(node, i))
      return nodeError(node, "input " + Twine(i) + " is absent");
    auto v = tensor(node, i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty())
    return nodeError(node, "needs at least one input");
  auto first = typeOf(inputs[0]);
  auto axis = normAxis(node, intAttr(node, "axis", 0), first.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (auto [i, v] : llvm::enumerate(inputs)) {
    auto t = typeOf(v);
    bool fits = t.getRank() == first.getRank() &&
                t.getElementType() == first.getElementType();
    for (int64_t d = 0; fits && d < t.getRank(); ++d)
      fits = d == *axis || t.getDimSize(d) == first.getDimSize(d);
    if (!fits)
      return nodeError(node, "input " + Twine(i) + " does not match input 0 "
                             "outside axis " + Twine(*axis));
    shape[*axis] += t.getDimSize(*axis);
  }
  define(node, 0,
         ddlc::ConcatOp::create(
             builder, nodeLoc(node),
             RankedTensorType::get(shape, first.getElementType()), inputs,
             *axis));
  return success();
}

LogicalResult OnnxImporter::importSlice(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  int64_t rank = t.getRank();
  auto ints = [&](int i, const char *what,
                  std::vector<int64_t> dflt) -> FailureOr<std::vector<int64_t>> {
    if (!hasInput(node, i))
      return dflt;
    auto c = constInput(node, i, what);
    if (failed(c))
      return failure();
    if ((*c)->isFloat)
      return nodeError(node, Twine(what) + " must be integers"), failure();
    return (*c)->ints;
  };
  auto starts = ints(1, "starts", {});
  auto ends = ints(2, "ends", {});
  if (failed(starts) || failed(ends))
    return failure();
  std::vector<int64_t> defaultAxes;
  for (size_t i = 0; i < starts->size(); ++i)
    defaultAxes.push_back(int64_t(i));
  auto axes = ints(3, "axes", defaultAxes);
  auto steps = ints(4, "steps", std::vector<int64_t>(starts->size(), 1));
  if (failed(axes) || failed(steps))
    return failure();
  size_t n = starts->size();
  if (ends->size() != n || axes->size() != n || steps->size() != n)
    return nodeError(node, "starts, ends, axes and steps must have one "
                           "length");
  SmallVector<int64_t> offsets(rank, 0), strides(rank, 1),
      shape(t.getShape());
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    auto axis = normAxis(node, (*axes)[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return nodeError(node, "axis " + Twine(*axis) + " is sliced twice");
    seen[*axis] = true;
    int64_t dim = t.getDimSize(*axis), step = (*steps)[i];
    if (step == 0)
      return nodeError(node, "a step of 0");
    if (step < 0)
      return nodeError(node, "negative steps (reversal) are not supported");
    // ONNX clamps starts and ends into [0, dim] after adding dim to
    // negative ones (ends of INT64_MAX mean "to the end").
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v = v < -dim ? 0 : v + dim;
      return std::min(v, dim);
    };
    int64_t s = clampIndex((*starts)[i]), e = clampIndex((*ends)[i]);
    int64_t size = e > s ? (e - s - 1) / step + 1 : 0;
    offsets[*axis] = size ? s : 0;
    strides[*axis] = step;
    shape[*axis] = size;
  }
  Value r = *x;
  if (shape != SmallVector<int64_t>(t.getShape()) ||
      llvm::any_of(strides, [](int64_t v) { return v != 1; }))
    r = ddlc::SliceOp::create(
        builder, nodeLoc(node),
        RankedTensorType::get(shape, t.getElementType()), *x, offsets,
        strides);
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importSplit(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  auto axis = normAxis(node, intAttr(node, "axis", 0), t.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = t.getDimSize(*axis), parts = node.output_size();
  SmallVector<int64_t> sizes;
  if (hasInput(node, 1)) {
    auto c = constInput(node, 1, "split");
    if (failed(c))
      return failure();
    sizes.assign((*c)->ints.begin(), (*c)->ints.end());
  } else if (SmallVector<int64_t> a = intsAttr(node, "split"); !a.empty()) {
    sizes = a; // Opsets before 13.
  } else {
    // Equal parts; from opset 18, `num_outputs` parts of ceil(dim / n),
    // the last one smaller.
    int64_t n = opset >= 18 ? intAttr(node, "num_outputs", parts) : parts;
    if (n != parts || n < 1)
      return nodeError(node, "num_outputs (" + Twine(n) + ") must be the " +
                                 "number of outputs (" + Twine(parts) + ")");
    int64_t each = (dim + n - 1) / n;
    if (opset < 18 && dim % n)
      return nodeError(node, "cannot split " + Twine(dim) + " into " +
                                 Twine(n) + " equal parts");
    for (int64_t k = 0, left = dim; k < n; ++k, left -= each)
      sizes.push_back(std::min(each, std::max<int64_t>(left, 0)));
  }
  if (int64_t(sizes.size()) != parts)
    return nodeError(node, "split has " + Twine(sizes.size()) +
                               " sizes for " + Twine(parts) + " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > dim)
      return nodeError(node, "a split size of " + Twine(s));
    total += s;
  }
  if (total != dim)
    return nodeError(node, "the split sizes add up to " + Twine(total) +
                               ", not " + Twine(dim));
  for (int64_t k = 0, at = 0; k < parts; at += sizes[k], ++k)
    if (!node.output(k).empty())
      define(node, k, sliceAlong(nodeLoc(node), *x, *axis, at, sizes[k], 1));
  return success();
}

LogicalResult OnnxImporter::importGather(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  auto axis = normAxis(node, intAttr(node, "axis", 0), t.getRank());
  if (failed(axis))
    return failure();
  Item *idxItem = lookup(node, 1);
  if (!idxItem)
    return nodeError(node, "needs input 1 (indices)");
  if (idxItem->value) {
    // Indices computed at run time (token ids): an embedding lookup.
    auto it = dyn_cast<RankedTensorType>(idxItem->value.getType());
    if (!it || !it.getElementType().isSignlessInteger())
      return nodeError(node, "the indices must be integers");
    if (*axis != 0)
      return nodeError(node, "dlc gathers by run-time indices along axis 0 "
                             "only (an embedding lookup), not axis " +
                                 Twine(*axis));
    if (!isa<FloatType>(t.getElementType()))
      return nodeError(node, "dlc gathers rows of float tensors only");
    SmallVector<int64_t> shape(it.getShape());
    shape.append(t.getShape().begin() + 1, t.getShape().end());
    define(node, 0,
           ddlc::GatherOp::create(
               builder, nodeLoc(node),
               RankedTensorType::get(shape, t.getElementType()), *x,
               idxItem->value));
    return success();
  }
  if (!idxItem->constant || idxItem->constant->isFloat)
    return nodeError(node, "the indices must be integers");
  // Constant indices (the q/k/v selections of a packed projection): one
  // slice per index, joined along the axis, viewed in the result's shape.
  const Constant &idx = *idxItem->constant;
  int64_t dim = t.getDimSize(*axis);
  Location loc = nodeLoc(node);
  SmallVector<Value> parts;
  for (int64_t i : idx.ints) {
    if (i < -dim || i >= dim)
      return nodeError(node, "index " + Twine(i) + " is out of range for a "
                             "dimension of " + Twine(dim));
    parts.push_back(sliceAlong(loc, *x, *axis, i < 0 ? i + dim : i, 1, 1));
  }
  SmallVector<int64_t> shape(t.getShape().take_front(*axis));
  shape.append(idx.shape.begin(), idx.shape.end());
  shape.append(t.getShape().begin() + *axis + 1, t.getShape().end());
  auto type = RankedTensorType::get(shape, t.getElementType());
  Value joined;
  if (parts.empty()) {
    joined = fill(loc, 0.0, shape, t.getElementType());
  } else {
    joined = parts[0];
    if (parts.size() > 1) {
      SmallVector<int64_t> catShape(t.getShape());
      catShape[*axis] = parts.size();
      joined = ddlc::ConcatOp::create(
          builder, loc, RankedTensorType::get(catShape, t.getElementType()),
          parts, *axis);
    }
    if (typeOf(joined).getShape() != ArrayRef<int64_t>(shape))
      joined = ddlc::ReshapeOp::create(builder, loc, type, joined);
  }
  define(node, 0, joined);
  return success();
}

LogicalResult OnnxImporter::importExpand(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto shapeIn = constInput(node, 1, "shape");
  if (failed(shapeIn))
    return failure();
  if ((*shapeIn)->isFloat)
    return nodeError(node, "the shape must be integers");
  auto t = typeOf(*x);
  SmallVector<int64_t> want((*shapeIn)->ints.begin(), (*shapeIn)->ints.end());
  auto shape = broadcastShapes(t.getShape(), want);
  if (!shape || llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return nodeError(node, "cannot expand a tensor of shape [" +
                               llvm::join(llvm::map_range(t.getShape(),
                                                          [](int64_t d) {
                                                            return std::to_string(d);
                                                          }),
                                          ", ") +
                               "] to the given shape");
  Value r = *x;
  if (ArrayRef<int64_t>(*shape) != t.getShape())
    r = ddlc::BroadcastToOp::create(
        builder, nodeLoc(node), RankedTensorType::get(*shape, t.getElementType()),
        *x);
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importWhere(const onnx::NodeProto &node) {
  Item *c = lookup(node, 0);
  if (!c)
    return nodeError(node, "needs input 0 (the condition)");
  Value cond;
  if (c->value) {
    cond = c->value;
  } else if (c->constant && !c->constant->isFloat) {
    // A constant mask (a causal triu) enters as a float tensor of 0 and 1,
    // a constant that no gradient reaches.
    auto f = std::make_shared<Constant>(*c->constant);
    f->isFloat = true;
    f->elementType = builder.getF32Type();
    f->floats.assign(f->ints.begin(), f->ints.end());
    f->ints.clear();
    f->initializer.clear();
    Item maskItem{Value(), f, std::nullopt};
    auto m = materialize(node.input(0) + ".mask", maskItem, nodeLoc(node));
    if (failed(m))
      return failure();
    cond = *m;
  } else {
    auto v = tensor(node, 0);
    if (failed(v))
      return failure();
    cond = *v;
  }
  auto a = tensor(node, 1);
  auto bv = tensor(node, 2);
  if (failed(a) || failed(bv))
    return failure();
  auto ta = typeOf(*a), tb = typeOf(*bv);
  if (ta.getElementType() != tb.getElementType())
    return nodeError(node, "the two choices have different element types");
  auto shape = broadcastShapes(typeOf(cond).getShape(), ta.getShape());
  if (shape)
    shape = broadcastShapes(*shape, tb.getShape());
  if (!shape)
    return nodeError(node, "the operands do not broadcast to one shape");
  define(node, 0,
         ddlc::WhereOp::create(builder, nodeLoc(node),
                               RankedTensorType::get(*shape, ta.getElementType()),
                               cond, *a, *bv));
  return success();
}

LogicalResult OnnxImporter::importReduce(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  SmallVector<int64_t> axes;
  bool isSum = node.op_type() == "ReduceSum";
  // The axes are an input of ReduceSum from opset 13 and of the other
  // reductions from opset 18, an attribute before.
  bool axesInput = isSum || opset >= 18;
  if (axesInput && hasInput(node, 1)) {
    auto c = constInput(node, 1, "axes");
    if (failed(c))
      return failure();
    axes.assign((*c)->ints.begin(), (*c)->ints.end());
  } else if (!axesInput) {
    axes = intsAttr(node, "axes");
  }
  bool keep = intAttr(node, "keepdims", 1) != 0;
  if (axes.empty()) {
    if (axesInput && intAttr(node, "noop_with_empty_axes", 0)) {
      items[node.output(0)] = *lookup(node, 0);
      return success();
    }
    for (int64_t i = 0; i < t.getRank(); ++i)
      axes.push_back(i);
  }
  SmallVector<bool> reduced(t.getRank(), false);
  for (int64_t a : axes) {
    auto n = normAxis(node, a, t.getRank());
    if (failed(n))
      return failure();
    reduced[*n] = true;
  }
  SmallVector<int64_t> dims, shape;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (reduced[i])
      dims.push_back(i);
    if (!reduced[i])
      shape.push_back(t.getDimSize(i));
    else if (keep)
      shape.push_back(1);
  }
  auto type = RankedTensorType::get(shape, t.getElementType());
  Location loc = nodeLoc(node);
  Value r = isSum ? ddlc::SumOp::create(builder, loc, type, *x, dims, keep)
                        .getResult()
                  : ddlc::MeanOp::create(builder, loc, type, *x, dims, keep)
                        .getResult();
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importLayerNorm(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  auto axis = normAxis(node, intAttr(node, "axis", -1), t.getRank());
  if (failed(axis))
    return failure();
  if (failed(onlyFirstOutputUsed(node)))
    return failure();
  // dlc.layer_norm normalises the last dimension: flatten the normalised
  // dimensions into one when the axis is not the last.
  int64_t inner = 1, outer = 1;
  for (int64_t i = 0; i < t.getRank(); ++i)
    (i < *axis ? outer : inner) *= t.getDimSize(i);
  Location loc = nodeLoc(node);
  Value input = *x;
  if (*axis != t.getRank() - 1) {
    auto r = reshape(node, *x, {outer, inner});
    if (failed(r))
      return failure();
    input = *r;
  }
  Type et = t.getElementType();
  auto affine = [&](int i, double def) -> FailureOr<Value> {
    if (!hasInput(node, i))
      return fill(loc, def, {inner}, et);
    auto v = tensor(node, i);
    if (failed(v))
      return failure();
    if (typeOf(*v).getNumElements() != inner) {
      nodeError(node, Twine(i == 1 ? "scale" : "bias") + " has " +
                          Twine(typeOf(*v).getNumElements()) +
                          " elements; the normalised dimensions have " +
                          Twine(inner));
      return failure();
    }
    return reshape(node, *v, {inner});
  };
  auto scale = affine(1, 1.0);
  if (failed(scale))
    return failure();
  auto bias = affine(2, 0.0);
  if (failed(bias))
    return failure();
  Value r = ddlc::LayerNormOp::create(
      builder, loc, input.getType(), input, *scale, *bias,
      builder.getF64FloatAttr(floatAttr(node, "epsilon", 1e-5f)));
  auto out = reshape(node, r, t.getShape());
  if (failed(out))
    return failure();
  define(node, 0, *out);
  return success();
}

LogicalResult OnnxImporter::importPad(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  if (stringAttr(node, "mode", "constant") != "constant")
    return nodeError(node, "only mode 'constant' is supported");
  auto pads = constInput(node, 1, "pads");
  if (failed(pads))
    return failure();
  if (hasInput(node, 2)) {
    auto v = constInput(node, 2, "the constant value");
    if (failed(v))
      return failure();
    if ((*v)->numel() != 1 ||
        ((*v)->isFloat ? (*v)->floats[0] != 0 : (*v)->ints[0] != 0))
      return nodeError(node, "only zero padding is supported");
  }
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> all((*pads)->ints.begin(), (*pads)->ints.end());
  if (hasInput(node, 3)) {
    // Opset 18: `pads` holds [begins, ends] of the listed axes only.
    auto axes = constInput(node, 3, "axes");
    if (failed(axes))
      return failure();
    int64_t n = (*axes)->ints.size();
    if (int64_t(all.size()) != 2 * n)
      return nodeError(node, "pads has " + Twine(all.size()) +
                                 " entries for " + Twine(n) + " axes");
    SmallVector<int64_t> full(2 * rank, 0);
    for (auto [i, a] : llvm::enumerate((*axes)->ints)) {
      auto ax = normAxis(node, a, rank);
      if (failed(ax))
        return failure();
      full[*ax] = all[i];
      full[*ax + rank] = all[i + n];
    }
    all = std::move(full);
  }
  if (int64_t(all.size()) != 2 * rank)
    return nodeError(node, "pads has " + Twine(all.size()) +
                               " entries for a rank-" + Twine(rank) +
                               " input");
  for (int64_t p : all) {
    if (p < 0)
      return nodeError(node, "negative pads (cropping) are not supported");
    if (p > ddlc::kMaxWindowAttr)
      return nodeError(node, "a padding of " + Twine(p) + " is larger than " +
                                 Twine(ddlc::kMaxWindowAttr));
  }
  if (readers.lookup(node.output(0)) != 1)
    return nodeError(node, "its result must have exactly one reader, a Conv "
                           "or AveragePool that absorbs the padding");
  Item item{*x, nullptr, all};
  items[node.output(0)] = item;
  return success();
}

FailureOr<Value> OnnxImporter::spatialInput(const onnx::NodeProto &node) {
  Item *item = lookup(node, 0);
  if (!item)
    return nodeError(node, "needs input 0"), failure();
  if (item->pendingPad)
    return item->value;
  return tensor(node, 0);
}

FailureOr<OnnxImporter::Window>
OnnxImporter::window(const onnx::NodeProto &node, RankedTensorType input,
                     ArrayRef<int64_t> kernel, bool oneD) {
  Window w;
  auto pair = [&](StringRef name, SmallVector<int64_t> &out) -> LogicalResult {
    out = intsAttr(node, name);
    if (oneD && out.size() == 1)
      out.insert(out.begin(), 1);
    if (out.empty())
      out = {1, 1};
    if (out.size() != 2 || out[0] < 1 || out[1] < 1 ||
        out[0] > ddlc::kMaxWindowAttr || out[1] > ddlc::kMaxWindowAttr)
      return nodeError(node, "'" + name + "' must be two positive numbers "
                             "of at most " + Twine(ddlc::kMaxWindowAttr));
    return success();
  };
  if (failed(pair("strides", w.strides)) ||
      failed(pair("dilations", w.dilations)))
    return failure();
  int64_t h = input.getDimSize(2), wd = input.getDimSize(3);
  // Bounds that keep every window computation below within int64_t.
  for (int i = 0; i < 2; ++i)
    if (kernel[i] < 1 || kernel[i] > ddlc::kMaxWindowAttr)
      return nodeError(node, "the kernel must be two positive numbers of at "
                             "most " + Twine(ddlc::kMaxWindowAttr)),
             failure();
  if (h > kMaxSpatialDim || wd > kMaxSpatialDim)
    return nodeError(node, "a spatial dimension of the input is larger than " +
                               Twine(kMaxSpatialDim)),
           failure();
  std::string autoPad = stringAttr(node, "auto_pad", "NOTSET");
  SmallVector<int64_t> pads = intsAttr(node, "pads");
  if (oneD && pads.size() == 2)
    pads = {0, pads[0], 0, pads[1]};
  if (autoPad == "NOTSET") {
    if (pads.empty())
      pads = {0, 0, 0, 0};
    if (pads.size() != 4 || llvm::any_of(pads, [](int64_t p) {
          return p < 0 || p > ddlc::kMaxWindowAttr;
        }))
      return nodeError(node, "'pads' must be four non-negative numbers of "
                             "at most " + Twine(ddlc::kMaxWindowAttr)),
             failure();
  } else if (autoPad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // Output size ceil(in / stride); the odd padding goes at the end for
    // SAME_UPPER, at the beginning for SAME_LOWER.
    pads.assign(4, 0);
    int64_t in[2] = {h, wd};
    for (int i = 0; i < 2; ++i) {
      int64_t out = (in[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1 -
                 in[i]);
      int64_t small = total / 2, big = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : big;
      pads[i + 2] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else {
    return nodeError(node, "unknown auto_pad '" + autoPad + "'"), failure();
  }
  w.padding = pads; // ONNX's [h_begin, w_begin, h_end, w_end] is dlc's order.
  if (Item *item = lookup(node, 0); item && item->pendingPad) {
    SmallVector<int64_t> p = *item->pendingPad; // [begins..., ends...]
    if (oneD && p.size() == 6) // [N, C, L]: the [N, C, 1, L] view's pads.
      p = {p[0], p[1], 0, p[2], p[3], p[4], 0, p[5]};
    if (p.size() != 8)
      return nodeError(node, "a Pad before a 1-D Conv or pool is not "
                             "supported"),
             failure();
    if (p[0] || p[1] || p[4] || p[5])
      return nodeError(node, "the Pad before it pads the batch or channel "
                             "dimension"),
             failure();
    w.padding[0] += p[2];
    w.padding[1] += p[3];
    w.padding[2] += p[6];
    w.padding[3] += p[7];
    w.padded = p[2] || p[3] || p[6] || p[7];
    if (llvm::any_of(w.padding,
                     [](int64_t v) { return v > ddlc::kMaxWindowAttr; }))
      return nodeError(node, "the padding with the Pad before it is larger "
                             "than " + Twine(ddlc::kMaxWindowAttr)),
             failure();
  }
  for (int i = 0; i < 2; ++i) {
    int64_t in = i == 0 ? h : wd;
    int64_t span = (kernel[i] - 1) * w.dilations[i] + 1;
    if (in + w.padding[i] + w.padding[i + 2] < span)
      return nodeError(node, "the window (" + Twine(span) +
                                 ") is larger than the padded input (" +
                                 Twine(in + w.padding[i] + w.padding[i + 2]) +
                                 ")"),
             failure();
  }
  return w;
}

LogicalResult OnnxImporter::importConv(const onnx::NodeProto &node) {
  auto x = spatialInput(node);
  if (failed(x))
    return failure();
  auto w = tensor(node, 1);
  if (failed(w))
    return failure();
  auto tx = typeOf(*x), tw = typeOf(*w);
  // A 1-D convolution is a 2-D one on [N, C, 1, L] with a [O, C, 1, K]
  // weight; the result is viewed back as [N, O, L'].
  bool oneD = tx.getRank() == 3 && tw.getRank() == 3;
  if (oneD) {
    auto x4 = reshape(node, *x,
                      {tx.getDimSize(0), tx.getDimSize(1), 1, tx.getDimSize(2)});
    auto w4 = reshape(node, *w,
                      {tw.getDimSize(0), tw.getDimSize(1), 1, tw.getDimSize(2)});
    if (failed(x4) || failed(w4))
      return failure();
    x = x4;
    w = w4;
    tx = typeOf(*x);
    tw = typeOf(*w);
  }
  if (tx.getRank() != 4 || tw.getRank() != 4)
    return nodeError(node, "dlc supports 1-D and 2-D convolutions (rank-3 or "
                           "rank-4 input and weight), not rank " +
                               Twine(tx.getRank()));
  int64_t groups = intAttr(node, "group", 1);
  int64_t o = tw.getDimSize(0), c = tx.getDimSize(1);
  if (groups < 1 || c % groups || o % groups || tw.getDimSize(1) != c / groups)
    return nodeError(node, "weight " + Twine(o) + "x" +
                               Twine(tw.getDimSize(1)) + "x... does not match " +
                               Twine(c) + " input channels in " +
                               Twine(groups) + " groups");
  SmallVector<int64_t> kernel = {tw.getDimSize(2), tw.getDimSize(3)};
  SmallVector<int64_t> ks = intsAttr(node, "kernel_shape");
  if (oneD && ks.size() == 1)
    ks.insert(ks.begin(), 1);
  if (!ks.empty() && ArrayRef<int64_t>(ks) != ArrayRef<int64_t>(kernel))
    return nodeError(node, "kernel_shape does not match the weight");
  auto win = window(node, tx, kernel, oneD);
  if (failed(win))
    return failure();
  Value bias;
  if (hasInput(node, 2)) {
    auto b = tensor(node, 2);
    if (failed(b))
      return failure();
    if (typeOf(*b).getRank() != 1 || typeOf(*b).getDimSize(0) != o)
      return nodeError(node, "the bias must have " + Twine(o) + " elements");
    bias = *b;
  }
  SmallVector<int64_t> shape = {tx.getDimSize(0), o};
  for (int i = 0; i < 2; ++i)
    shape.push_back(ddlc::windowOutputSize(
        tx.getDimSize(2 + i), kernel[i], win->strides[i], win->padding[i],
        win->padding[i + 2], win->dilations[i]));
  Value r = ddlc::Conv2DOp::create(
      builder, nodeLoc(node), RankedTensorType::get(shape, tx.getElementType()),
      *x, *w, bias, win->strides, win->padding, win->dilations, groups,
      "none");
  if (oneD) {
    auto r3 = reshape(node, r, {shape[0], shape[1], shape[3]});
    if (failed(r3))
      return failure();
    r = *r3;
  }
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importPool(const onnx::NodeProto &node) {
  bool isMax = node.op_type() == "MaxPool";
  auto x = spatialInput(node);
  if (failed(x))
    return failure();
  auto tx = typeOf(*x);
  // A 1-D pool is a 2-D one on an [N, C, 1, L] view.
  bool oneD = tx.getRank() == 3;
  if (oneD) {
    auto x4 = reshape(node, *x,
                      {tx.getDimSize(0), tx.getDimSize(1), 1, tx.getDimSize(2)});
    if (failed(x4))
      return failure();
    x = x4;
    tx = typeOf(*x);
  }
  if (tx.getRank() != 4)
    return nodeError(node, "dlc supports 1-D and 2-D pooling (a rank-3 or "
                           "rank-4 input), not rank " +
                               Twine(tx.getRank()));
  bool ceil = intAttr(node, "ceil_mode", 0) != 0;
  if (ceil && !isMax && intAttr(node, "count_include_pad", 0))
    return nodeError(node, "ceil_mode = 1 with count_include_pad = 1 is not "
                           "supported")
           << "; export with ceil_mode=False or count_include_pad=False";
  if (isMax && intAttr(node, "storage_order", 0))
    return nodeError(node, "storage_order = 1 is not supported");
  if (isMax && failed(onlyFirstOutputUsed(node)))
    return failure();
  SmallVector<int64_t> kernel = intsAttr(node, "kernel_shape");
  if (oneD && kernel.size() == 1)
    kernel.insert(kernel.begin(), 1);
  if (kernel.size() != 2 || kernel[0] < 1 || kernel[1] < 1 ||
      kernel[0] > ddlc::kMaxWindowAttr || kernel[1] > ddlc::kMaxWindowAttr)
    return nodeError(node, "kernel_shape must be two positive numbers of at "
                           "most " + Twine(ddlc::kMaxWindowAttr));
  auto win = window(node, tx, kernel, oneD);
  if (failed(win))
    return failure();
  if (ceil) {
    // The last, partial windows: extra end padding (-inf for a max, not
    // counted by an average that excludes padding), with PyTorch's rule
    // that a window starts inside the input or its begin padding.
    for (int i = 0; i < 2; ++i) {
      int64_t in = tx.getDimSize(2 + i);
      int64_t size = in + win->padding[i] + win->padding[i + 2];
      int64_t span = win->dilations[i] * (kernel[i] - 1) + 1;
      int64_t out = (size - span + win->strides[i] - 1) / win->strides[i] + 1;
      if ((out - 1) * win->strides[i] >= in + win->padding[i])
        --out;
      win->padding[i + 2] +=
          std::max<int64_t>(0, (out - 1) * win->strides[i] + span - size);
    }
  }
  if (isMax && win->padded)
    return nodeError(node, "reads a zero Pad; MaxPool pads with -inf, so the "
                           "Pad cannot be absorbed");
  SmallVector<int64_t> shape = {tx.getDimSize(0), tx.getDimSize(1)};
  for (int i = 0; i < 2; ++i)
    shape.push_back(ddlc::windowOutputSize(
        tx.getDimSize(2 + i), kernel[i], win->strides[i], win->padding[i],
        win->padding[i + 2], win->dilations[i]));
  auto type = RankedTensorType::get(shape, tx.getElementType());
  Location loc = nodeLoc(node);
  Value r;
  if (isMax) {
    r = ddlc::MaxPool2DOp::create(builder, loc, type, *x, kernel,
                                  win->strides, win->padding, win->dilations);
  } else {
    if (win->dilations != SmallVector<int64_t>{1, 1})
      return nodeError(node, "AveragePool with dilations is not supported");
    bool countPad = intAttr(node, "count_include_pad", 0) != 0;
    if (win->padded && !countPad) {
      // Zeros from the Pad count; the pool's own padding must not exist.
      SmallVector<int64_t> own = intsAttr(node, "pads");
      if (llvm::any_of(own, [](int64_t p) { return p != 0; }) ||
          stringAttr(node, "auto_pad", "NOTSET") != "NOTSET")
        return nodeError(node, "a zero Pad before an AveragePool that pads "
                               "again without counting the padding is not "
                               "supported");
      countPad = true;
    }
    r = ddlc::AvgPool2DOp::create(builder, loc, type, *x, kernel, win->strides,
                                  win->padding, countPad);
  }
  if (oneD) {
    auto r3 = reshape(node, r, {shape[0], shape[1], shape[3]});
    if (failed(r3))
      return failure();
    r = *r3;
  }
  define(node, 0, r);
  return success();
}

LogicalResult
OnnxImporter::importGlobalAveragePool(const onnx::NodeProto &node) {
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  if (t.getRank() < 3)
    return nodeError(node, "needs an [N, C, spatial...] input");
  SmallVector<int64_t> dims, shape = {t.getDimSize(0), t.getDimSize(1)};
  for (int64_t i = 2; i < t.getRank(); ++i) {
    dims.push_back(i);
    shape.push_back(1);
  }
  Value r = ddlc::MeanOp::create(builder, nodeLoc(node),
                                 RankedTensorType::get(shape,
                                                       t.getElementType()),
                                 *x, dims, true);
  define(node, 0, r);
  return success();
}

LogicalResult OnnxImporter::importBatchNorm(const onnx::NodeProto &node) {
  if (intAttr(node, "training_mode", 0))
    return nodeError(node, "training_mode = 1 is not supported; dlc imports "
                           "BatchNormalization in inference form");
  if (failed(onlyFirstOutputUsed(node)))
    return failure();
  auto x = tensor(node, 0);
  if (failed(x))
    return failure();
  auto t = typeOf(*x);
  if (t.getRank() < 2)
    return nodeError(node, "needs an [N, C, ...] input");
  int64_t c = t.getDimSize(1);
  SmallVector<Value> params;
  for (int i = 1; i <= 4; ++i) {
    auto v = tensor(node, i);
    if (failed(v))
      return failure();
    if (typeOf(*v).getRank() != 1 || typeOf(*v).getDimSize(0) != c)
      return nodeError(node, "input " + Twine(i) + " must have " + Twine(c) +
                                 " elements (one per channel)");
    params.push_back(*v);
  }
  Value r = ddlc::BatchNormOp::create(
      builder, nodeLoc(node), t, *x, params[0], params[1], params[2],
      params[3], builder.getF64FloatAttr(floatAttr(node, "epsilon", 1e-5f)));
  define(node, 0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

LogicalResult OnnxImporter::foldConstantNode(const onnx::NodeProto &node,
                                             bool &folded) {
  StringRef op = node.op_type();
  folded = false;
  auto constant = [&](int i) -> Constant * {
    Item *it = lookup(node, i);
    return it && it->constant && !it->value ? it->constant.get() : nullptr;
  };
  auto intConst = [&](int i) -> Constant * {
    Constant *c = constant(i);
    return c && !c->isFloat ? c : nullptr;
  };
  auto result = [&](SmallVector<int64_t> shape, std::vector<int64_t> ints) {
    auto c = std::make_shared<Constant>();
    c->shape = std::move(shape);
    c->ints = std::move(ints);
    defineConst(node, 0, c);
    folded = true;
    return success();
  };

  if (op == "Shape") {
    // Every shape is static: Shape is always a constant.
    Item *in = lookup(node, 0);
    if (!in)
      return nodeError(node, "needs one input");
    SmallVector<int64_t> shape;
    if (in->value)
      shape.assign(typeOf(in->value).getShape().begin(),
                   typeOf(in->value).getShape().end());
    else if (in->constant)
      shape = in->constant->shape;
    else
      return success();
    int64_t rank = shape.size();
    int64_t start = intAttr(node, "start", 0), end = intAttr(node, "end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    std::vector<int64_t> dims;
    for (int64_t i = start; i < end; ++i)
      dims.push_back(shape[i]);
    return result({int64_t(dims.size())}, dims);
  }
  if (op == "Constant" || node.input_size() == 0)
    return success();
  if (failed(foldFloatConstant(node, folded)))
    return failure();
  if (folded)
    return success();
  if (failed(foldMaskConstant(node, folded)))
    return failure();
  if (folded)
    return success();
  // The ops below fold when every input is an int64 constant.
  for (int i = 0; i < node.input_size(); ++i)
    if (hasInput(node, i) && !intConst(i))
      return success();
  Constant *a = intConst(0);
  if (!a)
    return success();
  int64_t rank = a->shape.size();

  if (op == "Identity")
    return result(a->shape, a->ints);
  if (op == "Cast") {
    int64_t to = intAttr(node, "to", 0);
    if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32)
      return success();
    return result(a->shape, a->ints);
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    Constant *b = intConst(1);
    if (!b)
      return success();
    if (a->numel() != b->numel() && a->numel() != 1 && b->numel() != 1)
      return nodeError(node, "integer operands of different sizes");
    // A one-element operand broadcasts, also against an empty one.
    const Constant *big = a;
    if (a->numel() == 1 && (b->numel() != 1 || b->shape.size() > a->shape.size()))
      big = b;
    std::vector<int64_t> out(big->numel());
    for (int64_t i = 0; i < big->numel(); ++i) {
      int64_t x = a->ints[a->numel() == 1 ? 0 : i];
      int64_t y = b->ints[b->numel() == 1 ? 0 : i];
      if (op == "Div" && y == 0)
        return nodeError(node, "integer division by zero");
      std::optional<int64_t> r =
          op == "Add"   ? llvm::checkedAdd(x, y)
          : op == "Sub" ? llvm::checkedSub(x, y)
          : op == "Mul" ? llvm::checkedMul(x, y)
          : (x == INT64_MIN && y == -1) ? std::nullopt
                                        : std::optional<int64_t>(x / y);
      if (!r)
        return nodeError(node, "integer overflow in " + op + " of " +
                                   Twine(x) + " and " + Twine(y));
      out[i] = *r;
    }
    return result(big->shape, out);
  }
  if (op == "ReduceProd") {
    // torch.var/std with a dynamic batch: the element count of a shape.
    SmallVector<int64_t> axes = intsAttr(node, "axes");
    if (Constant *c = intConst(1))
      axes.assign(c->ints.begin(), c->ints.end());
    if (rank != 1 && !axes.empty() && int64_t(axes.size()) != rank)
      return nodeError(node, "dlc folds ReduceProd of integer tensors over "
                             "all dimensions only");
    int64_t p = 1;
    for (int64_t v : a->ints) {
      std::optional<int64_t> r = llvm::checkedMul(p, v);
      if (!r)
        return nodeError(node, "integer overflow in ReduceProd");
      p = *r;
    }
    bool keep = intAttr(node, "keepdims", 1) != 0;
    return result(keep ? SmallVector<int64_t>(rank, 1) : SmallVector<int64_t>(),
                  {p});
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    SmallVector<int64_t> axes;
    if (Constant *c = intConst(1))
      axes.assign(c->ints.begin(), c->ints.end());
    else
      axes = intsAttr(node, "axes");
    SmallVector<int64_t> shape;
    if (op == "Unsqueeze") {
      int64_t outRank = rank + axes.size();
      SmallVector<bool> isNew(outRank, false);
      for (int64_t ax : axes) {
        auto n = normAxis(node, ax, outRank);
        if (failed(n))
          return failure();
        isNew[*n] = true;
      }
      int64_t src = 0;
      for (int64_t i = 0; i < outRank; ++i)
        shape.push_back(isNew[i] ? 1 : a->shape[src++]);
    } else {
      for (int64_t i = 0; i < rank; ++i)
        if (a->shape[i] != 1 ||
            (!axes.empty() && !llvm::is_contained(axes, i) &&
             !llvm::is_contained(axes, i - rank)))
          shape.push_back(a->shape[i]);
    }
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (n != a->numel())
      return nodeError(node, "invalid axes");
    return result(shape, a->ints);
  }
  if (op == "Concat") {
    std::vector<int64_t> out;
    for (int i = 0; i < node.input_size(); ++i) {
      Constant *c = intConst(i);
      if (!c)
        return nodeError(node, "input " + Twine(i) + " is absent");
      if (c->shape.size() != 1)
        return nodeError(node, "dlc folds Concat of 1-D integer tensors only");
      out.insert(out.end(), c->ints.begin(), c->ints.end());
    }
    return result({int64_t(out.size())}, out);
  }
  if (op == "Gather") {
    Constant *idx = intConst(1);
    if (!idx || rank != 1 || intAttr(node, "axis", 0) != 0)
      return nodeError(node, "dlc folds Gather of a 1-D integer tensor along "
                             "axis 0 only");
    std::vector<int64_t> out;
    for (int64_t i : idx->ints) {
      if (i < -a->numel() || i >= a->numel())
        return nodeError(node, "index " + Twine(i) + " is out of range");
      out.push_back(a->ints[i < 0 ? i + a->numel() : i]);
    }
    return result(idx->shape, out);
  }
  if (op == "Slice") {
    if (rank != 1)
      return nodeError(node, "dlc folds Slice of 1-D integer tensors only");
    Constant *starts = intConst(1), *ends = intConst(2);
    Constant *steps = intConst(4);
    if (!starts || !ends || starts->numel() != 1 || ends->numel() != 1)
      return nodeError(node, "dlc folds Slice with one constant start and end");
    int64_t n = a->numel();
    int64_t step = steps && steps->numel() == 1 ? steps->ints[0] : 1;
    if (step != 1)
      return nodeError(node, "dlc folds Slice with step 1 only");
    int64_t s = starts->ints[0], e = ends->ints[0];
    s = std::clamp<int64_t>(s < 0 ? s + n : s, 0, n);
    e = std::clamp<int64_t>(e < 0 ? e + n : e, 0, n);
    std::vector<int64_t> out;
    for (int64_t i = s; i < e; ++i)
      out.push_back(a->ints[i]);
    return result({int64_t(out.size())}, out);
  }
  return success();
}


LogicalResult OnnxImporter::foldMaskConstant(const onnx::NodeProto &node,
                                             bool &folded) {
  StringRef op = node.op_type();
  folded = false;
  // Large enough for a causal mask of a long sequence.
  constexpr int64_t kMaxMask = int64_t(1) << 22;
  auto constant = [&](int i) -> Constant * {
    Item *it = lookup(node, i);
    if (!it || !it->constant || it->value || it->constant->external)
      return nullptr;
    Constant *c = it->constant.get();
    if ((c->isFloat && !c->initializer.empty()) || c->numel() > kMaxMask)
      return nullptr;
    return c;
  };
  auto value = [](const Constant *c, int64_t i) {
    return c->isFloat ? c->floats[i] : double(c->ints[i]);
  };
  auto define = [&](SmallVector<int64_t> shape, bool isFloat, Type et,
                    std::vector<double> v) {
    auto c = std::make_shared<Constant>();
    c->shape = std::move(shape);
    c->isFloat = isFloat;
    if (isFloat) {
      c->elementType = et;
      c->floats = std::move(v);
    } else {
      c->ints.assign(v.begin(), v.end());
    }
    defineConst(node, 0, c);
    folded = true;
    return success();
  };
  auto tooLarge = [&](ArrayRef<int64_t> shape) {
    for (int64_t d : shape)
      if (d < 0 || d > kMaxMask)
        return true;
    return numElements(shape) > kMaxMask;
  };

  static const llvm::StringSet<> binaryOps = {
      "Mod", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
      "And", "Or", "Xor"};
  if (binaryOps.contains(op)) {
    Constant *a = constant(0), *b = constant(1);
    if (!a || !b)
      return success();
    auto shape = broadcastShapes(a->shape, b->shape);
    if (!shape)
      return nodeError(node, "operands of shapes that do not broadcast");
    if (tooLarge(*shape))
      return success();
    bool isFloat = op == "Mod" && (a->isFloat || b->isFloat);
    bool fmod = intAttr(node, "fmod", 0) != 0;
    std::vector<double> out(numElements(*shape));
    for (int64_t i = 0; i < int64_t(out.size()); ++i) {
      double x = value(a, broadcastOffset(i, *shape, a->shape));
      double y = value(b, broadcastOffset(i, *shape, b->shape));
      if (op == "Mod") {
        if (y == 0)
          return nodeError(node, "Mod by zero");
        double r = std::fmod(x, y);
        // fmod = 0: the sign of the divisor, as Python's %.
        if (!fmod && r != 0 && ((r < 0) != (y < 0)))
          r += y;
        out[i] = r;
      } else {
        out[i] = op == "Equal"            ? x == y
                 : op == "Less"           ? x < y
                 : op == "Greater"        ? x > y
                 : op == "LessOrEqual"    ? x <= y
                 : op == "GreaterOrEqual" ? x >= y
                 : op == "And"            ? (x != 0 && y != 0)
                 : op == "Or"             ? (x != 0 || y != 0)
                                          : ((x != 0) != (y != 0));
      }
    }
    Type et = a->isFloat ? a->elementType : b->elementType;
    return define(*shape, isFloat, et, out);
  }
  if (op == "Not") {
    Constant *a = constant(0);
    if (!a || a->isFloat)
      return success();
    std::vector<double> out;
    for (int64_t v : a->ints)
      out.push_back(v == 0);
    return define(a->shape, false, Type(), out);
  }
  if (op == "Where") {
    Constant *c = constant(0), *x = constant(1), *y = constant(2);
    if (!c || !x || !y || c->isFloat)
      return success();
    auto shape = broadcastShapes(c->shape, x->shape);
    if (shape)
      shape = broadcastShapes(*shape, y->shape);
    if (!shape)
      return nodeError(node, "operands of shapes that do not broadcast");
    if (tooLarge(*shape) || x->isFloat != y->isFloat)
      return success();
    std::vector<double> out(numElements(*shape));
    for (int64_t i = 0; i < int64_t(out.size()); ++i)
      out[i] = c->ints[broadcastOffset(i, *shape, c->shape)]
                   ? value(x, broadcastOffset(i, *shape, x->shape))
                   : value(y, broadcastOffset(i, *shape, y->shape));
    return define(*shape, x->isFloat, x->elementType, out);
  }
  if (op == "Expand") {
    Constant *a = constant(0), *s = constant(1);
    if (!a || !s || s->isFloat)
      return success();
    SmallVector<int64_t> want(s->ints.begin(), s->ints.end());
    auto shape = broadcastShapes(a->shape, want);
    if (!shape)
      return nodeError(node, "cannot expand " + Twine(a->shape.size()) +
                                 "-D operand to the given shape");
    if (tooLarge(*shape))
      return success();
    std::vector<double> out(numElements(*shape));
    for (int64_t i = 0; i < int64_t(out.size()); ++i)
      out[i] = value(a, broadcastOffset(i, *shape, a->shape));
    return define(*shape, a->isFloat, a->elementType, out);
  }
  if (op == "ConstantOfShape") {
    Constant *s = constant(0);
    if (!s || s->isFloat)
      return success();
    SmallVector<int64_t> shape(s->ints.begin(), s->ints.end());
    if (tooLarge(shape))
      return success();
    bool isFloat = true;
    double v = 0;
    Type et = builder.getF32Type();
    if (const auto *a = attr(node, "value")) {
      auto c = readTensor(a->t(), "the value of ConstantOfShape", nodeLoc(node));
      if (failed(c))
        return failure();
      if ((*c)->numel() != 1)
        return nodeError(node, "value must have one element");
      isFloat = (*c)->isFloat;
      et = (*c)->elementType;
      v = value(c->get(), 0);
    }
    return define(shape, isFloat, et,
                  std::vector<double>(numElements(shape), v));
  }
  if (op == "Range") {
    Constant *st = constant(0), *li = constant(1), *de = constant(2);
    if (!st || !li || !de || st->numel() != 1 || li->numel() != 1 ||
        de->numel() != 1)
      return success();
    double start = value(st, 0), limit = value(li, 0), delta = value(de, 0);
    if (delta == 0)
      return nodeError(node, "a delta of 0");
    double count = std::max(0.0, std::ceil((limit - start) / delta));
    if (count > double(kMaxMask))
      return success();
    std::vector<double> out;
    for (int64_t i = 0; i < int64_t(count); ++i)
      out.push_back(start + double(i) * delta);
    return define({int64_t(out.size())}, st->isFloat, st->elementType, out);
  }
  if (op == "Cast") {
    // To bool or an integer type; casts to float are foldFloatConstant's.
    Constant *a = constant(0);
    int64_t to = intAttr(node, "to", 0);
    if (!a || (to != onnx::TensorProto::BOOL &&
               to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32))
      return success();
    std::vector<double> out(a->numel());
    for (int64_t i = 0; i < a->numel(); ++i) {
      double v = value(a, i);
      out[i] = to == onnx::TensorProto::BOOL ? double(v != 0) : std::trunc(v);
    }
    return define(a->shape, false, Type(), out);
  }
  if (op == "Reshape") {
    // Integer tensors only (float data is reshaped by the model).
    Constant *a = constant(0), *sc = constant(1);
    if (!a || a->isFloat || !sc || sc->isFloat)
      return success();
    bool allowZero = intAttr(node, "allowzero", 0) != 0;
    SmallVector<int64_t> shape;
    int64_t known = 1, infer = -1;
    for (auto [i, d] : llvm::enumerate(sc->ints)) {
      if (d == 0 && !allowZero) {
        if (i >= a->shape.size())
          return nodeError(node, "a 0 in the shape copies a dimension the "
                                 "input lacks");
        d = a->shape[i];
      }
      if (d == -1) {
        if (infer >= 0)
          return nodeError(node, "more than one -1 in the shape");
        infer = int64_t(i);
        shape.push_back(1);
        continue;
      }
      if (d < 0)
        return nodeError(node, "a negative dimension in the shape");
      shape.push_back(d);
      known *= d;
    }
    if (infer >= 0)
      shape[infer] = known ? a->numel() / known : 0;
    if (numElements(shape) != a->numel())
      return nodeError(node, "cannot reshape " + Twine(a->numel()) +
                                 " elements into " +
                                 Twine(numElements(shape)));
    std::vector<double> out(a->ints.begin(), a->ints.end());
    return define(shape, false, Type(), out);
  }
  if (op == "Trilu") {
    Constant *a = constant(0);
    if (!a || a->shape.size() < 2)
      return success();
    int64_t k = 0;
    if (hasInput(node, 1)) {
      Constant *kc = constant(1);
      if (!kc || kc->isFloat || kc->numel() != 1)
        return success();
      k = kc->ints[0];
    }
    bool upper = intAttr(node, "upper", 1) != 0;
    int64_t rows = a->shape[a->shape.size() - 2], cols = a->shape.back();
    std::vector<double> out(a->numel());
    for (int64_t i = 0; i < a->numel(); ++i) {
      int64_t c = i % cols, r = (i / cols) % rows;
      bool keep = upper ? c - r >= k : c - r <= k;
      out[i] = keep ? value(a, i) : 0.0;
    }
    return define(a->shape, a->isFloat, a->elementType, out);
  }
  return success();
}

LogicalResult OnnxImporter::foldFloatConstant(const onnx::NodeProto &node,
                                              bool &folded) {
  // Float arithmetic on constants that are not parameters: a Cast of a
  // folded dimension, Constant nodes. Exporters emit it around shapes, e.g.
  // `q @ k.T * (C // h) ** -0.5` or torch.var's `n / (n - 1)` with a dynamic
  // batch. Each result is rounded to its element type, as ONNX computes.
  StringRef op = node.op_type();
  folded = false;
  auto constant = [&](int i) -> Constant * {
    Item *it = lookup(node, i);
    return it && it->constant ? it->constant.get() : nullptr;
  };
  auto floatConst = [&](int i) -> Constant * {
    Constant *c = constant(i);
    return c && c->isFloat && c->initializer.empty() ? c : nullptr;
  };
  auto round = [](Type et, double v) {
    APFloat f(v);
    bool lost;
    f.convert(cast<FloatType>(et).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  };
  auto result = [&](Type et, SmallVector<int64_t> shape,
                    std::vector<double> floats) {
    auto c = std::make_shared<Constant>();
    c->isFloat = true;
    c->elementType = et;
    c->shape = std::move(shape);
    for (double &v : floats)
      v = round(et, v);
    c->floats = std::move(floats);
    defineConst(node, 0, c);
    folded = true;
    return success();
  };
  // Small constants only: anything larger is computed by the model.
  constexpr int64_t kMaxFolded = 4096;

  if (op == "Cast") {
    Constant *a = constant(0);
    if (!a || (a->isFloat && !a->initializer.empty()) ||
        a->numel() > kMaxFolded)
      return success();
    Type et;
    switch (intAttr(node, "to", 0)) {
    case onnx::TensorProto::FLOAT: et = builder.getF32Type(); break;
    case onnx::TensorProto::FLOAT16: et = builder.getF16Type(); break;
    case onnx::TensorProto::BFLOAT16: et = builder.getBF16Type(); break;
    default: return success(); // int casts fold below
    }
    std::vector<double> out = a->isFloat
        ? a->floats : std::vector<double>(a->ints.begin(), a->ints.end());
    return result(et, a->shape, out);
  }
  bool unary = op == "Sqrt" || op == "Neg";
  bool binary = op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
                op == "Pow";
  if (!unary && !binary)
    return success();
  Constant *a = floatConst(0);
  if (!a || a->numel() > kMaxFolded)
    return success();
  if (unary) {
    std::vector<double> out = a->floats;
    for (double &v : out)
      v = op == "Sqrt" ? std::sqrt(v) : -v;
    return result(a->elementType, a->shape, out);
  }
  Constant *b = constant(1);
  if (!b || (b->isFloat && !b->initializer.empty()) ||
      (!b->isFloat && op != "Pow") || b->numel() > kMaxFolded ||
      (b->isFloat && b->elementType != a->elementType))
    return success();
  // Equal shapes or a scalar operand; anything else is left to the model.
  SmallVector<int64_t> shape;
  if (a->shape == b->shape)
    shape = a->shape;
  else if (b->numel() == 1 && b->shape.size() <= a->shape.size())
    shape = a->shape;
  else if (a->numel() == 1 && a->shape.size() <= b->shape.size())
    shape = b->shape;
  else
    return success();
  std::vector<double> out(a->numel() == 1 ? b->numel() : a->numel());
  for (size_t i = 0; i < out.size(); ++i) {
    double x = a->floats[a->numel() == 1 ? 0 : i];
    double y = b->isFloat ? b->floats[b->numel() == 1 ? 0 : i]
                          : double(b->ints[b->numel() == 1 ? 0 : i]);
    out[i] = op == "Add" ? x + y : op == "Sub" ? x - y : op == "Mul" ? x * y
             : op == "Div" ? x / y : std::pow(x, y);
  }
  return result(a->elementType, shape, out);
}

} // namespace

namespace dlc {
OwningOpRef<ModuleOp> importOnnxModel(StringRef bytes, StringRef fileName,
                                      MLIRContext &ctx,
                                      const OnnxImportOptions &options) {
  OnnxImporter importer(ctx, fileName, options);
  return importer.import(bytes);
}
} // namespace dlc
