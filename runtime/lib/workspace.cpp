//===- workspace.cpp - Scratch memory of generated code -------------------===//
//
// The allocation functions generated code calls for its intermediate tensors
// (finalize-memref-to-llvm with generic functions, renamed dlc_workspace_*
// by the object emitter). A training step allocates the same sizes on every
// call; handing them back to the C library means mmap/munmap and a page
// fault per page on the next call, which costs as much as the arithmetic of
// a small network. Freed blocks are therefore kept in per-size free lists
// and reused, up to a bound on the bytes kept.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <unistd.h>

namespace {

/// Precedes every block's payload (in the `headerBytes` before it).
struct BlockHeader {
  uint64_t capacity;    ///< payload bytes
  uint64_t headerBytes; ///< the payload's offset from the allocation
  uint64_t magic;
};
constexpr uint64_t kMagic = 0x646c6377726b7370ULL; // "dlcwrksp"
constexpr uint64_t kMinAlignment = 64;
static_assert(sizeof(BlockHeader) <= kMinAlignment, "header fits");

uint64_t roundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

class Workspace {
public:
  void *allocate(uint64_t alignment, uint64_t size) {
    if ((alignment & (alignment - 1)) != 0 || size > (uint64_t(1) << 62))
      return nullptr;
    if (alignment < kMinAlignment)
      alignment = kMinAlignment;
    // Size classes: 64 bytes up to 64 KiB, then pages.
    uint64_t capacity = roundUp(size ? size : 1, size <= 65536 ? 64 : 4096);
    uint64_t key = capacity ^ (alignment << 56);
    {
      std::lock_guard<std::mutex> lock(Mutex);
      auto it = Free.find(key);
      if (it != Free.end() && !it->second.empty()) {
        void *p = it->second.back();
        it->second.pop_back();
        Cached -= capacity;
        noteInUse(capacity);
        return p;
      }
    }
    void *base = nullptr;
    if (posix_memalign(&base, alignment, alignment + capacity) != 0)
      return nullptr;
    auto *payload = static_cast<uint8_t *>(base) + alignment;
    auto *h = reinterpret_cast<BlockHeader *>(payload - sizeof(BlockHeader));
    h->capacity = capacity;
    h->headerBytes = alignment;
    h->magic = kMagic;
    std::lock_guard<std::mutex> lock(Mutex);
    noteInUse(capacity);
    return payload;
  }

  void release(void *ptr) {
    if (!ptr)
      return;
    auto *payload = static_cast<uint8_t *>(ptr);
    auto *h = reinterpret_cast<BlockHeader *>(payload - sizeof(BlockHeader));
    if (h->magic != kMagic)
      return; // not ours: leak rather than corrupt the heap
    uint64_t key = h->capacity ^ (h->headerBytes << 56);
    {
      std::lock_guard<std::mutex> lock(Mutex);
      InUse -= static_cast<int64_t>(h->capacity);
      if (Cached + h->capacity <= limit()) {
        Free[key].push_back(ptr);
        Cached += h->capacity;
        return;
      }
    }
    std::free(payload - h->headerBytes);
  }

  ~Workspace() {
    for (auto &kv : Free)
      for (void *p : kv.second) {
        auto *payload = static_cast<uint8_t *>(p);
        auto *h =
            reinterpret_cast<BlockHeader *>(payload - sizeof(BlockHeader));
        std::free(payload - h->headerBytes);
      }
  }

  void usage(int64_t *current, int64_t *peak) {
    std::lock_guard<std::mutex> lock(Mutex);
    if (current)
      *current = InUse;
    if (peak)
      *peak = Peak;
  }

private:
  /// Called with the mutex held.
  void noteInUse(uint64_t bytes) {
    InUse += static_cast<int64_t>(bytes);
    Peak = std::max(Peak, InUse);
  }

  static uint64_t limit() {
    static const uint64_t bytes = [] {
      long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
      if (pages <= 0 || page <= 0)
        return uint64_t(1) << 30;
      return uint64_t(pages) * uint64_t(page) / 2;
    }();
    return bytes;
  }

  std::mutex Mutex;
  std::unordered_map<uint64_t, std::vector<void *>> Free;
  uint64_t Cached = 0;
  int64_t InUse = 0, Peak = 0;
};

Workspace &workspace() {
  static Workspace *w = new Workspace(); // outlives static destructors
  return *w;
}

} // namespace

void *dlc_workspace_aligned_alloc(uint64_t alignment, uint64_t size) {
  try {
    return workspace().allocate(alignment, size);
  } catch (...) {
    return nullptr;
  }
}

void *dlc_workspace_alloc(uint64_t size) {
  return dlc_workspace_aligned_alloc(kMinAlignment, size);
}

void dlc_workspace_usage(int64_t *current, int64_t *peak) {
  try {
    workspace().usage(current, peak);
  } catch (...) {
  }
}

void dlc_workspace_free(void *ptr) {
  try {
    workspace().release(ptr);
  } catch (...) {
  }
}
