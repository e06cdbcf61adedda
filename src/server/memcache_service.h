// MemcacheService: the pipeline behind --memcached_port connections, the memcached
// counterpart of Service (main_service.h).
//
// For each command of a pipelined batch, on the connection's fiber:
//  - commands without keys (version, stats, flush_all, ...) run right here;
//  - keyed commands run on their key's shard: inline when the connection shares the
//    thread, else after one hop, with consecutive commands for the same shard squashed
//    into one hop (as Service does for RESP);
//  - a get/gets/gat/gats of several keys runs in rounds of up to 32 keys: a round whose
//    keys share a shard is one hop; otherwise the round is a transaction (atomic, like
//    MGET) whose hop visits each of its shards once, all in parallel, and the items are
//    written in key order. The output is flushed between rounds when it piles up.
//  - keys a transaction (MULTI/EXEC, MSET, ...) has locked are waited for: the command
//    then runs as a one-shard transaction behind it, as RESP commands do.
// Replies are appended to the connection's output and flushed when they pile up.
//
// Thread-safety: DispatchMemcache runs on connection fibers of every thread.
#pragma once

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "helio/io/proactor_pool.h"
#include "src/facade/memcache_connection.h"
#include "src/server/engine_shard.h"

namespace damselfly {

class MemcacheService final : public facade::MemcacheServiceInterface {
 public:
  explicit MemcacheService(helio::io::ProactorPool* pool) : pool_(pool) {}

  void DispatchMemcache(absl::Span<const facade::MemcacheCommand> commands,
                        facade::MemcacheContext* cntx) override;
  void OnMemcacheOpen(facade::MemcacheContext* cntx) override;
  void OnMemcacheClose(facade::MemcacheContext* cntx) override;
  void OnMemcacheAuth(bool success) override;

 private:
  // Commands without keys.
  void RunHere(const facade::MemcacheCommand& command, facade::MemcacheContext* cntx);
  // Runs `run` (every key on `shard`) there; returns how many ran (fewer when the output
  // filled up, or when a transaction locks the next command's key: then *locked).
  size_t RunOnShard(uint16_t shard, absl::Span<const facade::MemcacheCommand> run,
                    facade::MemcacheContext* cntx, bool* locked);
  // Whether keys [begin, end) of `command` are free of transaction locks on `shard`,
  // this thread's, which holds them all. Shard thread.
  static bool KeysFree(EngineShard* shard, const facade::MemcacheCommand& command, size_t begin,
                       size_t end);
  // Runs `hop` on the shards of keys [begin, end) of `command` inside a transaction that
  // locks them, once the transactions ahead of it are done (VLL, transaction.h): a
  // memcache client never sees a MULTI/EXEC or MSET half done. Connection fiber.
  void RunAsTransaction(const facade::MemcacheCommand& command, size_t begin, size_t end,
                        absl::FunctionRef<void(EngineShard*)> hop);
  // A retrieval of zero or several keys; false when the connection failed.
  bool RunRetrieval(const facade::MemcacheCommand& command, facade::MemcacheContext* cntx);
  // Keys [begin, end) (at most 32) of a retrieval, spread over several shards; atomic.
  void FetchAcrossShards(const facade::MemcacheCommand& command, size_t begin, size_t end,
                         facade::MemcacheContext* cntx);
  void FlushAll(int64_t delay);
  std::string Stats();

  helio::io::ProactorPool* pool_;
};

}  // namespace damselfly
