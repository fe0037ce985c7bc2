//===- NpyTest.cpp - .npy files and tensor lists --------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace dlc::test;

namespace {

struct ListDeleter {
  void operator()(dlc_tensor_list *l) const { dlc_tensor_list_free(l); }
};
using ListPtr = std::unique_ptr<dlc_tensor_list, ListDeleter>;

ListPtr newList() {
  dlc_tensor_list *l = nullptr;
  EXPECT_EQ(dlc_tensor_list_create(&l), DLC_OK);
  return ListPtr(l);
}

ListPtr readList(const std::string &path, dlc_status expected = DLC_OK) {
  dlc_tensor_list *l = reinterpret_cast<dlc_tensor_list *>(0x1);
  EXPECT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_AUTO, &l), expected)
      << dlc_last_error();
  if (expected != DLC_OK) {
    EXPECT_EQ(l, nullptr);
  }
  return ListPtr(l);
}

/// An .npy file from a header dict (padded like NumPy) and data.
std::string npyBytes(const std::string &dict, const std::string &data,
                     int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(major);
  bytes += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    bytes += static_cast<char>(header.size() >> (8 * i));
  return bytes + header + data;
}

TEST(TensorListTest, AddGetFind) {
  ListPtr list = newList();
  EXPECT_EQ(dlc_tensor_list_size(list.get()), 0);
  int64_t shape[] = {2, 3};
  float data[6] = {1, 2, 3, 4, 5, 6};
  int32_t index = -1;
  ASSERT_EQ(
      dlc_tensor_list_add(list.get(), "a", DLC_F32, 2, shape, data, &index),
      DLC_OK);
  EXPECT_EQ(index, 0);
  ASSERT_EQ(dlc_tensor_list_add(list.get(), "b", DLC_I64, 0, nullptr, nullptr,
                                &index),
            DLC_OK);
  EXPECT_EQ(index, 1);
  EXPECT_EQ(dlc_tensor_list_size(list.get()), 2);

  dlc_tensor_info a, b;
  ASSERT_EQ(dlc_tensor_list_get(list.get(), 0, &a), DLC_OK);
  EXPECT_STREQ(a.name, "a");
  EXPECT_EQ(a.rank, 2);
  EXPECT_EQ(a.numel, 6);
  EXPECT_EQ(a.nbytes, 24);
  EXPECT_EQ(std::memcmp(a.data, data, 24), 0);
  EXPECT_NE(a.data, static_cast<void *>(data)); // Copied.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data) % 64, 0u);
  ASSERT_EQ(dlc_tensor_list_get(list.get(), 1, &b), DLC_OK);
  EXPECT_EQ(b.rank, 0);
  EXPECT_EQ(b.numel, 1);
  EXPECT_EQ(*static_cast<int64_t *>(b.data), 0); // Zero-filled.

  // Names and data stay put as the list grows.
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(dlc_tensor_list_add(list.get(), ("t" + std::to_string(i)).c_str(),
                                  DLC_U8, 1, shape, nullptr, nullptr),
              DLC_OK);
  EXPECT_STREQ(a.name, "a");
  dlc_tensor_info again;
  ASSERT_EQ(dlc_tensor_list_get(list.get(), 0, &again), DLC_OK);
  EXPECT_EQ(again.name, a.name);
  EXPECT_EQ(again.data, a.data);

  EXPECT_EQ(dlc_tensor_list_find(list.get(), "b"), 1);
  EXPECT_EQ(dlc_tensor_list_find(list.get(), "t99"), 101);
  EXPECT_EQ(dlc_tensor_list_find(list.get(), "zz"), -1);
  EXPECT_TRUE(errorContains("no tensor called 'zz'"));

  EXPECT_EQ(dlc_tensor_list_add(list.get(), "a", DLC_F32, 0, nullptr, nullptr,
                                nullptr),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("already has a tensor called 'a'"));
  EXPECT_EQ(dlc_tensor_list_add(list.get(), "", DLC_F32, 0, nullptr, nullptr,
                                nullptr),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(
      dlc_tensor_list_add(list.get(), "c", DLC_F32, 9, shape, nullptr, nullptr),
      DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_tensor_list_add(list.get(), "c", DLC_F32, 1, nullptr, nullptr,
                                nullptr),
            DLC_ERR_INVALID_ARGUMENT);
  int64_t negative[] = {-1};
  EXPECT_EQ(dlc_tensor_list_add(list.get(), "c", DLC_F32, 1, negative, nullptr,
                                nullptr),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_tensor_list_get(list.get(), 102, &again),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_tensor_list_size(nullptr), -1);
  dlc_tensor_list_free(nullptr);
}

TEST(NpyTest, RoundTripEveryDType) {
  TempDir dir;
  const dlc_dtype dtypes[] = {DLC_F32, DLC_F16, DLC_F64, DLC_I64,
                              DLC_I32, DLC_I8,  DLC_U8};
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {5}, {2, 3}, {1, 2, 3, 4}, {0, 3}, {2, 1, 1, 1, 1, 1, 1, 2}};
  for (dlc_dtype dtype : dtypes) {
    for (const auto &shape : shapes) {
      SCOPED_TRACE(std::string(dlc_dtype_name(dtype)) + " rank " +
                   std::to_string(shape.size()));
      ListPtr out = newList();
      int32_t i = 0;
      ASSERT_EQ(dlc_tensor_list_add(out.get(), "t", dtype,
                                    static_cast<int32_t>(shape.size()),
                                    shape.data(), nullptr, &i),
                DLC_OK);
      dlc_tensor_info info;
      ASSERT_EQ(dlc_tensor_list_get(out.get(), 0, &info), DLC_OK);
      auto *bytes = static_cast<uint8_t *>(info.data);
      for (int64_t b = 0; b < info.nbytes; ++b)
        bytes[b] = static_cast<uint8_t>(b * 7 + 1);

      std::string path = dir.file("my.tensor.npy");
      ASSERT_EQ(dlc_tensor_file_write(path.c_str(), DLC_FILE_AUTO, out.get()),
                DLC_OK)
          << dlc_last_error();
      std::string file = readFile(path);
      EXPECT_EQ((file.size() - info.nbytes) % 64, 0u); // Data 64-aligned.

      ListPtr in = readList(path);
      ASSERT_TRUE(in);
      ASSERT_EQ(dlc_tensor_list_size(in.get()), 1);
      dlc_tensor_info back;
      ASSERT_EQ(dlc_tensor_list_get(in.get(), 0, &back), DLC_OK);
      EXPECT_STREQ(back.name, "my.tensor");
      EXPECT_EQ(back.dtype, dtype);
      ASSERT_EQ(back.rank, info.rank);
      for (int d = 0; d < 8; ++d)
        EXPECT_EQ(back.shape[d], info.shape[d]);
      ASSERT_EQ(back.nbytes, info.nbytes);
      EXPECT_EQ(
          std::memcmp(back.data, info.data, static_cast<size_t>(info.nbytes)),
          0);
    }
  }
  EXPECT_EQ(dir.list(), std::vector<std::string>{"my.tensor.npy"});
}

TEST(NpyTest, WritesWhatNumPyWrites) {
  // np.save("x.npy", np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32))
  TempDir dir;
  ListPtr list = newList();
  int64_t shape[] = {2, 3};
  float data[] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(
      dlc_tensor_list_add(list.get(), "x", DLC_F32, 2, shape, data, nullptr),
      DLC_OK);
  std::string path = dir.file("x.npy");
  ASSERT_EQ(dlc_tensor_file_write(path.c_str(), DLC_FILE_NPY, list.get()),
            DLC_OK);
  std::string expected =
      std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
      std::string(58, ' ') + "\n" + floatBytes({1, 2, 3, 4, 5, 6});
  EXPECT_EQ(readFile(path), expected);

  // A scalar and a vector.
  ListPtr scalar = newList();
  ASSERT_EQ(dlc_tensor_list_add(scalar.get(), "s", DLC_I64, 0, nullptr, nullptr,
                                nullptr),
            DLC_OK);
  ASSERT_EQ(dlc_tensor_file_write(path.c_str(), DLC_FILE_AUTO, scalar.get()),
            DLC_OK);
  EXPECT_NE(readFile(path).find("{'descr': '<i8', 'fortran_order': False, "
                                "'shape': (), }"),
            std::string::npos);
  ListPtr vec = newList();
  int64_t five[] = {5};
  ASSERT_EQ(
      dlc_tensor_list_add(vec.get(), "v", DLC_U8, 1, five, nullptr, nullptr),
      DLC_OK);
  ASSERT_EQ(dlc_tensor_file_write(path.c_str(), DLC_FILE_AUTO, vec.get()),
            DLC_OK);
  EXPECT_NE(readFile(path).find("'descr': '|u1', 'fortran_order': False, "
                                "'shape': (5,), }"),
            std::string::npos);
}

TEST(NpyTest, ReadsOtherHeaderSpellings) {
  TempDir dir;
  std::string path = dir.file("a.npy");
  // Version 2.0, double quotes, other key order, no trailing comma.
  writeFile(path, npyBytes("{\"shape\": (2,), \"fortran_order\": False, "
                           "\"descr\": \"<i4\"}",
                           std::string("\x01\0\0\0\x02\0\0\0", 8), 2));
  ListPtr list = readList(path);
  ASSERT_TRUE(list);
  dlc_tensor_info info;
  ASSERT_EQ(dlc_tensor_list_get(list.get(), 0, &info), DLC_OK);
  EXPECT_EQ(info.dtype, DLC_I32);
  EXPECT_EQ(static_cast<int32_t *>(info.data)[1], 2);

  // A file without the .npy extension is still recognised by its magic.
  std::string other = dir.file("noext");
  writeFile(other, npyBytes("{'descr': '|i1', 'fortran_order': False, "
                            "'shape': (1, 1), }",
                            "\x7f"));
  list = readList(other);
  ASSERT_TRUE(list);
  ASSERT_EQ(dlc_tensor_list_get(list.get(), 0, &info), DLC_OK);
  EXPECT_STREQ(info.name, "noext");
  EXPECT_EQ(info.dtype, DLC_I8);
  EXPECT_EQ(info.rank, 2);
}

struct BadNpy {
  const char *name;
  std::string bytes;
  const char *message;
};

TEST(NpyTest, RejectsBadFiles) {
  const std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data = floatBytes({1, 2});
  std::string good = npyBytes(dict, data);
  std::string badVersion = good;
  badVersion[6] = 4;
  std::string hugeHeader = good;
  hugeHeader[9] = '\x7f';
  const BadNpy cases[] = {
      {"bad magic", "\x93NUMPZ" + good.substr(6), "no npy magic"},
      {"too short", good.substr(0, 9), "no npy magic"},
      {"bad version", badVersion, "unsupported format version 4.0"},
      {"header beyond file", hugeHeader, "exceeds the file size"},
      {"fortran order",
       npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
                data),
       "fortran_order is True"},
      {"big endian",
       npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                data),
       "unsupported dtype '>f4'"},
      {"unknown dtype",
       npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                std::string(8, '\0')),
       "unsupported dtype '<c8'"},
      {"missing key", npyBytes("{'descr': '<f4', 'shape': (2,), }", data),
       "missing key 'fortran_order'"},
      {"unknown key",
       npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                "'x': 1}",
                data),
       "unexpected key 'x'"},
      {"duplicate key",
       npyBytes("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                "'shape': (2,)}",
                data),
       "duplicate key 'descr'"},
      {"shape not a tuple",
       npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }",
                data),
       "'shape' is not a tuple"},
      {"negative dim",
       npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
                data),
       "non-negative integers"},
      {"not a dict", npyBytes("['<f4', False, (2,)]", data),
       "not a Python dict"},
      {"garbage after", npyBytes(dict + " x", data), "unexpected data"},
      {"truncated data", npyBytes(dict, data.substr(0, 7)),
       "the data has 7 bytes but <f4 [2] needs 8"},
      {"extra data", npyBytes(dict, data + "x"), "the data has 9 bytes"},
  };
  TempDir dir;
  for (const BadNpy &c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.file("bad.npy");
    writeFile(path, c.bytes);
    dlc_tensor_list *list = nullptr;
    EXPECT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_NPY, &list),
              DLC_ERR_FORMAT);
    EXPECT_EQ(list, nullptr);
    EXPECT_TRUE(errorContains(c.message)) << dlc_last_error();
    EXPECT_TRUE(errorContains("bad npy file '" + path + "'"))
        << dlc_last_error();
  }
}

TEST(NpyTest, WriteErrors) {
  TempDir dir;
  ListPtr list = newList();
  std::string path = dir.file("x.npy");
  EXPECT_EQ(dlc_tensor_file_write(path.c_str(), DLC_FILE_AUTO, list.get()),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("holds one tensor, the list has 0"));

  ASSERT_EQ(dlc_tensor_list_add(list.get(), "b", DLC_BF16, 0, nullptr, nullptr,
                                nullptr),
            DLC_OK);
  EXPECT_EQ(dlc_tensor_file_write(path.c_str(), DLC_FILE_AUTO, list.get()),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("npy has no bf16 dtype"));

  EXPECT_EQ(dlc_tensor_file_write(dir.file("x.txt").c_str(), DLC_FILE_AUTO,
                                  list.get()),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("cannot tell the format"));
  EXPECT_EQ(dlc_tensor_file_write(path.c_str(), static_cast<dlc_file_format>(3),
                                  list.get()),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_tensor_file_write(nullptr, DLC_FILE_AUTO, list.get()),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(dir.list().empty());

  EXPECT_EQ(dlc_tensor_file_write("/nonexistent-dir/x.safetensors",
                                  DLC_FILE_AUTO, list.get()),
            DLC_ERR_IO);
  dlc_tensor_list *out = nullptr;
  EXPECT_EQ(
      dlc_tensor_file_read(dir.file("absent.npy").c_str(), DLC_FILE_AUTO, &out),
      DLC_ERR_IO);
  EXPECT_TRUE(errorContains("cannot open tensor file"));
}

} // namespace
