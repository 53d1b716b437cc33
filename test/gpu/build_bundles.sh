#!/usr/bin/env bash
# Compiles every GPU-test and benchmark kernel to a cubin bundle on the CPU
# machine, into .device/bundles (ignored by git, carried to the GPU machine
# by the device tool); the FP8 kernels of test/gpu/kernels_fp8 go to
# .device/bundles_fp8 (check_fp8.py), bench/kernels_swap to .device/bundles_swap
# (bench/bench_swap_ab.py), bench/kernels_fp8_decode to .device/bundles_fp8_decode
# (bench/bench_fp8_decode.py), the K-ragged ones of test/gpu/kernels_kragged to
# .device/bundles_kragged (check_kragged.py), the quantize catalog of
# check_quantize.py to .device/quantize_catalog. A kernel file may add
# ggemm-to-ptx options with a line `// ggemm-to-ptx-options: grid=tiles`.
#   bash test/gpu/build_bundles.sh [build-dir] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-.device/bundles}
# The kernels are what this gemm-opt compiles: build it from the sources.
cmake --build "$build" --target gemm-opt > /dev/null
rm -rf "$out" && mkdir -p "$out"
for f in test/gpu/kernels/*.mlir bench/kernels/*.mlir; do
  extra=$(sed -n 's|^// ggemm-to-ptx-options: ||p' "$f" | head -1)
  "$build/bin/gemm-opt" "$f" \
    --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=$out $extra" -o /dev/null
done
git rev-parse --short HEAD > "$out/COMMIT"
rm -rf "${out}_fp8" && mkdir -p "${out}_fp8"
for f in test/gpu/kernels_fp8/*.mlir; do
  "$build/bin/gemm-opt" "$f" \
    --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=${out}_fp8" -o /dev/null
done
cp "$out/COMMIT" "${out}_fp8/COMMIT"
# The swap-AB / tile-variant benchmark's kernels (bench/bench_swap_ab.py).
rm -rf "${out}_swap" && mkdir -p "${out}_swap"
for f in bench/kernels_swap/*.mlir; do
  "$build/bin/gemm-opt" "$f" \
    --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=${out}_swap" -o /dev/null
done
cp "$out/COMMIT" "${out}_swap/COMMIT"
# FP8 decode tile experiments (bench/bench_fp8_decode.py).
rm -rf "${out}_fp8_decode" && mkdir -p "${out}_fp8_decode"
for f in bench/kernels_fp8_decode/*.mlir; do
  "$build/bin/gemm-opt" "$f" \
    --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=${out}_fp8_decode" -o /dev/null
done
cp "$out/COMMIT" "${out}_fp8_decode/COMMIT"
# The K-ragged weight-gradient kernels (segment_matmul_k, check_kragged.py).
rm -rf "${out}_kragged" && mkdir -p "${out}_kragged"
for f in test/gpu/kernels_kragged/*.mlir; do
  extra=$(sed -n 's|^// ggemm-to-ptx-options: ||p' "$f" | head -1)
  "$build/bin/gemm-opt" "$f" \
    --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=${out}_kragged $extra" -o /dev/null
done
cp "$out/COMMIT" "${out}_kragged/COMMIT"
rm -rf "${out}_kragged_fp8" && mkdir -p "${out}_kragged_fp8"
for f in test/gpu/kernels_kragged_fp8/*.mlir; do
  "$build/bin/gemm-opt" "$f" \
    --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=${out}_kragged_fp8" -o /dev/null
done
cp "$out/COMMIT" "${out}_kragged_fp8/COMMIT"
# The FP8 quantize kernels (ggemm.quantize, check_quantize.py): a catalog
# from the script's spec, in .device/quantize_catalog.
bash test/gpu/build_python_catalog.sh "$build" .device/quantize_catalog \
  test/gpu/check_quantize.py
# The GPU image has no nlohmann/json, which the runtime is built with: carry
# the header and its CMake package (run_on_device.sh points CMake at it).
rm -rf .device/nlohmann && mkdir -p .device/nlohmann/include .device/nlohmann/share/cmake
cp -r /usr/include/nlohmann .device/nlohmann/include/
cp -r /usr/share/cmake/nlohmann_json .device/nlohmann/share/cmake/
ls "$out"
