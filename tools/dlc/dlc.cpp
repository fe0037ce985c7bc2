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
// This file is the command line: the flags, their checks, and the options
// structs of lib/Driver (Compile.h, Run.h) filled from them; the work is
// done there.
//
//===----------------------------------------------------------------------===//

#include "Train.h"

#include "dlc/Driver/Compile.h"
#include "dlc/Driver/Errors.h"
#include "dlc/Driver/Run.h"
#include "dlc/Frontend/OnnxImporter.h"
#include "dlc/InitDlc.h"
#include "dlc/Target/Pipeline.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <vector>

using namespace llvm;
namespace cl = llvm::cl;
using dlc::driver::CodeTarget;
using dlc::driver::Emit;
using dlc::driver::fail;
using dlc::driver::Precision;

namespace {
/// The parser of an option with a closed set of values (cl::values): an
/// unknown value is dlc's error, with the values listed in the hint (LLVM's
/// own error names none). The option's value_desc, if any, names what the
/// value is ("unknown --emit stage 'x'").
template <typename T> class ValuesParser : public cl::parser<T> {
public:
  using cl::parser<T>::parser;

  bool parse(cl::Option &o, StringRef argName, StringRef arg, T &value) {
    for (const auto &v : this->Values)
      if (v.Name == arg) {
        value = v.V.getValue();
        return false;
      }
    std::string what = ("--" + o.ArgStr).str();
    if (!o.ValueStr.empty())
      what += " " + o.ValueStr.str();
    std::string names;
    for (size_t i = 0, e = this->Values.size(); i != e; ++i)
      names += (i == 0       ? ""
                : i + 1 == e ? " or "
                             : ", ") +
               this->Values[i].Name.str();
    fail("unknown " + what + " '" + arg + "'", "use " + names);
    return true;
  }
};
} // namespace

static cl::OptionCategory dlcCat("dlc options");
static cl::opt<std::string>
    inputFile(cl::Positional, cl::desc("<model.dlc|model.onnx|model.mlir>"),
              cl::cat(dlcCat));
static cl::opt<std::string> outputFile(
    "o",
    cl::desc("Output file (default: <model>.o; the header goes next to it)"),
    cl::value_desc("file"), cl::cat(dlcCat));
static cl::opt<Emit, false, ValuesParser<Emit>>
    emit("emit", cl::desc("Stop after a stage"), cl::value_desc("stage"),
         cl::values(clEnumValN(Emit::Dlc, "dlc", "the dlc dialect, optimised"),
                    clEnumValN(Emit::DlcPlaced, "dlc-placed",
                               "the dlc dialect with every op on a device"),
                    clEnumValN(Emit::Linalg, "linalg",
                               "linalg on tensors, entries taking memrefs"),
                    clEnumValN(Emit::LlvmDialect, "llvm-dialect",
                               "the CPU code in MLIR's LLVM dialect"),
                    clEnumValN(Emit::Llvm, "llvm", "LLVM IR of the object"),
                    clEnumValN(Emit::Asm, "asm", "x86-64 assembly"),
                    clEnumValN(Emit::Ptx, "ptx", "the CUDA kernels' PTX"),
                    clEnumValN(Emit::Obj, "obj",
                               "an object file and its C header (default)"),
                    clEnumValN(Emit::Header, "header", "the C header")),
         cl::init(Emit::Obj), cl::cat(dlcCat));
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
        cl::desc("Target CPU: portable (the default of an object and its "
                 "header: x86-64-v3, with variants for x86-64-v4 and "
                 "avx512bf16 the runtime picks from), native (the default "
                 "of every other stage, run and train), x86-64-v3, "
                 "x86-64-v4 or an LLVM CPU name, each with optional "
                 "+features (x86-64-v4+avx512bf16)"),
        cl::init("native"), cl::cat(dlcCat));
static cl::opt<CodeTarget, false, ValuesParser<CodeTarget>>
    target("target", cl::desc("Code to generate"),
           cl::values(clEnumValN(CodeTarget::All, "all",
                                 "x86 and CUDA in one object (default)"),
                      clEnumValN(CodeTarget::X86, "x86", "x86 only"),
                      clEnumValN(CodeTarget::Nvptx, "nvptx",
                                 "CUDA only (--emit=ptx or dlc-placed only)")),
           cl::init(CodeTarget::All), cl::cat(dlcCat));
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
static cl::opt<Precision, false, ValuesParser<Precision>> precision(
    "precision",
    cl::desc("Matmuls and linear layers in 16 bits with fp32 accumulation and "
             "fp32 master weights (autocast), or not"),
    cl::values(clEnumValN(Precision::FP32, "fp32", "fp32 (default)"),
               clEnumValN(Precision::BF16, "bf16", "bfloat16"),
               clEnumValN(Precision::FP16, "fp16", "IEEE half precision")),
    cl::init(Precision::FP32), cl::cat(dlcCat));
static cl::opt<double>
    initLossScale("init-loss-scale",
                  cl::desc("fp16 training: the loss scale a fresh model starts "
                           "from (default 65536)"),
                  cl::init(65536.0), cl::cat(dlcCat));
// Data parallelism (docs/distributed.md).
static cl::opt<std::string> dataParallelFlag(
    "data-parallel", cl::ValueOptional,
    cl::desc("Training on several ranks (mpirun -np N dlc run ...): the step "
             "averages its gradients and loss over the ranks; each rank "
             "takes its share of the batch. =N: compile (-o, --memory-report) "
             "for N ranks"),
    cl::value_desc("N"), cl::cat(dlcCat));
/// --data-parallel given; its ranks (0: the job's, under dlc run).
static bool dataParallel = false;
static int64_t dataParallelRanks = 0;
static cl::opt<double>
    bucketMb("bucket-mb",
             cl::desc("--data-parallel: the most MiB of gradients one "
                      "all-reduce carries (default 25, as PyTorch DDP)"),
             cl::init(25.0), cl::cat(dlcCat));
static cl::opt<bool> overlapComm(
    "overlap-comm",
    cl::desc("--data-parallel: reduce each bucket of gradients while the "
             "backward pass goes on (on a communication thread on the CPU, "
             "on the NCCL communicator's own stream on CUDA)"),
    cl::cat(dlcCat));
static cl::opt<bool> shardOptimizerState(
    "shard-optimizer-state",
    cl::desc("--data-parallel: ZeRO stage 1, each rank updates and keeps "
             "1/N of the optimizer state (checkpoints hold all of it)"),
    cl::cat(dlcCat));
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
static cl::opt<dlc_device_kind, false, ValuesParser<dlc_device_kind>>
    device("device", cl::desc("run: the device"),
           cl::values(clEnumValN(DLC_DEVICE_AUTO, "auto",
                                 "as DLC_DEVICE says, else CUDA where usable "
                                 "(default)"),
                      clEnumValN(DLC_DEVICE_CPU, "cpu", "the CPU"),
                      clEnumValN(DLC_DEVICE_CUDA, "cuda", "CUDA")),
           cl::init(DLC_DEVICE_AUTO), cl::cat(dlcCat));
static cl::opt<unsigned>
    benchmark("benchmark",
              cl::desc("run: time N calls after warm-up; print min and median"),
              cl::init(0), cl::cat(dlcCat));

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

static cl::opt<int64_t> packWeightsMiB(
    "pack-weights-mib",
    cl::desc("Without --train: re-lay out the weights that the forward pass "
             "reads transposed once, when they change, rather than on every "
             "call, while the copies fit in N MiB (default 64; 0: never); "
             "--precision's 16-bit copies of weights whatever their size"),
    cl::init(64), cl::cat(dlcCat));

static cl::opt<int64_t> cudaSmallGemmFmas(
    "cuda-small-gemm-fmas",
    cl::desc("CUDA code: fp32 GEMMs of at most N multiply-adds (and k <= 64) "
             "run as kernels fused with the step's other kernels instead of "
             "cuBLASLt calls (default 16384; 0: every GEMM calls cuBLASLt)"),
    cl::value_desc("N"), cl::init(-1), cl::cat(dlcCat));

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
  if (!(bucketMb > 0) || bucketMb > 1024 * 1024) {
    fail("--bucket-mb must be a positive number of MiB");
    return std::nullopt;
  }
  train.dataParallel = dataParallel;
  train.allreduce.bucketBytes =
      std::max<int64_t>(1, static_cast<int64_t>(bucketMb * 1024 * 1024));
  return train;
}

/// The flags of the model and its lowering, shared by every mode.
static dlc::driver::CompileOptions compileOptions() {
  dlc::driver::CompileOptions o;
  o.model = inputFile;
  o.language = inputLang;
  o.batch = batch;
  o.ranks = std::max<int64_t>(1, dataParallelRanks);
  o.overlapComm = overlapComm;
  o.shardOptimizerState = shardOptimizerState;
  o.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  o.train = train;
  // Class labels of the data's element type (dlc run and dlc train find it
  // in the label file) are compiled as if --label-type said it.
  o.trainOptions = [](StringRef dataLabelType) {
    if (!dataLabelType.empty())
      labelType = dataLabelType.str();
    return trainOptions();
  };
  o.precision = precision;
  o.cpu = cpu;
  o.target = target;
  o.vectorBits = vectorBits;
  o.registerTile.assign(registerTile.begin(), registerTile.end());
  o.cacheTile.assign(cacheTile.begin(), cacheTile.end());
  o.cudaEmulate = cudaEmulate;
  o.packWeightsMiB = packWeightsMiB;
  o.cudaEmulateReverse = cudaEmulateReverse;
  o.cudaSmallGemmFmas = cudaSmallGemmFmas;
  o.budget.deviceMemory = deviceMemory;
  o.emit = emit;
  o.output = outputFile;
  o.stats = stats;
  if (memoryReport.getNumOccurrences())
    o.memoryReport = memoryReport;
  return o;
}

/// The flags of `dlc run` (and those `dlc train` shares with it).
static dlc::driver::RunOptions runOptions() {
  dlc::driver::RunOptions o;
  o.compile = compileOptions();
  o.device = device;
  o.weights = weights;
  o.seed = seed;
  o.inputs.assign(inputs.begin(), inputs.end());
  o.outputs.assign(outputs.begin(), outputs.end());
  if (entryName.getNumOccurrences())
    o.entry = entryName;
  if (steps.getNumOccurrences())
    o.steps = steps;
  o.printLoss = printLoss;
  o.save = saveFile;
  o.benchmark = benchmark;
  o.loss = lossKind;
  o.label = labelName.empty() ? "y" : labelName.getValue();
  o.labelTypeGiven = !labelType.empty();
  o.classDim = classDim;
  o.dataParallel = dataParallel;
  return o;
}

//===----------------------------------------------------------------------===//
// dlc train (Train.cpp)
//===----------------------------------------------------------------------===//

static int trainMain(mlir::MLIRContext &ctx) {
  if (cpu != "native")
    return fail("dlc train executes on this machine: --cpu=" + cpu +
                " could use instructions it does not have");
  dlc::driver::RunOptions run = runOptions();
  dlc::driver::TrainSetup setup;
  setup.model = inputFile;
  setup.device = run.device;
  setup.label = run.label;
  setup.loss = lossKind;
  setup.classDim = classDim;
  setup.labelTypeGiven = run.labelTypeGiven;
  setup.seed = seed;
  setup.seedGiven = seed.getNumOccurrences() > 0;
  setup.weights = weights;
  setup.save = saveFile;
  setup.batch = batch;
  setup.compile = [&ctx, &run](int64_t b, StringRef type) {
    return dlc::driver::jitCompile(ctx, run.compile, run.device, b, type);
  };
  if (!dataParallel)
    return dlc::driver::trainMain(setup);
  // One rank of an MPI job: the model's batch (or --batch-size) is split
  // over the job's ranks.
  return dlc::driver::runInJob(dataParallelRanks, "dlc train",
                               [&](dlc_comm *comm) {
                                 run.compile.ranks = dlc_comm_size(comm);
                                 setup.comm = comm;
                                 return dlc::driver::trainMain(setup);
                               });
}

/// The flags that belong to another mode than the one run, and values that
/// would be ignored; returns the exit status of an error, or 0.
static int checkFlags(bool run, bool trainMode) {
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
  dataParallel = dataParallelFlag.getNumOccurrences() > 0;
  if (dataParallel && !dataParallelFlag.empty()) {
    unsigned long long n = 0;
    if (StringRef(dataParallelFlag).getAsInteger(10, n) || n < 1 ||
        n > (1u << 20))
      return fail("--data-parallel=N takes a number of ranks, not '" +
                  dataParallelFlag + "'");
    dataParallelRanks = static_cast<int64_t>(n);
  }
  if (dataParallel && !run && !trainMode && !dataParallelRanks)
    return fail("a compiled data-parallel step is for a number of ranks",
                "--data-parallel=N: each rank takes batch/N rows");
  if ((dataParallel || bucketMb.getNumOccurrences()) && !train)
    return fail("--data-parallel and --bucket-mb apply to the training step",
                "add --train");
  if ((bucketMb.getNumOccurrences() || overlapComm || shardOptimizerState) &&
      !dataParallel)
    return fail("--bucket-mb, --overlap-comm and --shard-optimizer-state "
                "apply to --data-parallel");
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
  return 0;
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
  if (int status = checkFlags(run, trainMode))
    return status;

  mlir::DialectRegistry registry;
  mlir::dlc::registerDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // Diagnostics are for users: the location and message, not an IR dump.
  ctx.printOpOnDiagnostic(false);
  if (trainMode)
    return trainMain(ctx);
  if (run)
    return dlc::driver::runModel(ctx, runOptions());
  dlc::driver::CompileOptions o = compileOptions();
  // An object runs wherever it is linked: on every x86-64 CPU.
  if (!cpu.getNumOccurrences() && (emit == Emit::Obj || emit == Emit::Header))
    o.cpu = "portable";
  return dlc::driver::compileModel(ctx, o);
}
