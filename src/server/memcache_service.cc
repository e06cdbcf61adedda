#include "src/server/memcache_service.h"

#include <sys/resource.h>
#include <unistd.h>

#include <vector>

#include "absl/container/inlined_vector.h"
#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/core/obj_malloc.h"
#include "src/server/engine_shard_set.h"
#include "src/server/memcache_family.h"

namespace damselfly {

using facade::MemcacheCommand;
using facade::MemcacheContext;
using Type = MemcacheCommand::Type;

namespace {

constexpr size_t kMaxSquashedRun = 64;  // as Service: bounds one connection's turn on a shard
const int64_t kStartTimeMs = helio::UnixTimeMs();

// The shard of every key of `command`, or nullopt when they span several.
std::optional<ShardId> ShardOfKeys(const MemcacheCommand& command) {
  ShardId shard = shard_set->ShardOf(command.key());
  for (size_t i = 1; i < command.keys.size(); ++i) {
    if (shard_set->ShardOf(command.keys[i]) != shard) return std::nullopt;
  }
  return shard;
}

std::string RusageSeconds(const timeval& tv) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec), static_cast<long>(tv.tv_usec));
  return buf;
}

}  // namespace

void MemcacheService::DispatchMemcache(absl::Span<const MemcacheCommand> commands,
                                       MemcacheContext* cntx) {
  size_t i = 0;
  while (i < commands.size() && !cntx->close_after_reply) {
    const MemcacheCommand& command = commands[i];
    if (!memcache::HasKeys(command.type)) {
      RunHere(command, cntx);
      ++i;
    } else if (command.keys.empty()) {  // gat/gats may name no key at all
      cntx->out().append("END\r\n");
      ++i;
    } else if (std::optional<ShardId> shard = ShardOfKeys(command)) {
      size_t end = i + 1;
      while (end < commands.size() && end - i < kMaxSquashedRun &&
             memcache::HasKeys(commands[end].type) && !commands[end].keys.empty() &&
             ShardOfKeys(commands[end]) == shard) {
        ++end;
      }
      i += RunOnShard(*shard, commands.subspan(i, end - i), cntx);
    } else {
      RunRetrievalAcrossShards(command, cntx);
      ++i;
    }
    if (cntx->out().size() > facade::ClientConnection::kFlushThresholdBytes && !cntx->Flush()) return;
  }
}

size_t MemcacheService::RunOnShard(uint16_t shard, absl::Span<const MemcacheCommand> run,
                                   MemcacheContext* cntx) {
  auto execute = [&] {
    size_t ran = 0;
    while (ran < run.size()) {
      memcache::RunOnShard(run[ran++], &cntx->out());
      if (cntx->out().size() > facade::ClientConnection::kFlushThresholdBytes) break;
    }
    return ran;
  };
  return shard_set->IsLocal(shard) ? execute() : shard_set->Await(shard, execute);
}

void MemcacheService::RunRetrievalAcrossShards(const MemcacheCommand& command,
                                               MemcacheContext* cntx) {
  // Each shard fetches its keys into `items`, all shards at once; the reply is then
  // written in key order. Values are copied out: a shard's table may change as soon as
  // its task ends.
  DCHECK(memcache::IsRetrieval(command.type));
  std::vector<memcache::FetchedItem> items(command.keys.size());
  std::vector<ShardId> shard_of(command.keys.size());
  absl::InlinedVector<bool, 16> involved(shard_set->size(), false);
  for (size_t k = 0; k < command.keys.size(); ++k) {
    shard_of[k] = shard_set->ShardOf(command.keys[k]);
    involved[shard_of[k]] = true;
  }
  shard_set->RunOnAll([&](EngineShard* shard) {
    ShardId id = shard->shard_id();
    if (!involved[id]) return;
    for (size_t k = 0; k < command.keys.size(); ++k) {
      if (shard_of[k] == id) memcache::FetchOnShard(command, k, &items[k]);
    }
  });
  for (size_t k = 0; k < items.size(); ++k) memcache::AppendFetched(command, k, items[k], &cntx->out());
  cntx->out().append("END\r\n");
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
    if (at_ms == 0) shard->db_slice().FlushDb(0);
  });
}

std::string MemcacheService::Stats() {
  McStats totals;
  std::vector<McStats> per_thread(pool_->size());
  pool_->AwaitOnAll(
      [&](unsigned index, helio::io::Proactor*) { per_thread[index] = McStats::tlocal(); });
  for (const McStats& stats : per_thread) totals.Add(stats);
  std::vector<size_t> items(shard_set->size()), bytes(shard_set->size());
  shard_set->RunOnAll([&](EngineShard* shard) {
    DbSlice& slice = shard->db_slice();
    items[shard->shard_id()] = slice.DbSize(0);
    bytes[shard->shard_id()] = slice.table_stats().table_bytes + core::ThreadObjHeapUsedBytes();
  });
  size_t curr_items = 0, used_bytes = 0;
  for (size_t n : items) curr_items += n;
  for (size_t n : bytes) used_bytes += n;

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
  stat("curr_connections", totals.curr_connections);
  stat("total_connections", totals.total_connections);
  stat("rejected_connections", 0);
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
  stat("limit_maxbytes", static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE));
  stat("threads", pool_->size());
  stat("bytes", used_bytes);
  stat("curr_items", curr_items);
  stat("total_items", totals.total_items);
  stat("evictions", 0);
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

}  // namespace damselfly
