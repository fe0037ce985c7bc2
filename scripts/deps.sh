#!/usr/bin/env bash
# Installs the Debian 12 packages dlc needs to build and test, if missing.
set -euo pipefail
pkgs=(cmake ninja-build ccache g++ libmlir-22-dev mlir-22-tools llvm-22-dev
      llvm-22-tools libgtest-dev python3-numpy libonnx-dev libprotobuf-dev
      protobuf-compiler python3-onnx python3-pytest python3-sklearn
      python3-setuptools python3-pip python3-venv openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
