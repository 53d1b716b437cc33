//===- ProbeKernel.cu - Checks what the runtime hands a kernel ------------===//
//
// Kernels with the parameter list of the documented segment_matmul manifest
// (docs/Runtime.md) and of its masked_matmul twin that multiply nothing: CTA
// 0 loads one 128x64 bf16 box of x and one of w through the TMA descriptors
// the runtime encoded (128-byte swizzle, as the real kernels use) and copies
// them, un-swizzled, into y (f32) with the scalar parameters, so that
// probe.py can compare them with what the tensors hold. Built for sm_90a by
// runtime/test/gpu/run.sh.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

namespace {

__device__ __forceinline__ uint32_t sharedAddress(const void *pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

constexpr int kBoxRows = 128;
constexpr int kBoxColumns = 64; // 128 bytes of bf16: one swizzle row
constexpr uint32_t kBoxBytes = kBoxRows * kBoxColumns * 2;

// Where in the box the value of (row, column) lands with the 128-byte
// swizzle: the 16-byte chunk index is XORed with the row index modulo 8
// (rows are 128 bytes and the box starts 1024-byte aligned).
__device__ __forceinline__ int swizzled(int row, int column) {
  return row * kBoxColumns + (((column >> 3) ^ (row & 7)) << 3) + (column & 7);
}

} // namespace

// Coordinates (innermost first) of the boxes probe.py checks.
constexpr int kXColumn = 64, kXRow = 256;
constexpr int kWColumn = 128, kWRow = 128, kWGroup = 2;
constexpr int kDebugRow = 200;
// masked_matmul probe: x is [groups, rows, k]; the box starts at row 128 of
// group 1, so with rank-3 descriptors rows past the group read as zeros.
constexpr int kMaskedXColumn = 64, kMaskedXRow = 128, kMaskedXGroup = 1;
constexpr int kMaskedDebugRow = 150;

namespace {

/// Loads the boxes at the given coordinates and writes them and the
/// parameters into y (f32, row stride ldy).
template <int ARank>
__device__ void probe(const CUtensorMap *aDesc, const CUtensorMap *bDesc,
                      const int (&aCoords)[3], float *y, const int32_t *counts,
                      const int32_t *weightIndices, const float *bias,
                      const float *rowScale, int64_t numRows,
                      int64_t rowsPerGroup, int32_t numGroups, int32_t n,
                      int32_t k, int64_t ldy, int debugRow) {
  extern __shared__ unsigned char dynamicShared[];
  __shared__ alignas(8) uint64_t barrier;

  uint32_t base = sharedAddress(dynamicShared);
  uint32_t padding = (1024 - base % 1024) % 1024;
  auto *xBox = reinterpret_cast<__nv_bfloat16 *>(dynamicShared + padding);
  __nv_bfloat16 *wBox = xBox + kBoxRows * kBoxColumns;

  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(
        sharedAddress(&barrier)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     sharedAddress(&barrier)),
                 "r"(2 * kBoxBytes)
                 : "memory");
    if (ARank == 2)
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                   "complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                       sharedAddress(xBox)),
                   "l"(aDesc), "r"(aCoords[0]), "r"(aCoords[1]),
                   "r"(sharedAddress(&barrier))
                   : "memory");
    else
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
                   "complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
                       sharedAddress(xBox)),
                   "l"(aDesc), "r"(aCoords[0]), "r"(aCoords[1]),
                   "r"(aCoords[2]), "r"(sharedAddress(&barrier))
                   : "memory");
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
                     sharedAddress(wBox)),
                 "l"(bDesc), "r"(kWColumn), "r"(kWRow), "r"(kWGroup),
                 "r"(sharedAddress(&barrier))
                 : "memory");
  }
  uint32_t done = 0;
  while (!done)
    asm volatile("{\n"
                 ".reg .pred ready;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], 0;\n"
                 "selp.u32 %0, 1, 0, ready;\n"
                 "}\n"
                 : "=r"(done)
                 : "r"(sharedAddress(&barrier))
                 : "memory");

  int row = threadIdx.x;
  for (int column = 0; column < kBoxColumns; ++column) {
    y[row * ldy + column] = __bfloat162float(xBox[swizzled(row, column)]);
    y[row * ldy + kBoxColumns + column] =
        __bfloat162float(wBox[swizzled(row, column)]);
  }
  if (row == 0) {
    unsigned clusterSize, dynamicSize;
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(clusterSize));
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamicSize));
    float *debug = y + debugRow * ldy;
    debug[0] = static_cast<float>(numRows);
    debug[1] = static_cast<float>(rowsPerGroup);
    debug[2] = static_cast<float>(numGroups);
    debug[3] = static_cast<float>(n);
    debug[4] = static_cast<float>(k);
    debug[5] = static_cast<float>(ldy);
    debug[6] = static_cast<float>(gridDim.x);
    // segment: seg_indptr[G] (the row count); masked: masked_m[G - 1].
    debug[7] =
        static_cast<float>(counts[ARank == 2 ? numGroups : numGroups - 1]);
    debug[8] = weightIndices ? 1.0f : 0.0f;
    debug[9] = bias ? 1.0f : 0.0f;
    debug[10] = rowScale ? 1.0f : 0.0f;
    debug[11] = static_cast<float>(clusterSize);
    debug[12] = static_cast<float>(dynamicSize);
  }
}

} // namespace

// The parameters of the documented segment_matmul manifest.
extern "C" __global__ void __launch_bounds__(128)
    ggemm_probe_kernel(const __grid_constant__ CUtensorMap a_desc,
                       const __grid_constant__ CUtensorMap b_desc, float *y,
                       const int32_t *group_rows, const int32_t *weight_indices,
                       const float *bias, const float *row_scale,
                       int64_t num_rows, int64_t rows_per_group,
                       int32_t num_groups, int32_t n, int32_t k, int64_t ldy) {
  if (blockIdx.x != 0)
    return;
  const int coords[3] = {kXColumn, kXRow, 0};
  probe<2>(&a_desc, &b_desc, coords, y, group_rows, weight_indices, bias,
           row_scale, num_rows, rows_per_group, num_groups, n, k, ldy,
           kDebugRow);
}

// The same for masked_matmul with a rank-3 descriptor of x.
extern "C" __global__ void __launch_bounds__(128)
    ggemm_probe_masked_kernel(const __grid_constant__ CUtensorMap a_desc,
                              const __grid_constant__ CUtensorMap b_desc,
                              float *y, const int32_t *masked_m,
                              const int32_t *weight_indices, const float *bias,
                              const float *row_scale, int64_t num_rows,
                              int64_t rows_per_group, int32_t num_groups,
                              int32_t n, int32_t k, int64_t ldy) {
  if (blockIdx.x != 0)
    return;
  const int coords[3] = {kMaskedXColumn, kMaskedXRow, kMaskedXGroup};
  probe<3>(&a_desc, &b_desc, coords, y, masked_m, weight_indices, bias,
           row_scale, num_rows, rows_per_group, num_groups, n, k, ldy,
           kMaskedDebugRow);
}
