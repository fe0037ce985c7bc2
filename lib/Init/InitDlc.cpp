//===- InitDlc.cpp - register what the dlc tools need ---------------------===//
#include "dlc/InitDlc.h"

#include "dlc/Conversion/Bufferization.h"
#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcDialect.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::dlc::registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::dlc::DlcDialect>();
  mlir::dlc::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

void mlir::dlc::registerPasses() {
  mlir::registerAllPasses();
  mlir::dlc::registerDlcTransformsPasses();
  mlir::dlc::registerDlcConversionPasses();
}
