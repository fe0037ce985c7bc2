//===- TrainData.cpp - dlc train's data sets and validation ---------------===//
//
// A data set's arrays are read whole (a .npz through Npz.cpp, a
// .safetensors file through libdlcrt) and checked against the model's
// inputs before the first step: names (the model's or the ONNX graph's),
// dtypes, trailing dimensions, one row count. The validation pass runs the
// forward entry over them in batches and computes the loss and accuracy in
// double, as the Python package's Model.evaluate does in NumPy.
//
//===----------------------------------------------------------------------===//

#include "TrainData.h"
#include "Npz.h"

#include "dlc/Driver/Errors.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace llvm;
using namespace dlc::driver;

bool dlc::driver::readDataSet(StringRef flag, StringRef path, DataSet &d) {
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

std::string dlc::driver::describeRows(const dlc_tensor_info &t) {
  std::string s = std::string(t.name) + " " + dlc_dtype_name(t.dtype) + "[N";
  for (int i = 1; i < t.rank; ++i)
    s += ", " + std::to_string(t.shape[i]);
  return s + "]";
}

std::string dlc::driver::entryInputs(dlc_model *m, int32_t e) {
  std::string s;
  for (int32_t i = 0; i < dlc_model_entry_num_inputs(m, e); ++i) {
    dlc_tensor_info t;
    dlc_model_entry_input_info(m, e, i, &t);
    s += (i ? ", " : "") + describeRows(t);
  }
  return s;
}

bool dlc::driver::bindInputs(StringRef flag, DataSet &d, dlc_model *m,
                             int32_t e, std::vector<Column> &cols) {
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

bool dlc::driver::evaluate(dlc_model *m, int64_t B, DataSet &val,
                           StringRef label, bool crossEntropy, int classDim,
                           EvalResult &r, bool check) {
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
