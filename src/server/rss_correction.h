// RssCorrection: how much the shards' shares of maxmemory are lowered so that maxmemory
// bounds the process's RSS, not only the bytes the shards count (eviction.h).
//
// The shards count their values' blocks and their tables (used). RSS holds more: the
// start-up footprint (code, libraries, thread stacks, rings: ~11 MiB with two threads),
// which no eviction lowers, and per byte of data what the allocator takes around it (the
// unused rest of its pages, their metadata) and the connections' buffers. The correction
// is the footprint plus room for the second part, so that the data's share is
//   (maxmemory - footprint) / (RSS over the footprint per byte used)
// measured while RSS grows past half of maxmemory: growth is pages the data really took.
// RSS that does not grow changes nothing. After an eviction or a DEL, mimalloc keeps the
// pages it freed (new values reuse them), so RSS stays while used falls: RSS is measured
// against the most the data used since RSS was last under 95% of maxmemory, not against
// what it uses now, which would read each eviction as more overhead per byte, evict on
// and empty the cache. Once RSS is under 95% of maxmemory (a FLUSHALL, a raised limit),
// the correction over the footprint shrinks by an eighth per update. Never more than half
// of maxmemory.
//
// A maxmemory under 4x the footprint (logged by the caller when `bounds_whole_rss` is
// false) would give a quarter of it or more to the footprint and break the small limits
// Redis's own tests set (used_memory plus a few bytes): there maxmemory bounds the data
// as Redis bounds used_memory, and RSS's growth over the first update's RSS: while that
// growth passes maxmemory and still grows, the correction grows by a quarter of the
// excess per update. (RSS per byte is no measure there: a connection's buffers alone are
// a large part of such a limit.) RSS may pass maxmemory by the footprint.
//
// Thread-safety: none; a plain value (EngineShardSet updates it on shard 0's thread).
#pragma once

#include <cstdint>

namespace damselfly {

class RssCorrection {
 public:
  // `startup_rss`: the process's RSS before any shard or client.
  explicit RssCorrection(uint64_t startup_rss) : startup_rss_(startup_rss ? startup_rss : 1) {}

  // Takes a sample of RSS and the shards' used bytes; returns the new correction.
  uint64_t Update(uint64_t maxmemory, uint64_t rss, uint64_t used);

  uint64_t correction() const { return correction_; }
  uint64_t startup_rss() const { return startup_rss_; }
  bool bounds_whole_rss(uint64_t maxmemory) const { return maxmemory >= 4 * startup_rss_; }

 private:
  uint64_t startup_rss_;
  uint64_t first_rss_ = 0;  // RSS at the first update
  uint64_t last_rss_ = 0;   // RSS at the previous update
  uint64_t peak_used_ = 0;  // the most used since RSS was last under 95% of maxmemory
  uint64_t correction_ = 0;
};

}  // namespace damselfly
