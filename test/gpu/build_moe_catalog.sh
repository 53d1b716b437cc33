#!/usr/bin/env bash
# The kernel catalog of test/gpu/check_moe.py (and bench/profile_moe.py), in
# .device/moe_catalog: build_python_catalog.sh with that script.
#   bash test/gpu/build_moe_catalog.sh [build-dir] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash test/gpu/build_python_catalog.sh "${1:-build}" \
  "${2:-.device/moe_catalog}" test/gpu/check_moe.py
