//===- Importer.h - The ONNX importer's state and op handlers --*- C++ -*-===//
//
// One pass over the graph's nodes (ONNX requires topological order). Every
// name maps to an `Item`: either an SSA value of the function being built,
// or a constant known at import time (an initializer, a `Constant` node, or
// the int64 shape arithmetic exporters emit around `Reshape`), which is only
// turned into IR when a float op reads it. Float initializers become
// `dlc.parameter`s with their data embedded; one-element float constants
// become `dlc.fill`, so that dlc-raise-decompositions can match them.
//
// The importer is split by op family, one file each in this directory
// (Importer.cpp: the model, graph, operands and the op table; Elementwise,
// Contraction, Shape, DataMovement, Normalization, Spatial, Recurrent;
// Folding: the constant folding of shapes and scalars, MaskFolding: that of
// masks). Adding an op touches the table in Importer.cpp and its family's
// file.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_FRONTEND_ONNX_IMPORTER_H
#define DLC_LIB_FRONTEND_ONNX_IMPORTER_H

#include "dlc/Frontend/OnnxImporter.h"

#include "ExternalData.h"
#include "dlc/Dialect/Dlc/IR/DlcDialect.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"
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
#include <limits>
#include <numeric>
#include <optional>

using namespace mlir;

namespace dlc::onnx_import {

using namespace mlir;
namespace ddlc = mlir::dlc;

/// Tensors above this many elements are rejected (a corrupt dims field).
inline constexpr int64_t kMaxElements = int64_t(1) << 40;

/// External float tensors above this many elements are not decoded: they
/// become parameters straight from the mapped file.
inline constexpr int64_t kMaxDecodedExternal = 4096;

/// Convolution and pool inputs above this size along a spatial dimension
/// are rejected, so that window arithmetic on them cannot overflow.
inline constexpr int64_t kMaxSpatialDim = int64_t(1) << 32;

/// A tensor known at import time. Float tensors keep their values as
/// double (exact for f32/f16/bf16) and the element type they had; integer
/// tensors (shapes, axes, indices) as int64.
/// Where a value holds the overridden batch: dimension `dim`, whose size
/// is `outer` x batch x `inner` (a reshape merged the batch with the
/// dimensions around it; both 1 when the dimension is the batch).
struct BatchDim {
  int64_t dim = 0;
  int64_t outer = 1;
  int64_t inner = 1;
  bool alone() const { return outer == 1 && inner == 1; }
};

struct Constant {
  bool isFloat = false;
  Type elementType; ///< For float constants: f32, f16 or bf16.
  SmallVector<int64_t> shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  /// The initializer's name when this is one: it becomes a parameter.
  std::string initializer;
  /// Stored in the file (an initializer or a Constant node), not computed
  /// during the import: a static export's shape, which may hold the
  /// exported batch (BatchDim.cpp).
  bool written = false;
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
/// Constant node, an initializer holding a non-finite or float-extreme
/// value, and a one-element initializer whose name is not a module path
/// (`val_68`, `onnx::Mul_12`, not `head.bias`: a Linear with one output)
/// are constants; every other float initializer is trained.
inline bool isTrainable(const Constant &c) {
  if (c.initializer.empty())
    return false;
  if (c.numel() == 1) {
    // A state_dict name: identifiers joined by dots, at least one dot.
    StringRef name = c.initializer;
    SmallVector<StringRef> parts;
    name.split(parts, '.');
    bool modulePath = parts.size() > 1 && llvm::all_of(parts, [](StringRef p) {
                        return !p.empty() && llvm::all_of(p, [](char ch) {
                          return llvm::isAlnum(ch) || ch == '_';
                        });
                      });
    if (!modulePath)
      return false;
  }
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
  Value value;                        ///< Set once materialised.
  std::shared_ptr<Constant> constant; ///< Known at import time.
  /// A zero `Pad` that only a following Conv or AveragePool may absorb:
  /// `value` is the unpadded input, `pads` ONNX's [begins..., ends...].
  std::optional<SmallVector<int64_t>> pendingPad;
};

inline std::string onnxTypeName(int32_t t) {
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return "float32";
  case onnx::TensorProto::UINT8:
    return "uint8";
  case onnx::TensorProto::INT8:
    return "int8";
  case onnx::TensorProto::UINT16:
    return "uint16";
  case onnx::TensorProto::INT16:
    return "int16";
  case onnx::TensorProto::INT32:
    return "int32";
  case onnx::TensorProto::INT64:
    return "int64";
  case onnx::TensorProto::STRING:
    return "string";
  case onnx::TensorProto::BOOL:
    return "bool";
  case onnx::TensorProto::FLOAT16:
    return "float16";
  case onnx::TensorProto::DOUBLE:
    return "float64";
  case onnx::TensorProto::UINT32:
    return "uint32";
  case onnx::TensorProto::UINT64:
    return "uint64";
  case onnx::TensorProto::BFLOAT16:
    return "bfloat16";
  default:
    return "element type " + std::to_string(t);
  }
}

/// Names the runtime accepts for tensors: letters, digits, '_' and '.'.
inline std::string sanitizeTensorName(StringRef name) {
  std::string s;
  for (char c : name)
    s += (isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c
                                                                          : '_';
  if (s.empty())
    s = "t";
  return s;
}

/// A C identifier for the model name (it prefixes the header's symbols).
inline std::string sanitizeModelName(StringRef name) {
  std::string s;
  for (char c : name)
    s += isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || isdigit(static_cast<unsigned char>(s[0])))
    s = "model_" + s;
  return s;
}

/// The NumPy broadcast of two shapes, or nothing when they do not broadcast.
inline std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
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
inline int64_t broadcastOffset(int64_t i, ArrayRef<int64_t> out,
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

/// The number of elements of `shape`, or INT64_MAX when the product
/// overflows, so that a check against kMaxElements refuses it (a Tile of
/// large repeats on several axes overflowed, UBSan in fuzz_onnx_importer).
inline int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    std::optional<int64_t> product = llvm::checkedMul(n, d);
    if (!product)
      return std::numeric_limits<int64_t>::max();
    n = *product;
  }
  return n;
}

inline std::string formatNumber(double v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%g", v);
  return s;
}

inline double halfToDouble(uint16_t h) {
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

inline double bf16ToDouble(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

class OnnxImporter {
public:
  using Handler = LogicalResult (OnnxImporter::*)(const onnx::NodeProto &);
  /// An op type's handler and the first default-domain opset with the op.
  struct OpHandler {
    Handler handle;
    int64_t since;
  };
  /// The op table (Importer.cpp): op type -> handler.
  static const llvm::StringMap<OpHandler> &handlers();
  /// Refuses an integer value where the op computes on floats only.
  LogicalResult checkFloatInputs(const onnx::NodeProto &node);

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
  /// After `node` is imported: marks its output when its dimension 0 is an
  /// overridden batch dimension of its inputs (batchOverridden).
  void traceBatchDim(const onnx::NodeProto &node);
  /// Attaches to `d` the hint of a shape that holds the exported batch
  /// where another batch was asked for, after `why`.
  void noteExportedBatch(InFlightDiagnostic &d, const Twine &why = "");
  /// The target shape `target` of a Reshape of `input` (`inputShape`;
  /// `allowZero`: its attribute) with the exported batch replaced by the
  /// new one in the dimension that then holds it, when `input` holds the
  /// overridden batch and every batch's elements keep their places (the
  /// batch merges with, or splits from, the dimensions around it); sets
  /// `result`. `target` unchanged otherwise.
  void batchReshapeTarget(const std::string &input,
                          ArrayRef<int64_t> inputShape, bool allowZero,
                          SmallVectorImpl<int64_t> &target,
                          std::optional<BatchDim> &result);
  /// The shape `shape` (stored in the file) of an Expand of a tensor of
  /// `inputShape` with the exported batch in dimension 0 replaced by the
  /// new one, when the input broadcasts there (a learned token repeated
  /// over the batch, as `cls_token.expand(B, -1, -1)` exports); sets
  /// `result`.
  void batchExpandShape(ArrayRef<int64_t> inputShape,
                        SmallVectorImpl<int64_t> &shape,
                        std::optional<BatchDim> &result);
  /// Expand's error for a tensor of `shape` that does not broadcast to
  /// `want`, with a hint where `shape` holds the exported batch.
  InFlightDiagnostic expandError(const onnx::NodeProto &node,
                                 ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> want);
  /// A Constant node's tensor of one repeated value (a zero initial state
  /// a TorchScript export wrote at its batch) that an Expand to the
  /// computed `shape` would fail on, or keep whole at a new batch of 1,
  /// because it holds the exported batch where `shape` holds the new one:
  /// the same value at the new batch, with the batch's dimension of the
  /// Expand's result in `result`. Null otherwise.
  std::shared_ptr<Constant> batchSplatConstant(const Constant &c,
                                               ArrayRef<int64_t> shape,
                                               std::optional<BatchDim> &result);
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
  /// A constant float32 tensor of `shape` as a constant parameter named
  /// `name` (a Where's constant condition, a Pad's border, a Resize's
  /// interpolation weights): it gets no gradient and is never trained.
  FailureOr<Value> maskTensor(const std::string &name, ArrayRef<int64_t> shape,
                              std::vector<double> values, Location loc);
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
  /// Folds one node for foldMaskConstant (MaskFolding.cpp).
  class MaskFolder;

  // Op handlers (one per ONNX op type; see handlers()).
  LogicalResult importIdentity(const onnx::NodeProto &node);
  LogicalResult importDropout(const onnx::NodeProto &node);
  LogicalResult importBinary(const onnx::NodeProto &node);
  LogicalResult importUnary(const onnx::NodeProto &node);
  LogicalResult importCompare(const onnx::NodeProto &node);
  LogicalResult importIntArith(const onnx::NodeProto &node, Type et);
  LogicalResult importCumSum(const onnx::NodeProto &node);
  LogicalResult importGatherElements(const onnx::NodeProto &node);
  LogicalResult importLogical(const onnx::NodeProto &node);
  /// Input `i` of a comparison or logical op, of element type `et` (that of
  /// the op's other, run-time operand): a value, or a one-element integer
  /// constant as a dlc.fill.
  FailureOr<Value> maskOperand(const onnx::NodeProto &node, int i, Type et);
  /// `x != 0` as booleans (a Cast to bool, a mask taken as a condition).
  Value nonZero(Location loc, Value x);
  LogicalResult importPow(const onnx::NodeProto &node);
  LogicalResult importGelu(const onnx::NodeProto &node);
  LogicalResult importComposite(const onnx::NodeProto &node);
  LogicalResult importGemm(const onnx::NodeProto &node);
  LogicalResult importMatMul(const onnx::NodeProto &node);
  LogicalResult importSoftmax(const onnx::NodeProto &node);
  LogicalResult importFlatten(const onnx::NodeProto &node);
  LogicalResult importReshape(const onnx::NodeProto &node);
  LogicalResult importSqueezeLike(const onnx::NodeProto &node);
  FailureOr<SmallVector<int64_t>> squeezedShape(const onnx::NodeProto &node,
                                                ArrayRef<int64_t> shape,
                                                ArrayRef<int64_t> axes,
                                                bool unsqueeze);
  LogicalResult importTranspose(const onnx::NodeProto &node);
  LogicalResult importConstant(const onnx::NodeProto &node);
  LogicalResult importShapeOps(const onnx::NodeProto &node);
  LogicalResult importCast(const onnx::NodeProto &node);
  LogicalResult importConcat(const onnx::NodeProto &node);
  LogicalResult importSlice(const onnx::NodeProto &node);
  LogicalResult importSplit(const onnx::NodeProto &node);
  LogicalResult importGather(const onnx::NodeProto &node);
  LogicalResult importGatherND(const onnx::NodeProto &node);
  Value joinSlices(Location loc, ArrayRef<Value> parts, int64_t axis,
                   ArrayRef<int64_t> shape, Type elementType);
  LogicalResult importExpand(const onnx::NodeProto &node);
  LogicalResult importWhere(const onnx::NodeProto &node);
  LogicalResult importTile(const onnx::NodeProto &node);
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
  LogicalResult importGroupNorm(const onnx::NodeProto &node);
  LogicalResult importConvTranspose(const onnx::NodeProto &node);
  FailureOr<bool> viewConv1DAs2D(const onnx::NodeProto &node, Value &x,
                                 Value &w);
  LogicalResult importResize(const onnx::NodeProto &node);
  /// Resize's output size and scale along each axis, from its sizes or
  /// scales input.
  LogicalResult resizeTargets(const onnx::NodeProto &node, RankedTensorType t,
                              ArrayRef<int64_t> axes,
                              SmallVectorImpl<int64_t> &out,
                              SmallVectorImpl<double> &scale);
  /// `y` with every element repeated `factor` times along axis `a`.
  FailureOr<Value> repeatAlong(const onnx::NodeProto &node, Value y, int64_t a,
                               int64_t factor);
  /// `y` resized along axis `a` to `o` positions: a matmul by the [in, o]
  /// interpolation `weights`, a constant parameter.
  FailureOr<Value> interpolateAlong(const onnx::NodeProto &node, Value y,
                                    int64_t a, int64_t o,
                                    std::vector<double> weights);
  LogicalResult importRecurrent(const onnx::NodeProto &node);
  /// Unrolls one LSTM, GRU or RNN node for importRecurrent (Recurrent.cpp).
  class RecurrentUnroller;

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
  /// The values that hold the batch --batch (or a data-parallel rank's
  /// share of the batch) changed or fixed, and where (BatchDim): the graph
  /// inputs, and what the ops that keep the batch make of them
  /// (BatchDim.cpp: traceBatchDim; batchReshapeTarget, batchExpandShape).
  llvm::StringMap<BatchDim> batchOverridden;
  /// The batch the graph inputs were exported with (their dimension 0,
  /// where every overridden input agrees; 0 otherwise): a Reshape whose
  /// constant target holds it in dimension 0 gets the new batch instead.
  int64_t exportedBatch = 0;
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

} // namespace dlc::onnx_import

#endif // DLC_LIB_FRONTEND_ONNX_IMPORTER_H
