#!/usr/bin/env bash
# Builds the compiler of an earlier commit in a git worktree and compiles
# the current tree's benchmark kernels (bench/kernels/*.mlir and the test
# kernels bench_e2e.py times) with it, into
# .device/bundles_<commit>, so that bench/bench_e2e.py --baseline can time
# the old kernels and the new ones in the same run.
#   bash bench/build_baseline.sh eaf177a
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:?usage: build_baseline.sh <commit>}
tree=${BASELINE_TREE:-../ggemm-baseline-$commit}
if [ ! -d "$tree" ]; then
  git worktree add --detach "$tree" "$commit"
fi
(cd "$tree" && BUILD_DIR=build bash scripts/setup.sh > /dev/null)
out=.device/bundles_$commit
rm -rf "$out" && mkdir -p "$out"
for f in bench/kernels/*.mlir test/gpu/kernels/seg_nk_bf16.mlir \
         test/gpu/kernels/seg_nk_bf16_n256.mlir; do
  "$tree/build/bin/gemm-opt" "$f" \
    --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=$out" -o /dev/null
done
echo "$commit" > "$out/COMMIT"
ls "$out"
