// ObjMalloc: the allocator behind keys and values (CompactObj heap blocks, and later the
// collections), one mimalloc heap per shard thread with per-thread byte accounting.
//
// Why a heap per thread: a shard thread is the only thread that touches its objects
// (shared nothing), so its allocations should not share pages, free lists or locks with
// other threads. mimalloc already keeps thread-local free lists; a dedicated mi_heap
// additionally keeps object memory apart from the thread's other allocations (buffers,
// fibers, std::string temporaries), so a shard's object pages hold objects only.
//
// Why our own counter: `used_memory` must be cheap to read on every write that checks
// --maxmemory. Each thread keeps a plain thread_local byte count, updated with the
// block's usable size (mi_usable_size, which is what the block really occupies) on
// every ObjMalloc/ObjFree: no atomics, no walk over mimalloc's pages. The server sums
// the per-shard counts (each read on its own thread) for INFO and /metrics.
//
// Thread contract:
//  - Every function acts on the calling thread's heap and counter.
//  - A block must be freed by the thread that allocated it. mimalloc itself would accept
//    a free from another thread, but the bytes would be subtracted from the wrong
//    thread's counter (debug builds catch the resulting underflow). In damselfly this
//    holds by construction: the shard that owns an object is the only one that frees it.
//  - Without InitThreadObjHeap() (tests, non-shard threads) allocations come from the
//    thread's default mimalloc heap; they are counted all the same.
//
// Linking note: Debian's libmimalloc.so overrides malloc/free for the whole process, so
// a binary linking this library runs on mimalloc throughout (and glibc's mallinfo2()
// then reports nothing). Under AddressSanitizer the sanitizer's malloc wins instead and
// mimalloc serves only these functions; blocks are then poisoned beyond the requested
// size, so ASAN still reports overflows past it.
#pragma once

#include <cstddef>

namespace damselfly::core {

// Makes a new mimalloc heap (mi_heap_new) this thread's object heap.
// REQUIRES: called once per thread, before the thread's first ObjMalloc; no object heap
// is installed on this thread.
void InitThreadObjHeap();

// Deletes this thread's object heap. Blocks still allocated in it stay valid (mimalloc
// migrates them to the thread's default heap) and may still be passed to ObjFree on this
// thread; the counter keeps counting them. Later allocations fall back to the default
// heap. REQUIRES: InitThreadObjHeap() was called on this thread.
void DestroyThreadObjHeap();

// Returns a block of at least `size` bytes from this thread's object heap (or the
// default heap, see above) and adds ObjUsableSize() of it to this thread's counter.
// The caller may use exactly `size` bytes. Never returns nullptr: running out of memory
// is fatal (the server keeps below --maxmemory long before that).
void* ObjMalloc(size_t size);

// Frees a block from ObjMalloc and subtracts its usable size from this thread's counter.
// REQUIRES: `ptr` came from ObjMalloc on this thread and was not freed; nullptr is
// ignored.
void ObjFree(void* ptr);

// Returns a block holding the first `used` bytes of `ptr` (from ObjMalloc on this thread)
// with at least `size` bytes the caller may use: `ptr` itself when its size class already
// has room (nothing is copied), otherwise a new block of ObjGoodSize(reserve) bytes, all
// of which the caller may use later, and `ptr` is freed. The counter follows. For strings
// that grow in place (SETBIT). REQUIRES: used <= size <= reserve.
void* ObjGrow(void* ptr, size_t used, size_t size, size_t reserve);

// Returns the bytes the block really occupies (mimalloc's size class, >= the requested
// size). For accounting only: bytes past the requested size must not be touched.
// REQUIRES: `ptr` came from ObjMalloc and was not freed.
size_t ObjUsableSize(void* ptr);

// Returns the usable size of the block ObjMalloc(size) would return (its size class),
// without allocating.
size_t ObjGoodSize(size_t size);

// Returns the bytes currently allocated through ObjMalloc and not yet freed on this
// thread (sum of ObjUsableSize). O(1).
size_t ThreadObjHeapUsedBytes();

// Hands memory this thread's allocator holds free back to the kernel, as far as mimalloc
// 2.0 lets it: the empty and retired pages of the thread's default heap, and the blocks
// other threads freed into them, go back to their segments, and segments left wholly free
// are decommitted. mimalloc does that work only when the thread allocates again, so
// without this call a thread that went quiet after a burst (10,000 connections closed,
// large replies sent) keeps that memory resident. Not returned: free spans inside a
// segment that still holds a live block, whose delayed decommit mimalloc runs only when
// that segment hands out a page again (docs/benchmarks.md, "What the release cannot
// return"). Cost: one pass over the default heap's pages (connection buffers and
// temporaries; the object heap's pages are not visited). Any thread.
void ReleaseFreeMemory();

}  // namespace damselfly::core
