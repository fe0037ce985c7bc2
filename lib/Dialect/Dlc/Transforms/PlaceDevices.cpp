//===- PlaceDevices.cpp - dlc-place-devices -------------------------------===//
//
// Puts every op of every entry point on the compute device and inserts the
// host-boundary transfers. See Passes.td; the checks themselves live in the
// dialect (DlcDevices.cpp), so hand-written placements are verified too.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"
#include "dlc/Dialect/Dlc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCPLACEDEVICESPASS
#include "dlc/Dialect/Dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

struct DlcPlaceDevicesPass
    : dlc::impl::DlcPlaceDevicesPassBase<DlcPlaceDevicesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Device> compute = symbolizeDevice(device);
    if (!compute || *compute == Device::host) {
      module.emitError("dlc-place-devices: unknown compute device '")
          << device << "'; expected 'cpu' or 'cuda'";
      return signalPassFailure();
    }
    auto computeAttr = DeviceAttr::get(&getContext(), *compute);
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kEntryAttrName) && failed(place(func, computeAttr)))
        return signalPassFailure();
    for (auto param : module.getOps<ParameterOp>())
      param->setAttr(kDeviceAttrName, computeAttr);
    // The placement must satisfy the dialect's device checks.
    if (failed(verify(module)))
      return signalPassFailure();
  }

  LogicalResult place(func::FuncOp func, DeviceAttr compute) {
    if (func.isExternal())
      return func.emitOpError("entry point has no body");
    Block &body = func.front();
    WalkResult placed = func.walk([](Operation *op) {
      return isa<TransferOp>(op) || op->hasAttr(kDeviceAttrName)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (placed.wasInterrupted())
      return func.emitOpError("is already placed on devices")
             << "; hint: run dlc-place-devices once, on an unplaced module";

    auto host = DeviceAttr::get(&getContext(), Device::host);
    bool copies = !sharesMemory(Device::host, compute.getValue());
    OpBuilder b(&getContext());

    // Every op of the entry runs on the compute device.
    func.walk([&](Operation *op) {
      if (op != func && !isa<func::ReturnOp>(op))
        op->setAttr(kDeviceAttrName, compute);
    });

    // Inputs arrive in host memory; one transfer each to the device.
    b.setInsertionPointToStart(&body);
    for (BlockArgument arg : body.getArguments()) {
      func.setArgAttr(arg.getArgNumber(), kDeviceAttrName, host);
      if (!copies || arg.use_empty())
        continue;
      auto moved = TransferOp::create(b, arg.getLoc(), arg, compute);
      arg.replaceAllUsesExcept(moved, moved);
    }

    // Results go back to the host, one transfer each, before the return.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      func.setResultAttr(operand.getOperandNumber(), kDeviceAttrName, host);
      if (copies)
        operand.set(TransferOp::create(b, ret.getLoc(), operand.get(), host));
    }
    return success();
  }
};

} // namespace
