//===- DlcBase.td - dlc dialect definition -----------------*- tablegen -*-===//
//
// The `dlc` dialect: tensor-level deep-learning ops with static shapes.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_DLC_IR_DLCBASE_TD
#define DLC_DIALECT_DLC_IR_DLCBASE_TD

include "mlir/IR/OpBase.td"

def Dlc_Dialect : Dialect {
  let name = "dlc";
  let summary = "Tensor-level deep-learning ops of the dlc compiler";
  let description = [{
    The `dlc` dialect is the compiler's model-level IR. Every value is a
    statically shaped `tensor`; the element type carries the precision
    (`f32`, `bf16`, `f16`, integer labels). Model parameters are
    module-level symbols (`dlc.parameter`) read by `dlc.param`, never SSA
    constants, so that weights keep their names from the model description
    to the weight files, the generated header and the memory plan.

    Each entry point is a `func.func` with the `dlc.entry` unit attribute;
    its arguments and results carry their user-visible names in
    `dlc.name` argument/result attributes.

    After `dlc-place-devices`, ops, parameters and entry arguments and
    results carry a `dlc.device` attribute (`#dlc.device<cuda>`); the
    dialect verifies that no op reads a value from another device's memory.
  }];
  let cppNamespace = "::mlir::dlc";
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

class Dlc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dlc_Dialect, mnemonic, traits>;

def Dlc_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Dlc_IntTensor : RankedTensorOf<[AnySignlessInteger]>;
def Dlc_ScalarFloatTensor : 0DTensorOf<[AnyFloat]>;

#endif // DLC_DIALECT_DLC_IR_DLCBASE_TD
