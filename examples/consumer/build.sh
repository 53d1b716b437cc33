#!/usr/bin/env bash
# Installs GGEMM from BUILD_DIR into a staging prefix, then configures,
# builds and runs the out-of-tree consumer against the installed package.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
prefix="$build/consumer-install"
cmake --install "$build" --prefix "$prefix" > /dev/null
cmake -S "$here" -B "$build/consumer-build" -G Ninja \
  -DGGEMM_DIR="$prefix/lib/cmake/ggemm" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$build/consumer-build" -j 2
"$build/consumer-build/ggemm-consumer"
LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$build/consumer-build/ggemm-consumer-c"
