//===- DlcDialect.cpp - dlc dialect registration --------------------------===//
#include "dlc/Dialect/Dlc/IR/DlcDialect.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dlc;

#include "dlc/Dialect/Dlc/IR/DlcEnums.cpp.inc"
#include "dlc/Dialect/Dlc/IR/DlcOpsDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dlc/Dialect/Dlc/IR/DlcAttrs.cpp.inc"

void DlcDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dlc/Dialect/Dlc/IR/DlcAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dlc/Dialect/Dlc/IR/DlcOps.cpp.inc"
      >();
}

std::string mlir::dlc::modelName(ModuleOp module) {
  if (auto name = module->getAttrOfType<StringAttr>(kModelAttrName))
    return name.str();
  if (module.getSymName())
    return module.getSymName()->str();
  return "model";
}

std::string mlir::dlc::entrySymbol(StringRef model, StringRef entry) {
  return ("dlc_" + model + "_" + entry).str();
}
