//===- KernelBuilder.h - one linalg op as GPU kernels -----------*- C++ -*-===//
//
// The kernel generation of dlc-map-to-gpu (and of dlc-map-gemms for the
// GEMMs cuBLASLt cannot take), defined in KernelBuilder.cpp: a bufferized
// linalg op becomes a `gpu.launch` of a thread per point of its parallel
// loops, or, for a reduction of many elements per point, of a warp per
// point or per slice of a point (then a second launch combines the slices).
// Each launch carries the annotations that dlc-fuse-kernels reads
// (`dlc.points`, `dlc.lanes`, `dlc.point_map`, `dlc.every_lane`).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_CONVERSION_GPU_KERNELBUILDER_H
#define DLC_LIB_CONVERSION_GPU_KERNELBUILDER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::dlc::gpu_mapping {

/// The scratch buffer (a 0-d device buffer) that holds each scalar computed
/// on the device (a device scalar) that a later kernel reads.
using ScratchBuffers = DenseMap<Value, Value>;

/// Maps the device scalars that the ops about to be cloned into a kernel
/// use to loads of their scratch buffers, at `kb`'s insertion point.
void loadScratch(OpBuilder &kb, IRMapping &mapping,
                 ArrayRef<Operation *> cloned, const ScratchBuffers &scratch);

/// Replaces `op`, a bufferized linalg op of static shape, with its kernels
/// (see KernelBuilder); a named op is generalized first. Scalar operands
/// and values of the payload in `scratch` are read from their scratch
/// buffers. `pass` names the pass in the errors.
LogicalResult mapToKernel(linalg::LinalgOp op, const ScratchBuffers &scratch,
                          StringRef pass);

/// Builds the kernels of one bufferized linalg.generic of static loop
/// ranges and erases it. One thread per point of the parallel loops, the
/// reduction loops running sequentially inside it; or, for a reduction of
/// at least kWarpSize elements per point over few points, a warp per point:
/// each lane combines every 32nd element, `gpu.subgroup_reduce` combines the
/// lanes, and lane 0 combines the result into the output; or, over fewer
/// points of more elements, a warp per slice of a point into a buffer of
/// partials, and a second kernel, a warp per point, combines them.
class KernelBuilder {
public:
  /// `warps`: whether a reduction may run a warp per point (not a small
  /// GEMM's, whose kernel fuses with more neighbours as a thread per
  /// output).
  KernelBuilder(linalg::GenericOp generic, const ScratchBuffers &scratch,
                bool warps);

  /// Builds the kernels and erases the op.
  LogicalResult build();

private:
  /// A launch, the linear index of this thread's unit (a point, or a
  /// slice), its lane (null without a warp per unit) and whether the unit
  /// is in range.
  struct Launch {
    gpu::LaunchOp op;
    Value linear, lane, inRange;
  };
  /// A launch of `count` units (points, or slices) of `lanes` threads
  /// each, 256 threads a block, that tells dlc-fuse-kernels its points
  /// (`pointsAttr`); `kb` at its body's start.
  Launch makeLaunch(int64_t count, ArrayRef<int64_t> pointsAttr);
  /// Each strided operand crosses as the flat buffer under it.
  LogicalResult flattenStridedOperands();

  Value idx(OpBuilder &ob, int64_t v);
  /// Sets the loop dimensions `which` from a linear `index`, the last
  /// dimension fastest.
  void delinearize(Value index, ArrayRef<unsigned> which);
  /// Outside the reduction loops, for the outputs' elements, which do not
  /// move with them: the reduction dimensions at 0.
  void outsideReductionLoops();
  /// The buffer to access for `operand` at the current point, and its
  /// indices there.
  std::pair<Value, SmallVector<Value>> access(OpOperand &operand);
  /// The element of `operand` at a point, as a function of the parallel
  /// loops alone (dlc-fuse-kernels), or null if a reduction loop moves it.
  AffineMapAttr pointMap(OpOperand &operand);
  Value load(OpOperand &operand, bool everyLane);
  void store(Value value, OpOperand &operand);
  /// Maps the payload's arguments but `skip` and those `mapping` has to
  /// the operands at the current point, and clones the payload up to (not
  /// including) `stop`.
  void runPayload(IRMapping &mapping, BlockArgument skip, Operation *stop,
                  bool everyLane);

  /// A thread per point.
  LogicalResult buildThreadPerPoint();
  /// A thread per point whose outputs live in registers through the
  /// reduction loops: read once, carried, written once.
  LogicalResult buildRegisterReduction();

  /// A warp per point.
  LogicalResult buildWarpPerPoint();
  /// A warp per slice of a point, then a warp per point over the slices.
  LogicalResult buildSplitReduction();
  /// This warp's combination of the elements [begin, end) that `range()`
  /// computes (for a unit in range; lane l takes begin + l, begin + l +
  /// 32, ...), `combine(index, into)` combining one of them into `into`
  /// at the insertion point; the identity for a unit out of range.
  Value warpTotal(Value inRange, function_ref<std::pair<Value, Value>()> range,
                  function_ref<Value(Value, Value)> combine);
  /// `into` combined with `value`, an element, a lane's or a slice's.
  Value combineValues(Value into, Value value);
  /// The payload's element at flattened reduction index `e`, combined
  /// into `into`.
  Value combineElement(Value e, Value into);
  Value firstLane(Value lane);
  /// Lane 0 of each point's warp combines `total` into the output.
  void combineIntoOutput(Value point, Value lane, Value inRange, Value total);

  linalg::GenericOp generic;
  const ScratchBuffers &scratch;
  bool warps;
  Location loc;
  /// Before the op, on the host; and in the kernel being built.
  OpBuilder b, kb;
  SmallVector<int64_t> ranges;
  /// The parallel and the reduction loops.
  SmallVector<unsigned> parallel, reduction;
  SmallVector<int64_t> parallelRanges;
  int64_t points = 1, elements = 1;
  /// The op of a reduction a warp shares that combines the output's value
  /// with each element, or null for a thread per point.
  Operation *combiner = nullptr;
  int64_t lanes = 1;
  /// The slices of each point's elements, and the slices' elements (the
  /// last slice's fewer).
  int64_t slices = 1, sliceSize = 0;
  /// The first launch.
  Launch launch;
  /// The loop indices at the current point.
  SmallVector<Value> dims;

  /// A strided view as the flat buffer under it, indexed with its strides
  /// from its offset: a constant, or `dynamicOffset`, read on the host.
  struct Flat {
    Value buffer;
    int64_t offset;
    SmallVector<int64_t> strides;
    Value dynamicOffset = {};
  };
  DenseMap<Value, Flat> flats;

  Block &payload;
  linalg::YieldOp yield;

  /// For a warp per point: the output, its payload argument, whether the
  /// reduction is an any-of, the element the combiner combines, the warp
  /// reduction and its identity.
  OpOperand *init = nullptr;
  BlockArgument acc;
  bool anyOf = false;
  Value element;
  gpu::AllReduceOperation kind;
  double identityValue = 0;
};

} // namespace mlir::dlc::gpu_mapping

#endif // DLC_LIB_CONVERSION_GPU_KERNELBUILDER_H
