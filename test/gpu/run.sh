#!/usr/bin/env bash
# Runs the GPU suite built by test/gpu/make_bundle.py (see docs/gpu.md):
#   run.sh [BUNDLE] [--device cpu|cuda|both]
# Needs only Python 3 with NumPy besides the bundle itself ($PYTHON, default
# python3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bundle="${1:-$here}"
[[ $# -gt 0 ]] && shift
exec "${PYTHON:-python3}" "$bundle/run.py" "$bundle" "$@"
