// Not valid MLIR.
module {
  func.func @forward( -> {
}
