//===- dlc-opt.cpp - pass-level driver for lit tests ----------------------===//
#include "dlc/InitDlc.h"
#include "dlc/Target/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::dlc::registerDialects(registry);
  mlir::dlc::registerPasses();
  mlir::dlc::registerPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dlc pass driver\n", registry));
}
