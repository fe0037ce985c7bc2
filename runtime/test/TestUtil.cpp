//===- TestUtil.cpp - Helpers for the libdlcrt unit tests -----------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

using namespace dlc::test;

TempDir::TempDir() {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/dlcrt-test-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw std::runtime_error("mkdtemp failed");
  Path = buf.data();
}

TempDir::~TempDir() {
  for (const std::string &name : list())
    ::unlink(file(name).c_str());
  ::rmdir(Path.c_str());
}

std::vector<std::string> TempDir::list() const {
  std::vector<std::string> names;
  if (DIR *dir = ::opendir(Path.c_str())) {
    while (dirent *entry = ::readdir(dir))
      if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
        names.push_back(entry->d_name);
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

EnvGuard::EnvGuard(const char *name, std::optional<std::string> value)
    : Name(name) {
  if (const char *old = std::getenv(name))
    Saved = old;
  if (value)
    ::setenv(name, value->c_str(), 1);
  else
    ::unsetenv(name);
}

EnvGuard::~EnvGuard() {
  if (Saved)
    ::setenv(Name.c_str(), Saved->c_str(), 1);
  else
    ::unsetenv(Name.c_str());
}

std::string dlc::test::readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void dlc::test::writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string dlc::test::safetensorsBytes(const std::string &header,
                                        const std::string &data) {
  std::string bytes(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>(n >> (8 * i));
  return bytes + header + data;
}

std::string dlc::test::floatBytes(const std::vector<float> &values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

bool dlc::test::errorContains(const std::string &text) {
  return std::string(dlc_last_error()).find(text) != std::string::npos;
}

dlc::test::ModelPtr dlc::test::createModel(const dlc_model_desc &desc,
                                           dlc_device_kind device) {
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_create(&desc, device, &m), DLC_OK) << dlc_last_error();
  return ModelPtr(m);
}
