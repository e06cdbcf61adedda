#include "src/core/obj_malloc.h"

#include <glog/logging.h>
#include <mimalloc.h>
#include <sanitizer/asan_interface.h>

#include <cstring>

namespace damselfly::core {
namespace {

// This thread's object heap; nullptr until InitThreadObjHeap().
thread_local mi_heap_t* tl_obj_heap = nullptr;

// Sum of mi_usable_size over this thread's live ObjMalloc blocks.
thread_local size_t tl_used_bytes = 0;

}  // namespace

void InitThreadObjHeap() {
  CHECK(tl_obj_heap == nullptr) << "InitThreadObjHeap called twice on this thread";
  tl_obj_heap = mi_heap_new();
  CHECK(tl_obj_heap != nullptr) << "mi_heap_new failed";
}

void DestroyThreadObjHeap() {
  CHECK(tl_obj_heap != nullptr) << "DestroyThreadObjHeap without InitThreadObjHeap";
  mi_heap_delete(tl_obj_heap);
  tl_obj_heap = nullptr;
}

void* ObjMalloc(size_t size) {
  void* ptr = tl_obj_heap ? mi_heap_malloc(tl_obj_heap, size) : mi_malloc(size);
  CHECK(ptr != nullptr) << "out of memory allocating " << size << " bytes";
  size_t usable = mi_usable_size(ptr);
  tl_used_bytes += usable;
  // mimalloc's memory is invisible to ASAN (no-ops in other builds): make the slack of
  // the size class unaddressable so an overflow past `size` is reported.
  ASAN_POISON_MEMORY_REGION(static_cast<char*>(ptr) + size, usable - size);
  return ptr;
}

void ObjFree(void* ptr) {
  if (ptr == nullptr) return;
  size_t usable = mi_usable_size(ptr);
  DCHECK_GE(tl_used_bytes, usable) << "block freed on a thread that did not allocate it";
  tl_used_bytes -= usable;
  // Leave no poison behind: mimalloc reuses the block for any later size.
  ASAN_UNPOISON_MEMORY_REGION(ptr, usable);
  mi_free(ptr);
}

void* ObjGrow(void* ptr, size_t used, size_t size, size_t reserve) {
  DCHECK(used <= size && size <= reserve);
  if (mi_usable_size(ptr) >= size) {
    // The size class's slack was poisoned past the size first asked for.
    ASAN_UNPOISON_MEMORY_REGION(ptr, size);
    return ptr;
  }
  void* grown = ObjMalloc(ObjGoodSize(reserve));
  std::memcpy(grown, ptr, used);
  ObjFree(ptr);
  return grown;
}

size_t ObjUsableSize(void* ptr) { return mi_usable_size(ptr); }

size_t ObjGoodSize(size_t size) { return mi_good_size(size); }

size_t ThreadObjHeapUsedBytes() { return tl_used_bytes; }

void ReleaseFreeMemory() { mi_collect(false); }

}  // namespace damselfly::core
