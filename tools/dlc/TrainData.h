//===- TrainData.h - dlc train's data sets and validation -----*- C++ -*-===//
//
// The arrays of a data set (--data, --val: .npz or .safetensors) bound to a
// model's inputs by name, row by row, and Model.evaluate's validation pass
// over them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TOOLS_DLC_TRAINDATA_H
#define DLC_TOOLS_DLC_TRAINDATA_H

#include "dlc/Driver/Run.h"
#include "dlc/dlc_io.h"
#include "dlc/dlc_runtime.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::driver {

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
  int32_t find(llvm::StringRef name) const {
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

/// Reads the data set `path` (of `flag`: --data or --val) into `d`; every
/// array is read now, so that a file that cannot be read fails here. An
/// error is printed; returns whether it was read.
bool readDataSet(llvm::StringRef flag, llvm::StringRef path, DataSet &d);

/// "NAME f32[N, 10]" for an input of the model.
std::string describeRows(const dlc_tensor_info &t);

/// The inputs of entry `e` of `m`, as describeRows says them.
std::string entryInputs(dlc_model *m, int32_t e);

/// The columns of `d` for the inputs of entry `e`, in its order; checks
/// names, dtypes, trailing dimensions and that every array has the same
/// number of rows (d.rows).
bool bindInputs(llvm::StringRef flag, DataSet &d, dlc_model *m, int32_t e,
                std::vector<Column> &cols);

struct EvalResult {
  double loss = 0;
  double accuracy = -1; // < 0: none (MSE)
};

/// The forward entry over `val` in batches of `B` (the last one padded
/// with zeros), the loss (and accuracy) in double, as Model.evaluate
/// computes them in NumPy. With `check`, only checks the data set against
/// the model (before the first epoch).
bool evaluate(dlc_model *m, int64_t B, DataSet &val, llvm::StringRef label,
              bool crossEntropy, int classDim, EvalResult &r,
              bool check = false);

} // namespace dlc::driver

#endif // DLC_TOOLS_DLC_TRAINDATA_H
