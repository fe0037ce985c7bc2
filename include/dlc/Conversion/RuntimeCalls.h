//===- RuntimeCalls.h - arguments of calls into libdlcrt --------*- C++ -*-===//
//
// What a pass that emits calls of libdlcrt's functions for generated code
// (docs/runtime-abi.md: the CUDA functions, the communicator's) passes them:
// buffers as addresses, dtype codes and integer constants.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CONVERSION_RUNTIMECALLS_H
#define DLC_CONVERSION_RUNTIMECALLS_H

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::dlc {

/// The dlc_dtype code of a floating-point element type (dlc/dlc_runtime.h):
/// f32, f16 or bf16.
std::optional<int32_t> dtypeCode(Type t);

/// The address of `buffer`'s element `offset`, as i64.
Value addressOf(OpBuilder &b, Location loc, Value buffer, int64_t offset);

/// An i64 constant.
Value i64(OpBuilder &b, Location loc, int64_t v);

/// An i32 constant.
Value i32(OpBuilder &b, Location loc, int64_t v);

} // namespace mlir::dlc

#endif // DLC_CONVERSION_RUNTIMECALLS_H
