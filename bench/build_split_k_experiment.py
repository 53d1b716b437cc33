#!/usr/bin/env python3
"""Builds the split-K experiment of FP8 decode (bench/NOTES.md v35): the
dense FP8 kernels of check_fp8.py's benchmark whose tiles leave SMs idle at
M <= 128 (`fp8_dense_n{n}_k{k}`, N = 576, 2112, 4096; K = 7168) with
explicit tile configs, each without and with `split_k` = S (the tile's K
blocks over a cluster of S CTAs, partial sums added in rank 0's shared
memory), as bundles named `fp8_dense_n{n}_k{k}_{label}` for
bench/bench_fp8_decode.py's --experiments:

    python3 bench/build_split_k_experiment.py .device/bundles_split_k
    FP8_DECODE_EXPERIMENTS=.device/bundles_split_k \\
        bash test/gpu/run_on_device.sh fp8-decode      # through `device`
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "gpu"))
import gen_fp8_kernels as gen  # noqa: E402

SHAPES = [(576, 7168), (2112, 7168), (4096, 7168)]
# select-config's tiles at 1-8 tokens (swap-AB, 8 tokens by 64 weight rows)
# and at 33-128 (64 x 16 on one warpgroup), and 128 x 64 on two.
TILES = {
    "sw8": "block_m = 8, block_n = 64, block_k = 128, stages = 8, "
           "consumer_warpgroups = 1, swap_ab = true, promote_pairs = true",
    "m64n16": "block_m = 64, block_n = 16, block_k = 128, stages = 8, "
              "consumer_warpgroups = 1, promote_pairs = true",
    "m128n64": "block_m = 128, block_n = 64, block_k = 128, stages = 8, "
               "promote_pairs = true",
    # 128 tokens at N = 576 (second round): tiles that read fewer token
    # rows per weight byte than 64 x 16.
    "m64n32": "block_m = 64, block_n = 32, block_k = 128, stages = 8, "
              "consumer_warpgroups = 1, promote_pairs = true",
    "m64n64": "block_m = 64, block_n = 64, block_k = 128, stages = 8, "
              "consumer_warpgroups = 1, promote_pairs = true",
    "m128n32": "block_m = 128, block_n = 32, block_k = 128, stages = 8, "
               "promote_pairs = true",
    "sw128": "block_m = 128, block_n = 64, block_k = 128, stages = 8, "
             "consumer_warpgroups = 1, swap_ab = true",
}
SPLITS = {"sw8": (1, 2, 3, 4, 6, 8), "m64n16": (1, 2, 3, 4),
          "m128n64": (1, 2, 4), "m64n32": (1, 2, 3), "m64n64": (2, 3, 4),
          "m128n32": (2, 3, 4), "sw128": (1, 2, 4)}
# The second round's tiles only at N = 576.
SECOND = ("m64n32", "m64n64", "m128n32", "sw128")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        os.remove(os.path.join(out, old))
    gemm_opt = os.path.join(ROOT, "build", "bin", "gemm-opt")
    with tempfile.TemporaryDirectory() as src:
        for n, k in SHAPES:
            for tile, config in TILES.items():
                if tile in SECOND and n != 576:
                    continue
                for s in SPLITS[tile]:
                    label = tile + (f"s{s}" if s > 1 else "")
                    full = config + (f", split_k = {s}" if s > 1 else "")
                    name, args, lines, epi, _, scales = gen.dense(n, k)
                    kernel = f"{name}_{label}"
                    gen.write(kernel, args, list(lines), epi,
                              f"#ggemm.tile_config<{full}>", scales,
                              out_dir=src,
                              generator="bench/build_split_k_experiment.py")
                    subprocess.run(
                        [gemm_opt, os.path.join(src, f"{kernel}.mlir"),
                         "--ggemm-to-ptx=chip=sm_90a format=bin "
                         f"bundle-dir={out}", "-o", os.devnull], check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, cwd=ROOT,
                            check=True).stdout.strip()
    with open(os.path.join(out, "COMMIT"), "w") as f:
        f.write(commit + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
