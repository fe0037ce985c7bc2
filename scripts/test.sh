#!/usr/bin/env bash
# Builds dlc and runs the whole test suite (lit: pass tests, driver tests,
# bad-input corpus, end-to-end numerics, runtime unit tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ninja -C build check-dlc
