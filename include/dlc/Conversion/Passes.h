//===- Passes.h - dlc lowering and code generation passes -------*- C++ -*-===//
#ifndef DLC_CONVERSION_PASSES_H
#define DLC_CONVERSION_PASSES_H

#include "dlc/Dialect/Dlc/IR/DlcContracts.h"

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
namespace x86vector {
class X86VectorDialect;
}
} // namespace mlir

namespace mlir::dlc {
#define GEN_PASS_DECL
#include "dlc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dlc/Conversion/Passes.h.inc"

/// The lanes of a warp: the threads of a point in dlc-map-to-gpu's warp
/// kernels, of a gpu.subgroup_reduce in dlc-lower-warp-reductions and in
/// dlc-emulate-gpu-launches.
inline constexpr int64_t kWarpSize = 32;

/// The CUDA context argument of `func`, or null if it has none.
BlockArgument cudaContextArgument(func::FuncOp func);
} // namespace mlir::dlc

#endif // DLC_CONVERSION_PASSES_H
