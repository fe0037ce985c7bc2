#!/usr/bin/env bash
# Builds dlc, compiles the digits model, links it into a C program and runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
mkdir -p build/demo
build/bin/dlc examples/digits.dlc --stats
build/bin/dlc examples/digits.dlc -o build/demo/digits.o
cc -std=c11 -O2 -Ibuild/demo -Iruntime/include examples/digits_app.c build/demo/digits.o \
   -Lbuild/lib -ldlcrt -Wl,-rpath,"$PWD/build/lib" -o build/demo/digits_app
build/demo/digits_app
