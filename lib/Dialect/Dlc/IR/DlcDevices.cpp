//===- DlcDevices.cpp - device placement checks ---------------------------===//
//
// The device of a value and the dialect's verification of the `dlc.device`
// attribute: an op may only read values that live in memory its device can
// read. This is the compile-time form of PyTorch's "Expected all tensors to
// be on the same device" error.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Dlc/IR/DlcOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::dlc;

std::optional<Device> mlir::dlc::deviceOf(Value value) {
  if (auto result = dyn_cast<OpResult>(value)) {
    Operation *def = result.getOwner();
    if (auto transfer = dyn_cast<TransferOp>(def))
      return transfer.getDevice();
    if (auto attr = def->getAttrOfType<DeviceAttr>(kDeviceAttrName))
      return attr.getValue();
    return std::nullopt;
  }
  auto arg = cast<BlockArgument>(value);
  Operation *parent = arg.getOwner()->getParentOp();
  if (!parent)
    return std::nullopt;
  if (auto func = dyn_cast<FunctionOpInterface>(parent)) {
    if (arg.getOwner()->isEntryBlock())
      if (auto attr = func.getArgAttrOfType<DeviceAttr>(arg.getArgNumber(),
                                                        kDeviceAttrName))
        return attr.getValue();
    return std::nullopt;
  }
  if (auto attr = parent->getAttrOfType<DeviceAttr>(kDeviceAttrName))
    return attr.getValue();
  return std::nullopt;
}

bool mlir::dlc::sharesMemory(Device owner, Device user) {
  auto hostMemory = [](Device d) {
    return d == Device::host || d == Device::cpu;
  };
  return owner == user || (hostMemory(owner) && hostMemory(user));
}

/// How a diagnostic names `value`: the entry argument's name, or the op
/// that defines it.
static std::string describe(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    os << "argument #" << arg.getArgNumber();
    if (auto func = dyn_cast_or_null<FunctionOpInterface>(
            arg.getOwner()->getParentOp()))
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                        kNameAttrName))
        os << " '" << name.getValue() << "'";
    return text;
  }
  Operation *def = value.getDefiningOp();
  os << "the result of '" << def->getName() << "'";
  if (auto param = dyn_cast<ParamOp>(def))
    os << " " << param.getNameAttr();
  return text;
}

/// The `dlc.parameter` that a dlc.param or dlc.assign names, if any.
static ParameterOp parameterOf(Operation *op) {
  auto name = op->getAttrOfType<FlatSymbolRefAttr>("name");
  if (!name || !isa<ParamOp, AssignOp>(op))
    return {};
  return SymbolTable::lookupNearestSymbolFrom<ParameterOp>(op, name);
}

LogicalResult TransferOp::verify() {
  std::optional<Device> from = deviceOf(getInput());
  if (from && sharesMemory(*from, getDevice()))
    return emitOpError("moves a value that is already on ")
           << stringifyDevice(*from) << " to " << stringifyDevice(getDevice())
           << ", which reads the same memory; use the value directly";
  return success();
}

LogicalResult DlcDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  // The other dlc.* attributes (dlc.entry, dlc.loss, the codegen markers)
  // are checked by the passes that read them.
  if (attr.getName() != kDeviceAttrName)
    return success();
  auto device = dyn_cast<DeviceAttr>(attr.getValue());
  if (!device)
    return op->emitError("'dlc.device' must be a #dlc.device<...>, not ")
           << attr.getValue();
  Device here = device.getValue();
  // A transfer is where a value changes device: its operand is checked by
  // TransferOp::verify.
  if (isa<TransferOp>(op))
    return op->emitOpError("takes its device from its 'device' attribute, "
                           "not from 'dlc.device'");
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<Device> there = deviceOf(operand.get());
    if (!there || sharesMemory(*there, here))
      continue;
    InFlightDiagnostic diag =
        op->emitOpError("operand #")
        << operand.getOperandNumber() << " (" << describe(operand.get())
        << ") is on " << stringifyDevice(*there) << " but the op runs on "
        << stringifyDevice(here);
    diag.attachNote(operand.get().getLoc())
        << "the value is defined here; move it with 'dlc.transfer "
        << "... to <" << stringifyDevice(here)
        << ">', or let dlc-place-devices place the whole entry";
    return diag;
  }
  if (ParameterOp param = parameterOf(op)) {
    auto home = param->getAttrOfType<DeviceAttr>(kDeviceAttrName);
    if (home && !sharesMemory(home.getValue(), here))
      return op->emitOpError("accesses parameter @")
             << param.getSymName() << ", which lives on "
             << stringifyDevice(home.getValue()) << ", from "
             << stringifyDevice(here);
  }
  return success();
}

LogicalResult DlcDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned /*region*/,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  if (attr.getName() == kDeviceAttrName && !isa<DeviceAttr>(attr.getValue()))
    return op->emitError("argument #")
           << argIndex << ": 'dlc.device' must be a #dlc.device<...>";
  return success();
}

LogicalResult DlcDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned /*region*/,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  if (attr.getName() == kDeviceAttrName && !isa<DeviceAttr>(attr.getValue()))
    return op->emitError("result #")
           << resultIndex << ": 'dlc.device' must be a #dlc.device<...>";
  return success();
}
