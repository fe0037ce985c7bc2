//===- DlcOps.td - dlc dialect operations ------------------*- tablegen -*-===//
//
// Ops of the `dlc` dialect. Every op has a summary, a description with an
// example, and a verifier for shapes and element types; result types are
// always spelled out in the IR so that shape errors surface at the op that
// causes them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_DLC_IR_DLCOPS_TD
#define DLC_DIALECT_DLC_IR_DLCOPS_TD

include "dlc/Dialect/Dlc/IR/DlcBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Dlc_ParameterOp : Dlc_Op<"parameter", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A named, persistent model parameter";
  let description = [{
    Declares a parameter of the model: a tensor that lives as long as the
    model object, is initialised by the runtime and read and written as a
    named tensor in weight files. `init` is `uniform` (drawn from
    `U(-bound, bound)`), `zeros` or `ones`.

    ```mlir
    dlc.parameter @"fc1.weight" : tensor<256x784xf32> {bound = 0.0357 : f64, init = "uniform"}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyRankedTensor>:$type,
                       StrAttr:$init,
                       DefaultValuedAttr<F64Attr, "0.0">:$bound);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Dlc_ParamOp : Dlc_Op<"param",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reads the current value of a model parameter";
  let description = [{
    Produces the value of the `dlc.parameter` named by `name`. The result
    type must equal the parameter's type.

    ```mlir
    %w = dlc.param @"fc1.weight" : tensor<256x784xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Dlc_LinearOp : Dlc_Op<"linear", [Pure]> {
  let summary = "Fully connected layer: x @ W^T + b, with an optional fused activation";
  let description = [{
    PyTorch's `nn.Linear`: `input` is `[..., in]`, `weight` is `[out, in]`
    (PyTorch's layout), the optional `bias` is `[out]`, the result is
    `[..., out]`. `activation` (`none`, `relu`, `gelu`, `gelu_tanh`, `tanh`,
    `sigmoid`) is applied to the result; `dlc-fuse-layers` sets it when it
    folds the following activation op into the layer.

    ```mlir
    %y = dlc.linear %x, %w, %b {activation = "relu"}
        : (tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$weight,
                       Optional<Dlc_FloatTensor>:$bias,
                       DefaultValuedStrAttr<StrAttr, "none">:$activation);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_MatmulOp : Dlc_Op<"matmul", [Pure]> {
  let summary = "Matrix product, optionally batched";
  let description = [{
    `[M, K] x [K, N] -> [M, N]`, or with a leading batch dimension on both
    operands `[B, M, K] x [B, K, N] -> [B, M, N]`.

    ```mlir
    %c = dlc.matmul %a, %b : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$lhs, Dlc_FloatTensor:$rhs);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Dlc_BinaryOp<string mnemonic, string what>
    : Dlc_Op<mnemonic, [Pure]> {
  let summary = "Elementwise " # what # " with NumPy broadcasting";
  let description = [{
    Applies the operation elementwise. The operands broadcast like NumPy
    (shapes aligned on the right; a dimension of size 1, or a missing one,
    stretches); the result has the broadcast shape and the operands'
    element type.

    ```mlir
    %r = dlc.}] # mnemonic # [{ %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$lhs, Dlc_FloatTensor:$rhs);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_AddOp : Dlc_BinaryOp<"add", "addition">;
def Dlc_SubOp : Dlc_BinaryOp<"sub", "subtraction">;
def Dlc_MulOp : Dlc_BinaryOp<"mul", "multiplication">;
def Dlc_DivOp : Dlc_BinaryOp<"div", "division">;

class Dlc_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Dlc_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType], traits)> {
  let summary = "Elementwise " # what;
  let description = [{
    Applies }] # what # [{ to every element; the result has the operand's type.

    ```mlir
    %r = dlc.}] # mnemonic # [{ %x : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Dlc_ReluOp : Dlc_UnaryOp<"relu", "max(x, 0)">;
def Dlc_TanhOp : Dlc_UnaryOp<"tanh", "the hyperbolic tangent">;
def Dlc_SigmoidOp : Dlc_UnaryOp<"sigmoid", "the logistic function 1 / (1 + exp(-x))">;
def Dlc_ExpOp : Dlc_UnaryOp<"exp", "the exponential">;
def Dlc_LogOp : Dlc_UnaryOp<"log", "the natural logarithm">;
def Dlc_SqrtOp : Dlc_UnaryOp<"sqrt", "the square root">;
def Dlc_NegOp : Dlc_UnaryOp<"neg", "negation">;

def Dlc_GeluOp : Dlc_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Elementwise GELU, erf or tanh form";
  let description = [{
    `approximate = "none"` (default) computes `x/2 * (1 + erf(x/sqrt(2)))`;
    `approximate = "tanh"` computes
    `x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`, like PyTorch's
    `nn.GELU(approximate=...)`.

    ```mlir
    %r = dlc.gelu %x {approximate = "tanh"} : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

class Dlc_SoftmaxLikeOp<string mnemonic, string what>
    : Dlc_Op<mnemonic, [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = what # " along one dimension";
  let description = [{
    Computes }] # what # [{ along dimension `dim` (non-negative), in the
    numerically stable form that subtracts the maximum first.

    ```mlir
    %p = dlc.}] # mnemonic # [{ %x {dim = 1 : i64} : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dlc_SoftmaxOp : Dlc_SoftmaxLikeOp<"softmax", "softmax">;
def Dlc_LogSoftmaxOp : Dlc_SoftmaxLikeOp<"log_softmax", "log-softmax">;

def Dlc_LayerNormOp : Dlc_Op<"layer_norm", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Layer normalisation over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * weight + bias` where mean and the
    biased variance are taken over the last dimension; `weight` and `bias`
    have the shape of that dimension (PyTorch's `nn.LayerNorm(D)`).

    ```mlir
    %y = dlc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64}
        : (tensor<6x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<6x32xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$weight,
                       Dlc_FloatTensor:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Dlc_ReshapeOp : Dlc_Op<"reshape", [Pure]> {
  let summary = "Reinterprets a tensor with a new static shape";
  let description = [{
    Row-major reshape: the element type and the number of elements are
    kept. `flatten` in the model format produces this op.

    ```mlir
    %f = dlc.reshape %x : (tensor<4x1x28x28xf32>) -> tensor<4x784xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Dlc_TransposeOp : Dlc_Op<"transpose", [Pure]> {
  let summary = "Permutes the dimensions of a tensor";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`.

    ```mlir
    %t = dlc.transpose %x [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input $permutation attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Dlc_ReductionOp<string mnemonic, string what> : Dlc_Op<mnemonic, [Pure]> {
  let summary = what # " over a set of dimensions";
  let description = [{
    Reduces (}] # what # [{) over the sorted, unique, non-negative
    dimensions in `dims`; with `keepdim` those dimensions stay with size 1,
    otherwise they are dropped.

    ```mlir
    %s = dlc.}] # mnemonic # [{ %x {dims = array<i64: 1>, keepdim = false} : (tensor<4x6xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, DenseI64ArrayAttr:$dims,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_SumOp : Dlc_ReductionOp<"sum", "the sum">;
def Dlc_MeanOp : Dlc_ReductionOp<"mean", "the mean">;

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Dlc_MseLossOp : Dlc_Op<"mse_loss", [Pure]> {
  let summary = "Mean (or summed) squared error";
  let description = [{
    `mean((input - target)^2)` (or the sum with `reduction = "sum"`), a
    0-d tensor of the operands' element type; the operands have the same
    type (PyTorch's `nn.MSELoss`).

    ```mlir
    %l = dlc.mse_loss %p, %t : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$target,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduction);
  let results = (outs Dlc_ScalarFloatTensor:$result);
  let assemblyFormat = "$input `,` $target attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_CrossEntropyOp : Dlc_Op<"cross_entropy", [Pure]> {
  let summary = "Cross-entropy of logits against integer class labels";
  let description = [{
    `logits` is `[N, C]`, `labels` is `[N]` of integer class indices in
    `[0, C)`; the result is the mean (or with `reduction = "sum"` the sum)
    over the batch of `-log_softmax(logits)[n, labels[n]]`, computed in the
    numerically stable log-sum-exp form (PyTorch's `nn.CrossEntropyLoss`).
    Labels out of range are a contract violation: they are clamped into
    range instead of reading out of bounds.

    ```mlir
    %l = dlc.cross_entropy %logits, %y : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$logits, Dlc_IntTensor:$labels,
                       DefaultValuedStrAttr<StrAttr, "mean">:$reduction);
  let results = (outs Dlc_ScalarFloatTensor:$result);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // DLC_DIALECT_DLC_IR_DLCOPS_TD
