// A linear layer followed by GELU and layer norm as an ONNX importer emits
// them from torch.onnx.export (opset 13): op by op.
module @decomposed_mlp attributes {dlc.model = "decomposed_mlp"} {
  dlc.parameter @fc.weight : tensor<8x16xf32> {init = #dlc.init<uniform>, bound = 0.25 : f64}
  dlc.parameter @fc.bias : tensor<8xf32> {init = #dlc.init<zeros>}
  dlc.parameter @ln.weight : tensor<8xf32> {init = #dlc.init<ones>}
  dlc.parameter @ln.bias : tensor<8xf32> {init = #dlc.init<zeros>}
  func.func @forward(%x: tensor<4x16xf32> {dlc.name = "x"}) -> (tensor<4x8xf32> {dlc.name = "y"}) attributes {dlc.entry} {
    %w = dlc.param @fc.weight : tensor<8x16xf32>
    %b = dlc.param @fc.bias : tensor<8xf32>
    %h = dlc.linear %x, %w, %b : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %c0 = dlc.fill 1.4142135381698608 : tensor<f32>
    %div = dlc.div %h, %c0 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %erf = dlc.erf %div : tensor<4x8xf32>
    %c1 = dlc.fill 1.0 : tensor<f32>
    %add = dlc.add %erf, %c1 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %mul = dlc.mul %h, %add : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %c2 = dlc.fill 0.5 : tensor<f32>
    %g = dlc.mul %mul, %c2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %lw = dlc.param @ln.weight : tensor<8xf32>
    %lb = dlc.param @ln.bias : tensor<8xf32>
    %m = dlc.mean %g {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    %d = dlc.sub %g, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %sq = dlc.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %v = dlc.mean %sq {dims = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    %eps = dlc.fill 9.999999747378752e-06 : tensor<f32>
    %ve = dlc.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
    %s = dlc.sqrt %ve : tensor<4x1xf32>
    %n = dlc.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %nw = dlc.mul %n, %lw : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %y = dlc.add %nw, %lb : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}
