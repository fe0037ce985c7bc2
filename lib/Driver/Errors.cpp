//===- Errors.cpp - the driver's user errors ------------------------------===//
//
// fail() and failRuntime(): a user error on stderr in the driver's format,
// and the exit status it ends the command with.
//
//===----------------------------------------------------------------------===//
#include "dlc/Driver/Errors.h"

#include "dlc/dlc_runtime.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace llvm;

int dlc::driver::fail(const Twine &msg, const Twine &hint) {
  // One write of the whole message: the ranks of an MPI job report the
  // same error at once, and pieces written separately interleave.
  std::string text;
  raw_string_ostream os(text);
  os << "dlc: error: " << msg << "\n";
  if (!hint.isTriviallyEmpty())
    os << "dlc: hint: " << hint << "\n";
  errs() << text;
  return 1;
}

int dlc::driver::failRuntime(const Twine &what) {
  return fail(what + ": " + dlc_last_error());
}
