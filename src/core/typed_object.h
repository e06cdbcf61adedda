// TypedObject: the base of the values a CompactObj holds that are not strings (lists,
// hashes, sets, sorted sets...), and ObjAllocator, the std allocator over ObjMalloc that
// their containers use.
//
// A CompactObj owns its TypedObject: it destroys it when overwritten or destroyed, counts
// its memory in MallocUsed, and keeps the server's type and encoding numbers in its own
// payload, so TYPE and OBJECT ENCODING read no memory beyond the table. The object and
// everything it allocates come from the owning thread's ObjMalloc heap, so used_memory
// and maxmemory see collections as they see strings.
//
// Thread-safety: none; an object belongs to the thread that made it, as its CompactObj.
#pragma once

#include <cstddef>
#include <new>
#include <string>
#include <utility>

#include "src/core/obj_malloc.h"

namespace damselfly::core {

class TypedObject {
 public:
  virtual ~TypedObject() = default;

  // Returns the heap bytes the object holds, itself included (ObjUsableSize of its
  // blocks), as MEMORY USAGE and INFO count them.
  virtual size_t MallocUsed() const = 0;

  // Appends a self-contained form of the content to *out, from which the type's own
  // factory rebuilds an equal object on another thread (a RENAME or MOVE across shards,
  // whose threads may not share heap blocks).
  virtual void Serialize(std::string* out) const = 0;
  // The work freeing it takes, in Redis's estimate (lazyfreeGetFreeEffort: about one
  // unit per allocation): UNLINK frees an object whose effort passes 64 after its reply.
  // By default 1, as for a listpack or intset.
  virtual size_t FreeEffort() const { return 1; }
  // Frees up to about `max` of its elements ahead of its destruction and returns true
  // while some remain, for an object nobody reads any more (UNLINK's lazy free spreads a
  // large collection's frees over steps). By default nothing: the destructor frees all.
  virtual bool FreeSome(size_t max) {
    (void)max;
    return false;
  }

  // Returns a new T built from args in this thread's object heap. Free it with Destroy
  // (a CompactObj holding it does so).
  template <typename T, typename... Args>
  static T* Make(Args&&... args) {
    void* block = ObjMalloc(sizeof(T));
    return new (block) T(std::forward<Args>(args)...);
  }
  // Destroys an object made by Make. nullptr is ignored.
  static void Destroy(TypedObject* object) {
    if (object == nullptr) return;
    object->~TypedObject();
    ObjFree(object);
  }
};

// A std allocator over this thread's object heap, for the containers inside typed
// objects (their blocks then count in used_memory). Stateless: any two compare equal.
template <typename T>
struct ObjAllocator {
  using value_type = T;
  ObjAllocator() = default;
  template <typename U>
  ObjAllocator(const ObjAllocator<U>&) {}  // NOLINT: rebinding is implicit by design
  T* allocate(size_t n) { return static_cast<T*>(ObjMalloc(n * sizeof(T))); }
  void deallocate(T* ptr, size_t) { ObjFree(ptr); }
  template <typename U>
  bool operator==(const ObjAllocator<U>&) const {
    return true;
  }
};

}  // namespace damselfly::core
