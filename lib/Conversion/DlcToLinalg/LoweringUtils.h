//===- LoweringUtils.h - helpers of dlc-lower-to-linalg ---------*- C++ -*-===//
//
// The builders that every lowering of dlc-lower-to-linalg is made of (defined
// in LoweringUtils.cpp), shared by the files that lower one op family each
// (Contractions.cpp, Elementwise.cpp, Normalization.cpp, Reductions.cpp,
// Losses.cpp, Optimizer.cpp, Convolution.cpp, Pooling.cpp, DataMovement.cpp,
// Recurrent.cpp), and the hooks that add those files' patterns to the pass
// (DlcToLinalg.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_CONVERSION_DLCTOLINALG_LOWERINGUTILS_H
#define DLC_LIB_CONVERSION_DLCTOLINALG_LOWERINGUTILS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <cstdint>

namespace mlir::dlc {
enum class Activation : uint32_t; // DlcAttrs.td
} // namespace mlir::dlc

namespace mlir::dlc::lowering {

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

RankedTensorType tensorTy(Value v);
/// A scalar float constant of type `ty`.
Value floatConst(OpBuilder &b, Location loc, Type ty, double v);
/// The accumulator type of a contraction: fp32 for 16-bit operands.
Type accumulatorType(OpBuilder &b, Type elem);
/// `v` converted to the float type `to` (extended or rounded).
Value convertFloat(OpBuilder &b, Location loc, Value v, Type to);
/// `v` with its elements converted to the float type `elem`.
Value convertTensor(OpBuilder &b, Location loc, Value v, Type elem);
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType ty);
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType ty,
                   double value);
/// The map reading an operand of `shape` broadcast (NumPy rules) into an
/// iteration space of `resultShape`.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape);
/// An elementwise linalg.generic producing `resultTy` from `inputs` (which
/// broadcast into it); 16-bit floats compute in fp32.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultTy,
                  ValueRange inputs, BodyFn body);
/// A reduction linalg.generic over `dims` of the iteration space `space`.
/// `inputs` all have the iteration space's shape or broadcast into it (a
/// reduced-away operand like a row maximum is read through its map in
/// `inputMaps`). `combine(acc, inputs...)` returns the new accumulator,
/// which starts at `initValue`. The result drops the reduced dimensions (or
/// keeps them with size 1 when `keepdim`).
Value reduce(
    OpBuilder &b, Location loc, ArrayRef<int64_t> space, ArrayRef<int64_t> dims,
    bool keepdim, ValueRange inputs, ArrayRef<AffineMap> inputMaps, Type elemTy,
    double initValue,
    function_ref<Value(OpBuilder &, Location, Value, ValueRange)> combine);
/// The dimensions 0 .. n-1 (all of a rank-n tensor, or its leading ones).
SmallVector<int64_t> allDims(int64_t n);
/// The map reading a tensor that has the iteration space minus `dim` (a row
/// statistic) from an iteration space of `rank` loops.
AffineMap dropDimMap(MLIRContext *ctx, int64_t rank, int64_t dim);
/// The sum of `x` over `dims`.
Value sumOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims,
              bool keepdim);
/// Row-major reshape between static shapes, as views.
Value reshapeTo(OpBuilder &b, Location loc, Value v, RankedTensorType to);
/// Applies an activation (`none`, `relu`, ...) to one element.
Value applyActivation(OpBuilder &b, Location loc, Activation act, Value x);
/// Multiplies every element of `v` by `factor`.
Value scale(OpBuilder &b, Location loc, Value v, double factor);
/// Row maximum and sum(exp(x - max)) along `dim` of `x`; both drop `dim`.
/// With `exps`, the exponentials are computed once into a tensor of `x`'s
/// shape, returned there, and summed from it.
std::pair<Value, Value> maxAndSumExp(OpBuilder &b, Location loc, Value x,
                                     int64_t dim, Value *exps = nullptr);

/// A tensor of `ty` holding `x` placed along each dimension d at
/// offset[d], every stride[d] (negative: backwards), from x's element
/// first[d], at most count[d] elements; `value` elsewhere. One
/// linalg.generic whose body reads x at guarded, computed indices (a
/// tensor.pad or strided tensor.insert_slice would bufferize to a strided
/// memref.copy, which needs the MLIR C runtime's memrefCopy). Dimensions
/// that x fills whole and in place are read unguarded. DataMovement.cpp.
Value placeWindow(OpBuilder &b, Location loc, Value x, RankedTensorType ty,
                  ArrayRef<int64_t> offset, ArrayRef<int64_t> stride,
                  ArrayRef<int64_t> first, ArrayRef<int64_t> count,
                  double value);

/// `x` [N, C, H, W] padded with `value` by `padding` [top, left, bottom,
/// right] (`x` itself when there is no padding).
Value padImage(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> padding,
               double value);

/// Patterns of Contractions.cpp (linear layers, matmuls, attention).
void populateContractionLoweringPatterns(RewritePatternSet &patterns);
/// Patterns of Elementwise.cpp (arithmetic, activations, fills, scales,
/// broadcasts, activation gradients, casts).
void populateElementwiseLoweringPatterns(RewritePatternSet &patterns);
/// Patterns of Normalization.cpp (softmaxes, layer and batch norm, the layer
/// norm's gradient).
void populateNormalizationLoweringPatterns(RewritePatternSet &patterns);
/// Patterns of Reductions.cpp (sum, mean, max, min, the extrema's gradient).
void populateReductionLoweringPatterns(RewritePatternSet &patterns);
/// Patterns of Losses.cpp (MSE, cross entropy and its gradient).
void populateLossLoweringPatterns(RewritePatternSet &patterns);
/// Patterns of Optimizer.cpp (the optimizer update, the loss scale).
void populateOptimizerLoweringPatterns(RewritePatternSet &patterns);
/// Patterns of Convolution.cpp (dlc.conv2d and its gradients).
void populateConvolutionLoweringPatterns(RewritePatternSet &patterns);
/// Patterns of Pooling.cpp (max and average pooling and their gradients).
void populatePoolingLoweringPatterns(RewritePatternSet &patterns);
/// Patterns of Recurrent.cpp (the LSTM and the GRU and their
/// backpropagation through time), whose steps run in up to `maxRowBlocks`
/// parallel blocks of batch rows.
void populateRecurrentLoweringPatterns(RewritePatternSet &patterns,
                                       int64_t maxRowBlocks);
/// Patterns of DataMovement.cpp (reshape, transpose, transfer, concat,
/// slice, gather, masks and their gradients).
void populateDataMovementLoweringPatterns(RewritePatternSet &patterns);

} // namespace mlir::dlc::lowering

#endif // DLC_LIB_CONVERSION_DLCTOLINALG_LOWERINGUTILS_H
