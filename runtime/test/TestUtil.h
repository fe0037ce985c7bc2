//===- TestUtil.h - Helpers for the libdlcrt unit tests ---------*- C++ -*-===//

#ifndef DLCRT_TEST_TESTUTIL_H
#define DLCRT_TEST_TESTUTIL_H

#include "dlc/dlc_io.h"
#include "dlc/dlc_runtime.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlc::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its files.
class TempDir {
public:
  TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  ~TempDir();
  const std::string &path() const { return Path; }
  std::string file(const std::string &name) const { return Path + "/" + name; }
  /// The names of the files in the directory, sorted.
  std::vector<std::string> list() const;

private:
  std::string Path;
};

/// Sets (or, with std::nullopt, unsets) an environment variable for the
/// guard's lifetime.
class EnvGuard {
public:
  EnvGuard(const char *name, std::optional<std::string> value);
  EnvGuard(const EnvGuard &) = delete;
  EnvGuard &operator=(const EnvGuard &) = delete;
  ~EnvGuard();

private:
  std::string Name;
  std::optional<std::string> Saved;
};

std::string readFile(const std::string &path);
void writeFile(const std::string &path, const std::string &bytes);

/// A .safetensors file from a raw JSON header (not padded) and data.
std::string safetensorsBytes(const std::string &header,
                             const std::string &data);

/// The bytes of a float array.
std::string floatBytes(const std::vector<float> &values);

/// A model that dlc_model_destroy ends.
struct ModelDeleter {
  void operator()(dlc_model *m) const { dlc_model_destroy(m); }
};
using ModelPtr = std::unique_ptr<dlc_model, ModelDeleter>;

/// The model of `desc` created on `device`; a failure is a test failure
/// (with dlc_last_error()) and null.
ModelPtr createModel(const dlc_model_desc &desc, dlc_device_kind device);

/// Whether dlc_last_error() contains `text`.
bool errorContains(const std::string &text);

} // namespace dlc::test

#endif // DLCRT_TEST_TESTUTIL_H
