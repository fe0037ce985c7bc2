//===- VerifierMessage.h - Telling the verifier's errors apart ------------===//
//
// The frontend targets fail an input whose import built IR that the
// verifier rejects: the frontend should have refused it with an error of
// its own. The verifier's messages start with the op's full name in quotes
// ("'dlc.linear' op ..."); a frontend's own message may quote the model's
// words ("'gelu' expects ..., got \"...' op ...\"") and is not one.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_FUZZ_VERIFIERMESSAGE_H
#define DLC_TEST_FUZZ_VERIFIERMESSAGE_H

#include "llvm/ADT/StringRef.h"

namespace dlc::fuzz {

/// Whether `message` is the verifier's: "'<dialect>.<op>' op ...", the
/// name without spaces and with its dialect's prefix.
inline bool isVerifierMessage(llvm::StringRef message) {
  if (!message.consume_front("'"))
    return false;
  size_t end = message.find('\'');
  if (end == llvm::StringRef::npos)
    return false;
  llvm::StringRef name = message.take_front(end);
  return !name.empty() && name.contains('.') && !name.contains(' ') &&
         message.drop_front(end).starts_with("' op ");
}

} // namespace dlc::fuzz

#endif // DLC_TEST_FUZZ_VERIFIERMESSAGE_H
