//===- SafetensorsTest.cpp - .safetensors files ---------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>

using namespace dlc::test;

namespace {

struct ListDeleter {
  void operator()(dlc_tensor_list *l) const { dlc_tensor_list_free(l); }
};
using ListPtr = std::unique_ptr<dlc_tensor_list, ListDeleter>;

ListPtr readSafetensors(const std::string &path) {
  dlc_tensor_list *l = nullptr;
  EXPECT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_SAFETENSORS, &l),
            DLC_OK)
      << dlc_last_error();
  return ListPtr(l);
}

TEST(SafetensorsTest, RoundTripSortedWithMetadata) {
  TempDir dir;
  dlc_tensor_list *raw = nullptr;
  ASSERT_EQ(dlc_tensor_list_create(&raw), DLC_OK);
  ListPtr list(raw);
  const dlc_dtype dtypes[] = {DLC_F32, DLC_F16, DLC_BF16, DLC_F64,
                              DLC_I64, DLC_I32, DLC_I8,   DLC_U8};
  const char *names[] = {"z.weight",  "y",        "x",
                         "b.bias",    "a\"quote", "\xc3\xa9t\xc3\xa9",
                         "tab\there", "empty"};
  for (int i = 0; i < 8; ++i) {
    int64_t shape[] = {i == 7 ? 0 : 3, i + 1};
    ASSERT_EQ(dlc_tensor_list_add(list.get(), names[i], dtypes[i],
                                  i == 6 ? 0 : 2, shape, nullptr, nullptr),
              DLC_OK);
    dlc_tensor_info info;
    ASSERT_EQ(dlc_tensor_list_get(list.get(), i, &info), DLC_OK);
    std::memset(info.data, i + 1, static_cast<size_t>(info.nbytes));
  }
  std::string path = dir.file("t.safetensors");
  ASSERT_EQ(dlc_tensor_file_write(path.c_str(), DLC_FILE_AUTO, list.get()),
            DLC_OK)
      << dlc_last_error();
  EXPECT_EQ(dir.list(), std::vector<std::string>{"t.safetensors"});

  std::string bytes = readFile(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u); // Data 8-aligned (space padding).
  std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.rfind("{\"__metadata__\":{\"format\":\"pt\"},\"a\\\"quote\":"
                         "{\"dtype\":\"I64\",\"shape\":[3,5],"
                         "\"data_offsets\":[0,120]},",
                         0),
            0u)
      << header;
  EXPECT_NE(header.find("\"tab\\u0009here\":{\"dtype\":\"I8\",\"shape\":[],"),
            std::string::npos)
      << header;

  ListPtr back = readSafetensors(path);
  ASSERT_TRUE(back);
  ASSERT_EQ(dlc_tensor_list_size(back.get()), 8);
  // In data order, which is name order.
  const char *sorted[] = {
      "a\"quote", "b.bias", "empty",    "tab\there",
      "x",        "y",      "z.weight", "\xc3\xa9t\xc3\xa9"};
  for (int i = 0; i < 8; ++i) {
    dlc_tensor_info info;
    ASSERT_EQ(dlc_tensor_list_get(back.get(), i, &info), DLC_OK);
    EXPECT_STREQ(info.name, sorted[i]);
    int32_t original = dlc_tensor_list_find(list.get(), sorted[i]);
    ASSERT_GE(original, 0);
    dlc_tensor_info want;
    ASSERT_EQ(dlc_tensor_list_get(list.get(), original, &want), DLC_OK);
    EXPECT_EQ(info.dtype, want.dtype);
    EXPECT_EQ(info.rank, want.rank);
    EXPECT_EQ(info.shape[0], want.shape[0]);
    EXPECT_EQ(info.shape[1], want.shape[1]);
    ASSERT_EQ(info.nbytes, want.nbytes);
    EXPECT_EQ(
        std::memcmp(info.data, want.data, static_cast<size_t>(info.nbytes)), 0);
  }
}

TEST(SafetensorsTest, ReadsHandWrittenFiles) {
  // As test/e2e/gen_reference.py writes them: insertion order, metadata last,
  // padded with spaces; and with whitespace, escapes and unsorted data.
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  writeFile(path,
            safetensorsBytes(
                "{ \"w\" : {\"shape\": [2], \"dtype\": \"F32\", "
                "\"data_offsets\": [8, 16]},\n\t\"\\u0062\\/x\": {\"dtype\": "
                "\"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, "
                "\"__metadata__\": {\"format\": \"pt\", \"k\": \"v\"}}   ",
                floatBytes({1, 2, 3, 4})));
  ListPtr list = readSafetensors(path);
  ASSERT_TRUE(list);
  ASSERT_EQ(dlc_tensor_list_size(list.get()), 2);
  dlc_tensor_info info;
  ASSERT_EQ(dlc_tensor_list_get(list.get(), 0, &info), DLC_OK);
  EXPECT_STREQ(info.name, "b/x");
  EXPECT_EQ(static_cast<float *>(info.data)[1], 2.0f);
  ASSERT_EQ(dlc_tensor_list_get(list.get(), 1, &info), DLC_OK);
  EXPECT_STREQ(info.name, "w");
  EXPECT_EQ(static_cast<float *>(info.data)[0], 3.0f);

  // Only metadata, no tensors.
  writeFile(path, safetensorsBytes("{\"__metadata__\":{}}", ""));
  list = readSafetensors(path);
  ASSERT_TRUE(list);
  EXPECT_EQ(dlc_tensor_list_size(list.get()), 0);
  writeFile(path, safetensorsBytes("{}", ""));
  list = readSafetensors(path);
  ASSERT_TRUE(list);
  EXPECT_EQ(dlc_tensor_list_size(list.get()), 0);
}

std::string repeat(const std::string &s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

struct BadHeader {
  const char *name;
  std::string header;
  std::string data;
  const char *message;
};

std::string tensor(const std::string &name, const std::string &dtype,
                   const std::string &shape, uint64_t begin, uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":[" + std::to_string(begin) + "," +
         std::to_string(end) + "]}";
}

TEST(SafetensorsTest, RejectsBadHeaders) {
  const std::string d8(8, '\0'), d16(16, '\0');
  const std::string a = tensor("a", "F32", "[2]", 0, 8);
  const BadHeader cases[] = {
      {"not JSON", "hello", d8, "does not start with '{'"},
      {"truncated JSON", "{\"a\":{\"dtype\":\"F32\"", d8,
       "invalid JSON header"},
      {"trailing comma", "{" + a + ",}", d8, "invalid JSON header"},
      {"trailing data", "{" + a + "} x", d8, "unexpected data after"},
      {"single quotes", "{'a': 1}", d8, "invalid JSON header"},
      {"bad escape", "{\"\\q\":1}", d8, "bad escape"},
      {"control char", "{\"a\nb\":1}", d8, "control character"},
      {"bad UTF-8", "{\"\xff\":1}", d8, "invalid UTF-8"},
      {"lone surrogate", "{\"\\ud800\":1}", d8, "unpaired high surrogate"},
      {"leading zero", "{\"a\":{\"dtype\":\"F32\",\"shape\":[02]}}", d8,
       "leading zero"},
      {"deep nesting",
       "{\"__metadata__\":" + std::string(100, '[') + std::string(100, ']') +
           "}",
       "", "nesting too deep"},
      {"duplicate tensor", "{" + a + "," + a + "}", d8, "duplicate key 'a'"},
      {"unterminated object", "{", "",
       "invalid JSON header: expected a string key"},
      {"tensor not object", "{\"a\":[1]}", d8, "tensor 'a' is an array"},
      {"missing dtype", "{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", d8,
       "tensor 'a': missing key 'dtype'"},
      {"missing shape", "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}",
       d8, "tensor 'a': missing key 'shape'"},
      {"missing offsets", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", d8,
       "tensor 'a': missing key 'data_offsets'"},
      {"extra key",
       "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],"
       "\"x\":1}}",
       d8, "unexpected key 'x'"},
      {"unknown dtype", "{" + tensor("a", "BOOL", "[8]", 0, 8) + "}", d8,
       "unsupported dtype 'BOOL'"},
      {"lowercase dtype", "{" + tensor("a", "f32", "[2]", 0, 8) + "}", d8,
       "unsupported dtype 'f32'"},
      {"dtype not string",
       "{\"a\":{\"dtype\":5,\"shape\":[2],\"data_offsets\":[0,8]}}", d8,
       "'dtype' is a number"},
      {"negative dim", "{" + tensor("a", "F32", "[-2]", 0, 8) + "}", d8,
       "non-negative integers"},
      {"float dim", "{" + tensor("a", "F32", "[2.0]", 0, 8) + "}", d8,
       "non-negative integers"},
      {"rank 9", "{" + tensor("a", "U8", "[1,1,1,1,1,1,1,1,1]", 0, 1) + "}",
       std::string(1, '\0'), "rank 9 exceeds"},
      {"huge shape",
       "{" + tensor("a", "F32", "[4294967296,4294967296]", 0, 8) + "}", d8,
       "too large"},
      {"offsets not pair",
       "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", d8,
       "'data_offsets' must be [begin, end]"},
      {"offsets reversed", "{" + tensor("a", "F32", "[2]", 8, 0) + "}", d8,
       "end before they begin"},
      {"offsets out of range", "{" + tensor("a", "F32", "[2]", 8, 16) + "}", d8,
       "data_offsets [8, 16) out of range (the data section has 8 bytes)"},
      {"offsets beyond uint64",
       "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,"
       "18446744073709551616]}}",
       d8, "'data_offsets' must be"},
      {"size mismatch", "{" + tensor("a", "F32", "[3]", 0, 8) + "}", d8,
       "hold 8 bytes but F32 [3] needs 12"},
      {"overlap",
       "{" + tensor("a", "F32", "[2]", 0, 8) + "," +
           tensor("b", "F32", "[2]", 4, 12) + "}",
       std::string(12, '\0'), "tensors 'a' and 'b' overlap"},
      {"gap",
       "{" + tensor("a", "F32", "[2]", 0, 8) + "," +
           tensor("b", "F32", "[1]", 12, 16) + "}",
       d16, "data bytes [8, 12) belong to no tensor"},
      {"gap at start", "{" + tensor("a", "F32", "[2]", 8, 16) + "}", d16,
       "data bytes [0, 8) belong to no tensor"},
      {"not covering the end", "{" + a + "}", d16,
       "data bytes [8, 16) belong to no tensor"},
      {"metadata not object", "{\"__metadata__\":[]}", "",
       "'__metadata__' is an array"},
      {"metadata value not string", "{\"__metadata__\":{\"a\":1}}", "",
       "'__metadata__' value 'a' is a number"},
      {"empty name", "{" + tensor("", "F32", "[2]", 0, 8) + "}", d8,
       "empty name"},
      // A header of one long array held ~50x its size in memory: 98 MB of
      // "0," took 6.5 GB before it was refused.
      {"array of 65", "{\"__metadata__\":[0" + repeat(",0", 64) + "]}", "",
       "an array of more than 64 items"},
      {"array of a million",
       "{\"__metadata__\":[0" + repeat(",0", 999'999) + "]}", "",
       "an array of more than 64 items"},
  };
  TempDir dir;
  for (const BadHeader &c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.file("bad.safetensors");
    writeFile(path, safetensorsBytes(c.header, c.data));
    dlc_tensor_list *list = nullptr;
    EXPECT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_AUTO, &list),
              DLC_ERR_FORMAT);
    EXPECT_EQ(list, nullptr);
    EXPECT_TRUE(errorContains(c.message)) << dlc_last_error();
    EXPECT_TRUE(errorContains("bad safetensors file '" + path + "'"))
        << dlc_last_error();
  }
}

TEST(SafetensorsTest, RejectsBadLengths) {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  dlc_tensor_list *list = nullptr;

  writeFile(path, "");
  EXPECT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_SAFETENSORS, &list),
            DLC_ERR_FORMAT);
  EXPECT_TRUE(errorContains("the file has 0 bytes, fewer than the 8-byte"));

  writeFile(path, std::string("\x02\0\0\0\0\0\0\0{", 9));
  EXPECT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_SAFETENSORS, &list),
            DLC_ERR_FORMAT);
  EXPECT_TRUE(errorContains("header length 2 exceeds the file size (9 bytes)"));

  // A header length past the 100 MB limit, in a file that has it.
  std::string big(8, '\0');
  uint64_t n = 100'000'001;
  std::memcpy(big.data(), &n, 8);
  big.resize(8 + n, ' ');
  big[8] = '{';
  big[9] = '}';
  writeFile(path, big);
  EXPECT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_SAFETENSORS, &list),
            DLC_ERR_FORMAT);
  EXPECT_TRUE(errorContains("exceeds the limit")) << dlc_last_error();
  EXPECT_EQ(list, nullptr);
}

TEST(SafetensorsTest, WriteRejectsReservedNames) {
  TempDir dir;
  dlc_tensor_list *raw = nullptr;
  ASSERT_EQ(dlc_tensor_list_create(&raw), DLC_OK);
  ListPtr list(raw);
  ASSERT_EQ(dlc_tensor_list_add(list.get(), "__metadata__", DLC_F32, 0, nullptr,
                                nullptr, nullptr),
            DLC_OK);
  EXPECT_EQ(dlc_tensor_file_write(dir.file("x.safetensors").c_str(),
                                  DLC_FILE_AUTO, list.get()),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(dir.list().empty());
}

} // namespace

// A file's tensors are read when used: describe and copy need no copy in the
// list, and a file truncated after its header was read is an error at the
// use, not a SIGBUS through a mapping.
TEST(SafetensorsTest, ReadsTensorsWhenUsed) {
  TempDir dir;
  std::string path = dir.file("lazy.safetensors");
  float a[2] = {1.5f, -2.f}, b[3] = {3.f, 4.f, 5.f};
  std::string data(reinterpret_cast<char *>(a), 8);
  data.append(reinterpret_cast<char *>(b), 12);
  writeFile(path, safetensorsBytes("{" + tensor("a", "F32", "[2]", 0, 8) + "," +
                                       tensor("b", "F32", "[3]", 8, 20) + "}",
                                   data));
  dlc_tensor_list *raw = nullptr;
  ASSERT_EQ(dlc_tensor_file_read(path.c_str(), DLC_FILE_AUTO, &raw), DLC_OK);
  ListPtr list(raw);

  dlc_tensor_info info;
  ASSERT_EQ(dlc_tensor_list_describe(list.get(), 1, &info), DLC_OK);
  EXPECT_STREQ(info.name, "b");
  EXPECT_EQ(info.nbytes, 12);
  EXPECT_EQ(info.data, nullptr); // Still in the file.
  float got[3] = {};
  ASSERT_EQ(dlc_tensor_list_copy(list.get(), 1, got, sizeof(got)), DLC_OK);
  EXPECT_EQ(std::memcmp(got, b, 12), 0);
  ASSERT_EQ(dlc_tensor_list_describe(list.get(), 1, &info), DLC_OK);
  EXPECT_EQ(info.data, nullptr); // The copy kept nothing.
  EXPECT_EQ(dlc_tensor_list_copy(list.get(), 1, got, 8),
            DLC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(errorContains("tensor 'b' has 12 bytes, not 8"));

  ASSERT_EQ(dlc_tensor_list_get(list.get(), 0, &info), DLC_OK);
  ASSERT_NE(info.data, nullptr);
  EXPECT_EQ(std::memcmp(info.data, a, 8), 0);
  ASSERT_EQ(dlc_tensor_list_describe(list.get(), 0, &info), DLC_OK);
  EXPECT_NE(info.data, nullptr); // Read once, kept.

  // Truncated behind the list's back: b can no longer be read.
  ASSERT_EQ(::truncate(path.c_str(), 8 + 8), 0);
  EXPECT_EQ(dlc_tensor_list_get(list.get(), 1, &info), DLC_ERR_IO);
  EXPECT_TRUE(errorContains("the file shrank")) << dlc_last_error();
  EXPECT_EQ(dlc_tensor_list_copy(list.get(), 1, got, sizeof(got)), DLC_ERR_IO);
  // a, read before, is still there.
  ASSERT_EQ(dlc_tensor_list_get(list.get(), 0, &info), DLC_OK);
  EXPECT_EQ(std::memcmp(info.data, a, 8), 0);
}
