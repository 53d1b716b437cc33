#!/usr/bin/env bash
# Builds the main K-ragged kernel (test/gpu/kernels_kragged/
# kragged_nk_bf16_f32.mlir) with the consumers' K-ragged mask removed, into
# .device/bundles_kragged_ablation: check_kragged.py --ablation-bundles runs
# the main kernel's cases with it and requires some to fail, which shows that
# the check sees a missing mask (the kernel then adds the next segment's rows
# of the last K block into a group's sum). The compiler has no switch for
# this: the IR after ggemm-warp-specialize is edited (each ggemm.zero_k_tail
# is dropped and its results replaced by its tiles) and the rest of
# ggemm-to-ptx runs on it (the passes before ggemm-stage-ring leave a
# warp-specialised launch alone).
# The FP8 kernel (test/gpu/kernels_kragged_fp8/kragged_fp8_nk_f32.mlir) is
# built likewise into <out-dir>_fp8 with only the mask at a segment's start
# removed (the `from` of each ggemm.zero_k_tail): its 128-token blocks start
# before the segment, so the previous group's rows then enter the sum
# (check_kragged_fp8.py --ablation-bundles).
#   bash test/gpu/build_kragged_ablation.sh [build-dir] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-.device/bundles_kragged_ablation}
rm -rf "$out" && mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bin/gemm-opt" test/gpu/kernels_kragged/kragged_nk_bf16_f32.mlir \
  --ggemm-select-config --ggemm-tile --ggemm-swap-ab \
  --ggemm-persistent-schedule --ggemm-warp-specialize -o "$tmp/roles.mlir"
python3 - "$tmp/roles.mlir" "$tmp/unmasked.mlir" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
pattern = re.compile(r"^\s*(%[\w.]+)(?::(\d+))? = ggemm\.zero_k_tail (.+?) valid\(.+$\n",
                     re.M)
edits = 0
while (match := pattern.search(text)):
    result, count, operands = match.group(1), match.group(2), match.group(3)
    tiles = [t.strip() for t in operands.split(",")]
    text = text[:match.start()] + text[match.end():]
    if count:
        for i, tile in enumerate(tiles):
            text = re.sub(re.escape(f"{result}#{i}") + r"\b", tile, text)
    else:
        text = re.sub(re.escape(result) + r"\b", tiles[0], text)
    edits += 1
if not edits:
    sys.exit("no ggemm.zero_k_tail found: nothing to ablate")
open(sys.argv[2], "w").write(text)
print(f"removed {edits} ggemm.zero_k_tail")
PY
"$build/bin/gemm-opt" "$tmp/unmasked.mlir" \
  --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=$out" -o /dev/null
git rev-parse --short HEAD > "$out/COMMIT"
ls "$out"
rm -rf "${out}_fp8" && mkdir -p "${out}_fp8"
"$build/bin/gemm-opt" test/gpu/kernels_kragged_fp8/kragged_fp8_nk_f32.mlir \
  --ggemm-select-config --ggemm-tile --ggemm-swap-ab \
  --ggemm-persistent-schedule --ggemm-warp-specialize -o "$tmp/fp8_roles.mlir"
grep -q "ggemm.zero_k_tail .* from(" "$tmp/fp8_roles.mlir" ||
  { echo "no ggemm.zero_k_tail ... from(...) found: nothing to ablate" >&2; exit 1; }
sed -E 's/(ggemm\.zero_k_tail .* valid\([^)]*\)) from\([^)]*\)/\1/' \
  "$tmp/fp8_roles.mlir" > "$tmp/fp8_unmasked.mlir"
"$build/bin/gemm-opt" "$tmp/fp8_unmasked.mlir" \
  --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=${out}_fp8" -o /dev/null
cp "$out/COMMIT" "${out}_fp8/COMMIT"
ls "${out}_fp8"
