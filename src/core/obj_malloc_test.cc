#include "src/core/obj_malloc.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

namespace damselfly::core {
namespace {

TEST(ObjMallocTest, CountsUsableBytesUntilFreed) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  void* small = ObjMalloc(20);
  void* page = ObjMalloc(1024);
  EXPECT_GE(ObjUsableSize(small), 20u);
  EXPECT_EQ(ObjUsableSize(page), 1024u);  // a size class of its own in mimalloc
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + ObjUsableSize(small) + 1024);
  std::memset(small, 'x', 20);
  std::memset(page, 'y', 1024);
  ObjFree(small);
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + 1024);
  ObjFree(page);
  ObjFree(nullptr);
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

TEST(ObjMallocTest, ThreadHeapsCountSeparately) {
  const size_t main_baseline = ThreadObjHeapUsedBytes();
  void* main_block = ObjMalloc(100);
  std::thread shard([] {
    InitThreadObjHeap();
    EXPECT_EQ(ThreadObjHeapUsedBytes(), 0u);
    void* blocks[100];
    for (void*& block : blocks) block = ObjMalloc(64);
    EXPECT_EQ(ThreadObjHeapUsedBytes(), 100 * ObjUsableSize(blocks[0]));
    for (void* block : blocks) ObjFree(block);
    EXPECT_EQ(ThreadObjHeapUsedBytes(), 0u);
    DestroyThreadObjHeap();
  });
  shard.join();
  EXPECT_EQ(ThreadObjHeapUsedBytes(), main_baseline + ObjUsableSize(main_block));
  ObjFree(main_block);
  EXPECT_EQ(ThreadObjHeapUsedBytes(), main_baseline);
}

TEST(ObjMallocTest, BlocksOutliveTheirHeap) {
  std::thread shard([] {
    InitThreadObjHeap();
    char* block = static_cast<char*>(ObjMalloc(300));
    std::memset(block, 'z', 300);
    const size_t used = ThreadObjHeapUsedBytes();
    DestroyThreadObjHeap();
    EXPECT_EQ(block[299], 'z');
    EXPECT_EQ(ThreadObjHeapUsedBytes(), used);
    void* after = ObjMalloc(10);  // falls back to the default heap
    ObjFree(block);
    ObjFree(after);
    EXPECT_EQ(ThreadObjHeapUsedBytes(), 0u);
  });
  shard.join();
}

TEST(ObjMallocTest, HeapCanBeRecreated) {
  std::thread shard([] {
    for (int round = 0; round < 3; ++round) {
      InitThreadObjHeap();
      void* block = ObjMalloc(4096);
      ObjFree(block);
      DestroyThreadObjHeap();
    }
    EXPECT_EQ(ThreadObjHeapUsedBytes(), 0u);
  });
  shard.join();
}

#if defined(__SANITIZE_ADDRESS__)
TEST(ObjMallocDeathTest, AsanSeesOverflowPastRequestedSize) {
  char* block = static_cast<char*>(ObjMalloc(20));  // a 32-byte size class
  ASSERT_GT(ObjUsableSize(block), 20u);
  EXPECT_DEATH(static_cast<volatile char*>(block)[20] = 1, "use-after-poison");
  ObjFree(block);
  // After a free the slack is addressable again, for whatever mimalloc puts there.
  char* again = static_cast<char*>(ObjMalloc(32));
  static_cast<volatile char*>(again)[31] = 1;
  ObjFree(again);
}
#endif

}  // namespace
}  // namespace damselfly::core
