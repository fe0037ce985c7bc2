//===- PrepareEntries.cpp - dlc-prepare-entries ---------------------------===//
//
// The first step of lowering: the entries are what an object exports, so
// they take their object symbols (`dlc_<model>_<entry>`, or a suffix for
// the CUDA entries), every other function becomes private and the model's
// own loss function, which the training step has already called, goes.
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCPREPAREENTRIESPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

struct DlcPrepareEntriesPass
    : dlc::impl::DlcPrepareEntriesPassBase<DlcPrepareEntriesPass> {
  using DlcPrepareEntriesPassBase::DlcPrepareEntriesPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string model = modelName(module);
    for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (f->hasAttr(kLossAttrName)) {
        f.erase();
        continue;
      }
      if (!f->hasAttr(kEntryAttrName)) {
        f.setPrivate();
        continue;
      }
      std::string name =
          prefix ? entrySymbol(model, f.getSymName()) : f.getSymName().str();
      f.setSymName(name + suffix);
    }
  }
};

} // namespace
