//===- Train.cpp - dlc train: epochs over a data set ----------------------===//
//
// The loop of the Python package's Model.fit (python/dlc/_model.py), in
// C++, so that the two take the same steps bit for bit:
//  - epoch k visits the rows in the order of the k-th permutation(n) of
//    NumPy's np.random.default_rng(seed) (PCG64 seeded through
//    SeedSequence; Generator.permutation's Fisher-Yates with
//    random_interval), or in order without --shuffle;
//  - batches of the compiled size; the short last batch runs on a second
//    model compiled for its size, with the parameters and the optimizer
//    state copied into it and back;
//  - the epoch's loss is the mean of the step losses weighted by rows,
//    accumulated in double as Python's floats are.
// docs/training.md ("dlc train") describes the flags, the checkpoints and
// their JSON sidecars.
//
//===----------------------------------------------------------------------===//

#include "Train.h"
#include "NumpyRng.h"
#include "TrainData.h"

#include "dlc/dlc_io.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

using namespace llvm;
namespace cl = llvm::cl;
using namespace dlc::driver;

cl::OptionCategory dlc::driver::trainCategory("dlc train options");

static cl::opt<std::string> dataFile(
    "data",
    cl::desc("train: the training set, a .npz (np.savez) or .safetensors file "
             "with one array per model input and the label, by name"),
    cl::cat(trainCategory));
static cl::opt<std::string>
    valFile("val",
            cl::desc("train: a validation set like --data: its loss (and "
                     "accuracy) after each epoch"),
            cl::cat(trainCategory));
static cl::opt<unsigned> epochs(
    "epochs",
    cl::desc(
        "train: the number of epochs (default 1); with --resume, the total"),
    cl::init(1), cl::cat(trainCategory));
static cl::opt<int64_t>
    batchSize("batch-size",
              cl::desc("train: rows per step; the model is compiled for it "
                       "(default: the model's batch)"),
              cl::init(0), cl::cat(trainCategory));
static cl::opt<bool>
    shuffleFlag("shuffle",
                cl::desc("train: visit the rows of each epoch in the order of "
                         "NumPy's default_rng(--seed).permutation"),
                cl::cat(trainCategory));
static cl::opt<std::string>
    saveEveryEpoch("save-every-epoch",
                   cl::desc("train: after each epoch K write "
                            "DIR/epoch-K.safetensors and DIR/epoch-K.json"),
                   cl::value_desc("DIR"), cl::cat(trainCategory));
static cl::opt<std::string>
    resumeFrom("resume",
               cl::desc("train: continue from a checkpoint of "
                        "--save-every-epoch (its .json sidecar next to it)"),
               cl::cat(trainCategory));
static cl::opt<std::string>
    logFile("log",
            cl::desc("train: append one JSON object per epoch to this file"),
            cl::cat(trainCategory));
static cl::opt<uint64_t> initSeed(
    "init-seed",
    cl::desc("train: initialise the parameters from this seed (default 0)"),
    cl::init(0), cl::cat(trainCategory));

static cl::opt<int64_t> shuffleOrder(
    "shuffle-order",
    cl::desc("train (testing): print the orders of --epochs epochs of N rows "
             "shuffled with --seed, one line each, and exit"),
    cl::value_desc("N"), cl::init(-1), cl::Hidden, cl::cat(trainCategory));

bool dlc::driver::trainFlagGiven() {
  return dataFile.getNumOccurrences() || valFile.getNumOccurrences() ||
         epochs.getNumOccurrences() || batchSize.getNumOccurrences() ||
         shuffleFlag.getNumOccurrences() ||
         saveEveryEpoch.getNumOccurrences() || resumeFrom.getNumOccurrences() ||
         logFile.getNumOccurrences() || initSeed.getNumOccurrences() ||
         shuffleOrder.getNumOccurrences();
}

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

namespace {
struct ModelPtr {
  dlc_model *m = nullptr;
  ModelPtr() = default;
  ModelPtr(const ModelPtr &) = delete;
  ~ModelPtr() { dlc_model_destroy(m); }
};
} // namespace

/// Copies every parameter and optimizer state tensor of `src` into `dst`
/// (the same model at two batch sizes).
static bool copyParams(dlc_model *src, dlc_model *dst) {
  int32_t n = dlc_model_num_params(src);
  if (n != dlc_model_num_params(dst))
    return fail("the short batch's model has other parameters"), false;
  for (int32_t i = 0; i < n; ++i) {
    dlc_tensor_info a, b;
    if (dlc_model_param_info(src, i, &a) != DLC_OK ||
        dlc_model_param_info(dst, i, &b) != DLC_OK)
      return failRuntime("cannot read the parameters"), false;
    if (StringRef(a.name) != b.name || a.nbytes != b.nbytes)
      return fail(Twine("the short batch's model has other parameters: '") +
                  a.name + "' against '" + b.name + "'"),
             false;
    std::memcpy(b.data, a.data, size_t(a.nbytes));
  }
  return true;
}

namespace {
/// A model's training step with its host buffers.
struct Stepper {
  dlc_model *m = nullptr;
  int32_t e = -1;
  int64_t rows = 0;
  std::vector<void *> in, out;
  int32_t lossIdx = -1;

  bool init(dlc_model *model, int64_t batchRows) {
    m = model;
    rows = batchRows;
    e = dlc_model_find_entry(m, "train_step");
    if (e < 0)
      return fail("the model has no training step"), false;
    for (int32_t i = 0; i < dlc_model_entry_num_inputs(m, e); ++i) {
      dlc_tensor_info t;
      dlc_model_entry_input_info(m, e, i, &t);
      void *p = nullptr;
      if (dlc_model_alloc_host(m, size_t(t.nbytes), &p) != DLC_OK)
        return failRuntime("cannot allocate a batch"), false;
      in.push_back(p);
    }
    for (int32_t i = 0; i < dlc_model_entry_num_outputs(m, e); ++i) {
      dlc_tensor_info t;
      dlc_model_entry_output_info(m, e, i, &t);
      if (StringRef(t.name) == "loss" && t.dtype == DLC_F32 && t.rank == 0)
        lossIdx = i;
      void *p = nullptr;
      if (dlc_model_alloc_host(m, size_t(std::max<int64_t>(t.nbytes, 1)), &p) !=
          DLC_OK)
        return failRuntime("cannot allocate the outputs"), false;
      out.push_back(p);
    }
    if (lossIdx < 0)
      return fail("the training step has no scalar f32 output 'loss'"), false;
    return true;
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Output: progress, log, checkpoints
//===----------------------------------------------------------------------===//

/// "12,345" (Python's format(v, ",.0f")).
static std::string grouped(double v) {
  if (!std::isfinite(v))
    return v > 0 ? "inf" : "nan";
  std::string digits = std::to_string(int64_t(std::llround(v)));
  std::string out;
  size_t start = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

static json::Value number(double v) {
  if (!std::isfinite(v))
    return nullptr;
  return v;
}

/// Writes `data` to `path` atomically: a temporary file next to it, fsynced,
/// renamed over it.
static bool writeAtomically(StringRef path, StringRef data) {
  std::string tmp = (path + ".tmp." + Twine(::getpid())).str();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return false;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += size_t(w);
  }
  bool ok = ::fsync(fd) == 0;
  ok &= ::close(fd) == 0;
  if (!ok || ::rename(tmp.c_str(), path.str().c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// dlc train
//===----------------------------------------------------------------------===//

/// --shuffle-order N (testing): the orders of --epochs epochs of N rows.
static int printShuffleOrders(const TrainSetup &setup) {
  NumpyRng rng(setup.seed);
  for (unsigned e = 0; e < epochs; ++e) {
    std::vector<int64_t> order = rng.permutation(shuffleOrder);
    for (size_t i = 0; i < order.size(); ++i)
      outs() << (i ? " " : "") << order[i];
    outs() << "\n";
  }
  return 0;
}

/// The flags that contradict each other; returns the exit status of an
/// error, or 0.
static int checkTrainFlags(const TrainSetup &setup) {
  if (dataFile.empty())
    return fail("dlc train needs the training set: --data FILE.npz",
                "np.savez('train.npz', x=x, " + setup.label +
                    "=labels), one array per model input and the label");
  if (epochs == 0)
    return fail("--epochs must be at least 1");
  if (batchSize.getNumOccurrences() && batchSize < 1)
    return fail("--batch-size must be a positive number, not " +
                Twine(int64_t(batchSize)));
  if (setup.batch && batchSize && setup.batch != batchSize)
    return fail("--batch " + Twine(setup.batch) + " and --batch-size " +
                    Twine(int64_t(batchSize)) + " disagree",
                "give --batch-size only");
  if (setup.seedGiven && !shuffleFlag && resumeFrom.empty())
    return fail("--seed seeds the shuffle: add --shuffle",
                "dlc train initialises the parameters with --init-seed");
  if (!resumeFrom.empty() &&
      (!setup.weights.empty() || initSeed.getNumOccurrences()))
    return fail("--resume loads the parameters; --weights and --init-seed "
                "would be overwritten");
  if (!setup.weights.empty() && initSeed.getNumOccurrences())
    return fail("--weights loads the parameters; drop --init-seed");
  return 0;
}

namespace {
/// A file descriptor, closed at the end.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// One `dlc train` run: each method is a phase, in the order trainMain
/// calls them, and returns the exit status of an error, or 0. The members
/// are destroyed in reverse order: the models before their code.
struct Training {
  const TrainSetup &setup;
  DataSet train, val;
  std::string labelType;
  Fd log; ///< --log, opened first: a bad path fails before any work
  std::optional<json::Value> sidecar; ///< --resume's checkpoint sidecar
  int64_t done = 0;                   ///< the epochs it has done
  std::string sidecarPath;
  std::unique_ptr<JitModel> jit;
  ModelPtr model;
  Stepper full;
  int64_t B = 0; ///< the compiled batch
  std::vector<Column> cols;
  int64_t n = 0; ///< the training set's rows
  bool crossEntropy = false;
  uint64_t seed;
  bool doShuffle;
  NumpyRng rng;
  int64_t shortRows = 0, steps = 0;
  /// The short last batch's model, compiled before the first epoch.
  std::unique_ptr<JitModel> shortJit;
  ModelPtr shortModel;
  Stepper part;
  /// --data-parallel: this process's rank of `ranks`; each global batch
  /// of G = B x ranks rows gives rank r its r-th share.
  int32_t rank = 0, ranks = 1;
  int64_t G = 0;
  bool tty = false;
  std::string saveDir;
  std::vector<int64_t> order;

  explicit Training(const TrainSetup &setup)
      : setup(setup), seed(setup.seed), doShuffle(shuffleFlag),
        rng(setup.seed) {
    if (setup.comm) {
      rank = dlc_comm_rank(setup.comm);
      ranks = dlc_comm_size(setup.comm);
    }
  }

  int readData();
  int openLog();
  int readSidecar();
  int createModel();
  int loadParams();
  int restoreShuffle();
  int compileShortBatch();
  int runEpoch(int64_t epoch);
  int logEpoch(int64_t epoch, double meanLoss, double rate,
               const EvalResult &ev, double seconds);
  int saveEpoch(int64_t epoch, double meanLoss);
};
} // namespace

/// The data sets, before compiling: class labels keep the element type of
/// their file (i32 or i64), as in `dlc run`.
int Training::readData() {
  if (!readDataSet("--data", dataFile, train))
    return 1;
  if (!valFile.empty() && !readDataSet("--val", valFile, val))
    return 1;
  if (setup.loss == "cross_entropy" && !setup.labelTypeGiven) {
    int32_t idx = train.find(setup.label);
    if (idx >= 0 && train.get(idx).dtype == DLC_I32)
      labelType = "i32";
  }
  return 0;
}

int Training::openLog() {
  if (!logFile.empty() && rank == 0) {
    log.fd = ::open(logFile.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                    0644);
    if (log.fd < 0)
      return fail("cannot open --log '" + logFile +
                  "': " + std::strerror(errno));
  }
  return 0;
}

/// The checkpoint to resume from, and its sidecar.
int Training::readSidecar() {
  if (resumeFrom.empty())
    return 0;
  StringRef ckpt = resumeFrom;
  sidecarPath =
      (ckpt.ends_with(".safetensors") ? ckpt.drop_back(12) : ckpt).str() +
      ".json";
  auto buf = MemoryBuffer::getFile(sidecarPath);
  if (!buf)
    return fail("--resume: cannot read '" + sidecarPath +
                    "': " + buf.getError().message(),
                "--resume takes DIR/epoch-K.safetensors of "
                "--save-every-epoch, whose epoch-K.json is next to it");
  auto parsed = json::parse((*buf)->getBuffer());
  if (!parsed)
    return fail("--resume: '" + sidecarPath +
                "' is not JSON: " + toString(parsed.takeError()));
  sidecar = std::move(*parsed);
  const json::Object *o = sidecar->getAsObject();
  auto epoch = o ? o->getInteger("epoch") : std::nullopt;
  if (!epoch || *epoch < 1)
    return fail("--resume: '" + sidecarPath + "' has no epoch");
  done = *epoch;
  if (done >= int64_t(epochs))
    return fail("--resume: the checkpoint is of epoch " + Twine(done) +
                    ", and --epochs " + Twine(unsigned(epochs)) +
                    " leaves nothing to train",
                "--epochs is the total, like fit's epochs with "
                "initial_epoch");
  return 0;
}

/// Compiles and creates the model, and checks the data sets against it.
int Training::createModel() {
  if (batchSize && batchSize % ranks)
    return fail("--batch-size " + Twine(int64_t(batchSize)) +
                    " does not split over " + Twine(ranks) + " ranks",
                "use a batch size that is a multiple of the number of ranks");
  jit = setup.compile(batchSize / ranks, labelType);
  if (!jit)
    return 1;
  if (int status = dlc::driver::createRankModel(jit->desc, setup.device,
                                                setup.comm, &model.m))
    return status;
  if (const char *why = dlc_model_fallback_reason(model.m); why && *why)
    WithColor::warning(errs(), "dlc")
        << "running on the CPU: CUDA is usable but not for this model: " << why
        << "\n";
  if (!full.init(model.m, 0))
    return 1;
  for (int32_t i = 0; i < dlc_model_entry_num_inputs(model.m, full.e); ++i) {
    dlc_tensor_info t;
    dlc_model_entry_input_info(model.m, full.e, i, &t);
    if (t.rank < 1 || (B && t.shape[0] != B))
      return fail("dlc train needs inputs that share a batch dimension, but "
                  "the training step takes " +
                  entryInputs(model.m, full.e));
    B = t.shape[0];
  }
  full.rows = B;
  G = B * ranks;
  if (rank == 0) {
    errs() << "dlc: using device: " << dlc_model_device_name(model.m);
    if (setup.comm)
      errs() << ", " << ranks << " ranks of " << B << " rows";
    errs() << "\n";
  }

  if (!bindInputs("--data", train, model.m, full.e, cols))
    return 1;
  n = train.rows;
  // Class labels out of range: the generated code would clamp them
  // (PyTorch and `dlc run` refuse them), so they are refused before the
  // first step.
  for (int32_t i = 0; i < dlc_model_entry_num_inputs(model.m, full.e); ++i) {
    dlc_tensor_info t;
    dlc_model_entry_input_info(model.m, full.e, i, &t);
    if (setup.label != t.name || (t.dtype != DLC_I64 && t.dtype != DLC_I32))
      continue;
    dlc_tensor_info a = train.get(train.find(t.name));
    if (!checkClassLabels(model.m, setup.label, setup.classDim, a.dtype, a.data,
                          a.numel))
      return 1;
  }
  if (!valFile.empty()) {
    int32_t li = train.find(setup.label);
    crossEntropy =
        setup.loss == "cross_entropy" ||
        (setup.loss.empty() && li >= 0 &&
         (train.get(li).dtype == DLC_I64 || train.get(li).dtype == DLC_I32));
  }

  if (!valFile.empty()) {
    EvalResult unused;
    if (!evaluate(model.m, B, val, setup.label, crossEntropy, setup.classDim,
                  unused, /*check=*/true))
      return 1;
  }
  return 0;
}

/// The parameters: a checkpoint, --weights or the seeded initialisation.
int Training::loadParams() {
  if (!resumeFrom.empty()) {
    if (dlc_model_load(model.m, resumeFrom.c_str()) != DLC_OK)
      return failRuntime("--resume: cannot load '" + resumeFrom + "'");
  } else if (!setup.weights.empty()) {
    if (dlc_model_load(model.m, setup.weights.c_str()) != DLC_OK)
      return failRuntime("cannot load weights");
  } else if (dlc_model_init(model.m, initSeed) != DLC_OK) {
    return failRuntime("cannot initialise the model");
  }
  return 0;
}

/// The shuffle: one generator for the whole run; a resumed run takes the
/// checkpoint's.
int Training::restoreShuffle() {
  if (!sidecar)
    return 0;
  const json::Object &o = *sidecar->getAsObject();
  auto samples = o.getInteger("samples");
  auto batch = o.getInteger("batch_size");
  auto shuf = o.getBoolean("shuffle");
  auto s = o.getInteger("seed");
  if (!samples || !batch || !shuf || !s)
    return fail("--resume: '" + sidecarPath +
                "' lacks samples, "
                "batch_size, shuffle or seed");
  if (*samples != n || *batch != G)
    return fail("--resume: the checkpoint was trained on " + Twine(*samples) +
                " samples in batches of " + Twine(*batch) + ", this run has " +
                Twine(n) + " in batches of " + Twine(G));
  if (shuffleFlag.getNumOccurrences() && *shuf != bool(shuffleFlag))
    return fail(Twine("--resume: the checkpoint's run ") +
                (*shuf ? "shuffled" : "did not shuffle") +
                ": give --shuffle as it did");
  if (setup.seedGiven && uint64_t(*s) != setup.seed)
    return fail("--resume: the checkpoint's run shuffled with --seed " +
                Twine(*s) + ", not " + Twine(setup.seed));
  doShuffle = *shuf;
  seed = uint64_t(*s);
  const json::Object *st = o.getObject("rng");
  if (doShuffle && (!st || !rng.restore(*st)))
    return fail("--resume: '" + sidecarPath +
                "' has no valid generator state (rng)");
  return 0;
}

/// The short last batch's model, compiled before the first epoch.
int Training::compileShortBatch() {
  shortRows = n % G;
  steps = (n + G - 1) / G;
  if (!shortRows)
    return 0;
  if (shortRows % ranks)
    return fail("the last batch of each epoch has " + Twine(shortRows) +
                    " rows, which do not split over " + Twine(ranks) + " ranks",
                "use a batch size whose remainder of the " + Twine(n) +
                    " samples is a multiple of the number of ranks");
  shortJit = setup.compile(shortRows / ranks, labelType);
  if (!shortJit) {
    errs() << "dlc: note: the last batch of each epoch has " << shortRows
           << " rows and needs the model compiled for that batch\n";
    return 1;
  }
  if (int status = dlc::driver::createRankModel(
          shortJit->desc, dlc_model_device(model.m), setup.comm, &shortModel.m))
    return status;
  if (!part.init(shortModel.m, shortRows / ranks))
    return 1;
  return 0;
}

/// One epoch: its steps with a progress line on a terminal, the validation,
/// and the epoch's line, log record and checkpoint.
int Training::runEpoch(int64_t epoch) {
  using Clock = std::chrono::steady_clock;
  std::string desc =
      ("epoch " + Twine(epoch) + "/" + Twine(unsigned(epochs))).str();
  if (doShuffle)
    order = rng.permutation(n);
  auto t0 = Clock::now(), last = t0;
  double total = 0;
  int64_t seen = 0;
  for (int64_t k = 0; k < steps; ++k) {
    // This rank's share of the global batch [k G, k G + global).
    int64_t global = std::min(n, k * G + G) - k * G;
    int64_t rows = global / ranks, lo = k * G + rank * rows;
    Stepper &s = rows == B ? full : part;
    if (&s == &part && !copyParams(model.m, shortModel.m))
      return 1;
    for (size_t i = 0; i < cols.size(); ++i) {
      size_t rb = cols[i].rowBytes;
      char *dst = static_cast<char *>(s.in[i]);
      if (!doShuffle) {
        std::memcpy(dst, cols[i].data + lo * rb, rows * rb);
        continue;
      }
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(dst + r * rb, cols[i].data + order[lo + r] * rb, rb);
    }
    if (dlc_model_run(s.m, s.e, s.in.data(), s.out.data()) != DLC_OK)
      return failRuntime("training step " + Twine(k + 1) + " of epoch " +
                         Twine(epoch) + " failed");
    double loss = *static_cast<const float *>(s.out[s.lossIdx]);
    if (&s == &part && !copyParams(shortModel.m, model.m))
      return 1;
    // The loss is the global batch's (averaged over the ranks).
    total += loss * double(global);
    seen += global;
    auto now = Clock::now();
    if (tty && rank == 0 &&
        std::chrono::duration<double>(now - last).count() > 0.1) {
      double secs = std::chrono::duration<double>(now - t0).count();
      errs() << "\r" << desc << ": batch " << (k + 1) << "/" << steps
             << ", loss " << format("%.4f", total / double(seen)) << ", "
             << grouped(double(seen) / secs) << " samples/s\x1b[K";
      errs().flush();
      last = now;
    }
  }
  double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  double meanLoss = total / double(std::max<int64_t>(seen, 1));
  double rate = dt > 0 ? double(seen) / dt : INFINITY;
  // Every rank holds the same weights and evaluates them, so that the
  // ranks stay in step (a long validation on rank 0 alone would make the
  // others' next all-reduce wait for it); rank 0 reports and saves.
  EvalResult ev;
  if (!valFile.empty() &&
      !evaluate(model.m, B, val, setup.label, crossEntropy, setup.classDim, ev))
    return 1;
  if (rank != 0)
    return saveEpoch(epoch, meanLoss);
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  // The epoch's line: Python's plain progress line.
  std::string line = desc + ": loss " + formatv("{0:f4}", meanLoss).str();
  if (!valFile.empty()) {
    line += ", val_loss " + formatv("{0:f4}", ev.loss).str();
    if (ev.accuracy >= 0)
      line += ", val_accuracy " + formatv("{0:f4}", ev.accuracy).str();
  }
  line += ", " + grouped(rate) + " samples/s";
  errs() << (tty ? "\r\x1b[K" : "") << line << "\n";

  if (int status = logEpoch(epoch, meanLoss, rate, ev, seconds))
    return status;
  return saveEpoch(epoch, meanLoss);
}

/// The epoch's record in --log.
int Training::logEpoch(int64_t epoch, double meanLoss, double rate,
                       const EvalResult &ev, double seconds) {
  if (log.fd < 0)
    return 0;
  // One write(2) on an O_APPEND descriptor: a whole line or nothing
  // interleaved with another writer's.
  std::string text;
  raw_string_ostream os(text);
  json::OStream j(os);
  j.object([&] {
    j.attribute("epoch", epoch);
    j.attribute("loss", number(meanLoss));
    if (!valFile.empty()) {
      j.attribute("val_loss", number(ev.loss));
      if (ev.accuracy >= 0)
        j.attribute("val_accuracy", number(ev.accuracy));
    }
    j.attribute("samples_per_s", number(rate));
    j.attribute("seconds", number(seconds));
  });
  os << "\n";
  if (::write(log.fd, text.data(), text.size()) != ssize_t(text.size()))
    return fail("cannot write --log '" + logFile +
                "': " + std::strerror(errno));
  return 0;
}

/// --save-every-epoch: the epoch's checkpoint and its JSON sidecar.
int Training::saveEpoch(int64_t epoch, double meanLoss) {
  // Rank 0 writes; the other ranks give it a sharded optimizer's state.
  if (saveDir.empty() || (rank != 0 && dlc_model_state_shards(model.m) <= 0))
    return 0;
  SmallString<256> ckpt(saveDir), side(saveDir);
  sys::path::append(ckpt, "epoch-" + Twine(epoch) + ".safetensors");
  sys::path::append(side, "epoch-" + Twine(epoch) + ".json");
  if (dlc_model_save(model.m, ckpt.c_str()) != DLC_OK)
    return failRuntime("cannot save '" + ckpt + "'");
  if (rank != 0)
    return 0;
  std::string text;
  raw_string_ostream os(text);
  json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attribute("epoch", epoch);
    j.attribute("epochs", int64_t(epochs));
    j.attribute("samples", n);
    j.attribute("batch_size", G);
    j.attribute("shuffle", doShuffle);
    j.attribute("seed", int64_t(seed));
    j.attribute("loss", number(meanLoss));
    if (doShuffle)
      j.attribute("rng", rng.save());
  });
  os << "\n";
  if (!writeAtomically(side, text))
    return fail("cannot write '" + side + "': " + std::strerror(errno));
  return 0;
}

int dlc::driver::trainMain(const TrainSetup &setup) {
  if (shuffleOrder >= 0)
    return printShuffleOrders(setup);
  if (int status = checkTrainFlags(setup))
    return status;
  Training t(setup);
  if (int status = t.readData())
    return status;
  if (int status = t.openLog())
    return status;
  if (int status = t.readSidecar())
    return status;
  if (int status = t.createModel())
    return status;
  if (int status = t.loadParams())
    return status;
  if (int status = t.restoreShuffle())
    return status;
  if (int status = t.compileShortBatch())
    return status;

  t.tty = ::isatty(2);
  t.saveDir = saveEveryEpoch;
  if (!t.saveDir.empty())
    if (std::error_code ec = sys::fs::create_directories(t.saveDir))
      return fail("--save-every-epoch: cannot create '" + t.saveDir +
                  "': " + ec.message());
  for (int64_t epoch = t.done + 1; epoch <= int64_t(epochs); ++epoch)
    if (int status = t.runEpoch(epoch))
      return status;
  if (setup.comm) {
    // Every rank applied the same updates: their params agree bit for bit.
    int32_t same = 0;
    if (dlc_model_check_replicas(t.model.m, &same) != DLC_OK)
      return failRuntime("cannot compare the ranks' params");
    if (!same)
      return fail("the ranks' params differ after training",
                  "this is a bug in dlc: please report it");
  }
  if ((t.rank == 0 || dlc_model_state_shards(t.model.m) > 0) &&
      !setup.save.empty() &&
      dlc_model_save(t.model.m, setup.save.c_str()) != DLC_OK)
    return failRuntime("cannot save '" + setup.save + "'");
  return 0;
}
