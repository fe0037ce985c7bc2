//===- InitDlc.h - register what the dlc tools need -------------*- C++ -*-===//
//
// One place that lists the dialects, extensions, passes and translations the
// dlc tools use, so dlc-opt and dlc see the same world.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_INITDLC_H
#define DLC_INITDLC_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::dlc {
/// Inserts the dlc dialect, the upstream dialects the pipeline produces and
/// the transform-dialect extensions the CPU schedule uses.
void registerDialects(mlir::DialectRegistry &registry);
/// Registers dlc's passes and the upstream passes of the pipeline.
void registerPasses();
} // namespace mlir::dlc

#endif // DLC_INITDLC_H
