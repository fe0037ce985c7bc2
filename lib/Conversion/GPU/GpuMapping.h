//===- GpuMapping.h - helpers of the CUDA mapping passes --------*- C++ -*-===//
//
// What dlc-map-gemms and dlc-map-to-gpu share (defined in GpuMapping.cpp):
// the runtime's view of a buffer (a pointer, static strides, a dtype code),
// the runtime functions they declare, the CUDA context argument they give an
// entry, and the questions both ask of a bufferized block (who writes a
// buffer last, is it used in between, is it overwritten before it is read).
// The GEMM epilogues are in GemmEpilogues.h, the kernels in KernelBuilder.h.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_CONVERSION_GPU_GPUMAPPING_H
#define DLC_LIB_CONVERSION_GPU_GPUMAPPING_H

#include "dlc/Conversion/RuntimeCalls.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir::dlc::gpu_mapping {

/// The threads of a block of the kernels (a warp kernel's: 8 warps).
constexpr int64_t kThreadsPerBlock = 256;

using mlir::dlc::addressOf;
using mlir::dlc::dtypeCode;
using mlir::dlc::i32;
using mlir::dlc::i64;

/// A memref the runtime can take as a pointer: static strides, and an
/// offset that is static or, where the caller allows it, ShapedType::
/// kDynamic (a view that a host loop moves, a recurrent layer's step).
struct Strided {
  SmallVector<int64_t> strides;
  int64_t offset = 0;
};

/// `buffer`'s strides and offset, if it is a memref of static shape and
/// strides, and of static offset unless `dynamicOffset` allows a dynamic
/// one.
std::optional<Strided> stridedOf(Value buffer, bool dynamicOffset = false);

/// The address (i64) of `buffer`'s first element, `s` its stridedOf: its
/// dynamic offset, if it has one, is read on the host.
Value addressOfView(OpBuilder &b, Location loc, Value buffer, const Strided &s);

/// The CUDA context argument of an entry, added as its last argument (named
/// `cuda_ctx`, docs/runtime-abi.md) if it has none yet.
FailureOr<Value> addCudaContext(func::FuncOp func);

/// Declares the runtime function `name` with `args` and no results, once
/// per module, for a call in `caller`. The declarations of the runtime's
/// CUDA functions (`dlc_cuda_*`) stay in the order of their first calls
/// over the module's functions, whichever pass declares them: a declaration
/// goes before one that only functions after `caller` call.
func::FuncOp declareRuntimeFunction(ModuleOp module, func::FuncOp caller,
                                    StringRef name, TypeRange args);

/// Whether an op strictly between `from` and `to` (both in one block)
/// uses `buffer` or a view of it; with `writesOnly`, only uses that may
/// write (anything but an input of a linalg op). `except` does not count.
bool usedBetween(Value buffer, Operation *from, Operation *to, bool writesOnly,
                 Operation *except = nullptr);

/// The top-level op that writes `buffer` last before `user`, if it is a
/// `T` and nothing in between touches the buffer.
template <typename T> T producerOf(Value buffer, Operation *user) {
  for (Operation *op = user->getPrevNode(); op; op = op->getPrevNode()) {
    auto producer = dyn_cast<T>(op);
    if (producer &&
        llvm::is_contained(cast<linalg::LinalgOp>(op).getDpsInits(), buffer))
      return usedBetween(buffer, op, user, /*writesOnly=*/false) ? T()
                                                                 : producer;
  }
  return T();
}

/// Whether `op` writes all of `buffer` without reading it or its old value:
/// a fill, or an all-parallel linalg op that writes it through a
/// permutation and neither reads it nor its old value (a transpose, a copy,
/// an elementwise op).
bool overwrites(Operation *op, Value buffer);

/// Whether the first op after `after` that touches `buffer` (one of
/// `users`, top-level ops) overwrites all of it without reading it (see
/// overwrites). The buffer's content after `after` is then dead
/// (bufferization reused it).
bool overwrittenBeforeRead(Value buffer, Operation *after,
                           ArrayRef<Operation *> users);

} // namespace mlir::dlc::gpu_mapping

#endif // DLC_LIB_CONVERSION_GPU_GPUMAPPING_H
