//===- Compile.cpp - reading, lowering and emitting a model ---------------===//
//
// `dlc MODEL`: the model read (a .dlc description through the frontend, an
// ONNX file through the importer, or a .mlir module), taken through the
// dlc-level pipeline, then down the stages of --emit to an object file and
// its C header. loadModel and lowerToLLVM are also the first half of
// `dlc run` and of the memory budget's re-planning.
//
//===----------------------------------------------------------------------===//
#include "dlc/Driver/Compile.h"

#include "dlc/Driver/Errors.h"
#include "dlc/Driver/MemoryBudget.h"
#include "dlc/Frontend/ModelImporter.h"
#include "dlc/Frontend/OnnxImporter.h"
#include "dlc/Target/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace llvm;
using namespace dlc::driver;

StringRef dlc::driver::emitName(Emit emit) {
  switch (emit) {
  case Emit::Dlc:
    return "dlc";
  case Emit::DlcPlaced:
    return "dlc-placed";
  case Emit::Linalg:
    return "linalg";
  case Emit::LlvmDialect:
    return "llvm-dialect";
  case Emit::Llvm:
    return "llvm";
  case Emit::Asm:
    return "asm";
  case Emit::Ptx:
    return "ptx";
  case Emit::Obj:
    return "obj";
  case Emit::Header:
    return "header";
  }
  llvm_unreachable("unknown stage");
}

StringRef dlc::driver::precisionName(Precision precision) {
  switch (precision) {
  case Precision::FP32:
    return "fp32";
  case Precision::BF16:
    return "bf16";
  case Precision::FP16:
    return "fp16";
  }
  llvm_unreachable("unknown precision");
}

std::string dlc::driver::inputLanguage(const CompileOptions &o) {
  if (!o.language.empty())
    return o.language;
  if (StringRef(o.model).ends_with(".mlir"))
    return "mlir";
  if (StringRef(o.model).ends_with(".onnx"))
    return "onnx";
  return "dlc";
}

OnnxDiagnosticHandler::OnnxDiagnosticHandler(mlir::MLIRContext &ctx,
                                             StringRef modelPath)
    : ScopedDiagnosticHandler(&ctx) {
  setHandler([path = modelPath.str()](mlir::Diagnostic &d) {
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
        if (n != StringRef(path) &&
            msg.find("'" + n.str() + "'") == std::string::npos)
          where = " (at node '" + n.str() + "')";
      }
      errs() << path << ": " << k << ": " << msg << where << "\n";
    };
    print(d.getLocation(), d.str(), kind);
    for (mlir::Diagnostic &note : d.getNotes())
      print(note.getLocation(), note.str(), "note");
    return mlir::success();
  });
}

/// The ONNX import options of --input-shape, --batch and `batchOverride`;
/// none after an error (printed).
static std::optional<dlc::OnnxImportOptions>
onnxImportOptions(const CompileOptions &o, int64_t batchOverride) {
  dlc::OnnxImportOptions opts;
  for (const std::string &spec : o.inputShapes) {
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
  if (o.batch < 0) {
    fail("--batch must be positive");
    return std::nullopt;
  }
  if (o.batch)
    opts.batch = o.batch;
  if (batchOverride)
    opts.batch = batchOverride;
  return opts;
}

/// Reads the model file into the dlc dialect (not yet verified); null
/// after an error (printed, or a diagnostic).
static mlir::OwningOpRef<mlir::ModuleOp> importModel(mlir::MLIRContext &ctx,
                                                     SourceMgr &sm,
                                                     const CompileOptions &o,
                                                     int64_t batchOverride) {
  // A model is a file of known size: a device or pipe (/dev/zero) could be
  // read without end. ONNX's protobuf encoding is limited to 2 GiB, and a
  // text model of more than that is no model.
  constexpr uint64_t kMaxModelBytes = uint64_t(2) << 30;
  const std::string &inputFile = o.model;
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
      return nullptr;
    }
  }
  auto buffer = MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer) {
    fail("cannot read '" + inputFile + "': " + buffer.getError().message());
    return nullptr;
  }
  std::string lang = inputLanguage(o);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (lang == "onnx") {
    std::optional<dlc::OnnxImportOptions> opts =
        onnxImportOptions(o, batchOverride);
    if (!opts)
      return nullptr;
    module =
        dlc::importOnnxModel((*buffer)->getBuffer(), inputFile, ctx, *opts);
  } else if (!o.inputShapes.empty()) {
    fail("--input-shape applies to ONNX models only");
    return nullptr;
  }
  if (lang != "onnx")
    sm.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  if (lang == "onnx") {
    // Imported above.
  } else if (lang == "mlir") {
    module = mlir::parseSourceFile<mlir::ModuleOp>(sm, &ctx);
    if (module && o.batch) {
      mlir::emitError(module->getLoc())
          << "--batch applies to .dlc models only; a .mlir model has fixed "
             "shapes";
      return nullptr;
    }
  } else if (lang == "dlc") {
    dlc::ImportOptions opts;
    if (o.batch < 0) {
      fail("--batch must be positive");
      return nullptr;
    }
    if (o.batch)
      opts.batch = o.batch;
    if (batchOverride)
      opts.batch = batchOverride;
    module = dlc::importDlcModel(sm, ctx, opts);
  } else {
    fail("unknown input language '" + lang + "'",
         "use -x dlc, -x onnx or -x mlir");
    return nullptr;
  }
  return module;
}

std::optional<Compiled>
dlc::driver::loadModel(mlir::MLIRContext &ctx, SourceMgr &sm,
                       const CompileOptions &o, int64_t batchOverride,
                       std::optional<Precision> precisionOverride) {
  Compiled c;
  c.module = importModel(ctx, sm, o, batchOverride);
  if (!c.module || failed(mlir::verify(*c.module)))
    return std::nullopt;
  auto info = mlir::dlc::extractModelInfo(*c.module);
  if (failed(info))
    return std::nullopt;
  // --data-parallel=N: one rank's share of the batch, imported again.
  if (o.ranks > 1 && !batchOverride) {
    int64_t rows = batchOf(*info);
    if (rows % o.ranks) {
      fail("the batch of " + Twine(rows) + " rows does not split over " +
               Twine(o.ranks) + " ranks",
           "use a batch (--batch) that is a multiple of the number of ranks");
      return std::nullopt;
    }
    return loadModel(ctx, sm, o, rows / o.ranks, precisionOverride);
  }
  c.info = std::move(*info);
  std::optional<mlir::dlc::TrainOptions> trainOpts;
  if (o.train) {
    trainOpts = o.trainOptions ? o.trainOptions(o.labelType)
                               : mlir::dlc::TrainOptions();
    if (!trainOpts)
      return std::nullopt;
    if (o.shardOptimizerState)
      trainOpts->shard.ranks = o.ranks;
  }
  Precision prec = precisionOverride.value_or(o.precision);
  if (failed(mlir::dlc::runDlcPipeline(
          *c.module, trainOpts ? &*trainOpts : nullptr, precisionName(prec))))
    return std::nullopt;
  // Weights re-laid out once (packed parameters and their entry), for
  // inference: a training step reads the weights it updates as they are,
  // and copies for its model's forward pass would only take memory.
  bool pack = o.packWeightsMiB > 0 && !o.train;
  if (pack &&
      failed(mlir::dlc::runPackWeightsPipeline(*c.module, o.packWeightsMiB)))
    return std::nullopt;
  if (o.train || prec != Precision::FP32 || pack) {
    // The training step added an entry and the optimizer state; autocast
    // changed the activations' types; packing added params and an entry.
    auto trained = mlir::dlc::extractModelInfo(*c.module);
    if (failed(trained))
      return std::nullopt;
    c.info = std::move(*trained);
  }
  return c;
}

mlir::dlc::CpuCodegenOptions
dlc::driver::codegenOptions(const CompileOptions &o, TargetMachine &tm) {
  mlir::dlc::CpuCodegenOptions opts;
  opts.vectorBits = o.vectorBits ? o.vectorBits : mlir::dlc::vectorBitsOf(tm);
  opts.registerTile = o.registerTile;
  opts.cacheTile = o.cacheTile;
  opts.bf16Dot = mlir::dlc::hasBf16DotOf(tm);
  opts.overlapComm = o.overlapComm;
  return opts;
}

static mlir::dlc::CudaOptions cudaOptions(const CompileOptions &o) {
  mlir::dlc::CudaOptions opts;
  opts.smallGemmFmas = o.cudaSmallGemmFmas;
  opts.overlapComm = o.overlapComm;
  return opts;
}

/// Whether the object gets CUDA code besides the CPU code.
static bool wantsCuda(const CompileOptions &o) {
  return o.target != CodeTarget::X86;
}

/// The CUDA half of the object, from a copy of the dlc-level module. With
/// --target=all a model the GPU lowering cannot take yet is a warning, and
/// the object runs on the CPU only; with --target=nvptx it is an error.
static mlir::OwningOpRef<mlir::ModuleOp> lowerToCuda(Compiled &c,
                                                     const CompileOptions &o,
                                                     mlir::dlc::CudaCode &code,
                                                     bool &failedHard) {
  failedHard = false;
  mlir::OwningOpRef<mlir::ModuleOp> cuda = c.module->clone();
  std::string firstError;
  bool required = o.target == CodeTarget::Nvptx;
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
    result = mlir::dlc::runLinalgPipeline(*cuda, "cuda");
    if (succeeded(result))
      result = mlir::dlc::runCudaCodegenPipeline(*cuda, code, cudaOptions(o));
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

/// Whether any value of `module` is bf16 (a model autocast to bf16, or
/// bf16 weights): only then does a variant with bf16 dot products differ.
static bool usesBf16(mlir::ModuleOp module) {
  bool found = false;
  module.walk([&](mlir::Operation *op) {
    for (mlir::Type t : op->getResultTypes())
      if (mlir::getElementTypeOrSelf(t).isBF16())
        found = true;
    return found ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
  });
  return found;
}

/// --cpu=portable: the CPU code of the linalg-level `c` lowered once more
/// for each richer CPU of portableCpus() (the bf16 one only when the model
/// has bf16 values), each in a module and target machine of its own.
static LogicalResult
lowerCpuVariants(Compiled &c, const CompileOptions &o,
                 SmallVectorImpl<mlir::OwningOpRef<mlir::ModuleOp>> &modules,
                 SmallVectorImpl<std::unique_ptr<TargetMachine>> &machines,
                 SmallVectorImpl<mlir::dlc::CpuVariant> &variants) {
  bool bf16 = usesBf16(*c.module);
  // The last of portableCpus() is the base: the module itself.
  for (StringRef cpu : mlir::dlc::portableCpus().drop_back()) {
    auto tm = mlir::dlc::createX86TargetMachine(cpu);
    if (!tm)
      return fail(toString(tm.takeError())), failure();
    if (mlir::dlc::hasBf16DotOf(**tm) && !bf16)
      continue;
    mlir::OwningOpRef<mlir::ModuleOp> module = c.module->clone();
    if (failed(
            mlir::dlc::runCpuCodegenPipeline(*module, codegenOptions(o, **tm))))
      return failure();
    variants.push_back({cpu.str(), *module, tm->get()});
    modules.push_back(std::move(module));
    machines.push_back(std::move(*tm));
  }
  return success();
}

std::unique_ptr<Module> dlc::driver::lowerToLLVM(Compiled &c,
                                                 const CompileOptions &o,
                                                 LLVMContext &llctx,
                                                 TargetMachine &tm,
                                                 bool weightPlaceholders) {
  mlir::dlc::CudaCode code;
  mlir::OwningOpRef<mlir::ModuleOp> cuda;
  // --cpu=portable: the CPU code once more for each richer CPU.
  SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> variantModules;
  SmallVector<std::unique_ptr<TargetMachine>> variantMachines;
  SmallVector<mlir::dlc::CpuVariant> variants;
  if (o.cudaEmulate) {
    // The CUDA lowering as the object's CPU code.
    if (failed(mlir::dlc::runLinalgPipeline(*c.module, "cuda")) ||
        failed(mlir::dlc::runCudaEmulationPipeline(*c.module, cudaOptions(o),
                                                   o.cudaEmulateReverse)))
      return nullptr;
  } else {
    if (wantsCuda(o)) {
      bool failedHard = false;
      cuda = lowerToCuda(c, o, code, failedHard);
      if (failedHard)
        return nullptr;
    }
    if (failed(mlir::dlc::runLinalgPipeline(*c.module)))
      return nullptr;
    if (o.cpu == "portable" &&
        failed(
            lowerCpuVariants(c, o, variantModules, variantMachines, variants)))
      return nullptr;
    if (failed(
            mlir::dlc::runCpuCodegenPipeline(*c.module, codegenOptions(o, tm))))
      return nullptr;
  }
  mlir::dlc::collectWorkspaceSizes(*c.module, c.info);
  // One workspace serves every variant: the largest plan (and its buffers,
  // for the report's reuse factor).
  for (const mlir::dlc::CpuVariant &v : variants) {
    mlir::dlc::ModelInfo planned = c.info;
    mlir::dlc::collectWorkspaceSizes(v.module, planned);
    for (auto [e, p] : llvm::zip(c.info.tableEntries(), planned.tableEntries()))
      if (p->workspaceBytes > e->workspaceBytes) {
        e->workspaceBytes = p->workspaceBytes;
        e->bufferBytes = p->bufferBytes;
      }
  }
  // The CUDA code has its own plan (cuBLASLt reads the 16-bit copies that
  // the CPU code rounds while packing).
  for (mlir::dlc::EntryInfo *e : c.info.tableEntries()) {
    auto it = code.workspaceBytes.find(e->symbol);
    if (cuda && it != code.workspaceBytes.end())
      e->cudaWorkspaceBytes = it->second;
  }
  auto m = mlir::dlc::translateToLLVM(
      *c.module, c.info, llctx, tm, cuda ? *cuda : mlir::ModuleOp(),
      cuda ? &code : nullptr, weightPlaceholders, variants,
      o.cpu == "portable" ? mlir::dlc::portableCpus().back() : "");
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

/// The combinations of --emit, --target and --cuda-emulate that make no
/// sense; returns the exit status of the error, or 0.
static int checkStage(const CompileOptions &o) {
  if (o.cudaEmulate && o.emit != Emit::Llvm)
    return fail("--cuda-emulate belongs to 'dlc run' (or --emit=llvm)",
                "it runs the CUDA lowering on this machine's CPU, for tests");
  if (o.target == CodeTarget::Nvptx && o.emit != Emit::Ptx &&
      o.emit != Emit::Dlc && o.emit != Emit::DlcPlaced)
    return fail("--target=nvptx cannot emit '" + emitName(o.emit) + "'",
                "an object always carries the CPU code the runtime falls "
                "back to: use --target=all, or --emit=ptx for the kernels");
  if (o.target == CodeTarget::X86 && o.emit == Emit::Ptx)
    return fail("--emit=ptx needs CUDA code", "use --target=all or nvptx");
  return 0;
}

int dlc::driver::compileModel(mlir::MLIRContext &ctx, const CompileOptions &o) {
  if (int status = checkStage(o))
    return status;
  SourceMgr sm;
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  std::optional<OnnxDiagnosticHandler> onnxHandler;
  if (inputLanguage(o) == "onnx")
    onnxHandler.emplace(ctx, o.model);
  std::optional<Compiled> c = loadModel(ctx, sm, o);
  if (!c)
    return 1;
  if (o.stats) {
    mlir::dlc::printStats(c->info, outs());
    return 0;
  }

  std::string out = o.output;
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
  Emit emit = o.emit;
  if (emit == Emit::Dlc)
    return textOut([&](raw_ostream &os) { c->module->print(os); });
  if (emit == Emit::DlcPlaced) {
    // The placement of the device the runtime prefers.
    if (failed(mlir::dlc::runPlacementPipeline(*c->module,
                                               wantsCuda(o) ? "cuda" : "cpu")))
      return 1;
    return textOut([&](raw_ostream &os) { c->module->print(os); });
  }
  if (emit == Emit::Ptx) {
    mlir::dlc::CudaCode code;
    if (failed(mlir::dlc::runLinalgPipeline(*c->module, "cuda")) ||
        failed(mlir::dlc::runCudaCodegenPipeline(*c->module, code,
                                                 cudaOptions(o))))
      return 1;
    // Every op may have become a cuBLASLt call (GEMMs with their bias and
    // ReLU epilogues): then there is no PTX at all.
    if (code.kernels.empty())
      errs() << "dlc: note: no kernels: every entry runs as cuBLASLt calls "
                "and device copies\n";
    return textOut([&](raw_ostream &os) { os << code.ptx; });
  }

  if (emit == Emit::Linalg) {
    if (failed(mlir::dlc::runLinalgPipeline(*c->module)))
      return 1;
    return textOut([&](raw_ostream &os) { c->module->print(os); });
  }
  // --cpu=portable: the base every x86-64 CPU since 2013 has, with the
  // richer variants linked in by lowerToLLVM.
  bool portable = o.cpu == "portable";
  if (portable && emit == Emit::LlvmDialect)
    return fail("--cpu=portable compiles the CPU code several times, and "
                "--emit=llvm-dialect shows one",
                "choose one CPU, e.g. --cpu=x86-64-v4, or --emit=llvm for all");
  auto tm = mlir::dlc::createX86TargetMachine(
      portable ? StringRef(mlir::dlc::portableCpus().back())
               : StringRef(o.cpu));
  if (!tm)
    return fail(toString(tm.takeError()));
  if (emit == Emit::LlvmDialect) {
    if (failed(mlir::dlc::runLinalgPipeline(*c->module)) ||
        failed(mlir::dlc::runCpuCodegenPipeline(*c->module,
                                                codegenOptions(o, **tm))))
      return 1;
    return textOut([&](raw_ostream &os) { c->module->print(os); });
  }
  LLVMContext llctx;
  // An object file gets its large weights written straight into it after
  // LLVM has emitted the code (writeWeights).
  bool objectFile = emit == Emit::Obj && !o.memoryReport;
  std::unique_ptr<Module> m = lowerToLLVM(*c, o, llctx, **tm, objectFile);
  if (!m)
    return 1;
  if (o.memoryReport) {
    const std::string &format = *o.memoryReport;
    if (format != "" && format != "text" && format != "json")
      return fail("unknown --memory-report format '" + format + "'",
                  "use --memory-report or --memory-report=json");
    mlir::dlc::printMemoryReport(c->info, batchOf(c->info), format == "json",
                                 outs(), o.ranks);
    // Mixed precision: what 16 bits save against the same model in fp32.
    // Its weights reach the matmuls through autocast's casts, which
    // dlc-pack-weights leaves to the matmul packing: the reference packs
    // no more than it does.
    CompileOptions reference = o;
    if (!c->info.packedBytes())
      reference.packWeightsMiB = 0;
    if (o.precision != Precision::FP32 && format != "json")
      if (auto fp32 = plannedAt(ctx, **tm, reference, 0, Precision::FP32))
        mlir::dlc::printPrecisionSaving(c->info, *fp32,
                                        precisionName(o.precision), outs());
  }
  if (failed(checkBudget(ctx, **tm, *c, o)))
    return 1;
  if (o.memoryReport && o.output.empty())
    return 0;
  // The header knows the memory plan, so it comes after the lowering.
  if (emit == Emit::Header)
    return textOut(
        [&](raw_ostream &os) { os << mlir::dlc::generateHeader(c->info); });
  if (emit == Emit::Llvm)
    return textOut([&](raw_ostream &os) { m->print(os, nullptr); });

  if (emit == Emit::Asm) {
    SmallString<0> code;
    raw_svector_ostream codeStream(code);
    if (Error e = mlir::dlc::emitMachineCode(*m, **tm, codeStream, true))
      return fail(toString(std::move(e)));
    return textOut([&](raw_ostream &os) { os << code; });
  }

  // Object and header, side by side.
  if (out.empty())
    out = (sys::path::stem(o.model) + ".o").str();
  if (out == "-")
    return fail("an object file cannot go to standard output", "use -o FILE.o");
  SmallString<256> header(out);
  sys::path::replace_extension(header, ".h");
  if (!writeObjectAtomically(out, *m, **tm, c->info) ||
      !writeFileAtomically(header, mlir::dlc::generateHeader(c->info)))
    return 1;
  return 0;
}
