//===- DlcAttrs.td - dlc dialect attributes ----------------*- tablegen -*-===//
//
// Attributes of the `dlc` dialect: the device a value lives on, and the
// kinds of the comparison and boolean ops.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_DLC_IR_DLCATTRS_TD
#define DLC_DIALECT_DLC_IR_DLCATTRS_TD

include "dlc/Dialect/Dlc/IR/DlcBase.td"
include "mlir/IR/EnumAttr.td"

def Dlc_Device : I32EnumAttr<"Device", "where a tensor lives and an op runs", [
    I32EnumAttrCase<"host", 0>,
    I32EnumAttrCase<"cpu", 1>,
    I32EnumAttrCase<"cuda", 2>]> {
  let cppNamespace = "::mlir::dlc";
  let genSpecializedAttr = 0;
}

def Dlc_DeviceAttr : EnumAttr<Dlc_Dialect, Dlc_Device, "device"> {
  let summary = "A device: host, cpu or cuda";
  let description = [{
    `host` is the memory of the program that calls the model: entry inputs
    and outputs live there. `cpu` computes in host memory, so values move
    between `host` and `cpu` without a copy. `cuda` is a GPU with its own
    memory: a value crosses between it and the host only through a
    `dlc.transfer`.

    `dlc-place-devices` sets the discardable attribute `dlc.device` on every
    op of an entry point (the device it runs on, and that of its results),
    on every `dlc.parameter`, and on the entry's arguments and results.
    Wherever it is set, the dialect's verifier checks that every operand of
    an op lives in memory the op's device can read:

    ```mlir
    %y = dlc.relu %x {dlc.device = #dlc.device<cuda>} : tensor<4xf32>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Dlc_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "an elementwise comparison", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::dlc";
}

def Dlc_LogicalKind : I32EnumAttr<"LogicalKind",
    "an elementwise operation on booleans", [
    I32EnumAttrCase<"and_", 0, "and">, I32EnumAttrCase<"or_", 1, "or">,
    I32EnumAttrCase<"xor_", 2, "xor">]> {
  let cppNamespace = "::mlir::dlc";
}

def Dlc_IntArithKind : I32EnumAttr<"IntArithKind",
    "an elementwise operation on integers", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>,
    I32EnumAttrCase<"mul", 2>]> {
  let cppNamespace = "::mlir::dlc";
}

#endif // DLC_DIALECT_DLC_IR_DLCATTRS_TD
