//===- DlcOps.h - dlc dialect operations ------------------------*- C++ -*-===//
#ifndef DLC_DIALECT_DLC_IR_DLCOPS_H
#define DLC_DIALECT_DLC_IR_DLCOPS_H

#include "dlc/Dialect/Dlc/IR/DlcDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dlc/Dialect/Dlc/IR/DlcOps.h.inc"

namespace mlir::dlc {
/// Name of the unit attribute that marks a func.func as a model entry point.
inline constexpr llvm::StringLiteral kEntryAttrName = "dlc.entry";
/// Name of the argument/result attribute holding the user-visible name.
inline constexpr llvm::StringLiteral kNameAttrName = "dlc.name";

/// The name dlc uses for an element type everywhere (model format,
/// descriptor, header, messages): f32, f16, bf16, f64, i64, i32, i8; ""
/// for a type dlc does not support.
llvm::StringRef elementTypeName(Type type);
} // namespace mlir::dlc

#endif // DLC_DIALECT_DLC_IR_DLCOPS_H
