//===- HoistAccumulators.h - accumulators out of the k loop -----*- C++ -*-===//
//
// Part of dlc-tile-and-vectorize: keeps each vectorised register tile's
// accumulator in registers across its k loop where MLIR's own hoisting
// (linalg::hoistRedundantVectorTransfers) gives up.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CONVERSION_CPU_HOISTACCUMULATORS_H
#define DLC_CONVERSION_CPU_HOISTACCUMULATORS_H

#include "mlir/IR/Operation.h"

namespace mlir::dlc {

/// Hoists matching `vector.transfer_read`/`vector.transfer_write` pairs of a
/// memref out of the `scf.for` loops under `root`: the read moves before the
/// loop, the tile becomes an iteration argument, the write moves after it.
///
/// MLIR's hoisting refuses any buffer that a view-like op reads anywhere in
/// the function (a matmul writing a step's slice of a recurrent layer's
/// gates, whose cell reads other slices of it). This one decides from the
/// loop alone: the pair is at loop-invariant indices of a buffer defined
/// outside the loop, the loop runs at least once (static bounds), nothing
/// else in it writes memory, and everything else it reads is a view of
/// another buffer (allocation or function argument).
void hoistAccumulators(Operation *root);

} // namespace mlir::dlc

#endif // DLC_CONVERSION_CPU_HOISTACCUMULATORS_H
