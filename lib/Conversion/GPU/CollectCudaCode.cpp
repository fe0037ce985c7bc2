//===- CollectCudaCode.cpp - dlc-collect-cuda-code ------------------------===//
//
// The end of the kernels' compilation: their PTX, which
// gpu-module-to-binary left in gpu.binary ops, moves into the module's
// `dlc.cuda_ptx` attribute for the object emitter, and the host side is an
// ordinary module again. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dlc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCCOLLECTCUDACODEPASS
#include "dlc/Conversion/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

struct DlcCollectCudaCodePass
    : dlc::impl::DlcCollectCudaCodePassBase<DlcCollectCudaCodePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string ptx;
    for (auto binary :
         llvm::make_early_inc_range(module.getOps<gpu::BinaryOp>())) {
      for (Attribute object : binary.getObjects())
        ptx += cast<gpu::ObjectAttr>(object).getObject().getValue().str();
      binary.erase();
    }
    module->setAttr(kCudaPtxAttrName, StringAttr::get(&getContext(), ptx));
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
