#!/usr/bin/env bash
# Compiles every GPU-test and benchmark kernel to a cubin bundle (and PTX)
# on the CPU machine, into .device/bundles (ignored by git, carried to the
# GPU machine by the device tool).
#   bash test/gpu/build_bundles.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=.device/bundles
rm -rf "$out" && mkdir -p "$out"
for f in test/gpu/kernels/*.mlir bench/kernels/*.mlir; do
  "$build/bin/gemm-opt" "$f" --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=$out" -o /dev/null
done
# Keep the runtime sources and the Python package next to the bundles.
git rev-parse --short HEAD > "$out/COMMIT"
ls "$out"
