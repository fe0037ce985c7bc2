//===- fuzz_dlc_parser.cpp - libFuzzer target: the .dlc frontend ----------===//
//
// Each input is a .dlc model description, read as `dlc MODEL.dlc` reads it:
// importDlcModel (lexer, parser, MLIRGen and the verifier), then the module
// verifier as the driver runs it. A finding is a crash, a sanitizer report,
// a hang, a leak, a failed import that emitted no error diagnostic (the
// frontend's contract: every refusal is an `error:`), or IR that fails the
// verifier (a refusal the frontend should have made itself).
//
//===----------------------------------------------------------------------===//

#include "CheckImport.h"

#include "dlc/Frontend/ModelImporter.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlc::fuzz::checkImport("fuzz_dlc_parser", [&](mlir::MLIRContext &ctx) {
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(
            llvm::StringRef(reinterpret_cast<const char *>(data), size),
            "fuzz.dlc"),
        llvm::SMLoc());
    return dlc::importDlcModel(sm, ctx, dlc::ImportOptions());
  });
  return 0;
}
