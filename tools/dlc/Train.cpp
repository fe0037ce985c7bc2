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
#include "Npz.h"

#include "dlc/dlc_io.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
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
#include <numeric>
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
// NumPy's default_rng(seed).permutation(n)
//===----------------------------------------------------------------------===//

namespace {
using u128 = unsigned __int128;

/// numpy.random.PCG64 (the 128-bit LCG with the XSL-RR output) seeded as
/// default_rng(seed) seeds it, and Generator.permutation on top of it.
class NumpyRng {
public:
  explicit NumpyRng(uint64_t seed) {
    // SeedSequence(seed): the seed's 32-bit words mixed into a pool of 4,
    // then generate_state(4, uint64).
    uint32_t entropy[2] = {uint32_t(seed), uint32_t(seed >> 32)};
    unsigned words = (seed >> 32) ? 2 : 1;
    uint32_t hashConst = 0x43b0d7e5;
    auto hashmix = [&](uint32_t v) {
      v ^= hashConst;
      hashConst *= 0x931e8875;
      v *= hashConst;
      return v ^ (v >> 16);
    };
    auto mix = [](uint32_t x, uint32_t y) {
      uint32_t r = 0xca01f9dd * x - 0x4973f715 * y;
      return r ^ (r >> 16);
    };
    uint32_t pool[4];
    for (unsigned i = 0; i < 4; ++i)
      pool[i] = hashmix(i < words ? entropy[i] : 0);
    for (unsigned s = 0; s < 4; ++s)
      for (unsigned d = 0; d < 4; ++d)
        if (s != d)
          pool[d] = mix(pool[d], hashmix(pool[s]));
    uint32_t out[8];
    uint32_t h = 0x8b51f9dd;
    for (unsigned i = 0; i < 8; ++i) {
      uint32_t v = pool[i % 4];
      v ^= h;
      h *= 0x58f38ded;
      v *= h;
      out[i] = v ^ (v >> 16);
    }
    uint64_t u[4];
    for (unsigned i = 0; i < 4; ++i)
      u[i] = uint64_t(out[2 * i]) | (uint64_t(out[2 * i + 1]) << 32);
    // pcg64_set_seed: state and increment from (u0 high, u1 low) and
    // (u2 high, u3 low), pcg_setseq_128_srandom_r.
    u128 initState = (u128(u[0]) << 64) | u[1];
    u128 initSeq = (u128(u[2]) << 64) | u[3];
    state = 0;
    inc = (initSeq << 1) | 1;
    step();
    state += initState;
    step();
  }

  /// Generator.permutation(n): Fisher-Yates from the end, j drawn by
  /// random_interval(i).
  std::vector<int64_t> permutation(int64_t n) {
    std::vector<int64_t> a(n);
    std::iota(a.begin(), a.end(), 0);
    for (int64_t i = n - 1; i >= 1; --i)
      std::swap(a[i], a[interval(uint64_t(i))]);
    return a;
  }

  /// The generator's whole state, for a checkpoint's sidecar.
  json::Object save() const {
    return json::Object{{"state", hex(state)},
                        {"inc", hex(inc)},
                        {"has_uint32", hasUint32 ? 1 : 0},
                        {"uinteger", int64_t(uinteger)}};
  }
  bool restore(const json::Object &o) {
    auto st = o.getString("state"), in = o.getString("inc");
    auto has = o.getInteger("has_uint32"), ui = o.getInteger("uinteger");
    if (!st || !in || !has || !ui || !unhex(*st, state) || !unhex(*in, inc) ||
        *ui < 0 || *ui > 0xffffffffll)
      return false;
    hasUint32 = *has != 0;
    uinteger = uint32_t(*ui);
    return true;
  }

private:
  static constexpr u128 kMult =
      (u128(2549297995355413924ull) << 64) | 4865540595714422341ull;

  void step() { state = state * kMult + inc; }
  uint64_t next64() {
    step();
    uint64_t v = uint64_t(state >> 64) ^ uint64_t(state);
    unsigned rot = unsigned(state >> 122);
    return (v >> rot) | (v << ((64 - rot) & 63));
  }
  /// next_uint32: the low half of a 64-bit draw, then its high half.
  uint32_t next32() {
    if (hasUint32) {
      hasUint32 = false;
      return uinteger;
    }
    uint64_t n = next64();
    hasUint32 = true;
    uinteger = uint32_t(n >> 32);
    return uint32_t(n);
  }
  /// random_interval: a value in [0, max] by masked rejection.
  uint64_t interval(uint64_t max) {
    if (max == 0)
      return 0;
    uint64_t mask = max;
    for (unsigned s : {1, 2, 4, 8, 16, 32})
      mask |= mask >> s;
    uint64_t v;
    if (max <= 0xffffffffull) {
      while ((v = (next32() & mask)) > max) {
      }
    } else {
      while ((v = (next64() & mask)) > max) {
      }
    }
    return v;
  }
  static std::string hex(u128 v) {
    char buf[33];
    for (int i = 31; i >= 0; --i, v >>= 4)
      buf[i] = "0123456789abcdef"[unsigned(v & 15)];
    buf[32] = 0;
    return buf;
  }
  static bool unhex(StringRef s, u128 &v) {
    if (s.size() != 32)
      return false;
    v = 0;
    for (char c : s) {
      int d = llvm::hexDigitValue(c);
      if (d < 0)
        return false;
      v = (v << 4) | unsigned(d);
    }
    return true;
  }

  u128 state = 0, inc = 0;
  bool hasUint32 = false;
  uint32_t uinteger = 0;
};
} // namespace

//===----------------------------------------------------------------------===//
// Data sets
//===----------------------------------------------------------------------===//

namespace {
struct ModelPtr {
  dlc_model *m = nullptr;
  ModelPtr() = default;
  ModelPtr(const ModelPtr &) = delete;
  ~ModelPtr() { dlc_model_destroy(m); }
};

/// A data file's arrays.
struct DataSet {
  std::string path;
  dlc_tensor_list *list = nullptr;
  int64_t rows = -1;
  DataSet() = default;
  DataSet(const DataSet &) = delete;
  ~DataSet() { dlc_tensor_list_free(list); }

  int32_t size() const { return dlc_tensor_list_size(list); }
  dlc_tensor_info get(int32_t i) const {
    dlc_tensor_info t;
    dlc_tensor_list_get(list, i, &t);
    return t;
  }
  /// The array for the model's input `name` (its own name or the ONNX
  /// graph's); -1 when none.
  int32_t find(StringRef name) const {
    for (int32_t i = 0; i < size(); ++i)
      if (namesInput(get(i).name, name))
        return i;
    return -1;
  }
  std::string arrays() const {
    std::string s;
    for (int32_t i = 0; i < size(); ++i) {
      dlc_tensor_info t = get(i);
      s += (i ? ", " : "") + std::string(t.name) + " " + describe(t);
    }
    return s.empty() ? "none" : s;
  }
};

/// One input's array of a data set: its rows, `rowBytes` each.
struct Column {
  const char *data = nullptr;
  size_t rowBytes = 0;
};
} // namespace

static bool readDataSet(StringRef flag, StringRef path, DataSet &d) {
  d.path = path.str();
  std::string why;
  bool ok;
  if (path.ends_with(".npz")) {
    ok = dlc::readNpz(path, &d.list, why);
  } else {
    // Every array of a data set is used: read them all now, so that a file
    // that cannot be read fails here.
    ok = dlc_tensor_file_read(path.str().c_str(), DLC_FILE_AUTO, &d.list) ==
         DLC_OK;
    dlc_tensor_info t;
    for (int32_t i = 0; ok && i < d.size(); ++i)
      ok = dlc_tensor_list_get(d.list, i, &t) == DLC_OK;
    if (!ok)
      why = dlc_last_error();
  }
  if (!ok) {
    fail("cannot read " + flag + " '" + path + "': " + why,
         "a data set is a .npz written by np.savez (or np.savez_compressed) "
         "or a .safetensors file, with one array per model input and the "
         "label");
    return false;
  }
  if (d.size() == 0) {
    fail(flag + " '" + path + "' holds no arrays");
    return false;
  }
  return true;
}

/// "NAME f32[N, 10]" for an input of the model.
static std::string describeRows(const dlc_tensor_info &t) {
  std::string s = std::string(t.name) + " " + dlc_dtype_name(t.dtype) + "[N";
  for (int i = 1; i < t.rank; ++i)
    s += ", " + std::to_string(t.shape[i]);
  return s + "]";
}

static std::string entryInputs(dlc_model *m, int32_t e) {
  std::string s;
  for (int32_t i = 0; i < dlc_model_entry_num_inputs(m, e); ++i) {
    dlc_tensor_info t;
    dlc_model_entry_input_info(m, e, i, &t);
    s += (i ? ", " : "") + describeRows(t);
  }
  return s;
}

/// The columns of `d` for the inputs of entry `e`, in its order; checks
/// names, dtypes, trailing dimensions and that every array has the same
/// number of rows (d.rows).
static bool bindInputs(StringRef flag, DataSet &d, dlc_model *m, int32_t e,
                       std::vector<Column> &cols) {
  int32_t nIn = dlc_model_entry_num_inputs(m, e);
  cols.assign(nIn, Column());
  std::string firstName;
  for (int32_t i = 0; i < nIn; ++i) {
    dlc_tensor_info want;
    dlc_model_entry_input_info(m, e, i, &want);
    int32_t idx = d.find(want.name);
    if (idx < 0) {
      fail(flag + " '" + d.path + "' has no array for the input '" + want.name +
               "' (" + describeRows(want) + ")",
           "the model's inputs: " + entryInputs(m, e) +
               "; the file's "
               "arrays: " +
               d.arrays());
      return false;
    }
    dlc_tensor_info got = d.get(idx);
    bool ok = got.dtype == want.dtype && got.rank == want.rank &&
              got.rank >= 1 && got.shape[0] >= 1;
    for (int k = 1; ok && k < got.rank; ++k)
      ok = got.shape[k] == want.shape[k];
    if (!ok) {
      fail(flag + " '" + d.path + "': array '" + got.name + "' is " +
               describe(got) + ", but the input '" + want.name + "' takes " +
               describeRows(want) + " (N rows)",
           "the model's inputs: " + entryInputs(m, e) +
               "; the file's "
               "arrays: " +
               d.arrays());
      return false;
    }
    if (d.rows >= 0 && got.shape[0] != d.rows) {
      fail(flag + " '" + d.path + "': array '" + got.name + "' has " +
           Twine(got.shape[0]) + " rows, '" + firstName + "' " + Twine(d.rows) +
           "; every array holds one row per sample");
      return false;
    }
    if (d.rows < 0)
      firstName = got.name;
    d.rows = got.shape[0];
    cols[i].data = static_cast<const char *>(got.data);
    cols[i].rowBytes = size_t(got.nbytes / got.shape[0]);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

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
// Validation: Model.evaluate
//===----------------------------------------------------------------------===//

namespace {
struct EvalResult {
  double loss = 0;
  double accuracy = -1; // < 0: none (MSE)
};
} // namespace

/// The forward entry over `val` in batches of `B` (the last one padded
/// with zeros), the loss (and accuracy) in double, as Model.evaluate
/// computes them in NumPy. With `check`, only checks the data set against
/// the model (before the first epoch).
static bool evaluate(dlc_model *m, int64_t B, DataSet &val, StringRef label,
                     bool crossEntropy, int classDim, EvalResult &r,
                     bool check = false) {
  int32_t fwd = dlc_model_find_entry(m, "forward");
  if (fwd < 0)
    return fail("--val needs the model's forward entry"), false;
  std::vector<Column> cols;
  if (!bindInputs("--val", val, m, fwd, cols))
    return false;
  int32_t labelIdx = val.find(label);
  if (labelIdx < 0)
    return fail("--val '" + val.path + "' has no array for the label '" +
                    label + "'",
                "the file's arrays: " + val.arrays()),
           false;
  dlc_tensor_info lab = val.get(labelIdx);
  int64_t n = val.rows;
  if (lab.rank < 1 || lab.shape[0] != n)
    return fail("--val '" + val.path + "': the label '" + lab.name + "' has " +
                Twine(lab.rank ? lab.shape[0] : 0) + " rows, the inputs " +
                Twine(n)),
           false;
  dlc_tensor_info o;
  dlc_model_entry_output_info(m, fwd, 0, &o);
  if (o.dtype != DLC_F32 || o.rank < 1 || o.shape[0] != B)
    return fail("--val: the forward output '" + Twine(o.name) + "' (" +
                describe(o) + ") has no batch dimension of " + Twine(B) +
                " f32 rows to evaluate"),
           false;
  int64_t rowElems = o.numel / B;
  int64_t classes = 0, positions = 0;
  if (!crossEntropy) {
    if (lab.dtype != DLC_F32 || lab.numel != n * rowElems)
      return fail("--val: the label '" + Twine(lab.name) + "' (" +
                  describe(lab) + ") must be f32 of the output's shape"),
             false;
  } else {
    classes =
        (o.rank == 2 || classDim == -1) ? o.shape[o.rank - 1] : o.shape[1];
    positions = n * rowElems / std::max<int64_t>(classes, 1);
    if ((lab.dtype != DLC_I64 && lab.dtype != DLC_I32) ||
        lab.numel != positions)
      return fail("--val: the label '" + Twine(lab.name) + "' (" +
                  describe(lab) +
                  ") must hold one integer class per "
                  "position of the output (" +
                  Twine(positions) + ")"),
             false;
    if (!checkClassLabels(m, label, classDim, lab.dtype, lab.data, lab.numel))
      return false;
  }
  if (check)
    return true;
  int32_t nIn = dlc_model_entry_num_inputs(m, fwd);
  std::vector<void *> in(nIn);
  for (int32_t i = 0; i < nIn; ++i) {
    dlc_tensor_info t;
    dlc_model_entry_input_info(m, fwd, i, &t);
    if (dlc_model_alloc_host(m, size_t(t.nbytes), &in[i]) != DLC_OK)
      return failRuntime("cannot allocate a batch"), false;
  }
  int32_t nOut = dlc_model_entry_num_outputs(m, fwd);
  std::vector<void *> out(nOut);
  for (int32_t i = 0; i < nOut; ++i) {
    dlc_tensor_info t;
    dlc_model_entry_output_info(m, fwd, i, &t);
    if (dlc_model_alloc_host(m, size_t(std::max<int64_t>(t.nbytes, 1)),
                             &out[i]) != DLC_OK)
      return failRuntime("cannot allocate the outputs"), false;
  }
  std::vector<float> pred(size_t(n * rowElems));
  for (int64_t lo = 0; lo < n; lo += B) {
    int64_t rows = std::min(B, n - lo);
    for (int32_t i = 0; i < nIn; ++i) {
      size_t rb = cols[i].rowBytes;
      std::memcpy(in[i], cols[i].data + lo * rb, rows * rb);
      std::memset(static_cast<char *>(in[i]) + rows * rb, 0, (B - rows) * rb);
    }
    if (dlc_model_run(m, fwd, in.data(), out.data()) != DLC_OK)
      return failRuntime("validation failed"), false;
    std::memcpy(pred.data() + lo * rowElems, out[0],
                size_t(rows * rowElems) * sizeof(float));
  }
  for (void *p : in)
    dlc_model_free_host(m, p);
  for (void *p : out)
    dlc_model_free_host(m, p);

  if (!crossEntropy) {
    const float *y = static_cast<const float *>(lab.data);
    double s = 0;
    for (int64_t k = 0; k < n * rowElems; ++k) {
      double d = double(pred[k]) - double(y[k]);
      s += d * d;
    }
    r.loss = s / double(std::max<int64_t>(n * rowElems, 1));
    return true;
  }
  // Cross-entropy: classes along dimension 1 ([N, C, d...]) or the last.
  int64_t stride = (o.rank == 2 || classDim == -1) ? 1 : rowElems / classes;
  double s = 0;
  int64_t count = 0, correct = 0;
  for (int64_t p = 0; p < positions; ++p) {
    int64_t c = lab.dtype == DLC_I64
                    ? static_cast<const int64_t *>(lab.data)[p]
                    : static_cast<const int32_t *>(lab.data)[p];
    if (c == -100)
      continue;
    // Position p: sample p / (positions / n), the rest within the sample.
    int64_t perSample = positions / n;
    int64_t sample = p / perSample, within = p % perSample;
    const float *z = pred.data() + sample * rowElems +
                     (stride == 1 ? within * classes : within);
    auto at = [&](int64_t k) { return double(z[k * stride]); };
    double zmax = at(0);
    int64_t arg = 0;
    for (int64_t k = 1; k < classes; ++k)
      if (at(k) > zmax) {
        zmax = at(k);
        arg = k;
      }
    double se = 0;
    for (int64_t k = 0; k < classes; ++k)
      se += std::exp(at(k) - zmax);
    s += std::log(se) + zmax - at(c);
    ++count;
    correct += arg == c;
  }
  r.loss = s / double(std::max<int64_t>(count, 1));
  r.accuracy = double(correct) / double(std::max<int64_t>(count, 1));
  return true;
}

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

int dlc::driver::trainMain(const TrainSetup &setup) {
  if (shuffleOrder >= 0) {
    NumpyRng rng(setup.seed);
    for (unsigned e = 0; e < epochs; ++e) {
      std::vector<int64_t> order = rng.permutation(shuffleOrder);
      for (size_t i = 0; i < order.size(); ++i)
        outs() << (i ? " " : "") << order[i];
      outs() << "\n";
    }
    return 0;
  }
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

  // The data sets, before compiling: class labels keep the element type of
  // their file (i32 or i64), as in `dlc run`.
  DataSet train, val;
  if (!readDataSet("--data", dataFile, train))
    return 1;
  if (!valFile.empty() && !readDataSet("--val", valFile, val))
    return 1;
  std::string labelType;
  if (setup.loss == "cross_entropy" && !setup.labelTypeGiven) {
    int32_t idx = train.find(setup.label);
    if (idx >= 0 && train.get(idx).dtype == DLC_I32)
      labelType = "i32";
  }

  // The log, opened first: a bad path fails before any work.
  struct Fd {
    int fd = -1;
    ~Fd() {
      if (fd >= 0)
        ::close(fd);
    }
  } log;
  int &logFd = log.fd;
  if (!logFile.empty()) {
    logFd = ::open(logFile.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                   0644);
    if (logFd < 0)
      return fail("cannot open --log '" + logFile +
                  "': " + std::strerror(errno));
  }

  // The checkpoint to resume from, and its sidecar.
  std::optional<json::Value> sidecar;
  int64_t done = 0;
  std::string sidecarPath;
  if (!resumeFrom.empty()) {
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
  }

  // Compile and create the model.
  std::unique_ptr<JitModel> jit = setup.compile(batchSize, labelType);
  if (!jit)
    return 1;
  ModelPtr model;
  if (dlc_model_create(jit->desc, setup.device, &model.m) != DLC_OK)
    return failRuntime("cannot create the model");
  if (const char *why = dlc_model_fallback_reason(model.m); why && *why)
    WithColor::warning(errs(), "dlc")
        << "running on the CPU: CUDA is usable but not for this model: " << why
        << "\n";
  errs() << "dlc: using device: " << dlc_model_device_name(model.m) << "\n";
  Stepper full;
  if (!full.init(model.m, 0))
    return 1;
  int64_t B = 0;
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

  std::vector<Column> cols;
  if (!bindInputs("--data", train, model.m, full.e, cols))
    return 1;
  const int64_t n = train.rows;
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
  bool crossEntropy = false;
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

  // The parameters: a checkpoint, --weights or the seeded initialisation.
  if (!resumeFrom.empty()) {
    if (dlc_model_load(model.m, resumeFrom.c_str()) != DLC_OK)
      return failRuntime("--resume: cannot load '" + resumeFrom + "'");
  } else if (!setup.weights.empty()) {
    if (dlc_model_load(model.m, setup.weights.c_str()) != DLC_OK)
      return failRuntime("cannot load weights");
  } else if (dlc_model_init(model.m, initSeed) != DLC_OK) {
    return failRuntime("cannot initialise the model");
  }

  // The shuffle: one generator for the whole run; a resumed run takes the
  // checkpoint's.
  uint64_t seed = setup.seed;
  bool doShuffle = shuffleFlag;
  NumpyRng rng(seed);
  if (sidecar) {
    const json::Object &o = *sidecar->getAsObject();
    auto samples = o.getInteger("samples");
    auto batch = o.getInteger("batch_size");
    auto shuf = o.getBoolean("shuffle");
    auto s = o.getInteger("seed");
    if (!samples || !batch || !shuf || !s)
      return fail("--resume: '" + sidecarPath +
                  "' lacks samples, "
                  "batch_size, shuffle or seed");
    if (*samples != n || *batch != B)
      return fail("--resume: the checkpoint was trained on " + Twine(*samples) +
                  " samples in batches of " + Twine(*batch) +
                  ", this run has " + Twine(n) + " in batches of " + Twine(B));
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
  }

  // The short last batch's model, compiled before the first epoch.
  int64_t shortRows = n % B, steps = (n + B - 1) / B;
  std::unique_ptr<JitModel> shortJit;
  ModelPtr shortModel;
  Stepper part;
  if (shortRows) {
    shortJit = setup.compile(shortRows, labelType);
    if (!shortJit) {
      errs() << "dlc: note: the last batch of each epoch has " << shortRows
             << " rows and needs the model compiled for that batch\n";
      return 1;
    }
    if (dlc_model_create(shortJit->desc, dlc_model_device(model.m),
                         &shortModel.m) != DLC_OK)
      return failRuntime("cannot create the short batch's model");
    if (!part.init(shortModel.m, shortRows))
      return 1;
  }

  bool tty = ::isatty(2);
  std::string saveDir = saveEveryEpoch;
  if (!saveDir.empty())
    if (std::error_code ec = sys::fs::create_directories(saveDir))
      return fail("--save-every-epoch: cannot create '" + saveDir +
                  "': " + ec.message());

  using Clock = std::chrono::steady_clock;
  std::vector<int64_t> order;
  for (int64_t epoch = done + 1; epoch <= int64_t(epochs); ++epoch) {
    std::string desc =
        ("epoch " + Twine(epoch) + "/" + Twine(unsigned(epochs))).str();
    if (doShuffle)
      order = rng.permutation(n);
    auto t0 = Clock::now(), last = t0;
    double total = 0;
    int64_t seen = 0;
    for (int64_t k = 0; k < steps; ++k) {
      int64_t lo = k * B, hi = std::min(n, lo + B), rows = hi - lo;
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
      total += loss * double(rows);
      seen += rows;
      auto now = Clock::now();
      if (tty && std::chrono::duration<double>(now - last).count() > 0.1) {
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
    EvalResult ev;
    if (!valFile.empty() && !evaluate(model.m, B, val, setup.label,
                                      crossEntropy, setup.classDim, ev))
      return 1;
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

    if (logFd >= 0) {
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
      if (::write(logFd, text.data(), text.size()) != ssize_t(text.size()))
        return fail("cannot write --log '" + logFile +
                    "': " + std::strerror(errno));
    }
    if (!saveDir.empty()) {
      SmallString<256> ckpt(saveDir), side(saveDir);
      sys::path::append(ckpt, "epoch-" + Twine(epoch) + ".safetensors");
      sys::path::append(side, "epoch-" + Twine(epoch) + ".json");
      if (dlc_model_save(model.m, ckpt.c_str()) != DLC_OK)
        return failRuntime("cannot save '" + ckpt + "'");
      std::string text;
      raw_string_ostream os(text);
      json::OStream j(os, /*IndentSize=*/2);
      j.object([&] {
        j.attribute("epoch", epoch);
        j.attribute("epochs", int64_t(epochs));
        j.attribute("samples", n);
        j.attribute("batch_size", B);
        j.attribute("shuffle", doShuffle);
        j.attribute("seed", int64_t(seed));
        j.attribute("loss", number(meanLoss));
        if (doShuffle)
          j.attribute("rng", rng.save());
      });
      os << "\n";
      if (!writeAtomically(side, text))
        return fail("cannot write '" + side + "': " + std::strerror(errno));
    }
  }
  if (!setup.save.empty() &&
      dlc_model_save(model.m, setup.save.c_str()) != DLC_OK)
    return failRuntime("cannot save '" + setup.save + "'");
  return 0;
}
