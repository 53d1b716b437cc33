//===- QuantizeToNVVM.cpp - ggemm.quantize -> a memory-bound kernel -------===//
//
// The quantize kernel reads x once and writes q and the scales once; it is
// bound by memory, so everything is about keeping bytes in flight:
//
// - each thread moves 16 bytes (8 bf16/f16) per load, so a 128-column
//   block of a row is 16 lanes (half a warp) and 256 contiguous bytes;
// - `1x128`: a half-warp per (row, block) unit; a warp's task is
//   kTaskRows rows of one 128-column block (kUnitsPerStep unit pairs, the
//   two halves on consecutive rows), whose loads it issues before it uses
//   the first, over a grid-stride loop of tasks, column blocks fastest.
//   The block's maximum is four shfl.sync.bfly within the half; the
//   task's scales are gathered into lanes 0..kTaskRows-1 by shfl.sync.idx
//   and stored together: with MN-major scales one or two 32-byte sectors
//   a task, where a store per (row, block) unit cost about 20 % of the
//   bandwidth on an H200 (bench/NOTES.md v41);
// - `128x128`: a CTA of kThreads threads per block (grid-stride over the
//   blocks); thread t holds rows t / 16 + 16 i (i < 8) of column chunk
//   t % 16, loaded together; the maximum is shuffled within each warp and
//   then across the CTA's warps through shared memory;
// - the scaled values are packed two at a time by
//   cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 (nvvm.convert.f32x2.to.f8x2) and
//   stored 8 bytes per thread.
//
// The arithmetic is the op's definition in f32: amax = max(max|x|, 1e-4),
// scale = amax * (1 / fp8_max as an f32 constant: torch's division by a
// scalar on the GPU), factor = (1 / amax) * fp8_max (IEEE division:
// div.rn / rcp.rn), q = cvt(x * factor). The CPU loops and the Python
// reference compute the same, so the GPU check compares bytes.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"
#include "StandaloneKernel.h"

#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

namespace {

/// Threads of a quantize CTA.
constexpr int64_t kThreads = 256;
/// Elements of x one thread loads at a time (16 bytes).
constexpr int64_t kChunk = 8;
/// The K extent of a scale block the kernel handles (16 lanes x kChunk).
constexpr int64_t kBlockCols = 16 * kChunk;
/// 1x128: unit pairs a warp loads before it uses the first.
constexpr int64_t kUnitsPerStep = 4;
/// 1x128: the rows of one column block a warp quantises as one task (its
/// unit pairs of one step), whose scales it stores together.
constexpr int64_t kTaskRows = 2 * kUnitsPerStep;
/// 128x128: the rows of one column chunk a thread holds.
constexpr int64_t kRowsPerThread = 128 * 16 / kThreads;
/// CTAs per SM the grid asks for, which bounds the registers (64 a thread
/// for 1x128, 128 for 128x128, whose threads hold eight chunks across the
/// barriers): 1024 threads of 64 bytes or 512 of 128 bytes of loads in
/// flight keep 64 KiB in flight per SM, more than HBM's latency needs.
constexpr int64_t kCtasPerSmPerToken = 4;
constexpr int64_t kCtasPerSmPerBlock = 2;

/// Kernel parameters, in order (docs/Bundle.md, "Quantize kernels").
enum QuantizeParam : unsigned {
  kX,
  kQ,
  kScale,
  kLead,
  kRows,
  kK,
  kScaleStrideLead,
  kScaleStrideRow,
  kScaleStrideCol,
};

class QuantizeKernelBuilder : StandaloneKernelBuilder {
public:
  QuantizeKernelBuilder(OpBuilder &b, QuantizeOp op, gpu::GPUFuncOp kernel,
                        LLVM::GlobalOp smem)
      : StandaloneKernelBuilder(b, op.getLoc(), kernel), op(op),
        smemGlobal(smem), f32(b.getF32Type()),
        xElem(op.getX().getType().getElementType()),
        fp8Elem(op.getQ().getType().getElementType()) {}

  void build();

private:
  Value cf(double v) {
    return arith::ConstantFloatOp::create(b, loc, f32,
                                          APFloat(static_cast<float>(v)));
  }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value ult(Value x, Value y) { return cmp(arith::CmpIPredicate::ult, x, y); }
  Value eq(Value x, Value y) { return cmp(arith::CmpIPredicate::eq, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value fmax(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }

  /// The kChunk elements of x from element `element` (16 bytes).
  Value loadChunk(Value element) {
    auto type = VectorType::get({kChunk}, xElem);
    return LLVM::LoadOp::create(b, loc, type, at(param(kX), xElem, element),
                                /*alignment=*/16);
  }
  Value elementOf(Value chunk, int64_t i) {
    return LLVM::ExtractElementOp::create(b, loc, chunk, c32(i));
  }
  SmallVector<Value> toF32(Value chunk) {
    SmallVector<Value> values;
    for (int64_t i = 0; i < kChunk; ++i)
      values.push_back(arith::ExtFOp::create(b, loc, f32, elementOf(chunk, i)));
    return values;
  }
  /// max |x| over a chunk, in x's type (exact): the sign bits cleared in
  /// the loaded registers (upstream's GPU lowering sends llvm.fabs to
  /// libdevice, which has no bf16 one), then max.bf16 / max.f16. NaN
  /// propagates. As f32.
  Value chunkMax(Value chunk) {
    Type i32 = b.getI32Type();
    auto words = VectorType::get({kChunk / 2}, i32);
    Value mask = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(words, b.getI32IntegerAttr(0x7fff7fff)));
    Value magnitudes = LLVM::BitcastOp::create(
        b, loc, chunk.getType(),
        arith::AndIOp::create(
            b, loc, LLVM::BitcastOp::create(b, loc, words, chunk), mask));
    Value m = elementOf(magnitudes, 0);
    for (int64_t i = 1; i < kChunk; ++i)
      m = arith::MaximumFOp::create(b, loc, m, elementOf(magnitudes, i));
    return arith::ExtFOp::create(b, loc, f32, m);
  }
  /// The maximum over the lanes `lane ^ d` for d < `width` (a power of 2).
  Value shuffleMax(Value v, int64_t width) {
    for (int64_t delta = width / 2; delta >= 1; delta /= 2) {
      Value other =
          NVVM::ShflOp::create(b, loc, f32, c32(-1), v, c32(delta), c32(31),
                               NVVM::ShflKind::bfly, UnitAttr())
              .getResult();
      v = fmax(v, other);
    }
    return v;
  }
  /// amax floored, and the scale and factor of the file comment.
  std::pair<Value, Value> scaleAndFactor(Value amax) {
    return buildFp8ScaleAndFactor(b, loc, amax, op.getFp8Max());
  }
  /// Stores the kChunk FP8 bytes of `values * factor` at byte `element`
  /// of q (8 bytes, two words).
  void storeQuantized(ArrayRef<Value> values, Value factor, Value element) {
    Type i32 = b.getI32Type();
    SmallVector<Value> pairs;
    for (int64_t i = 0; i < kChunk; i += 2) {
      Value lo = arith::MulFOp::create(b, loc, values[i], factor);
      Value hi = arith::MulFOp::create(b, loc, values[i + 1], factor);
      // The first operand goes to the upper byte.
      Value packed = NVVM::ConvertF32x2ToF8x2Op::create(
          b, loc, b.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, /*relu=*/false, fp8Elem);
      pairs.push_back(arith::ExtUIOp::create(b, loc, i32, packed));
    }
    auto word = [&](Value low, Value high) -> Value {
      return arith::OrIOp::create(b, loc, low,
                                  arith::ShLIOp::create(b, loc, high, c32(16)));
    };
    auto vecType = VectorType::get({2}, i32);
    Value vec = LLVM::PoisonOp::create(b, loc, vecType);
    vec = LLVM::InsertElementOp::create(b, loc, vec, word(pairs[0], pairs[1]),
                                        c32(0));
    vec = LLVM::InsertElementOp::create(b, loc, vec, word(pairs[2], pairs[3]),
                                        c32(1));
    LLVM::StoreOp::create(b, loc, vec, at(param(kQ), b.getI8Type(), element),
                          /*alignment=*/8);
  }
  void storeScale(Value scale, Value lead, Value rowBlock, Value colBlock) {
    auto offset = [&](Value i, QuantizeParam stride) {
      return mul(i, toIndex(param(stride)));
    };
    Value element = add(
        add(offset(lead, kScaleStrideLead), offset(rowBlock, kScaleStrideRow)),
        offset(colBlock, kScaleStrideCol));
    LLVM::StoreOp::create(b, loc, scale, at(param(kScale), f32, element));
  }

  void buildPerToken();
  void buildPerBlock();

  QuantizeOp op;
  LLVM::GlobalOp smemGlobal;
  FloatType f32;
  Type xElem, fp8Elem;
  Value tid, lane, rows, k, colBlocks;
};

void QuantizeKernelBuilder::build() {
  b.setInsertionPointToStart(&kernel.getBody().front());
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = rem(tid, idx(32));
  rows = toIndex(param(kRows));
  k = toIndex(param(kK));
  colBlocks = div(k, idx(kBlockCols));
  if (op.getBlockShape().getRows() == 1)
    buildPerToken();
  else
    buildPerBlock();
  gpu::ReturnOp::create(b, loc);
}

void QuantizeKernelBuilder::buildPerToken() {
  Value half = div(lane, idx(16)), sub = rem(lane, idx(16));
  Value warpsPerCta = idx(kThreads / 32);
  Value warp =
      add(mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), warpsPerCta),
          div(tid, idx(32)));
  Value numWarps =
      mul(gpu::GridDimOp::create(b, loc, gpu::Dimension::x), warpsPerCta);
  Value rowTiles = div(add(rows, idx(kTaskRows - 1)), idx(kTaskRows));
  Value tasks = mul(mul(toIndex(param(kLead)), rowTiles), colBlocks);
  Value laneOffset = mul(sub, idx(kChunk));
  // Lane l < kTaskRows gathers the scale of the task's row l: row 2 j + h
  // of the task is unit pair j's half h, whose 16 lanes all hold it after
  // the shuffles.
  Value laneRowPair = div(lane, idx(2));
  Value sourceLane = arith::IndexCastOp::create(
      b, loc, b.getI32Type(), mul(rem(lane, idx(2)), idx(16)));
  // The loop is warp-uniform: every lane takes part in the shuffles.
  forRange(warp, tasks, numWarps, [&](Value task) {
    // Column blocks fastest: the warps of a wave read neighbouring
    // 256-byte blocks of the same rows.
    Value colBlock = rem(task, colBlocks), rest = div(task, colBlocks);
    Value lead = div(rest, rowTiles);
    Value row0 = mul(rem(rest, rowTiles), idx(kTaskRows));
    // Element 0 of the task's first row and column block.
    Value first =
        add(mul(add(mul(lead, rows), row0), k), mul(colBlock, idx(kBlockCols)));
    SmallVector<Value> valid, element, chunk;
    for (int64_t j = 0; j < kUnitsPerStep; ++j) {
      Value inTask = add(idx(2 * j), half);
      Value ok = ult(add(row0, inTask), rows);
      valid.push_back(ok);
      // A row past the end reads the task's first, which exists.
      Value offset = select(ok, mul(inTask, k), idx(0));
      element.push_back(add(add(first, offset), laneOffset));
      chunk.push_back(loadChunk(element.back()));
    }
    Value scale = cf(0.0);
    for (int64_t j = 0; j < kUnitsPerStep; ++j) {
      Value amax = shuffleMax(chunkMax(chunk[j]), 16);
      SmallVector<Value> values = toF32(chunk[j]);
      auto [unitScale, factor] = scaleAndFactor(amax);
      Value gathered =
          NVVM::ShflOp::create(b, loc, f32, c32(-1), unitScale, sourceLane,
                               c32(31), NVVM::ShflKind::idx, UnitAttr())
              .getResult();
      scale = select(eq(laneRowPair, idx(j)), gathered, scale);
      ifThen(valid[j], [&] { storeQuantized(values, factor, element[j]); });
    }
    // The task's scales, one a lane: kTaskRows contiguous floats (one or
    // two 32-byte sectors) where the scale's row stride is 1 (MN-major).
    Value row = add(row0, lane);
    ifThen(arith::AndIOp::create(b, loc, ult(lane, idx(kTaskRows)),
                                 ult(row, rows)),
           [&] { storeScale(scale, lead, row, colBlock); });
  });
}

void QuantizeKernelBuilder::buildPerBlock() {
  auto ptrShared = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value smem =
      LLVM::AddressOfOp::create(b, loc, ptrShared, smemGlobal.getSymName());
  Value sub = rem(tid, idx(16)), rowInBlock = div(tid, idx(16));
  Value warp = div(tid, idx(32));
  int64_t blockRows = op.getBlockShape().getRows();
  Value rowBlocks = div(add(rows, idx(blockRows - 1)), idx(blockRows));
  Value perLead = mul(rowBlocks, colBlocks);
  Value units = mul(toIndex(param(kLead)), perLead);
  Value firstUnit = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value gridStride = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  forRange(firstUnit, units, gridStride, [&](Value u) {
    Value lead = div(u, perLead), inLead = rem(u, perLead);
    Value rowBlock = div(inLead, colBlocks);
    Value colBlock = rem(inLead, colBlocks);
    Value row0 = mul(rowBlock, idx(blockRows));
    Value col = add(mul(colBlock, idx(kBlockCols)), mul(sub, idx(kChunk)));
    // This thread's chunk in the block's first row, and in its own.
    Value first = add(mul(add(mul(lead, rows), row0), k), col);
    Value mine = add(first, mul(rowInBlock, k));
    Value rowStep = mul(k, idx(16));
    SmallVector<Value> valid, element, chunk;
    for (int64_t i = 0; i < kRowsPerThread; ++i) {
      Value row = add(row0, add(rowInBlock, idx(16 * i)));
      Value ok = ult(row, rows);
      valid.push_back(ok);
      // A row past the end reads the block's first, which exists.
      element.push_back(select(ok, add(mine, mul(rowStep, idx(i))), first));
      chunk.push_back(loadChunk(element.back()));
    }
    // The raw chunks stay live across the barriers (32 registers), their
    // f32 values only while each is quantised.
    Value amax = cf(0.0);
    for (int64_t i = 0; i < kRowsPerThread; ++i)
      amax = fmax(amax, select(valid[i], chunkMax(chunk[i]), cf(0.0)));
    amax = shuffleMax(amax, 32);
    ifThen(eq(lane, idx(0)),
           [&] { LLVM::StoreOp::create(b, loc, amax, at(smem, f32, warp)); });
    gpu::BarrierOp::create(b, loc);
    for (int64_t w = 0; w < kThreads / 32; ++w)
      amax =
          fmax(amax, LLVM::LoadOp::create(b, loc, f32, at(smem, f32, idx(w))));
    // Every thread has read the maxima before the next block's.
    gpu::BarrierOp::create(b, loc);
    auto [scale, factor] = scaleAndFactor(amax);
    for (int64_t i = 0; i < kRowsPerThread; ++i)
      ifThen(valid[i],
             [&] { storeQuantized(toF32(chunk[i]), factor, element[i]); });
    ifThen(eq(tid, idx(0)),
           [&] { storeScale(scale, lead, rowBlock, colBlock); });
  });
}

/// Why the kernel cannot quantize `op`, or success.
LogicalResult checkQuantize(QuantizeOp op) {
  Type xElem = op.getX().getType().getElementType();
  if (!xElem.isBF16() && !xElem.isF16())
    return op.emitOpError() << "expects bf16 or f16 x for the GPU quantize "
                               "kernel (16-byte loads of 8 elements), got "
                            << xElem;
  ScaleBlockAttr block = op.getBlockShape();
  if (block.getCols() != kBlockCols ||
      (block.getRows() != 1 && block.getRows() != 128))
    return op.emitOpError() << "expects scale_block 1x128 or 128x128 for the "
                               "GPU quantize kernel, got "
                            << block;
  for (auto [name, type] :
       {std::pair<StringRef, MemRefType>{"x", op.getX().getType()},
        {"q", op.getQ().getType()}})
    if (!type.getLayout().isIdentity())
      return op.emitOpError()
             << "expects " << name
             << " in row-major layout for the GPU quantize kernel, got "
             << type;
  return success();
}

} // namespace

FailureOr<DictionaryAttr>
mlir::ggemm::nvvm::buildQuantizeKernel(QuantizeOp op, ModuleOp module,
                                       StringRef name) {
  if (failed(checkQuantize(op)))
    return failure();
  MLIRContext *ctx = module.getContext();
  ScaleBlockAttr block = op.getBlockShape();
  bool perToken = block.getRows() == 1;
  auto ptrGlobal = LLVM::LLVMPointerType::get(ctx, 1);
  Type i64 = IntegerType::get(ctx, 64);
  StandaloneKernel kernel = createStandaloneKernel(
      module, op.getLoc(), name,
      {ptrGlobal, ptrGlobal, ptrGlobal, i64, i64, i64, i64, i64, i64},
      kThreads);
  // The register bound, and the CTAs per SM the grid asks for.
  int64_t ctasPerSm = perToken ? kCtasPerSmPerToken : kCtasPerSmPerBlock;
  kernel.func->setAttr("nvvm.minctasm",
                       IntegerAttr::get(IntegerType::get(ctx, 32), ctasPerSm));
  OpBuilder body(ctx);
  QuantizeKernelBuilder(body, op, kernel.func, kernel.smem).build();

  auto dtype = [](Type t) -> StringRef {
    if (t.isBF16())
      return "bf16";
    if (t.isF16())
      return "f16";
    return isa<Float8E4M3FNType>(t) ? "f8e4m3" : "f8e5m2";
  };
  ManifestFields m(ctx);
  SmallVector<Attribute> params = {
      m.pointer("x"),
      m.pointer("q"),
      m.pointer("scale"),
      m.scalar("num_groups", "num_groups"),
      m.scalar("rows", "rows_per_group"),
      m.scalar("k", "k"),
      m.scalar("scale_stride_group", "scale_stride_group"),
      m.scalar("scale_stride_row", "scale_stride_row"),
      m.scalar("scale_stride_col", "scale_stride_col")};
  // The scale blocks per CTA the runtime sizes the grid by (it caps the
  // grid at ctas_per_sm per SM): 1x128 one a warp, so that a few rows
  // (decode) spread over about a warp per task instead of a few warps
  // walking many tasks; 128x128 one block (a CTA's step).
  int64_t unitsPerCta = perToken ? kThreads / 32 : 1;
  return m.manifest(
      name, kThreads, perToken ? 0 : kThreads / 32 * 4,
      m.dict({m.named("policy", m.s("persistent")),
              m.named("units_per_cta", m.i(unitsPerCta)),
              m.named("ctas_per_sm", m.i(ctasPerSm))}),
      m.dict(
          {m.named("op", m.s("quantize")),
           m.named("scale_block", m.s(perToken ? "1x128" : "128x128")),
           m.named("rank", m.i(op.getX().getType().getRank())),
           m.named("x_dtype", m.s(dtype(op.getX().getType().getElementType()))),
           m.named("q_dtype",
                   m.s(dtype(op.getQ().getType().getElementType())))}),
      params);
}
