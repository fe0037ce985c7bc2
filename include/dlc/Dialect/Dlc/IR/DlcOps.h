//===- DlcOps.h - dlc dialect operations ------------------------*- C++ -*-===//
#ifndef DLC_DIALECT_DLC_IR_DLCOPS_H
#define DLC_DIALECT_DLC_IR_DLCOPS_H

#include "dlc/Dialect/Dlc/IR/DlcContracts.h"
#include "dlc/Dialect/Dlc/IR/DlcDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dlc/Dialect/Dlc/IR/DlcEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "dlc/Dialect/Dlc/IR/DlcAttrs.h.inc"

#include "dlc/Dialect/Dlc/IR/DlcInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dlc/Dialect/Dlc/IR/DlcOps.h.inc"

namespace mlir::dlc {

/// The model's name (kModelAttrName, else the module's symbol name, else
/// "model"): the prefix of every symbol of its object.
std::string modelName(ModuleOp module);

/// The symbol of a model's entry in its object: `dlc_<model>_<entry>`.
std::string entrySymbol(llvm::StringRef model, llvm::StringRef entry);

/// The name dlc uses for an element type everywhere (model format,
/// descriptor, header, messages): f32, f16, bf16, f64, i64, i32, i8; ""
/// for a type dlc does not support.
llvm::StringRef elementTypeName(Type type);

/// The bytes of a ranked tensor type's elements (16-bit floats at 2); 0
/// for any other type.
int64_t tensorBytes(Type type);

/// Whether a function writes parameters (`dlc.assign`, or the optimizer's
/// in-place update): a training step, whose calls run alone and whose
/// reads of the weights cannot be computed ahead.
bool writesParameters(Operation *function);

/// `x` when `value` is `dlc.transpose %x [1, 0]` (a matrix transpose: how
/// dlc-pack-weights hands a layer the weight it stores as [K, N]), else
/// null.
Value matrixTransposeInput(Value value);

/// The device `value` lives on: the `device` of a dlc.transfer, else the
/// `dlc.device` attribute of the op that defines it (of the function
/// argument, for an entry block argument). std::nullopt when unplaced.
std::optional<Device> deviceOf(Value value);

/// Whether an op on `user` can read a value that lives on `owner` without
/// a transfer: the same device, or host and cpu (one memory).
bool sharesMemory(Device owner, Device user);

/// The elements of one rank's shard of a tensor of `elements` elements
/// sharded over `ranks` ranks: ceil(elements / ranks) (dlc.reduce_scatter).
int64_t shardElements(int64_t elements, int64_t ranks);

/// The largest kernel, stride, dilation or padding a convolution or pool
/// accepts. Every window computation from these and a tensor dimension then
/// fits in int64_t, so user input cannot make it overflow.
constexpr int64_t kMaxWindowAttr = int64_t(1) << 30;

/// The size of a convolution's or pool's result along one spatial dimension
/// of size `in` (floor mode):
/// floor((in + padBefore + padAfter - dilation * (kernel - 1) - 1) / stride)
/// + 1, or 0 when the window does not fit the padded input or a term
/// overflows. The arguments must be positive (the paddings non-negative).
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                         int64_t padBefore, int64_t padAfter, int64_t dilation);
} // namespace mlir::dlc

#endif // DLC_DIALECT_DLC_IR_DLCOPS_H
