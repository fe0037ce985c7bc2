//===- ReleasePages.h - Hand read pages back to the kernel -----*- C++ -*-===//
//
// Large weights are read from a mapped file once (to scan or to write them)
// and then not needed again while compiling; releasing their pages keeps
// the compiler's resident set far below the model's size.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_RELEASEPAGES_H
#define DLC_SUPPORT_RELEASEPAGES_H

#include "llvm/Support/Process.h"

#include <cstddef>
#include <cstdint>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace dlc {

/// Asks the kernel to reclaim the whole pages inside [data, data + size)
/// now (MADV_PAGEOUT): a mapped file's clean pages leave the process's
/// resident set and are read again if touched. Only a hint: memory of any
/// other kind keeps its contents, so it is safe on any buffer.
inline void releasePages(const char *data, size_t size) {
#if defined(__linux__)
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
  uintptr_t page = uintptr_t(llvm::sys::Process::getPageSizeEstimate());
  uintptr_t begin = (uintptr_t(data) + page - 1) & ~(page - 1);
  uintptr_t end = (uintptr_t(data) + size) & ~(page - 1);
  if (end > begin)
    (void)::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_PAGEOUT);
#else
  (void)data;
  (void)size;
#endif
}

} // namespace dlc

#endif // DLC_SUPPORT_RELEASEPAGES_H
