//===- Suggest.h - "did you mean" helpers of the frontend -------*- C++ -*-===//

#ifndef DLC_LIB_FRONTEND_SUGGEST_H
#define DLC_LIB_FRONTEND_SUGGEST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <string>

namespace dlc {

/// The candidate closest to `word` by edit distance, or an empty string when
/// none is close enough to be a plausible typo.
inline llvm::StringRef
closestMatch(llvm::StringRef word, llvm::ArrayRef<llvm::StringRef> candidates) {
  unsigned maxDistance = std::max<unsigned>(1, (word.size() + 2) / 3);
  llvm::StringRef best;
  unsigned bestDistance = maxDistance + 1;
  for (llvm::StringRef candidate : candidates) {
    unsigned d = word.edit_distance(candidate, /*AllowReplacements=*/true,
                                    /*MaxEditDistance=*/maxDistance + 1);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/// "a, b, c and d".
inline std::string joinWords(llvm::ArrayRef<llvm::StringRef> words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0)
      s += i + 1 == words.size() ? " and " : ", ";
    s += words[i].str();
  }
  return s;
}

/// "did you mean 'relu'?" when a candidate is close, else `otherwise`.
inline std::string didYouMean(llvm::StringRef word,
                              llvm::ArrayRef<llvm::StringRef> candidates,
                              const std::string &otherwise) {
  llvm::StringRef best = closestMatch(word, candidates);
  if (best.empty())
    return otherwise;
  return "did you mean '" + best.str() + "'?";
}

/// "did you mean 'adam'? `then`" when a candidate is close, else `then`.
inline std::string didYouMeanThen(llvm::StringRef word,
                                  llvm::ArrayRef<llvm::StringRef> candidates,
                                  const std::string &then) {
  llvm::StringRef best = closestMatch(word, candidates);
  if (best.empty())
    return then;
  return "did you mean '" + best.str() + "'? " + then;
}

} // namespace dlc

#endif // DLC_LIB_FRONTEND_SUGGEST_H
