#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and builds GGEMM (compiler + runtime).
# Idempotent: packages already present are not reinstalled, and an existing
# build directory is reused.
#
#   bash scripts/setup.sh            # installs, configures build/, builds
#   BUILD_DIR=out bash scripts/setup.sh
#   JOBS=1 bash scripts/setup.sh     # build parallelism (default: nproc)
#   GGEMM_CMAKE_ARGS="-DGGEMM_ENABLE_ASSERTIONS=ON" bash scripts/setup.sh
#                                    # more cache entries, split on spaces
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
PACKAGES=(llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools cmake
          ninja-build g++ python3 python3-pytest python3-numpy python3-psutil
          libgtest-dev nlohmann-json3-dev valgrind)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

RUNTIME=ON
if [ ! -f /usr/local/cuda/include/cuda.h ] && [ ! -f /usr/include/cuda.h ]; then
  echo "setup: no cuda.h found: building without the CUDA runtime"
  RUNTIME=OFF
fi

cmake -S . -B "$BUILD_DIR" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  -DPython3_EXECUTABLE=/usr/bin/python3 \
  -DGGEMM_ENABLE_RUNTIME="$RUNTIME" \
  -DCMAKE_INSTALL_PREFIX="$PWD/$BUILD_DIR/install" \
  ${GGEMM_CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}"
