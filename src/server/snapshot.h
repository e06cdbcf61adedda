// Snapshots: a point-in-time copy of every database, written as one RDB file that Redis
// 7.0 loads, without fork and with memory that stays flat while writes go on
// (docs/architecture.md, "Snapshots").
//
// The cut. SaveSnapshot runs one whole-shard transaction; its hop on each shard is that
// shard's cut. VLL orders every other transaction before or after it on all shards, so
// the cuts are consistent: no multi-shard write is in the file on one shard and missing
// on another. In the hop the shard takes an epoch above every bucket version of its
// tables and installs the pre-update hook (DbSlice::SetPreUpdateHook).
//
// Per shard, a fiber walks the tables bucket by bucket (DbSlice::TraverseBuckets). A
// bucket whose version is below the epoch is serialized (every entry, with its deadline
// and memcached flags) and raised to the epoch. A write that reaches a bucket first
// serializes it from the hook, before the change: each key present at the cut is written
// once, as it was then, and keys inserted later land in buckets already at the epoch.
// FLUSHDB and SWAPDB hook every bucket of the databases they change first. Expired keys
// are written with their deadlines; loading drops them, as Redis does.
//
// The file. Serialized entries leave in chunks of about kChunkBytes, each a sequence of
// whole entries that starts with SELECTDB, so chunks may land in any order. Each shard
// writes its own chunks, at offsets it reserves with one atomic add, through its thread's
// io_uring (helio/io/file.h), and checksums them; the file's CRC64 is combined from the
// chunks' in offset order (core/crc64.h). An entry is never split between chunks, so a
// shard briefly holds the whole encoding of its largest value: the one place memory is
// not flat. The file is written as a temporary, fsynced, and renamed over `path`, so a
// crash mid-way leaves the previous file intact.
//
// Thread-safety: SaveSnapshot runs on a proactor fiber and blocks it (not its thread)
// until the file is complete. One snapshot at a time (SnapshotRunning).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace damselfly {

class EngineShard;

struct SnapshotOptions {
  std::string path;         // the file to (re)place
  bool compression = true;  // rdbcompression: LZF for long strings
  bool checksum = true;     // rdbchecksum: the CRC64 at the end (else 0)
  // Called on every shard in the cut's hop (a replica's journal starts there).
  std::function<void(EngineShard* shard)> on_cut;
};

struct SnapshotResult {
  uint64_t keys = 0;   // entries written (expired ones included)
  uint64_t bytes = 0;  // the file's size
};

// Writes the snapshot. Fails (changing nothing on disk) when another one runs, or on an
// I/O error. REQUIRES: a proactor fiber, outside any transaction.
absl::Status SaveSnapshot(const SnapshotOptions& options, SnapshotResult* result);

// Whether a snapshot is being written. Thread-safe.
bool SnapshotRunning();

struct LoadResult {
  uint64_t keys = 0;                   // keys loaded
  uint64_t expired = 0;                // keys dropped because their deadline had passed
  std::vector<std::string> functions;  // the FUNCTION libraries' code, for FUNCTION LOAD
  uint64_t rdb_bytes = 0;  // where the RDB ends in the file (an AOF's commands may follow)
};

// A load in progress, for INFO and the log: written by the load, read from any thread.
struct LoadProgress {
  std::atomic<uint64_t> total_bytes{0};
  std::atomic<uint64_t> loaded_bytes{0};  // how far the first shard has read
  std::atomic<bool> cancel{false};        // set from any thread to stop the load early
};

// Loads an RDB file (Redis 7.0's, Redis 6.x's, or one SaveSnapshot wrote) into the shards,
// adding to what they hold; a key already present is replaced. Every shard reads the
// whole file in parallel, on a fiber of its own thread, through helio's file reads, and
// decodes only the keys it owns (skipping the others' values): values are built in the
// heap of the thread that owns them, and the threads keep serving connections meanwhile
// (which answer -LOADING at start-up). Fails on a missing, truncated or corrupt file
// (checksum included) with the loader's reason, or with kCancelled when
// `progress->cancel` was set; the shards may then hold part of it.
// REQUIRES: not on a shard thread's dispatcher (it waits for the shards).
// With `replace` false, a key that exists already fails the load (DEBUG RELOAD NOFLUSH
// without MERGE), as a duplicated key does in Redis.
absl::Status LoadSnapshot(const std::string& path, LoadResult* result, bool replace = true,
                          LoadProgress* progress = nullptr);

}  // namespace damselfly
