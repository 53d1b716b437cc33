#!/usr/bin/env python3
"""Two (or, with --blocks 4, four: NOTES v26) FP8 K blocks per wgmma wait
(NOTES v23), tried on the IR before
changing the compiler: builds kernels to the IR that `convert-ggemm-to-nvvm`
receives, rewrites each small tile's block-scaled K loop to take two K
blocks per step, then runs the rest of `ggemm-to-ptx` on it (the same
passes, from its own `--dump-pass-pipeline`) into a bundle directory that
the GPU scripts can time as a baseline.

Per step, the rewritten loop issues block i's product with one wgmma group
left pending (`ggemm.mma {pending = 1}`), then block i + 1's into a second
product, waits for both, and promotes them in order into the accumulator:

    %p0 = ggemm.mma ... {pending = 1}
    %p1 = ggemm.mma ...              // wgmma.wait_group 0: both done
    %d0 = ggemm.mma_wait %p0
    %a1 = ggemm.promote %d0 into %acc ...
    %a2 = ggemm.promote %p1 into %a1 ...

So a K block costs half a wgmma wait. Nothing reads a product while a
wgmma group is in flight (what made ptxas serialise v9's version). The
sum's order is the original one. Only tiles of at most 128 x 64
accumulator elements are rewritten (a third 64-column register set fits
there; 192x128 tiles would spill), and only loops whose trip count is a
multiple of the blocks per step; the script fails on a kernel where no
loop qualified. With --blocks 2 the rewrite gives the compiler's
`promote_pairs` cubins byte for byte (checked on the 64x16 decode tile).

    python3 bench/kloop_pairs_experiment.py --out .device/x \
        test/gpu/kernels_fp8/fp8_dense_n2112_k7168.mlir ...

--pipeline (NOTES v28) instead overlaps each K block's promotion with
the next block's wgmma in the same warpgroup: block i + 1's product is
issued (`pending = 1`, so block i's group has finished) before block i's
promotion, with two product register sets that keep their roles (the
loop unrolled by two, so no copy reads a product in flight: v9's ptxas
C7514). The trip count must be a compile-time constant of at least 2;
--registers P,C sets the producer's and consumers' setmaxnreg budgets
(three 64 x 128 register sets need the consumers' 240).
"""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]

FOR = re.compile(r"^(\s*)(%\w+):2 = scf\.for (%\w+) = (%\w+) to (%\w+) step (%\w+) "
                 r"iter_args\((%\w+) = (%\w+), (%\w+) = (%\w+)\) -> "
                 r"\((!ggemm\.accumulator<(\d+)x(\d+)xf32>), index\) \{$")


def const_values(lines):
    values = {}
    for line in lines:
        m = re.match(r"^\s*(%\w+) = arith\.constant (\d+) : index$", line)
        if m:
            values[m.group(1)] = int(m.group(2))
    return values


def match_kloop(lines, i, consts):
    """The block-scaled K loop at line i (ring_get, zero_accumulator, mma,
    promote, ring_release, the position's increment, from 0 by 1 to a
    constant), its parts by name, or None."""
    m = FOR.match(lines[i])
    body = lines[i + 1:i + 10] if m else []
    if not m or len(body) < 9 or not body[8].strip() == "}":
        return None
    groups = m.groups()
    lb, ub, step = groups[3], groups[4], groups[5]
    get, zero, mma, promote, release, c1, add, yld = (b.strip() for b in body[:8])
    ok = (get.split(" = ")[1].startswith("ggemm.ring_get")
          and "ggemm.zero_accumulator" in zero and "ggemm.mma " in mma
          and "ggemm.promote" in promote and release.startswith("ggemm.ring_release")
          and "arith.constant 1 : index" in c1 and "arith.addi" in add
          and yld.startswith("scf.yield") and consts.get(lb) == 0
          and consts.get(step) == 1 and consts.get(ub) is not None)
    if not ok:
        return None
    pad, res, iv, lb, ub, step, acc, init, pos, pos0, acc_t, rows, cols = groups
    ring_tail = get.split(" = ", 1)[1]               # ggemm.ring_get %1[%arg10] : ...
    mma_ops, mma_ty = mma.split(" = ", 1)[1][len("ggemm.mma "):].split(" : ", 1)
    return SimpleNamespace(
        pad=pad, res=res, lb=lb, step=step, acc=acc, init=init, pos=pos,
        pos0=pos0, acc_t=acc_t, elems=int(rows) * int(cols), trip=consts[ub],
        get=get, zero=zero, mma=mma, promote=promote, release=release, c1=c1,
        add=add, yld=yld,
        g=get.split(" = ")[0].split(":")[0],           # %6
        z=zero.split(" = ")[0],                          # %7
        p=mma.split(" = ")[0],                           # %8
        ring=ring_tail.split("[")[0].split()[-1], ring_ty=ring_tail.split(" : ", 1)[1],
        mma_ops=mma_ops, mma_ty=mma_ty,                  # %6#0, %6#1, %7 : ...
        prom_tail=promote.split(" = ", 1)[1])


def rewrite(text: str, max_elems: int, blocks: int = 2):
    lines = text.split("\n")
    consts = const_values(lines)
    out, i, rewritten, counter = [], 0, 0, 0
    while i < len(lines):
        k = match_kloop(lines, i, consts)
        if not k or k.trip % blocks or k.elems > max_elems:
            out.append(lines[i])
            i += 1
            continue
        counter += 1
        s = f"kp{counter}"
        pad, step, acc, pos, acc_t = k.pad, k.step, k.acc, k.pos, k.acc_t
        get, zero, release, c1, yld = k.get, k.zero, k.release, k.c1, k.yld
        g, z, p, ring, ring_ty = k.g, k.z, k.p, k.ring, k.ring_ty
        mma_ops, mma_ty, prom_tail = k.mma_ops, k.mma_ty, k.prom_tail
        a = k.promote.split(" = ")[0]                    # %9
        one = c1.split(" = ")[0]                         # %c1_4
        nxt = k.add.split(" = ")[0]                      # %10
        q = pad + "  "
        # Blocks 0 .. G-2 leave their wgmma groups in flight (a wait for
        # at most G - 1 pending groups is a no-op there); the last block's
        # wait_group 0 covers all G, then the products are promoted in
        # block order.
        pend = blocks - 1
        out.append(f"{pad}%step_{s} = arith.constant {blocks} : index")
        out.append(lines[i].replace(f"step {step}", f"step %step_{s}"))
        out += [f"{q}{get}", f"{q}{zero}",
                f"{q}{p} = ggemm.mma {mma_ops} {{pending = {pend} : i64}} : {mma_ty}",
                f"{q}{c1}"]
        positions, gets, prods = [pos], [g], [p]
        for j in range(1, blocks):
            pj, gj, zj = f"%pos{j}_{s}", f"%get{j}_{s}", f"%zero{j}_{s}"
            out += [f"{q}{pj} = arith.addi {positions[-1]}, {one} : index",
                    f"{q}{gj}:4 = ggemm.ring_get {ring}[{pj}] : {ring_ty}",
                    f"{q}{zj} = {zero.split(' = ', 1)[1]}"]
            attr = f" {{pending = {pend} : i64}}" if j < blocks - 1 else ""
            out.append(f"{q}%prod{j}_{s} = ggemm.mma "
                       + mma_ops.replace(g + "#", f"{gj}#").replace(z, zj)
                       + f"{attr} : {mma_ty}")
            positions.append(pj)
            gets.append(gj)
            prods.append(f"%prod{j}_{s}")
        done = []
        for j in range(blocks - 1):
            out.append(f"{q}%done{j}_{s} = ggemm.mma_wait {prods[j]} : {acc_t}")
            done.append(f"%done{j}_{s}")
        done.append(prods[-1])
        out.append(f"{q}{a} = " + prom_tail.replace(f"{p} into", f"{done[0]} into", 1))
        prev = a
        for j in range(1, blocks):
            out.append(f"{q}%acc{j}_{s} = "
                       + prom_tail.replace(f"{p} into {acc}", f"{done[j]} into {prev}", 1)
                                  .replace(g + "#", f"{gets[j]}#"))
            prev = f"%acc{j}_{s}"
        out.append(f"{q}{release}")
        for j in range(1, blocks):
            out.append(f"{q}ggemm.ring_release {ring}[{positions[j]}] : {ring_ty}")
        out += [f"{q}{nxt} = arith.addi {positions[-1]}, {one} : index",
                f"{q}" + yld.replace(f"scf.yield {a},", f"scf.yield {prev},", 1),
                lines[i + 9]]
        rewritten += 1
        i += 10
    return "\n".join(out), rewritten


def sub_results(text: str, res: str, names) -> str:
    for j, name in enumerate(names):
        text = re.sub(re.escape(f"{res}#{j}") + r"(?!\d)", name, text)
    return text


def pipeline_rewrite(text: str, max_elems: int, unroll: int):
    """The software-pipelined K loop of --pipeline (see the docstring)."""
    lines = text.split("\n")
    consts = const_values(lines)
    i, counter = 0, 0
    while i < len(lines):
        k = match_kloop(lines, i, consts)
        if not k or k.trip < 2 or k.elems > max_elems:
            i += 1
            continue
        counter += 1
        s = f"pl{counter}"
        pad, res, lb, acc, init, pos0, acc_t, n = (
            k.pad, k.res, k.lb, k.acc, k.init, k.pos0, k.acc_t, k.trip)
        g, z, p, ring, ring_ty = k.g, k.z, k.p, k.ring, k.ring_ty
        mma_ops, mma_ty, prom_tail = k.mma_ops, k.mma_ty, k.prom_tail
        zero_op = k.zero.split(" = ", 1)[1]
        q = pad + "  "

        def issue(ind, tag, at, pending=True):
            attr = " {pending = 1 : i64}" if pending else ""
            return [f"{ind}%g{tag}_{s}:4 = ggemm.ring_get {ring}[{at}] : {ring_ty}",
                    f"{ind}%z{tag}_{s} = {zero_op}",
                    f"{ind}%p{tag}_{s} = ggemm.mma "
                    + mma_ops.replace(g + "#", f"%g{tag}_{s}#").replace(z, f"%z{tag}_{s}")
                    + f"{attr} : {mma_ty}"]

        def promote_(ind, res_, prod, into, gets):
            return [f"{ind}{res_} = " + prom_tail.replace(f"{p} into {acc}", f"{prod} into {into}", 1)
                    .replace(g + "#", f"{gets}#")]

        # U blocks per iteration, U the largest divisor of n up to --unroll;
        # nothing is in flight at the back edge: ptxas serialises (C7514)
        # a product read after `wait_group 1` when its wgmma was issued
        # before a loop header (tried: the loop carrying one product in
        # flight), so the last block of each iteration waits for all.
        u = max(d for d in range(1, min(n, unroll) + 1) if n % d == 0)
        out = [f"{pad}%c1_{s} = arith.constant 1 : index",
               f"{pad}%cu_{s} = arith.constant {u} : index",
               f"{pad}%citers_{s} = arith.constant {n // u} : index",
               f"{pad}%L_{s}:2 = scf.for %i_{s} = {lb} to %citers_{s} step %c1_{s} "
               f"iter_args(%acc_{s} = {init}, %pos_{s} = {pos0}) -> ({acc_t}, index) {{"]
        positions = [f"%pos_{s}"]
        for j in range(1, u):
            out.append(f"{q}%pos{j}_{s} = arith.addi %pos{j - 1 if j > 1 else ''}_{s}, %c1_{s} : index"
                       .replace(f"%pos0_{s}", f"%pos_{s}"))
            positions.append(f"%pos{j}_{s}")
        out += issue(q, "b0", positions[0])
        into = f"%acc_{s}"
        for j in range(1, u):
            out += issue(q, f"b{j}", positions[j])
            out += promote_(q, f"%a{j - 1}_{s}", f"%pb{j - 1}_{s}", into, f"%gb{j - 1}_{s}")
            out += [f"{q}ggemm.ring_release {ring}[{positions[j - 1]}] : {ring_ty}"]
            into = f"%a{j - 1}_{s}"
        out += [f"{q}%d_{s} = ggemm.mma_wait %pb{u - 1}_{s} : {acc_t}"]
        out += promote_(q, f"%a{u - 1}_{s}", f"%d_{s}", into, f"%gb{u - 1}_{s}")
        out += [f"{q}ggemm.ring_release {ring}[{positions[u - 1]}] : {ring_ty}",
                f"{q}%next_{s} = arith.addi {positions[u - 1]}, %c1_{s} : index",
                f"{q}scf.yield %a{u - 1}_{s}, %next_{s} : {acc_t}, index",
                f"{pad}}}"]
        rest = sub_results("\n".join(lines[i + 10:]), res, [f"%L_{s}#0", f"%L_{s}#1"])
        lines = lines[:i] + out + rest.split("\n")
        i += len(out)
    return "\n".join(lines), counter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-elems", type=int, default=128 * 64)
    parser.add_argument("--blocks", type=int, default=2,
                        help="K blocks per wgmma wait (2: NOTES v23's pairs; "
                        "4: v26's quads)")
    parser.add_argument("--gemm-opt", default=str(ROOT / "build" / "bin" / "gemm-opt"))
    parser.add_argument("--keep-ir", type=Path, help="write the rewritten IR here")
    parser.add_argument("--pipeline", action="store_true",
                        help="overlap each promotion with the next block's "
                        "wgmma (NOTES v28) instead of the pairs")
    parser.add_argument("--unroll", type=int, default=8,
                        help="--pipeline: at most this many K blocks per "
                        "iteration (the largest divisor of the block count)")
    parser.add_argument("--registers", help="P,C: the producer's and the "
                        "consumers' setmaxnreg budgets, written into the IR")
    parser.add_argument("--config", help="a #ggemm.tile_config body to build the "
                        "block-scaled kernels with instead of select-config's, as "
                        "bench/build_fp8_tile_experiment.sh does")
    parser.add_argument("--format", default="bin", choices=["bin", "isa"],
                        help="isa: write PTX, to read ptxas -v's registers, "
                        "spills and C7514 serialisation warnings")
    parser.add_argument("--control", action="store_true",
                        help="rewrite nothing: the same path must give the "
                        "ordinary cubins, byte for byte")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    tmp = tempfile.TemporaryDirectory()
    if args.config:
        configured = []
        for src in args.sources:
            text = src.read_text()
            marker = "w_scale_block = #ggemm.scale_block<128x128>}"
            if marker not in text:
                raise SystemExit(f"{src}: no 128x128 weight scales to configure")
            dst = Path(tmp.name) / src.name
            dst.write_text(text.replace(marker, marker[:-1]
                                        + f", config = #ggemm.tile_config<{args.config}>}}"))
            configured.append(dst)
        args.sources = configured
    for src in args.sources:
        options = f"chip=sm_90a format={args.format} bundle-dir={args.out}"
        dump = subprocess.run([args.gemm_opt, str(src), f"--ggemm-to-ptx={options}",
                               "--dump-pass-pipeline", "-o", "/dev/null"],
                              capture_output=True, text=True, check=True).stderr
        pipeline = " ".join(dump.split("\n", 1)[1].split())
        head, tail = pipeline.split("convert-ggemm-to-nvvm", 1)
        ir = subprocess.run([args.gemm_opt, str(src), f"--ggemm-to-ptx={options}",
                             "--mlir-print-ir-before=convert-ggemm-to-nvvm",
                             "-o", "/dev/null"], capture_output=True, text=True,
                            check=True).stderr
        ir = ir.split("\n", 1)[1]  # the "// -----// IR Dump" line
        if args.control:
            edited, count = ir, 0
        elif args.pipeline:
            edited, count = pipeline_rewrite(ir, args.max_elems, args.unroll)
        else:
            edited, count = rewrite(ir, args.max_elems, args.blocks)
        if args.registers:
            prod, cons = args.registers.split(",")
            edited = re.sub(r"producer registers\(\d+\)", f"producer registers({prod})", edited)
            edited = re.sub(r"consumers\((\d+)\) registers\(\d+\)",
                            rf"consumers(\1) registers({cons})", edited)
        if count == 0 and not args.control:
            raise SystemExit(f"{src}: no K loop rewritten")
        if args.keep_ir:
            args.keep_ir.mkdir(parents=True, exist_ok=True)
            (args.keep_ir / src.name).write_text(edited)
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write(edited)
            f.flush()
            subprocess.run([args.gemm_opt, f.name,
                            "--pass-pipeline=builtin.module(convert-ggemm-to-nvvm" + tail,
                            "-o", "/dev/null"], check=True)
        print(f"{src.name}: {count} K loops rewritten")
    (args.out / "COMMIT").write_text(
        f"{commit}{'' if args.control else f'+kloop-pipeline-u{args.unroll}' if args.pipeline else f'+kloop-blocks{args.blocks}'}"
        f"{'+registers' + args.registers if args.registers else ''}"
        f"{'+{' + args.config + '}' if args.config else ''}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
