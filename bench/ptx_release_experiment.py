#!/usr/bin/env python3
"""Stage-release experiments on the PTX (NOTES v22), before changing the
compiler: builds kernels from their .mlir sources to PTX, edits how the
consumers give a ring slot back, and assembles each with ptxas -O3 (what
`--ggemm-to-ptx format=bin` runs: an unedited kernel assembles to the same
cubin, byte for byte) into a bundle directory the GPU scripts can time as a
baseline.

Edits (`--edit`):
- `lane0`: one arrival per consumer warp (lane 0, after the warp-wide
  wgmma wait) instead of one per thread; the empty mbarriers' count divided
  by 32 to match. CUTLASS's and DeepGEMM's pipelines release so.
- `early`: the FP8 release moved from after the promotion's FMAs to right
  after the K block's `wgmma.wait_group 0`, as DeepGEMM orders it: the slot
  is free once the product has read it; the scale factors are already in
  registers.
- `both`: the two together.
- `wscale-const` (NOTES v27; a timing bound, not a kernel: its results
  are wrong): the producer's global load of each slot's weight scale
  replaced by the constant 1.0, to see whether that load's latency, paid
  once per K block in the producer's loop, bounds a decode CTA.

Kernels with clusters (their release is already one lane per warp and
cluster CTA) are left as they are. Every edit is checked to have applied
where it should; a kernel where it did not is an error.

    python3 bench/ptx_release_experiment.py --edit lane0 --out .device/x \
        test/gpu/kernels_fp8/fp8_seg_n6144_k7168.mlir ...
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PTXAS = "/usr/local/cuda/bin/ptxas"

INIT = re.compile(r"^\s*mbarrier\.init\.shared\.b64\s+\[[^\]]+\],\s*(%r\d+);")
ARRIVE = re.compile(r"^(\s*)mbarrier\.arrive\.shared\.b64\s+(%rd\d+),\s*(\[[^\]]+\]);\s*$")


def edit_lane0(lines):
    # The register of the empty mbarriers' count: the init register whose
    # `mov.b32` sets a multiple of 128 (the full ones count 1 or 1 + 128).
    regs = {m.group(1) for line in lines if (m := INIT.match(line))}
    movs = 0
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*mov\.b32\s+)(%r\d+),\s*(\d+);\s*$", line)
        if m and m.group(2) in regs and int(m.group(3)) % 128 == 0 and int(m.group(3)) >= 128:
            lines[i] = f"{m.group(1)}{m.group(2)}, {int(m.group(3)) // 32};\n"
            movs += 1
    arrives = 0
    for i, line in enumerate(lines):
        m = ARRIVE.match(line)
        if m:
            pad, dst, addr = m.groups()
            lines[i] = (f"{pad}{{\n{pad}.reg .pred lane0_p;\n{pad}.reg .b32 lane0_r;\n"
                        f"{pad}mov.u32 lane0_r, %laneid;\n"
                        f"{pad}setp.eq.u32 lane0_p, lane0_r, 0;\n"
                        f"{pad}@lane0_p mbarrier.arrive.shared.b64 {dst}, {addr};\n"
                        f"{pad}}}\n")
            arrives += 1
    if movs != 1 or arrives == 0:
        raise SystemExit(f"lane0: {movs} count moves, {arrives} arrivals edited")
    return lines


def edit_early(lines):
    """Returns the lines and the number of releases moved (none where the
    promotion does not end right before the release, e.g. swap-AB tiles)."""
    moved = 0
    for i, line in enumerate(lines):
        if not ARRIVE.match(line):
            continue
        j = i - 1
        while j >= 0 and lines[j].strip().startswith("fma.rn.f32"):
            j -= 1
        if j < i - 1 and "wgmma.wait_group.sync.aligned" in lines[j] and lines[j].strip().endswith("0;"):
            arrive = lines.pop(i)
            lines.insert(j + 1, arrive)
            moved += 1
    return lines, moved


def edit_wscale_const(lines):
    """The producer's (after `setmaxnreg.dec`) `ld.global.b32` whose result
    a `st.shared.b32` stores (the weight scale into its slot) becomes a
    `mov` of 1.0."""
    start = next(i for i, line in enumerate(lines) if "setmaxnreg.dec" in line)
    stored = {m.group(1) for line in lines[start:]
              if (m := re.match(r"^\s*st\.shared\.b32\s+\[[^\]]+\],\s*(%r\d+);", line))}
    count = 0
    for i in range(start, len(lines)):
        m = re.match(r"^(\s*)ld\.global\.b32\s+(%r\d+),\s*\[[^\]]+\];\s*$", lines[i])
        if m and m.group(2) in stored:
            lines[i] = f"{m.group(1)}mov.b32 {m.group(2)}, 0f3F800000;\n"
            count += 1
    return lines, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--edit", choices=("lane0", "early", "both", "wscale-const"), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--gemm-opt", default=str(ROOT / "build" / "bin" / "gemm-opt"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        for src in args.sources:
            subprocess.run([args.gemm_opt, str(src),
                            f"--ggemm-to-ptx=chip=sm_90a format=isa bundle-dir={tmp}",
                            "-o", "/dev/null"], check=True)
            manifest_path = Path(tmp) / f"{src.stem}_kernel.json"
            manifest = json.loads(manifest_path.read_text())
            # A kernel of one variant is its own manifest.
            for variant in manifest.get("variants", [manifest]):
                ptx = Path(tmp) / variant.pop("ptx")
                lines = ptx.read_text().splitlines(keepends=True)
                edited = "mapa" not in "".join(lines)
                moved = 0
                if edited:
                    # The move first: it looks for the plain arrive.
                    if args.edit in ("early", "both"):
                        lines, moved = edit_early(lines)
                    if args.edit in ("lane0", "both"):
                        lines = edit_lane0(lines)
                    if args.edit == "wscale-const":
                        lines, moved = edit_wscale_const(lines)
                        if moved == 0:
                            raise SystemExit(f"{ptx.name}: no weight-scale load")
                ptx.write_text("".join(lines))
                cubin = ptx.with_suffix(".cubin").name
                # Without -v, which ptxas writes into the cubin; again with
                # it for the spill counts.
                subprocess.run([PTXAS, "-O3", "-arch=sm_90a", str(ptx), "-o",
                                str(args.out / cubin)], check=True)
                out = subprocess.run([PTXAS, "-O3", "-arch=sm_90a", "-v", str(ptx), "-o",
                                      "/dev/null"], capture_output=True, text=True, check=True)
                spills = re.findall(r"(\d+) bytes spill stores", out.stderr)
                print(f"{cubin}: {'edited' if edited else 'cluster, unedited'}, "
                      f"{moved} releases moved, spill stores {spills}")
                variant["cubin"] = cubin
            (args.out / manifest_path.name).write_text(json.dumps(manifest, indent=1))
    (args.out / "COMMIT").write_text(f"{commit}+ptx-edit-{args.edit}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
