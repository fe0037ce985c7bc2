//===- file.cpp - Reading whole files and writing them atomically ---------===//

#include "internal.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace dlc::rt;

namespace {

// strerror_r comes in a GNU flavour (returns the text) and an XSI flavour
// (fills the buffer); these overloads accept either.
[[maybe_unused]] const char *strerrorResult(const char *text, const char *) {
  return text;
}
[[maybe_unused]] const char *strerrorResult(int rc, const char *buf) {
  return rc == 0 ? buf : "unknown error";
}

std::string errnoText(int err) {
  char buf[256] = {0};
  return strerrorResult(strerror_r(err, buf, sizeof(buf)), buf);
}

/// Closes a file descriptor when it goes out of scope.
class FdGuard {
public:
  explicit FdGuard(int fd) : Fd(fd) {}
  FdGuard(const FdGuard &) = delete;
  FdGuard &operator=(const FdGuard &) = delete;
  ~FdGuard() {
    if (Fd >= 0)
      ::close(Fd);
  }
  int get() const { return Fd; }
  /// Closes now and returns close's result (0 or -1 with errno).
  int close() {
    int fd = Fd;
    Fd = -1;
    return ::close(fd);
  }

private:
  int Fd;
};

bool writeAll(int fd, const void *data, size_t size) {
  const auto *p = static_cast<const uint8_t *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// fsyncs the directory holding `path` so that a rename into it is durable.
/// Best effort: errors are ignored.
void syncParentDirectory(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "."
                    : slash == 0               ? "/"
                                               : path.substr(0, slash);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
}

} // namespace

FileData::~FileData() {
  if (Mapping)
    ::munmap(Mapping, Size);
}

dlc_status FileData::open(const char *path, const char *what) {
  std::string name = std::string(what) + " " + quote(path);
  FdGuard fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    return fail(DLC_ERR_IO, "cannot open " + name + ": " + errnoText(errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return fail(DLC_ERR_IO, "cannot stat " + name + ": " + errnoText(errno));
  if (!S_ISREG(st.st_mode))
    return fail(DLC_ERR_IO, "cannot read " + name + ": not a regular file");
  if (st.st_size == 0)
    return DLC_OK;
  Size = static_cast<size_t>(st.st_size);

  void *map = ::mmap(nullptr, Size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (map != MAP_FAILED) {
    Mapping = map;
    Data = static_cast<const uint8_t *>(map);
    return DLC_OK;
  }

  // Some file systems cannot be mapped: read the file instead.
  Buffer.resize(Size);
  size_t done = 0;
  while (done < Size) {
    ssize_t n = ::read(fd.get(), Buffer.data() + done, Size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(DLC_ERR_IO, "cannot read " + name + ": " + errnoText(errno));
    if (n == 0)
      return fail(DLC_ERR_IO,
                  "cannot read " + name + ": the file shrank while being read");
    done += static_cast<size_t>(n);
  }
  Data = Buffer.data();
  return DLC_OK;
}

dlc_status dlc::rt::writeFileAtomic(const char *path,
                                    const std::vector<Chunk> &chunks) {
  std::string target = path;
  std::string tmp = target + ".tmp." + std::to_string(::getpid());
  FdGuard fd(
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (fd.get() < 0)
    return fail(DLC_ERR_IO,
                "cannot create " + quote(tmp) + ": " + errnoText(errno));

  auto failAndRemove = [&](const char *step) {
    int err = errno;
    if (fd.get() >= 0)
      fd.close();
    ::unlink(tmp.c_str());
    return fail(DLC_ERR_IO, std::string("cannot ") + step + " " + quote(tmp) +
                                ": " + errnoText(err));
  };

  for (const Chunk &chunk : chunks)
    if (!writeAll(fd.get(), chunk.data, chunk.size))
      return failAndRemove("write");
  if (::fsync(fd.get()) != 0)
    return failAndRemove("fsync");
  if (fd.close() != 0)
    return failAndRemove("close");
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return fail(DLC_ERR_IO, "cannot rename " + quote(tmp) + " to " +
                                quote(target) + ": " + errnoText(err));
  }
  syncParentDirectory(target);
  return DLC_OK;
}
