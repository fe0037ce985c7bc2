//===- GemmEpilogues.h - what a cuBLASLt GEMM takes in ----------*- C++ -*-===//
//
// The matchers of dlc-map-gemms (defined in GemmEpilogues.cpp): the loops
// around a GEMM that cuBLASLt's epilogues compute as part of the call (a
// bias, then maybe a ReLU or a tanh GELU; a ReLU's bit mask and the DRELU of
// its gradient; a bias gradient) and the readers that only round its fp32
// result to bf16. Each matcher checks that the GEMM can write and read at its
// own place what the loop wrote and read at its.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_CONVERSION_GPU_GEMMEPILOGUES_H
#define DLC_LIB_CONVERSION_GPU_GEMMEPILOGUES_H

#include "dlc/dlc_cuda_abi.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::dlc::gpu_mapping {

/// What cuBLASLt's epilogue can take over from the elementwise op that
/// follows a GEMM: `op` computes D[i, j] = C[i, j] + bias[j] (or reads C
/// transposed, C[j, i]), then maybe a ReLU or a tanh GELU, all in fp32, and
/// is the only other reader of C.
struct Epilogue {
  linalg::GenericOp op;
  Value bias, out;
  int32_t code = DLC_GEMM_EPILOGUE_BIAS; // or RELU_BIAS or GELU_BIAS
  bool transposed = false;
};

/// The epilogue of a 2-D GEMM `gemm` writing `c` with beta = 0 (`fill`
/// was its zero fill), reading `a` and `b`. An activation only with
/// `activation` (GELU: see isGeluTanh in GemmEpilogues.cpp):
/// cuBLASLt's ReLU makes a NaN 0 where PyTorch (and the CPU code) keep
/// it, which fp16 loss scaling must see. Moves the allocations of the
/// epilogue's output and bias before the GEMM where they come after it.
std::optional<Epilogue> matchEpilogue(Operation *gemm, Value c, Operation *fill,
                                      Value a, Value b, bool activation);

/// A bias gradient that cuBLASLt computes next to the GEMM: `op` sums
/// one of its operands over k into `grad` (zeroed by `fill` just before),
/// in fp32. `ofA`: the operand is A (`grad` has m elements), else B.
struct BiasGrad {
  linalg::GenericOp op;
  linalg::FillOp fill;
  Value grad;
  bool ofA = true;
};

/// The bias gradient of a 2-D fp32 GEMM reading `a` and `b` (the
/// sources of folded transposes, with their flags): a later reduction
/// grad[x] += X[..] whose input X is `a` or `b` and whose reduced
/// dimension is the GEMM's k, into a buffer zeroed just before. Between
/// the two, nothing may write X or touch `grad` (the GEMM reads X and
/// writes `grad` at its own place), and `grad` is none of a, b and `c`.
std::optional<BiasGrad> matchBiasGrad(Operation *gemm, Value a, bool transA,
                                      Value b, bool transB, Value c);

/// A GEMM whose epilogue applies a ReLU's gradient through the bit mask
/// that an earlier GEMM's epilogue wrote (recorded when that one was
/// mapped): the gradient loop it replaces, the mask, and the
/// pre-activation the loop read, which dies with it.
struct ReluGrad {
  linalg::GenericOp op;
  Value mask, pre;
};
using ReluGrads = DenseMap<Operation *, ReluGrad>;

/// The ReLU loop that an epilogue takes over with its output, and the new
/// bit mask buffer (see matchReluMask).
struct ReluMask {
  linalg::GenericOp relu;
  Value out, mask;
};

/// The ReLU of a training step's linear layer, in the forward pass and
/// in the backward pass at once: after `gemm`'s bias epilogue `epi`
/// (writing the pre-activation), a ReLU loop, and later the ReLU's
/// gradient loop (pre > 0 ? g : 0), the pre-activation's only readers;
/// g written last by a later GEMM that `isCublasGemm`. The first GEMM then
/// writes the ReLU's output with cuBLASLt's RELU_AUX_BIAS and a bit mask of
/// where the pre-activation was positive, and the later GEMM's DRELU
/// epilogue applies the gradient through the mask, in place over g: the
/// pre-activation is never stored, and both loops disappear. Where the
/// gradient loop wrote another buffer, its readers read g instead (nothing
/// else may read g's raw product). Returns the ReLU loop and its output,
/// and the new mask; records the gradient in `reluGrads`.
std::optional<ReluMask>
matchReluMask(Operation *gemm, const Epilogue &epi, Value a, Value b,
              function_ref<bool(linalg::LinalgOp)> isCublasGemm,
              ReluGrads &reluGrads);

/// The linalg ops that read a GEMM's fp32 result only to round it to
/// `narrow` (autocast's bf16 copy of a weight gradient, rounded where
/// the optimizer reads it), when nothing else touches the buffer: then
/// cuBLASLt can store the rounded result itself, in half the bytes. The
/// buffer `c` must be a whole allocation, written by `fill` (zeros) and
/// `gemm` alone, and every reader must take it as an input whose block
/// argument has one use, an arith.truncf to `narrow`.
std::optional<SmallVector<linalg::GenericOp>>
roundingReaders(Value c, Operation *gemm, Operation *fill, Type narrow);

/// Gives `readers` (roundingReaders of `c`) the buffer `narrowed` in
/// place of `c`, its element in place of their rounding.
void readNarrowed(ArrayRef<linalg::GenericOp> readers, Value c, Value narrowed);

} // namespace mlir::dlc::gpu_mapping

#endif // DLC_LIB_CONVERSION_GPU_GEMMEPILOGUES_H
