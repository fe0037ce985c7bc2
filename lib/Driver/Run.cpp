//===- Run.cpp - dlc run: a model compiled in memory and called -----------===//
//
// jitCompile takes a model through the same path as `dlc MODEL` to an LLVM
// module, for the device it will run on, checks its memory against the
// budget and JIT-compiles it with ORC LLJIT. runModel then creates the
// model through libdlcrt, loads or initialises its parameters, reads the
// inputs straight into the model's host memory, calls the entry (once, for
// --steps training steps, or for a benchmark) and writes or prints the
// outputs.
//
//===----------------------------------------------------------------------===//
#include "dlc/Driver/Run.h"

#include "EmulatedCuda.h"

#include "dlc/Driver/Compile.h"
#include "dlc/Driver/Errors.h"
#include "dlc/Driver/MemoryBudget.h"
#include "dlc/Frontend/OnnxImporter.h"
#include "dlc/dlc_io.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

using namespace llvm;
using namespace dlc::driver;

dlc::driver::JitModel::~JitModel() = default;

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

struct CommHandle {
  dlc_comm *comm = nullptr;
  ~CommHandle() { dlc_comm_destroy(comm); }
};

/// The entry `dlc run` calls and its buffers.
struct EntryCall {
  dlc_model *model = nullptr;
  /// --data-parallel: this process's rank of `ranks`; it takes rows
  /// [rank * B / ranks, (rank + 1) * B / ranks) of every input file.
  int32_t rank = 0, ranks = 1;
  int32_t e = -1;
  std::string entry;
  int32_t nIn = 0, nOut = 0;
  std::vector<const void *> inPtrs;
  TensorList outList;
  std::vector<void *> outPtrs;

  dlc_status call() {
    return dlc_model_run(model, e, inPtrs.data(), outPtrs.data());
  }
};
} // namespace

/// NAME=FILE, or a bare FILE (NAME empty), of --input and --output.
static std::pair<StringRef, StringRef> fileSpec(StringRef spec) {
  auto [name, path] = spec.split('=');
  if (path.empty())
    return {StringRef(), name};
  return {name, path};
}

std::string dlc::driver::describe(const dlc_tensor_info &t) {
  std::string s = std::string(dlc_dtype_name(t.dtype)) + "[";
  for (int i = 0; i < t.rank; ++i)
    s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

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

std::unique_ptr<JitModel> dlc::driver::jitCompile(mlir::MLIRContext &ctx,
                                                  CompileOptions o,
                                                  dlc_device_kind dev,
                                                  int64_t batchOverride,
                                                  StringRef labelType) {
  if (!labelType.empty())
    o.labelType = labelType.str();
  SourceMgr sm;
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  std::optional<OnnxDiagnosticHandler> onnxHandler;
  if (inputLanguage(o) == "onnx")
    onnxHandler.emplace(ctx, o.model);
  std::optional<Compiled> c = loadModel(ctx, sm, o, batchOverride);
  if (!c)
    return nullptr;
  // `dlc run` compiles for the device it will run on: no CUDA code when the
  // runtime would pick the CPU here (an explicit, unusable CUDA request
  // keeps it, so that model creation reports why).
  dlc_device_kind selected = DLC_DEVICE_AUTO;
  if (o.target == CodeTarget::All &&
      dlc_select_device(dev, &selected) == DLC_OK && selected == DLC_DEVICE_CPU)
    o.target = CodeTarget::X86;
  auto tm = mlir::dlc::createX86TargetMachine(o.cpu);
  if (!tm) {
    fail(toString(tm.takeError()));
    return nullptr;
  }
  auto llctx = std::make_unique<LLVMContext>();
  std::unique_ptr<Module> m = lowerToLLVM(*c, o, *llctx, **tm);
  if (!m || failed(checkBudget(ctx, **tm, *c, o)))
    return nullptr;

  // JIT the module; the generated code resolves malloc/free from the process.
  auto result = std::make_unique<JitModel>();
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
  if (o.cudaEmulate)
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

/// Class labels keep the element type of their file (PyTorch takes int64
/// and int32 alike): the training step is compiled for it. "i32" for an
/// int32 label file of cross-entropy training without --label-type, else
/// "".
static std::string labelTypeOfFiles(const RunOptions &o) {
  if (!o.compile.train || o.loss != "cross_entropy" || o.labelTypeGiven)
    return "";
  std::string type;
  for (const std::string &spec : o.inputs) {
    auto [name, path] = StringRef(spec).split('=');
    if (name != o.label || !path.ends_with(".npy"))
      continue;
    TensorList file;
    dlc_tensor_info info;
    if (dlc_tensor_file_read(path.str().c_str(), DLC_FILE_NPY, &file.list) ==
            DLC_OK &&
        dlc_tensor_list_size(file.list) == 1 &&
        dlc_tensor_list_describe(file.list, 0, &info) == DLC_OK &&
        info.dtype == DLC_I32)
      type = "i32";
  }
  return type;
}

/// Loads (--weights) or initialises (--seed) the parameters and finds the
/// entry; returns the exit status of an error, or 0.
static int prepareModel(const RunOptions &o, EntryCall &run) {
  dlc_model *model = run.model;
  if (!o.weights.empty()) {
    if (dlc_model_load(model, o.weights.c_str()) != DLC_OK)
      return failRuntime("cannot load weights");
  } else if (dlc_model_init(model, o.seed) != DLC_OK) {
    return failRuntime("cannot initialise the model");
  }

  bool train = o.compile.train;
  run.entry = o.entry.value_or(train ? "train_step" : "forward");
  run.e = dlc_model_find_entry(model, run.entry.c_str());
  if (run.e < 0) {
    std::string names;
    for (int32_t k = 0; k < dlc_model_num_entries(model); ++k)
      names += (k ? ", " : "") + std::string(dlc_model_entry_name(model, k));
    return fail("the model has no entry point '" + run.entry + "'",
                "entry points: " + names +
                    (train ? "" : " (train_step needs --train)"));
  }
  // Each rank holds its own rows: only the step, whose gradients and loss
  // are the global batch's, has one result for the job.
  if (o.dataParallel && !dlc_model_entry_uses_comm(model, run.e))
    return fail("--data-parallel runs the training step, not '" + run.entry +
                    "'",
                "drop --entry; evaluate the saved weights with dlc run "
                "without --data-parallel");
  if (!train && (o.steps || o.printLoss))
    return fail("--steps and --print-loss need --train",
                "dlc run " + o.compile.model + " --train ...");
  run.nIn = dlc_model_entry_num_inputs(model, run.e);
  run.nOut = dlc_model_entry_num_outputs(model, run.e);
  return 0;
}

/// Every NAME of --input NAME=FILE names an input of some entry (one set of
/// files serves forward and train_step); a name of no input at all is a
/// typo. Returns the exit status of an error, or 0.
static int checkInputNames(const RunOptions &o, const EntryCall &run) {
  for (const std::string &spec : o.inputs) {
    auto [name, path] = StringRef(spec).split('=');
    if (path.empty())
      continue;
    bool known = false;
    std::string list;
    for (int32_t k = 0; k < dlc_model_num_entries(run.model); ++k)
      for (int32_t i = 0; i < dlc_model_entry_num_inputs(run.model, k); ++i) {
        dlc_tensor_info want;
        dlc_model_entry_input_info(run.model, k, i, &want);
        known |= namesInput(name, want.name);
        if (k == run.e)
          list += (list.empty() ? "" : ", ") + std::string(want.name);
      }
    if (!known)
      return fail("--input names '" + name + "', which is not an input of " +
                      "the model",
                  "the inputs of " + run.entry + " are: " + list);
  }
  return 0;
}

/// --data-parallel: reads this rank's rows of the file's tensor `idx` (the
/// global batch `got`) into the model's host memory at `host`. Returns the
/// exit status of an error, or 0.
static int readShare(EntryCall &run, dlc_tensor_list *file, int32_t idx,
                     StringRef path, const dlc_tensor_info &want,
                     const dlc_tensor_info &got, const void *&host) {
  dlc_tensor_info global = want;
  if (want.rank > 0)
    global.shape[0] = want.shape[0] * run.ranks;
  if (want.rank == 0 || !sameType(got, global))
    return fail(Twine("input '") + want.name + "' must be " + describe(global) +
                    " (the global batch: " + Twine(run.ranks) + " ranks of " +
                    describe(want) + "), but '" + path + "' holds " +
                    describe(got),
                "every input file of a data-parallel run holds the whole "
                "batch along its first dimension");
  std::vector<char> all(static_cast<size_t>(got.nbytes));
  if (dlc_tensor_list_copy(file, idx, all.data(), all.size()) != DLC_OK)
    return failRuntime("cannot read input '" + Twine(want.name) + "' from '" +
                       path + "'");
  void *share = nullptr;
  size_t bytes = static_cast<size_t>(want.nbytes);
  if (dlc_model_alloc_host(run.model, bytes, &share) != DLC_OK)
    return failRuntime("cannot allocate input '" + Twine(want.name) + "'");
  std::memcpy(share, all.data() + static_cast<size_t>(run.rank) * bytes, bytes);
  host = share;
  return 0;
}

/// Reads every input of the entry into the model's host memory (run.inPtrs):
/// NAME=FILE (.npy or .safetensors) or FILE.safetensors (by name). NAME is
/// the model's name for the input, or the ONNX graph's own name
/// ("onnx::Gemm_0" for "onnx__Gemm_0"). Returns the exit status of an
/// error, or 0.
static int readInputs(const RunOptions &o, EntryCall &run) {
  const std::vector<std::string> &inputs = o.inputs;
  std::vector<TensorList> files(inputs.size());
  run.inPtrs.assign(run.nIn, nullptr);
  for (int32_t i = 0; i < run.nIn; ++i) {
    dlc_tensor_info want;
    dlc_model_entry_input_info(run.model, run.e, i, &want);
    bool found = false;
    for (size_t f = 0; f < inputs.size() && !found; ++f) {
      auto [name, path] = fileSpec(inputs[f]);
      if (!name.empty() && !namesInput(name, want.name))
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
      if (run.ranks > 1) {
        if (int status = readShare(run, files[f].list, idx, path, want, got,
                                   run.inPtrs[i]))
          return status;
        found = true;
        continue;
      }
      if (!sameType(got, want))
        return fail(Twine("input '") + want.name + "' must be " +
                        describe(want) + ", but '" + path + "' holds " +
                        describe(got),
                    "regenerate the file, or compile with --batch to match "
                    "its batch size");
      // In the model's host memory: on CUDA, pinned, so that every step
      // copies it to the device directly.
      void *host = nullptr;
      if (dlc_model_alloc_host(run.model, size_t(got.nbytes), &host) != DLC_OK)
        return failRuntime("cannot allocate input '" + Twine(want.name) + "'");
      if (dlc_tensor_list_copy(files[f].list, idx, host, size_t(got.nbytes)) !=
          DLC_OK)
        return failRuntime("cannot read input '" + Twine(want.name) +
                           "' from '" + path + "'");
      run.inPtrs[i] = host;
      found = true;
    }
    if (!found)
      return fail(Twine("no data for input '") + want.name + "' (" +
                      describe(want) + ")",
                  Twine("pass --input ") + want.name + "=FILE.npy");
  }
  return 0;
}

/// Class labels: the generated code clamps one out of range (it cannot
/// raise), PyTorch refuses it; so does dlc run, before the first step.
static bool checkLabels(const RunOptions &o, const EntryCall &run) {
  if (!o.compile.train || o.loss != "cross_entropy")
    return true;
  for (int32_t i = 0; i < run.nIn; ++i) {
    dlc_tensor_info want;
    dlc_model_entry_input_info(run.model, run.e, i, &want);
    if (o.label == want.name && run.inPtrs[i] &&
        !checkClassLabels(run.model, o.label, o.classDim, want.dtype,
                          run.inPtrs[i], want.numel))
      return false;
  }
  return true;
}

/// Allocates the entry's outputs in run.outList; returns the exit status of
/// an error, or 0.
static int allocateOutputs(EntryCall &run) {
  dlc_tensor_list_create(&run.outList.list);
  run.outPtrs.assign(run.nOut, nullptr);
  for (int32_t i = 0; i < run.nOut; ++i) {
    dlc_tensor_info t;
    dlc_model_entry_output_info(run.model, run.e, i, &t);
    int32_t idx;
    if (dlc_tensor_list_add(run.outList.list, t.name, t.dtype, t.rank, t.shape,
                            nullptr, &idx) != DLC_OK)
      return failRuntime("cannot allocate outputs");
    dlc_tensor_info got;
    dlc_tensor_list_get(run.outList.list, idx, &got);
    run.outPtrs[i] = got.data;
  }
  return 0;
}

/// Element `k` of `t` as a double (f16 and bf16 widened exactly).
static double elementAt(const dlc_tensor_info &t, int64_t k) {
  auto half = [&](const llvm::fltSemantics &sem) {
    llvm::APFloat v(sem, llvm::APInt(16, static_cast<uint16_t *>(t.data)[k]));
    bool lost;
    v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    return v.convertToDouble();
  };
  switch (t.dtype) {
  case DLC_F32:
    return static_cast<float *>(t.data)[k];
  case DLC_F64:
    return static_cast<double *>(t.data)[k];
  case DLC_F16:
    return half(llvm::APFloat::IEEEhalf());
  case DLC_BF16:
    return half(llvm::APFloat::BFloat());
  case DLC_I64:
    return static_cast<double>(static_cast<int64_t *>(t.data)[k]);
  case DLC_I32:
    return static_cast<int32_t *>(t.data)[k];
  case DLC_I8:
    return static_cast<int8_t *>(t.data)[k];
  case DLC_U8:
    return static_cast<uint8_t *>(t.data)[k];
  }
  return 0;
}

/// Calls the entry once, or --steps times with --train (printing the loss
/// with --print-loss); returns the exit status of an error, or 0.
static int callEntry(const RunOptions &o, EntryCall &run) {
  unsigned calls = o.compile.train && !o.benchmark ? o.steps.value_or(1) : 1;
  if (calls == 0)
    return fail("--steps must be at least 1");
  // The training step's loss: its output named "loss"; with fp16 loss
  // scaling, "skipped" says whether the update was skipped.
  int32_t lossIdx = -1, skippedIdx = -1;
  for (int32_t i = 0; i < run.nOut; ++i) {
    dlc_tensor_info t;
    dlc_model_entry_output_info(run.model, run.e, i, &t);
    if (StringRef(t.name) == "loss" && t.rank == 0 &&
        (t.dtype == DLC_F32 || t.dtype == DLC_F64))
      lossIdx = i;
    if (StringRef(t.name) == "skipped" && t.dtype == DLC_I32 && t.rank == 0)
      skippedIdx = i;
  }
  for (unsigned step = 1; step <= calls; ++step) {
    if (run.call() != DLC_OK)
      return failRuntime("run failed");
    if (o.printLoss && lossIdx >= 0 && run.rank == 0) {
      dlc_tensor_info loss;
      dlc_tensor_list_get(run.outList.list, lossIdx, &loss);
      outs() << "step " << step << " loss "
             << format(loss.dtype == DLC_F64 ? "%.17g" : "%.9g",
                       elementAt(loss, 0));
      if (skippedIdx >= 0 && *static_cast<int32_t *>(run.outPtrs[skippedIdx]))
        outs() << " skipped (gradient overflow: the loss scale halves)";
      outs() << "\n";
    }
  }
  return 0;
}

/// --benchmark N: times N calls after three of warm-up; prints the minimum
/// and the median.
static void benchmark(const RunOptions &o, EntryCall &run) {
  std::vector<double> ms;
  for (unsigned i = 0; i < 3; ++i)
    run.call();
  for (unsigned i = 0; i < o.benchmark; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    run.call();
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  if (run.rank != 0)
    return;
  outs() << "benchmark: " << run.entry << " x" << o.benchmark << " on "
         << dlc_device_name(dlc_model_device(run.model)) << ": min "
         << format("%.4f", ms.front()) << " ms, median "
         << format("%.4f", ms[ms.size() / 2]) << " ms\n";
}

/// Writes the outputs: FILE (one output as .npy, all as .safetensors) or
/// NAME=FILE. Returns the exit status of an error, or 0.
static int writeOutputs(const RunOptions &o, EntryCall &run) {
  for (const std::string &spec : o.outputs) {
    auto [name, path] = fileSpec(spec);
    TensorList sel;
    if (name.empty() && StringRef(path).ends_with(".safetensors")) {
      if (dlc_tensor_file_write(path.str().c_str(), DLC_FILE_AUTO,
                                run.outList.list) != DLC_OK)
        return failRuntime("cannot write '" + path + "'");
      continue;
    }
    int32_t idx = name.empty() ? (run.nOut == 1 ? 0 : -1)
                               : dlc_tensor_list_find(run.outList.list,
                                                      name.str().c_str());
    if (idx < 0)
      return fail("cannot tell which output goes to '" + spec + "'",
                  "name it: --output NAME=FILE.npy, or write all outputs to "
                  "one .safetensors file");
    dlc_tensor_info t;
    dlc_tensor_list_get(run.outList.list, idx, &t);
    dlc_tensor_list_create(&sel.list);
    dlc_tensor_list_add(sel.list, t.name, t.dtype, t.rank, t.shape, t.data,
                        nullptr);
    if (dlc_tensor_file_write(path.str().c_str(), DLC_FILE_AUTO, sel.list) !=
        DLC_OK)
      return failRuntime("cannot write '" + path + "'");
  }
  return 0;
}

/// Nothing to write: shows the outputs (the first 16 values of each; floats
/// to the digits their dtype holds, integers exactly).
static void printOutputs(const EntryCall &run) {
  for (int32_t i = 0; i < run.nOut; ++i) {
    dlc_tensor_info t;
    dlc_tensor_list_get(run.outList.list, i, &t);
    outs() << t.name << " " << describe(t) << ":";
    int64_t n = std::min<int64_t>(t.numel, 16);
    for (int64_t k = 0; k < n; ++k) {
      if (t.dtype == DLC_I64)
        outs() << " " << static_cast<int64_t *>(t.data)[k];
      else
        outs() << " "
               << format(t.dtype == DLC_F64 ? "%.10g" : "%.6g",
                         elementAt(t, k));
    }
    outs() << (t.numel > n ? " ...\n" : "\n");
  }
}

/// --data-parallel: the rows of the global batch, dimension 0 of the first
/// tensor of the input files. Returns the exit status of an error, or 0.
static int globalBatch(const RunOptions &o, int64_t &rows) {
  for (const std::string &spec : o.inputs) {
    auto [name, path] = fileSpec(spec);
    TensorList file;
    dlc_tensor_info info;
    if (dlc_tensor_file_read(path.str().c_str(), DLC_FILE_AUTO, &file.list) !=
        DLC_OK)
      return failRuntime("cannot read input file '" + path + "'");
    if (dlc_tensor_list_size(file.list) > 0 &&
        dlc_tensor_list_describe(file.list, 0, &info) == DLC_OK &&
        info.rank > 0) {
      rows = info.shape[0];
      return 0;
    }
  }
  return fail("--data-parallel splits the batch of the input files over the "
              "ranks, but no --input holds a batch",
              "--input x=X.npy --input y=Y.npy, each with the global batch");
}

/// Compiles, creates and runs the model on one rank (of one, or of the job
/// of `comm`).
static int runRank(mlir::MLIRContext &ctx, const RunOptions &o,
                   dlc_comm *comm) {
  EntryCall run;
  int64_t batch = 0;
  if (comm) {
    run.rank = dlc_comm_rank(comm);
    run.ranks = dlc_comm_size(comm);
    int64_t rows = 0;
    if (int status = globalBatch(o, rows))
      return status;
    if (rows % run.ranks)
      return fail("the batch of " + Twine(rows) + " rows does not split over " +
                      Twine(run.ranks) + " ranks",
                  "use a batch that is a multiple of the number of ranks");
    batch = rows / run.ranks;
  }
  // The rank's share of the batch, for the job's ranks.
  CompileOptions compile = o.compile;
  compile.ranks = run.ranks;
  std::unique_ptr<JitModel> jitted =
      jitCompile(ctx, compile, o.device, batch, labelTypeOfFiles(o));
  if (!jitted)
    return 1;

  ModelHandle model;
  if (int status = createRankModel(jitted->desc, o.device, comm, &model.model))
    return status;
  if (const char *why = dlc_model_fallback_reason(model.model); why && *why)
    WithColor::warning(errs(), "dlc")
        << "running on the CPU: CUDA is usable but not for this model: " << why
        << "\n";
  // The lesson's `using device: ...`, on stderr: stdout is the outputs'.
  if (run.rank == 0) {
    errs() << "dlc: using device: " << dlc_model_device_name(model.model);
    if (comm)
      errs() << ", " << run.ranks << (run.ranks == 1 ? " rank" : " ranks")
             << " of " << batch << " rows";
    errs() << "\n";
  }
  run.model = model.model;
  if (int status = prepareModel(o, run))
    return status;
  if (int status = checkInputNames(o, run))
    return status;
  if (int status = readInputs(o, run))
    return status;
  if (!checkLabels(o, run))
    return 1;
  if (int status = allocateOutputs(run))
    return status;
  if (int status = callEntry(o, run))
    return status;
  if (o.benchmark)
    benchmark(o, run);
  if (comm) {
    // Every rank applied the same updates: their params agree bit for bit.
    int32_t same = 0;
    if (dlc_model_check_replicas(model.model, &same) != DLC_OK)
      return failRuntime("cannot compare the ranks' params");
    if (!same)
      return fail("the ranks' params differ after training",
                  "this is a bug in dlc: please report it");
  }
  // Rank 0 writes the checkpoint; a sharded optimizer's state is gathered
  // from every rank for it.
  bool save = !o.save.empty() &&
              (run.rank == 0 || dlc_model_state_shards(model.model) > 0);
  if (run.rank != 0 && save &&
      dlc_model_save(model.model, o.save.c_str()) != DLC_OK)
    return failRuntime("cannot save '" + o.save + "'");
  if (run.rank != 0)
    return 0;
  if (int status = writeOutputs(o, run))
    return status;
  if (save && dlc_model_save(model.model, o.save.c_str()) != DLC_OK)
    return failRuntime("cannot save '" + o.save + "'");
  if (o.outputs.empty() && !o.benchmark && !o.printLoss)
    printOutputs(run);
  return 0;
}

int dlc::driver::runModel(mlir::MLIRContext &ctx, const RunOptions &o) {
  if (o.compile.cpu != "native")
    return fail("dlc run executes on this machine: --cpu=" + o.compile.cpu +
                    " could use instructions it does not have",
                "drop --cpu, or compile with -o and run the object where "
                "that CPU is");
  if (!o.dataParallel)
    return runRank(ctx, o, nullptr);
  return runInJob(o.compile.ranks > 1 ? o.compile.ranks : 0, "dlc run",
                  [&](dlc_comm *comm) { return runRank(ctx, o, comm); });
}

int dlc::driver::createRankModel(const dlc_model_desc *desc,
                                 dlc_device_kind device, dlc_comm *comm,
                                 dlc_model **out) {
  // In a job, each rank of a machine takes a GPU of its own.
  int32_t ordinal = comm ? dlc_comm_local_rank(comm) : -1;
  if (dlc_model_create_on(desc, device, ordinal, out) != DLC_OK)
    return failRuntime("cannot create the model");
  if (!comm)
    return 0;
  // Ranks on CUDA reduce with NCCL, ranks on the CPU with MPI.
  int32_t kind = dlc_model_device(*out), same = 0;
  if (dlc_comm_same_bytes(comm, &kind, sizeof kind, &same) != DLC_OK)
    return failRuntime("cannot compare the ranks' devices");
  if (!same)
    return fail("the ranks run on different kinds of device (this one on " +
                    Twine(dlc_model_device_name(*out)) + ")",
                "give every rank a GPU of its own (its local rank), or run "
                "them all on the CPU: DLC_DEVICE=cpu");
  if (dlc_model_set_comm(*out, comm) != DLC_OK)
    return failRuntime("cannot set the communicator");
  return 0;
}

int dlc::driver::runInJob(int64_t ranksGiven, StringRef command,
                          function_ref<int(dlc_comm *)> body) {
  CommHandle comm;
  if (dlc_comm_create_mpi(&comm.comm) != DLC_OK)
    return failRuntime("cannot join the data-parallel job");
  int32_t ranks = dlc_comm_size(comm.comm);
  int status = ranksGiven && ranksGiven != ranks
                   ? fail("--data-parallel=" + Twine(ranksGiven) +
                              " in a job of " + Twine(ranks) + " ranks",
                          "drop the number: " + command + " takes the job's")
                   : body(comm.comm);
  // A rank that fails ends the job: the others would wait for it.
  if (status && ranks > 1)
    dlc_comm_abort(comm.comm, status);
  return status;
}
