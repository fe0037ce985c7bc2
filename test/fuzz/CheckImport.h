//===- CheckImport.h - One import, checked as the frontend targets do -----===//
//
// The frontend targets import each input in a context of their own (nothing
// an input uniques outlives it, so memory stays flat over millions of runs
// and every run is reproducible alone), verify what they get as the driver
// does, and abort on a finding: IR that fails the verifier (a refusal the
// frontend should have made itself), or a failed import that emitted no
// error diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_FUZZ_CHECKIMPORT_H
#define DLC_TEST_FUZZ_CHECKIMPORT_H

#include "VerifierMessage.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

namespace dlc::fuzz {

/// Runs `import` in a context of its own and aborts, naming `target`, on a
/// finding.
inline void checkImport(
    const char *target,
    llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(mlir::MLIRContext &)>
        import) {
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
    if (verifierError.empty() && isVerifierMessage(message))
      verifierError = message;
    return mlir::success(); // swallowed: the fuzzer's output stays readable
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = import(ctx);
  // The driver verifies what it gets (lib/Driver/Compile.cpp).
  if (module)
    (void)mlir::verify(*module);
  if (!verifierError.empty()) {
    llvm::errs() << target << ": the frontend built IR that fails to verify: "
                 << verifierError << "\n";
    std::abort();
  }
  if (!module && !sawError) {
    llvm::errs() << target << ": the import failed without an error\n";
    std::abort();
  }
}

} // namespace dlc::fuzz

#endif // DLC_TEST_FUZZ_CHECKIMPORT_H
