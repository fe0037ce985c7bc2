// RUN: dlc-opt %s -dlc-collect-cuda-code | FileCheck %s

// The PTX of every gpu.binary, in order, becomes the module's dlc.cuda_ptx;
// the binaries go and the module is no GPU container any more. The kernel
// names stay where dlc-lower-gpu-launches put them.
// CHECK: module attributes {dlc.cuda_kernels = ["k0", "k1"], dlc.cuda_ptx = "// first\0A// second\0A"}
// CHECK-NOT: gpu.binary
// CHECK: func.func @entry
module attributes {gpu.container_module, dlc.cuda_kernels = ["k0", "k1"]} {
  gpu.binary @a [#gpu.object<#nvvm.target, "// first\0A">]
  gpu.binary @b [#gpu.object<#nvvm.target, "// second\0A">]
  func.func @entry() {
    return
  }
}
