//===- ModelInfo.cpp - model facts, descriptor text and statistics --------===//
#include "dlc/Target/ModelInfo.h"

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/dlc_runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using mlir::dlc::EntryInfo;
using mlir::dlc::ModelInfo;
using mlir::dlc::ParamInfo;
using mlir::dlc::TensorInfo;

static constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

static FailureOr<TensorInfo> tensorInfo(Location loc, StringRef name,
                                        Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return emitError(loc) << "'" << name
                          << "' must be a statically shaped tensor, got "
                          << type;
  TensorInfo info;
  info.name = name.str();
  info.dtype = mlir::dlc::elementTypeName(t.getElementType()).str();
  if (info.dtype.empty())
    return emitError(loc) << "'" << name << "' has unsupported element type "
                          << t.getElementType();
  info.shape.assign(t.getShape().begin(), t.getShape().end());
  // Below 2^48 bytes each (no machine has more), so that the sums of the
  // memory plan and report cannot overflow.
  int64_t numel = 1, bytes = 0;
  for (int64_t d : info.shape)
    if (llvm::MulOverflow(numel, d, numel))
      numel = kMaxTensorBytes + 1;
  if (numel > kMaxTensorBytes ||
      llvm::MulOverflow(numel, int64_t(t.getElementTypeBitWidth() / 8),
                        bytes) ||
      bytes > kMaxTensorBytes)
    return emitError(loc) << "'" << name << "' (" << type
                          << ") needs more than 2^48 bytes (256 TiB), more "
                             "than any machine's memory";
  info.numel = numel;
  info.bytes = bytes;
  return info;
}

/// The recurrent GEMMs of every step of a recurrent op or its gradient: the
/// gates' elements times the hidden size.
template <typename OpTy> static int64_t recurrentMultiplyAdds(OpTy op) {
  auto w = cast<RankedTensorType>(op.getRecurrentWeight().getType());
  auto gates = cast<RankedTensorType>(op.getGates().getType());
  return gates.getNumElements() * w.getDimSize(1);
}

/// Multiply-adds of one op (contractions only; elementwise work is not
/// counted, as in the lesson's estimate).
static int64_t multiplyAdds(Operation *op) {
  if (auto lin = dyn_cast<mlir::dlc::LinearOp>(op)) {
    auto w = cast<RankedTensorType>(lin.getWeight().getType());
    auto out = cast<RankedTensorType>(lin.getResult().getType());
    return out.getNumElements() * w.getDimSize(1);
  }
  if (auto conv = dyn_cast<mlir::dlc::Conv2DOp>(op)) {
    // Every result element is a dot product over C/groups x KH x KW.
    auto w = cast<RankedTensorType>(conv.getWeight().getType());
    auto out = cast<RankedTensorType>(conv.getResult().getType());
    return out.getNumElements() * w.getDimSize(1) * w.getDimSize(2) *
           w.getDimSize(3);
  }
  if (auto at = dyn_cast<mlir::dlc::AttentionOp>(op)) {
    // q @ k^T, then the probabilities @ v.
    auto q = cast<RankedTensorType>(at.getQuery().getType());
    auto k = cast<RankedTensorType>(at.getKey().getType());
    auto out = cast<RankedTensorType>(at.getResult().getType());
    int64_t lk = k.getShape().drop_back().back();
    return q.getNumElements() * lk + out.getNumElements() * lk;
  }
  // A recurrent op's steps: [B, H] x [H, G*H] forward, [B, G*H] x [G*H, H]
  // backward (the input projection is a dlc.linear of its own).
  if (auto r = dyn_cast<mlir::dlc::LstmOp>(op))
    return recurrentMultiplyAdds(r);
  if (auto r = dyn_cast<mlir::dlc::LstmGradOp>(op))
    return recurrentMultiplyAdds(r);
  if (auto r = dyn_cast<mlir::dlc::GruOp>(op))
    return recurrentMultiplyAdds(r);
  if (auto r = dyn_cast<mlir::dlc::GruGradOp>(op))
    return recurrentMultiplyAdds(r);
  if (auto mm = dyn_cast<mlir::dlc::MatmulOp>(op)) {
    auto a = cast<RankedTensorType>(mm.getLhs().getType());
    auto c = cast<RankedTensorType>(mm.getResult().getType());
    return c.getNumElements() * a.getShape().back();
  }
  return 0;
}

/// The gradients (operands of the optimizer update, whole) and the saved
/// activations (values computed before the backward pass's seed and read
/// after it) of a training step.
static void trainingBytes(func::FuncOp f, EntryInfo &e) {
  Block &body = f.getBody().front();
  Operation *seed = nullptr;
  for (Operation &op : body) {
    if (op.hasAttr(mlir::dlc::kGradSeedAttrName))
      seed = &op;
    if (auto update = dyn_cast<mlir::dlc::OptimizerUpdateOp>(op))
      for (Value g : update.getGrads()) {
        // A sharded optimizer reads shards of the whole gradients.
        if (auto scatter = g.getDefiningOp<mlir::dlc::ReduceScatterOp>())
          g = scatter.getInputs()[cast<OpResult>(g).getResultNumber()];
        e.gradientBytes += mlir::dlc::tensorBytes(g.getType());
      }
  }
  if (!seed)
    return;
  for (Operation &op : body) {
    if (&op == seed)
      break;
    if (isa<mlir::dlc::ParamOp>(op))
      continue;
    for (Value r : op.getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            Operation *top = body.findAncestorOpInBlock(*user);
            return top && seed->isBeforeInBlock(top) &&
                   !top->hasTrait<OpTrait::IsTerminator>();
          }))
        e.savedActivationBytes += mlir::dlc::tensorBytes(r.getType());
  }
}

FailureOr<ModelInfo> mlir::dlc::extractModelInfo(ModuleOp module) {
  ModelInfo info;
  info.name = modelName(module);

  for (auto p : module.getOps<mlir::dlc::ParameterOp>()) {
    auto t = tensorInfo(p.getLoc(), p.getSymName(), p.getType());
    if (failed(t))
      return failure();
    ParamInfo pi;
    static_cast<TensorInfo &>(pi) = *t;
    pi.init = stringifyParameterInit(p.getInit()).str();
    pi.bound = p.getBound().convertToDouble();
    if (p.getValueAttr())
      pi.value = p.getValueAttr();
    pi.optimizerState = p.getRole() == ParameterRole::optimizer_state;
    pi.packed = p.getRole() == ParameterRole::packed;
    if (auto whole = p.getShardOfAttr()) {
      pi.shardOf.assign(whole.asArrayRef().begin(), whole.asArrayRef().end());
      pi.shardRanks = *p.getShardRanks();
    }
    info.params.push_back(std::move(pi));
  }

  for (auto f : module.getOps<func::FuncOp>()) {
    if (f->hasAttr(kLossAttrName))
      info.training.hasLoss = true;
    if (!f->hasAttr(mlir::dlc::kEntryAttrName))
      continue;
    EntryInfo e;
    e.name = f.getSymName().str();
    e.symbol = entrySymbol(info.name, e.name);
    for (unsigned i = 0; i < f.getNumArguments(); ++i) {
      auto n = f.getArgAttrOfType<StringAttr>(i, mlir::dlc::kNameAttrName);
      auto t = tensorInfo(
          f.getLoc(), n ? n.getValue() : StringRef("arg" + std::to_string(i)),
          f.getArgumentTypes()[i]);
      if (failed(t))
        return failure();
      e.inputs.push_back(*t);
    }
    for (unsigned i = 0; i < f.getNumResults(); ++i) {
      auto n = f.getResultAttrOfType<StringAttr>(i, mlir::dlc::kNameAttrName);
      auto t = tensorInfo(
          f.getLoc(), n ? n.getValue() : StringRef("out" + std::to_string(i)),
          f.getResultTypes()[i]);
      if (failed(t))
        return failure();
      e.outputs.push_back(*t);
    }
    if (f->hasAttr(mlir::dlc::kTrainStepAttrName) && !f.isExternal())
      trainingBytes(f, e);
    f.walk([&](mlir::dlc::CastOp cast) {
      if (cast.getInput().getDefiningOp<mlir::dlc::ParamOp>())
        e.weightCopyBytes += mlir::dlc::tensorBytes(cast.getType());
    });
    f.walk([&](Operation *op) {
      e.multiplyAdds += multiplyAdds(op);
      if (op->getDialect() && isa<mlir::dlc::DlcDialect>(op->getDialect()) &&
          !isa<mlir::dlc::ParamOp>(op))
        for (Value r : op->getResults())
          if (auto t = dyn_cast<RankedTensorType>(r.getType()))
            e.activationBytes +=
                t.getNumElements() * (t.getElementTypeBitWidth() / 8);
    });
    // A training step updates the params in place (the optimizer's and
    // batch_norm's running statistics' assignments).
    e.writesParams = mlir::dlc::writesParameters(f);
    f.walk([&](mlir::dlc::AllReduceOp op) {
      e.usesComm = true;
      // The runtime packs a bucket's small buffers into a staging buffer
      // and reduces the large ones, and a bucket of one, in place.
      int64_t bytes = 0;
      for (Value v : op.getInputs())
        if (auto t = dyn_cast<RankedTensorType>(v.getType());
            t && op.getInputs().size() > 1 &&
            t.getNumElements() < DLC_COMM_PACK_ELEMENTS)
          bytes += t.getNumElements() * (t.getElementTypeBitWidth() / 8);
      e.commBytes = std::max(e.commBytes, bytes);
    });
    // A sharded bucket's small tensors travel packed too: the shards of
    // every rank, and this rank's once more.
    int64_t reduceScatterPieceBytes = 0;
    auto staging = [&](ValueRange wholes, ValueRange shards, int64_t ranks) {
      e.usesComm = true;
      int64_t bytes = 0;
      for (auto [whole, shard] : llvm::zip(wholes, shards)) {
        auto w = cast<ShapedType>(whole.getType());
        auto t = cast<ShapedType>(shard.getType());
        if (wholes.size() > 1 && w.getNumElements() < DLC_COMM_PACK_ELEMENTS)
          bytes += t.getNumElements() * (t.getElementTypeBitWidth() / 8);
      }
      e.commBytes = std::max(e.commBytes, (ranks + 1) * bytes);
    };
    f.walk([&](mlir::dlc::ReduceScatterOp op) {
      staging(op.getInputs(), op.getInits(), op.getRanks());
      // And one piece of every rank's shard (DLC_COMM_SHARD_PIECE), which
      // the communicator keeps.
      reduceScatterPieceBytes = std::max<int64_t>(
          reduceScatterPieceBytes,
          op.getRanks() * DLC_COMM_SHARD_PIECE * int64_t(sizeof(float)));
    });
    f.walk([&](mlir::dlc::AllGatherOp op) {
      staging(op.getInits(), op.getInputs(), op.getRanks());
    });
    f.walk([&](mlir::dlc::ShardOp) { e.usesComm = true; });
    e.commBytes += reduceScatterPieceBytes;
    if (f->hasAttr(kPackWeightsAttrName))
      info.packWeights = std::move(e);
    else
      info.entries.push_back(std::move(e));
  }
  if (info.entries.empty())
    return module.emitError("the module has no entry point")
               .attachNote(module.getLoc())
           << "hint: mark a func.func with the 'dlc.entry' attribute";

  if (auto opt = module->getAttrOfType<DictionaryAttr>(kOptimizerAttrName)) {
    if (auto kind = opt.getAs<OptimizerKindAttr>("kind")) {
      info.training.optimizer = stringifyOptimizerKind(kind.getValue()).str();
      if (kind.getValue() != OptimizerKind::sgd) {
        info.training.stateCopies = 2;
      } else {
        auto m = opt.getAs<FloatAttr>("momentum");
        info.training.stateCopies = m && m.getValueAsDouble() != 0 ? 1 : 0;
      }
    }
  }
  return info;
}

void mlir::dlc::collectWorkspaceSizes(ModuleOp module, ModelInfo &info) {
  for (EntryInfo *entry : info.tableEntries()) {
    EntryInfo &e = *entry;
    Operation *kernel = module.lookupSymbol(e.symbol);
    if (!kernel)
      continue;
    if (auto bytes =
            kernel->getAttrOfType<IntegerAttr>(kWorkspaceBytesAttrName))
      e.workspaceBytes = bytes.getInt();
    if (auto bytes = kernel->getAttrOfType<IntegerAttr>(kBufferBytesAttrName))
      e.bufferBytes = bytes.getInt();
    if (auto bytes =
            kernel->getAttrOfType<IntegerAttr>(kPackedCastBytesAttrName))
      e.packedCastBytes = bytes.getInt();
  }
}

int64_t EntryInfo::ioBytes() const {
  int64_t n = 0;
  for (const TensorInfo &t : inputs)
    n += t.bytes;
  for (const TensorInfo &t : outputs)
    n += t.bytes;
  return n;
}

/// The bytes of the params of `info` for which `pick` holds.
template <typename Pick>
static int64_t bytesOfParams(const ModelInfo &info, Pick pick) {
  int64_t n = 0;
  for (const ParamInfo &p : info.params)
    if (pick(p))
      n += p.bytes;
  return n;
}

int64_t ModelInfo::stateBytes() const {
  return bytesOfParams(*this,
                       [](const ParamInfo &p) { return p.optimizerState; });
}

SmallVector<EntryInfo *> ModelInfo::tableEntries() {
  SmallVector<EntryInfo *> table;
  for (EntryInfo &e : entries)
    table.push_back(&e);
  if (packWeights)
    table.push_back(&*packWeights);
  return table;
}

SmallVector<const EntryInfo *> ModelInfo::tableEntries() const {
  SmallVector<EntryInfo *> table =
      const_cast<ModelInfo *>(this)->tableEntries();
  return SmallVector<const EntryInfo *>(table.begin(), table.end());
}

int64_t ModelInfo::packedBytes() const {
  return bytesOfParams(*this, [](const ParamInfo &p) { return p.packed; });
}

int64_t ModelInfo::persistentArenaBytes() const {
  int64_t n = 0;
  for (const ParamInfo &p : params)
    n += (p.bytes + 63) / 64 * 64;
  return n;
}

int64_t ModelInfo::workspaceBytes() const {
  int64_t n = 0;
  for (const EntryInfo *e : tableEntries())
    n = std::max(n, e->workspaceBytes);
  return (n + 63) / 64 * 64;
}

int64_t ModelInfo::paramCount() const {
  int64_t n = 0;
  for (const ParamInfo &p : params)
    if (!p.optimizerState && !p.packed)
      n += p.numel;
  return n;
}

int64_t ModelInfo::paramBytes() const {
  return bytesOfParams(
      *this, [](const ParamInfo &p) { return !p.optimizerState && !p.packed; });
}

static void printShape(llvm::raw_ostream &os, ArrayRef<int64_t> shape) {
  if (shape.empty()) {
    os << "-";
    return;
  }
  llvm::interleave(shape, os, ",");
}

std::string ModelInfo::descriptorText(ArrayRef<std::string> cpuFeatures) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "dlc-model 2\nname " << name << "\n";
  if (!cpuFeatures.empty())
    os << "cpu " << llvm::join(cpuFeatures, ",") << "\n";
  for (const ParamInfo &p : params) {
    if (p.optimizerState) {
      os << "state " << p.name << " " << p.dtype << " ";
      printShape(os, p.shape);
      if (p.shardRanks > 0) {
        os << " shard " << p.shardRanks << " ";
        printShape(os, p.shardOf);
      }
      os << "\n";
      continue;
    }
    if (p.packed) {
      os << "packed " << p.name << " " << p.dtype << " ";
      printShape(os, p.shape);
      os << "\n";
      continue;
    }
    os << "param " << p.name << " " << p.dtype << " ";
    printShape(os, p.shape);
    os << " " << p.init << " " << llvm::format("%.17g", p.bound) << "\n";
  }
  for (const EntryInfo *entry : tableEntries()) {
    const EntryInfo &e = *entry;
    os << "entry " << e.name << "\n";
    if (e.workspaceBytes >= 0)
      os << "workspace " << e.workspaceBytes << "\n";
    if (e.workspaceBytes >= 0 && e.cudaWorkspaceBytes >= 0)
      os << "cuda_workspace " << e.cudaWorkspaceBytes << "\n";
    if (e.usesComm)
      os << "communicator\n";
    if (packWeights && entry == &*packWeights)
      os << "pack_weights\n";
    else if (!e.writesParams)
      os << "concurrent\n";
    for (const TensorInfo &t : e.inputs) {
      os << "in " << t.name << " " << t.dtype << " ";
      printShape(os, t.shape);
      os << "\n";
    }
    for (const TensorInfo &t : e.outputs) {
      os << "out " << t.name << " " << t.dtype << " ";
      printShape(os, t.shape);
      os << "\n";
    }
    os << "end\n";
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Statistics
//===----------------------------------------------------------------------===//

std::string mlir::dlc::withCommas(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string mlir::dlc::humanBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  if (u == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.2f ", v) << units[u];
  return s;
}

void mlir::dlc::printStats(const ModelInfo &info, llvm::raw_ostream &os) {
  const EntryInfo *fwd = nullptr;
  for (const EntryInfo &e : info.entries)
    if (e.name == "forward")
      fwd = &e;
  if (!fwd)
    fwd = &info.entries.front();
  int64_t batch = fwd->inputs.empty() || fwd->inputs[0].shape.empty()
                      ? 1
                      : fwd->inputs[0].shape[0];
  int64_t weights = info.paramBytes();
  int64_t inputBytes = 0, outputBytes = 0;
  for (const TensorInfo &t : fwd->inputs)
    inputBytes += t.bytes;
  for (const TensorInfo &t : fwd->outputs)
    outputBytes += t.bytes;

  os << "model " << info.name << " (batch " << batch << ")\n";
  os << "  parameters:        " << withCommas(info.paramCount()) << " ("
     << humanBytes(weights) << ")\n";
  os << "  multiply-adds:     " << withCommas(fwd->multiplyAdds)
     << " per forward pass of one batch\n";
  int64_t trainOps = 3 * fwd->multiplyAdds;
  os << "  training step:     about "
     << withCommas((trainOps + 500000) / 1000000)
     << " million operations (3 x forward: forward, input and weight "
        "gradients)\n";
  os << "memory estimate (" << fwd->name << ")\n";
  os << "  weights:           " << humanBytes(weights) << "\n";
  os << "  inputs + outputs:  " << humanBytes(inputBytes + outputBytes) << "\n";
  os << "  activations:       0 B saved (evaluation keeps none); "
     << humanBytes(fwd->activationBytes) << " of intermediates in total\n";
  os << "memory estimate (training step";
  if (!info.training.optimizer.empty())
    os << ", " << info.training.optimizer;
  os << ")\n";
  int64_t grads = weights, state = info.training.stateCopies * weights;
  os << "  weights:           " << humanBytes(weights) << "\n";
  os << "  gradients:         " << humanBytes(grads) << "\n";
  os << "  optimizer state:   " << humanBytes(state) << " ("
     << info.training.stateCopies << " per weight)\n";
  // The backward pass needs the layer inputs: the model's inputs and, at
  // most, every intermediate of the forward pass.
  int64_t saved = fwd->activationBytes + inputBytes;
  os << "  activations:       " << humanBytes(saved)
     << " (upper bound: the inputs and every intermediate of the forward "
        "pass)\n";
  os << "  total:             "
     << humanBytes(weights + grads + state + saved + outputBytes) << "\n";
  os << "(estimates before compilation; the exact plan: --train "
        "--memory-report)\n";
}
