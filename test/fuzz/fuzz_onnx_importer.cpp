//===- fuzz_onnx_importer.cpp - libFuzzer target: the ONNX importer -------===//
//
// Each input is an ONNX ModelProto, optionally followed by the separator
// line below and the bytes of its external data file:
//
//   <model bytes>\n--dlc-fuzz-external-data--\n<data bytes>
//
// The data part is written to `model.onnx.data` in a private temporary
// directory (one per process) and the model is imported as
// `<that directory>/model.onnx`, so tensors whose location is
// "model.onnx.data" go through the importer's external-data reader; without
// a separator that file does not exist. The model is read as `dlc
// MODEL.onnx` reads it: importOnnxModel (protobuf parsing, the graph
// checks, constant folding, every op's import), then the module verifier. A
// finding is a crash, a sanitizer report, a hang, a leak, a failed import
// that emitted no error diagnostic, or IR that fails the verifier (a
// refusal the importer should have made itself).
//
//===----------------------------------------------------------------------===//

#include "CheckImport.h"
#include "Scratch.h"

#include "dlc/Frontend/OnnxImporter.h"

#include <cstdint>
#include <string>
#include <unistd.h>

namespace {
constexpr llvm::StringLiteral kSeparator = "\n--dlc-fuzz-external-data--\n";
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string modelPath = dlc::fuzz::Scratch::path("model.onnx");
  static const std::string dataPath =
      dlc::fuzz::Scratch::path("model.onnx.data");
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [model, external] = input.split(kSeparator);
  if (model.size() == input.size())
    unlink(dataPath.c_str());
  else
    dlc::fuzz::Scratch::write(dataPath, external.data(), external.size());

  // As given, then with another batch (--batch, a data-parallel rank's
  // share), which the importer follows through the graph (BatchDim.cpp).
  dlc::OnnxImportOptions batched;
  batched.batch = 1 + int64_t(size % 3);
  for (const dlc::OnnxImportOptions &options :
       {dlc::OnnxImportOptions(), batched})
    dlc::fuzz::checkImport("fuzz_onnx_importer", [&](mlir::MLIRContext &ctx) {
      return dlc::importOnnxModel(model, modelPath, ctx, options);
    });
  return 0;
}
