//===- Passes.h - dlc lowering and code generation passes -------*- C++ -*-===//
#ifndef DLC_CONVERSION_PASSES_H
#define DLC_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace affine {
class AffineDialect;
}
namespace arith {
class ArithDialect;
}
namespace bufferization {
class BufferizationDialect;
}
namespace func {
class FuncDialect;
class FuncOp;
} // namespace func
namespace gpu {
class GPUDialect;
}
namespace linalg {
class LinalgDialect;
}
namespace LLVM {
class LLVMDialect;
}
namespace math {
class MathDialect;
}
namespace memref {
class MemRefDialect;
}
namespace scf {
class SCFDialect;
}
namespace tensor {
class TensorDialect;
}
namespace transform {
class TransformDialect;
}
namespace vector {
class VectorDialect;
}
} // namespace mlir

namespace mlir::dlc {
#define GEN_PASS_DECL
#include "dlc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dlc/Conversion/Passes.h.inc"

/// The `dlc.name` of the runtime's CUDA context argument, which
/// dlc-map-to-gpu adds to every CUDA entry.
inline constexpr llvm::StringLiteral kCudaContextName = "cuda_ctx";

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

/// The lanes of a warp: the threads of a point in dlc-map-to-gpu's warp
/// kernels, of a gpu.subgroup_reduce in dlc-lower-warp-reductions and in
/// dlc-emulate-gpu-launches.
inline constexpr int64_t kWarpSize = 32;

/// The CUDA context argument of `func`, or null if it has none.
BlockArgument cudaContextArgument(func::FuncOp func);
} // namespace mlir::dlc

#endif // DLC_CONVERSION_PASSES_H
