// MemcacheFamily: memcached's commands over database 0 of a shard's DbSlice, answering
// as memcached 1.6 does, byte for byte where the protocol fixes the bytes.
//
// Items are the same keys and values RESP clients see. Client flags and cas uniques are
// kept only for items that need them (DbSlice::FindMcMeta); a cas unique is handed out
// the first time a client asks for one (gets, mg c), which is indistinguishable from
// memcached's store-time cas because cas only ever compares with a value a client read.
// The access record behind mg's h and l flags is kept for the items the meta commands
// store or fetch (see McMeta).
//
// Thread-safety: RunOnShard and FetchOnShard run on the thread of the shard that owns
// every key they touch; McStats are per thread.
#pragma once

#include <cstdint>
#include <string>

#include "src/facade/memcache_parser.h"
#include "src/server/db_slice.h"

namespace damselfly {

// memcached's `stats` counters, kept per thread (summed by `stats`).
struct McStats {
  uint64_t curr_connections = 0, total_connections = 0;
  uint64_t cmd_get = 0, cmd_set = 0, cmd_flush = 0, cmd_touch = 0;
  uint64_t get_hits = 0, get_misses = 0, get_expired = 0;
  uint64_t delete_hits = 0, delete_misses = 0;
  uint64_t incr_hits = 0, incr_misses = 0, decr_hits = 0, decr_misses = 0;
  uint64_t cas_hits = 0, cas_misses = 0, cas_badval = 0;
  uint64_t touch_hits = 0, touch_misses = 0;
  uint64_t auth_cmds = 0, auth_errors = 0;  // authentication attempts (memcache_auth.h)
  uint64_t total_items = 0;  // items stored

  static McStats& tlocal();
  void Add(const McStats& other);
};

// The memcached version we behave like; VERSION and `stats` report it, since clients
// decide from it which commands they may use.
inline constexpr char kMemcachedCompatVersion[] = "1.6.18";

namespace memcache {

using facade::MemcacheCommand;

inline constexpr DbIndex kDb = 0;  // memcache clients see database 0

// Whether the command names keys (and so runs on their shards).
bool HasKeys(MemcacheCommand::Type type);
// Whether it stores data (refused past maxmemory): the storage commands and ms.
bool AddsData(MemcacheCommand::Type type);
// Whether it only reads its keys (get, gets, me, mg without N or T): such commands take
// shared transaction locks, the others exclusive ones, and only the others mark WATCHes.
bool ReadsOnly(const MemcacheCommand& command);
// Whether it is get, gets, gat or gats (many keys, answered in key order).
bool IsRetrieval(MemcacheCommand::Type type);

// Runs a keyed command whose keys all live on this thread's shard, appending its reply,
// and marks the WATCHes of the keys it may have changed.
void RunOnShard(const MemcacheCommand& command, std::string* out);

// Appends the "VALUE ..." blocks of keys [begin, end) of a retrieval (no "END"); every
// one of those keys lives on this thread's shard. Marks the WATCHes of touched keys.
void AppendRetrieved(const MemcacheCommand& command, size_t begin, size_t end, std::string* out);

// A retrieval's item, fetched on its shard and sent later (gets spanning shards).
struct FetchedItem {
  bool found = false;
  uint32_t flags = 0;
  uint64_t cas = 0;
  std::string value;
};

// Looks up (and for gat/gats touches) key `index` of a retrieval on this thread's shard.
void FetchOnShard(const MemcacheCommand& command, size_t index, FetchedItem* item);
// Appends the "VALUE ..." block of a fetched item (nothing for a miss).
void AppendFetched(const MemcacheCommand& command, size_t index, const FetchedItem& item,
                   std::string* out);

}  // namespace memcache
}  // namespace damselfly
