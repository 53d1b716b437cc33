#!/usr/bin/env bash
# Builds the FP8 check's dense and segment kernels (test/gpu/kernels_fp8
# fp8_seg_n*_k* and fp8_dense_n*_k*, the shapes check_fp8.py's bench times)
# with one explicit tile config instead of ggemm-select-config's, under the
# same kernel names, so that check_fp8.py can check them (--bundles) or time
# them as the baseline of the select-config kernels (--baseline, FP8_BASELINE
# in test/gpu/run_on_device.sh). bench/NOTES.md v18 used:
#   bash bench/build_fp8_tile_experiment.sh .device/bundles_fp8_m192 \
#     "block_m = 192, block_n = 128, block_k = 128, stages = 4, consumer_warpgroups = 3"
#   bash bench/build_fp8_tile_experiment.sh .device/bundles_fp8_m192c2 \
#     "block_m = 192, block_n = 128, block_k = 128, stages = 4, consumer_warpgroups = 3, cluster_m = 2"
#   bash bench/build_fp8_tile_experiment.sh OUT-DIR "TILE CONFIG" [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1 config=$2 build=${3:-build}
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
rm -rf "$out" && mkdir -p "$out"
for f in test/gpu/kernels_fp8/fp8_seg_n*_k*.mlir test/gpu/kernels_fp8/fp8_dense_n*_k*.mlir; do
  b=$(basename "$f" .mlir)
  [[ $b =~ ^fp8_(seg|dense)_n[0-9]+_k[0-9]+$ ]] || continue
  sed "s/w_scale_block = #ggemm.scale_block<128x128>}/w_scale_block = #ggemm.scale_block<128x128>, config = #ggemm.tile_config<$config>}/" \
    "$f" > "$src/$b.mlir"
  grep -q 'config = ' "$src/$b.mlir" || { echo "no config in $b" >&2; exit 1; }
  "$build/bin/gemm-opt" "$src/$b.mlir" \
    --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=$out" -o /dev/null
done
echo "$(git rev-parse --short HEAD)+{$config}" > "$out/COMMIT"
ls "$out"/*.json | wc -l
