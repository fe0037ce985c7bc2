#!/usr/bin/env bash
# Builds the libFuzzer targets of test/fuzz (docs/fuzzing.md) with clang 22,
# ASan and UBSan into build-san-address-undefined/ (as scripts/sanitize.sh
# configures it, with DLC_FUZZ=ON) and runs each for a bounded time on a
# copy of its seed corpus (the repository's seeds are never changed):
#
#   scripts/fuzz.sh                             # every target, 60 s each
#   scripts/fuzz.sh --seconds 3600 fuzz_npy     # the long run of one target
#   scripts/fuzz.sh --work DIR ...              # keep the corpora and
#                                               # findings in DIR (reused
#                                               # by the next run)
#   scripts/fuzz.sh --no-build ...              # the targets are built
#   scripts/fuzz.sh ... -- -fork=2 -jobs=2      # more libFuzzer flags
#   scripts/fuzz.sh --ci                        # CI's bounded run: a fixed
#                                               # seed and number of inputs
#                                               # per target (about a minute
#                                               # each on two cores), so that
#                                               # a run is reproducible
#
# Options: --seconds N (per target, default 60), --timeout N (seconds for
# one input, default 30: a slower input is a hang), --rss-mb N (default
# 2048; a larger allocation or resident size is a finding), --work DIR,
# --build DIR, --no-build. Targets: fuzz_dlc_parser fuzz_onnx_importer
# fuzz_safetensors fuzz_npy fuzz_npz fuzz_model_descriptor (default: all).
#
# Exit status 1 when any target found something (a crash, a sanitizer
# report, a leak, a hang, an out-of-memory); its reproducer (crash-*,
# leak-*, timeout-*, oom-*) is kept in the work directory and printed.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(fuzz_dlc_parser fuzz_onnx_importer fuzz_safetensors fuzz_npy fuzz_npz
     fuzz_model_descriptor)
seconds=60 timeout=30 rss=2048 work="" build=build-san-address-undefined
do_build=1 targets=() extra=() ci=0
# --ci: the inputs each target runs (about 60 s each on the project's
# two-core machines with the other targets' builds done), from seed 1.
declare -A ci_runs=([fuzz_dlc_parser]=30000 [fuzz_onnx_importer]=25000
  [fuzz_safetensors]=250000 [fuzz_npy]=600000 [fuzz_npz]=5000000
  [fuzz_model_descriptor]=600000)
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --rss-mb) rss=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --ci) ci=1; seconds=300; shift ;;
    --) shift; extra=("$@"); break ;;
    fuzz_*) targets+=("$1"); shift ;;
    *) echo "usage: scripts/fuzz.sh [--seconds N] [--timeout N] [--rss-mb N]" \
            "[--work DIR] [--build DIR] [--no-build] [--ci] [TARGET...] [-- FLAGS]" >&2
       exit 2 ;;
  esac
done
((${#targets[@]})) || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "unknown target $t" >&2; exit 2; }
done

if ((do_build)); then
  scripts/deps.sh
  if ! command -v clang++-22 >/dev/null ||
     ! dpkg-query -W -f='${Status}' libclang-rt-22-dev 2>/dev/null |
       grep -q "ok installed"; then
    sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang-22 \
      libclang-rt-22-dev
  fi
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDLC_SANITIZE=address,undefined -DCMAKE_C_COMPILER=clang-22 \
    -DCMAKE_CXX_COMPILER=clang++-22 -DDLC_FUZZ=ON >/dev/null
  ninja -C "$build" "${targets[@]}"
fi

# The options of scripts/sanitize.sh: MLIR's allocator poisons memory itself
# (allow_user_poisoning=0), MLIR's and LLVM's process-lifetime globals are
# not leaks (scripts/lsan.supp).
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp
unset DLC_DEVICE
export DLC_NUM_THREADS=1

keep=1
if [[ -z $work ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/dlc-fuzz.XXXXXX")
  keep=0
fi
mkdir -p "$work"
failed=()
for t in "${targets[@]}"; do
  name=${t#fuzz_}
  dir=$work/$t
  mkdir -p "$dir/corpus"
  cp -n test/fuzz/"$name"/* "$dir/corpus/"
  flags=(-max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb="$rss"
         -print_final_stats=1 -artifact_prefix="$dir/")
  [[ -f test/fuzz/$name.dict ]] && flags+=(-dict="test/fuzz/$name.dict")
  ((ci)) && flags+=(-seed=1 -runs="${ci_runs[$t]}")
  if ((ci)); then
    echo "== $t: ${ci_runs[$t]} inputs from seed 1, corpus $dir/corpus"
  else
    echo "== $t: $seconds s, corpus $dir/corpus"
  fi
  rc=0
  touch "$dir/.start"
  "$build/bin/$t" "${flags[@]}" "${extra[@]}" "$dir/corpus" \
    >"$dir/log" 2>&1 || rc=$?
  # Reproducers of this run (with -fork and -ignore_crashes libFuzzer goes
  # on after a finding and exits with 0).
  found=$(find "$dir" -maxdepth 1 -newer "$dir/.start" \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
       -o -name 'oom-*' \) | sort | tr '\n' ' ')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  [[ -n $execs ]] || execs=$(grep -o '^#[0-9]*' "$dir/log" | tail -1 | tr -d '#')
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$dir/log" | tail -1 || true)
  units=$(find "$dir/corpus" -type f | wc -l)
  if ((rc)) || [[ -n $found ]]; then
    failed+=("$t")
    echo "   FINDING (exit $rc): $found"
    grep -E '^==[0-9]+== ?ERROR|^SUMMARY|runtime error|^fuzz_[a-z_]+: ' \
      "$dir/log" | head -4 | sed 's/^/   /'
  else
    echo "   ok: ${execs:-?} executions, ${cov:-cov ?}, $units corpus files"
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}; logs and reproducers in $work"
  exit 1
fi
echo "fuzz: no findings in ${targets[*]}"
((keep)) || rm -rf "$work"
