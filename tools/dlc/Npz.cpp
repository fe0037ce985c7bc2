//===- Npz.cpp - NumPy .npz archives for dlc train ------------------------===//
//
// The zip format as APPNOTE.TXT describes it, as much of it as np.savez and
// np.savez_compressed write: the end-of-central-directory record (and its
// zip64 form), central-directory entries (zip64 extra fields included),
// local headers, and members stored (method 0) or deflated (method 8).
// Every field read is checked against the file's size first; a member's
// CRC-32 is checked after it is read.
//
//===----------------------------------------------------------------------===//

#include "Npz.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/MemoryBuffer.h"

#ifdef DLC_HAVE_ZLIB
#include <zlib.h>
#endif

#include <cstring>
#include <vector>

using namespace llvm;

namespace {

/// Little-endian fields of a byte range, every read bounds-checked.
class Reader {
public:
  explicit Reader(StringRef bytes) : bytes(bytes) {}
  bool has(uint64_t off, uint64_t n) const {
    return off <= bytes.size() && n <= bytes.size() - off;
  }
  uint64_t le(uint64_t off, unsigned n) const {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i)
      v |= uint64_t(uint8_t(bytes[off + i])) << (8 * i);
    return v;
  }
  StringRef bytes;
};

constexpr uint32_t kEocd = 0x06054b50, kEocd64 = 0x06064b50,
                   kLocator64 = 0x07064b50, kCentral = 0x02014b50,
                   kLocal = 0x04034b50;

struct Member {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, size = 0, localOffset = 0;
};

/// The npy dtype string as dlc's dtype.
bool dtypeOf(StringRef descr, dlc_dtype &dt) {
  static const struct {
    const char *descr;
    dlc_dtype dtype;
  } table[] = {{"<f4", DLC_F32}, {"<f2", DLC_F16}, {"<f8", DLC_F64},
               {"<i8", DLC_I64}, {"<i4", DLC_I32}, {"|i1", DLC_I8},
               {"|u1", DLC_U8}};
  for (const auto &t : table)
    if (descr == t.descr) {
      dt = t.dtype;
      return true;
    }
  return false;
}

unsigned sizeOf(dlc_dtype dt) {
  switch (dt) {
  case DLC_F64:
  case DLC_I64:
    return 8;
  case DLC_F32:
  case DLC_I32:
    return 4;
  case DLC_F16:
  case DLC_BF16:
    return 2;
  default:
    return 1;
  }
}

/// The value of `'key':` in a .npy header's dict literal ("" if absent):
/// the text up to the next top-level ',' or '}'.
StringRef headerValue(StringRef header, StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == StringRef::npos)
    return "";
  StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return "";
  rest = rest.ltrim();
  size_t end = 0;
  int depth = 0;
  for (; end < rest.size(); ++end) {
    char c = rest[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  return rest.take_front(end).trim();
}

} // namespace

bool dlc::parseNpy(StringRef bytes, StringRef name, dlc_tensor_list *list,
                   std::string &error) {
  Reader r(bytes);
  if (!r.has(0, 10) || !bytes.starts_with("\x93NUMPY"))
    return error = "not a .npy file", false;
  unsigned major = uint8_t(bytes[6]);
  uint64_t headerLen, dataOff;
  if (major == 1) {
    headerLen = r.le(8, 2);
    dataOff = 10 + headerLen;
  } else if ((major == 2 || major == 3) && r.has(0, 12)) {
    headerLen = r.le(8, 4);
    dataOff = 12 + headerLen;
  } else {
    return error = ".npy format version " + std::to_string(major) +
                   " is not supported (1, 2 and 3 are)",
           false;
  }
  if (!r.has(dataOff - headerLen, headerLen))
    return error = "the .npy header runs past the end", false;
  StringRef header = bytes.substr(dataOff - headerLen, headerLen);
  StringRef descr = headerValue(header, "descr").trim("'\"");
  dlc_dtype dt;
  if (!dtypeOf(descr, dt))
    return error = "dtype '" + descr.str() +
                   "' is not supported (float32, float16, float64, int64, "
                   "int32, int8 and uint8, little-endian)",
           false;
  if (headerValue(header, "fortran_order") != "False")
    return error = "a Fortran-ordered array is not supported (save "
                   "np.ascontiguousarray(a))",
           false;
  StringRef shapeText = headerValue(header, "shape");
  if (!shapeText.consume_front("(") || !shapeText.consume_back(")"))
    return error = "the .npy header has no shape", false;
  SmallVector<int64_t, 8> shape;
  SmallVector<StringRef, 8> dims;
  shapeText.split(dims, ',', -1, /*KeepEmpty=*/false);
  uint64_t numel = 1;
  for (StringRef d : dims) {
    d = d.trim();
    if (d.empty())
      continue;
    uint64_t v;
    if (d.getAsInteger(10, v) || v > (uint64_t(1) << 48))
      return error = "bad dimension '" + d.str() + "' in the .npy header",
             false;
    if (v && numel > (uint64_t(1) << 48) / v)
      return error = "the array is too large", false;
    numel *= v;
    shape.push_back(int64_t(v));
  }
  if (shape.size() > 8)
    return error = "an array of rank " + std::to_string(shape.size()) +
                   " (at most 8)",
           false;
  uint64_t nbytes = numel * sizeOf(dt);
  if (!r.has(dataOff, nbytes))
    return error = "the .npy data is shorter than its shape says", false;
  if (dlc_tensor_list_add(list, name.str().c_str(), dt, int32_t(shape.size()),
                          shape.data(), bytes.data() + dataOff,
                          nullptr) != DLC_OK)
    return error = dlc_last_error(), false;
  return true;
}

static bool inflateRaw(StringRef in, uint64_t size, std::vector<char> &out,
                       std::string &error) {
#ifdef DLC_HAVE_ZLIB
  // Deflate expands its input at most 1032 times (two 1-bit codes per
  // 258-byte match): a larger size is a corrupt header, refused before it
  // is allocated (a fuzzed 75-byte member claimed 1 GiB; a zip64 size of
  // 2^64 - 1 threw from the allocation and aborted).
  if (size / 1032 > in.size() + 1)
    return error = "corrupt archive: " + std::to_string(size) +
                   " bytes cannot inflate from " + std::to_string(in.size()) +
                   " compressed ones",
           false;
  out.resize(size);
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
    return error = "cannot start zlib", false;
  // zlib's counts are 32-bit: feed and drain in pieces.
  uint64_t inDone = 0, outDone = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    uint64_t inChunk = std::min<uint64_t>(in.size() - inDone, 1u << 30);
    uint64_t outChunk = std::min<uint64_t>(size - outDone, 1u << 30);
    z.next_in =
        reinterpret_cast<Bytef *>(const_cast<char *>(in.data())) + inDone;
    z.avail_in = uInt(inChunk);
    z.next_out = reinterpret_cast<Bytef *>(out.data()) + outDone;
    z.avail_out = uInt(outChunk);
    rc = inflate(&z, Z_NO_FLUSH);
    inDone += inChunk - z.avail_in;
    outDone += outChunk - z.avail_out;
    if (rc == Z_OK && inChunk == 0 && outChunk == 0)
      break;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || outDone != size)
    return error = "corrupt deflate data", false;
  return true;
#else
  (void)in;
  (void)size;
  (void)out;
  error = "the array is compressed (np.savez_compressed), and this dlc was "
          "built without zlib; save it with np.savez";
  return false;
#endif
}

bool dlc::readNpz(StringRef path, dlc_tensor_list **out, std::string &error) {
  *out = nullptr;
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error = buffer.getError().message(), false;
  return readNpzBytes((*buffer)->getBuffer(), out, error);
}

bool dlc::readNpzBytes(StringRef bytes, dlc_tensor_list **out,
                       std::string &error) {
  *out = nullptr;
  Reader r(bytes);

  // The end-of-central-directory record: the last 22 bytes, or earlier by
  // the length of a comment (at most 65535 bytes).
  int64_t eocd = -1;
  for (int64_t at = int64_t(bytes.size()) - 22;
       at >= 0 && at >= int64_t(bytes.size()) - 22 - 65535; --at)
    if (r.le(at, 4) == kEocd &&
        uint64_t(at) + 22 + r.le(at + 20, 2) == bytes.size()) {
      eocd = at;
      break;
    }
  if (eocd < 0)
    return error = "not a .npz (zip) archive: no end of central directory "
                   "(np.savez writes one)",
           false;
  uint64_t entries = r.le(eocd + 10, 2), cdSize = r.le(eocd + 12, 4),
           cdOffset = r.le(eocd + 16, 4);
  if (entries == 0xffff || cdSize == 0xffffffff || cdOffset == 0xffffffff) {
    // zip64: the locator just before the record points at the zip64 record.
    if (eocd < 20 || r.le(eocd - 20, 4) != kLocator64)
      return error = "corrupt zip64 archive: no zip64 locator", false;
    uint64_t at = r.le(eocd - 20 + 8, 8);
    if (!r.has(at, 56) || r.le(at, 4) != kEocd64)
      return error = "corrupt zip64 archive: no zip64 end record", false;
    entries = r.le(at + 32, 8);
    cdSize = r.le(at + 40, 8);
    cdOffset = r.le(at + 48, 8);
  }
  if (!r.has(cdOffset, cdSize))
    return error = "corrupt archive: the central directory runs past the end",
           false;

  std::vector<Member> members;
  uint64_t at = cdOffset, end = cdOffset + cdSize;
  for (uint64_t i = 0; i < entries; ++i) {
    if (at + 46 > end || r.le(at, 4) != kCentral)
      return error = "corrupt archive: bad central directory entry " +
                     std::to_string(i),
             false;
    Member m;
    m.method = uint16_t(r.le(at + 10, 2));
    m.crc = uint32_t(r.le(at + 16, 4));
    m.compressed = r.le(at + 20, 4);
    m.size = r.le(at + 24, 4);
    uint64_t nameLen = r.le(at + 28, 2), extraLen = r.le(at + 30, 2),
             commentLen = r.le(at + 32, 2);
    m.localOffset = r.le(at + 42, 4);
    if (at + 46 + nameLen + extraLen + commentLen > end)
      return error = "corrupt archive: a central directory entry runs past "
                     "the directory",
             false;
    m.name = bytes.substr(at + 46, nameLen).str();
    // zip64 extra field (id 1): 8-byte values for the fields above that
    // are 0xffffffff, in this order.
    uint64_t x = at + 46 + nameLen, xEnd = x + extraLen;
    while (x + 4 <= xEnd) {
      uint64_t id = r.le(x, 2), len = r.le(x + 2, 2);
      if (x + 4 + len > xEnd)
        break;
      if (id == 1) {
        uint64_t p = x + 4, pEnd = p + len;
        for (uint64_t *f : {&m.size, &m.compressed, &m.localOffset}) {
          if (*f != 0xffffffff)
            continue;
          if (p + 8 > pEnd)
            return error = "corrupt archive: short zip64 field", false;
          *f = r.le(p, 8);
          p += 8;
        }
      }
      x += 4 + len;
    }
    members.push_back(std::move(m));
    at += 46 + nameLen + extraLen + commentLen;
  }

  dlc_tensor_list *list = nullptr;
  dlc_tensor_list_create(&list);
  auto failWith = [&](const std::string &why) {
    dlc_tensor_list_free(list);
    error = why;
    return false;
  };
  for (const Member &m : members) {
    StringRef name = m.name;
    if (!name.consume_back(".npy"))
      return failWith("member '" + m.name +
                      "' is not an array (.npy): not a NumPy .npz");
    if (!r.has(m.localOffset, 30) || r.le(m.localOffset, 4) != kLocal)
      return failWith("corrupt archive: bad local header of '" + m.name + "'");
    uint64_t dataAt = m.localOffset + 30 + r.le(m.localOffset + 26, 2) +
                      r.le(m.localOffset + 28, 2);
    if (!r.has(dataAt, m.compressed))
      return failWith("corrupt archive: '" + m.name + "' runs past the end");
    StringRef raw = bytes.substr(dataAt, m.compressed);
    std::vector<char> inflated;
    StringRef npy;
    if (m.method == 0) {
      if (m.size != m.compressed)
        return failWith("corrupt archive: stored member '" + m.name +
                        "' has two sizes");
      npy = raw;
    } else if (m.method == 8) {
      std::string why;
      if (!inflateRaw(raw, m.size, inflated, why))
        return failWith("'" + m.name + "': " + why);
      npy = StringRef(inflated.data(), inflated.size());
    } else {
      return failWith("'" + m.name + "' uses zip compression method " +
                      std::to_string(m.method) +
                      " (np.savez stores, np.savez_compressed deflates)");
    }
    if (llvm::crc32(arrayRefFromStringRef(npy)) != m.crc)
      return failWith("corrupt archive: the CRC-32 of '" + m.name +
                      "' does not match");
    std::string why;
    if (!parseNpy(npy, name, list, why))
      return failWith("'" + m.name + "': " + why);
  }
  *out = list;
  return true;
}
