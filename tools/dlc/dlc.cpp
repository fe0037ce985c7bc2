//===- dlc.cpp - the dlc compiler driver ----------------------------------===//
//
//   dlc MODEL [-o out.o] [--emit=dlc|linalg|llvm|asm|obj|header] [--stats]
//   dlc run MODEL [--weights W | --seed N] --input NAME=FILE ... [--output ...]
//   dlc train MODEL --data FILE.npz --epochs N --batch-size B ... (Train.cpp)
//
// A model is a .dlc description or a .mlir module in the dlc dialect. The
// compile mode writes an object and its C header; `run` compiles in memory
// (JIT), executes one entry point through libdlcrt and writes the outputs;
// `train` runs the training step over a data set for epochs.
// Every user error is a diagnostic and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "EmulatedCuda.h"
#include "Train.h"

#include "dlc/Frontend/ModelImporter.h"
#include "dlc/Frontend/OnnxImporter.h"
#include "dlc/InitDlc.h"
#include "dlc/Target/ModelInfo.h"
#include "dlc/Target/Pipeline.h"

#include "dlc/dlc_io.h"
#include "dlc/dlc_runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <unistd.h>
#include <vector>

using namespace llvm;
namespace cl = llvm::cl;

static cl::OptionCategory dlcCat("dlc options");
static cl::opt<std::string>
    inputFile(cl::Positional, cl::desc("<model.dlc|model.onnx|model.mlir>"),
              cl::cat(dlcCat));
static cl::opt<std::string> outputFile(
    "o",
    cl::desc("Output file (default: <model>.o; the header goes next to it)"),
    cl::value_desc("file"), cl::cat(dlcCat));
static cl::opt<std::string>
    emit("emit",
         cl::desc("Stop after a stage: dlc, dlc-placed, linalg, llvm-dialect, "
                  "llvm, asm, ptx, obj (default), header"),
         cl::init("obj"), cl::cat(dlcCat));
static cl::opt<std::string> inputLang(
    "x", cl::desc("Input language: dlc, onnx or mlir (default: by extension)"),
    cl::cat(dlcCat));
// `--stats` is taken out of argv before option parsing: LLVM registers its
// own `-stats` (pass statistics) in every tool.
static bool stats = false;
static cl::opt<int64_t>
    batch("batch", cl::desc("Override dimension 0 of every input and label"),
          cl::init(0), cl::cat(dlcCat));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("ONNX: NAME=D0,D1,... fixes the shape of a graph "
                         "input (a dynamic batch)"),
                cl::cat(dlcCat));
static cl::opt<bool>
    listOnnxOps("list-onnx-ops",
                cl::desc("Print the ONNX op types the importer supports, one "
                         "per line, and exit"),
                cl::Hidden, cl::cat(dlcCat));
static cl::opt<std::string>
    cpu("cpu",
        cl::desc("Target CPU: native (default), x86-64-v3, x86-64-v4 or an "
                 "LLVM CPU name"),
        cl::init("native"), cl::cat(dlcCat));
static cl::opt<std::string>
    target("target",
           cl::desc("Code to generate: all (default: x86 and CUDA in one "
                    "object), x86, or nvptx (--emit=ptx or dlc-placed only)"),
           cl::init("all"), cl::cat(dlcCat));
static cl::list<int64_t> registerTile(
    "register-tile",
    cl::desc("Matmul register tile M,N (default: from the CPU's vector width)"),
    cl::CommaSeparated, cl::Hidden, cl::cat(dlcCat));
static cl::list<int64_t>
    cacheTile("cache-tile",
              cl::desc("Matmul cache tile bounds M,N,K (default 64,512,256)"),
              cl::CommaSeparated, cl::Hidden, cl::cat(dlcCat));
static cl::opt<unsigned>
    vectorBits("vector-bits",
               cl::desc("Schedule for this vector width (256 or 512) instead "
                        "of the CPU's; LLVM splits wider vectors"),
               cl::init(0), cl::Hidden, cl::cat(dlcCat));
// Training.
static cl::opt<bool>
    train("train",
          cl::desc("Also compile the training step (entry train_step)"),
          cl::cat(dlcCat));
static cl::opt<std::string>
    lossKind("loss",
             cl::desc("train: loss on the forward output instead of the "
                      "model's: mse or cross_entropy"),
             cl::cat(dlcCat));
static cl::opt<std::string> labelName(
    "label",
    cl::desc("train: name of the label input that --loss adds (default y)"),
    cl::cat(dlcCat));
static cl::opt<std::string> labelType(
    "label-type",
    cl::desc("train: --loss cross_entropy: the labels' element type, i64 "
             "(default) or i32; dlc run takes it from the label file"),
    cl::cat(dlcCat));
static cl::opt<int>
    classDim("class-dim",
             cl::desc("train: --loss cross_entropy on an output of rank 3 or "
                      "more: the classes' dimension, 1 ([N, C, d...], "
                      "PyTorch's, default) or -1 ([N, T, C])"),
             cl::init(1), cl::cat(dlcCat));
static cl::opt<std::string> optimizerKind(
    "optimizer",
    cl::desc("train: sgd, adam or adamw instead of the model's optimizer"),
    cl::cat(dlcCat));
static cl::opt<double> lr("lr", cl::desc("train: learning rate"), cl::init(-1),
                          cl::cat(dlcCat));
static cl::opt<double> momentum("momentum", cl::desc("train: SGD momentum"),
                                cl::init(-1), cl::cat(dlcCat));
static cl::opt<double> dampening("dampening", cl::desc("train: SGD dampening"),
                                 cl::init(-1), cl::cat(dlcCat));
static cl::opt<std::string>
    nesterov("nesterov",
             cl::desc("train: SGD Nesterov momentum, true or false"),
             cl::cat(dlcCat));
static cl::opt<double> weightDecay("weight-decay",
                                   cl::desc("train: weight decay"),
                                   cl::init(-1), cl::cat(dlcCat));
static cl::opt<std::string> betas("betas", cl::desc("train: Adam betas, B1,B2"),
                                  cl::cat(dlcCat));
static cl::opt<double> eps("eps", cl::desc("train: Adam epsilon"), cl::init(-1),
                           cl::cat(dlcCat));
// Precision.
static cl::opt<std::string> precision(
    "precision",
    cl::desc("fp32 (default), or bf16/fp16: matmuls and linear layers in 16 "
             "bits with fp32 accumulation and fp32 master weights (autocast)"),
    cl::init("fp32"), cl::cat(dlcCat));
static cl::opt<double>
    initLossScale("init-loss-scale",
                  cl::desc("fp16 training: the loss scale a fresh model starts "
                           "from (default 65536)"),
                  cl::init(65536.0), cl::cat(dlcCat));
// Memory.
static cl::opt<std::string>
    memoryReport("memory-report", cl::ValueOptional,
                 cl::desc("Print the memory plan of every entry by category: "
                          "text (default) or =json"),
                 cl::value_desc("text|json"), cl::cat(dlcCat));
static cl::opt<std::string> deviceMemory(
    "device-memory",
    cl::desc("Memory budget of the device, e.g. 8GiB, 500MB, 1000000 (default: "
             "this machine's physical memory); a plan over it is an error"),
    cl::value_desc("size"), cl::cat(dlcCat));
// `dlc run` options.
static cl::opt<unsigned>
    steps("steps",
          cl::desc("run --train: number of training steps (default 1)"),
          cl::init(1), cl::cat(dlcCat));
static cl::opt<bool>
    printLoss("print-loss",
              cl::desc("run --train: print the loss of every step"),
              cl::cat(dlcCat));
static cl::opt<std::string>
    saveFile("save",
             cl::desc("run: save weights and optimizer state to a .safetensors "
                      "checkpoint at the end"),
             cl::cat(dlcCat));
static cl::opt<std::string>
    weights("weights",
            cl::desc("run: load the parameters from a .safetensors file"),
            cl::cat(dlcCat));
static cl::opt<uint64_t>
    seed("seed",
         cl::desc("run: initialise the parameters from this seed (default 0); "
                  "train: the shuffle's seed (--init-seed initialises)"),
         cl::init(0), cl::cat(dlcCat));
static cl::list<std::string> inputs(
    "input",
    cl::desc("run: NAME=FILE.npy, or FILE.safetensors holding inputs by name"),
    cl::cat(dlcCat));
static cl::list<std::string>
    outputs("output",
            cl::desc("run: FILE (.npy for one output, .safetensors for all) or "
                     "NAME=FILE.npy"),
            cl::cat(dlcCat));
static cl::opt<std::string>
    entryName("entry", cl::desc("run: the entry point (default forward)"),
              cl::init("forward"), cl::cat(dlcCat));
static cl::opt<std::string> device("device",
                                   cl::desc("run: auto (default), cpu or cuda"),
                                   cl::init("auto"), cl::cat(dlcCat));
static cl::opt<unsigned>
    benchmark("benchmark",
              cl::desc("run: time N calls after warm-up; print min and median"),
              cl::init(0), cl::cat(dlcCat));

int dlc::driver::fail(const Twine &msg, const Twine &hint) {
  errs() << "dlc: error: " << msg << "\n";
  if (!hint.isTriviallyEmpty())
    errs() << "dlc: hint: " << hint << "\n";
  return 1;
}

int dlc::driver::failRuntime(const Twine &what) {
  return fail(what + ": " + dlc_last_error());
}
using dlc::driver::fail;
using dlc::driver::failRuntime;

/// The training flags as dlc-build-train-step's options.
static std::optional<mlir::dlc::TrainOptions> trainOptions() {
  mlir::dlc::TrainOptions train;
  mlir::dlc::DlcBuildTrainStepPassOptions &o = train.step;
  // A flag not given keeps the pass's default: -1 and "" keep the model's.
  auto num = [&](double &field, double v) {
    if (v >= 0)
      field = v;
  };
  o.loss = lossKind;
  if (!labelName.empty())
    o.label = labelName;
  if (classDim.getNumOccurrences())
    o.classDim = classDim;
  if (!labelType.empty()) {
    if (labelType != "i64" && labelType != "i32") {
      fail("--label-type must be i64 or i32, not '" + labelType + "'");
      return std::nullopt;
    }
    o.labelType = labelType;
  }
  // A value given is a value used: a negative or NaN rate, epsilon or
  // momentum (PyTorch's optimizers refuse them) is an error, never the
  // silent "keep the model's" that the pass's -1 means.
  auto given = [&](const cl::opt<double> &o, const char *flag) -> bool {
    if (!o.getNumOccurrences())
      return true;
    double v = o;
    if (std::isnan(v) || std::isinf(v) || v < 0) {
      std::string text;
      raw_string_ostream(text) << format("%g", v);
      fail(Twine("--") + flag + " must be a finite non-negative number, not " +
           text);
      return false;
    }
    return true;
  };
  if (!given(lr, "lr") || !given(momentum, "momentum") ||
      !given(dampening, "dampening") || !given(weightDecay, "weight-decay") ||
      !given(eps, "eps"))
    return std::nullopt;
  o.optimizer = optimizerKind;
  num(o.lr, lr);
  num(o.momentum, momentum);
  num(o.dampening, dampening);
  num(o.weightDecay, weightDecay);
  num(o.eps, eps);
  if (!nesterov.empty()) {
    if (nesterov != "true" && nesterov != "false") {
      fail("--nesterov must be true or false, not '" + nesterov + "'");
      return std::nullopt;
    }
    o.nesterov = nesterov == "true" ? 1 : 0;
  }
  if (!betas.empty()) {
    auto [a, b] = StringRef(betas).split(',');
    double b1, b2;
    if (a.trim().getAsDouble(b1) || b.trim().getAsDouble(b2) || b1 < 0 ||
        b2 < 0) {
      fail("--betas must be two numbers in [0, 1), like 0.9,0.999");
      return std::nullopt;
    }
    num(o.beta1, b1);
    num(o.beta2, b2);
  }
  if (!(initLossScale > 0) || !std::isfinite(initLossScale)) {
    fail("--init-loss-scale must be a positive number");
    return std::nullopt;
  }
  train.initLossScale = initLossScale;
  return train;
}

namespace {
struct Compiled {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::dlc::ModelInfo info;
};
} // namespace

/// The input language: -x, else by the file's extension.
static std::string inputLanguage() {
  if (!inputLang.empty())
    return inputLang;
  if (StringRef(inputFile).ends_with(".mlir"))
    return "mlir";
  if (StringRef(inputFile).ends_with(".onnx"))
    return "onnx";
  return "dlc";
}

namespace {
/// Diagnostics of a binary (ONNX) input: there is no source line to show,
/// so each is `FILE: error: MESSAGE`, and an op's location (a NameLoc of its
/// ONNX node) is named when the message does not already name it.
class OnnxDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  explicit OnnxDiagnosticHandler(mlir::MLIRContext &ctx)
      : ScopedDiagnosticHandler(&ctx) {
    setHandler([](mlir::Diagnostic &d) {
      const char *kind =
          d.getSeverity() == mlir::DiagnosticSeverity::Error     ? "error"
          : d.getSeverity() == mlir::DiagnosticSeverity::Warning ? "warning"
                                                                 : "note";
      auto print = [&](mlir::Location loc, const std::string &msg,
                       const char *k) {
        std::string where;
        auto name = dyn_cast<mlir::NameLoc>(loc);
        if (name && StringRef(k) != "note") {
          StringRef n = name.getName().getValue();
          if (n != StringRef(inputFile) &&
              msg.find("'" + n.str() + "'") == std::string::npos)
            where = " (at node '" + n.str() + "')";
        }
        errs() << inputFile << ": " << k << ": " << msg << where << "\n";
      };
      print(d.getLocation(), d.str(), kind);
      for (mlir::Diagnostic &note : d.getNotes())
        print(note.getLocation(), note.str(), "note");
      return mlir::success();
    });
  }
};
} // namespace

/// Reads the model and runs the dlc-level pipeline; diagnostics are printed
/// by the context's handler.
static std::optional<Compiled> loadModel(mlir::MLIRContext &ctx, SourceMgr &sm,
                                         int64_t batchOverride = 0,
                                         StringRef precisionOverride = "") {
  // A model is a file of known size: a device or pipe (/dev/zero) could be
  // read without end. ONNX's protobuf encoding is limited to 2 GiB, and a
  // text model of more than that is no model.
  constexpr uint64_t kMaxModelBytes = uint64_t(2) << 30;
  if (inputFile != "-") {
    sys::fs::file_status st;
    if (!sys::fs::status(inputFile, st) &&
        (st.type() != sys::fs::file_type::regular_file ||
         st.getSize() > kMaxModelBytes)) {
      fail("cannot read '" + inputFile + "': " +
               (st.type() != sys::fs::file_type::regular_file
                    ? "not a regular file"
                    : "larger than 2 GiB"),
           "a model is a .dlc, .onnx or .mlir file (ONNX weights over 2 GiB "
           "go to an external data file)");
      return std::nullopt;
    }
  }
  auto buffer = MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer) {
    fail("cannot read '" + inputFile + "': " + buffer.getError().message());
    return std::nullopt;
  }
  std::string lang = inputLanguage();
  Compiled c;
  if (lang == "onnx") {
    dlc::OnnxImportOptions opts;
    for (const std::string &spec : inputShapes) {
      auto [name, dims] = StringRef(spec).split('=');
      SmallVector<StringRef> parts;
      dims.split(parts, ',');
      SmallVector<int64_t> shape;
      for (StringRef d : parts) {
        int64_t v;
        if (d.trim().getAsInteger(10, v) || v <= 0) {
          fail("bad --input-shape '" + spec + "'",
               "use NAME=D0,D1,... with positive sizes, like x=64,784");
          return std::nullopt;
        }
        shape.push_back(v);
      }
      if (name.empty() || dims.empty()) {
        fail("bad --input-shape '" + spec + "'",
             "use NAME=D0,D1,..., like x=64,784");
        return std::nullopt;
      }
      opts.inputShapes[name.str()] = shape;
    }
    if (batch < 0) {
      fail("--batch must be positive");
      return std::nullopt;
    }
    if (batch)
      opts.batch = batch;
    if (batchOverride)
      opts.batch = batchOverride;
    c.module =
        dlc::importOnnxModel((*buffer)->getBuffer(), inputFile, ctx, opts);
  } else if (!inputShapes.empty()) {
    fail("--input-shape applies to ONNX models only");
    return std::nullopt;
  }
  if (lang != "onnx")
    sm.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  if (lang == "onnx") {
    // Imported above.
  } else if (lang == "mlir") {
    c.module = mlir::parseSourceFile<mlir::ModuleOp>(sm, &ctx);
    if (c.module && batch) {
      mlir::emitError(c.module->getLoc())
          << "--batch applies to .dlc models only; a .mlir model has fixed "
             "shapes";
      return std::nullopt;
    }
  } else if (lang == "dlc") {
    dlc::ImportOptions opts;
    if (batch < 0) {
      fail("--batch must be positive");
      return std::nullopt;
    }
    if (batch)
      opts.batch = batch;
    if (batchOverride)
      opts.batch = batchOverride;
    c.module = dlc::importDlcModel(sm, ctx, opts);
  } else {
    fail("unknown input language '" + lang + "'",
         "use -x dlc, -x onnx or -x mlir");
    return std::nullopt;
  }
  if (!c.module || failed(mlir::verify(*c.module)))
    return std::nullopt;
  auto info = mlir::dlc::extractModelInfo(*c.module);
  if (failed(info))
    return std::nullopt;
  c.info = std::move(*info);
  std::optional<mlir::dlc::TrainOptions> trainOpts;
  if (train) {
    trainOpts = trainOptions();
    if (!trainOpts)
      return std::nullopt;
  }
  std::string prec = precisionOverride.empty() ? std::string(precision)
                                               : precisionOverride.str();
  if (prec != "fp32" && prec != "bf16" && prec != "fp16") {
    fail("unknown --precision '" + prec + "'", "use fp32, bf16 or fp16");
    return std::nullopt;
  }
  if (failed(mlir::dlc::runDlcPipeline(
          *c.module, trainOpts ? &*trainOpts : nullptr, prec)))
    return std::nullopt;
  if (train || prec != "fp32") {
    // The training step added an entry and the optimizer state; autocast
    // changed the activations' types.
    auto trained = mlir::dlc::extractModelInfo(*c.module);
    if (failed(trained))
      return std::nullopt;
    c.info = std::move(*trained);
  }
  return c;
}

/// Lowers to an optimised LLVM module for `tm`.
static mlir::dlc::CpuCodegenOptions codegenOptions(TargetMachine &tm) {
  mlir::dlc::CpuCodegenOptions o;
  o.vectorBits =
      vectorBits ? unsigned(vectorBits) : mlir::dlc::vectorBitsOf(tm);
  o.registerTile.assign(registerTile.begin(), registerTile.end());
  o.cacheTile.assign(cacheTile.begin(), cacheTile.end());
  return o;
}

static cl::opt<bool> cudaEmulate(
    "cuda-emulate",
    cl::desc(
        "Compile the CUDA lowering for the host instead of the CPU code: its "
        "kernels run as host loops (a test of the GPU lowering without a GPU)"),
    cl::Hidden, cl::cat(dlcCat));
static cl::opt<bool> cudaEmulateReverse(
    "cuda-emulate-reverse",
    cl::desc("With --cuda-emulate: run each kernel's blocks, warps and threads "
             "last to first (a kernel whose threads depend on their order "
             "gives other results)"),
    cl::Hidden, cl::cat(dlcCat));

static cl::opt<int64_t> cudaSmallGemmFmas(
    "cuda-small-gemm-fmas",
    cl::desc("CUDA code: fp32 GEMMs of at most N multiply-adds (and k <= 64) "
             "run as kernels fused with the step's other kernels instead of "
             "cuBLASLt calls (default 16384; 0: every GEMM calls cuBLASLt)"),
    cl::value_desc("N"), cl::init(-1), cl::cat(dlcCat));

static mlir::dlc::CudaOptions cudaOptions() {
  mlir::dlc::CudaOptions o;
  o.smallGemmFmas = cudaSmallGemmFmas;
  return o;
}

/// Whether the object gets CUDA code besides the CPU code.
static bool wantsCuda() { return target != "x86"; }

/// The CUDA half of the object, from a copy of the dlc-level module. With
/// --target=all a model the GPU lowering cannot take yet is a warning, and
/// the object runs on the CPU only; with --target=nvptx it is an error.
static mlir::OwningOpRef<mlir::ModuleOp>
lowerToCuda(Compiled &c, mlir::dlc::CudaCode &code, bool &failedHard) {
  failedHard = false;
  mlir::OwningOpRef<mlir::ModuleOp> cuda = c.module->clone();
  std::string firstError;
  bool required = target == "nvptx";
  LogicalResult result = success();
  {
    mlir::ScopedDiagnosticHandler collect(
        c.module->getContext(), [&](mlir::Diagnostic &d) {
          if (required)
            return failure(); // to the file's diagnostic handler
          if (d.getSeverity() == mlir::DiagnosticSeverity::Error &&
              firstError.empty()) {
            std::string loc;
            llvm::raw_string_ostream os(loc);
            d.getLocation().print(os);
            firstError = d.str() + " (at " + loc + ")";
          }
          return success();
        });
    result = mlir::dlc::runLinalgPipeline(*cuda, c.info, "cuda");
    if (succeeded(result))
      result = mlir::dlc::runCudaCodegenPipeline(*cuda, code, cudaOptions());
  }
  if (succeeded(result))
    return cuda;
  if (required) {
    failedHard = true;
    return nullptr;
  }
  WithColor::warning(errs(), "dlc")
      << "no CUDA code for this model: " << firstError
      << "; the object runs on the CPU only (use --target=x86 to say so)\n";
  return nullptr;
}

static std::unique_ptr<Module> lowerToLLVM(Compiled &c, LLVMContext &llctx,
                                           TargetMachine &tm,
                                           bool weightPlaceholders = false) {
  mlir::dlc::CudaCode code;
  mlir::OwningOpRef<mlir::ModuleOp> cuda;
  if (cudaEmulate) {
    // The CUDA lowering as the object's CPU code.
    if (failed(mlir::dlc::runLinalgPipeline(*c.module, c.info, "cuda")) ||
        failed(mlir::dlc::runCudaEmulationPipeline(*c.module, cudaOptions(),
                                                   cudaEmulateReverse)))
      return nullptr;
  } else {
    if (wantsCuda()) {
      bool failedHard = false;
      cuda = lowerToCuda(c, code, failedHard);
      if (failedHard)
        return nullptr;
    }
    if (failed(mlir::dlc::runLinalgPipeline(*c.module, c.info)) ||
        failed(mlir::dlc::runCpuCodegenPipeline(*c.module, codegenOptions(tm))))
      return nullptr;
  }
  mlir::dlc::collectWorkspaceSizes(*c.module, c.info);
  // The CUDA code has its own plan (cuBLASLt reads the 16-bit copies that
  // the CPU code rounds while packing).
  for (mlir::dlc::EntryInfo &e : c.info.entries) {
    auto it = code.workspaceBytes.find(e.symbol);
    if (cuda && it != code.workspaceBytes.end())
      e.cudaWorkspaceBytes = it->second;
  }
  auto m = mlir::dlc::translateToLLVM(
      *c.module, c.info, llctx, tm, cuda ? *cuda : mlir::ModuleOp(),
      cuda ? &code : nullptr, weightPlaceholders);
  if (!m) {
    fail(toString(m.takeError()));
    return nullptr;
  }
  return std::move(*m);
}

/// Writes `data` to `path` atomically (temporary file, then rename).
static bool writeFileAtomically(StringRef path, StringRef data) {
  if (Error e = writeToOutput(path, [&](raw_ostream &os) {
        os << data;
        return Error::success();
      })) {
    fail("cannot write '" + path + "': " + toString(std::move(e)));
    return false;
  }
  return true;
}

/// Emits `m` as an object file at `path` atomically: into a temporary file
/// next to it (the code streamed, not held in memory), whose weight
/// placeholders are then filled, renamed over `path` once complete.
static bool writeObjectAtomically(StringRef path, Module &m, TargetMachine &tm,
                                  const mlir::dlc::ModelInfo &info) {
  auto tmp = sys::fs::TempFile::create(path + ".tmp%%%%%%");
  if (!tmp)
    return fail("cannot write '" + path + "': " + toString(tmp.takeError())),
           false;
  auto discard = [&](Error e) {
    consumeError(tmp->discard());
    fail("cannot write '" + path + "': " + toString(std::move(e)));
    return false;
  };
  {
    raw_fd_ostream os(tmp->FD, /*shouldClose=*/false);
    if (Error e = mlir::dlc::emitMachineCode(m, tm, os, false))
      return discard(std::move(e));
    os.flush();
    if (os.has_error())
      return discard(errorCodeToError(os.error()));
  }
  if (Error e = mlir::dlc::writeWeights(tmp->TmpName, info))
    return discard(std::move(e));
  if (Error e = tmp->keep(path))
    return fail("cannot write '" + path + "': " + toString(std::move(e))),
           false;
  return true;
}

//===----------------------------------------------------------------------===//
// The memory budget
//===----------------------------------------------------------------------===//

/// "8GiB", "500MB", "1.5G", "1000000" -> bytes; K/M/G/T and KiB/MiB/GiB/TiB
/// are powers of 1024, KB/MB/GB/TB powers of 1000.
static std::optional<int64_t> parseSize(StringRef text) {
  StringRef t = text.trim();
  size_t split = t.find_first_not_of("0123456789.");
  StringRef num = t.substr(0, split), unit = t.substr(num.size()).trim();
  double v;
  if (num.empty() || num.getAsDouble(v) || v < 0)
    return std::nullopt;
  static const std::pair<const char *, double> units[] = {
      {"", 1},
      {"b", 1},
      {"k", 1024.0},
      {"kib", 1024.0},
      {"kb", 1e3},
      {"m", 1048576.0},
      {"mib", 1048576.0},
      {"mb", 1e6},
      {"g", 1073741824.0},
      {"gib", 1073741824.0},
      {"gb", 1e9},
      {"t", 1099511627776.0},
      {"tib", 1099511627776.0},
      {"tb", 1e12}};
  std::string u = unit.lower();
  for (auto [name, scale] : units)
    if (u == name) {
      double bytes = v * scale;
      if (bytes > 9.0e18)
        return std::nullopt;
      return static_cast<int64_t>(bytes);
    }
  return std::nullopt;
}

/// This machine's physical memory, the default budget of the CPU.
static int64_t physicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : INT64_MAX;
}

/// What a model needs while its largest entry runs: its memory (params,
/// optimizer state, workspace) and that entry's inputs and outputs.
static int64_t neededBytes(const mlir::dlc::ModelInfo &info) {
  int64_t io = 0;
  for (const auto &e : info.entries)
    io = std::max(io, e.ioBytes());
  return info.arenaBytes() + io;
}

static int64_t batchOf(const mlir::dlc::ModelInfo &info) {
  for (const auto &e : info.entries)
    for (const auto &t : e.inputs)
      if (!t.shape.empty())
        return t.shape[0];
  return 0;
}

/// The memory the model needs at batch `b`: imported again and lowered as
/// far as the memory plan, without diagnostics.
static mlir::dlc::CpuCodegenOptions codegenOptions(TargetMachine &tm);

/// The model planned again at batch `b` (0: as written) and precision `p`
/// ("": as asked), lowered as far as the memory plan, without diagnostics.
static std::optional<mlir::dlc::ModelInfo>
plannedAt(mlir::MLIRContext &ctx, TargetMachine &tm, int64_t b, StringRef p) {
  SourceMgr sm;
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  std::optional<Compiled> c = loadModel(ctx, sm, b, p);
  if (!c || failed(mlir::dlc::runLinalgPipeline(*c->module, c->info)) ||
      failed(mlir::dlc::runMemoryPlanPipeline(*c->module, codegenOptions(tm))))
    return std::nullopt;
  mlir::dlc::collectWorkspaceSizes(*c->module, c->info);
  return std::move(c->info);
}

static std::optional<int64_t> neededAtBatch(mlir::MLIRContext &ctx,
                                            TargetMachine &tm, int64_t b) {
  std::optional<mlir::dlc::ModelInfo> info = plannedAt(ctx, tm, b, "");
  if (!info)
    return std::nullopt;
  return neededBytes(*info);
}

/// Checks the plan against the budget; over it, explains what does not fit
/// and what would, and fails.
static mlir::LogicalResult checkBudget(mlir::MLIRContext &ctx,
                                       TargetMachine &tm, Compiled &c) {
  int64_t budget = physicalMemory();
  std::string budgetName = "this machine's physical memory";
  if (!deviceMemory.empty()) {
    std::optional<int64_t> b = parseSize(deviceMemory);
    if (!b || *b <= 0) {
      fail("bad --device-memory '" + deviceMemory + "'",
           "a size like 8GiB, 512MiB, 16GB or a number of bytes");
      return mlir::failure();
    }
    budget = *b;
    budgetName = "--device-memory=" + deviceMemory;
  }
  const mlir::dlc::ModelInfo &info = c.info;
  int64_t need = neededBytes(info);
  if (need <= budget)
    return mlir::success();

  using mlir::dlc::humanBytes;
  using mlir::dlc::withCommas;
  const mlir::dlc::EntryInfo *worst = &info.entries.front();
  for (const auto &e : info.entries)
    if (e.workspaceBytes + e.ioBytes() >
        worst->workspaceBytes + worst->ioBytes())
      worst = &e;
  int64_t batchNow = batchOf(info);
  auto diag = mlir::emitError(c.module->getLoc())
              << "model " << info.name << " needs " << humanBytes(need) << " ("
              << withCommas(need) << " bytes) at batch " << batchNow
              << ", more than the " << humanBytes(budget) << " ("
              << withCommas(budget) << " bytes) of " << budgetName;
  // The biggest consumers, largest first.
  mlir::dlc::MemoryUse u = mlir::dlc::memoryUse(info, *worst);
  std::vector<std::pair<int64_t, std::string>> parts = {
      {u.weights, "weights"},
      {u.optimizerState + u.stepCount, "optimizer state"},
      {u.workspace, "workspace of " + worst->name + " (gradients " +
                        humanBytes(u.gradients) + ", saved activations " +
                        humanBytes(u.savedActivations) +
                        ", other temporaries)"},
      {u.io, "inputs and outputs of " + worst->name}};
  std::sort(parts.begin(), parts.end(), std::greater<>());
  std::string list;
  for (auto &[bytes, what] : parts)
    if (bytes > 0)
      list += (list.empty() ? "" : "; ") + what + " " + humanBytes(bytes);
  diag.attachNote(c.module->getLoc()) << "it needs: " << list;

  // 1. The largest batch that fits, exactly (the plan grows with the batch).
  bool canRebatch = inputLanguage() != "mlir" && batchNow > 1;
  if (canRebatch) {
    std::optional<int64_t> one = neededAtBatch(ctx, tm, 1);
    if (one && *one > budget) {
      int64_t fixed = u.weights + u.optimizerState + u.stepCount + u.gradients;
      diag.attachNote(c.module->getLoc())
          << "hint: no batch size fits: at batch 1 the model still needs "
          << humanBytes(*one) << "; the weights (" << humanBytes(u.weights)
          << "), their gradients (" << humanBytes(u.gradients)
          << ") and the optimizer state ("
          << humanBytes(u.optimizerState + u.stepCount) << ") alone take "
          << humanBytes(fixed) << ", whatever the batch";
    } else if (one) {
      int64_t lo = 1, hi = batchNow; // fits(lo), !fits(hi)
      int64_t atLo = *one;           // what batch lo needs
      while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        std::optional<int64_t> n = neededAtBatch(ctx, tm, mid);
        if (n && *n <= budget) {
          lo = mid;
          atLo = *n;
        } else {
          hi = mid;
        }
      }
      diag.attachNote(c.module->getLoc())
          << "hint: the largest batch that fits is " << lo << " (--batch " << lo
          << ": " << humanBytes(atLo) << "); batch " << lo + 1 << " does not";
    }
  }
  // 2. 16-bit activations.
  if (u.savedActivations > 0)
    diag.attachNote(c.module->getLoc())
        << "hint: keeping the saved activations in 16 bits would save about "
        << humanBytes(u.savedActivations / 2);
  // 3. Evaluation keeps no activations.
  for (const auto &e : info.entries)
    if (e.name == "forward" && worst->name != "forward") {
      mlir::dlc::MemoryUse f = mlir::dlc::memoryUse(info, e);
      int64_t evalOnly = f.weights + f.workspace + f.io;
      if (evalOnly <= budget)
        diag.attachNote(c.module->getLoc())
            << "hint: evaluation keeps no activations: without --train the "
               "forward entry alone needs "
            << humanBytes(evalOnly) << ", which fits";
    }
  return mlir::failure();
}

static int compileMain(mlir::MLIRContext &ctx) {
  static const char *stages[] = {"dlc",          "dlc-placed", "linalg",
                                 "llvm-dialect", "llvm",       "asm",
                                 "ptx",          "obj",        "header"};
  if (!llvm::is_contained(stages, StringRef(emit)))
    return fail(
        "unknown --emit stage '" + emit + "'",
        "use one of dlc, dlc-placed, linalg, llvm-dialect, llvm, asm, ptx, "
        "obj, header");
  if (cudaEmulate && emit != "llvm")
    return fail("--cuda-emulate belongs to 'dlc run' (or --emit=llvm)",
                "it runs the CUDA lowering on this machine's CPU, for tests");
  if (target != "x86" && target != "nvptx" && target != "all")
    return fail("unknown --target '" + target + "'",
                "use all (x86 and CUDA in one object), x86 or nvptx");
  if (target == "nvptx" && emit != "ptx" && emit != "dlc" &&
      emit != "dlc-placed")
    return fail("--target=nvptx cannot emit '" + emit + "'",
                "an object always carries the CPU code the runtime falls "
                "back to: use --target=all, or --emit=ptx for the kernels");
  if (target == "x86" && emit == "ptx")
    return fail("--emit=ptx needs CUDA code", "use --target=all or nvptx");
  SourceMgr sm;
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  std::optional<OnnxDiagnosticHandler> onnxHandler;
  if (inputLanguage() == "onnx")
    onnxHandler.emplace(ctx);
  std::optional<Compiled> c = loadModel(ctx, sm);
  if (!c)
    return 1;
  if (stats) {
    mlir::dlc::printStats(c->info, outs());
    return 0;
  }

  std::string out = outputFile;
  auto textOut = [&](auto print) {
    if (out.empty() || out == "-") {
      print(outs());
      return 0;
    }
    std::string s;
    raw_string_ostream os(s);
    print(os);
    return writeFileAtomically(out, s) ? 0 : 1;
  };
  if (emit == "dlc")
    return textOut([&](raw_ostream &os) { c->module->print(os); });
  if (emit == "dlc-placed") {
    // The placement of the device the runtime prefers.
    if (failed(mlir::dlc::runPlacementPipeline(*c->module,
                                               wantsCuda() ? "cuda" : "cpu")))
      return 1;
    return textOut([&](raw_ostream &os) { c->module->print(os); });
  }
  if (emit == "ptx") {
    mlir::dlc::CudaCode code;
    if (failed(mlir::dlc::runLinalgPipeline(*c->module, c->info, "cuda")) ||
        failed(
            mlir::dlc::runCudaCodegenPipeline(*c->module, code, cudaOptions())))
      return 1;
    // Every op may have become a cuBLASLt call (GEMMs with their bias and
    // ReLU epilogues): then there is no PTX at all.
    if (code.kernels.empty())
      errs() << "dlc: note: no kernels: every entry runs as cuBLASLt calls "
                "and device copies\n";
    return textOut([&](raw_ostream &os) { os << code.ptx; });
  }

  if (emit == "linalg") {
    if (failed(mlir::dlc::runLinalgPipeline(*c->module, c->info)))
      return 1;
    return textOut([&](raw_ostream &os) { c->module->print(os); });
  }
  auto tm = mlir::dlc::createX86TargetMachine(cpu);
  if (!tm)
    return fail(toString(tm.takeError()));
  if (emit == "llvm-dialect") {
    if (failed(mlir::dlc::runLinalgPipeline(*c->module, c->info)) ||
        failed(
            mlir::dlc::runCpuCodegenPipeline(*c->module, codegenOptions(**tm))))
      return 1;
    return textOut([&](raw_ostream &os) { c->module->print(os); });
  }
  LLVMContext llctx;
  // An object file gets its large weights written straight into it after
  // LLVM has emitted the code (writeWeights).
  bool objectFile = emit == "obj" && !memoryReport.getNumOccurrences();
  std::unique_ptr<Module> m = lowerToLLVM(*c, llctx, **tm, objectFile);
  if (!m)
    return 1;
  if (memoryReport.getNumOccurrences()) {
    if (memoryReport != "" && memoryReport != "text" && memoryReport != "json")
      return fail("unknown --memory-report format '" + memoryReport + "'",
                  "use --memory-report or --memory-report=json");
    mlir::dlc::printMemoryReport(c->info, batchOf(c->info),
                                 memoryReport == "json", outs());
    // Mixed precision: what 16 bits save against the same model in fp32.
    if (precision != "fp32" && memoryReport != "json")
      if (auto fp32 = plannedAt(ctx, **tm, 0, "fp32"))
        mlir::dlc::printPrecisionSaving(c->info, *fp32, precision, outs());
  }
  if (failed(checkBudget(ctx, **tm, *c)))
    return 1;
  if (memoryReport.getNumOccurrences() && outputFile.empty())
    return 0;
  // The header knows the memory plan, so it comes after the lowering.
  if (emit == "header")
    return textOut(
        [&](raw_ostream &os) { os << mlir::dlc::generateHeader(c->info); });
  if (emit == "llvm")
    return textOut([&](raw_ostream &os) { m->print(os, nullptr); });

  if (emit == "asm") {
    SmallString<0> code;
    raw_svector_ostream codeStream(code);
    if (Error e = mlir::dlc::emitMachineCode(*m, **tm, codeStream, true))
      return fail(toString(std::move(e)));
    return textOut([&](raw_ostream &os) { os << code; });
  }

  // Object and header, side by side.
  if (out.empty())
    out = (sys::path::stem(inputFile) + ".o").str();
  if (out == "-")
    return fail("an object file cannot go to standard output", "use -o FILE.o");
  SmallString<256> header(out);
  sys::path::replace_extension(header, ".h");
  if (!writeObjectAtomically(out, *m, **tm, c->info) ||
      !writeFileAtomically(header, mlir::dlc::generateHeader(c->info)))
    return 1;
  return 0;
}

//===----------------------------------------------------------------------===//
// dlc run
//===----------------------------------------------------------------------===//

namespace {
/// Owns a dlc_tensor_list.
struct TensorList {
  dlc_tensor_list *list = nullptr;
  ~TensorList() { dlc_tensor_list_free(list); }
};
struct ModelHandle {
  dlc_model *model = nullptr;
  ~ModelHandle() { dlc_model_destroy(model); }
};
} // namespace

std::string dlc::driver::describe(const dlc_tensor_info &t) {
  std::string s = std::string(dlc_dtype_name(t.dtype)) + "[";
  for (int i = 0; i < t.rank; ++i)
    s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

using dlc::driver::describe;

bool dlc::driver::namesInput(StringRef name, StringRef modelName) {
  return name == modelName || dlc::onnxTensorName(name) == modelName;
}

bool dlc::driver::checkClassLabels(dlc_model *m, StringRef label, int classDim,
                                   dlc_dtype dtype, const void *data,
                                   int64_t count) {
  int32_t fwd = dlc_model_find_entry(m, "forward");
  dlc_tensor_info out;
  if (fwd < 0 || dlc_model_entry_output_info(m, fwd, 0, &out) != DLC_OK ||
      out.rank < 2 || (dtype != DLC_I64 && dtype != DLC_I32))
    return true;
  int32_t cdim = classDim < 0 ? classDim + out.rank : classDim;
  int64_t classes = out.rank == 2 ? out.shape[1] : out.shape[cdim];
  for (int64_t k = 0; k < count; ++k) {
    int64_t v = dtype == DLC_I64 ? static_cast<const int64_t *>(data)[k]
                                 : static_cast<const int32_t *>(data)[k];
    if (v != -100 && (v < 0 || v >= classes)) {
      fail("label " + Twine(v) + " at position " + Twine(k) + " of '" + label +
               "' is not a class of the " + Twine(classes) + " the output has",
           "labels are in [0, " + Twine(classes) +
               "), or -100 for a position to ignore");
      return false;
    }
  }
  return true;
}

static bool sameType(const dlc_tensor_info &a, const dlc_tensor_info &b) {
  if (a.dtype != b.dtype || a.rank != b.rank)
    return false;
  for (int i = 0; i < a.rank; ++i)
    if (a.shape[i] != b.shape[i])
      return false;
  return true;
}

/// --device as the runtime's kind; an unknown one is an error (printed).
static std::optional<dlc_device_kind> parseDevice() {
  if (device == "auto")
    return DLC_DEVICE_AUTO;
  if (device == "cpu")
    return DLC_DEVICE_CPU;
  if (device == "cuda")
    return DLC_DEVICE_CUDA;
  fail("unknown --device '" + device + "'", "use auto, cpu or cuda");
  return std::nullopt;
}

/// Compiles the model in memory (JIT) to run on this machine on `dev`, at
/// batch `batchOverride` (0: as --batch says); diagnostics are printed.
static std::unique_ptr<dlc::driver::JitModel>
jitCompile(mlir::MLIRContext &ctx, dlc_device_kind dev, int64_t batchOverride) {
  SourceMgr sm;
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  std::optional<OnnxDiagnosticHandler> onnxHandler;
  if (inputLanguage() == "onnx")
    onnxHandler.emplace(ctx);
  std::optional<Compiled> c = loadModel(ctx, sm, batchOverride);
  if (!c)
    return nullptr;
  // `dlc run` compiles for the device it will run on: no CUDA code when the
  // runtime would pick the CPU here (an explicit, unusable CUDA request
  // keeps it, so that model creation reports why).
  dlc_device_kind selected = DLC_DEVICE_AUTO;
  if (target == "all" && dlc_select_device(dev, &selected) == DLC_OK &&
      selected == DLC_DEVICE_CPU)
    target = "x86";
  auto tm = mlir::dlc::createX86TargetMachine(cpu);
  if (!tm) {
    fail(toString(tm.takeError()));
    return nullptr;
  }
  auto llctx = std::make_unique<LLVMContext>();
  std::unique_ptr<Module> m = lowerToLLVM(*c, *llctx, **tm);
  if (!m || failed(checkBudget(ctx, **tm, *c)))
    return nullptr;

  // JIT the module; the generated code resolves malloc/free from the process.
  auto result = std::make_unique<dlc::driver::JitModel>();
  auto jit = orc::LLJITBuilder().create();
  if (!jit) {
    fail("cannot start the JIT: " + toString(jit.takeError()));
    return nullptr;
  }
  result->jit = std::move(*jit);
  auto gen = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      result->jit->getDataLayout().getGlobalPrefix());
  if (!gen) {
    fail(toString(gen.takeError()));
    return nullptr;
  }
  result->jit->getMainJITDylib().addGenerator(std::move(*gen));
  if (cudaEmulate)
    if (Error e = dlc::defineEmulatedCuda(*result->jit)) {
      fail("JIT: " + toString(std::move(e)));
      return nullptr;
    }
  if (Error e = result->jit->addIRModule(
          orc::ThreadSafeModule(std::move(m), std::move(llctx)))) {
    fail("JIT: " + toString(std::move(e)));
    return nullptr;
  }
  auto sym = result->jit->lookup("dlc_model_" + c->info.name);
  if (!sym) {
    fail("JIT: " + toString(sym.takeError()));
    return nullptr;
  }
  result->desc = sym->toPtr<const dlc_model_desc *>();
  return result;
}

static int runMain(mlir::MLIRContext &ctx) {
  if (cpu != "native")
    return fail("dlc run executes on this machine: --cpu=" + cpu +
                    " could use instructions it does not have",
                "drop --cpu, or compile with -o and run the object where "
                "that CPU is");
  // Class labels keep the element type of their file (PyTorch takes int64
  // and int32 alike): the training step is compiled for it.
  if (train && lossKind == "cross_entropy" && labelType.empty()) {
    std::string label = labelName.empty() ? "y" : labelName.getValue();
    for (const std::string &spec : inputs) {
      auto [name, path] = StringRef(spec).split('=');
      if (name != label || !path.ends_with(".npy"))
        continue;
      TensorList file;
      dlc_tensor_info info;
      if (dlc_tensor_file_read(path.str().c_str(), DLC_FILE_NPY, &file.list) ==
              DLC_OK &&
          dlc_tensor_list_size(file.list) == 1 &&
          dlc_tensor_list_describe(file.list, 0, &info) == DLC_OK &&
          info.dtype == DLC_I32)
        labelType = "i32";
    }
  }
  std::optional<dlc_device_kind> dev = parseDevice();
  if (!dev)
    return 1;
  std::unique_ptr<dlc::driver::JitModel> jitted = jitCompile(ctx, *dev, 0);
  if (!jitted)
    return 1;
  const dlc_model_desc *desc = jitted->desc;

  ModelHandle model;
  if (dlc_model_create(desc, *dev, &model.model) != DLC_OK)
    return failRuntime("cannot create the model");
  if (const char *why = dlc_model_fallback_reason(model.model); why && *why)
    WithColor::warning(errs(), "dlc")
        << "running on the CPU: CUDA is usable but not for this model: " << why
        << "\n";
  // The lesson's `using device: ...`, on stderr: stdout is the outputs'.
  errs() << "dlc: using device: " << dlc_model_device_name(model.model) << "\n";
  if (!weights.empty()) {
    if (dlc_model_load(model.model, weights.c_str()) != DLC_OK)
      return failRuntime("cannot load weights");
  } else if (dlc_model_init(model.model, seed) != DLC_OK) {
    return failRuntime("cannot initialise the model");
  }

  std::string entry = entryName;
  if (train && entryName.getNumOccurrences() == 0)
    entry = "train_step";
  int32_t e = dlc_model_find_entry(model.model, entry.c_str());
  if (e < 0) {
    std::string names;
    for (int32_t k = 0; k < dlc_model_num_entries(model.model); ++k)
      names +=
          (k ? ", " : "") + std::string(dlc_model_entry_name(model.model, k));
    return fail("the model has no entry point '" + entry + "'",
                "entry points: " + names +
                    (train ? "" : " (train_step needs --train)"));
  }
  if (!train && (steps.getNumOccurrences() || printLoss))
    return fail("--steps and --print-loss need --train",
                "dlc run " + inputFile + " --train ...");
  int32_t nIn = dlc_model_entry_num_inputs(model.model, e);
  int32_t nOut = dlc_model_entry_num_outputs(model.model, e);

  // Inputs: NAME=FILE (.npy or .safetensors) or FILE.safetensors (by name).
  // NAME is the model's name for the input, or the ONNX graph's own name
  // ("onnx::Gemm_0" for "onnx__Gemm_0").
  auto names = dlc::driver::namesInput;
  for (const std::string &spec : inputs) {
    auto [name, path] = StringRef(spec).split('=');
    if (path.empty())
      continue;
    // A name of another entry's input is accepted (one set of files serves
    // forward and train_step); a name of no input at all is a typo.
    bool known = false;
    std::string list;
    for (int32_t k = 0; k < dlc_model_num_entries(model.model); ++k)
      for (int32_t i = 0; i < dlc_model_entry_num_inputs(model.model, k); ++i) {
        dlc_tensor_info want;
        dlc_model_entry_input_info(model.model, k, i, &want);
        known |= names(name, want.name);
        if (k == e)
          list += (list.empty() ? "" : ", ") + std::string(want.name);
      }
    if (!known)
      return fail("--input names '" + name + "', which is not an input of " +
                      "the model",
                  "the inputs of " + entry + " are: " + list);
  }
  std::vector<TensorList> files(inputs.size());
  std::vector<const void *> inPtrs(nIn, nullptr);
  for (int32_t i = 0; i < nIn; ++i) {
    dlc_tensor_info want;
    dlc_model_entry_input_info(model.model, e, i, &want);
    bool found = false;
    for (size_t f = 0; f < inputs.size() && !found; ++f) {
      auto [name, path] = StringRef(inputs[f]).split('=');
      if (path.empty())
        std::swap(name, path); // a bare FILE.safetensors
      if (!name.empty() && !names(name, want.name))
        continue;
      if (!files[f].list &&
          dlc_tensor_file_read(path.str().c_str(), DLC_FILE_AUTO,
                               &files[f].list) != DLC_OK)
        return failRuntime("cannot read input file '" + path + "'");
      int32_t idx = dlc_tensor_list_size(files[f].list) == 1 && !name.empty()
                        ? 0
                        : dlc_tensor_list_find(files[f].list, want.name);
      if (idx < 0)
        continue;
      // The file's header is checked before its data is read, which goes
      // straight into the model's memory.
      dlc_tensor_info got;
      dlc_tensor_list_describe(files[f].list, idx, &got);
      if (!sameType(got, want))
        return fail(Twine("input '") + want.name + "' must be " +
                        describe(want) + ", but '" + path + "' holds " +
                        describe(got),
                    "regenerate the file, or compile with --batch to match "
                    "its batch size");
      // In the model's host memory: on CUDA, pinned, so that every step
      // copies it to the device directly.
      void *host = nullptr;
      if (dlc_model_alloc_host(model.model, size_t(got.nbytes), &host) !=
          DLC_OK)
        return failRuntime("cannot allocate input '" + Twine(want.name) + "'");
      if (dlc_tensor_list_copy(files[f].list, idx, host, size_t(got.nbytes)) !=
          DLC_OK)
        return failRuntime("cannot read input '" + Twine(want.name) +
                           "' from '" + path + "'");
      inPtrs[i] = host;
      found = true;
    }
    if (!found)
      return fail(Twine("no data for input '") + want.name + "' (" +
                      describe(want) + ")",
                  Twine("pass --input ") + want.name + "=FILE.npy");
  }
  // Class labels: the generated code clamps one out of range (it cannot
  // raise), PyTorch refuses it; so does dlc run, before the first step.
  if (train && lossKind == "cross_entropy") {
    std::string label = labelName.empty() ? "y" : labelName.getValue();
    for (int32_t i = 0; i < nIn; ++i) {
      dlc_tensor_info want;
      dlc_model_entry_input_info(model.model, e, i, &want);
      if (label == want.name && inPtrs[i] &&
          !dlc::driver::checkClassLabels(model.model, label, classDim,
                                         want.dtype, inPtrs[i], want.numel))
        return 1;
    }
  }
  // The inputs are in the model's host memory now: the files' copies go.
  files.clear();

  TensorList outList;
  dlc_tensor_list_create(&outList.list);
  std::vector<void *> outPtrs(nOut);
  for (int32_t i = 0; i < nOut; ++i) {
    dlc_tensor_info t;
    dlc_model_entry_output_info(model.model, e, i, &t);
    int32_t idx;
    if (dlc_tensor_list_add(outList.list, t.name, t.dtype, t.rank, t.shape,
                            nullptr, &idx) != DLC_OK)
      return failRuntime("cannot allocate outputs");
    dlc_tensor_info got;
    dlc_tensor_list_get(outList.list, idx, &got);
    outPtrs[i] = got.data;
  }

  auto call = [&] {
    return dlc_model_run(model.model, e, inPtrs.data(), outPtrs.data());
  };
  unsigned calls = train && !benchmark ? unsigned(steps) : 1;
  if (calls == 0)
    return fail("--steps must be at least 1");
  // The training step's loss: its output named "loss"; with fp16 loss
  // scaling, "skipped" says whether the update was skipped.
  int32_t lossIdx = -1, skippedIdx = -1;
  for (int32_t i = 0; i < nOut; ++i) {
    dlc_tensor_info t;
    dlc_model_entry_output_info(model.model, e, i, &t);
    if (StringRef(t.name) == "loss" && t.dtype == DLC_F32 && t.rank == 0)
      lossIdx = i;
    if (StringRef(t.name) == "skipped" && t.dtype == DLC_I32 && t.rank == 0)
      skippedIdx = i;
  }
  for (unsigned step = 1; step <= calls; ++step) {
    if (call() != DLC_OK)
      return failRuntime("run failed");
    if (printLoss && lossIdx >= 0) {
      outs() << "step " << step << " loss "
             << format("%.9g", *static_cast<float *>(outPtrs[lossIdx]));
      if (skippedIdx >= 0 && *static_cast<int32_t *>(outPtrs[skippedIdx]))
        outs() << " skipped (gradient overflow: the loss scale halves)";
      outs() << "\n";
    }
  }
  if (benchmark) {
    std::vector<double> ms;
    for (unsigned i = 0; i < 3; ++i)
      call();
    for (unsigned i = 0; i < benchmark; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      call();
      auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    outs() << "benchmark: " << entry << " x" << benchmark << " on "
           << dlc_device_name(dlc_model_device(model.model)) << ": min "
           << format("%.4f", ms.front()) << " ms, median "
           << format("%.4f", ms[ms.size() / 2]) << " ms\n";
  }

  // Outputs: FILE (one output as .npy, all as .safetensors) or NAME=FILE.
  for (const std::string &spec : outputs) {
    auto [name, path] = StringRef(spec).split('=');
    if (path.empty())
      std::swap(name, path);
    TensorList sel;
    if (name.empty() && StringRef(path).ends_with(".safetensors")) {
      if (dlc_tensor_file_write(path.str().c_str(), DLC_FILE_AUTO,
                                outList.list) != DLC_OK)
        return failRuntime("cannot write '" + path + "'");
      continue;
    }
    int32_t idx = name.empty()
                      ? (nOut == 1 ? 0 : -1)
                      : dlc_tensor_list_find(outList.list, name.str().c_str());
    if (idx < 0)
      return fail("cannot tell which output goes to '" + spec + "'",
                  "name it: --output NAME=FILE.npy, or write all outputs to "
                  "one .safetensors file");
    dlc_tensor_info t;
    dlc_tensor_list_get(outList.list, idx, &t);
    dlc_tensor_list_create(&sel.list);
    dlc_tensor_list_add(sel.list, t.name, t.dtype, t.rank, t.shape, t.data,
                        nullptr);
    if (dlc_tensor_file_write(path.str().c_str(), DLC_FILE_AUTO, sel.list) !=
        DLC_OK)
      return failRuntime("cannot write '" + path + "'");
  }
  if (!saveFile.empty() &&
      dlc_model_save(model.model, saveFile.c_str()) != DLC_OK)
    return failRuntime("cannot save '" + saveFile + "'");
  if (outputs.empty() && !benchmark && !printLoss) {
    // Nothing to write: show the outputs.
    for (int32_t i = 0; i < nOut; ++i) {
      dlc_tensor_info t;
      dlc_tensor_list_get(outList.list, i, &t);
      outs() << t.name << " " << describe(t) << ":";
      int64_t n = std::min<int64_t>(t.numel, 16);
      for (int64_t k = 0; k < n; ++k) {
        if (t.dtype == DLC_F32)
          outs() << " " << format("%.6g", static_cast<float *>(t.data)[k]);
        else if (t.dtype == DLC_I64)
          outs() << " " << static_cast<int64_t *>(t.data)[k];
      }
      outs() << (t.numel > n ? " ...\n" : "\n");
    }
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// dlc train (Train.cpp)
//===----------------------------------------------------------------------===//

static int trainMain(mlir::MLIRContext &ctx) {
  if (cpu != "native")
    return fail("dlc train executes on this machine: --cpu=" + cpu +
                " could use instructions it does not have");
  std::optional<dlc_device_kind> dev = parseDevice();
  if (!dev)
    return 1;
  dlc::driver::TrainSetup setup;
  setup.model = inputFile;
  setup.device = *dev;
  setup.label = labelName.empty() ? "y" : labelName.getValue();
  setup.loss = lossKind;
  setup.classDim = classDim;
  setup.labelTypeGiven = !labelType.empty();
  setup.seed = seed;
  setup.seedGiven = seed.getNumOccurrences() > 0;
  setup.weights = weights;
  setup.save = saveFile;
  setup.batch = batch;
  setup.compile = [&ctx, d = *dev](int64_t b, StringRef type) {
    if (!type.empty())
      labelType = type.str();
    return jitCompile(ctx, d, b);
  };
  return dlc::driver::trainMain(setup);
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  bool run = argc > 1 && StringRef(argv[1]) == "run";
  bool trainMode = argc > 1 && StringRef(argv[1]) == "train";
  std::vector<char *> args(argv, argv + argc);
  if (run || trainMode)
    args.erase(args.begin() + 1);
  llvm::erase_if(args, [](char *a) {
    bool isStats = StringRef(a) == "--stats" || StringRef(a) == "-stats";
    stats |= isStats;
    return isStats;
  });

  mlir::registerPassManagerCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  mlir::dlc::registerPasses();
  cl::HideUnrelatedOptions({&dlcCat, &dlc::driver::trainCategory});
  cl::ParseCommandLineOptions(
      args.size(), args.data(),
      "dlc: ahead-of-time compiler for deep-learning models\n\n"
      "  dlc MODEL [-o model.o] [--emit=STAGE]\n"
      "  dlc MODEL --stats      parameters, multiply-adds, memory estimate\n"
      "  dlc MODEL --train [--loss L] [--optimizer O --lr X ...] -o model.o\n"
      "  dlc run MODEL [--weights W.safetensors | --seed N] "
      "--input NAME=FILE.npy ... [--output FILE]\n"
      "  dlc run MODEL --train ... --steps N --print-loss [--save "
      "C.safetensors]\n"
      "  dlc train MODEL --data D.npz [--val V.npz] --epochs N --batch-size B "
      "[--shuffle --seed S] [--save-every-epoch DIR] [--resume C] [--log L]\n");
  if (listOnnxOps) {
    for (const std::string &op : dlc::supportedOnnxOps())
      outs() << op << "\n";
    return 0;
  }
  if (inputFile.empty())
    return fail("no input model", "dlc MODEL.dlc|MODEL.onnx|MODEL.mlir ...; "
                                  "see dlc --help");
  if (trainMode) {
    if (!inputs.empty() || !outputs.empty() || benchmark ||
        steps.getNumOccurrences() || printLoss || entryName.getNumOccurrences())
      return fail("--input, --output, --benchmark, --steps, --print-loss "
                  "and --entry belong to 'dlc run'",
                  "dlc train takes the data set with --data FILE.npz");
    if (train.getNumOccurrences())
      return fail("dlc train always compiles the training step: drop --train");
    train = true;
  } else if (dlc::driver::trainFlagGiven()) {
    return fail("--data, --val, --epochs, --batch-size, --shuffle, "
                "--save-every-epoch, --resume, --log and --init-seed belong "
                "to 'dlc train'",
                "dlc train " + inputFile + " --data FILE.npz ...");
  }
  if (!run && !trainMode &&
      (!weights.empty() || !inputs.empty() || !outputs.empty() || benchmark ||
       steps.getNumOccurrences() || printLoss || saveFile.getNumOccurrences()))
    return fail("--weights, --input, --output, --benchmark, --steps, "
                "--print-loss and --save belong to 'dlc run'",
                "dlc run " + inputFile + " ...");
  // A value given is a value used: these were silently ignored.
  if (batch.getNumOccurrences() && batch < 1)
    return fail("--batch must be a positive number, not " + Twine(batch));
  if (saveFile.getNumOccurrences() && saveFile.empty())
    return fail("--save needs a file name", "--save checkpoint.safetensors");
  if (classDim.getNumOccurrences() && (!train || lossKind != "cross_entropy"))
    return fail("--class-dim applies to --train --loss cross_entropy");
  if (cudaEmulateReverse && !cudaEmulate)
    return fail("--cuda-emulate-reverse needs --cuda-emulate",
                "it changes the order in which the emulation runs threads");
  if (!train &&
      (!lossKind.empty() || !labelName.empty() || !labelType.empty() ||
       !optimizerKind.empty() || lr.getNumOccurrences() ||
       momentum.getNumOccurrences() || dampening.getNumOccurrences() ||
       !nesterov.empty() || weightDecay.getNumOccurrences() || !betas.empty() ||
       eps.getNumOccurrences()))
    return fail("--loss, --label, --optimizer and the optimizer settings "
                "apply to the training step",
                "add --train");

  mlir::DialectRegistry registry;
  mlir::dlc::registerDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // Diagnostics are for users: the location and message, not an IR dump.
  ctx.printOpOnDiagnostic(false);
  if (trainMode)
    return trainMain(ctx);
  return run ? runMain(ctx) : compileMain(ctx);
}
