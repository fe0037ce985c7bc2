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

#include "VerifierMessage.h"

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
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per input: nothing an input uniques outlives it, so memory
  // stays flat over millions of runs and every run is reproducible alone.
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  bool sawError = false;
  std::string verifierError;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
      return mlir::success();
    sawError = true;
    // The verifier names the op ("'dlc.linear' op ..."): the frontend built
    // IR that it should have refused with an error of its own.
    std::string message = d.str();
    if (verifierError.empty() && dlc::fuzz::isVerifierMessage(message))
      verifierError = message;
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
  // The driver verifies what it gets (lib/Driver/Compile.cpp).
  if (module)
    (void)mlir::verify(*module);
  if (!verifierError.empty()) {
    llvm::errs() << "fuzz_dlc_parser: the frontend built IR that fails to "
                    "verify: "
                 << verifierError << "\n";
    std::abort();
  }
  if (!module && !sawError) {
    llvm::errs() << "fuzz_dlc_parser: the import failed without an error\n";
    std::abort();
  }
  return 0;
}
