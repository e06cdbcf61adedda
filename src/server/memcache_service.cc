#include "absl/cleanup/cleanup.h"
#include "src/server/aof.h"
#include "src/server/tracking.h"
#include "src/server/memcache_service.h"

#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/facade/client_admission.h"
#include "src/server/cgroup_limits.h"
#include "src/server/config_family.h"
#include "src/server/engine_shard_set.h"
#include "src/server/lookup_prefetcher.h"
#include "src/server/memcache_family.h"
#include "src/server/persistence_family.h"
#include "src/server/server_state.h"
#include "src/server/transaction.h"

namespace damselfly {

using facade::MemcacheCommand;
using facade::MemcacheContext;
using Type = MemcacheCommand::Type;

namespace {

constexpr size_t kMaxSquashedRun = 64;  // as Service: bounds one connection's turn on a shard
const int64_t kStartTimeMs = helio::UnixTimeMs();

// A retrieval runs in rounds of this many keys, the output flushed between rounds when
// it piles up: a get of thousands of large values must not be held in memory at once.
constexpr size_t kKeysPerRound = 32;

// The shard of keys [begin, end) of `command`, or nullopt when they span several.
std::optional<ShardId> ShardOfKeys(const MemcacheCommand& command, size_t begin, size_t end) {
  ShardId shard = shard_set->ShardOf(command.keys[begin]);
  for (size_t i = begin + 1; i < end; ++i) {
    if (shard_set->ShardOf(command.keys[i]) != shard) return std::nullopt;
  }
  return shard;
}

// A command the dispatcher may squash with its neighbours: one key (and so one shard).
bool IsSingleKey(const MemcacheCommand& command) {
  return memcache::HasKeys(command.type) && command.keys.size() == 1;
}

std::string RusageSeconds(const timeval& tv) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec), static_cast<long>(tv.tv_usec));
  return buf;
}

}  // namespace

void MemcacheService::DispatchMemcache(absl::Span<const MemcacheCommand> commands,
                                       MemcacheContext* cntx) {
  // Squashed commands are not checked one by one: while over maxmemory, stores are not
  // squashed.
  const bool over_maxmemory = OverMaxMemory();
  // Counted for INFO total_commands_processed and /metrics, as RESP commands are: every
  // command of the batch, whether it succeeds or not.
  ServerState::tlocal()->stats.commands_processed += commands.size();
  // While the AOF holds replies (aof.h: appendfsync always, or a backlog), those of a
  // batch that may have written leave once the AOF caught up. Any command but get and
  // gets may write.
  bool may_have_written = false;
  if (AofHoldsReplies()) [[unlikely]] {
    for (const MemcacheCommand& command : commands) {
      if (command.type != Type::kGet && command.type != Type::kGets) may_have_written = true;
    }
  }
  absl::Cleanup durable = [&] {
    if (may_have_written) AwaitAofWrites();
  };
  size_t i = 0;
  while (i < commands.size() && !cntx->close_after_reply) {
    const MemcacheCommand& command = commands[i];
    if (Loading() && (memcache::HasKeys(command.type) || command.type == Type::kFlushAll))
        [[unlikely]] {
      // The start-up load runs (persistence_family.h): as RESP answers -LOADING.
      if (!command.noreply) cntx->out().append("SERVER_ERROR loading the dataset in memory\r\n");
      ++i;
    } else if (!memcache::HasKeys(command.type)) {
      RunHere(command, cntx);
      ++i;
    } else if (memcache::AddsData(command.type) && OverMaxMemory()) {
      // memcached's reply when it cannot allocate the item; noreply hides it too.
      if (!command.noreply) cntx->out().append("SERVER_ERROR out of memory storing object\r\n");
      ++i;
    } else if (IsSingleKey(command)) {
      ShardId shard = shard_set->ShardOf(command.key());
      size_t end = i + 1;
      while (end < commands.size() && end - i < kMaxSquashedRun && IsSingleKey(commands[end]) &&
             shard_set->ShardOf(commands[end].key()) == shard &&
             !(memcache::AddsData(commands[end].type) && over_maxmemory)) {
        ++end;
      }
      bool locked = false;
      i += RunOnShard(shard, commands.subspan(i, end - i), cntx, &locked);
      if (locked) {  // commands[i] waits for the transactions that lock its key
        RunAsTransaction(commands[i], 0, 1, [&](EngineShard*) {
          memcache::RunOnShard(commands[i], &cntx->out());
        });
        ++i;
      }
    } else {  // get, gets, gat or gats of zero or several keys
      if (!RunRetrieval(command, cntx)) return;
      ++i;
    }
    if (cntx->out().size() > facade::ClientConnection::kFlushThresholdBytes) {
      if (may_have_written) AwaitAofWrites();
      if (!cntx->Flush()) return;
    }
  }
}

size_t MemcacheService::RunOnShard(uint16_t shard, absl::Span<const MemcacheCommand> run,
                                   MemcacheContext* cntx, bool* locked) {
  auto execute = [&] {
    EngineShard* engine_shard = EngineShard::tlocal();
    LookupPrefetcher prefetcher(engine_shard->db_slice(), memcache::kDb, run.size(),
                                [&](size_t i) { return run[i].key(); });
    size_t ran = 0;
    while (ran < run.size()) {
      prefetcher.Before(ran);
      if (!KeysFree(engine_shard, run[ran], 0, 1)) {
        *locked = true;
        break;
      }
      memcache::RunOnShard(run[ran++], &cntx->out());
      if (cntx->out().size() > facade::ClientConnection::kFlushThresholdBytes) break;
    }
    return ran;
  };
  return shard_set->IsLocal(shard) ? execute() : shard_set->Await(shard, execute);
}

bool MemcacheService::KeysFree(EngineShard* shard, const MemcacheCommand& command, size_t begin,
                               size_t end) {
  const ShardTxQueue& queue = shard->tx_queue();
  if (queue.no_locks()) return true;
  const LockMode mode = memcache::ReadsOnly(command) ? LockMode::kShared : LockMode::kExclusive;
  for (size_t k = begin; k < end; ++k) {
    if (!queue.IsFree(command.keys[k], mode)) return false;
  }
  return true;
}

void MemcacheService::RunAsTransaction(const MemcacheCommand& command, size_t begin, size_t end,
                                       absl::FunctionRef<void(EngineShard*)> hop) {
  Transaction tx(memcache::kDb);
  const LockMode mode = memcache::ReadsOnly(command) ? LockMode::kShared : LockMode::kExclusive;
  for (size_t k = begin; k < end; ++k) tx.AddLock(command.keys[k], mode);
  tx.Schedule();
  tx.ExecuteOnAll([&](Transaction*, EngineShard* shard) { hop(shard); }, true);
}

bool MemcacheService::RunRetrieval(const MemcacheCommand& command, MemcacheContext* cntx) {
  DCHECK(memcache::IsRetrieval(command.type));
  for (size_t begin = 0; begin < command.keys.size(); begin += kKeysPerRound) {
    size_t end = std::min(command.keys.size(), begin + kKeysPerRound);
    if (std::optional<ShardId> shard = ShardOfKeys(command, begin, end)) {
      auto append = [&] {
        if (!KeysFree(EngineShard::tlocal(), command, begin, end)) return false;
        memcache::AppendRetrieved(command, begin, end, &cntx->out());
        return true;
      };
      if (!(shard_set->IsLocal(*shard) ? append() : shard_set->Await(*shard, append))) {
        RunAsTransaction(command, begin, end, [&](EngineShard*) {
          memcache::AppendRetrieved(command, begin, end, &cntx->out());
        });
      }
    } else {
      FetchAcrossShards(command, begin, end, cntx);
    }
    if (cntx->out().size() > facade::ClientConnection::kFlushThresholdBytes && !cntx->Flush()) {
      return false;
    }
  }
  cntx->out().append("END\r\n");
  return true;
}

void MemcacheService::FetchAcrossShards(const MemcacheCommand& command, size_t begin, size_t end,
                                        MemcacheContext* cntx) {
  // Each shard fetches its keys, all shards at once, inside one transaction, so the
  // round is atomic like an MGET; the items are then written in key order. Values are
  // copied out: a shard's table may change as soon as its hop ends.
  std::array<memcache::FetchedItem, kKeysPerRound> items;
  std::array<ShardId, kKeysPerRound> shard_of;
  for (size_t k = begin; k < end; ++k) shard_of[k - begin] = shard_set->ShardOf(command.keys[k]);
  RunAsTransaction(command, begin, end, [&](EngineShard* shard) {
    for (size_t k = begin; k < end; ++k) {
      if (shard_of[k - begin] == shard->shard_id()) memcache::FetchOnShard(command, k, &items[k - begin]);
    }
  });
  for (size_t k = begin; k < end; ++k) {
    memcache::AppendFetched(command, k, items[k - begin], &cntx->out());
  }
}

void MemcacheService::RunHere(const MemcacheCommand& command, MemcacheContext* cntx) {
  std::string& out = cntx->out();
  switch (command.type) {
    case Type::kVersion:
      helio::StrAppend(&out, "VERSION ", kMemcachedCompatVersion, "\r\n");
      return;
    case Type::kVerbosity:
      if (!command.noreply) out.append("OK\r\n");
      return;
    case Type::kQuit:
      cntx->close_after_reply = true;
      return;
    case Type::kMetaNoop:
      out.append("MN\r\n");
      return;
    case Type::kFlushAll:
      FlushAll(command.delay);
      if (!command.noreply) out.append("OK\r\n");
      return;
    case Type::kStats:
      if (command.keys.empty()) {
        out.append(Stats());
      } else if (command.keys.size() == 1 && command.keys[0] == "reset") {
        pool_->AwaitOnAll([](unsigned, helio::io::Proactor*) {
          McStats& stats = McStats::tlocal();
          stats = McStats{.curr_connections = stats.curr_connections,
                          .total_connections = stats.total_connections};
        });
        facade::ClientAdmission::ResetRejected(facade::ClientProtocol::kMemcache);
        out.append("RESET\r\n");
      } else if (command.keys[0] == "items" || command.keys[0] == "slabs" ||
                 command.keys[0] == "sizes" || command.keys[0] == "conns") {
        out.append("END\r\n");  // no slab allocator, nothing to list
      } else {
        out.append("ERROR\r\n");
      }
      return;
    default:
      LOG(DFATAL) << "keyed command ran here: " << facade::MemcacheCommandName(command.type);
  }
}

void MemcacheService::FlushAll(int64_t delay) {
  // The same time rules as an item's exptime; a newer flush_all replaces a pending one.
  const int64_t now_ms = helio::UnixTimeMs();
  const int64_t seconds = static_cast<int32_t>(static_cast<uint32_t>(delay));
  int64_t at_ms = seconds <= 0 ? 0 : seconds > 2592000 ? seconds * 1000 : now_ms + seconds * 1000;
  if (at_ms <= now_ms) at_ms = 0;
  shard_set->RunOnAll([at_ms](EngineShard* shard) {
    ++McStats::tlocal().cmd_flush;
    shard->ScheduleFlush(0, at_ms);
    if (at_ms == 0) shard->db_slice().FlushDb(0, /*lazily=*/true);
  });
  if (at_ms == 0) TrackingFlushAll(nullptr);
}

std::string MemcacheService::Stats() {
  McStats totals;
  std::vector<McStats> per_thread(pool_->size());
  pool_->AwaitOnAll(
      [&](unsigned index, helio::io::Proactor*) { per_thread[index] = McStats::tlocal(); });
  for (const McStats& stats : per_thread) totals.Add(stats);
  std::vector<size_t> items(shard_set->size()), bytes(shard_set->size()), evicted(shard_set->size());
  shard_set->RunOnAll([&](EngineShard* shard) {
    DbSlice& slice = shard->db_slice();
    items[shard->shard_id()] = slice.DbSize(0);
    bytes[shard->shard_id()] = shard->UsedMemory();
    evicted[shard->shard_id()] = slice.stats().evicted_keys;
  });
  size_t curr_items = 0, used_bytes = 0, evictions = 0;
  for (size_t n : items) curr_items += n;
  for (size_t n : bytes) used_bytes += n;
  for (size_t n : evicted) evictions += n;

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const int64_t now_ms = helio::UnixTimeMs();
  std::string out;
  auto stat = [&out](std::string_view name, const auto& value) {
    helio::StrAppend(&out, "STAT ", name, " ", value, "\r\n");
  };
  stat("pid", getpid());
  stat("uptime", (now_ms - kStartTimeMs) / 1000);
  stat("time", now_ms / 1000);
  stat("version", kMemcachedCompatVersion);
  stat("pointer_size", 64);
  stat("rusage_user", RusageSeconds(usage.ru_utime));
  stat("rusage_system", RusageSeconds(usage.ru_stime));
  stat("max_connections", facade::ClientAdmission::MaxClients());
  stat("curr_connections", totals.curr_connections);
  stat("total_connections", totals.total_connections);
  stat("rejected_connections",
       facade::ClientAdmission::Rejected(facade::ClientProtocol::kMemcache));
  stat("cmd_get", totals.cmd_get);
  stat("cmd_set", totals.cmd_set);
  stat("cmd_flush", totals.cmd_flush);
  stat("cmd_touch", totals.cmd_touch);
  stat("get_hits", totals.get_hits);
  stat("get_misses", totals.get_misses);
  stat("get_expired", totals.get_expired);
  stat("get_flushed", 0);
  stat("delete_misses", totals.delete_misses);
  stat("delete_hits", totals.delete_hits);
  stat("incr_misses", totals.incr_misses);
  stat("incr_hits", totals.incr_hits);
  stat("decr_misses", totals.decr_misses);
  stat("decr_hits", totals.decr_hits);
  stat("cas_misses", totals.cas_misses);
  stat("cas_hits", totals.cas_hits);
  stat("cas_badval", totals.cas_badval);
  stat("touch_hits", totals.touch_hits);
  stat("touch_misses", totals.touch_misses);
  stat("auth_cmds", totals.auth_cmds);
  stat("auth_errors", totals.auth_errors);
  // memcached's -m: the memory the store may use, here maxmemory (which defaults to 90% of
  // a container's limit), or the machine's memory when it is 0 (no limit).
  stat("limit_maxbytes", MaxMemoryBytes() ? MaxMemoryBytes() : PhysicalMemory());
  stat("threads", pool_->size());
  stat("bytes", used_bytes);
  stat("curr_items", curr_items);
  stat("total_items", totals.total_items);
  stat("evictions", evictions);
  stat("reclaimed", 0);
  out.append("END\r\n");
  return out;
}

void MemcacheService::OnMemcacheOpen(MemcacheContext*) {
  McStats& stats = McStats::tlocal();
  ++stats.curr_connections;
  ++stats.total_connections;
}

void MemcacheService::OnMemcacheClose(MemcacheContext*) { --McStats::tlocal().curr_connections; }

void MemcacheService::OnMemcacheAuth(bool success) {
  McStats& stats = McStats::tlocal();
  ++stats.auth_cmds;
  if (!success) ++stats.auth_errors;
}

}  // namespace damselfly
