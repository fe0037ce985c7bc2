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

def DlcFuseLayersPass : Pass<"dlc-fuse-layers", "::mlir::ModuleOp"> {
  let summary = "Fuse a layer's activation into the layer";
  let description = [{
    Folds an elementwise activation (`relu`, `gelu`, `tanh`, `sigmoid`) that
    is the only user of a `dlc.linear` without activation into the linear's
    `activation` attribute, so that the lowering emits the matmul and one
    epilogue loop (bias + activation) instead of separate passes over memory.
    A linear whose result has another user is left alone: fusing would
    force the pre-activation value to be computed twice.

    Before:
    ```mlir
    %h = dlc.linear %x, %w, %b : (...) -> tensor<64x256xf32>
    %r = dlc.relu %h : tensor<64x256xf32>
    ```
    After:
    ```mlir
    %r = dlc.linear %x, %w, %b {activation = "relu"} : (...) -> tensor<64x256xf32>
    ```
  }];
  let dependentDialects = ["::mlir::dlc::DlcDialect"];
}

#endif // DLC_DIALECT_DLC_TRANSFORMS_PASSES_TD
