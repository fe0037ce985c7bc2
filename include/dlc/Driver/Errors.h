//===- Errors.h - the driver's user errors ----------------------*- C++ -*-===//
//
// Every user error of `dlc`, `dlc run` and `dlc train` that has no source
// location is printed the same way, `dlc: error: MESSAGE` and an optional
// `dlc: hint: ...` line, and ends the command with exit status 1.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_DRIVER_ERRORS_H
#define DLC_DRIVER_ERRORS_H

#include "llvm/ADT/Twine.h"

namespace dlc::driver {

/// A user error not tied to a source location: `dlc: error: MSG` (and a
/// hint); returns 1, the exit status.
int fail(const llvm::Twine &msg, const llvm::Twine &hint = "");
/// fail() with the runtime's last error appended.
int failRuntime(const llvm::Twine &what);

} // namespace dlc::driver

#endif // DLC_DRIVER_ERRORS_H
