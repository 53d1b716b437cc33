#!/usr/bin/env python3
"""Writes the tile experiments of FP8 decode (bench/kernels_fp8_decode): the
dense FP8 kernels of check_fp8.py's benchmark (one weight, 1x128 / 128x128
scales; `fp8_dense_n{n}_k{k}` in test/gpu/gen_fp8_kernels.py) with explicit
tile configs instead of ggemm-select-config's, for bench/bench_fp8_decode.py
to time at M <= 128 against the default kernels and cuBLAS. Regenerate after
editing:

    python3 bench/gen_fp8_decode_kernels.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "gpu"))
import gen_fp8_kernels as gen  # noqa: E402

OUT = os.path.join(HERE, "kernels_fp8_decode")
# Label -> tile config. select-config gives M <= 128 (one group) 128x64
# tiles with 6 stages; the A tile (all 128 token rows) is then read from L2
# by every CTA, twice the weight tile's bytes.
CONFIGS = {
    # The default's tile with the deeper ring the shared memory allows.
    "m128n64s8": "block_m = 128, block_n = 64, block_k = 128, stages = 8",
    # 64 rows a CTA (one consumer warpgroup), without and with a 2-CTA
    # cluster whose CTAs take the two 64-row halves and share the weight
    # tile by TMA multicast: L2 reads per CTA and K block 8 KB of A and
    # 8 KB of w (16 KB) instead of 16 + 8 KB.
    "m64n128": "block_m = 64, block_n = 128, block_k = 128, stages = 6, "
               "consumer_warpgroups = 1",
    "m64n128c2": "block_m = 64, block_n = 128, block_k = 128, stages = 6, "
                 "consumer_warpgroups = 1, cluster_m = 2",
    "m64n128c2s8": "block_m = 64, block_n = 128, block_k = 128, stages = 8, "
                   "consumer_warpgroups = 1, cluster_m = 2",
    # Narrower weight tiles, for more CTAs where N is small (N = 2112 gives
    # select-config's 128 x 64 tiles 33 CTAs): 64 x 64 and 64 x 32 in
    # cluster pairs (the pair's two 64-row halves share the weight tile),
    # and 128 x 32.
    "m64n64c2s8": "block_m = 64, block_n = 64, block_k = 128, stages = 8, "
                  "consumer_warpgroups = 1, cluster_m = 2",
    "m64n32c2s8": "block_m = 64, block_n = 32, block_k = 128, stages = 8, "
                  "consumer_warpgroups = 1, cluster_m = 2",
    "m128n32s8": "block_m = 128, block_n = 32, block_k = 128, stages = 8",
    # 56 columns: N = 7168 in 128 tiles, nearly one per SM (64 columns: 112).
    "m128n56s8": "block_m = 128, block_n = 56, block_k = 128, stages = 8",
    # 16 columns (DeepGEMM's narrowest block): N = 2112 in 132 tiles, one
    # per SM, where 32 columns make 66; 128 token rows on two consumer
    # warpgroups or 64 on one, with two K blocks per wgmma wait (v23), and
    # the 32- and 56-column tiles with pairs for comparison.
    "m128n16s8p": "block_m = 128, block_n = 16, block_k = 128, stages = 8, "
                  "promote_pairs = true",
    "m64n16s8p": "block_m = 64, block_n = 16, block_k = 128, stages = 8, "
                 "consumer_warpgroups = 1, promote_pairs = true",
    "m128n32s8p": "block_m = 128, block_n = 32, block_k = 128, stages = 8, "
                  "promote_pairs = true",
    "m64n32s8p": "block_m = 64, block_n = 32, block_k = 128, stages = 8, "
                 "consumer_warpgroups = 1, promote_pairs = true",
    "m128n56s8p": "block_m = 128, block_n = 56, block_k = 128, stages = 8, "
                  "promote_pairs = true",
    # Swap-AB (the weight tile in wgmma's M, the tokens in its N): select-
    # config's choice for <= 64 rows is 128 weight rows over two consumer
    # warpgroups (N = 7168: 56 CTAs); 64 weight rows on one give twice the
    # CTAs.
    # 128 x 128 tiles whose K blocks split over a 2-CTA cluster (v41): at
    # M = 128 the 128 x 64 tile takes 3 bytes into each SM per weight byte
    # (16 KB of tokens, 8 KB of weights a K block), this one 2; N = 7168
    # keeps 112 CTAs.
    "m128n128k2": "block_m = 128, block_n = 128, block_k = 128, stages = 4, "
                  "split_k = 2",
    "swap8n64": "block_m = 8, block_n = 64, block_k = 128, stages = 8, "
                "consumer_warpgroups = 1, swap_ab = true",
    "swap24n64": "block_m = 24, block_n = 64, block_k = 128, stages = 8, "
                 "consumer_warpgroups = 1, swap_ab = true",
    "swap64n64": "block_m = 64, block_n = 64, block_k = 128, stages = 8, "
                 "consumer_warpgroups = 1, swap_ab = true",
    # The swap-AB token tile sized to the rows without select-config's
    # +30 % margin (a one-group call's rows are exact), with pairs: 8, 16,
    # 32 and 64 tokens against the bucket tiles of 24, 48 and 88.
    "swap8n64p": "block_m = 8, block_n = 64, block_k = 128, stages = 8, "
                 "consumer_warpgroups = 1, swap_ab = true, promote_pairs = true",
    "swap16n64p": "block_m = 16, block_n = 64, block_k = 128, stages = 8, "
                  "consumer_warpgroups = 1, swap_ab = true, promote_pairs = true",
    "swap32n64p": "block_m = 32, block_n = 64, block_k = 128, stages = 8, "
                  "consumer_warpgroups = 1, swap_ab = true, promote_pairs = true",
    "swap64n64p": "block_m = 64, block_n = 64, block_k = 128, stages = 8, "
                  "consumer_warpgroups = 1, swap_ab = true, promote_pairs = true",
}


# Split-K, emulated (bench_fp8_decode.py's last table): S K-slices of the
# dense problem as one batched FP8 matmul with 128x128 tiles (S x N / 128
# CTAs), whose partial products the timing does not reduce: what the main
# loop of a split-K kernel with wide weight tiles would take.
# Also the shapes the experiments run on: the four dense shapes the
# benchmark timed when they were written (gen_fp8_kernels.DENSE_NK has since
# grown to DeepGEMM's whole list).
SPLITS = {(7168, 16384): 2, (4096, 7168): 4, (2112, 7168): 7, (7168, 2048): 2}
SPLIT_CONFIG = "block_m = 128, block_n = 128, block_k = 128, stages = 6"


# The row-stride test (bench/bench_fp8_stride.py): N = 7168, K = 16384 is the
# one decode shape with a power-of-two weight row stride (16 KB) and enough
# CTAs, and it reads at 65 % of HBM in every tiling tried. The same kernels
# with K padded by one 128-wide block (row stride 16512 bytes) tell whether
# the stride is what caps it.
STRIDE_NK = [(7168, 16384 + 128)]
STRIDE_LABELS = ("m128n64s8", "swap64n64")


def split_kernel(n, k, s):
    """fp8_splitk_n{n}_k{k}_s{s}: batched [B, M, k / s] x [B, n, k / s]."""
    ks = k // s
    name, args, lines, epi, _, scales = gen.grouped("batched", n, ks,
                                                    name=f"fp8_splitk_n{n}_k{k}_s{s}")
    gen.write(name, args, list(lines), epi,
              f"#ggemm.tile_config<{SPLIT_CONFIG}>", scales, out_dir=OUT,
              generator="bench/gen_fp8_decode_kernels.py")


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        if old.endswith(".mlir"):
            os.remove(os.path.join(OUT, old))
    for n, k in SPLITS:
        base = gen.dense(n, k)
        for label, config in CONFIGS.items():
            name, args, lines, epi, _, scales = base
            gen.write(f"{name}_{label}", args, list(lines), epi,
                      f"#ggemm.tile_config<{config}>", scales, out_dir=OUT,
                      generator="bench/gen_fp8_decode_kernels.py")
        split_kernel(n, k, SPLITS[(n, k)])
    for n, k in STRIDE_NK:
        name, args, lines, epi, _, scales = gen.dense(n, k)
        for label in STRIDE_LABELS:
            gen.write(f"fp8_pad_n{n}_k{k}_{label}", args, list(lines), epi,
                      f"#ggemm.tile_config<{CONFIGS[label]}>", scales,
                      out_dir=OUT, generator="bench/gen_fp8_decode_kernels.py")

if __name__ == "__main__":
    main()
