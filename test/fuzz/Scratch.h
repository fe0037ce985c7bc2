//===- Scratch.h - A private directory for fuzz targets that read files ---===//
//
// Targets whose reader takes a path write each input to a file in a
// directory of their own, made once per process under $TMPDIR (or /tmp)
// and removed with its files at exit (a crash leaves it behind).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_FUZZ_SCRATCH_H
#define DLC_TEST_FUZZ_SCRATCH_H

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace dlc::fuzz {

class Scratch {
public:
  /// The path of `name` in the process's directory (made on first use).
  static std::string path(const std::string &name) {
    Scratch &s = get();
    for (const std::string &f : s.files)
      if (f == name)
        return s.dir + "/" + name;
    s.files.push_back(name);
    return s.dir + "/" + name;
  }

  /// Writes `size` bytes to `path`, replacing it; aborts when it cannot.
  static void write(const std::string &path, const void *data, size_t size) {
    // A new file, not the old one truncated: ext4 flushes a file truncated
    // and rewritten when it is closed, a wait of milliseconds per input.
    unlink(path.c_str());
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) {
      std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
      std::abort();
    }
  }

private:
  Scratch() {
    const char *tmp = std::getenv("TMPDIR");
    std::string templ =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/dlc-fuzz.XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      std::perror("fuzz: mkdtemp");
      std::abort();
    }
    dir = buf.data();
  }
  ~Scratch() {
    for (const std::string &f : files)
      unlink((dir + "/" + f).c_str());
    rmdir(dir.c_str());
  }
  static Scratch &get() {
    static Scratch scratch;
    return scratch;
  }

  std::string dir;
  std::vector<std::string> files;
};

} // namespace dlc::fuzz

#endif // DLC_TEST_FUZZ_SCRATCH_H
