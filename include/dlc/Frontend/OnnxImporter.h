//===- OnnxImporter.h - ONNX models to the dlc dialect ---------*- C++ -*-===//
//
// Reads an ONNX ModelProto (opsets 13 to 21) into the `dlc` dialect: every
// float initializer becomes a `dlc.parameter` whose initial value is embedded
// (init "data"), the graph becomes the `@forward` entry. See docs/onnx.md.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_ONNXIMPORTER_H
#define DLC_FRONTEND_ONNXIMPORTER_H

#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace dlc {

struct OnnxImportOptions {
  /// `--input-shape NAME=D0,D1,...`: the full static shape of a graph input;
  /// fixes dimensions the file leaves symbolic (a dynamic batch).
  std::map<std::string, llvm::SmallVector<int64_t>> inputShapes;
  /// `--batch N`: dimension 0 of every graph input.
  std::optional<int64_t> batch;
};

/// The lowest and highest default-domain opset the importer accepts.
inline constexpr int64_t kMinOnnxOpset = 13;
inline constexpr int64_t kMaxOnnxOpset = 21;

/// Imports the serialized ModelProto `bytes`; `fileName` names the model in
/// diagnostics and gives the model its default name. Errors are emitted
/// through the context's diagnostic engine at a NameLoc of the offending
/// node (or of the file), each with a "hint: " note where one helps; returns
/// null on any error. Never aborts on malformed input.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(llvm::StringRef bytes, llvm::StringRef fileName,
                mlir::MLIRContext &ctx, const OnnxImportOptions &options);

/// The name a graph input, output or initializer of an ONNX model has in
/// the compiled model (its header, weight files and `dlc run`): the ONNX
/// name with every character other than a letter, digit, '_' or '.'
/// replaced by '_' ("onnx::Gemm_0" -> "onnx__Gemm_0").
std::string onnxTensorName(llvm::StringRef name);

/// The ONNX op types the importer handles, sorted (docs/onnx.md's table is
/// checked against this list).
std::vector<std::string> supportedOnnxOps();

} // namespace dlc

#endif // DLC_FRONTEND_ONNXIMPORTER_H
