//===- file.cpp - Reading whole files and writing them atomically ---------===//

#include "internal.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
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
  /// Takes `fd` in place of the descriptor held (closed if open).
  void reset(int fd) {
    if (Fd >= 0)
      ::close(Fd);
    Fd = fd;
  }
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

/// The directory part of `path`: "." when it has none, "/" for the root.
std::string parentDirectory(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "."
         : slash == 0               ? "/"
                                    : path.substr(0, slash);
}

/// fsyncs the directory holding `path` so that a rename into it is durable.
/// Best effort: errors are ignored.
void syncParentDirectory(const std::string &path) {
  std::string dir = parentDirectory(path);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
}

} // namespace

FileData::~FileData() {
  release();
  if (Fd >= 0)
    ::close(Fd);
}

void FileData::release() {
  if (Mapping)
    ::munmap(Mapping, Size);
  Mapping = nullptr;
  Data = nullptr;
  std::vector<uint8_t>().swap(Buffer);
}

void FileData::copyOut(void *dst, const uint8_t *src, size_t n) const {
  constexpr size_t kChunk = size_t(16) << 20;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  for (size_t done = 0; done < n; done += kChunk) {
    size_t k = std::min(kChunk, n - done);
    std::memcpy(static_cast<uint8_t *>(dst) + done, src + done, k);
    if (!Mapping)
      continue;
    // The whole pages inside the chunk; a page shared with the next chunk
    // stays until the mapping goes.
    uintptr_t begin =
        (reinterpret_cast<uintptr_t>(src + done) + page - 1) & ~(page - 1);
    uintptr_t end = reinterpret_cast<uintptr_t>(src + done + k) & ~(page - 1);
    if (end > begin)
      (void)::madvise(reinterpret_cast<void *>(begin), end - begin,
                      MADV_DONTNEED);
  }
}

dlc_status FileData::readAt(uint64_t offset, void *dst, size_t n) const {
  auto *out = static_cast<uint8_t *>(dst);
  size_t done = 0;
  while (done < n) {
    ssize_t got =
        ::pread(Fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return fail(DLC_ERR_IO, "cannot read " + Name + ": " + errnoText(errno));
    if (got == 0)
      return fail(DLC_ERR_IO, "cannot read " + Name +
                                  ": the file shrank since it was opened");
    done += static_cast<size_t>(got);
  }
  return DLC_OK;
}

dlc_status FileData::open(const char *path, const char *what) {
  std::string name = std::string(what) + " " + quote(path);
  Name = name;
  Fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return fail(DLC_ERR_IO, "cannot open " + name + ": " + errnoText(errno));
  struct stat st;
  if (::fstat(Fd, &st) != 0)
    return fail(DLC_ERR_IO, "cannot stat " + name + ": " + errnoText(errno));
  if (!S_ISREG(st.st_mode))
    return fail(DLC_ERR_IO, "cannot read " + name + ": not a regular file");
  if (st.st_size == 0)
    return DLC_OK;
  Size = static_cast<size_t>(st.st_size);

  void *map = ::mmap(nullptr, Size, PROT_READ, MAP_PRIVATE, Fd, 0);
  if (map != MAP_FAILED) {
    Mapping = map;
    Data = static_cast<const uint8_t *>(map);
    return DLC_OK;
  }

  // Some file systems cannot be mapped: read the file instead.
  Buffer.resize(Size);
  size_t done = 0;
  while (done < Size) {
    ssize_t n = ::read(Fd, Buffer.data() + done, Size - done);
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

namespace {

/// The file a write to `path` replaces: `path` itself, or the file at the
/// end of its chain of symbolic links (which need not exist yet), so that a
/// save through a link updates the link's target and keeps the link.
std::string resolveLinks(std::string path) {
  for (int depth = 0; depth < 40; ++depth) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
      return path;
    std::string link(PATH_MAX, '\0');
    ssize_t n = ::readlink(path.c_str(), link.data(), link.size());
    if (n <= 0 || size_t(n) >= link.size())
      return path;
    link.resize(size_t(n));
    path = link[0] == '/' ? link : parentDirectory(path) + "/" + link;
  }
  return path;
}

/// Writes every chunk to the open file `fd`.
bool writeChunks(int fd, const std::vector<Chunk> &chunks) {
  for (const Chunk &chunk : chunks)
    if (!writeAll(fd, chunk.data, chunk.size))
      return false;
  return true;
}

/// A temporary name next to `target`, unique to this process and call
/// (threads of one process saving to one path get distinct names), short
/// enough for the file-name limit whatever the length of target's name.
std::string temporaryName(const std::string &target) {
  static std::atomic<uint64_t> counter{0};
  std::string dir = parentDirectory(target);
  size_t slash = target.rfind('/');
  std::string base =
      slash == std::string::npos ? target : target.substr(slash + 1);
  if (base.size() > 160)
    base.resize(160);
  return (dir == "/" ? "" : dir) + "/." + base + ".tmp." +
         std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

} // namespace

dlc_status dlc::rt::writeFileAtomic(const char *path,
                                    const std::vector<Chunk> &chunks) {
  std::string target = resolveLinks(path);

  // Device nodes, pipes and other special files are written through: there
  // is nothing to replace atomically, and replacing them would be wrong.
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    FdGuard fd(::open(target.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0)
      return fail(DLC_ERR_IO,
                  "cannot open " + quote(target) + ": " + errnoText(errno));
    if (!writeChunks(fd.get(), chunks))
      return fail(DLC_ERR_IO,
                  "cannot write " + quote(target) + ": " + errnoText(errno));
    if (fd.close() != 0)
      return fail(DLC_ERR_IO,
                  "cannot close " + quote(target) + ": " + errnoText(errno));
    return DLC_OK;
  }

  // Regular files: an unnamed file in the target's directory, linked under
  // a temporary name only once it is complete and on disk, then renamed
  // over the target. A process killed while writing leaves nothing behind.
  // Where the file system has no unnamed files, the temporary is named
  // from the start and removed on every failure.
  std::string dir = parentDirectory(target);
  std::string tmp = temporaryName(target);
  bool unnamed = true;
#ifdef O_TMPFILE
  FdGuard fd(::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666));
#else
  FdGuard fd(-1);
  errno = EOPNOTSUPP;
#endif
  if (fd.get() < 0) {
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
      return fail(DLC_ERR_IO,
                  "cannot create " + quote(target) + ": " + errnoText(errno));
    unnamed = false;
    fd.reset(
        ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (fd.get() < 0)
      return fail(DLC_ERR_IO,
                  "cannot create " + quote(tmp) + ": " + errnoText(errno));
  }

  bool linked = !unnamed;
  auto failAndRemove = [&](const char *step, const std::string &what) {
    int err = errno;
    if (fd.get() >= 0)
      fd.close();
    if (linked)
      ::unlink(tmp.c_str());
    return fail(DLC_ERR_IO, std::string("cannot ") + step + " " + quote(what) +
                                ": " + errnoText(err));
  };

  if (!writeChunks(fd.get(), chunks))
    return failAndRemove("write", target);
  if (::fsync(fd.get()) != 0)
    return failAndRemove("fsync", target);
  if (unnamed) {
    // The file gets its temporary name: through /proc (any user), or with
    // AT_EMPTY_PATH where /proc is not mounted (needs CAP_DAC_READ_SEARCH).
    std::string self = "/proc/self/fd/" + std::to_string(fd.get());
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(),
                 AT_SYMLINK_FOLLOW) != 0 &&
        ::linkat(fd.get(), "", AT_FDCWD, tmp.c_str(), AT_EMPTY_PATH) != 0)
      return failAndRemove("link", tmp);
    linked = true;
  }
  if (fd.close() != 0)
    return failAndRemove("close", tmp);
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return fail(DLC_ERR_IO, "cannot rename " + quote(tmp) + " to " +
                                quote(target) + ": " + errnoText(err));
  }
  syncParentDirectory(target);
  return DLC_OK;
}
