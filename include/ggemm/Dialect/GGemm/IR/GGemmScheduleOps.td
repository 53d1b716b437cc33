//===- GGemmScheduleOps.td - ggemm schedule-level ops ------*- tablegen -*-===//
//
// The schedule level: how the tiles of a tile program are spread over CTAs
// (ggemm-persistent-schedule), which warps of a CTA do what
// (ggemm-warp-specialize) and how the warp roles hand tiles over through a
// ring of shared-memory stages (ggemm-stage-ring). By the time IR reaches
// convert-ggemm-to-nvvm, every such decision is written here.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_SCHEDULE_OPS_TD
#define GGEMM_SCHEDULE_OPS_TD

include "mlir/IR/OpAsmInterface.td"

//===----------------------------------------------------------------------===//
// Persistent schedule
//===----------------------------------------------------------------------===//

def GGemm_TileScheduleOp : GGemm_Op<"tile_schedule", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "the tiles of a grouped matmul and how tile ids map to them";
  let description = [{
    Describes the tiles of a `ggemm.foreach_tile` (same operands, same
    meaning, the same clamping of device-side rows and skipping of groups
    with an out-of-range weight index) and numbers them: tile ids enumerate the groups in order, and
    inside a group walk its `(m, n)` tile grid along `n` or along `m` (the
    config's `raster`). The numbering is computed on the device from
    `group_rows` (no host read), so a launch is CUDA-graph safe.

    ```mlir
    %sched = ggemm.tile_schedule segment rows(%indptr : memref<9xi32>)
        groups(%c8) rows_per_group(%c0) num_rows(%m) num_cols(%c4096)
        config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64>)
    ```
  }];
  let arguments = (ins GGemm_RowMappingAttr:$row_mapping,
                   Optional<GGemm_IndexVector>:$group_rows,
                   Optional<GGemm_I32Vector>:$weight_indices,
                   Optional<GGemm_Index>:$num_weights,
                   GGemm_Index:$num_groups, GGemm_Index:$rows_per_group, GGemm_Index:$num_rows,
                   GGemm_Index:$num_cols, GGemm_TileConfigAttr:$config);
  let results = (outs GGemm_Schedule:$schedule);
  let assemblyFormat = [{
    custom<RowMapping>($row_mapping) (`rows` `(` $group_rows^ `:` type($group_rows) `)`)?
    (`weights` `(` $weight_indices^ `:` type($weight_indices) `)`
     `num_weights` `(` $num_weights `)`)?
    `groups` `(` $num_groups `)` `rows_per_group` `(` $rows_per_group `)`
    `num_rows` `(` $num_rows `)` `num_cols` `(` $num_cols `)`
    `config` `(` qualified($config) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def GGemm_LaunchOp : GGemm_Op<"launch", [
    SingleBlockImplicitTerminator<"YieldOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "one kernel launch over a grid of CTAs";
  let description = [{
    The body is what every CTA of the kernel runs; it receives the CTA's id
    and the number of CTAs. How many CTAs there are is the `grid` policy,
    decided by `ggemm-persistent-schedule`:

    - `persistent`: as many CTAs as fit on the device at once (one per SM),
      each striding over the tile ids of `schedule`;
    - `tiles`: one CTA per tile id; the host launches a bound on the tile
      count it can compute without reading device data, and CTAs past the
      real count find no tile.

    `convert-ggemm-to-nvvm` outlines the body into a `gpu.func`; the
    manifest's `grid.policy` is this policy. `convert-ggemm-to-loops` runs
    it as a loop over simulated CTAs.

    `dependent_launch` (programmatic dependent launch, written by
    `ggemm-persistent-schedule`): the kernel may be launched while the
    kernel before it in its stream is still running. The body then holds
    one `ggemm.wait_dependency`, directly in it, and before it only what
    touches no memory another kernel may write: the ring
    (`ggemm.create_ring`), `ggemm.prefetch_tile`s and the pure arithmetic
    and `scf` loops and branches around them (the verifier checks it; the
    tile count already reads device data). Every thread waits there for
    that kernel to finish and its writes to be visible, then lets the next
    such kernel in the stream be launched. What overlaps the previous
    kernel's tail is this kernel's launch, its CTAs' start, and what comes
    before the wait. The manifest's `dependent_launch` tells the runtime
    to launch it with programmatic stream serialization; without that the
    wait returns at once.

    ```mlir
    ggemm.launch %sched grid(persistent) {
    ^bb0(%cta: index, %num_ctas: index):
      %total = ggemm.tile_count %sched
      scf.for %t = %cta to %total step %num_ctas {
        %group, %row, %row_end, %col = ggemm.map_tile %sched[%t]
        ...
      }
    }
    ```
  }];
  let arguments = (ins GGemm_Schedule:$schedule,
                   GGemm_GridPolicyAttr:$grid,
                   UnitAttr:$dependent_launch);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $schedule `grid` `(` custom<GridPolicy>($grid) `)`
    (`dependent_launch` $dependent_launch^)? attr-dict-with-keyword
    custom<GuardedRegion>($body)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Value getCtaArg() { return getBody().getArgument(0); }
    ::mlir::Value getNumCtasArg() { return getBody().getArgument(1); }
    /// The tile_schedule op that defines the schedule (null if the schedule
    /// is not defined by one).
    TileScheduleOp getScheduleOp();
  }];
}

def GGemm_WaitDependencyOp : GGemm_Op<"wait_dependency",
                                      [HasParent<"LaunchOp">]> {
  let summary = "wait for the previous kernel of the stream (dependent launch)";
  let description = [{
    In the body of a `dependent_launch` `ggemm.launch`, once: every thread
    waits until the kernel before this one in its stream has finished and
    its writes are visible, then lets the next dependent kernel of the
    stream be launched. On the GPU `griddepcontrol.wait` and
    `griddepcontrol.launch_dependents`; on the CPU (one launch after the
    other) nothing. What comes before it must not read memory another
    kernel may write, other than as a prefetch (`ggemm.prefetch_tile`:
    L2 is the point of coherence, so a line it brings in is updated by the
    previous kernel's writes).

    ```mlir
    ggemm.launch %sched grid(persistent) dependent_launch {
    ^bb0(%cta: index, %num_ctas: index):
      ggemm.wait_dependency
      %total = ggemm.tile_count %sched
      ...
    }
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def GGemm_PrefetchTileOp : GGemm_Op<"prefetch_tile"> {
  let summary = "bring one operand tile into L2 ahead of its load";
  let description = [{
    The box that `ggemm.load_tile %source[%indices]` of type `tile` would
    read, brought into L2 and nowhere else: a hint with no result, which a
    later load of the same box finds in L2. Elements outside `source` are
    skipped. On the GPU one thread of the CTA issues it
    (`cp.async.bulk.prefetch.tensor`, the operand's TMA descriptor); on the
    CPU it does nothing. `ggemm-persistent-schedule` puts them in a
    dependent launch before `ggemm.wait_dependency`, for the first K blocks
    of a one-group product's weights, when its `dependent-prefetch-bytes`
    allows (not by default: bench/NOTES.md v32), so that they come in while
    the previous kernel finishes.

    ```mlir
    ggemm.prefetch_tile %w[%c0, %col, %k] : memref<1x2112x7168xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>
    ```
  }];
  let arguments = (ins GGemm_OperandMemref:$source,
                   Variadic<GGemm_Index>:$indices,
                   TypeAttrOf<GGemm_Tile>:$tile);
  let assemblyFormat = [{
    $source `[` $indices `]` attr-dict `:` type($source) `,` $tile
  }];
  let hasVerifier = 1;
}

def GGemm_TileCountOp : GGemm_Op<"tile_count", [MemoryEffects<[MemRead]>]> {
  let summary = "the number of tiles of a schedule";
  let description = [{
    Sums the tiles of every group, reading `group_rows` on the device.

    ```mlir
    %total = ggemm.tile_count %sched
    ```
  }];
  let arguments = (ins GGemm_Schedule:$schedule);
  let results = (outs GGemm_Index:$count);
  let assemblyFormat = "$schedule attr-dict";
  let builders = [OpBuilder<(ins "::mlir::Value":$schedule), [{
    build($_builder, $_state, $_builder.getIndexType(), schedule);
  }]>];
}

def GGemm_MapTileOp : GGemm_Op<"map_tile", [
    MemoryEffects<[MemRead]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "the tile with a given id";
  let description = [{
    Maps tile id `tile` (below `ggemm.tile_count`) to its group, its first
    row, the end of its group's rows (exclusive) and its first column, by
    walking the groups' tile counts on the device (`TileSchedule` in the
    code, shared by the GPU and the CPU back ends). Each thread's walk
    starts where its previous `map_tile` stopped (a cursor the back ends
    keep in registers or memory, from group 0 again for a tile id before
    it), so a persistent CTA, whose tile ids increase, walks the groups
    once over all its tiles; the result does not depend on the cursor.

    With a schedule whose config has `cluster_m > 1`, a tile is `cluster_m
    x block_m` rows, shared by the CTAs of a thread-block cluster, and
    `cluster_rank` (the CTA's rank in it) selects its `block_m` rows:
    `row` is the tile's first row plus `cluster_rank x block_m` (at or past
    `row_end` when the group's rows end earlier).

    ```mlir
    %group, %row, %row_end, %col = ggemm.map_tile %sched[%t]
    %group, %row, %row_end, %col = ggemm.map_tile %sched[%t] cluster_rank(%r)
    ```
  }];
  let arguments = (ins GGemm_Schedule:$schedule, GGemm_Index:$tile,
                   Optional<GGemm_Index>:$cluster_rank);
  let results = (outs GGemm_Index:$group, GGemm_Index:$row, GGemm_Index:$row_end, GGemm_Index:$col);
  let assemblyFormat = [{
    $schedule `[` $tile `]` (`cluster_rank` `(` $cluster_rank^ `)`)? attr-dict
  }];
  let builders = [OpBuilder<(ins "::mlir::Value":$schedule,
                                 "::mlir::Value":$tile,
                                 CArg<"::mlir::Value", "{}">:$clusterRank), [{
    ::mlir::Type index = $_builder.getIndexType();
    build($_builder, $_state, index, index, index, index, schedule, tile,
          clusterRank);
  }]>];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Warp specialisation and the stage ring
//===----------------------------------------------------------------------===//

def GGemm_WarpSpecializeOp : GGemm_Op<"warp_specialize", [
    HasParent<"LaunchOp">, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "the warp roles of a CTA";
  let description = [{
    Splits the threads of a CTA into roles that run concurrently and hand
    tiles over through a `!ggemm.ring`:

    - the **producer**, one warpgroup: one elected thread of its first warp
      runs the `producer` region (it issues every TMA load); the warpgroup
      shrinks its registers to `registers` with `setmaxnreg.dec`;
    - the **consumers**, `consumers` warpgroups that run the `consumers`
      region together (cooperatively: consumer warpgroup `w` computes rows
      `[64 w, 64 w + 64)` of every tile) after growing their registers to
      `registers` with `setmaxnreg.inc`.

    The CTA has `128 * (consumers + 1)` threads; consumer warpgroup `w` is
    threads `[128 w, 128 w + 128)`, the producer the last warpgroup.
    `setmaxnreg` moves registers between the warpgroups of a CTA; it adds
    none. A CTA is launched with as many registers a thread as fit 65536 in
    steps of 8 (168 for 384 threads), so the budgets must fit that pool:
    `128 * (registers + consumers * registers) <= threads * per-thread`
    (64512 for two consumer warpgroups, not 65536). Budgets over it are
    accepted by ptxas and hang on the GPU: the consumers' `setmaxnreg.inc`
    waits for registers that never come free (bench/NOTES.md v28). Both
    regions capture values of the enclosing `ggemm.launch`. Written by
    `ggemm-warp-specialize`, after Triton's `ttg.warp_specialize`.

    With `pingpong` (a `#ggemm.tile_config<..., pingpong = true>`), the two
    consumer warpgroups do not share tiles: each runs the `consumers` region
    on its own, computes all 64 rows of its tiles, and reads its index from
    `ggemm.consumer_warpgroup` to pick its tiles and ring positions.

    ```mlir
    ggemm.warp_specialize producer registers(40) {
      ...  // tile loop: ggemm.load_tile, ggemm.ring_put
    } consumers(2) registers(232) {
      ...  // tile loop: ggemm.ring_get, ggemm.mma, ggemm.ring_release,
           // ggemm.store_tile
    }
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<24>,
                                              IntMaxValue<256>]>:$producer_registers,
                   ConfinedAttr<I64Attr, [IntMinValue<1>,
                                          IntMaxValue<3>]>:$consumer_warpgroups,
                   ConfinedAttr<I64Attr, [IntMinValue<24>,
                                          IntMaxValue<256>]>:$consumer_registers,
                   UnitAttr:$pingpong);
  let regions = (region SizedRegion<1>:$producer, SizedRegion<1>:$consumers);
  // `producer registers(N) {...} consumers(W) [pingpong] registers(N) {...}
  // attr-dict`,
  // parsed by hand so that a failure after the producer region leaves no use
  // of its values behind (see parseGuardedRegion).
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The registers a CTA of `warpgroups` warpgroups is launched with, which
    /// its roles' `setmaxnreg` budgets share.
    static int64_t launchRegisters(int64_t warpgroups);
  }];
}

def GGemm_ConsumerWarpgroupOp : GGemm_Op<"consumer_warpgroup", [Pure]> {
  let summary = "the index of the consumer warpgroup running the region";
  let description = [{
    In the `consumers` region of a `pingpong` `ggemm.warp_specialize`: the
    index (0 or 1) of the consumer warpgroup that runs it, which picks the
    warpgroup's tiles and ring positions.

    ```mlir
    %wg = ggemm.consumer_warpgroup
    ```
  }];
  let results = (outs GGemm_Index:$index);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

class GGemm_TurnOp<string mnemonic, string what> : GGemm_Op<mnemonic> {
  let summary = "hands the ring over between ping-pong consumer warpgroups";
  let description = !strconcat(what, [{

    Ping-pong consumer warpgroups take the ring's positions in turns, one
    tile at a time: a warpgroup waits for the other's `ggemm.turn_pass`
    (`ggemm.turn_wait`) before it waits for the stages of its next tile, and
    passes the turn once it has waited for the stages of its tile. The
    turns keep a warpgroup from waiting for a stage more than one ring
    round ahead of the ring's fills (an mbarrier's phase parity cannot tell
    those apart), and its main loop from contending with the other's for
    the tensor cores. On the GPU, named barriers (`bar.sync`, `bar.arrive`
    over both warpgroups' 256 threads).

    ```mlir
    ggemm.turn_wait
    ggemm.turn_pass
    ```
  }]);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def GGemm_TurnWaitOp : GGemm_TurnOp<"turn_wait",
    "Waits for the other ping-pong consumer warpgroup's turn to end.">;
def GGemm_TurnPassOp : GGemm_TurnOp<"turn_pass",
    "Ends this ping-pong consumer warpgroup's turn.">;

def GGemm_CreateRingOp : GGemm_Op<"create_ring", [HasParent<"LaunchOp">]> {
  let summary = "the stage ring of a CTA";
  let description = [{
    Creates the ring the warp roles exchange tiles through. A stage slot is
    free again once `release_count` arrivals have released it (one per
    consumer thread). `layout` (set by `ggemm-stage-ring`) places the slots
    and the mbarriers in shared memory.

    In a launch whose schedule has `cluster_m = C > 1`, `multicast` lists
    the entries the cluster's CTAs share (the weight tile): each CTA loads
    `1/C` of such a tile's rows and multicasts them into the same slot of
    every CTA of the cluster. A slot is then free only once the consumers
    of all C CTAs released it: one arrival per consumer warp and CTA
    (`release_count` = consumer warps x C).

    On the GPU thread 0 initialises a `full` mbarrier (1 arrival plus the
    TMA bytes) and an `empty` mbarrier (`release_count` arrivals) per stage,
    then `fence.mbarrier_init` and a CTA barrier (a cluster barrier with
    `multicast`, so that no CTA sends to a peer's mbarriers before the peer
    initialised them).

    ```mlir
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536],
                                  stage_bytes = [16384, 32768],
                                  barrier_offset = 196608, smem_bytes = 196672>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$release_count,
                   OptionalAttr<GGemm_RingLayoutAttr>:$layout,
                   OptionalAttr<DenseI64ArrayAttr>:$multicast);
  let results = (outs GGemm_Ring:$ring);
  let assemblyFormat = [{
    `release_count` `(` $release_count `)` (`layout` `(` qualified($layout)^ `)`)?
    attr-dict `:` qualified(type($ring))
  }];
  let hasVerifier = 1;
}

def GGemm_RingPutOp : GGemm_Op<"ring_put"> {
  let summary = "fill ring position `position` with freshly loaded tiles";
  let description = [{
    Waits until the slot of `position` is free (its previous use released),
    then loads each tile into it. Every tile must come from a
    `ggemm.load_tile` used only here: on the GPU the loads become TMA copies
    straight into the slot (`mbarrier.try_wait.parity` on `empty`,
    `mbarrier.arrive.expect_tx` on `full` for the bytes of all tiles, one
    `cp.async.bulk.tensor` per 128-byte-wide box completing on `full`).
    Position `i` uses slot `i mod stages` in phase `(i / stages) mod 2`.

    ```mlir
    ggemm.ring_put %ring[%i], %a, %b
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    ```
  }];
  let arguments = (ins GGemm_Ring:$ring, GGemm_Index:$position,
                   Variadic<GGemm_RingEntry>:$tiles);
  let assemblyFormat = [{
    $ring `[` $position `]` `,` $tiles attr-dict `:`
    custom<RingTiles>(qualified(type($ring)), type($tiles))
  }];
  let hasVerifier = 1;
}

def GGemm_RingGetOp : GGemm_Op<"ring_get"> {
  let summary = "the tiles of ring position `position`";
  let description = [{
    Waits until the tiles of `position` have arrived (`mbarrier.try_wait.parity`
    on the slot's `full` mbarrier) and returns them; on the GPU they are the
    slot's shared-memory buffers, valid until the position is released.

    `scale_offsets` holds one index per `!ggemm.scales` entry of the ring,
    in entry order, and is required when there are any: the position of
    the entry's first scale in its slot. A scales slot of a 2-D (MN-major)
    scale tensor is loaded by TMA from the 16-byte-aligned row at or below
    the tile's first row `r`, so its offset is `r % 4`; weight scales (3-D)
    are stored from the slot's start, offset 0. `ggemm-warp-specialize`
    computes them in the consumers from the same indices the producer's
    `ggemm.load_scales` reads, so no consumer waits on a shared-memory load
    to find its scales.

    ```mlir
    %a, %b = ggemm.ring_get %ring[%i]
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    %x, %w, %xs, %ws = ggemm.ring_get %ring[%i] scale_offsets(%off, %c0)
        : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>,
                      !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>,
                      !ggemm.scales<1>>
    ```
  }];
  let arguments = (ins GGemm_Ring:$ring, GGemm_Index:$position,
                       Variadic<GGemm_Index>:$scale_offsets);
  let results = (outs Variadic<GGemm_RingEntry>:$tiles);
  let assemblyFormat = [{
    $ring `[` $position `]` (`scale_offsets` `(` $scale_offsets^ `)`)?
    attr-dict `:` custom<RingTiles>(qualified(type($ring)), type($tiles))
  }];
  let hasVerifier = 1;
}

def GGemm_ZeroKTailOp : GGemm_Op<"zero_k_tail", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "zero the K rows of ring tiles at or past `valid` (and "
                "before `from`)";
  let description = [{
    The consumers' half of the K-ragged mask (`k_end` of `ggemm.load_tile`):
    the producer's TMA loads whole boxes, so the last K block of a segment
    arrives with the next segment's rows in it. This op zeroes, in the ring
    slots themselves, every element of `tiles` whose K index within the
    block is at or past `valid` (nothing when `valid >= block_k`), and
    returns the tiles, which the mma then reads. `ggemm-warp-specialize`
    writes it right after the `ggemm.ring_get` of a K block whose loads
    have a `k_end`, with `valid = k_end - k` (`k`: the block's first K
    index). With `from` (the loads also have a `k_begin`: `from = k_begin -
    k`), the elements whose K index is below `from` are zeroed too (none
    when `from <= 0`); only for `k_major` tiles, those of the transposed
    K-ragged program, whose blocks are aligned below the segment's start.

    Every operand must be a tile of a `ggemm.ring_get` (the op writes the
    slot, which is the consumers' until they release it), and all must
    have the same K block, which `valid` counts into. All consumer
    warpgroups execute it together. On the GPU, only when `valid <
    block_k` or `from > 0`, each consumer thread zeroes its share of the
    whole 128-byte swizzle rows past `valid` (a row of an `mn_major` tile's box is one K
    index, so the swizzle, which permutes 16-byte chunks within a row,
    does not matter) with 16-byte shared stores, then issues
    `fence.proxy.async.shared::cta` (wgmma reads shared memory through the
    async proxy) and a named barrier over the consumer threads (`bar.sync
    1, 128 x consumers`), so no warpgroup's mma starts before every zero is
    written. For a `k_major` tile (the transposed K-ragged operands) a
    swizzle row is one tile row and its 16-byte chunks hold consecutive K
    indices: each thread zeroes (or masks bytewise, at the bounds) its share
    of the chunks outside `[from, valid)`, at their swizzled places.

    ```mlir
    %a, %b = ggemm.ring_get %ring[%i]
        : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<256x64xbf16, mn_major>>
    %valid = arith.subi %end, %k : index
    %ma, %mb = ggemm.zero_k_tail %a, %b valid(%valid)
        : !ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<256x64xbf16, mn_major>
    %fa, %fb = ggemm.zero_k_tail %c, %d valid(%valid) from(%from)
        : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>
    ```
  }];
  let arguments = (ins Variadic<GGemm_Tile>:$tiles, GGemm_Index:$valid,
                   Optional<GGemm_Index>:$from);
  let results = (outs Variadic<GGemm_Tile>:$masked);
  let assemblyFormat = [{
    $tiles `valid` `(` $valid `)` (`from` `(` $from^ `)`)? attr-dict `:`
    qualified(type($tiles))
  }];
  let hasVerifier = 1;
}

def GGemm_RingReleaseOp : GGemm_Op<"ring_release"> {
  let summary = "give ring position `position` back to the producer";
  let description = [{
    Every consumer thread arrives on the slot's `empty` mbarrier
    (`mbarrier.arrive`); the producer may refill the slot once all
    `release_count` threads have. With a `multicast` ring, lane r < C of
    every consumer warp arrives on the `empty` mbarrier of the cluster's
    CTA r instead (`mapa`, then `mbarrier.arrive` on that shared::cluster
    address, with the default CTA-scoped release). Release a
    position only after the mma that read it has finished (see `pending`
    of `ggemm.mma`).

    ```mlir
    ggemm.ring_release %ring[%i]
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    ```
  }];
  let arguments = (ins GGemm_Ring:$ring, GGemm_Index:$position);
  let assemblyFormat = "$ring `[` $position `]` attr-dict `:` qualified(type($ring))";
}

def GGemm_StoreDrainOp : GGemm_Op<"store_drain"> {
  let summary = "wait for the staged stores of this consumer warpgroup";
  let description = [{
    Written by `ggemm-tma-store` at the end of the consumer role: returns
    once every TMA store the warpgroup's staged `ggemm.store_tile`s issued
    has completed (`cp.async.bulk.wait_group 0` by the thread that issued
    them), so that the CTA's shared memory is not released while a store
    still reads it. Nothing on the CPU.

    ```mlir
    ggemm.store_drain
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def GGemm_SplitKSumOp : GGemm_Op<"split_k_sum", [
    AllTypesMatch<["partial", "result"]>]> {
  let summary = "the sum of a split-K cluster's partial tiles, in rank 0";
  let description = [{
    In a launch whose config has `split_k = S > 1`, the S CTAs of a
    thread-block cluster compute partial sums of one tile, each over its
    share of the K blocks (`ggemm-persistent-schedule` writes the split).
    This op adds them: every consumer thread of rank `rank` > 0 writes its
    accumulator registers into rank 0's shared memory (slot `rank - 1` of
    the ring layout's `split_k_offset` buffer, through `mapa` and
    `st.shared::cluster`) and arrives on rank 0's `full` mbarrier there;
    rank 0's consumer threads wait for it, add the S - 1 partials to their
    own in rank order (the sum does not depend on timing), and, when
    `more` (the cluster has another tile after this one), arrive on each
    other rank's `empty` mbarrier, after which that rank may write its
    next partial. `round` is the tile's ordinal among the cluster's tiles
    (0, 1, ...): the mbarriers' phase. The result is the tile's sum in rank
    0 and this CTA's own partial in the others, which must not store it.
    With `active` (a `split_k_tail` launch, whose units are whole tiles or
    split ones), the CTAs of a cluster exchange nothing when it is false
    (the same in all of them) and the result is the CTA's own sum.

    When the ring layout's split-K buffer overlays the stage ring
    (`split_k_barriers`, a `split_k_tail` launch), `more` must be a constant
    false: rank 0 first tells the others, through their `empty` mbarriers,
    that its K loop is done and its ring free, and they wait for that before
    writing. Integer accumulators (INT8) add exactly. On the CPU reference
    (`convert-ggemm-to-loops`) a cluster's CTAs run from the last rank to
    rank 0: the others keep their partials in a buffer of the launch, and
    rank 0 adds them in the same order.

    ```mlir
    %sum = ggemm.split_k_sum %acc rank(%rank) round(%round) more(%more)
        : !ggemm.accumulator<64x8xf32>
    %tail = ggemm.split_k_sum %acc rank(%rank) round(%c0) more(%false)
        active(%in_tail) : !ggemm.accumulator<64x128xf32>
    ```
  }];
  let arguments = (ins GGemm_Accumulator:$partial, GGemm_Index:$rank,
                   GGemm_Index:$round, GGemm_Bool:$more,
                   Optional<GGemm_Bool>:$active);
  let results = (outs GGemm_Accumulator:$result);
  let assemblyFormat = [{
    $partial `rank` `(` $rank `)` `round` `(` $round `)` `more` `(` $more `)`
    (`active` `(` $active^ `)`)? attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

#endif // GGEMM_SCHEDULE_OPS_TD
