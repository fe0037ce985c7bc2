//===- npy.cpp - Reading and writing .npy ---------------------------------===//
//
// NumPy's format (numpy/lib/format.py): the magic "\x93NUMPY", a major and
// minor version byte, the header length (2 bytes little-endian for version
// 1.0, 4 bytes for 2.0 and 3.0), then the header: the repr of a Python dict
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, padded with
// spaces and ended with '\n'. The data follows, exactly numel * itemsize
// bytes.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <charconv>
#include <cstring>

using namespace dlc::rt;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;

struct NpyDType {
  dlc_dtype dtype;
  const char *descr;
};

constexpr NpyDType NpyDTypes[] = {
    {DLC_F32, "<f4"}, {DLC_F16, "<f2"}, {DLC_F64, "<f8"}, {DLC_I64, "<i8"},
    {DLC_I32, "<i4"}, {DLC_I8, "|i1"},  {DLC_U8, "|u1"},
};

/// A parser for the small subset of Python literals npy headers use.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : Text(text) {}

  bool parse(std::string &descr, bool &fortranOrder,
             std::vector<int64_t> &shape, std::string &err);

private:
  bool error(const std::string &message) {
    if (Error.empty())
      Error = message;
    return false;
  }
  void skipSpace() {
    while (Pos < Text.size() && (Text[Pos] == ' ' || Text[Pos] == '\t' ||
                                 Text[Pos] == '\n' || Text[Pos] == '\r'))
      ++Pos;
  }
  bool consume(char c) {
    skipSpace();
    if (Pos < Text.size() && Text[Pos] == c) {
      ++Pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out);
  bool parseBool(bool &out);
  bool parseShape(std::vector<int64_t> &shape);

  std::string_view Text;
  size_t Pos = 0;
  std::string Error;
};

bool HeaderParser::parseString(std::string &out) {
  skipSpace();
  if (Pos >= Text.size() || (Text[Pos] != '\'' && Text[Pos] != '"'))
    return error("expected a string");
  char q = Text[Pos++];
  size_t end = Text.find(q, Pos);
  if (end == std::string_view::npos)
    return error("unterminated string");
  out = std::string(Text.substr(Pos, end - Pos));
  if (out.find('\\') != std::string::npos)
    return error("unexpected escape in string");
  Pos = end + 1;
  return true;
}

bool HeaderParser::parseBool(bool &out) {
  skipSpace();
  for (bool value : {true, false}) {
    std::string_view word = value ? "True" : "False";
    if (Text.substr(Pos, word.size()) == word) {
      Pos += word.size();
      out = value;
      return true;
    }
  }
  return error("expected True or False");
}

bool HeaderParser::parseShape(std::vector<int64_t> &shape) {
  shape.clear();
  if (!consume('('))
    return error("'shape' is not a tuple");
  bool trailingComma = false;
  while (!consume(')')) {
    if (!shape.empty() && !trailingComma)
      return error("expected ',' or ')' in 'shape'");
    skipSpace();
    size_t start = Pos;
    while (Pos < Text.size() && Text[Pos] >= '0' && Text[Pos] <= '9')
      ++Pos;
    int64_t dim = 0;
    auto [end, ec] =
        std::from_chars(Text.data() + start, Text.data() + Pos, dim);
    if (Pos == start || ec != std::errc() || end != Text.data() + Pos)
      return error("'shape' must hold non-negative integers");
    if (shape.size() == DLC_MAX_RANK)
      return error("'shape' has more than " + std::to_string(DLC_MAX_RANK) +
                   " dimensions");
    shape.push_back(dim);
    trailingComma = consume(',');
  }
  // In Python, "(3)" is the integer 3: a one-element tuple needs a comma.
  if (shape.size() == 1 && !trailingComma)
    return error("'shape' is not a tuple");
  return true;
}

bool HeaderParser::parse(std::string &descr, bool &fortranOrder,
                         std::vector<int64_t> &shape, std::string &err) {
  bool haveDescr = false, haveOrder = false, haveShape = false;
  bool ok = [&] {
    if (!consume('{'))
      return error("the header is not a Python dict");
    bool first = true;
    while (!consume('}')) {
      if (!first && !consume(','))
        return error("expected ',' or '}'");
      first = false;
      if (consume('}'))
        break; // A trailing comma.
      std::string key;
      if (!parseString(key))
        return false;
      if (!consume(':'))
        return error("expected ':' after " + quote(key));
      bool duplicate;
      if (key == "descr") {
        duplicate = haveDescr;
        haveDescr = true;
        if (!parseString(descr))
          return false;
      } else if (key == "fortran_order") {
        duplicate = haveOrder;
        haveOrder = true;
        if (!parseBool(fortranOrder))
          return false;
      } else if (key == "shape") {
        duplicate = haveShape;
        haveShape = true;
        if (!parseShape(shape))
          return false;
      } else {
        return error("unexpected key " + quote(key));
      }
      if (duplicate)
        return error("duplicate key " + quote(key));
    }
    skipSpace();
    if (Pos != Text.size())
      return error("unexpected data after the dict");
    if (!haveDescr || !haveOrder || !haveShape)
      return error(std::string("missing key ") + (!haveDescr ? "'descr'"
                                                  : !haveOrder
                                                      ? "'fortran_order'"
                                                      : "'shape'"));
    return true;
  }();
  if (!ok)
    err = Error;
  return ok;
}

std::string shapeRepr(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ',';
  s += ')';
  return s;
}

} // namespace

dlc_status dlc::rt::parseNpy(const char *path, const uint8_t *file, size_t size,
                             TensorDecl &decl, size_t &dataStart) {
  auto error = [&](const std::string &message) {
    return fail(DLC_ERR_FORMAT, "bad npy file " + quote(path) + ": " + message);
  };
  if (size < kMagicBytes + 4 || std::memcmp(file, kMagic, kMagicBytes) != 0)
    return error("no npy magic (\\x93NUMPY)");
  uint8_t major = file[6], minor = file[7];
  size_t headerBytes, headerStart;
  if (major == 1 && minor == 0) {
    headerBytes = file[8] | static_cast<size_t>(file[9]) << 8;
    headerStart = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (size < 12)
      return error("truncated header");
    headerBytes = file[8] | static_cast<size_t>(file[9]) << 8 |
                  static_cast<size_t>(file[10]) << 16 |
                  static_cast<size_t>(file[11]) << 24;
    headerStart = 12;
  } else {
    return error("unsupported format version " + std::to_string(major) + "." +
                 std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  if (headerBytes > size - headerStart)
    return error("header length " + std::to_string(headerBytes) +
                 " exceeds the file size (" + std::to_string(size) + " bytes)");

  std::string_view header(reinterpret_cast<const char *>(file) + headerStart,
                          headerBytes);
  std::string descr, err;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  if (!HeaderParser(header).parse(descr, fortranOrder, shape, err))
    return error("bad header: " + err);
  if (fortranOrder)
    return error("fortran_order is True; only C-order arrays are supported "
                 "(save np.ascontiguousarray(a))");
  const NpyDType *found = nullptr;
  for (const NpyDType &d : NpyDTypes)
    if (descr == d.descr)
      found = &d;
  if (!found)
    return error("unsupported dtype " + quote(descr) +
                 " (supported: <f4 <f2 <f8 <i8 <i4 |i1 |u1)");

  decl.dtype = found->dtype;
  decl.shape = std::move(shape);
  if (!computeSize(decl.shape.data(), decl.shape.size(), decl.dtype, decl.numel,
                   decl.nbytes, err))
    return error(err);
  dataStart = headerStart + headerBytes;
  uint64_t dataBytes = size - dataStart;
  if (dataBytes != static_cast<uint64_t>(decl.nbytes))
    return error("the data has " + std::to_string(dataBytes) + " bytes but " +
                 descr + " " +
                 shapeString(decl.shape.data(), decl.shape.size()) + " needs " +
                 std::to_string(decl.nbytes));
  return DLC_OK;
}

dlc_status dlc::rt::writeNpy(const char *path, const TensorRef &tensor) {
  const TensorDecl &decl = *tensor.decl;
  const NpyDType *found = nullptr;
  for (const NpyDType &d : NpyDTypes)
    if (decl.dtype == d.dtype)
      found = &d;
  if (!found)
    return fail(DLC_ERR_INVALID_ARGUMENT,
                std::string("npy has no ") + dtypeName(decl.dtype) +
                    " dtype; cannot write tensor " + quote(decl.name) + " to " +
                    quote(path));

  std::string header =
      std::string("{'descr': '") + found->descr +
      "', 'fortran_order': False, 'shape': " + shapeRepr(decl.shape) + ", }";
  // Pad with spaces and a final '\n' so that the data starts 64-byte
  // aligned, as NumPy does. With at most 8 dimensions the header is far
  // below version 1.0's limit of 65535 bytes.
  constexpr size_t kPrefixBytes = 10;
  size_t total = kPrefixBytes + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  uint8_t prefix[kPrefixBytes];
  std::memcpy(prefix, kMagic, kMagicBytes);
  prefix[6] = 1; // Version 1.0.
  prefix[7] = 0;
  prefix[8] = static_cast<uint8_t>(header.size());
  prefix[9] = static_cast<uint8_t>(header.size() >> 8);
  return writeFileAtomic(path,
                         {{prefix, sizeof(prefix)},
                          {header.data(), header.size()},
                          {tensor.data, static_cast<size_t>(decl.nbytes)}});
}
