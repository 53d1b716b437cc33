//===- DescriptorCacheTest.cpp - Tests of the TMA descriptor cache --------===//

#include "DescriptorCache.h"

#include <gtest/gtest.h>

#include <cstring>

namespace ggemm::runtime {
namespace {

/// Encode arguments of a rank-2 bf16 tensor at `address`.
TensorMapArgs argsAt(uintptr_t address) {
  TensorMapArgs args;
  args.dataType = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  args.rank = 2;
  args.globalAddress = reinterpret_cast<void *>(address);
  args.globalDim = {7168, 1000};
  args.globalStrides = {7168 * 2};
  args.boxDim = {64, 128};
  args.elementStrides = {1, 1};
  args.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  return args;
}

/// A descriptor whose first word tells which one it is.
CUtensorMap mapNumbered(uint64_t number) {
  CUtensorMap map;
  std::memset(&map, 0, sizeof(map));
  std::memcpy(&map, &number, sizeof(number));
  return map;
}

uint64_t numberOf(const CUtensorMap &map) {
  uint64_t number;
  std::memcpy(&number, &map, sizeof(number));
  return number;
}

TEST(DescriptorCache, HitReturnsTheStoredDescriptor) {
  DescriptorCache cache;
  CUtensorMap map;
  EXPECT_FALSE(cache.lookup(argsAt(0x1000), map));
  cache.insert(argsAt(0x1000), mapNumbered(7));
  ASSERT_TRUE(cache.lookup(argsAt(0x1000), map));
  EXPECT_EQ(numberOf(map), 7u);
  EXPECT_EQ(cache.size(), 1);
}

TEST(DescriptorCache, EveryEncodeArgumentIsPartOfTheKey) {
  DescriptorCache cache;
  const TensorMapArgs base = argsAt(0x1000);
  cache.insert(base, mapNumbered(1));
  auto differs = [&](auto change) {
    TensorMapArgs args = base;
    change(args);
    CUtensorMap map;
    return !cache.lookup(args, map);
  };
  EXPECT_TRUE(differs([](TensorMapArgs &a) {
    a.globalAddress = reinterpret_cast<void *>(0x2000);
  }));
  EXPECT_TRUE(differs(
      [](TensorMapArgs &a) { a.dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; }));
  EXPECT_TRUE(differs([](TensorMapArgs &a) { a.rank = 3; }));
  EXPECT_TRUE(differs([](TensorMapArgs &a) { a.globalDim[1] = 999; }));
  EXPECT_TRUE(differs([](TensorMapArgs &a) { a.globalStrides[0] += 16; }));
  EXPECT_TRUE(differs([](TensorMapArgs &a) { a.boxDim[1] = 64; }));
  EXPECT_TRUE(differs([](TensorMapArgs &a) { a.elementStrides[0] = 2; }));
  EXPECT_TRUE(differs(
      [](TensorMapArgs &a) { a.interleave = CU_TENSOR_MAP_INTERLEAVE_16B; }));
  EXPECT_TRUE(
      differs([](TensorMapArgs &a) { a.swizzle = CU_TENSOR_MAP_SWIZZLE_64B; }));
  EXPECT_TRUE(differs([](TensorMapArgs &a) {
    a.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  }));
  EXPECT_TRUE(differs([](TensorMapArgs &a) {
    a.oobFill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  }));
  EXPECT_FALSE(differs([](TensorMapArgs &) {}));
}

TEST(DescriptorCache, EvictsTheLeastRecentlyUsed) {
  DescriptorCache cache;
  const int capacity = DescriptorCache::kCapacity;
  for (int i = 0; i < capacity; ++i)
    cache.insert(argsAt(0x1000 * (i + 1)), mapNumbered(i));
  EXPECT_EQ(cache.size(), capacity);
  // Entry 0 is used again, so entry 1 is now the oldest.
  CUtensorMap map;
  ASSERT_TRUE(cache.lookup(argsAt(0x1000), map));
  cache.insert(argsAt(0x100000), mapNumbered(100));
  EXPECT_EQ(cache.size(), capacity);
  EXPECT_TRUE(cache.lookup(argsAt(0x1000), map));
  EXPECT_FALSE(cache.lookup(argsAt(0x2000), map));
  for (int i = 2; i < capacity; ++i)
    EXPECT_TRUE(cache.lookup(argsAt(0x1000 * (i + 1)), map)) << i;
  ASSERT_TRUE(cache.lookup(argsAt(0x100000), map));
  EXPECT_EQ(numberOf(map), 100u);
}

TEST(DescriptorCache, InsertingTheSameArgumentsAgainReplaces) {
  DescriptorCache cache;
  cache.insert(argsAt(0x1000), mapNumbered(1));
  cache.insert(argsAt(0x1000), mapNumbered(2));
  EXPECT_EQ(cache.size(), 1);
  CUtensorMap map;
  ASSERT_TRUE(cache.lookup(argsAt(0x1000), map));
  EXPECT_EQ(numberOf(map), 2u);
}

} // namespace
} // namespace ggemm::runtime
