#!/usr/bin/env bash
# Sets up and builds a checked build of GGEMM beside build/. Only GGEMM's
# own code gets the checks; LLVM and MLIR stay Debian's release libraries
# (see GGEMM_ENABLE_ASSERTIONS and GGEMM_SANITIZE in CMakeLists.txt).
#
#   bash scripts/build-checked.sh assert   # build-assert/: assert() kept
#   bash scripts/build-checked.sh asan     # build-asan/: also ASan + UBSan
#   BUILD_DIR=build-asan bash scripts/test.sh   # then every CPU test
#
# BUILD_DIR and JOBS work as for scripts/setup.sh, which this calls.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  assert) sanitize="" ;;
  asan) sanitize="address;undefined" ;;
  *)
    echo "usage: $0 assert|asan" >&2
    exit 2
    ;;
esac
# No spaces inside an argument: setup.sh splits GGEMM_CMAKE_ARGS on them.
BUILD_DIR=${BUILD_DIR:-build-$1} \
GGEMM_CMAKE_ARGS="-DGGEMM_ENABLE_ASSERTIONS=ON -DGGEMM_SANITIZE=$sanitize" \
  bash scripts/setup.sh
