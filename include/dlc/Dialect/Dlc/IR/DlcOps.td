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

include "dlc/Dialect/Dlc/IR/DlcAttrs.td"
include "dlc/Dialect/Dlc/IR/DlcInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

defvar Dlc_Grad = DeclareOpInterfaceMethods<Dlc_DifferentiableOpInterface>;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Dlc_ParameterOp : Dlc_Op<"parameter", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A named, persistent model parameter";
  let description = [{
    Declares a parameter of the model: a tensor that lives as long as the
    model object, is initialised by the runtime and read and written as a
    named tensor in weight files. `init` (`#dlc.init`) is `uniform` (drawn
    from `U(-bound, bound)`), `zeros`, `ones` or `data`: the initial value
    is the `value` attribute, embedded in the compiled object (the ONNX
    importer turns every initializer into such a parameter).

    `role` (`#dlc.role`) is `weight` (the default: a tensor of the model,
    read from and written to weight files, trained by
    `dlc-build-train-step`), `constant` (like a weight in files, but never
    trained: an ONNX model's attention scale, causal mask or `Constant`
    node) or `optimizer_state` (added by `dlc-build-train-step`: the step
    count and moments, zero-initialised, saved in checkpoints and optional
    when weights are loaded).

    An `optimizer_state` of a sharded optimizer (`dlc-shard-optimizer-state`)
    is one rank's shard of a tensor of shape `shard_of` over `shard_ranks`
    ranks: a 1-D tensor of `ceil(n / shard_ranks)` elements (see
    `dlc.reduce_scatter`); files hold the whole tensor.

    ```mlir
    dlc.parameter @"fc1.weight" : tensor<256x784xf32> {bound = 0.0357 : f64, init = #dlc.init<uniform>}
    dlc.parameter @"fc.bias" : tensor<2xf32> {init = #dlc.init<data>, value = dense<[0.5, -1.0]> : tensor<2xf32>}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyRankedTensor>:$type,
                       Dlc_ParameterInitAttr:$init,
                       DefaultValuedAttr<F64Attr, "0.0">:$bound,
                       DefaultValuedAttr<Dlc_ParameterRoleAttr,
                                         "::mlir::dlc::ParameterRole::weight">:$role,
                       OptionalAttr<ElementsAttr>:$value,
                       OptionalAttr<DenseI64ArrayAttr>:$shard_of,
                       OptionalAttr<I64Attr>:$shard_ranks);
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

def Dlc_LinearOp : Dlc_Op<"linear", [Pure, Dlc_Grad]> {
  let summary = "Fully connected layer: x @ W^T + b, with an optional fused activation";
  let description = [{
    PyTorch's `nn.Linear`: `input` is `[..., in]`, `weight` is `[out, in]`
    (PyTorch's layout), the optional `bias` is `[out]`, the result is
    `[..., out]`. `activation` (`#dlc.activation`: `none`, `relu`, `gelu`,
    `gelu_tanh`, `tanh`, `sigmoid`) is applied to the result;
    `dlc-fuse-layers` sets it when it folds the following activation op
    into the layer.

    ```mlir
    %y = dlc.linear %x, %w, %b {activation = #dlc.activation<relu>}
        : (tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$weight,
                       Optional<Dlc_FloatTensor>:$bias,
                       DefaultValuedAttr<Dlc_ActivationAttr,
                                         "::mlir::dlc::Activation::none">:$activation);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_MatmulOp : Dlc_Op<"matmul", [Pure, Dlc_Grad]> {
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

def Dlc_AttentionOp : Dlc_Op<"attention", [Pure, Dlc_Grad]> {
  let summary = "Scaled dot-product attention";
  let description = [{
    `softmax(scale * (query @ key^T) + mask) @ value`, the softmax over the
    last dimension: PyTorch's `scaled_dot_product_attention` and the
    attention of `nn.MultiheadAttention`. `query` is `[B..., Lq, D]`, `key`
    `[B..., Lk, D]`, `value` `[B..., Lk, Dv]` with the same batch
    dimensions `B...` (none or more, e.g. batch and heads); the result is
    `[B..., Lq, Dv]`. The optional `mask` is added to the scaled scores and
    broadcasts like NumPy into `[B..., Lq, Lk]` (`-inf` where a position
    must not be attended, 0 elsewhere: a causal or padding mask).

    `dlc-raise-decompositions` forms it from the matmul, scale, mask and
    softmax ops that ONNX exporters write, so that later passes see one
    op; `dlc-lower-to-linalg` lowers it through batched matmuls and the
    softmax again (`AttentionOp::buildDecomposition`), and its gradient
    recomputes the probabilities from the same decomposition.

    ```mlir
    %o = dlc.attention %q, %k, %v, %mask {scale = 0.35355339059327379 : f64}
        : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$query, Dlc_FloatTensor:$key,
                       Dlc_FloatTensor:$value,
                       Optional<Dlc_FloatTensor>:$mask,
                       F64Attr:$scale);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Builds the op with dlc ops (reshapes to one batch dimension, two
    /// dlc.matmul, the scale, the mask and dlc.softmax) at the builder's
    /// insertion point and returns its result; `probs`, when given, gets
    /// the softmax probabilities `[B..., Lq, Lk]`.
    ::mlir::Value buildDecomposition(::mlir::OpBuilder &builder,
                                     ::mlir::Value *probs = nullptr);
  }];
}

//===----------------------------------------------------------------------===//
// Recurrent layers
//===----------------------------------------------------------------------===//

defvar Dlc_GradOfResults = DeclareOpInterfaceMethods<
    Dlc_DifferentiableOpInterface, ["buildGradientsOfResults"]>;

def Dlc_LstmOp : Dlc_Op<"lstm", [Pure, Dlc_GradOfResults]> {
  let summary = "One direction of one LSTM layer over a whole sequence";
  let description = [{
    PyTorch's `nn.LSTM` cell run over `T` steps. `projection` is every
    step's input projection `x_t W_ih^T + b_ih + b_hh`, `[T, B, 4H]`, with
    the gates in PyTorch's order i, f, g, o (the ONNX importer reorders
    ONNX's i, o, f, c rows); `recurrent_weight` is `W_hh`, `[4H, H]`;
    `initial_h` and `initial_c` are `[B, H]`. Step `t` computes
    ```
    a = projection[t] + h_{t-1} W_hh^T      (the pre-activations)
    c_t = sigmoid(a_f) * c_{t-1} + sigmoid(a_i) * tanh(a_g)
    h_t = sigmoid(a_o) * tanh(c_t)
    ```
    from `t = 0` up, or from `t = T-1` down with `reverse` (the backward
    half of a bidirectional layer; its final state is then `y[0]`).
    Results: `y` holds `h_t` and `c` holds `c_t` for every step, `[T, B,
    H]` (the final states are their last steps); `gates` holds every
    step's pre-activations `a`, `[T, B, 4H]`: what backpropagation through
    time reads (`dlc.lstm_grad`), so that a training step keeps them in
    its memory plan.

    `dlc-lower-to-linalg` lowers it to an `scf.for` over the steps whose
    body is the recurrent GEMM, accumulated into the step's projection,
    and one elementwise cell update.

    ```mlir
    %y, %c, %gates = dlc.lstm %proj, %w_hh, %h0, %c0
        : (tensor<50x32x512xf32>, tensor<512x128xf32>, tensor<32x128xf32>, tensor<32x128xf32>)
        -> (tensor<50x32x128xf32>, tensor<50x32x128xf32>, tensor<50x32x512xf32>)
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$projection,
                       Dlc_FloatTensor:$recurrent_weight,
                       Dlc_FloatTensor:$initial_h, Dlc_FloatTensor:$initial_c,
                       UnitAttr:$reverse);
  let results = (outs Dlc_FloatTensor:$y, Dlc_FloatTensor:$c,
                      Dlc_FloatTensor:$gates);
  let assemblyFormat = [{
    $projection `,` $recurrent_weight `,` $initial_h `,` $initial_c attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_LstmGradOp : Dlc_Op<"lstm_grad", [Pure]> {
  let summary = "Backpropagation through time of a dlc.lstm";
  let description = [{
    From the gradients of a `dlc.lstm`'s `y` and `c` (`[T, B, H]`), its
    `recurrent_weight`, `initial_c` and its results `c` and `gates`, runs
    the steps in the opposite order and computes the gradient of every
    step's pre-activations (`[T, B, 4H]`: the gradient of the projection,
    from which the rule of `dlc.lstm` gets those of `W_ih`, `W_hh` and the
    biases with one GEMM each over all steps) and of the initial states:
    ```
    dh = y_grad[t] + (the next step's gates_grad) W_hh
    dc = c_grad[t] + dh * o * (1 - tanh(c_t)^2) + (the next step's dc) * f
    gates_grad[t] = [dc * tanh(a_g) * i (1 - i),  dc * c_{t-1} * f (1 - f),
                     dc * i * (1 - tanh(a_g)^2),  dh * tanh(c_t) * o (1 - o)]
    ```
    The activations are recomputed from the saved pre-activations.

    ```mlir
    %dgates, %dh0, %dc0 = dlc.lstm_grad %dy, %dc, %w_hh, %c0, %c, %gates
        : (tensor<50x32x128xf32>, tensor<50x32x128xf32>, tensor<512x128xf32>, tensor<32x128xf32>, tensor<50x32x128xf32>, tensor<50x32x512xf32>)
        -> (tensor<50x32x512xf32>, tensor<32x128xf32>, tensor<32x128xf32>)
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$y_grad, Dlc_FloatTensor:$c_grad,
                       Dlc_FloatTensor:$recurrent_weight,
                       Dlc_FloatTensor:$initial_c, Dlc_FloatTensor:$c,
                       Dlc_FloatTensor:$gates, UnitAttr:$reverse);
  let results = (outs Dlc_FloatTensor:$gates_grad,
                      Dlc_FloatTensor:$initial_h_grad,
                      Dlc_FloatTensor:$initial_c_grad);
  let assemblyFormat = [{
    $y_grad `,` $c_grad `,` $recurrent_weight `,` $initial_c `,` $c `,` $gates
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_GruOp : Dlc_Op<"gru", [Pure, Dlc_GradOfResults]> {
  let summary = "One direction of one GRU layer over a whole sequence";
  let description = [{
    PyTorch's `nn.GRU` cell run over `T` steps. `projection` is every
    step's input projection `x_t W_ih^T + b_ih`, `[T, B, 3H]`, with the
    gates in PyTorch's order r, z, n (the ONNX importer reorders ONNX's
    z, r, h rows); `recurrent_weight` is `W_hh`, `[3H, H]`, and
    `recurrent_bias` `b_hh`, `[3H]`; `initial_h` is `[B, H]`. Step `t`
    computes
    ```
    g = h_{t-1} W_hh^T + b_hh                (the recurrent pre-activations)
    r = sigmoid(p_r + g_r),  z = sigmoid(p_z + g_z)
    n = tanh(p_n + r * g_n)
    h_t = (h_{t-1} - n) * z + n              (PyTorch's (1 - z) n + z h)
    ```
    from `t = 0` up, or from `t = T-1` down with `reverse`. Results: `y`
    holds `h_t` for every step, `[T, B, H]`; `gates` holds every step's
    `g`, `[T, B, 3H]`, which backpropagation through time reads
    (`dlc.gru_grad`) with the projection. Lowered like `dlc.lstm`.

    ```mlir
    %y, %gates = dlc.gru %proj, %w_hh, %b_hh, %h0
        : (tensor<50x32x384xf32>, tensor<384x128xf32>, tensor<384xf32>, tensor<32x128xf32>)
        -> (tensor<50x32x128xf32>, tensor<50x32x384xf32>)
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$projection,
                       Dlc_FloatTensor:$recurrent_weight,
                       Dlc_FloatTensor:$recurrent_bias,
                       Dlc_FloatTensor:$initial_h, UnitAttr:$reverse);
  let results = (outs Dlc_FloatTensor:$y, Dlc_FloatTensor:$gates);
  let assemblyFormat = [{
    $projection `,` $recurrent_weight `,` $recurrent_bias `,` $initial_h
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_GruGradOp : Dlc_Op<"gru_grad", [Pure]> {
  let summary = "Backpropagation through time of a dlc.gru";
  let description = [{
    From the gradient of a `dlc.gru`'s `y` (`[T, B, H]`), its
    `recurrent_weight`, `initial_h`, `projection` and its results `y` and
    `gates`, runs the steps in the opposite order and computes the
    gradients of every step's projection and recurrent pre-activations
    (`[T, B, 3H]` each: the rule of `dlc.gru` gets those of `W_ih`,
    `b_ih`, `W_hh` and `b_hh` from them over all steps at once) and of the
    initial state:
    ```
    dh = y_grad[t] + (the next step's dh_prev)
    dn = dh (1 - z) (1 - n^2),  dz = dh (h_{t-1} - n) z (1 - z)
    dr = dn g_n r (1 - r)
    projection_grad[t] = [dr, dz, dn],  gates_grad[t] = [dr, dz, dn r]
    dh_prev = dh z + gates_grad[t] W_hh
    ```
    with r, z and n recomputed from the saved pre-activations.

    ```mlir
    %dp, %dg, %dh0 = dlc.gru_grad %dy, %w_hh, %h0, %proj, %y, %gates
        : (tensor<50x32x128xf32>, tensor<384x128xf32>, tensor<32x128xf32>, tensor<50x32x384xf32>, tensor<50x32x128xf32>, tensor<50x32x384xf32>)
        -> (tensor<50x32x384xf32>, tensor<50x32x384xf32>, tensor<32x128xf32>)
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$y_grad,
                       Dlc_FloatTensor:$recurrent_weight,
                       Dlc_FloatTensor:$initial_h,
                       Dlc_FloatTensor:$projection, Dlc_FloatTensor:$y,
                       Dlc_FloatTensor:$gates, UnitAttr:$reverse);
  let results = (outs Dlc_FloatTensor:$projection_grad,
                      Dlc_FloatTensor:$gates_grad,
                      Dlc_FloatTensor:$initial_h_grad);
  let assemblyFormat = [{
    $y_grad `,` $recurrent_weight `,` $initial_h `,` $projection `,` $y `,`
    $gates attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Dlc_BinaryOp<string mnemonic, string what>
    : Dlc_Op<mnemonic, [Pure, Dlc_Grad]> {
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

def Dlc_AddOp : Dlc_BinaryOp<"add", "addition"> {
  // Sums that training steps build by accumulating gradients: the windows
  // of one tensor that adjacent slices took (an unrolled recurrent op's
  // steps, a split) join into one placement of their concatenation, and a
  // sum of thin matrix products becomes one product over the joined inner
  // dimension (the weight gradient of a layer applied at every step).
  let hasCanonicalizer = 1;
}
def Dlc_SubOp : Dlc_BinaryOp<"sub", "subtraction">;
def Dlc_MulOp : Dlc_BinaryOp<"mul", "multiplication">;
def Dlc_DivOp : Dlc_BinaryOp<"div", "division">;

class Dlc_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Dlc_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType, Dlc_Grad], traits)> {
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
def Dlc_ErfOp : Dlc_UnaryOp<"erf", "the error function">;
def Dlc_NegOp : Dlc_UnaryOp<"neg", "negation">;

def Dlc_GeluOp : Dlc_Op<"gelu", [Pure, SameOperandsAndResultType, Dlc_Grad]> {
  let summary = "Elementwise GELU, erf or tanh form";
  let description = [{
    `approximate = #dlc.approximate<none>` (default) computes
    `x/2 * (1 + erf(x/sqrt(2)))`; `approximate = #dlc.approximate<tanh>`
    computes
    `x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`, like PyTorch's
    `nn.GELU(approximate=...)`.

    ```mlir
    %r = dlc.gelu %x {approximate = #dlc.approximate<tanh>} : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input,
                       DefaultValuedAttr<Dlc_GeluApproximationAttr,
                                         "::mlir::dlc::GeluApproximation::none">:$approximate);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

class Dlc_SoftmaxLikeOp<string mnemonic, string what>
    : Dlc_Op<mnemonic, [Pure, Dlc_Grad, AllTypesMatch<["input", "result"]>]> {
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

def Dlc_LayerNormOp : Dlc_Op<"layer_norm", [Pure, Dlc_Grad, AllTypesMatch<["input", "result"]>]> {
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

def Dlc_BatchNormOp : Dlc_Op<"batch_norm", [Pure, Dlc_Grad, AllTypesMatch<["input", "result"]>]> {
  let summary = "Batch normalisation with running statistics (inference form)";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias` per channel, where
    `input` is `[N, C, ...]` and `scale`, `bias`, `mean` and `var` are `[C]`:
    PyTorch's `nn.BatchNorm2d` in `eval()` mode, ONNX `BatchNormalization`
    with `training_mode = 0`. The statistics are the running ones passed as
    operands; the op never updates them.

    Gradients flow to the input, `scale` and `bias` only: `mean` and `var`
    are running statistics, not trained (a training step leaves them as
    they are, like a frozen BatchNorm in PyTorch).

    ```mlir
    %y = dlc.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f64}
        : (tensor<4x8x14x14xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
        -> tensor<4x8x14x14xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$scale,
                       Dlc_FloatTensor:$bias, Dlc_FloatTensor:$mean,
                       Dlc_FloatTensor:$var,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $var attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

// The window attributes shared by convolutions and pools. `padding` is
// [top, left, bottom, right] (asymmetric padding, as ONNX has it), the
// others are [height, width].
defvar Dlc_Strides = DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">;
defvar Dlc_Dilations = DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">;
defvar Dlc_Padding = DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">;

def Dlc_Conv2DOp : Dlc_Op<"conv2d", [Pure, Dlc_Grad]> {
  let summary = "2-D convolution (cross-correlation) in NCHW, with an optional fused activation";
  let description = [{
    PyTorch's `nn.Conv2d` and ONNX `Conv` on 2-D images: `input` is
    `[N, C, H, W]`, `weight` is `[O, C/groups, KH, KW]` (PyTorch's layout),
    the optional `bias` is `[O]`, the result is `[N, O, OH, OW]` with

        OH = floor((H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) / stride_h) + 1

    (and likewise OW with `pad_left`, `pad_right`). `strides` and
    `dilations` are `[h, w]` (default `[1, 1]`); `padding` is
    `[top, left, bottom, right]` (default zeros; the padded elements are
    zero). `groups` splits the channels: output channel `o` reads the
    input channels of group `o / (O / groups)`. `activation`
    (`#dlc.activation`: `none`, `relu`, `gelu`, `gelu_tanh`, `tanh`,
    `sigmoid`) is applied to the result; `dlc-fuse-layers` sets it when it
    folds the following activation op into the layer.

    ```mlir
    %y = dlc.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>, activation = #dlc.activation<relu>}
        : (tensor<4x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<4x8x16x16xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$weight,
                       Optional<Dlc_FloatTensor>:$bias,
                       Dlc_Strides:$strides, Dlc_Padding:$padding,
                       Dlc_Dilations:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       DefaultValuedAttr<Dlc_ActivationAttr,
                                         "::mlir::dlc::Activation::none">:$activation);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_MaxPool2DOp : Dlc_Op<"max_pool2d", [Pure, Dlc_Grad]> {
  let summary = "2-D max pooling in NCHW";
  let description = [{
    The maximum over each `kernel = [KH, KW]` window of the `[N, C, H, W]`
    input; the result is `[N, C, OH, OW]`, sized like `dlc.conv2d`'s (floor
    mode; ceil mode is not supported). `strides` and `dilations` are
    `[h, w]` (default `[1, 1]`, ONNX's defaults: PyTorch's default stride is
    the kernel and must be spelled out); `padding` is
    `[top, left, bottom, right]` and pads with -inf, so padding never wins.
    A NaN in a window makes the result NaN (PyTorch's semantics). The
    gradient goes to the first maximum of each window in row-major order.

    ```mlir
    %p = dlc.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<4x8x16x16xf32>) -> tensor<4x8x8x8xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       Dlc_Strides:$strides, Dlc_Padding:$padding,
                       Dlc_Dilations:$dilations);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_AvgPool2DOp : Dlc_Op<"avg_pool2d", [Pure, Dlc_Grad]> {
  let summary = "2-D average pooling in NCHW";
  let description = [{
    The mean over each `kernel = [KH, KW]` window of the `[N, C, H, W]`
    input; the result is `[N, C, OH, OW]`, sized like `dlc.conv2d`'s (floor
    mode, no dilation). `strides` is `[h, w]` (default `[1, 1]`), `padding`
    `[top, left, bottom, right]`. With `count_include_pad = false` (the
    default, ONNX `AveragePool`'s) the sum is divided by the number of
    window elements inside the input; with `true` (PyTorch `AvgPool2d`'s
    default) by `KH * KW`, the padded zeros counted. ONNX
    `GlobalAveragePool` is this op with `kernel = [H, W]`.

    ```mlir
    %p = dlc.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                            padding = array<i64: 1, 1, 1, 1>, count_include_pad = true}
        : (tensor<4x8x16x16xf32>) -> tensor<4x8x8x8xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       Dlc_Strides:$strides, Dlc_Padding:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_Conv2DGradInputOp : Dlc_Op<"conv2d_grad_input", [Pure, Dlc_Grad]> {
  let summary = "Gradient of a 2-D convolution with respect to its input";
  let description = [{
    From the gradient `grad` (`[N, O, OH, OW]`) of a `dlc.conv2d`'s result
    and its `weight` (`[O, C/groups, KH, KW]`), the gradient of its input,
    of the result's type `[N, C, H, W]`; the attributes are the
    convolution's. It is the transposed convolution (ONNX's
    `ConvTranspose` imports as this op): the lowering spreads
    `grad` out by the strides, pads it, and convolves it with the flipped
    weight through the same matmul path as the forward convolution. Its
    own gradients are the convolution of the result's gradient (for
    `grad`) and `dlc.conv2d_grad_weight` (for `weight`).

    ```mlir
    %dx = dlc.conv2d_grad_input %g, %w {strides = array<i64: 2, 2>}
        : (tensor<4x8x7x7xf32>, tensor<8x3x3x3xf32>) -> tensor<4x3x16x16xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$grad, Dlc_FloatTensor:$weight,
                       Dlc_Strides:$strides, Dlc_Padding:$padding,
                       Dlc_Dilations:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $weight attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_Conv2DGradWeightOp : Dlc_Op<"conv2d_grad_weight", [Pure]> {
  let summary = "Gradient of a 2-D convolution with respect to its weight";
  let description = [{
    From the `input` (`[N, C, H, W]`) of a `dlc.conv2d` and the gradient
    `grad` (`[N, O, OH, OW]`) of its result, the gradient of its weight, of
    the result's type `[O, C/groups, KH, KW]`; the attributes are the
    convolution's. With one group it is one matmul of the gradient
    `[O, N*OH*OW]` with the input's patches `[N*OH*OW, C*KH*KW]`.

    ```mlir
    %dw = dlc.conv2d_grad_weight %x, %g {padding = array<i64: 1, 1, 1, 1>}
        : (tensor<4x3x16x16xf32>, tensor<4x8x16x16xf32>) -> tensor<8x3x3x3xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$grad,
                       Dlc_Strides:$strides, Dlc_Padding:$padding,
                       Dlc_Dilations:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_MaxPool2DGradOp : Dlc_Op<"max_pool2d_grad",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Gradient of 2-D max pooling";
  let description = [{
    From the `input` of a `dlc.max_pool2d` and the gradient `grad` of its
    result, the gradient of the input: each window's gradient goes to the
    position of its maximum, the first one in row-major order when several
    are equal (PyTorch's rule; a NaN counts as the maximum); positions that
    are no window's maximum get zero. The maxima are recomputed, not kept.

    ```mlir
    %dx = dlc.max_pool2d_grad %x, %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<4x8x16x16xf32>, tensor<4x8x8x8xf32>) -> tensor<4x8x16x16xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$grad,
                       DenseI64ArrayAttr:$kernel, Dlc_Strides:$strides,
                       Dlc_Padding:$padding, Dlc_Dilations:$dilations);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_AvgPool2DGradOp : Dlc_Op<"avg_pool2d_grad", [Pure]> {
  let summary = "Gradient of 2-D average pooling";
  let description = [{
    From the gradient `grad` of a `dlc.avg_pool2d`'s result, the gradient
    of its input (the result's type): each window's gradient, divided by
    the window's divisor, is added to every input position of the window.

    ```mlir
    %dx = dlc.avg_pool2d_grad %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<4x8x8x8xf32>) -> tensor<4x8x16x16xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$grad, DenseI64ArrayAttr:$kernel,
                       Dlc_Strides:$strides, Dlc_Padding:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Dlc_ReshapeOp : Dlc_Op<"reshape", [Pure, Dlc_Grad]> {
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

def Dlc_TransposeOp : Dlc_Op<"transpose", [Pure, Dlc_Grad]> {
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

def Dlc_ConcatOp : Dlc_Op<"concat", [Pure, Dlc_Grad]> {
  let summary = "Joins tensors along one dimension";
  let description = [{
    The inputs, in order, along dimension `dim` (non-negative); they have
    one rank and element type and equal sizes in every other dimension.
    ONNX's `Concat` on values (SqueezeNet's Fire modules, ShuffleNet's
    branches, a ViT's class token) becomes this op.

    ```mlir
    %c = dlc.concat %a, %b {dim = 1 : i64} : (tensor<2x3x8xf32>, tensor<2x5x8xf32>) -> tensor<2x8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Dlc_SliceOp : Dlc_Op<"slice", [Pure, Dlc_Grad]> {
  let summary = "A strided window of a tensor";
  let description = [{
    `result[j] = input[offsets + j * strides]` for every index `j` of the
    result, whose type gives the window's sizes; offsets are non-negative,
    strides non-zero (a negative one walks backwards from the offset: a
    reversal), and the window lies inside the input. ONNX's `Slice` and
    `Split` on values become this op.

    ```mlir
    %s = dlc.slice %x {offsets = array<i64: 0, 4>, strides = array<i64: 1, 2>} : (tensor<2x12xf32>) -> tensor<2x4xf32>
    ```

    Canonicalization: a slice of the whole input is the input; a band of a
    concat along its dimension (unit strides, whole in every other
    dimension) is the concat of the inputs' parts it covers; a concat of
    bands of one tensor that lie side by side is one band. Together they
    undo a reordering of a weight's blocks that is reordered back (the
    gates of an LSTM or GRU that PyTorch's exporter writes in ONNX's order
    and the importer reads in PyTorch's), which would otherwise run on
    every call.
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Dlc_SliceGradOp : Dlc_Op<"slice_grad", [Pure, Dlc_Grad]> {
  let summary = "The gradient of dlc.slice: a window placed into zeros";
  let description = [{
    The inverse placement of `dlc.slice`: a zero tensor of the result's
    type with `grad[j]` at `offsets + j * strides`. It is also ONNX's zero
    `Pad` (strides 1); its gradient is the `dlc.slice` of the same window.

    ```mlir
    %g = dlc.slice_grad %d {offsets = array<i64: 0, 4>, strides = array<i64: 1, 2>} : (tensor<2x4xf32>) -> tensor<2x12xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$grad, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_WhereOp : Dlc_Op<"where", [Pure, Dlc_Grad]> {
  let summary = "Elementwise choice between two tensors (NumPy broadcasting)";
  let description = [{
    `result = condition != 0 ? lhs : rhs`, the three operands broadcast to
    the result's shape (NumPy rules). The condition is a float or integer
    tensor (an attention mask: a causal `triu` as 0 and 1); it gets no
    gradient. ONNX's `Where` and PyTorch's `masked_fill` become this op.

    ```mlir
    %r = dlc.where %mask, %ninf, %scores : (tensor<8x8xf32>, tensor<f32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$condition, Dlc_FloatTensor:$lhs,
                       Dlc_FloatTensor:$rhs);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_CompareOp : Dlc_Op<"compare", [Pure]> {
  let summary = "Elementwise comparison into booleans (NumPy broadcasting)";
  let description = [{
    `result = lhs PREDICATE rhs` elementwise, as `i1`, the operands (floats
    or integers of one element type) broadcast to the result's shape.
    Floats compare as IEEE ordered comparisons, except `ne`, which is true
    for NaN (as in PyTorch and ONNX's `Not(Equal)`); integers compare
    signed, booleans unsigned. ONNX's `Equal`, `Less`, `Greater`,
    `LessOrEqual` and `GreaterOrEqual` on values become this op, and a
    `Cast` to bool its `ne` against zero. It has no gradient: its result
    is a mask (the condition of a `dlc.where`, or cast to a float).

    ```mlir
    %pad = dlc.compare eq, %ids, %zero : (tensor<4x16xi64>, tensor<i64>) -> tensor<4x16xi1>
    ```
  }];
  let arguments = (ins Dlc_ComparePredicate:$predicate, AnyRankedTensor:$lhs,
                       AnyRankedTensor:$rhs);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_LogicalOp : Dlc_Op<"logical", [Pure]> {
  let summary = "Elementwise and, or, xor of booleans (NumPy broadcasting)";
  let description = [{
    `result = lhs KIND rhs` on `i1` tensors broadcast to the result's shape.
    ONNX's `And`, `Or` and `Xor` on values become this op, and `Not` an
    `xor` with true.

    ```mlir
    %keep = dlc.logical and, %a, %b : (tensor<4x16xi1>, tensor<16xi1>) -> tensor<4x16xi1>
    ```
  }];
  let arguments = (ins Dlc_LogicalKind:$kind, RankedTensorOf<[I1]>:$lhs,
                       RankedTensorOf<[I1]>:$rhs);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = "$kind `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_IntArithOp : Dlc_Op<"int_arith", [Pure]> {
  let summary = "Elementwise add, sub, mul of integers (NumPy broadcasting)";
  let description = [{
    `result = lhs KIND rhs` on integer tensors of one element type,
    broadcast to the result's shape, wrapping on overflow as PyTorch's and
    ONNX's integer tensors do. ONNX's `Add`, `Sub` and `Mul` of integer
    values become this op (the position ids exporters compute from an
    attention mask: `cumsum(mask) * mask + pad`); it has no gradient.

    ```mlir
    %p = dlc.int_arith mul, %c, %m : (tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi32>
    ```
  }];
  let arguments = (ins Dlc_IntArithKind:$kind, Dlc_IntTensor:$lhs,
                       Dlc_IntTensor:$rhs);
  let results = (outs Dlc_IntTensor:$result);
  let assemblyFormat = "$kind `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_CumSumOp : Dlc_Op<"cumsum", [Pure, SameOperandsAndResultType]> {
  let summary = "Running sums of integers along one axis";
  let description = [{
    `result[.., i, ..] = sum of input[.., j, ..]` over `j <= i` (`j < i`
    when `exclusive`; `j >= i`, or `j > i`, when `reverse`), wrapping on
    overflow: ONNX's `CumSum` of integer values (position ids from a mask).
    It has no gradient.

    ```mlir
    %c = dlc.cumsum %m {axis = 1 : i64} : tensor<2x8xi32>
    ```
  }];
  let arguments = (ins Dlc_IntTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Dlc_IntTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dlc_GatherOp : Dlc_Op<"gather", [Pure, Dlc_Grad]> {
  let summary = "Rows of a table at integer indices (an embedding lookup)";
  let description = [{
    `result[p, d...] = table[indices[p], d...]` for every index `p` of
    `indices` (any rank, integer elements): the result's shape is the
    indices' shape followed by the table's trailing dimensions. A negative
    index counts from the end, as in PyTorch and ONNX; an index outside
    `[-rows, rows)` reads the nearest row (the generated code has no way to
    raise). `nn.Embedding` and ONNX's `Gather` of a weight by token ids
    become this op; its gradient is `dlc.gather_grad`.

    ```mlir
    %e = dlc.gather %w, %ids : (tensor<50x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$table, Dlc_IntTensor:$indices);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$table `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_GatherGradOp : Dlc_Op<"gather_grad", [Pure]> {
  let summary = "The gradient of dlc.gather: rows added up at their indices";
  let description = [{
    A zero tensor of the table's type to which every row `grad[p]` is
    added at row `indices[p]` (a scatter-add; repeated indices add up),
    with the index rule of `dlc.gather`.

    ```mlir
    %g = dlc.gather_grad %d, %ids : (tensor<2x8x32xf32>, tensor<2x8xi64>) -> tensor<50x32xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$grad, Dlc_IntTensor:$indices);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Dlc_ReductionOp<string mnemonic, string what> : Dlc_Op<mnemonic, [Pure, Dlc_Grad]> {
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

def Dlc_GatherElementsOp : Dlc_Op<"gather_elements", [Pure, Dlc_Grad]> {
  let summary = "Elements of a tensor at integer indices along one axis";
  let description = [{
    `result[i...] = input[i_0, ..., indices[i...], ..., i_n]`, the index
    taking the place of dimension `axis`: ONNX's `GatherElements` and
    PyTorch's `torch.gather`. `indices` has the input's rank and, but along
    `axis`, its shape; the result has the indices' shape. A negative index
    counts from the end; one outside `[-dim, dim)` reads the nearest
    element (the generated code has no way to raise). Its gradient is
    `dlc.gather_elements_grad`.

    ```mlir
    %r = dlc.gather_elements %x, %idx {axis = 1 : i64} : (tensor<4x10xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_IntTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_GatherElementsGradOp : Dlc_Op<"gather_elements_grad", [Pure]> {
  let summary = "The gradient of dlc.gather_elements: a scatter-add";
  let description = [{
    A zero tensor of the input's type to which every `grad[i...]` is added
    at the element `dlc.gather_elements` read it from (repeated indices add
    up, in index order along `axis`).

    ```mlir
    %g = dlc.gather_elements_grad %d, %idx {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x3xi64>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$grad, Dlc_IntTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_SumOp : Dlc_ReductionOp<"sum", "the sum">;
def Dlc_MeanOp : Dlc_ReductionOp<"mean", "the mean">;
// NaN propagates, and the gradient is shared evenly among the elements
// equal to the result, as PyTorch's amax/amin do (dlc.extremum_grad).
def Dlc_MaxOp : Dlc_ReductionOp<"max", "the maximum">;
def Dlc_MinOp : Dlc_ReductionOp<"min", "the minimum">;

def Dlc_ExtremumGradOp : Dlc_Op<"extremum_grad",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "The gradient of dlc.max and dlc.min";
  let description = [{
    `result = input == extremum (broadcast) ? grad / ties : 0`, where
    `extremum` and `grad` have the reduction's result shape (`dims`,
    `keepdim` as in the reduction) and `ties` counts the elements of each
    reduced group equal to its extremum: PyTorch's amax/amin gradient.

    ```mlir
    %d = dlc.extremum_grad %x, %m, %g {dims = array<i64: 1>} : (tensor<4x6xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x6xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$extremum,
                       Dlc_FloatTensor:$grad, DenseI64ArrayAttr:$dims,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $extremum `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Dlc_MseLossOp : Dlc_Op<"mse_loss", [Pure, Dlc_Grad]> {
  let summary = "Mean (or summed) squared error";
  let description = [{
    `mean((input - target)^2)` (or the sum with
    `reduction = #dlc.reduction<sum>`), a
    0-d tensor of the operands' element type; the operands have the same
    type (PyTorch's `nn.MSELoss`).

    ```mlir
    %l = dlc.mse_loss %p, %t : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$target,
                       DefaultValuedAttr<Dlc_LossReductionAttr,
                                         "::mlir::dlc::LossReduction::mean">:$reduction);
  let results = (outs Dlc_ScalarFloatTensor:$result);
  let assemblyFormat = "$input `,` $target attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dlc_CrossEntropyOp : Dlc_Op<"cross_entropy", [Pure, Dlc_Grad]> {
  let summary = "Cross-entropy of logits against integer class labels";
  let description = [{
    `logits` is `[N, C]`, `labels` is `[N]` of integer class indices in
    `[0, C)`; the result is the mean (or with `reduction = #dlc.reduction<sum>`
    the sum)
    over the batch of `-log_softmax(logits)[n, labels[n]]`, computed in the
    numerically stable log-sum-exp form (PyTorch's `nn.CrossEntropyLoss`).
    A row whose label is `ignore_index` (PyTorch's default, -100) counts
    for nothing: it adds no loss, and the mean is over the other rows (NaN
    when there are none, as in PyTorch). Other labels out of range are a
    contract violation: they are clamped into range instead of reading out
    of bounds. A mean given `count` divides by it instead of by its own
    rows' count: in a data-parallel step, `dlc-insert-gradient-allreduce`
    passes the mean count over the ranks, so that the loss and its
    gradient are those of the global batch even when the ranks ignore
    different numbers of rows.

    ```mlir
    %l = dlc.cross_entropy %logits, %y : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
    %m = dlc.cross_entropy %logits, %y count %c
        : (tensor<64x10xf32>, tensor<64xi64>, tensor<f32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$logits, Dlc_IntTensor:$labels,
                       Optional<Dlc_ScalarFloatTensor>:$count,
                       DefaultValuedAttr<Dlc_LossReductionAttr,
                                         "::mlir::dlc::LossReduction::mean">:$reduction,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Dlc_ScalarFloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels (`count` $count^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_CountLabelsOp : Dlc_Op<"count_labels", [Pure]> {
  let summary = "The number of class labels that are not ignored";
  let description = [{
    The number of elements of the 1-D `labels` that are not `ignore_index`,
    as a 0-d float tensor: the divisor of a mean `dlc.cross_entropy`.
    `dlc-insert-gradient-allreduce` averages it over the ranks of a
    data-parallel step and passes it to the loss as its `count`.

    ```mlir
    %c = dlc.count_labels %y : (tensor<64xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Dlc_IntTensor:$labels,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Dlc_ScalarFloatTensor:$result);
  let assemblyFormat = "$labels attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Helpers of the training step
//===----------------------------------------------------------------------===//

def Dlc_FillOp : Dlc_Op<"fill", [Pure]> {
  let summary = "A tensor with every element equal to a constant";
  let description = [{
    `dlc-build-train-step` seeds the backward pass with the gradient of the
    loss with respect to itself, `dlc.fill 1.0 : tensor<f32>`. An integer
    fill (a constant the ONNX importer compares a value with) must hold an
    integer of the element type, at most 2^53 in magnitude (a double holds
    those exactly).

    ```mlir
    %one = dlc.fill 1.000000e+00 : tensor<f32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs AnyTypeOf<[Dlc_FloatTensor, Dlc_IntTensor]>:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dlc_ScaleOp : Dlc_Op<"scale", [Pure, SameOperandsAndResultType, Dlc_Grad]> {
  let summary = "Multiplies every element by a compile-time constant";
  let description = [{
    `input * factor`; the gradients of means and mean-reduced losses use it.

    ```mlir
    %h = dlc.scale %g, 5.000000e-01 : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, F64Attr:$factor);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $factor attr-dict `:` type($result)";
}

def Dlc_BroadcastToOp : Dlc_Op<"broadcast_to", [Pure, Dlc_Grad]> {
  let summary = "Broadcasts a tensor to a larger shape (NumPy rules)";
  let description = [{
    Repeats the input along the dimensions where it has size 1 or that it
    lacks on the left, like `numpy.broadcast_to`; the gradient of a sum.

    ```mlir
    %b = dlc.broadcast_to %s : (tensor<4x1xf32>) -> tensor<4x6xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dlc_ActivationGradOp : Dlc_Op<"activation_grad",
    [Pure, AllTypesMatch<["input", "grad", "result"]>]> {
  let summary = "Gradient of an activation, recomputed from its input";
  let description = [{
    `grad * f'(input)` for the activation `f` named by `activation`
    (`#dlc.activation`: `relu`, `gelu`, `gelu_tanh`, `tanh`, `sigmoid`),
    where `input` is the value the activation was applied to. The
    derivative is recomputed elementwise from the input (PyTorch's
    formulas: `relu`: `grad` where `input > 0`, else 0; `tanh`:
    `grad * (1 - tanh(x)^2)`; `sigmoid`: `grad * s(1 - s)`; `gelu`:
    `grad * (Phi(x) + x phi(x))`; `gelu_tanh`: the derivative of the tanh
    form).

    ```mlir
    %dz = dlc.activation_grad %z, %dh {activation = #dlc.activation<relu>} : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$grad,
                       Dlc_ActivationAttr:$activation);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dlc_CrossEntropyGradOp : Dlc_Op<"cross_entropy_grad",
    [Pure, AllTypesMatch<["logits", "result"]>]> {
  let summary = "Gradient of cross-entropy with respect to the logits";
  let description = [{
    `(softmax(logits) - onehot(labels)) * grad`, divided by the number of
    rows whose label is not `ignore_index` for the `mean` reduction, and
    zero on those rows; `grad` is the 0-d gradient of the loss. Other
    labels are clamped into `[0, C)` like in `dlc.cross_entropy`. A mean
    given `count` divides by it instead, like the loss it differentiates.

    ```mlir
    %dl = dlc.cross_entropy_grad %logits, %y, %g
        : (tensor<64x10xf32>, tensor<64xi64>, tensor<f32>) -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$logits, Dlc_IntTensor:$labels,
                       Dlc_ScalarFloatTensor:$grad,
                       Optional<Dlc_ScalarFloatTensor>:$count,
                       DefaultValuedAttr<Dlc_LossReductionAttr,
                                         "::mlir::dlc::LossReduction::mean">:$reduction,
                       DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Dlc_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $grad (`count` $count^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_LayerNormGradOp : Dlc_Op<"layer_norm_grad",
    [Pure, AllTypesMatch<["input", "grad", "input_grad"]>,
     AllTypesMatch<["weight", "weight_grad", "bias_grad"]>]> {
  let summary = "Gradients of layer normalisation";
  let description = [{
    From the input `x` of a `dlc.layer_norm`, its `weight` and the gradient
    `grad` of its result, computes the gradients of the input, the weight
    and the bias. The row statistics are recomputed, not stored:
    `xhat = (x - mean) * rstd`, `dy = grad * weight`,
    `dx = rstd * (dy - mean(dy) - xhat * mean(dy * xhat))`,
    `dweight = sum(grad * xhat)`, `dbias = sum(grad)` over the leading
    dimensions.

    ```mlir
    %dx, %dw, %db = dlc.layer_norm_grad %x, %w, %g {epsilon = 1.0e-05 : f64}
        : (tensor<6x32xf32>, tensor<32xf32>, tensor<6x32xf32>)
        -> (tensor<6x32xf32>, tensor<32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins Dlc_FloatTensor:$input, Dlc_FloatTensor:$weight,
                       Dlc_FloatTensor:$grad,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Dlc_FloatTensor:$input_grad,
                      Dlc_FloatTensor:$weight_grad,
                      Dlc_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $input `,` $weight `,` $grad attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_OptimizerUpdateOp : Dlc_Op<"optimizer_update",
    [Pure, AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "One optimizer step over all parameters, fused";
  let description = [{
    Applies one step of the optimizer described by `config` (the
    `dlc.optimizer` dictionary: `kind`, a `#dlc.optimizer` (`sgd`, `adam`
    or `adamw`), and PyTorch's hyperparameters) to every parameter at
    once, like PyTorch's fused optimizers. `step` is the 0-d count of
    steps taken so far; `params` and `grads` pair up; `states` holds the
    optimizer state grouped by kind, one tensor per parameter in each
    group: Adam and AdamW `exp_avg...` then `exp_avg_sq...`, SGD with
    momentum `momentum_buffer...`, plain SGD nothing.

    The results are the new step count, the new parameters and the new
    states, in operand order.

    With `scaler(%scale, %growth_tracker)` (fp16 loss scaling, added by
    `dlc-insert-loss-scaling`), the gradients are those of the loss times
    the scale: they are unscaled, one check over all of them decides
    whether the step runs, and `torch.amp.GradScaler`'s update follows (an
    overflow skips the step — parameters, states and step count keep their
    bits — and halves the scale; 2000 finite steps in a row double it). A
    zero scale state means `config.init_scale`. Three more results: the new
    scale, the new growth tracker, and `skipped` (a 0-d `i32`, 1 when the
    step was skipped). The semantics are PyTorch's
    (`torch.optim.SGD`, `Adam`, `AdamW`, single-tensor form): bias
    correction uses `beta ** step` in double precision, SGD's first step
    stores the gradient as the momentum buffer.

    ```mlir
    %r:7 = dlc.optimizer_update step(%s : tensor<f32>)
        params(%w, %b : tensor<4x8xf32>, tensor<4xf32>)
        grads(%gw, %gb : tensor<4x8xf32>, tensor<4xf32>)
        states(%mw, %mb, %vw, %vb : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>)
        config {kind = #dlc.optimizer<adam>, lr = 1.0e-03 : f64, betas = [0.9, 0.999],
                eps = 1.0e-08 : f64, weight_decay = 0.0 : f64, amsgrad = false}
    ```
  }];
  let arguments = (ins Dlc_ScalarFloatTensor:$step,
                       Variadic<Dlc_FloatTensor>:$params,
                       Variadic<Dlc_FloatTensor>:$grads,
                       Variadic<Dlc_FloatTensor>:$states,
                       Variadic<Dlc_ScalarFloatTensor>:$scaler,
                       DictionaryAttr:$config);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    `step` `(` $step `:` type($step) `)`
    `params` `(` $params `:` type($params) `)`
    `grads` `(` $grads `:` type($grads) `)`
    `states` `(` ($states^ `:` type($states))? `)`
    (`scaler` `(` $scaler^ `:` type($scaler) `)`)?
    `config` $config attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of state tensors per parameter: 2 for Adam and AdamW, 1
    /// for SGD with momentum, 0 for plain SGD.
    static unsigned statesPerParam(::mlir::DictionaryAttr config);
    ::mlir::Value getNewStep() { return getResults()[0]; }
    ::mlir::ValueRange getNewParams() {
      return getResults().slice(1, getParams().size());
    }
    ::mlir::ValueRange getNewStates() {
      return getResults().slice(1 + getParams().size(), getStates().size());
    }
    /// With a scaler: the new scale, the new growth tracker, `skipped`.
    ::mlir::ValueRange getScalerResults() {
      return getResults().drop_front(1 + getParams().size() +
                                     getStates().size());
    }
  }];
}

def Dlc_AssignOp : Dlc_Op<"assign",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemWrite]>]> {
  let summary = "Writes a new value into a model parameter";
  let description = [{
    Stores `value` into the `dlc.parameter` named by `name` when the entry
    returns; reads of the parameter in the same function see the old value.
    The training step ends with one `dlc.assign` per updated parameter and
    optimizer state. The lowering writes the value into the parameter's
    buffer in place.

    ```mlir
    dlc.assign @"fc1.weight", %w1 : tensor<256x784xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name, Dlc_FloatTensor:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

def Dlc_AllReduceOp : Dlc_Op<"all_reduce",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Sums or averages tensors over every rank of the job";
  let description = [{
    Every rank of a data-parallel job calls it with tensors of the same
    types; each gets the element-wise sum (`#dlc.reduction<sum>`) or mean
    (`#dlc.reduction<mean>`) over the ranks. The inputs form one bucket:
    one collective call of the runtime's communicator carries them all.
    `dlc-insert-gradient-allreduce` inserts it between the backward pass
    and the optimizer update.

    On tensors it has one result per input, of the input's type. One-shot
    bufferization turns it into its buffer form (memrefs, no results),
    which reduces the buffers in place; `dlc-lower-collectives` lowers that
    to calls of libdlcrt (`docs/distributed.md`). It has side effects (a
    collective): it is never removed, merged or reordered with another.

    ```mlir
    %g:2 = dlc.all_reduce %gw, %gb {reduction = #dlc.reduction<mean>}
        : tensor<4x8xf32>, tensor<4xf32>
    dlc.all_reduce %bw, %bb {reduction = #dlc.reduction<mean>}
        : memref<4x8xf32>, memref<4xf32>
    ```
  }];
  let arguments = (ins
      Variadic<AnyTypeOf<[Dlc_FloatTensor, MemRefOf<[AnyFloat]>]>>:$inputs,
      DefaultValuedAttr<Dlc_LossReductionAttr,
                        "::mlir::dlc::LossReduction::mean">:$reduction);
  let results = (outs Variadic<Dlc_FloatTensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

/// The collectives of a sharded optimizer (`dlc-shard-optimizer-state`):
/// each pairs its `inputs` with `inits` of the same element type, one side
/// whole tensors, the other their shards, and writes the `inits`. A shard
/// of a tensor of `n` elements over `ranks` ranks is a 1-D tensor of
/// `ceil(n / ranks)` elements: rank `r` holds the row-major elements
/// `[r * c, (r + 1) * c)` of the whole, the ones past its end are zero. On
/// tensors each has one result per init, of the init's type (the init
/// written); the buffer form (memrefs) has no results.
class Dlc_ShardingOp<string mnemonic, list<Trait> traits = []>
    : Dlc_Op<mnemonic, traits # [AttrSizedOperandSegments,
                                 DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let results = (outs Variadic<Dlc_FloatTensor>:$results);
  let assemblyFormat = [{
    $inputs `into` $inits attr-dict `:` type($inputs) `into` type($inits)
  }];
  let hasVerifier = 1;
}

def Dlc_ReduceScatterOp : Dlc_ShardingOp<"reduce_scatter"> {
  let summary = "Reduces tensors over the ranks, each rank keeping its shard";
  let description = [{
    The sum (`#dlc.reduction<sum>`) or mean (`mean`) over the ranks of
    every input, like `dlc.all_reduce`, of which each rank only receives
    its own shard, written into the matching init. The inputs form one
    bucket: one collective call carries them all. A sharded optimizer
    reduces its gradients with it.

    ```mlir
    %s:2 = dlc.reduce_scatter %gw, %gb into %ew, %eb
        {ranks = 2 : i64, reduction = #dlc.reduction<mean>}
        : tensor<4x8xf32>, tensor<3xf32> into tensor<16xf32>, tensor<2xf32>
    ```
  }];
  let arguments = (ins
      Variadic<AnyTypeOf<[Dlc_FloatTensor, MemRefOf<[AnyFloat]>]>>:$inputs,
      Variadic<AnyTypeOf<[Dlc_FloatTensor, MemRefOf<[AnyFloat]>]>>:$inits,
      ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks,
      DefaultValuedAttr<Dlc_LossReductionAttr,
                        "::mlir::dlc::LossReduction::mean">:$reduction);
}

def Dlc_AllGatherOp : Dlc_ShardingOp<"all_gather"> {
  let summary = "Assembles whole tensors from every rank's shard";
  let description = [{
    Every rank gives its shard of each tensor (the inputs); each init
    receives the whole tensor, the shards of all ranks in rank order. A
    sharded optimizer gathers the updated parameters with it, into the
    parameters' own buffers.

    ```mlir
    %w:2 = dlc.all_gather %sw, %sb into %w, %b {ranks = 2 : i64}
        : tensor<16xf32>, tensor<2xf32> into tensor<4x8xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins
      Variadic<AnyTypeOf<[Dlc_FloatTensor, MemRefOf<[AnyFloat]>]>>:$inputs,
      Variadic<AnyTypeOf<[Dlc_FloatTensor, MemRefOf<[AnyFloat]>]>>:$inits,
      ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks);
}

def Dlc_ShardOp : Dlc_ShardingOp<"shard"> {
  let summary = "This rank's shard of tensors every rank holds whole";
  let description = [{
    Copies the rank's own shard of each input into the matching init,
    without communication (every rank holds the same inputs): a sharded
    optimizer takes its part of the parameters with it.

    ```mlir
    %p = dlc.shard %w into %e {ranks = 2 : i64}
        : tensor<4x8xf32> into tensor<16xf32>
    ```
  }];
  let arguments = (ins
      Variadic<AnyTypeOf<[Dlc_FloatTensor, MemRefOf<[AnyFloat]>]>>:$inputs,
      Variadic<AnyTypeOf<[Dlc_FloatTensor, MemRefOf<[AnyFloat]>]>>:$inits,
      ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks);
}

//===----------------------------------------------------------------------===//
// Precision
//===----------------------------------------------------------------------===//

def Dlc_CastOp : Dlc_Op<"cast", [Pure, Dlc_Grad]> {
  let summary = "Converts a tensor to another floating-point element type";
  let description = [{
    Rounds (to nearest even) or widens every element to the result's
    element type; the shape is kept. `dlc-insert-autocast` inserts casts
    around the ops that compute in 16 bits. A cast that widens and the cast
    back fold away (the round trip is exact); the other order does not (it
    rounds). The input may also be an integer tensor (an attention mask
    given as int64 ids, ONNX's `Cast` to float): each value is converted
    (an `i1` as 0 or 1), and it gets no gradient. An integer converts to
    another integer type too (sign-extended, an `i1` zero-extended, or
    truncated); a float never converts to an integer.

    ```mlir
    %h = dlc.cast %w : tensor<256x784xf32> to tensor<256x784xbf16>
    ```
  }];
  let arguments = (ins AnyTypeOf<[Dlc_FloatTensor, Dlc_IntTensor]>:$input);
  let results = (outs AnyTypeOf<[Dlc_FloatTensor, Dlc_IntTensor]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dlc_LossScaleOp : Dlc_Op<"loss_scale", [Pure, AllTypesMatch<["state", "result"]>]> {
  let summary = "The current fp16 loss scale";
  let description = [{
    The scale that multiplies the loss before the backward pass: the scale
    state, or `init` while the state is still zero (a fresh model or a
    weights-only file). `dlc-insert-loss-scaling` seeds the backward pass
    with it.

    ```mlir
    %s = dlc.loss_scale %state {init = 6.553600e+04 : f64} : tensor<f32>
    ```
  }];
  let arguments = (ins Dlc_ScalarFloatTensor:$state, F64Attr:$init);
  let results = (outs Dlc_ScalarFloatTensor:$result);
  let assemblyFormat = "$state attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

def Dlc_TransferOp : Dlc_Op<"transfer", [Pure, SameOperandsAndResultType]> {
  let summary = "Copies a tensor to another device's memory";
  let description = [{
    The result is `input`, copied to `device`. `dlc-place-devices` inserts
    transfers only at the host boundary of an entry point: inputs from the
    host to the compute device, results back to the host. The operand's
    device (`dlc.device` of its definition) must differ from `device` and
    not share its memory (`host` and `cpu` do).

    The lowering gives a transfer no code of its own: the runtime stages an
    entry's inputs and outputs through its own buffers (one asynchronous
    copy each, on the model's stream; docs/gpu.md).

    ```mlir
    %xd = dlc.transfer %x to <cuda> : tensor<64x784xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Dlc_DeviceAttr:$device);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `to` $device attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // DLC_DIALECT_DLC_IR_DLCOPS_TD
