//===- omp_shim.cpp - the OpenMP entry points generated code calls --------===//
//
// dlc lowers the parallel loops of a model (the tiles of a matmul) through
// MLIR's OpenMP dialect, which calls the `__kmpc_*` ABI of LLVM's OpenMP
// runtime. libdlcrt implements the few entry points that code uses, on its
// own thread pool, so that a model object links with `-ldlcrt` alone and
// DLC_NUM_THREADS governs every thread the model uses.
//
// The subset is exactly what dlc's code generator emits: one worksharing
// loop with a static schedule per parallel region, whose implicit barrier
// ends the region. Each team member runs once (gtid = its index in the
// team); `__kmpc_fork_call` returns when all have run, which is the barrier
// that matters, so `__kmpc_barrier` has nothing left to wait for.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <cstdarg>
#include <cstdint>

namespace {

using Microtask = void (*)(int32_t *gtid, int32_t *btid, ...);

/// The calling thread's index in its team and the team's size.
thread_local int32_t ThreadIndex = 0;
thread_local int32_t TeamSize = 1;

constexpr int kMaxArgs = 4;

struct Region {
  Microtask task;
  int32_t argc;
  void *args[kMaxArgs];
  int32_t team;
};

void runMember(Region &r, int32_t index) {
  int32_t savedIndex = ThreadIndex, savedTeam = TeamSize;
  ThreadIndex = index;
  TeamSize = r.team;
  int32_t gtid = index, btid = index;
  void **a = r.args;
  switch (r.argc) {
  case 0:
    r.task(&gtid, &btid);
    break;
  case 1:
    r.task(&gtid, &btid, a[0]);
    break;
  case 2:
    r.task(&gtid, &btid, a[0], a[1]);
    break;
  case 3:
    r.task(&gtid, &btid, a[0], a[1], a[2]);
    break;
  default:
    r.task(&gtid, &btid, a[0], a[1], a[2], a[3]);
    break;
  }
  ThreadIndex = savedIndex;
  TeamSize = savedTeam;
}

void runChunk(void *ctx, int64_t begin, int64_t end) {
  auto &r = *static_cast<Region *>(ctx);
  for (int64_t i = begin; i < end; ++i)
    runMember(r, static_cast<int32_t>(i));
}

} // namespace

extern "C" {

DLC_API int32_t __kmpc_global_thread_num(void *) { return ThreadIndex; }

DLC_API void __kmpc_fork_call(void *, int32_t argc, Microtask task, ...) {
  Region r;
  r.task = task;
  r.argc = argc < 0 ? 0 : (argc > kMaxArgs ? kMaxArgs : argc);
  va_list ap;
  va_start(ap, task);
  for (int32_t i = 0; i < r.argc; ++i)
    r.args[i] = va_arg(ap, void *);
  va_end(ap);
  // A region inside a region runs on the calling thread alone.
  r.team = TeamSize > 1 ? 1 : dlc_num_threads();
  if (r.team <= 1) {
    r.team = 1;
    runMember(r, 0);
    return;
  }
  dlc_parallel_for(r.team, runChunk, &r);
}

/// Static schedule: the iterations [*lower, *upper] (inclusive) are split
/// into TeamSize contiguous blocks; member `gtid` gets block `gtid`.
DLC_API void __kmpc_for_static_init_8u(void *, int32_t gtid, int32_t,
                                       int32_t *lastIter, uint64_t *lower,
                                       uint64_t *upper, int64_t *stride,
                                       int64_t incr, int64_t) {
  uint64_t lo = *lower, hi = *upper;
  uint64_t step = incr > 0 ? static_cast<uint64_t>(incr) : 1;
  uint64_t trips = hi >= lo ? (hi - lo) / step + 1 : 0;
  uint64_t team = static_cast<uint64_t>(TeamSize > 0 ? TeamSize : 1);
  uint64_t me = static_cast<uint64_t>(gtid) < team ? gtid : 0;
  uint64_t per = trips / team, extra = trips % team;
  uint64_t first = me * per + (me < extra ? me : extra);
  uint64_t count = per + (me < extra ? 1 : 0);
  if (count == 0) {
    // An empty range: upper below lower.
    *lower = lo + trips * step;
    *upper = *lower - 1;
  } else {
    *lower = lo + first * step;
    *upper = *lower + (count - 1) * step;
  }
  if (lastIter)
    *lastIter = count && first + count == trips;
  if (stride)
    *stride = static_cast<int64_t>(trips * step);
}

DLC_API void __kmpc_for_static_fini(void *, int32_t) {}

/// See the file comment: the only barrier in dlc's regions is the one that
/// ends them, and __kmpc_fork_call joins the team there.
DLC_API void __kmpc_barrier(void *, int32_t) {}

} // extern "C"
