//===- Passes.td - dlc dialect transformation passes -------*- tablegen -*-===//
//
// Passes that rewrite the dlc dialect itself, in pipeline order. Each is
// implemented in lib/Dialect/Dlc/Transforms/<Name>.cpp and tested in
// test/Dialect/Dlc/<snake_name>.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_DLC_TRANSFORMS_PASSES_TD
#define DLC_DIALECT_DLC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DlcRaiseDecompositionsPass
    : Pass<"dlc-raise-decompositions", "::mlir::ModuleOp"> {
  let summary = "Fold exported GELU, layer-norm and attention subgraphs back into dlc ops";
  let description = [{
    ONNX exporters (torch.onnx.export) spell GELU, layer norm and
    attention as chains of elementwise ops and matmuls, which an importer
    emits op by op. This pass recognises them and folds them back into
    `dlc.gelu`, `dlc.layer_norm` and `dlc.attention`, so that autocast,
    fusion and the lowering treat an imported model like a native one. It
    runs first in the dlc pipeline.

    Constants are one-element `dlc.fill`s or one-element parameters of role
    `constant` with an embedded value (any rank that broadcasts into
    the result without growing it) matching the exact value within a
    relative 1e-6. `+` and `*` may have their operands in either order. A
    pattern fires only when every intermediate value of the subgraph has no
    user outside it (else the intermediate would be computed twice).

    | subgraph | becomes |
    |---|---|
    | the product of `0.5`, `x` and `1 + erf(x / 1.41421356)` (or `erf(x * 0.70710678)`), in any association | `dlc.gelu %x` |
    | the product of `0.5`, `x` and `1 + tanh(0.79788456 * (x + 0.044715 * x^3))`, `x^3` as `x * (x * x)` or `(x * x) * x` | `dlc.gelu %x {approximate = #dlc.approximate<tanh>}` |
    | `d / sqrt(mean(d * d) + eps)` with `d = x - mean(x)`, both means over the last dimension with `keepdim`, optionally followed by `* weight` and then `+ bias` (`[D]` vectors) | `dlc.layer_norm %x, %weight, %bias {epsilon = eps}`, with `dlc.fill` ones/zeros for a missing weight/bias |
    | `softmax(s * (q @ k^T) + mask, -1) @ v`: the scale `s` a product of one-element constants anywhere on the q, k^T and scores paths (SDPA's `sqrt(scale)` on q and k^T, or a division of the scores); `k^T` a transpose (of any permutation that ends the key's two dims swapped); the matmuls on the batch and heads flattened by reshapes; the mask an `add` or `where(cond, -inf, scores)` (a fill of -inf or at most -1e30), optional | `dlc.attention %q, %k, %v, %mask {scale = s}` at the softmax's rank; a where-mask becomes `where(cond, -inf, 0)` |

    Before:
    ```mlir
    %c = dlc.fill 1.4142135381698608 : tensor<f32>
    %s = dlc.div %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %e = dlc.erf %s : tensor<4x8xf32>
    %one = dlc.fill 1.0 : tensor<f32>
    %a = dlc.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %m = dlc.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %half = dlc.fill 0.5 : tensor<f32>
    %y = dlc.mul %m, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    ```
    After:
    ```mlir
    %y = dlc.gelu %x : tensor<4x8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::dlc::DlcDialect"];
}

def DlcInsertGradientAllreducePass
    : Pass<"dlc-insert-gradient-allreduce", "::mlir::ModuleOp"> {
  let summary = "Data parallelism: average the gradients over the ranks before the update";
  let description = [{
    In every training step built by `dlc-build-train-step`, each gradient
    that the fused `dlc.optimizer_update` reads goes through a
    `dlc.all_reduce` first, so that every rank of a data-parallel job
    applies the same update: the gradient of the global batch. The
    reduction is the loss's (`mean` when the loss is a mean over the batch:
    each rank's loss is the mean over its own rows and the ranks hold
    equal shares; `sum` for a summed loss), as PyTorch's
    DistributedDataParallel averages. The `loss` output is reduced the
    same way, so that every rank returns the loss of the global batch.
    A mean cross entropy, and its gradient, divide by the mean over the
    ranks of the number of rows whose label is not ignored
    (`dlc.count_labels`, reduced by a `dlc.all_reduce` of its own, placed
    where the labels are known): when the ranks ignore different numbers
    of rows, the loss and the gradients are still the global batch's mean
    over its counted rows, as in one process (PyTorch DDP averages each
    rank's own mean instead).

    Gradients are grouped into buckets of at most `bucket-bytes` bytes (a
    larger gradient is a bucket of its own), in reverse parameter order,
    the order in which the backward pass finishes them; each bucket's
    `dlc.all_reduce` is placed right after its last gradient is computed.
    Steps with fp16 loss scaling are refused (the overflow check would see
    one rank's gradients only).

    Before:
    ```mlir
    %l = dlc.mse_loss %p, %y : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<f32>
    ...
    %u:5 = dlc.optimizer_update step(%s : tensor<f32>)
        params(%w, %b : ...) grads(%gw, %gb : ...) states(...) config {...}
    return %l : tensor<f32>
    ```
    After (one bucket):
    ```mlir
    %r:2 = dlc.all_reduce %gb, %gw {reduction = #dlc.reduction<mean>}
        : tensor<1xf32>, tensor<1x4xf32>
    %u:5 = dlc.optimizer_update step(%s : tensor<f32>)
        params(%w, %b : ...) grads(%r#1, %r#0 : ...) states(...) config {...}
    %lr = dlc.all_reduce %l {reduction = #dlc.reduction<mean>} : tensor<f32>
    return %lr : tensor<f32>
    ```
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"26214400",
           "The most bytes of gradients one all-reduce carries (PyTorch DDP's "
           "default of 25 MiB)">,
  ];
  let dependentDialects = ["::mlir::dlc::DlcDialect"];
}

def DlcShardOptimizerStatePass
    : Pass<"dlc-shard-optimizer-state", "::mlir::ModuleOp"> {
  let summary = "ZeRO stage 1: each rank updates and stores its shard of the optimizer";
  let description = [{
    In a data-parallel training step (after `dlc-insert-gradient-allreduce`),
    shards the optimizer over the `ranks` ranks of the job, like ZeRO stage
    1 (DeepSpeed) and PyTorch's `ZeroRedundancyOptimizer`: every bucket of
    gradients is reduce-scattered instead of all-reduced (`dlc.reduce_scatter`,
    same buckets, same places), the fused `dlc.optimizer_update` updates the
    rank's shard of every parameter (`dlc.shard`) with its shard of the
    optimizer state, and the updated shards are gathered back into the
    parameters (`dlc.all_gather`, in the same buckets). Each optimizer-state
    parameter becomes the rank's shard, a 1-D tensor of `ceil(n / ranks)`
    elements marked with `shard_of` and `shard_ranks`, so that the state per
    rank is 1/`ranks` of the whole; the step count stays whole. Every rank
    ends the step with the same parameters, gathered from their owners.

    Before (one bucket):
    ```mlir
    %r:2 = dlc.all_reduce %gb, %gw {reduction = #dlc.reduction<mean>}
        : tensor<3xf32>, tensor<3x4xf32>
    %u:7 = dlc.optimizer_update step(%s : tensor<f32>)
        params(%w, %b : tensor<3x4xf32>, tensor<3xf32>)
        grads(%r#1, %r#0 : tensor<3x4xf32>, tensor<3xf32>)
        states(%m1, %m2, %v1, %v2 : ...) config {...}
    ```
    After (`ranks=2`):
    ```mlir
    %e0 = bufferization.alloc_tensor() : tensor<2xf32>
    %e1 = bufferization.alloc_tensor() : tensor<6xf32>
    %r:2 = dlc.reduce_scatter %gb, %gw into %e0, %e1
        {ranks = 2 : i64, reduction = #dlc.reduction<mean>}
        : tensor<3xf32>, tensor<3x4xf32> into tensor<2xf32>, tensor<6xf32>
    %p:2 = dlc.shard %w, %b into ... {ranks = 2 : i64}
    %u:7 = dlc.optimizer_update step(%s : tensor<f32>)
        params(%p#0, %p#1 : tensor<6xf32>, tensor<2xf32>)
        grads(%r#1, %r#0 : tensor<6xf32>, tensor<2xf32>)
        states(%m1, %m2, %v1, %v2 : tensor<6xf32>, tensor<2xf32>, ...) config {...}
    %g:2 = dlc.all_gather %u#2, %u#1 into %b, %w {ranks = 2 : i64}
        : tensor<2xf32>, tensor<6xf32> into tensor<3xf32>, tensor<3x4xf32>
    ```
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"0",
           "The number of ranks of the job (at least 1)">,
  ];
  let dependentDialects = ["::mlir::dlc::DlcDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def DlcFuseLayersPass : Pass<"dlc-fuse-layers", "::mlir::ModuleOp"> {
  let summary = "Fuse a layer's activation into the layer";
  let description = [{
    Folds an elementwise activation (`relu`, `gelu`, `tanh`, `sigmoid`) that
    is the only user of a `dlc.linear` or `dlc.conv2d` without activation
    into the layer's `activation` attribute, so that the lowering emits the
    matmul and one epilogue loop (bias + activation) instead of separate
    passes over memory.
    A layer whose result has another user is left alone: fusing would
    force the pre-activation value to be computed twice.

    Before:
    ```mlir
    %h = dlc.linear %x, %w, %b : (...) -> tensor<64x256xf32>
    %r = dlc.relu %h : tensor<64x256xf32>
    ```
    After:
    ```mlir
    %r = dlc.linear %x, %w, %b {activation = #dlc.activation<relu>} : (...) -> tensor<64x256xf32>
    ```
  }];
  let dependentDialects = ["::mlir::dlc::DlcDialect"];
}

def DlcPackWeightsPass : Pass<"dlc-pack-weights", "::mlir::ModuleOp"> {
  let summary = "Re-lay out the weights of read-only entries once, not per call";
  let description = [{
    In every entry that only reads the parameters (no `dlc.assign`: the
    forward pass, not the training step), a value computed from parameters
    alone that the lowering would re-lay out on every call becomes a
    parameter of role `#dlc.role<packed>`, computed by a new entry
    `pack_weights` (marked `dlc.pack_weights`) that the runtime runs
    whenever the weights have changed (docs/runtime-abi.md):

    - the weight of a `dlc.linear` of more than 4 rows, which the CPU's
      tiled matmul reads as a `[K, N]` panel: the entry reads
      `dlc.transpose` of a packed `W^T`, which the lowering folds into the
      matmul, so neither the weight nor the input and result are
      transposed per call;
    - the recurrent weight of a `dlc.lstm` or `dlc.gru`, which every step
      reads transposed, the same way;
    - any other computation from parameters alone that ends in a layout
      change (`dlc.transpose`, `dlc.slice`, `dlc.concat`: the gate
      reorder of an exported LSTM);
    - autocast's `dlc.cast` of a weight to bf16 or fp16, kept in the
      weight's own layout: the matmul reads the 16-bit copy in place
      instead of rounding the fp32 weight again on every call.

    Re-laid-out copies are kept while their sum stays within `max-mib`; a
    model whose weights are larger re-lays them out per call as before (the
    memory of a copy of a big model's weights is worth more than the time).
    16-bit copies are made whatever their size: each is half its weight's
    bytes, and rounding per call reads all of the weight's (the
    `--precision=bf16` forward pass of a model too big for the budget would
    otherwise be bound by reading its fp32 weights). A budget of zero packs
    nothing.
    Names are the weight's with `.packed` (and a number when a weight has
    several packed forms).

    Before:
    ```mlir
    func.func @forward(%x: tensor<64x784xf32>) -> tensor<64x256xf32> attributes {dlc.entry} {
      %w = dlc.param @"fc1.weight" : tensor<256x784xf32>
      %y = dlc.linear %x, %w : (tensor<64x784xf32>, tensor<256x784xf32>) -> tensor<64x256xf32>
      return %y : tensor<64x256xf32>
    }
    ```
    After:
    ```mlir
    dlc.parameter @"fc1.weight.packed" : tensor<784x256xf32> {init = #dlc.init<zeros>, role = #dlc.role<packed>}
    func.func @forward(%x: tensor<64x784xf32>) -> tensor<64x256xf32> attributes {dlc.entry} {
      %p = dlc.param @"fc1.weight.packed" : tensor<784x256xf32>
      %w = dlc.transpose %p [1, 0] : (tensor<784x256xf32>) -> tensor<256x784xf32>
      %y = dlc.linear %x, %w : (tensor<64x784xf32>, tensor<256x784xf32>) -> tensor<64x256xf32>
      return %y : tensor<64x256xf32>
    }
    func.func @pack_weights() attributes {dlc.entry, dlc.pack_weights} {
      %w = dlc.param @"fc1.weight" : tensor<256x784xf32>
      %t = dlc.transpose %w [1, 0] : (tensor<256x784xf32>) -> tensor<784x256xf32>
      dlc.assign @"fc1.weight.packed", %t : tensor<784x256xf32>
      return
    }
    ```
  }];
  let options = [
    Option<"maxMiB", "max-mib", "int64_t", /*default=*/"64",
           "The most MiB of packed copies; larger models re-lay out per call">,
  ];
  let dependentDialects = ["::mlir::dlc::DlcDialect",
                           "::mlir::func::FuncDialect"];
}

def DlcBuildTrainStepPass : Pass<"dlc-build-train-step", "::mlir::ModuleOp"> {
  let summary = "Build the training step: forward, loss, backward, optimizer";
  let description = [{
    Adds the entry point `train_step` to a model: it takes the inputs and
    labels of the loss function (`@loss`, marked `dlc.loss`), computes the
    loss, the gradient of the loss with respect to every parameter by
    reverse-mode automatic differentiation, and one optimizer step, and
    returns the loss.

    - The loss is the model's `@loss` function, or, with `loss=mse` or
      `loss=cross_entropy`, that loss applied to the single result of the
      `forward` entry against a new input named by `label` (default `y`).
    - Gradients come from the ops' `DifferentiableOpInterface` rules, in
      reverse order; a value used several times accumulates the gradients
      of its uses. A `dlc.linear` or `dlc.conv2d` with a fused activation is first split so
      that the pre-activation is computed once. Only values that depend on
      a parameter are differentiated. An operand whose rule gives no
      gradient (a batch norm's running mean and variance) passes none on:
      a parameter that receives no gradient is not updated and gets no
      optimizer state.
    - The optimizer is the module's `dlc.optimizer` dictionary, with the
      options given here overriding it (`optimizer` changes the kind and
      starts from that kind's PyTorch defaults). Its state becomes
      `dlc.parameter`s with `role = #dlc.role<optimizer_state>`,
      zero-initialised: `optimizer.step` and, per parameter `P`,
      `optimizer.P.exp_avg` and `optimizer.P.exp_avg_sq` (Adam, AdamW) or
      `optimizer.P.momentum_buffer` (SGD with momentum).
    - All parameters are updated by one `dlc.optimizer_update`, whose
      results are written back with `dlc.assign` at the end of the step.

    The `forward` entry is left as it is: evaluation keeps no activations.

    ```mlir
    func.func @train_step(%x: tensor<16x10xf32> {dlc.name = "x"},
                          %y: tensor<16x1xf32> {dlc.name = "y"})
        -> (tensor<f32> {dlc.name = "loss"}) attributes {dlc.entry, dlc.train_step} {
      ... forward, loss ...
      %one = dlc.fill 1.000000e+00 : tensor<f32>
      ... gradients ...
      %r:N = dlc.optimizer_update step(...) params(...) grads(...) states(...) config {...}
      dlc.assign @fc1.weight, %r#1 : tensor<32x10xf32>
      ...
      return %loss : tensor<f32>
    }
    ```
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"",
           "Loss applied to the forward result instead of the model's own: "
           "mse or cross_entropy">,
    Option<"label", "label", "std::string", /*default=*/"\"y\"",
           "Name of the label input added by the loss option">,
    Option<"labelType", "label-type", "std::string", /*default=*/"\"i64\"",
           "cross_entropy: the element type of the class labels, i64 or "
           "i32">,
    Option<"classDim", "class-dim", "int", /*default=*/"1",
           "cross_entropy on an output of rank 3 or more: the dimension of "
           "the classes, 1 (PyTorch's [N, C, d...]) or -1 ([N, T, C], a "
           "language model's logits); the labels are the output's shape "
           "without it">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"",
           "Optimizer instead of the model's own: sgd, adam or adamw">,
    Option<"lr", "lr", "double", /*default=*/"-1.0",
           "Learning rate (negative: keep the model's)">,
    Option<"momentum", "momentum", "double", /*default=*/"-1.0",
           "SGD momentum (negative: keep the model's)">,
    Option<"dampening", "dampening", "double", /*default=*/"-1.0",
           "SGD dampening (negative: keep the model's)">,
    Option<"nesterov", "nesterov", "int", /*default=*/"-1",
           "SGD Nesterov momentum: 1, 0, or -1 to keep the model's">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Weight decay (negative: keep the model's)">,
    Option<"beta1", "beta1", "double", /*default=*/"-1.0",
           "Adam beta1 (negative: keep the model's)">,
    Option<"beta2", "beta2", "double", /*default=*/"-1.0",
           "Adam beta2 (negative: keep the model's)">,
    Option<"eps", "eps", "double", /*default=*/"-1.0",
           "Adam epsilon (negative: keep the model's)">,
  ];
  let dependentDialects = ["::mlir::dlc::DlcDialect"];
}

def DlcInsertAutocastPass : Pass<"dlc-insert-autocast", "::mlir::ModuleOp"> {
  let summary = "Mixed precision: run the contractions in 16 bits (autocast)";
  let description = [{
    PyTorch's `torch.autocast`, as a compiler pass over every function (the
    entries and the loss function, before the training step is built):

    | ops | compute in |
    |---|---|
    | `linear`, `matmul` | the 16-bit type (`precision`), accumulating in fp32; the result is 16-bit |
    | `softmax`, `log_softmax`, `layer_norm`, `exp`, `log`, `sum`, `mean`, `mse_loss`, `cross_entropy` | fp32 (16-bit operands are widened) |
    | activations, `add`/`sub`/`mul`/`div`, `sqrt`, `erf`, `neg`, reshapes, transposes | its operands' type: 16-bit when all are, else fp32 |
    | every other op (`conv2d`, `max_pool2d`, `avg_pool2d`, `batch_norm`) | fp32 (16-bit operands are widened) |

    Parameters stay fp32 (master weights): a parameter is cast once per
    function, right after it is read, and that cast serves every user (the
    autocast weight-cast cache; CSE merges repeated reads). Results return
    in their declared type. A cast that widens and the cast back fold away
    in canonicalisation.

    ```mlir
    %w = dlc.param @fc1.weight : tensor<256x784xf32>
    %y = dlc.linear %x, %w : (tensor<64x784xf32>, tensor<256x784xf32>) -> tensor<64x256xf32>
    // becomes, with precision=bf16
    %w = dlc.param @fc1.weight : tensor<256x784xf32>
    %wl = dlc.cast %w : tensor<256x784xf32> to tensor<256x784xbf16>
    %xl = dlc.cast %x : tensor<64x784xf32> to tensor<64x784xbf16>
    %y = dlc.linear %xl, %wl : (tensor<64x784xbf16>, tensor<256x784xbf16>) -> tensor<64x256xbf16>
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "The 16-bit type: bf16 or fp16">,
  ];
  let dependentDialects = ["::mlir::dlc::DlcDialect"];
}

def DlcInsertLossScalingPass : Pass<"dlc-insert-loss-scaling", "::mlir::ModuleOp"> {
  let summary = "fp16 training: dynamic loss scaling inside the training step";
  let description = [{
    `torch.amp.GradScaler` as a compiler pass, for the `train_step` built
    by `dlc-build-train-step` (fp16 autocast only: bf16 has fp32's range and
    needs none). The backward pass is seeded with the loss scale instead of
    1 (`dlc.loss_scale`), so every gradient is the scaled one; the fused
    optimizer update gets the scaler (`scaler(...)` of
    `dlc.optimizer_update`): it unscales the gradients, checks all of them
    for infinities and NaNs at once, skips the whole update on an overflow
    (parameters and optimizer state keep their bits, the step count does not
    move) and updates the scale like GradScaler's defaults: init 2^16,
    x0.5 on an overflow, x2 after 2000 finite steps in a row. The scale and
    the growth tracker are optimizer state (`optimizer.loss_scale`,
    `optimizer.growth_tracker`, saved in checkpoints; a zero scale means
    `init-scale`), and `train_step` gets a second result, `skipped` (i32).
  }];
  let options = [
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "The scale a fresh model starts from">,
  ];
  let dependentDialects = ["::mlir::dlc::DlcDialect"];
}

def DlcPlaceDevicesPass : Pass<"dlc-place-devices", "::mlir::ModuleOp"> {
  let summary = "Put every value on a device; transfers only at the host boundary";
  let description = [{
    Places every entry point on the compute device `device` (`cpu` or
    `cuda`): each op of the entry gets `dlc.device = #dlc.device<...>`,
    each `dlc.parameter` too (weights, gradients and optimizer state live on
    the compute device for the model's whole life), and the entry's
    arguments and results are marked `host`, where the caller's buffers are.

    On `cuda`, one `dlc.transfer` brings each used input to the device at
    the top of the entry, and one takes each result (outputs, the loss)
    back to the host just before the return: there are no other transfers.
    On `cpu`, which reads host memory, there are none at all.

    The dialect verifier then rejects any op that reads a value from
    another device's memory, naming the value and both devices. Functions
    that are not entry points are left unplaced. Running the pass on an
    entry that already carries placement is an error.

    Before (`device=cuda`):
    ```mlir
    func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x2xf32> attributes {dlc.entry} {
      %w = dlc.param @w : tensor<2x8xf32>
      %y = dlc.linear %x, %w : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x2xf32>
      return %y : tensor<4x2xf32>
    }
    ```
    After:
    ```mlir
    func.func @forward(%x: tensor<4x8xf32> {dlc.device = #dlc.device<host>})
        -> (tensor<4x2xf32> {dlc.device = #dlc.device<host>}) attributes {dlc.entry} {
      %0 = dlc.transfer %x to <cuda> : tensor<4x8xf32>
      %w = dlc.param @w {dlc.device = #dlc.device<cuda>} : tensor<2x8xf32>
      %y = dlc.linear %0, %w {dlc.device = #dlc.device<cuda>} : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x2xf32>
      %1 = dlc.transfer %y to <host> : tensor<4x2xf32>
      return %1 : tensor<4x2xf32>
    }
    ```
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "The compute device: cpu or cuda">,
  ];
  let dependentDialects = ["::mlir::dlc::DlcDialect"];
}

#endif // DLC_DIALECT_DLC_TRANSFORMS_PASSES_TD
