#!/usr/bin/env bash
# Builds, on the CPU machine, the kernel catalog test/gpu/check_moe.py needs
# on the GPU machine (which has no LLVM): the spec comes from the script
# itself, the catalog goes to .device/moe_catalog (carried by the device
# tool).
#   bash test/gpu/build_moe_catalog.sh [build-dir] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-.device/moe_catalog}
case $build in /*) ;; *) build=$PWD/$build ;; esac
mkdir -p .device
rm -rf "$out"
/usr/bin/python3 test/gpu/check_moe.py --write-spec .device/moe_spec.json
GGEMM_BUILD_DIR="$build" PYTHONPATH="$PWD/python" \
  /usr/bin/python3 -m ggemm.catalog build .device/moe_spec.json -o "$out" \
  --cache-dir "$build/moe_catalog_cache"
git rev-parse --short HEAD > "$out/COMMIT"
