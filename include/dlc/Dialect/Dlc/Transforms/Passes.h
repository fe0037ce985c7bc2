//===- Passes.h - dlc dialect transformation passes -------------*- C++ -*-===//
#ifndef DLC_DIALECT_DLC_TRANSFORMS_PASSES_H
#define DLC_DIALECT_DLC_TRANSFORMS_PASSES_H

#include "dlc/Dialect/Dlc/IR/DlcDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dlc {
#define GEN_PASS_DECL
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

#endif // DLC_DIALECT_DLC_TRANSFORMS_PASSES_H
