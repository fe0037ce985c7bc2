//===- DlcContracts.h - names that cross the compiler's stages --*- C++ -*-===//
//
// The discardable attributes and symbol names by which one stage of dlc
// tells a later one something (docs/architecture.md, "Contracts"): the
// frontends mark the model, its entries and its loss; the training step,
// the memory plan and the CUDA lowering leave facts that the model
// descriptor, the memory report and the object emitter read. Each name is
// written in one place and read through these constants, never as a
// string literal, so that a reader finds every writer and reader with one
// search. Attributes private to one pass (its own markers, removed before
// it ends) stay in that pass.
//
// Only llvm::StringLiteral here: the header is included everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DIALECT_DLC_IR_DLCCONTRACTS_H
#define DLC_DIALECT_DLC_IR_DLCCONTRACTS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::dlc {

//===----------------------------------------------------------------------===//
// Written by the frontends (MLIRGen, the ONNX importer)
//===----------------------------------------------------------------------===//

/// String attribute of the module: the model's name, the prefix of every
/// symbol of its object (`dlc_<model>_<entry>`, `dlc_model_<model>`).
inline constexpr llvm::StringLiteral kModelAttrName = "dlc.model";
/// Unit attribute that marks a func.func as a model entry point.
inline constexpr llvm::StringLiteral kEntryAttrName = "dlc.entry";
/// Argument/result attribute holding the user-visible name.
inline constexpr llvm::StringLiteral kNameAttrName = "dlc.name";
/// Unit attribute of the func.func that computes the model's own loss
/// (`loss` of a .dlc model); dlc-build-train-step calls it, and the entries
/// are lowered without it (dlc-prepare-entries).
inline constexpr llvm::StringLiteral kLossAttrName = "dlc.loss";
/// Dictionary attribute of the module: the model's own optimizer (`optim`
/// of a .dlc model), read by dlc-build-train-step and the descriptor.
inline constexpr llvm::StringLiteral kOptimizerAttrName = "dlc.optimizer";

//===----------------------------------------------------------------------===//
// Written by the dlc-level passes
//===----------------------------------------------------------------------===//

/// Unit attribute that marks the entry built by dlc-build-train-step.
inline constexpr llvm::StringLiteral kTrainStepAttrName = "dlc.train_step";
/// Unit attribute that marks the entry built by dlc-pack-weights, which
/// computes the `#dlc.role<packed>` parameters from the weights; the
/// descriptor's `pack_weights` line, run by the runtime when the weights
/// have changed and hidden from the C API's entries.
inline constexpr llvm::StringLiteral kPackWeightsAttrName = "dlc.pack_weights";
/// A dlc.linear of at most this many rows is lowered to dot products that
/// read the weight in its own [N, K] layout (dlc-lower-to-linalg); above it,
/// the tiled matmul reads the weight as [K, N], which dlc-pack-weights
/// stores once.
inline constexpr int64_t kLinearDotProductRows = 4;
/// Unit attribute on the dlc.fill that seeds the backward pass of a
/// training step (the gradient of the loss with respect to itself).
inline constexpr llvm::StringLiteral kGradSeedAttrName = "dlc.grad_seed";
/// Device attribute (#dlc.device) of an entry, set by dlc-place-devices.
inline constexpr llvm::StringLiteral kDeviceAttrName = "dlc.device";
/// The optimizer state dlc-insert-loss-scaling adds (fp16 training): the
/// dynamic loss scale and its growth tracker.
inline constexpr llvm::StringLiteral kLossScaleStateName =
    "optimizer.loss_scale";
inline constexpr llvm::StringLiteral kGrowthTrackerStateName =
    "optimizer.growth_tracker";

//===----------------------------------------------------------------------===//
// Written by dlc-lower-to-linalg
//===----------------------------------------------------------------------===//

/// Unit attribute of an scf.for whose iterations are independent: each
/// reads and writes only its own slices of the values it threads (a
/// recurrent layer's blocks of batch rows). It survives bufferization, and
/// dlc-parallelize-loops runs such a loop as an scf.forall. A loop on
/// tensors cannot be an scf.forall itself: the canonicalizer drops the
/// shared outputs whose results are unused (a layer's states), and
/// bufferization then copies every write into them.
inline constexpr llvm::StringLiteral kIndependentIterationsAttrName =
    "dlc.independent_iterations";

//===----------------------------------------------------------------------===//
// Written by code generation, read by the model descriptor and the memory
// report (lib/Target/ModelInfo.cpp)
//===----------------------------------------------------------------------===//

/// Integer attribute of an entry: the bytes of its planned workspace
/// (dlc-plan-memory).
inline constexpr llvm::StringLiteral kWorkspaceBytesAttrName =
    "dlc.workspace_bytes";
/// Integer attribute of an entry: the bytes of the buffers dlc-plan-memory
/// placed, before sharing (the memory report's sum of categories).
inline constexpr llvm::StringLiteral kBufferBytesAttrName = "dlc.buffer_bytes";
/// Integer attribute of an entry: the bytes of the 16-bit copies of
/// weights that dlc-tile-and-vectorize packs for mixed-precision matmuls.
inline constexpr llvm::StringLiteral kPackedCastBytesAttrName =
    "dlc.packed_cast_bytes";

//===----------------------------------------------------------------------===//
// The CUDA lowering
//===----------------------------------------------------------------------===//

/// Array attribute of the module: the names of the CUDA kernels in the
/// order of dlc_cuda_launch's kernel index (dlc-lower-gpu-launches).
inline constexpr llvm::StringLiteral kCudaKernelsAttrName = "dlc.cuda_kernels";
/// String attribute of the module: the PTX of every kernel, which
/// dlc-collect-cuda-code takes from the gpu.binary ops for the object.
inline constexpr llvm::StringLiteral kCudaPtxAttrName = "dlc.cuda_ptx";
/// The suffix of a CUDA entry's symbol: `<CPU symbol>_cuda`.
inline constexpr llvm::StringLiteral kCudaEntrySuffix = "_cuda";
/// The `dlc.name` of the runtime's CUDA context argument, which
/// dlc-map-to-gpu adds to every CUDA entry.
inline constexpr llvm::StringLiteral kCudaContextName = "cuda_ctx";
/// The `dlc.name` of the runtime's communicator context argument, which
/// dlc-lower-collectives adds to an entry that reduces over ranks.
inline constexpr llvm::StringLiteral kCommContextName = "comm_ctx";

/// What dlc-map-to-gpu tells dlc-fuse-kernels about a kernel it made: the
/// launch's points (`dlc.points`, the ranges of the parallel loops, point l
/// being l delinearized with the last range fastest; empty for one point),
/// the threads of each point (`dlc.lanes`, a warp's 32 when present, else
/// 1), and on each load and store of an element that is a function of the
/// point alone, that function (`dlc.point_map`); such an access is made by
/// the point's first thread, or by every lane of its warp where it says
/// `dlc.every_lane`.
inline constexpr llvm::StringLiteral kPointsAttrName = "dlc.points";
inline constexpr llvm::StringLiteral kLanesAttrName = "dlc.lanes";
inline constexpr llvm::StringLiteral kPointMapAttrName = "dlc.point_map";
inline constexpr llvm::StringLiteral kEveryLaneAttrName = "dlc.every_lane";

} // namespace mlir::dlc

#endif // DLC_DIALECT_DLC_IR_DLCCONTRACTS_H
