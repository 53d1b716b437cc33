//===- Passes.td - ggemm conversion passes ----------------*- tablegen -*-===//
#ifndef GGEMM_CONVERSION_PASSES_TD
#define GGEMM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// GGemmToLoops
//===----------------------------------------------------------------------===//

def ConvertGGemmToLoops : Pass<"convert-ggemm-to-loops", "::mlir::ModuleOp"> {
  let summary = "lower scheduled tile programs to scf/memref/arith loops (CPU reference)";
  let description = [{
    Runs each `ggemm.launch` (after `ggemm-persistent-schedule`) on a CPU,
    as written: a loop over simulated CTAs executes the launch body, so the
    grid-stride loop over tile ids, the device-side tile -> group mapping
    (`TileSchedule`, the code the GPU kernel uses), the K loop, the row and
    column masks and the epilogue arithmetic all run as they would on the
    GPU. A `persistent` grid has `num-ctas` CTAs, so each CTA walks several
    tile ids; a `tiles` grid has as many CTAs as the host-side bound the
    runtime launches, so the CTAs past the real tile count run too. With
    clusters (`cluster_m`, `split_k`) the persistent grid is whole clusters;
    the ranks of a split-K cluster run from the last to 0, so that rank 0's
    `ggemm.split_k_sum` adds the partial sums the others left in a buffer
    of the launch.

    Only the hardware becomes plain loops: `ggemm.load_tile` copies into a
    buffer with TMA's zero fill written out, `ggemm.mma` sums into an f32
    accumulator buffer, `ggemm.store_tile` applies the epilogue to the rows
    `[row, min(row + block_m, row_end))` and columns `[col, min(col +
    block_n, N))` and writes nothing else. Warp roles and the stage ring
    are GPU-only: run this pass before `ggemm-warp-specialize`. A
    `ggemm.sort_by_expert` becomes a stable counting sort in loops (count,
    scan, place), the reference of the GPU routing kernel; a
    `ggemm.quantize` loops over its scale blocks (maximum, scale, then each
    element scaled and encoded to FP8 with integer arithmetic: LLVM has no
    FP8 type for `arith.truncf` to lower to), the reference of the GPU
    quantize kernel.

    Before:

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

    After (`num-ctas=3`):

    ```mlir
    scf.for %cta = %c0 to %c3 step %c1 {
      %total = ...                       // TileSchedule::totalTiles
      scf.for %t = %cta to %total step %c3 {
        ...                              // TileSchedule::mapTile, the body
      }
    }
    ```
  }];
  let options = [
    Option<"numCtas", "num-ctas", "int64_t", /*default=*/"3",
           "CTAs of a simulated persistent grid; a small count makes each "
           "CTA walk several tile ids (the grid-stride path)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

//===----------------------------------------------------------------------===//
// GGemmToNVVM
//===----------------------------------------------------------------------===//

def ConvertGGemmToNVVM : Pass<"convert-ggemm-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "outline warp-specialised launches into gpu/nvvm kernels";
  let description = [{
    Turns every `ggemm.launch` that went through `ggemm-warp-specialize`
    and `ggemm-stage-ring` into a `gpu.func` kernel in its own `gpu.module`
    and translates its body op by op; it decides nothing the IR does not
    say:

    | op | becomes |
    |---|---|
    | `ggemm.launch` | the kernel (parameters of `docs/Bundle.md`), `%cta` = `blockIdx.x`, `%num_ctas` = `gridDim.x`, manifest `grid.policy` = its grid |
    | `ggemm.tile_count`, `ggemm.map_tile` | `TileSchedule` arithmetic over `group_rows` |
    | `ggemm.create_ring` | mbarrier init by thread 0 at the places of its layout, `fence.mbarrier_init`, `bar.sync` |
    | `ggemm.warp_specialize` | `setmaxnreg` + a branch per role; the producer region in one elected thread |
    | `ggemm.ring_put` (+ its `ggemm.load_tile`s) | `mbarrier.try_wait.parity` (empty), `expect_tx`, `cp.async.bulk.tensor` per box |
    | `ggemm.ring_get`, `ggemm.ring_release` | `mbarrier.try_wait.parity` (full); `mbarrier.arrive` (empty) |
    | `ggemm.mma`, `ggemm.mma_wait` | `wgmma.fence`, `wgmma.mma_async` per k16, `commit_group`, `wait_group pending`; `wait_group 0` |
    | `ggemm.store_tile` | the epilogue and row-masked (paired) global stores |
    | `ggemm.sort_by_expert` | the one-CTA routing kernel (`RoutingToNVVM.cpp`): per-warp shared-memory counters, a `shfl.sync.up` scan, pairs placed in order with `match.any.sync` ranks; manifest `grid.policy = single` |
    | `ggemm.quantize` | the quantize kernel (`QuantizeToNVVM.cpp`): 16-byte loads, block maxima by `shfl.sync.bfly` (and shared memory across warps for 128x128), `cvt.rn.satfinite.e4m3x2.f32`, a grid-stride loop over the scale blocks; manifest `grid.policy = persistent` with `units_per_cta` |

    Each kernel's parameters and launch facts go into the module's
    `ggemm.manifests` dictionary for `ggemm-export-bundle`. The host
    function of the launches is erased (the runtime launches the kernels);
    it may not have callers or hold other work.

    Before (abridged):

    ```mlir
    func.func @moe(...) {
      %sched = ggemm.tile_schedule segment ...
      ggemm.launch %sched grid(persistent) {
        %ring = ggemm.create_ring release_count(256) layout(...) : ...
        ggemm.warp_specialize producer registers(40) { ... }
                              consumers(2) registers(232) { ... }
      }
      return
    }
    ```

    After (abridged):

    ```mlir
    module attributes {ggemm.manifests = {moe_kernel = {...}}, gpu.container_module} {
      gpu.module @moe_kernel_module {
        llvm.mlir.global external @ggemm_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
        gpu.func @moe_kernel(%a_desc: !llvm.ptr, %b_desc: !llvm.ptr, ...) kernel
            attributes {nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32} {
          ...  // nvvm.mbarrier.*, nvvm.cp.async.bulk.tensor.*, nvvm.wgmma.*
        }
      }
    }
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "target chip (only sm_90a is supported)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def GGemmFinalizeKernelAbi
    : Pass<"ggemm-finalize-kernel-abi", "::mlir::gpu::GPUModuleOp"> {
  let summary = "pass the TMA descriptors of ggemm kernels by value";
  let description = [{
    Runs after `convert-gpu-to-nvvm`. Every `llvm.func` kernel that carries
    `ggemm.grid_constant_args` gets, on each listed `!llvm.ptr` argument,
    `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and
    `nvvm.grid_constant`: the 128-byte CUtensorMap travels in the kernel's
    parameter space (CUTLASS's `__grid_constant__ const CUtensorMap`), so a
    launch needs no device copy of the descriptors and stays CUDA-graph
    safe. `gpu.func` cannot carry these attributes itself (FACTS.md §5b).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // GGEMM_CONVERSION_PASSES_TD
