// An entry whose input and output have 2^60 elements each (memory.test).

module attributes {dlc.model = "m"} {
  func.func @forward(%x: tensor<1073741824x1073741824xf32>) -> tensor<1073741824x1073741824xf32> attributes {dlc.entry} {
    %y = dlc.relu %x : tensor<1073741824x1073741824xf32>
    return %y : tensor<1073741824x1073741824xf32>
  }
}
