//===- Errors.cpp - the driver's user errors ------------------------------===//
//
// fail() and failRuntime(): a user error on stderr in the driver's format,
// and the exit status it ends the command with.
//
//===----------------------------------------------------------------------===//
#include "dlc/Driver/Errors.h"

#include "dlc/dlc_runtime.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

int dlc::driver::fail(const Twine &msg, const Twine &hint) {
  errs() << "dlc: error: " << msg << "\n";
  if (!hint.isTriviallyEmpty())
    errs() << "dlc: hint: " << hint << "\n";
  return 1;
}

int dlc::driver::failRuntime(const Twine &what) {
  return fail(what + ": " + dlc_last_error());
}
