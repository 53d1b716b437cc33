//===- GGemmTypes.td - ggemm types -------------------------*- tablegen -*-===//
#ifndef GGEMM_TYPES_TD
#define GGEMM_TYPES_TD

include "ggemm/Dialect/GGemm/IR/GGemmDialect.td"
include "ggemm/Dialect/GGemm/IR/GGemmAttrs.td"
include "mlir/IR/AttrTypeBase.td"

class GGemm_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<GGemm_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def GGemm_AccumulatorType : GGemm_Type<"Accumulator", "accumulator"> {
  let summary = "a CTA's accumulator tile";
  let description = [{
    The `block_m x block_n` accumulator a CTA holds for one output tile:
    f32, or i32 for INT8 products (wgmma's exact `s32` sum, converted to f32
    by the store's dequantisation).
    On the GPU it lives in the consumer warpgroups' registers in wgmma's
    fragment layout (each consumer warpgroup holds 64 of its rows); the CPU
    reference back end keeps it in a buffer.

    ```mlir
    !ggemm.accumulator<128x256xf32>
    !ggemm.accumulator<128x256xi32>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                    "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def GGemm_TileType : GGemm_Type<"Tile", "tile"> {
  let summary = "one K block of an operand tile";
  let description = [{
    `rows x k` elements of an MMA operand: `block_m` rows of the activations
    or `block_n` rows (output columns) of a weight matrix, over one `block_k`
    wide K block. The shape is always the logical `[rows, k]` one; `layout`
    says how the elements are stored:

    - `k_major` (the default): K is contiguous, as in the activations and in
      `[G, N, K]` (`nk`) weights;
    - `mn_major`: the rows are contiguous, as in `[G, K, N]` (`kn`) weights.

    On the GPU a tile is a 128-byte swizzled shared-memory buffer filled by
    TMA (one stage slot of a `!ggemm.ring`); on the CPU, a buffer.

    ```mlir
    !ggemm.tile<128x64xbf16>
    !ggemm.tile<256x64xbf16, mn_major>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
    DefaultValuedParameter<"::mlir::ggemm::TileLayout",
                           "::mlir::ggemm::TileLayout::k_major">:$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRows() const { return getShape()[0]; }
    int64_t getK() const { return getShape()[1]; }
    bool isMNMajor() const {
      return getLayout() == ::mlir::ggemm::TileLayout::mn_major;
    }
    /// Bytes of the tile's elements.
    int64_t getNumBytes() const;
  }];
}

def GGemm_ScalesType : GGemm_Type<"Scales", "scales"> {
  let summary = "the f32 dequantisation scales of one K block of an FP8 tile";
  let description = [{
    `count` f32 scales of one K block, read by `ggemm.load_scales` and used
    by `ggemm.promote`: one per row of an activation tile (`1x128` blocks:
    `count = block_m`), or one per 128 weight rows of a weight tile
    (`128x128` blocks: `count = block_n / 128`). Row `i` of a tile of `R`
    rows uses scale `i * count / R`.

    On the GPU a buffer in a stage slot of a `!ggemm.ring`, next to the
    operand tiles of the same K block; on the CPU, a buffer.

    ```mlir
    !ggemm.scales<128>
    ```
  }];
  let parameters = (ins "int64_t":$count);
  let assemblyFormat = "`<` $count `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of the scales.
    int64_t getNumBytes() const { return 4 * getCount(); }
  }];
}

def GGemm_ScheduleType : GGemm_Type<"Schedule", "schedule"> {
  let summary = "the tile schedule of a kernel";
  let description = [{
    The value of a `ggemm.tile_schedule`: how tile ids map to (group, row,
    row_end, col) tiles. Read by `ggemm.launch`, `ggemm.tile_count` and
    `ggemm.map_tile`.

    ```mlir
    !ggemm.schedule
    ```
  }];
}

def GGemm_RingType : GGemm_Type<"Ring", "ring"> {
  let summary = "a ring of pipeline stages handing tiles from a producer to consumers";
  let description = [{
    A ring of stages between the warp roles of a `ggemm.warp_specialize`:
    each stage holds one tile of each listed tile type. The producer puts
    the tiles of K block `i` into position `i`, the consumers get them and
    release the position when they are done with it; position `i` uses stage
    slot `i mod stages`. `ggemm-stage-ring` chooses the number of stages and
    places the slots and their mbarriers in shared memory.

    ```mlir
    !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>,
                !ggemm.scales<128>, !ggemm.scales<1>>
    ```

    A stage may also hold `!ggemm.scales`: the FP8 block scales of the
    stage's K block.
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::Type">:$tiles);
  let assemblyFormat = "`<` $tiles `>`";
  let genVerifyDecl = 1;
}

// The types as operand and result constraints, checked under the value's
// name (see GGemm_Checked).
def GGemm_Accumulator : GGemm_Checked<GGemm_AccumulatorType>;
def GGemm_Tile : GGemm_Checked<GGemm_TileType>;
def GGemm_Scales : GGemm_Checked<GGemm_ScalesType>;
def GGemm_RingEntry : GGemm_Checked<AnyTypeOf<[GGemm_TileType, GGemm_ScalesType]>>;
def GGemm_Schedule : GGemm_Checked<GGemm_ScheduleType>;
def GGemm_Ring : GGemm_Checked<GGemm_RingType>;

#endif // GGEMM_TYPES_TD
