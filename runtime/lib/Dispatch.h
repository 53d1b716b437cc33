//===- Dispatch.h - Choosing a bundle's variant per launch ------*- C++ -*-===//
//
// A version 2 bundle carries several kernels of one problem, each tiled for
// a range of rows per group. The host picks one per launch from what it
// knows without reading device memory: the tensor shapes (total rows, group
// count) and the caller's expected_m hint. The choice is a pure function of
// those, so a launch captured into a CUDA graph keeps the variant chosen at
// capture, and replays never consult the host.
//
//===----------------------------------------------------------------------===//

#ifndef GGEMM_RUNTIME_DISPATCH_H
#define GGEMM_RUNTIME_DISPATCH_H

#include "LaunchPlan.h"
#include "Manifest.h"

#include <cstddef>
#include <cstdint>

namespace ggemm::runtime {

/// The rows per group the "rows_per_group" rule compares with the bounds:
/// `expectedM` when positive (the caller's hint wins); otherwise
/// segment_matmul: ceil(num_rows / G) (0 without groups; segment_matmul_k
/// likewise, its num_rows being the token rows T, dy.shape[1] for
/// transposed dy and x), masked_matmul:
/// Mmax (the hint-less bound on the valid rows), batched_matmul: M.
int64_t dispatchRowsPerGroup(Op op, const ProblemShape &shape,
                             int64_t expectedM);

/// The variant for `rowsPerGroup`: the first i with rowsPerGroup <=
/// bounds[i], else the last. 0 for a bundle of one variant.
size_t selectVariant(const Bundle &bundle, int64_t rowsPerGroup);

} // namespace ggemm::runtime

#endif // GGEMM_RUNTIME_DISPATCH_H
