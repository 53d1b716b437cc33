//===- Dispatch.cpp - Choosing a bundle's variant per launch --------------===//

#include "Dispatch.h"

namespace ggemm::runtime {

int64_t dispatchRowsPerGroup(Op op, const ProblemShape &shape,
                             int64_t expectedM) {
  if (expectedM > 0)
    return expectedM;
  switch (op) {
  case Op::SegmentMatmul:
  case Op::SegmentMatmulK: // its segments split the token rows T, as M
    if (shape.numGroups <= 0)
      return 0;
    return (shape.numRows + shape.numGroups - 1) / shape.numGroups;
  case Op::MaskedMatmul:
  case Op::BatchedMatmul:
    return shape.rowsPerGroup;
  case Op::SortByExpert: // one kernel: never a version 2 bundle
  case Op::Quantize:
    return 0;
  }
  return 0;
}

size_t selectVariant(const Bundle &bundle, int64_t rowsPerGroup) {
  for (size_t i = 0; i < bundle.bounds.size(); ++i)
    if (rowsPerGroup <= bundle.bounds[i])
      return i;
  return bundle.variants.empty() ? 0 : bundle.variants.size() - 1;
}

} // namespace ggemm::runtime
