#!/usr/bin/env bash
# Checks that every C and C++ file of the repository is formatted as
# .clang-format says (LLVM style), with Debian's clang-format 22; CI runs
# it. `scripts/check_format.sh --fix` formats them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format-22 >/dev/null; then
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang-format-22
fi
mapfile -t files < <(git ls-files '*.c' '*.cpp' '*.h')
if [[ ${1:-} == --fix ]]; then
  clang-format-22 -i "${files[@]}"
  exit 0
fi
if ! clang-format-22 --dry-run -Werror "${files[@]}"; then
  echo "check_format: the files above are not formatted; run" \
       "scripts/check_format.sh --fix (CONTRIBUTING.md)" >&2
  exit 1
fi
