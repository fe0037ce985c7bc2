//===- safetensors.cpp - Reading and writing .safetensors -----------------===//
//
// Layout: an 8-byte little-endian header length N, N bytes of JSON, then the
// data section. The JSON is one object: "__metadata__" (an object of strings)
// and, per tensor, {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}
// with offsets relative to the data section. The tensors must tile the data
// section exactly: no overlap, no gap, nothing after the last one.
//
// The JSON parser is a small, strict RFC 8259 parser (with a depth limit);
// the header is flat, so nothing more is needed.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

using namespace dlc::rt;

namespace {

/// The largest header accepted, as in the reference implementation.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
/// The longest JSON array of a header: the longest valid one is a shape.
constexpr size_t kMaxArrayItems = 64;

//===-- A minimal JSON value and parser ----------------------------------===//

struct JsonValue {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  /// For numbers: whether it is a non-negative integer that fits uint64.
  bool isUInt = false;
  uint64_t uint = 0;
  std::string string;
  std::vector<JsonValue> items;  ///< Array items, or object values.
  std::vector<std::string> keys; ///< Object keys, parallel to items.
};

const char *kindName(JsonValue::Kind kind) {
  switch (kind) {
  case JsonValue::Null:
    return "null";
  case JsonValue::Bool:
    return "a boolean";
  case JsonValue::Number:
    return "a number";
  case JsonValue::String:
    return "a string";
  case JsonValue::Array:
    return "an array";
  case JsonValue::Object:
    return "an object";
  }
  return "?";
}

class JsonParser {
public:
  explicit JsonParser(std::string_view text) : Text(text) {}

  /// Parses one value followed only by whitespace; on failure `err` says
  /// what and where.
  bool parseDocument(JsonValue &value, std::string &err) {
    bool ok = parseValue(value, 0);
    if (ok) {
      skipSpace();
      ok = Pos == Text.size() || error("unexpected data after the JSON value");
    }
    if (!ok)
      err = Error;
    return ok;
  }

private:
  static constexpr int kMaxDepth = 64;

  bool error(const std::string &message) {
    if (Error.empty())
      Error = message + " at byte " + std::to_string(Pos);
    return false;
  }
  bool atEnd() const { return Pos >= Text.size(); }
  char peek() const { return atEnd() ? '\0' : Text[Pos]; }
  void skipSpace() {
    while (!atEnd() && (Text[Pos] == ' ' || Text[Pos] == '\t' ||
                        Text[Pos] == '\n' || Text[Pos] == '\r'))
      ++Pos;
  }
  bool expect(char c) {
    skipSpace();
    if (peek() != c)
      return error(std::string("expected '") + c + "'");
    ++Pos;
    return true;
  }
  bool literal(std::string_view word) {
    if (Text.substr(Pos, word.size()) != word)
      return error("invalid literal");
    Pos += word.size();
    return true;
  }

  bool parseValue(JsonValue &value, int depth);
  bool parseString(std::string &out);
  bool parseHex4(uint32_t &code);
  bool parseNumber(JsonValue &value);
  bool parseArray(JsonValue &value, int depth);
  bool parseObject(JsonValue &value, int depth);

  std::string_view Text;
  size_t Pos = 0;
  std::string Error;
};

bool JsonParser::parseValue(JsonValue &value, int depth) {
  if (depth > kMaxDepth)
    return error("nesting too deep");
  skipSpace();
  switch (peek()) {
  case '{':
    return parseObject(value, depth + 1);
  case '[':
    return parseArray(value, depth + 1);
  case '"':
    value.kind = JsonValue::String;
    return parseString(value.string);
  case 't':
    value.kind = JsonValue::Bool;
    value.boolean = true;
    return literal("true");
  case 'f':
    value.kind = JsonValue::Bool;
    return literal("false");
  case 'n':
    value.kind = JsonValue::Null;
    return literal("null");
  default:
    if (peek() == '-' || (peek() >= '0' && peek() <= '9'))
      return parseNumber(value);
    return atEnd() ? error("unexpected end of JSON")
                   : error("unexpected character");
  }
}

bool JsonParser::parseHex4(uint32_t &code) {
  if (Text.size() - Pos < 4)
    return error("truncated \\u escape");
  code = 0;
  for (int i = 0; i < 4; ++i) {
    char c = Text[Pos++];
    code <<= 4;
    if (c >= '0' && c <= '9')
      code |= static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      code |= static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      code |= static_cast<uint32_t>(c - 'A' + 10);
    else
      return error("bad \\u escape");
  }
  return true;
}

void appendUtf8(std::string &out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xc0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xe0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  }
}

/// The length of the valid UTF-8 sequence starting at s[0] (of at most n
/// bytes), or 0 when it is invalid (overlong, surrogate, > U+10FFFF).
size_t utf8SequenceLength(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  uint32_t code;
  if (c < 0x80)
    return 1;
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    code = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    code = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    code = c & 0x07;
  } else {
    return 0;
  }
  if (n < len)
    return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    code = (code << 6) | (s[i] & 0x3f);
  }
  static const uint32_t minCode[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < minCode[len] || code > 0x10ffff ||
      (code >= 0xd800 && code <= 0xdfff))
    return 0;
  return len;
}

bool JsonParser::parseString(std::string &out) {
  ++Pos; // '"'
  out.clear();
  while (true) {
    if (atEnd())
      return error("unterminated string");
    auto c = static_cast<unsigned char>(Text[Pos]);
    if (c == '"') {
      ++Pos;
      return true;
    }
    if (c < 0x20)
      return error("control character in string");
    if (c != '\\') {
      size_t len = utf8SequenceLength(
          reinterpret_cast<const unsigned char *>(Text.data()) + Pos,
          Text.size() - Pos);
      if (len == 0)
        return error("invalid UTF-8 in string");
      out.append(Text.data() + Pos, len);
      Pos += len;
      continue;
    }
    ++Pos;
    if (atEnd())
      return error("unterminated string");
    char escape = Text[Pos++];
    switch (escape) {
    case '"':
    case '\\':
    case '/':
      out += escape;
      break;
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'n':
      out += '\n';
      break;
    case 'r':
      out += '\r';
      break;
    case 't':
      out += '\t';
      break;
    case 'u': {
      uint32_t code;
      if (!parseHex4(code))
        return false;
      if (code >= 0xdc00 && code <= 0xdfff)
        return error("unpaired low surrogate in \\u escape");
      if (code >= 0xd800 && code <= 0xdbff) {
        uint32_t low;
        if (Text.substr(Pos, 2) != "\\u")
          return error("unpaired high surrogate in \\u escape");
        Pos += 2;
        if (!parseHex4(low))
          return false;
        if (low < 0xdc00 || low > 0xdfff)
          return error("unpaired high surrogate in \\u escape");
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
      }
      appendUtf8(out, code);
      break;
    }
    default:
      return error("bad escape in string");
    }
  }
}

bool JsonParser::parseNumber(JsonValue &value) {
  value.kind = JsonValue::Number;
  bool negative = peek() == '-';
  if (negative)
    ++Pos;
  auto digits = [&] {
    size_t from = Pos;
    while (!atEnd() && Text[Pos] >= '0' && Text[Pos] <= '9')
      ++Pos;
    return Pos - from;
  };
  size_t intStart = Pos;
  size_t intDigits = digits();
  if (intDigits == 0)
    return error("bad number");
  if (intDigits > 1 && Text[intStart] == '0')
    return error("bad number (leading zero)");
  bool isInteger = true;
  if (peek() == '.') {
    ++Pos;
    if (digits() == 0)
      return error("bad number");
    isInteger = false;
  }
  if (peek() == 'e' || peek() == 'E') {
    ++Pos;
    if (peek() == '+' || peek() == '-')
      ++Pos;
    if (digits() == 0)
      return error("bad number");
    isInteger = false;
  }
  if (isInteger && !negative) {
    auto [end, ec] = std::from_chars(
        Text.data() + intStart, Text.data() + intStart + intDigits, value.uint);
    value.isUInt =
        ec == std::errc() && end == Text.data() + intStart + intDigits;
  }
  return true;
}

bool JsonParser::parseArray(JsonValue &value, int depth) {
  value.kind = JsonValue::Array;
  ++Pos; // '['
  skipSpace();
  if (peek() == ']') {
    ++Pos;
    return true;
  }
  while (true) {
    // A header's arrays are shapes and offset pairs: a long one is refused
    // before it is held (a value takes ~100 bytes, its text 2).
    if (value.items.size() == kMaxArrayItems)
      return error("an array of more than " + std::to_string(kMaxArrayItems) +
                   " items (a shape has at most " +
                   std::to_string(DLC_MAX_RANK) + " dimensions)");
    value.items.emplace_back();
    if (!parseValue(value.items.back(), depth))
      return false;
    skipSpace();
    if (peek() == ',') {
      ++Pos;
      continue;
    }
    return expect(']');
  }
}

bool JsonParser::parseObject(JsonValue &value, int depth) {
  value.kind = JsonValue::Object;
  ++Pos; // '{'
  skipSpace();
  if (peek() == '}') {
    ++Pos;
    return true;
  }
  std::set<std::string> seen;
  while (true) {
    skipSpace();
    if (peek() != '"')
      return error("expected a string key");
    std::string key;
    size_t keyPos = Pos;
    if (!parseString(key))
      return false;
    if (!seen.insert(key).second) {
      Pos = keyPos;
      return error("duplicate key " + quote(key));
    }
    if (!expect(':'))
      return false;
    value.keys.push_back(std::move(key));
    value.items.emplace_back();
    if (!parseValue(value.items.back(), depth))
      return false;
    skipSpace();
    if (peek() == ',') {
      ++Pos;
      continue;
    }
    return expect('}');
  }
}

//===-- Header validation ------------------------------------------------===//

uint64_t readLE64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

void writeLE64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}

class HeaderValidator {
public:
  HeaderValidator(const char *path, uint64_t dataSize)
      : Path(path), DataSize(dataSize) {}

  dlc_status validate(const JsonValue &root,
                      std::vector<SafetensorsEntry> &entries);

private:
  dlc_status error(const std::string &message) {
    return fail(DLC_ERR_FORMAT,
                "bad safetensors file " + quote(Path) + ": " + message);
  }
  dlc_status validateMetadata(const JsonValue &value);
  dlc_status validateTensor(const std::string &name, const JsonValue &value,
                            SafetensorsEntry &entry);
  dlc_status validateLayout(std::vector<SafetensorsEntry> &entries);

  const char *Path;
  uint64_t DataSize;
};

dlc_status HeaderValidator::validateMetadata(const JsonValue &value) {
  if (value.kind != JsonValue::Object)
    return error("'__metadata__' is " + std::string(kindName(value.kind)) +
                 ", not an object");
  for (size_t i = 0; i < value.items.size(); ++i)
    if (value.items[i].kind != JsonValue::String)
      return error("'__metadata__' value " + quote(value.keys[i]) + " is " +
                   kindName(value.items[i].kind) + ", not a string");
  return DLC_OK;
}

dlc_status HeaderValidator::validateTensor(const std::string &name,
                                           const JsonValue &value,
                                           SafetensorsEntry &entry) {
  std::string tensor = "tensor " + quote(name);
  if (name.empty())
    return error("a tensor has an empty name");
  if (value.kind != JsonValue::Object)
    return error(tensor + " is " + kindName(value.kind) + ", not an object");

  const JsonValue *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
  for (size_t i = 0; i < value.items.size(); ++i) {
    const std::string &key = value.keys[i];
    if (key == "dtype")
      dtype = &value.items[i];
    else if (key == "shape")
      shape = &value.items[i];
    else if (key == "data_offsets")
      offsets = &value.items[i];
    else
      return error(tensor + ": unexpected key " + quote(key));
  }
  if (!dtype)
    return error(tensor + ": missing key 'dtype'");
  if (!shape)
    return error(tensor + ": missing key 'shape'");
  if (!offsets)
    return error(tensor + ": missing key 'data_offsets'");

  entry.decl.name = name;
  if (dtype->kind != JsonValue::String)
    return error(tensor + ": 'dtype' is " + kindName(dtype->kind) +
                 ", not a string");
  if (!parseSafetensorsDType(dtype->string, entry.decl.dtype))
    return error(tensor + ": unsupported dtype " + quote(dtype->string) +
                 " (supported: F32 F16 BF16 F64 I64 I32 I8 U8)");

  if (shape->kind != JsonValue::Array)
    return error(tensor + ": 'shape' is " + kindName(shape->kind) +
                 ", not an array");
  if (shape->items.size() > DLC_MAX_RANK)
    return error(tensor + ": rank " + std::to_string(shape->items.size()) +
                 " exceeds the maximum of " + std::to_string(DLC_MAX_RANK));
  for (const JsonValue &dim : shape->items) {
    if (!dim.isUInt || dim.uint > static_cast<uint64_t>(kMaxBytes))
      return error(tensor + ": 'shape' must hold non-negative integers");
    entry.decl.shape.push_back(static_cast<int64_t>(dim.uint));
  }
  std::string err;
  if (!computeSize(entry.decl.shape.data(), entry.decl.shape.size(),
                   entry.decl.dtype, entry.decl.numel, entry.decl.nbytes, err))
    return error(tensor + ": " + err);

  if (offsets->kind != JsonValue::Array || offsets->items.size() != 2 ||
      !offsets->items[0].isUInt || !offsets->items[1].isUInt)
    return error(tensor +
                 ": 'data_offsets' must be [begin, end], two non-negative "
                 "integers");
  entry.begin = offsets->items[0].uint;
  entry.end = offsets->items[1].uint;
  std::string range = "[" + std::to_string(entry.begin) + ", " +
                      std::to_string(entry.end) + ")";
  if (entry.begin > entry.end)
    return error(tensor + ": data_offsets " + range + " end before they begin");
  if (entry.end > DataSize)
    return error(tensor + ": data_offsets " + range +
                 " out of range (the data section has " +
                 std::to_string(DataSize) + " bytes)");
  if (entry.end - entry.begin != static_cast<uint64_t>(entry.decl.nbytes))
    return error(tensor + ": data_offsets " + range + " hold " +
                 std::to_string(entry.end - entry.begin) + " bytes but " +
                 safetensorsDTypeName(entry.decl.dtype) + " " +
                 shapeString(entry.decl.shape.data(), entry.decl.shape.size()) +
                 " needs " + std::to_string(entry.decl.nbytes));
  return DLC_OK;
}

dlc_status
HeaderValidator::validateLayout(std::vector<SafetensorsEntry> &entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const SafetensorsEntry &a, const SafetensorsEntry &b) {
                     return a.begin != b.begin ? a.begin < b.begin
                                               : a.end < b.end;
                   });
  // Overlaps first: they are the more telling error.
  for (size_t i = 1; i < entries.size(); ++i)
    if (entries[i].begin < entries[i - 1].end)
      return error("tensors " + quote(entries[i - 1].decl.name) + " and " +
                   quote(entries[i].decl.name) + " overlap");
  uint64_t covered = 0;
  for (const SafetensorsEntry &entry : entries) {
    if (entry.begin > covered)
      return error("data bytes [" + std::to_string(covered) + ", " +
                   std::to_string(entry.begin) +
                   ") belong to no tensor (offsets must cover the data "
                   "section without gaps)");
    covered = entry.end;
  }
  if (covered != DataSize)
    return error("data bytes [" + std::to_string(covered) + ", " +
                 std::to_string(DataSize) +
                 ") belong to no tensor (offsets must cover the data section "
                 "without gaps)");
  return DLC_OK;
}

dlc_status HeaderValidator::validate(const JsonValue &root,
                                     std::vector<SafetensorsEntry> &entries) {
  if (root.kind != JsonValue::Object)
    return error("the header is " + std::string(kindName(root.kind)) +
                 ", not a JSON object");
  entries.clear();
  entries.reserve(root.items.size());
  for (size_t i = 0; i < root.items.size(); ++i) {
    if (root.keys[i] == "__metadata__") {
      if (dlc_status s = validateMetadata(root.items[i]))
        return s;
      continue;
    }
    entries.emplace_back();
    if (dlc_status s =
            validateTensor(root.keys[i], root.items[i], entries.back()))
      return s;
  }
  return validateLayout(entries);
}

//===-- Writing ----------------------------------------------------------===//

void appendJsonString(std::string &out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

} // namespace

dlc_status dlc::rt::parseSafetensors(const char *path, const uint8_t *file,
                                     size_t size,
                                     std::vector<SafetensorsEntry> &entries,
                                     size_t &dataStart) {
  auto error = [&](const std::string &message) {
    return fail(DLC_ERR_FORMAT,
                "bad safetensors file " + quote(path) + ": " + message);
  };
  if (size < 8)
    return error("the file has " + std::to_string(size) +
                 " bytes, fewer than the 8-byte header length");
  uint64_t headerBytes = readLE64(file);
  if (headerBytes > size - 8)
    return error("header length " + std::to_string(headerBytes) +
                 " exceeds the file size (" + std::to_string(size) + " bytes)");
  if (headerBytes > kMaxHeaderBytes)
    return error("header length " + std::to_string(headerBytes) +
                 " exceeds the limit of " + std::to_string(kMaxHeaderBytes));
  std::string_view header(reinterpret_cast<const char *>(file) + 8,
                          static_cast<size_t>(headerBytes));
  if (header.empty() || header[0] != '{')
    return error("the header does not start with '{'");

  JsonValue root;
  std::string err;
  if (!JsonParser(header).parseDocument(root, err))
    return error("invalid JSON header: " + err);

  dataStart = 8 + static_cast<size_t>(headerBytes);
  return HeaderValidator(path, size - dataStart).validate(root, entries);
}

dlc_status dlc::rt::writeSafetensors(const char *path,
                                     std::vector<TensorRef> tensors) {
  std::sort(tensors.begin(), tensors.end(),
            [](const TensorRef &a, const TensorRef &b) {
              return a.decl->name < b.decl->name;
            });
  for (size_t i = 1; i < tensors.size(); ++i)
    if (tensors[i - 1].decl->name == tensors[i].decl->name)
      return fail(DLC_ERR_INVALID_ARGUMENT,
                  "two tensors are called " + quote(tensors[i].decl->name));

  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  uint64_t offset = 0;
  for (const TensorRef &t : tensors) {
    const TensorDecl &decl = *t.decl;
    if (decl.name.empty() || decl.name == "__metadata__")
      return fail(DLC_ERR_INVALID_ARGUMENT, "cannot write a tensor called " +
                                                quote(decl.name) +
                                                " to a safetensors file");
    header += ',';
    appendJsonString(header, decl.name);
    header += ":{\"dtype\":\"";
    header += safetensorsDTypeName(decl.dtype);
    header += "\",\"shape\":[";
    for (size_t i = 0; i < decl.shape.size(); ++i) {
      if (i)
        header += ',';
      header += std::to_string(decl.shape[i]);
    }
    header += "],\"data_offsets\":[";
    header += std::to_string(offset) + ',';
    offset += static_cast<uint64_t>(decl.nbytes);
    header += std::to_string(offset) + "]}";
  }
  header += '}';
  // Pad with spaces so that the data section starts 8-byte aligned, as the
  // reference implementation does.
  header.append((8 - header.size() % 8) % 8, ' ');

  uint8_t length[8];
  writeLE64(length, header.size());
  std::vector<Chunk> chunks;
  chunks.reserve(tensors.size() + 2);
  chunks.push_back({length, sizeof(length)});
  chunks.push_back({header.data(), header.size()});
  for (const TensorRef &t : tensors)
    chunks.push_back({t.data, static_cast<size_t>(t.decl->nbytes)});
  return writeFileAtomic(path, chunks);
}
