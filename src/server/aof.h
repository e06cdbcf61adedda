// The append-only file: Redis 7.0's multi-part AOF (appendonly yes), which Redis 7.0
// loads and which loads Redis 7.0's.
//
// The files live in dir/appenddirname: a base (a snapshot, RDB), incremental files of
// commands, and the manifest that lists them (core/aof_manifest.h). A server starting
// with appendonly yes loads the base and then runs the incremental files' commands, in
// the loading state.
//
// The AOF is the replication stream written to disk: it follows the stream as a replica
// on this machine would (replication.h: StreamFollower), so every write reaches it as
// it reaches replicas (the same rewrites: BLPOP as LPOP, XADD with its ID, expirations
// as DEL, transactions in MULTI/EXEC), without the PINGs. A rewrite (BGREWRITEAOF, the
// auto-aof-rewrite-* rules, or turning the AOF on) is a replica's full resync: a
// snapshot whose cut opens a new incremental file, so the stream after the cut goes to
// the new file and everything before it is in the snapshot. When the snapshot is
// complete it becomes the base, and the manifest, replaced atomically, drops the older
// files, which are deleted. A crash at any point leaves a manifest that lists files
// whose replay makes the dataset up to the last write that reached the disk.
//
// Writes, fsyncs, manifests and deletions run on a thread of their own, in the order
// they were asked, so that proactor 0 (which merges the stream) never waits for a disk.
// appendfsync everysec fsyncs the incremental file once a second, no leaves it to the
// kernel; always fsyncs what was written at once, and a client whose batch of commands
// wrote waits for that before its replies leave (AwaitAofWrites: many clients' writes
// share one fsync). With everysec or no, a disk slower than the writes holds the replies
// of clients that wrote while more than aof-buffer-limit bytes wait for it, so the
// buffer stays bounded.
//
// Loading tolerates what a crash leaves: an incremental file whose last command is
// incomplete (aof-load-truncated yes: the file is cut before it, as Redis does, and a
// MULTI without its EXEC is dropped).
//
// Differs from Redis: with appendonly yes and no AOF yet, a snapshot in dbfilename is
// loaded and becomes the AOF's first base (Redis starts empty); the base is always RDB
// (aof-use-rdb-preamble yes); with everysec or no, a write reaches the file just after
// its reply rather than before it (a kill -9 may lose the last milliseconds). A pre-7.0
// AOF (dir/appendfilename, one file, commands
// perhaps after an RDB preamble) is moved into the directory as the base, as Redis 7.0
// upgrades it.
//
// Thread-safety: the AOF's state belongs to proactor 0; the functions below may be
// called from any fiber (they hop there) unless they say otherwise.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/facade/command_registry.h"
#include "src/facade/service_interface.h"

namespace damselfly {

class AofFamily {
 public:
  // BGREWRITEAOF.
  static void Register(facade::CommandRegistry* registry);
};

// Once at start-up: the service the loaded commands go through.
void SetAofService(facade::ServiceInterface* service);

// Start-up, in dir, before the listeners: applies the flags; false (logged) when they
// are invalid.
bool ConfigureAof();
// Start-up: whether appendonly is on and an AOF's manifest exists (the load then reads
// it rather than dbfilename).
bool AofToLoad();
// Start-up, in the loading state: with appendonly on, loads the AOF (exits the process
// on one it cannot load, as Redis does) and returns true; false when there is none to
// load. Then, once whatever was loaded is in place, AofStart.
bool LoadAofAtStartup();
// Start-up, still in the loading state: with appendonly on, the AOF follows the writes
// from now on (after an AOF load, appending to its last incremental file; else after a
// rewrite of what is loaded).
void AofStart();
// Shutdown, before StopReplication: every write made is written and fsynced.
void StopAof();

// CONFIG: appendonly (yes starts a rewrite, no stops the AOF where it is), appendfsync
// (everysec or no), auto-aof-rewrite-percentage, auto-aof-rewrite-min-size,
// aof-load-truncated; appendfilename and appenddirname are read-only.
bool AofEnabled();
std::string SetAppendOnly(std::string_view value, bool apply);
std::string GetAppendFsync();
std::string SetAppendFsync(std::string_view value, bool apply);
int64_t AutoAofRewritePercentage();
void SetAutoAofRewritePercentage(int64_t percent);
int64_t AutoAofRewriteMinSize();
void SetAutoAofRewriteMinSize(int64_t bytes);
bool AofLoadTruncated();
void SetAofLoadTruncated(bool on);
std::string AppendFilename();
std::string AppendDirname();

// When a client's replies must wait for the AOF (the dispatchers call AwaitAofWrites
// before they flush a batch's replies that followed a write): with appendfsync always,
// always; otherwise while the writer has more than aof-buffer-limit bytes still to write
// (a disk slower than the writes). One relaxed load each, inline: the dispatchers ask once
// per batch.
namespace aof_internal {
inline std::atomic<bool> always{false};      // kept by aof.cc
inline std::atomic<bool> backlogged{false};  // likewise
}  // namespace aof_internal
inline bool AofAlways() { return aof_internal::always.load(std::memory_order_relaxed); }
inline bool AofBacklogged() { return aof_internal::backlogged.load(std::memory_order_relaxed); }
inline bool AofHoldsReplies() { return AofAlways() || AofBacklogged(); }
// Returns once the AOF caught up with the writes made so far on any shard (at once when
// the AOF is off): with appendfsync always, once they are written and fsynced (each
// shard's journal handed over, merged, written, fsynced with whatever else came
// meanwhile); otherwise once no more than aof-buffer-limit bytes wait for the disk.
// Fiber context.
void AwaitAofWrites();
// aof-buffer-limit (--aof_buffer_limit), in bytes.
uint64_t AofBufferLimit();
void SetAofBufferLimit(uint64_t bytes);

// INFO persistence's aof_* lines.
std::string AofInfo();
// Bytes of the stream waiting for the AOF's writer (0 when the AOF is off). Fiber context.
uint64_t AofBufferedBytes();

}  // namespace damselfly
