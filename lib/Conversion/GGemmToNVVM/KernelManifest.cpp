//===- KernelManifest.cpp - a kernel's launch manifest --------------------===//
//
// The manifest of a kernel (docs/Bundle.md, docs/Runtime.md) from the facts
// analyseLaunch read: the problem, the tile, the grid and the parameters in
// the kernel's order.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

namespace {
StringRef dtypeName(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isF32())
    return "f32";
  if (isa<Float8E4M3FNType>(t))
    return "f8e4m3";
  if (isa<Float8E5M2Type>(t))
    return "f8e5m2";
  if (t.isInteger(8))
    return "s8";
  if (t.isInteger(32))
    return "i32";
  return "i64";
}

StringRef opName(RowMapping mapping) {
  switch (mapping) {
  case RowMapping::segment:
    return "segment_matmul";
  case RowMapping::masked:
    return "masked_matmul";
  case RowMapping::uniform:
    return "batched_matmul";
  }
  llvm_unreachable("unknown row mapping");
}
} // namespace

DictionaryAttr mlir::ggemm::nvvm::buildManifest(MLIRContext *ctx,
                                                const KernelFacts &f) {
  Builder b(ctx);
  auto named = [&](StringRef k, Attribute v) { return b.getNamedAttr(k, v); };
  auto i = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  auto s = [&](StringRef v) { return b.getStringAttr(v); };
  auto arr = [&](ArrayRef<int64_t> vs) {
    SmallVector<Attribute> attrs;
    for (int64_t v : vs)
      attrs.push_back(i(v));
    return b.getArrayAttr(attrs);
  };
  StringRef op =
      f.kRagged ? "segment_matmul_k" : opName(f.schedule.getRowMapping());
  EpilogueAttr epilogue = f.store.getEpilogueAttr();
  Activation activation =
      epilogue ? epilogue.getActivation() : Activation::none;
  bool accumulate = epilogue && epilogue.getAccumulate();
  StringRef aDtype = dtypeName(f.aElem());
  SmallVector<NamedAttribute> problem = {
      named("op", s(op)),
      named("a_dtype", s(aDtype)),
      named("b_dtype", s(aDtype)),
      named("out_dtype", s(dtypeName(f.outElem))),
      named("index_dtype", s(f.indexElem ? dtypeName(f.indexElem) : "i32")),
      named("weight_layout",
            s(f.kRagged ? stringifyWeightLayout(f.kRaggedLayout)
                        : StringRef(f.nMajorB() ? "kn" : "nk"))),
      named("m", i(-1)),
      named("n", i(f.staticN)),
      named("k", i(f.staticK)),
      named("num_groups", i(f.staticGroups)),
      named("num_weights", i(f.staticWeights)),
      named("has_weight_indices", b.getBoolAttr(bool(f.weightIndices))),
      named("has_bias", b.getBoolAttr(bool(f.bias))),
      named("has_row_scale", b.getBoolAttr(bool(f.rowScale))),
      named("accumulate", b.getBoolAttr(accumulate)),
      named("activation", s(stringifyActivation(activation)))};
  if (f.gather)
    problem.push_back(named("has_row_indices", b.getBoolAttr(true)));
  if (f.scatter) {
    problem.push_back(named("has_scatter_indices", b.getBoolAttr(true)));
    problem.push_back(named("atomic", b.getBoolAttr(f.atomic)));
  }
  // Written only for interleaved weights, so that the manifests of every
  // other kernel stay as they were (a reader takes its absence as 0).
  if (f.gateUpBlock > 0)
    problem.push_back(named("gate_up_block", i(f.gateUpBlock)));
  // K-ragged operands given with the tokens innermost ([N, T], [K, T]).
  bool transposedKRagged = f.kRagged && !f.aTile.isMNMajor();
  if (f.kRagged)
    problem.push_back(named("transposed", b.getBoolAttr(transposedKRagged)));
  if (f.blockScaled()) {
    // K-ragged: both operands' scales are 1x128 along the tokens.
    problem.push_back(named("x_scale_block", s("1x128")));
    problem.push_back(
        named("w_scale_block", s(f.kRagged ? "1x128" : "128x128")));
  }
  if (f.epilogueScaled()) {
    problem.push_back(
        named("x_scale_block", s(f.perRowXScale ? "per_row" : "tensor")));
    problem.push_back(
        named("w_scale_block", s(f.perChannelWScale ? "per_row" : "tensor")));
  }
  if (f.yScale)
    problem.push_back(named("y_scale_block", s("1x128")));
  int64_t blockK = f.aTile.getK();
  SmallVector<NamedAttribute> tile = {
      named("block_m", i(f.aTile.getRows())),
      named("block_n", i(f.bTile.getRows())),
      named("block_k", i(blockK)),
      named("stages", i(f.layout.getStages())),
      named("consumer_warpgroups", i(f.numConsumers)),
      named("swap_ab", b.getBoolAttr(f.swapped))};
  // Ping-pong consumers each compute a whole block_m-row tile.
  if (f.pingpong)
    tile.push_back(named("pingpong", b.getBoolAttr(true)));
  // A split-K cluster's CTAs share each tile: the runtime launches
  // split_k CTAs a tile.
  if (f.splitK > 1)
    tile.push_back(named("split_k", i(f.splitK)));
  // Only the last wave's tiles split: the kernel decides on the device, and
  // the grid is the same (split_k CTAs a tile, at most the resident CTAs).
  if (f.config.getSplitKTail())
    tile.push_back(named("split_k_tail", b.getBoolAttr(true)));
  SmallVector<NamedAttribute> grid = {
      named("policy", s(stringifyGridPolicy(f.launch.getGrid()))),
      named("ctas_per_sm", i(1))};
  auto param = [&](ArrayRef<NamedAttribute> fields) {
    return b.getDictionaryAttr(fields);
  };
  // An N-major B tile is loaded as boxes of one 128-byte swizzle row of
  // columns.
  int64_t elemBytes = getElementBytes(f.aElem());
  int64_t bBoxN = f.nMajorB() ? kSwizzleBytes / elemBytes : f.bTile.getRows();
  // With clusters each CTA loads its 1/cluster_m of the weight tile's rows
  // and multicasts them.
  if (!f.nMajorB())
    bBoxN /= f.clusterM;
  // A split (side-by-side gated) k_major weight tile is two loads of half
  // its rows; an interleaved one is one load of all of them.
  if (f.splitB && !f.nMajorB())
    bBoxN /= 2;
  SmallVector<int64_t> bBox = f.nMajorB()
                                  ? SmallVector<int64_t>{bBoxN, blockK, 1}
                                  : SmallVector<int64_t>{blockK, bBoxN, 1};
  StringRef rowsTensor = op == "masked_matmul" ? "masked_m" : "seg_indptr";
  // The caller's tensors behind the descriptors and the output. K-ragged
  // kernels read two [T, *] matrices as mn_major tiles: boxes of one
  // swizzle row of columns by block_k rows.
  StringRef aTensor = "x", bTensor = "w", yTensor = "y";
  int64_t bRank = 3;
  // Gathered rows are loaded one row per TMA box.
  SmallVector<int64_t> aBox = {blockK, f.gather ? 1 : f.aTile.getRows()};
  // Transposed ([N, T], [K, T]) they are k_major tiles: block_k tokens by
  // the tile's rows.
  StringRef aScaleTensor = "x_scale", bScaleTensor = "w_scale";
  if (f.kRagged) {
    bool nk = f.kRaggedLayout == WeightLayout::nk;
    aTensor = nk ? "dy" : "x";
    bTensor = nk ? "x" : "dy";
    aScaleTensor = nk ? "dy_scale" : "x_scale";
    bScaleTensor = nk ? "x_scale" : "dy_scale";
    yTensor = "dw";
    bRank = 2;
    if (transposedKRagged) {
      aBox = {blockK, f.aTile.getRows()};
      bBox = {blockK, f.bTile.getRows()};
    } else {
      aBox = {kSwizzleBytes / elemBytes, blockK};
      bBox = {kSwizzleBytes / elemBytes, blockK};
    }
  }
  SmallVector<Attribute> params = {
      param({named("name", s("a_desc")), named("kind", s("tma_descriptor")),
             named("tensor", s(aTensor)), named("dtype", s(aDtype)),
             named("rank", i(2)), named("box", arr(aBox)),
             named("swizzle", s("128B")), named("oob_fill", s("zero"))}),
      param({named("name", s("b_desc")), named("kind", s("tma_descriptor")),
             named("tensor", s(bTensor)), named("dtype", s(aDtype)),
             named("rank", i(bRank)), named("box", arr(bBox)),
             named("swizzle", s("128B")), named("oob_fill", s("zero"))}),
      param({named("name", s("y")), named("kind", s("pointer")),
             named("tensor", s(yTensor))}),
      // Uniform groups read no group_rows: the slot is a null pointer.
      f.indexElem
          ? param({named("name", s("group_rows")), named("kind", s("pointer")),
                   named("tensor", s(rowsTensor)),
                   named("optional", b.getBoolAttr(false))})
          : param({named("name", s("group_rows")), named("kind", s("scalar")),
                   named("dtype", s("i64")), named("value", i(0))}),
      param({named("name", s("weight_indices")), named("kind", s("pointer")),
             named("tensor", s("weight_indices")),
             named("optional", b.getBoolAttr(true))}),
      param({named("name", s("bias")), named("kind", s("pointer")),
             named("tensor", s("bias")),
             named("optional", b.getBoolAttr(true))}),
      param({named("name", s("row_scale")), named("kind", s("pointer")),
             named("tensor", s("row_scale")),
             named("optional", b.getBoolAttr(true))})};
  for (auto [pname, dtype] :
       {std::pair<StringRef, StringRef>{"num_rows", "i64"},
        {"rows_per_group", "i64"},
        {"num_groups", "i32"},
        {"n", "i32"},
        {"k", "i32"},
        {"ldy", "i64"},
        {"num_weights", "i32"}})
    params.push_back(
        param({named("name", s(pname)), named("kind", s("scalar")),
               named("dtype", s(dtype)), named("value", s(pname))}));
  if (f.blockScaled()) {
    // The activation scales of a tile's rows and one K block: one TMA box
    // of block_m + 4 f32 from the MN-major [K/128, M] storage, starting at
    // a 16-byte-aligned row.
    auto scaleDesc = [&](StringRef name, StringRef tensor, int64_t count) {
      return param({named("name", s(name)), named("kind", s("tma_descriptor")),
                    named("tensor", s(tensor)), named("dtype", s("f32")),
                    named("rank", i(2)),
                    named("box", arr({count + kScalesSlackRows, 1})),
                    named("swizzle", s("none")), named("oob_fill", s("zero"))});
    };
    params.push_back(
        scaleDesc("a_scale_desc", aScaleTensor, f.aScales.getCount()));
    // K-ragged: the other operand's scales, one per row, likewise.
    if (f.kRagged)
      params.push_back(
          scaleDesc("b_scale_desc", bScaleTensor, f.bScales.getCount()));
    else
      params.push_back(
          param({named("name", s("w_scale")), named("kind", s("pointer")),
                 named("tensor", s("w_scale")),
                 named("optional", b.getBoolAttr(false))}));
  }
  if (f.staged()) {
    // The staged epilogue's TMA stores: y as [num_rows, N] (dw as
    // [G * R, C]; a scattered y as [y_rows, N]), one box of a consumer
    // warpgroup's rows (one row for one-row stores) by one 128-byte swizzle
    // row of columns.
    int64_t boxRows = f.staging.getRowStores() ? 1 : f.staging.getRows();
    params.push_back(param(
        {named("name", s("y_desc")), named("kind", s("tma_descriptor")),
         named("tensor", s(yTensor)), named("dtype", s(dtypeName(f.outElem))),
         named("rank", i(2)), named("box", arr({f.staging.getCols(), boxRows})),
         named("swizzle", s("128B")), named("oob_fill", s("zero"))}));
  }
  if (f.gather) {
    // The producer copies gathered rows with cp.async: x by address.
    params.push_back(
        param({named("name", s("row_indices")), named("kind", s("pointer")),
               named("tensor", s("row_indices")),
               named("optional", b.getBoolAttr(false))}));
    params.push_back(param({named("name", s("x")), named("kind", s("pointer")),
                            named("tensor", s("x"))}));
    for (StringRef pname : {"lda", "x_rows"})
      params.push_back(
          param({named("name", s(pname)), named("kind", s("scalar")),
                 named("dtype", s("i64")), named("value", s(pname))}));
  }
  if (f.scatter) {
    params.push_back(
        param({named("name", s("scatter_indices")), named("kind", s("pointer")),
               named("tensor", s("scatter_indices")),
               named("optional", b.getBoolAttr(false))}));
    params.push_back(
        param({named("name", s("y_rows")), named("kind", s("scalar")),
               named("dtype", s("i64")), named("value", s("y_rows"))}));
  }
  if (f.epilogueScaled()) {
    // Tensor-wise and per-row scales, read by the store by address.
    for (StringRef tensor : {"x_scale", "w_scale"})
      params.push_back(
          param({named("name", s(tensor)), named("kind", s("pointer")),
                 named("tensor", s(tensor)),
                 named("optional", b.getBoolAttr(false))}));
  }
  if (f.yScale) {
    // An e4m3 y's 1x128 scales: written at (row, column block) with the
    // strides the runtime reads off the tensor (rows of all groups one
    // strided column).
    params.push_back(
        param({named("name", s("y_scale")), named("kind", s("pointer")),
               named("tensor", s("y_scale")),
               named("optional", b.getBoolAttr(false))}));
    for (StringRef pname : {"y_scale_stride_row", "y_scale_stride_col"})
      params.push_back(
          param({named("name", s(pname)), named("kind", s("scalar")),
                 named("dtype", s("i64")), named("value", s(pname))}));
  }
  SmallVector<NamedAttribute> manifest = {
      named("format", s("ggemm-bundle")),
      named("version", i(1)),
      named("entry", s(f.name)),
      named("block", arr({f.threads, 1, 1})),
      named("cluster", arr({f.clusterSize(), 1, 1})),
      named("dependent_launch", b.getBoolAttr(f.dependentLaunch)),
      named("dynamic_smem", i(f.layout.getSmemBytes())),
      named("problem", b.getDictionaryAttr(problem)),
      named("tile", b.getDictionaryAttr(tile)),
      named("grid", b.getDictionaryAttr(grid)),
      named("params", b.getArrayAttr(params))};
  return b.getDictionaryAttr(manifest);
}
