//===- Bufferization.h - one-shot bufferization of dlc ops ------*- C++ -*-===//
//
// The dlc ops that reach one-shot-bufferize (dlc.all_reduce) bufferize
// through external models of BufferizableOpInterface, registered here.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CONVERSION_BUFFERIZATION_H
#define DLC_CONVERSION_BUFFERIZATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::dlc {
/// Attaches BufferizableOpInterface to dlc.all_reduce: it reduces its
/// operands' buffers in place.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace mlir::dlc

#endif // DLC_CONVERSION_BUFFERIZATION_H
