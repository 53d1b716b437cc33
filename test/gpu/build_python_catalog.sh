#!/usr/bin/env bash
# Builds, on the CPU machine, the kernel catalog a GPU check script needs on
# the GPU machine (which has no LLVM): the spec comes from the script itself
# (`SCRIPT --write-spec`), the catalog goes to OUT-DIR (carried to the GPU
# machine by the device tool, like .device/bundles).
#   bash test/gpu/build_python_catalog.sh [build-dir] [out-dir] [script]
# Defaults: build, .device/python_catalog, test/gpu/check_python.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-.device/python_catalog}
script=${3:-test/gpu/check_python.py}
case $build in /*) ;; *) build=$PWD/$build ;; esac
name=$(basename "$out")
# The catalog is compiled by the compiler library, not gemm-opt: build it
# first, or a library older than the sources compiles it (the catalogs of
# 4d3d619 were, bench/NOTES.md v23).
cmake --build "$build" --target GGemmCAPI > /dev/null
mkdir -p .device
rm -rf "$out"
/usr/bin/python3 "$script" --write-spec ".device/${name}_spec.json"
GGEMM_BUILD_DIR="$build" PYTHONPATH="$PWD/python" \
  /usr/bin/python3 -m ggemm.catalog build ".device/${name}_spec.json" -o "$out" \
  --cache-dir "$build/${name}_cache"
git rev-parse --short HEAD > "$out/COMMIT"
