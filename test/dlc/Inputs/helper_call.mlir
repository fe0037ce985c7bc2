// An entry that calls a helper function: the helper is inlined and no
// symbol of it is left in the object.
module {
  func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.entry} {
    %y = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
