//===- DlcAttrs.td - dlc dialect attributes ----------------*- tablegen -*-===//
//
// Attributes of the `dlc` dialect: the device a value lives on, the kinds
// of the comparison and boolean ops, and the closed sets of choices that ops
// and the optimizer configuration carry (fused activations, GELU's form,
// losses' reductions, parameters' initialisations and roles, optimizers).
// Those are enum attributes, spelled like `#dlc.activation<relu>`: a
// misspelt value is a parse error.
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

//===----------------------------------------------------------------------===//
// Closed sets of choices carried by ops
//===----------------------------------------------------------------------===//

def Dlc_Activation : I32EnumAttr<"Activation",
    "an activation fused into a layer", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"relu", 1>,
    I32EnumAttrCase<"gelu", 2>, I32EnumAttrCase<"gelu_tanh", 3>,
    I32EnumAttrCase<"tanh", 4>, I32EnumAttrCase<"sigmoid", 5>]> {
  let cppNamespace = "::mlir::dlc";
  let genSpecializedAttr = 0;
}

def Dlc_ActivationAttr : EnumAttr<Dlc_Dialect, Dlc_Activation, "activation"> {
  let summary = "An activation: none, relu, gelu, gelu_tanh, tanh or sigmoid";
  let description = [{
    The activation that `dlc.linear` and `dlc.conv2d` apply to their result
    (`dlc-fuse-layers` folds it in), and whose derivative
    `dlc.activation_grad` computes. `gelu` is GELU's erf form, `gelu_tanh`
    its tanh approximation (`dlc.gelu` with `#dlc.approximate<tanh>`).

    ```mlir
    %y = dlc.linear %x, %w, %b {activation = #dlc.activation<relu>}
        : (tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Dlc_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "the form of GELU", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::dlc";
  let genSpecializedAttr = 0;
}

def Dlc_GeluApproximationAttr : EnumAttr<Dlc_Dialect, Dlc_GeluApproximation,
                                         "approximate"> {
  let summary = "GELU's form: none (erf) or tanh";
  let description = [{
    `approximate` of `dlc.gelu`, as in PyTorch's `nn.GELU`: `none` is the
    exact erf form, `tanh` the tanh approximation.

    ```mlir
    %r = dlc.gelu %x {approximate = #dlc.approximate<tanh>} : tensor<64x256xf32>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Dlc_LossReduction : I32EnumAttr<"LossReduction",
    "how a loss reduces over its elements", [
    I32EnumAttrCase<"mean", 0>, I32EnumAttrCase<"sum", 1>]> {
  let cppNamespace = "::mlir::dlc";
  let genSpecializedAttr = 0;
}

def Dlc_LossReductionAttr : EnumAttr<Dlc_Dialect, Dlc_LossReduction,
                                     "reduction"> {
  let summary = "A loss's reduction: mean or sum";
  let description = [{
    `reduction` of the losses and their gradients, as in PyTorch's losses:
    the mean (the default) or the sum over the elements or rows.

    ```mlir
    %l = dlc.mse_loss %p, %t {reduction = #dlc.reduction<sum>}
        : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<f32>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Dlc_ParameterInit : I32EnumAttr<"ParameterInit",
    "how a parameter is initialised", [
    I32EnumAttrCase<"uniform", 0>, I32EnumAttrCase<"zeros", 1>,
    I32EnumAttrCase<"ones", 2>, I32EnumAttrCase<"data", 3>]> {
  let cppNamespace = "::mlir::dlc";
  let genSpecializedAttr = 0;
}

def Dlc_ParameterInitAttr : EnumAttr<Dlc_Dialect, Dlc_ParameterInit, "init"> {
  let summary = "A parameter's initialisation: uniform, zeros, ones or data";
  let description = [{
    `init` of `dlc.parameter`: `uniform` draws from `U(-bound, bound)`,
    `zeros` and `ones` fill, `data` takes the parameter's `value`. The model
    descriptor carries it to the runtime, which initialises the parameter.

    ```mlir
    dlc.parameter @"fc1.weight" : tensor<256x784xf32> {bound = 0.0357 : f64, init = #dlc.init<uniform>}
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Dlc_ParameterRole : I32EnumAttr<"ParameterRole",
    "what a parameter is for", [
    I32EnumAttrCase<"weight", 0>, I32EnumAttrCase<"constant", 1>,
    I32EnumAttrCase<"optimizer_state", 2>, I32EnumAttrCase<"packed", 3>]> {
  let cppNamespace = "::mlir::dlc";
  let genSpecializedAttr = 0;
}

def Dlc_ParameterRoleAttr : EnumAttr<Dlc_Dialect, Dlc_ParameterRole, "role"> {
  let summary = "A parameter's role: weight, constant, optimizer_state or packed";
  let description = [{
    `role` of `dlc.parameter`: a `weight` is trained, a `constant` is not,
    `optimizer_state` (added by `dlc-build-train-step`) is saved in
    checkpoints and optional when weights are loaded, and `packed` (added by
    `dlc-pack-weights`) is a copy of weights in the layout their readers
    want, which the runtime recomputes whenever the weights change and
    never loads or saves.

    ```mlir
    dlc.parameter @scale : tensor<f32> {init = #dlc.init<data>, role = #dlc.role<constant>, value = dense<0.125> : tensor<f32>}
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Dlc_OptimizerKind : I32EnumAttr<"OptimizerKind", "an optimizer", [
    I32EnumAttrCase<"sgd", 0>, I32EnumAttrCase<"adam", 1>,
    I32EnumAttrCase<"adamw", 2>]> {
  let cppNamespace = "::mlir::dlc";
  let genSpecializedAttr = 0;
}

def Dlc_OptimizerKindAttr : EnumAttr<Dlc_Dialect, Dlc_OptimizerKind,
                                     "optimizer"> {
  let summary = "An optimizer: sgd, adam or adamw";
  let description = [{
    The `kind` entry of an optimizer configuration: the `config` of
    `dlc.optimizer_update` and the module's `dlc.optimizer` dictionary
    (PyTorch's `torch.optim.SGD`, `Adam` and `AdamW`).

    ```mlir
    module attributes {dlc.optimizer = {kind = #dlc.optimizer<adam>, lr = 1.0e-03 : f64}} {}
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

#endif // DLC_DIALECT_DLC_IR_DLCATTRS_TD
