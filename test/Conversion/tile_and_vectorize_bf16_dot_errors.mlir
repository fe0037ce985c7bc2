// RUN: dlc-opt %s -dlc-tile-and-vectorize="bf16-dot=true register-tile=8,24" -verify-diagnostics -o /dev/null

// The register tile of the kernel must be a multiple of 16 columns.
// expected-error @below {{register-tile: the bf16 dot-product tile takes M rows and a multiple of 16 columns}}
module {
  func.func @bad_tile(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>) {
    linalg.matmul ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xf32>)
    return
  }
}
