#!/usr/bin/env bash
# Configures and builds dlc in ./build (Release, ccache when present).
# DLC_WERROR=ON in the environment makes warnings errors (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/deps.sh"
if [[ ! -f build/build.ninja ]]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release \
    -DDLC_WERROR="${DLC_WERROR:-OFF}"
elif [[ -n ${DLC_WERROR:-} ]]; then
  cmake build -DDLC_WERROR="$DLC_WERROR" >/dev/null
fi
ninja -C build
