//===- DlcDialect.cpp - dlc dialect registration --------------------------===//
#include "dlc/Dialect/Dlc/IR/DlcDialect.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

using namespace mlir;
using namespace mlir::dlc;

#include "dlc/Dialect/Dlc/IR/DlcOpsDialect.cpp.inc"

void DlcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dlc/Dialect/Dlc/IR/DlcOps.cpp.inc"
      >();
}
