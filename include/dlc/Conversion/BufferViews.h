//===- BufferViews.h - Buffers and their views ------------------*- C++ -*-===//
//
// Helpers shared by the passes that reason about bufferized IR (the CPU
// tiling, the CUDA mapping): which values name the same memory.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CONVERSION_BUFFERVIEWS_H
#define DLC_CONVERSION_BUFFERVIEWS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::dlc {

/// `buffer` and every view of it (subviews, casts, reshapes: the results of
/// view-like ops whose source is one of them), transitively.
SmallVector<Value> bufferAndViews(Value buffer);

/// The buffer that `value` is a view of (through view-like ops), or `value`.
Value viewedBuffer(Value value);

/// Slice `i` of dimension 0 of the static memref `buffer`, `[D0, ...]` ->
/// `[...]`, as a rank-reduced memref.subview (a batch of a batched op, a
/// micro-panel of a packed operand).
Value leadingSlice(OpBuilder &b, Location loc, Value buffer, Value i);

} // namespace mlir::dlc

#endif // DLC_CONVERSION_BUFFERVIEWS_H
