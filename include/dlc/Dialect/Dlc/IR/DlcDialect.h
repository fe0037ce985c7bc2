//===- DlcDialect.h - dlc dialect -------------------------------*- C++ -*-===//
#ifndef DLC_DIALECT_DLC_IR_DLCDIALECT_H
#define DLC_DIALECT_DLC_IR_DLCDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "dlc/Dialect/Dlc/IR/DlcOpsDialect.h.inc"

#endif // DLC_DIALECT_DLC_IR_DLCDIALECT_H
