//===- DescriptorCache.cpp - Encoded TMA descriptors of a kernel ----------===//

#include "DescriptorCache.h"

namespace ggemm::runtime {

bool sameEncodeArgs(const TensorMapArgs &a, const TensorMapArgs &b) {
  // computeTensorMapArgs zeroes the entries past the rank, so whole arrays
  // compare.
  return a.globalAddress == b.globalAddress && a.rank == b.rank &&
         a.dataType == b.dataType && a.globalDim == b.globalDim &&
         a.globalStrides == b.globalStrides && a.boxDim == b.boxDim &&
         a.elementStrides == b.elementStrides && a.interleave == b.interleave &&
         a.swizzle == b.swizzle && a.l2Promotion == b.l2Promotion &&
         a.oobFill == b.oobFill;
}

DescriptorCache::Entry *DescriptorCache::find(const TensorMapArgs &args) {
  for (int i = 0; i < used; ++i)
    if (sameEncodeArgs(entries[i].args, args))
      return &entries[i];
  return nullptr;
}

bool DescriptorCache::lookup(const TensorMapArgs &args, CUtensorMap &map) {
  std::lock_guard<std::mutex> lock(mutex);
  Entry *entry = find(args);
  if (!entry)
    return false;
  entry->lastUse = ++clock;
  map = entry->map;
  return true;
}

void DescriptorCache::insert(const TensorMapArgs &args,
                             const CUtensorMap &map) {
  std::lock_guard<std::mutex> lock(mutex);
  // Another thread may have encoded the same arguments meanwhile.
  Entry *entry = find(args);
  if (!entry && used < kCapacity)
    entry = &entries[used++];
  if (!entry) {
    entry = &entries[0];
    for (Entry &candidate : entries)
      if (candidate.lastUse < entry->lastUse)
        entry = &candidate;
  }
  entry->args = args;
  entry->map = map;
  entry->lastUse = ++clock;
}

int DescriptorCache::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return used;
}

} // namespace ggemm::runtime
