#!/usr/bin/env bash
# Builds the runtime and the probe kernel and runs the GPU checks: the CTest
# suite (when GoogleTest is installed) and probe.py (needs PyTorch and an
# sm_90 GPU). Run from the repository root on a GPU machine:
#   runtime/test/gpu/run.sh [BUILD_DIR]
set -euo pipefail

build=${1:-build-rt-gpu}
nvcc=${NVCC:-nvcc}
here=runtime/test/gpu

cmake -S runtime -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build"
if [ -x "$build/test/ggemm-runtime-tests" ]; then
  ctest --test-dir "$build" --output-on-failure
else
  echo "GoogleTest not installed: C++ unit tests not built"
fi

# sm_90a through -gencode (see the device notes on the -arch shorthand).
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -cubin -O3 \
  -o "$build/probe.cubin" "$here/ProbeKernel.cu"
"$nvcc" -gencode=arch=compute_90a,code=compute_90a -ptx -O3 \
  -o "$build/probe.ptx" "$here/ProbeKernel.cu"

GGEMM_RUNTIME_LIB="$build/libggemm_runtime.so" \
  python3 "$here/probe.py" "$build/probe.cubin" "$build/probe.ptx"
