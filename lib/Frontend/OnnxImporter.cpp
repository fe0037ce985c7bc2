//===- OnnxImporter.cpp - ONNX models to the dlc dialect ------------------===//
//
// The public entry points of the ONNX importer; the importer itself is in
// lib/Frontend/Onnx/ (Importer.h).
//
//===----------------------------------------------------------------------===//

#include "dlc/Frontend/OnnxImporter.h"

#include "Onnx/Importer.h"

using namespace mlir;
using ::dlc::onnx_import::OnnxImporter;

namespace dlc {
std::string onnxTensorName(llvm::StringRef name) {
  return onnx_import::sanitizeTensorName(name);
}

std::vector<std::string> supportedOnnxOps() {
  std::vector<std::string> ops;
  for (const auto &entry : OnnxImporter::handlers())
    ops.push_back(entry.getKey().str());
  std::sort(ops.begin(), ops.end());
  return ops;
}

OwningOpRef<ModuleOp> importOnnxModel(StringRef bytes, StringRef fileName,
                                      MLIRContext &ctx,
                                      const OnnxImportOptions &options) {
  OnnxImporter importer(ctx, fileName, options);
  return importer.import(bytes);
}
} // namespace dlc
