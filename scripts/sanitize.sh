#!/usr/bin/env bash
# Builds dlc with sanitizers in its own build folder and runs tests under
# them (docs/architecture.md, "Sanitizers"):
#
#   scripts/sanitize.sh runtime   # libdlcrt's unit tests (and the fake
#                                 # CUDA driver's) under ASan+UBSan and
#                                 # under TSan (a few minutes; CI runs it)
#   scripts/sanitize.sh full      # the compiler too, and the whole lit
#                                 # suite under ASan+UBSan (hours on 2 cores)
#
# ASan's options: MLIR's allocator poisons memory itself
# (allow_user_poisoning=0); leaks are reported, except MLIR's and LLVM's
# process-lifetime globals (scripts/lsan.supp).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
what=${1:-runtime}
# allocator_may_return_null: the out-of-memory tests ask for 2^61 bytes on
# purpose, and the runtime must report it.
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1

# Debian's clang 22 (the LLVM of MLIR 22): its libFuzzer builds the fuzz
# targets of test/fuzz from the same objects as the sanitized suite.
if ! command -v clang++-22 >/dev/null; then
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang-22 libclang-rt-22-dev
fi

configure() { # DIR SANITIZERS [CMAKE OPTIONS...]
  local dir=$1 kinds=$2; shift 2
  cmake -G Ninja -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDLC_SANITIZE="$kinds" -DCMAKE_C_COMPILER=clang-22 \
    -DCMAKE_CXX_COMPILER=clang++-22 "$@" >/dev/null
}

case "$what" in
  runtime)
    # libdlcrt on its own (runtime/ builds without MLIR): minutes.
    for kind in address,undefined thread; do
      dir=build-san-runtime-${kind//,/-}
      flags="-fsanitize=$kind -fno-omit-frame-pointer -fno-sanitize-recover=all"
      cmake -G Ninja -S runtime -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
        -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
        -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$kind" \
        -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=$kind" \
        -DDLC_SANITIZE="$kind" >/dev/null
      ninja -C "$dir"
      echo "== libdlcrt tests under -fsanitize=$kind"
      ctest --test-dir "$dir" --output-on-failure -j 2
    done
    ;;
  full)
    dir=build-san-address-undefined
    configure "$dir" address,undefined -DDLC_FUZZ=ON
    ninja -C "$dir" check-dlc
    ;;
  *)
    echo "usage: scripts/sanitize.sh runtime|full" >&2
    exit 2
    ;;
esac
