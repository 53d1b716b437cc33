#!/usr/bin/env bash
# The kernel catalog of test/gpu/check_moe.py, bench/profile_moe.py and
# test/gpu/check_moe_example.py (examples/moe_layer.py), in
# .device/moe_catalog: build_python_catalog.sh with check_moe.py. Its spec
# (check_moe.py --write-spec) lists each layer's GEMMs and the routing
# kernels of sort_by_expert for the layers' (experts, top-k), for int32 and
# int64 ids: (256, 8), (128, 8) and (8, 2); and check_moe_example.py's spec:
# the example's layers forward and backward, whole and split over 2 ranks,
# (E, top-k) = (8, 2), (128, 8), (64, 8).
#   bash test/gpu/build_moe_catalog.sh [build-dir] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash test/gpu/build_python_catalog.sh "${1:-build}" \
  "${2:-.device/moe_catalog}" test/gpu/check_moe.py
