// Redis's lazyfree-lazy-* parameters: which deletions hand a large value (or a flushed
// database) to the shard's lazy-free fiber instead of freeing it at once. The mechanism
// is DbSlice's (Unlink, FlushDb(lazily), FreeDetached; docs/architecture.md, "Lazy
// free"); UNLINK and FLUSHALL/FLUSHDB ASYNC use it whatever these say.
//
// Thread-safety: Load and Store from any thread; each field is read and written
// atomically on its own.
#pragma once

namespace damselfly {

struct LazyFreeConfig {
  bool user_del = false;    // lazyfree-lazy-user-del: DEL frees as UNLINK does
  bool user_flush = false;  // lazyfree-lazy-user-flush: FLUSHALL/FLUSHDB with no mode are ASYNC
  bool expire = false;      // lazyfree-lazy-expire: keys that expire
  bool eviction = false;    // lazyfree-lazy-eviction: keys that maxmemory evicts
};

LazyFreeConfig LoadLazyFreeConfig();
void StoreLazyFreeConfig(const LazyFreeConfig& config);

}  // namespace damselfly
