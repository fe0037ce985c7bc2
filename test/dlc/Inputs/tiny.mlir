// A model written directly in the dlc dialect.
module @tiny attributes {dlc.model = "tiny"} {
  dlc.parameter @w : tensor<2x3xf32> {init = #dlc.init<ones>}
  func.func @forward(%x: tensor<4x3xf32> {dlc.name = "x"}) -> (tensor<4x2xf32> {dlc.name = "y"}) attributes {dlc.entry} {
    %w = dlc.param @w : tensor<2x3xf32>
    %y = dlc.linear %x, %w {activation = #dlc.activation<relu>} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
    return %y : tensor<4x2xf32>
  }
}
