//===- DlcInterfaces.td - dlc op interfaces ----------------*- tablegen -*-===//
//
// Interfaces of the dlc ops. The gradient rules of reverse-mode automatic
// differentiation live with the ops: `dlc-build-train-step` asks every op on
// the path from the parameters to the loss for the gradients of its
// operands.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_DLC_IR_DLCINTERFACES_TD
#define DLC_DIALECT_DLC_IR_DLCINTERFACES_TD

include "mlir/IR/OpBase.td"

def Dlc_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let description = [{
    An op that knows the reverse-mode gradient rule of each of its operands
    (its vector-Jacobian product): given the gradient of the loss with
    respect to its result, it builds, with dlc ops at the builder's
    insertion point, the gradient with respect to every operand. An op
    with several results (`dlc.lstm`) gets one gradient per result, null
    for a result the loss does not depend on.
    Operands that have no gradient (integer labels, a batch norm's running
    statistics) get a null value: nothing flows back through them, so a
    parameter reached only that way is not trained. A
    gradient has its operand's type: the rule undoes broadcasting by
    summing over the broadcast dimensions.

    Rules recompute cheap elementwise values (an activation's derivative
    from its input) rather than asking the forward pass to keep them, so
    the values a training step keeps alive are exactly the operands and
    results the rules read.
  }];
  let cppNamespace = "::mlir::dlc";
  let methods = [
    InterfaceMethod<
      "Builds the gradient of every operand from `resultGrad`, the gradient "
      "of the op's single result (null entries for operands without one).",
      "::llvm::SmallVector<::mlir::Value>", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Value":$resultGrad)>,
    InterfaceMethod<
      "Builds the gradient of every operand from `resultGrads`, one per "
      "result, null where the loss does not depend on the result (at least "
      "one is not null). Ops with one result need not implement it.",
      "::llvm::SmallVector<::mlir::Value>", "buildGradientsOfResults",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads),
      [{}],
      [{ return $_op.buildGradients(builder, resultGrads.front()); }]>,
  ];
}

#endif // DLC_DIALECT_DLC_IR_DLCINTERFACES_TD
