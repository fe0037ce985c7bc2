//===- EmulatedCuda.h - host references of CUDA runtime calls ---*- C++ -*-===//
//
// `dlc run --cuda-emulate` runs the CUDA lowering on the host: the kernels
// become loops (dlc-emulate-gpu-launches), and the runtime calls the entries
// make become calls of these host references, with the same arguments.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_LIB_DRIVER_EMULATEDCUDA_H
#define DLC_LIB_DRIVER_EMULATEDCUDA_H

#include "llvm/Support/Error.h"

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace dlc {
/// Defines dlc_emulated_gemm, dlc_emulated_memcpy and the bf16 rounding
/// routine the scalar emulated kernels need (__truncsfbf2) in `jit`'s main
/// library.
llvm::Error defineEmulatedCuda(llvm::orc::LLJIT &jit);
} // namespace dlc

#endif // DLC_LIB_DRIVER_EMULATEDCUDA_H
