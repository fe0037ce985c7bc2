//===- fuzz_dlc_parser.cpp - libFuzzer target: the .dlc frontend ----------===//
//
// Each input is a .dlc model description, read as `dlc MODEL.dlc` reads it:
// importDlcModel (lexer, parser, MLIRGen and the verifier), then the module
// verifier as the driver runs it. A finding is a crash, a sanitizer report,
// a hang, a leak, or a failed import that emitted no error diagnostic (the
// frontend's contract: every refusal is an `error:`).
//
//===----------------------------------------------------------------------===//

#include "dlc/Frontend/ModelImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per input: nothing an input uniques outlives it, so memory
  // stays flat over millions of runs and every run is reproducible alone.
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  bool sawError = false;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    sawError |= d.getSeverity() == mlir::DiagnosticSeverity::Error;
    return mlir::success(); // swallowed: the fuzzer's output stays readable
  });

  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.dlc"),
      llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      dlc::importDlcModel(sm, ctx, dlc::ImportOptions());
  if (module && mlir::failed(mlir::verify(*module)) && !sawError) {
    llvm::errs() << "fuzz_dlc_parser: the module fails to verify silently\n";
    std::abort();
  }
  if (!module && !sawError) {
    llvm::errs() << "fuzz_dlc_parser: the import failed without an error\n";
    std::abort();
  }
  return 0;
}
