// GELU (erf and tanh forms) and layer norm (with and without affine) as
// torch 1.13's torch.onnx.export spells them at opset 13, imported op by op
// into the dlc dialect (Pow(d, 2) as d*d, scalar Constants as 0-d fills);
// dlc-raise-decompositions folds them back into dlc.gelu/dlc.layer_norm.
// Also dlc.erf on its own, over a narrow and a wide range.
module @decomposed attributes {dlc.model = "decomposed"} {
  dlc.parameter @ln.weight : tensor<32xf32> {init = #dlc.init<ones>}
  dlc.parameter @ln.bias : tensor<32xf32> {init = #dlc.init<zeros>}
  func.func @forward(%x: tensor<6x32xf32> {dlc.name = "x"})
      -> (tensor<6x32xf32> {dlc.name = "erf"},
          tensor<6x32xf32> {dlc.name = "erf_wide"},
          tensor<6x32xf32> {dlc.name = "gelu"},
          tensor<6x32xf32> {dlc.name = "gelu_tanh"},
          tensor<6x32xf32> {dlc.name = "ln"},
          tensor<6x32xf32> {dlc.name = "ln_plain"}) attributes {dlc.entry} {
    // erf(x), erf(2.5 * x)
    %erf = dlc.erf %x : tensor<6x32xf32>
    %wide = dlc.fill 2.5 : tensor<f32>
    %xw = dlc.mul %x, %wide : (tensor<6x32xf32>, tensor<f32>) -> tensor<6x32xf32>
    %erf_wide = dlc.erf %xw : tensor<6x32xf32>

    // nn.GELU(): Div, Erf, Add, Mul, Mul
    %g_c0 = dlc.fill 1.4142135381698608 : tensor<f32>
    %g_div = dlc.div %x, %g_c0 : (tensor<6x32xf32>, tensor<f32>) -> tensor<6x32xf32>
    %g_erf = dlc.erf %g_div : tensor<6x32xf32>
    %g_c1 = dlc.fill 1.0 : tensor<f32>
    %g_add = dlc.add %g_erf, %g_c1 : (tensor<6x32xf32>, tensor<f32>) -> tensor<6x32xf32>
    %g_mul = dlc.mul %x, %g_add : (tensor<6x32xf32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %g_c2 = dlc.fill 0.5 : tensor<f32>
    %gelu = dlc.mul %g_mul, %g_c2 : (tensor<6x32xf32>, tensor<f32>) -> tensor<6x32xf32>

    // nn.GELU(approximate='tanh')
    %t_mul = dlc.mul %x, %x : (tensor<6x32xf32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %t_mul1 = dlc.mul %x, %t_mul : (tensor<6x32xf32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %t_c0 = dlc.fill 0.044714998453855515 : tensor<f32>
    %t_mul2 = dlc.mul %t_c0, %t_mul1 : (tensor<f32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %t_add = dlc.add %x, %t_mul2 : (tensor<6x32xf32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %t_c1 = dlc.fill 0.79788458347320557 : tensor<f32>
    %t_mul3 = dlc.mul %t_c1, %t_add : (tensor<f32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %t_tanh = dlc.tanh %t_mul3 : tensor<6x32xf32>
    %t_c2 = dlc.fill 1.0 : tensor<f32>
    %t_add1 = dlc.add %t_c2, %t_tanh : (tensor<f32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %t_mul4 = dlc.mul %x, %t_add1 : (tensor<6x32xf32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %t_c3 = dlc.fill 0.5 : tensor<f32>
    %gelu_tanh = dlc.mul %t_c3, %t_mul4 : (tensor<f32>, tensor<6x32xf32>) -> tensor<6x32xf32>

    // nn.LayerNorm(32)
    %w = dlc.param @ln.weight : tensor<32xf32>
    %b = dlc.param @ln.bias : tensor<32xf32>
    %l_mean = dlc.mean %x {dims = array<i64: 1>, keepdim = true} : (tensor<6x32xf32>) -> tensor<6x1xf32>
    %l_sub = dlc.sub %x, %l_mean : (tensor<6x32xf32>, tensor<6x1xf32>) -> tensor<6x32xf32>
    %l_pow = dlc.mul %l_sub, %l_sub : (tensor<6x32xf32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %l_mean1 = dlc.mean %l_pow {dims = array<i64: 1>, keepdim = true} : (tensor<6x32xf32>) -> tensor<6x1xf32>
    %l_eps = dlc.fill 9.999999747378752e-06 : tensor<f32>
    %l_add = dlc.add %l_mean1, %l_eps : (tensor<6x1xf32>, tensor<f32>) -> tensor<6x1xf32>
    %l_sqrt = dlc.sqrt %l_add : tensor<6x1xf32>
    %l_div = dlc.div %l_sub, %l_sqrt : (tensor<6x32xf32>, tensor<6x1xf32>) -> tensor<6x32xf32>
    %l_mul = dlc.mul %l_div, %w : (tensor<6x32xf32>, tensor<32xf32>) -> tensor<6x32xf32>
    %ln = dlc.add %l_mul, %b : (tensor<6x32xf32>, tensor<32xf32>) -> tensor<6x32xf32>

    // nn.LayerNorm(32, eps=1e-6, elementwise_affine=False)
    %p_mean = dlc.mean %x {dims = array<i64: 1>, keepdim = true} : (tensor<6x32xf32>) -> tensor<6x1xf32>
    %p_sub = dlc.sub %x, %p_mean : (tensor<6x32xf32>, tensor<6x1xf32>) -> tensor<6x32xf32>
    %p_pow = dlc.mul %p_sub, %p_sub : (tensor<6x32xf32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %p_mean1 = dlc.mean %p_pow {dims = array<i64: 1>, keepdim = true} : (tensor<6x32xf32>) -> tensor<6x1xf32>
    %p_eps = dlc.fill 9.9999999747524271e-07 : tensor<f32>
    %p_add = dlc.add %p_mean1, %p_eps : (tensor<6x1xf32>, tensor<f32>) -> tensor<6x1xf32>
    %p_sqrt = dlc.sqrt %p_add : tensor<6x1xf32>
    %ln_plain = dlc.div %p_sub, %p_sqrt : (tensor<6x32xf32>, tensor<6x1xf32>) -> tensor<6x32xf32>

    return %erf, %erf_wide, %gelu, %gelu_tanh, %ln, %ln_plain
        : tensor<6x32xf32>, tensor<6x32xf32>, tensor<6x32xf32>, tensor<6x32xf32>, tensor<6x32xf32>, tensor<6x32xf32>
  }
}
