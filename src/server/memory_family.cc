#include "src/server/memory_family.h"

#include <mimalloc.h>

#include <algorithm>
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/aof.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard_set.h"
#include "src/server/function_family.h"
#include "src/server/replication.h"
#include "src/server/script_family.h"
#include "src/server/server_stats.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// What MEMORY STATS and DOCTOR report, Redis's redisMemOverhead with damselfly's figures.
struct MemoryOverhead {
  uint64_t peak = 0, used = 0, rss = 0, backlog = 0, aof_buffer = 0, overhead = 0, keys = 0;
  std::vector<std::pair<size_t, std::pair<uint64_t, uint64_t>>> dbs;  // db, main, expires
  size_t cached_scripts = 0;

  uint64_t dataset() const { return used - overhead; }
  double Ratio(uint64_t a, uint64_t b) const { return b ? double(a) / double(b) : 0.0; }
};

MemoryOverhead GatherOverhead() {
  StatsSnapshot stats = GatherStats();
  MemoryOverhead m;
  m.used = stats.total.used_memory();
  m.peak = UpdateUsedMemoryPeak(m.used);
  m.rss = RssBytes();
  m.backlog = uint64_t(std::max<int64_t>(GetReplicationStatus().backlog_histlen, 0));
  m.aof_buffer = AofBufferedBytes();
  m.overhead = std::min<uint64_t>(stats.total.table_bytes, m.used);  // as INFO's
  m.keys = stats.total.keys;
  for (size_t db = 0; db < stats.keyspace.size(); ++db) {
    if (stats.keyspace[db].first != 0) m.dbs.push_back({db, stats.db_tables[db]});
  }
  m.cached_scripts = ScriptFamily::CachedScripts();
  return m;
}

void MemoryStats(ReplyBuilder* rb) {
  const MemoryOverhead m = GatherOverhead();
  rb->StartMap(27 + m.dbs.size());
  auto field = [rb](std::string_view name, uint64_t value) {
    rb->SendBulk(name);
    rb->SendLong(int64_t(value));
  };
  auto ratio = [rb](std::string_view name, double value) {
    rb->SendBulk(name);
    rb->SendDouble(value);
  };
  field("peak.allocated", m.peak);
  field("total.allocated", m.used);
  field("startup.allocated", 0);
  field("replication.backlog", m.backlog);
  field("clients.slaves", 0);
  field("clients.normal", 0);
  field("cluster.links", 0);
  field("aof.buffer", m.aof_buffer);
  field("lua.caches", 0);
  field("functions.caches", 0);
  for (const auto& [db, tables] : m.dbs) {
    rb->SendBulk(helio::StrCat("db.", db));
    rb->StartMap(3);
    field("overhead.hashtable.main", tables.first);
    field("overhead.hashtable.expires", tables.second);
    field("overhead.hashtable.slot-to-keys", 0);  // cluster mode's
  }
  field("overhead.total", m.overhead);
  field("keys.count", m.keys);
  field("keys.bytes-per-key", m.keys ? m.used / m.keys : 0);
  field("dataset.bytes", m.dataset());
  ratio("dataset.percentage", 100 * m.Ratio(m.dataset(), m.used));
  ratio("peak.percentage", 100 * m.Ratio(m.used, m.peak));
  field("allocator.allocated", m.used);
  field("allocator.active", m.used);
  field("allocator.resident", m.rss);
  ratio("allocator-fragmentation.ratio", 1.0);
  field("allocator-fragmentation.bytes", 0);
  ratio("allocator-rss.ratio", m.Ratio(m.rss, m.used));
  field("allocator-rss.bytes", m.rss > m.used ? m.rss - m.used : 0);
  ratio("rss-overhead.ratio", 1.0);
  field("rss-overhead.bytes", 0);
  ratio("fragmentation", m.Ratio(m.rss, m.used));
  field("fragmentation.bytes", m.rss > m.used ? m.rss - m.used : 0);
}

// Redis's report (getMemoryDoctorReport) on the conditions damselfly can see: a past peak,
// RSS well over what the shards hold, many cached scripts.
std::string MemoryDoctor() {
  const MemoryOverhead m = GatherOverhead();
  const uint64_t excess = m.rss > m.used ? m.rss - m.used : 0;
  const bool empty = m.used < (5 << 20);
  const bool big_peak = !empty && m.Ratio(m.peak, m.used) > 1.5;
  const bool high_rss = !empty && m.Ratio(m.rss, m.used) > 1.4 && excess > (10 << 20);
  const bool high_allocator_rss = !empty && m.Ratio(m.rss, m.used) > 1.1 && excess > (10 << 20);
  const bool many_scripts = !empty && m.cached_scripts > 1000;
  if (empty) {
    return "Hi Sam, this instance is empty or is using very little memory, my issues detector "
           "can't be used in these conditions. Please, leave for your mission on Earth and "
           "fill it with some data. The new Sam and I will be back to our programming as soon "
           "as I finished rebooting.\n";
  }
  if (!big_peak && !high_rss && !high_allocator_rss && !many_scripts) {
    return "Hi Sam, I can't find any memory issue in your instance. I can only account for "
           "what occurs on this base.\n";
  }
  std::string s = "Sam, I detected a few issues in this Redis instance memory implants:\n\n";
  if (big_peak) {
    s += " * Peak memory: In the past this instance used more than 150% the memory that is "
         "currently using. The allocator is normally not able to release memory after a "
         "peak, so you can expect to see a big fragmentation ratio, however this is actually "
         "harmless and is only due to the memory peak, and if the Redis instance Resident Set "
         "Size (RSS) is currently bigger than expected, the memory will be used as soon as "
         "you fill the Redis instance with more data. If the memory peak was only occasional "
         "and you want to try to reclaim memory, please try the MEMORY PURGE command, "
         "otherwise the only other option is to shutdown and restart the instance.\n\n";
  }
  if (high_rss) {
    s += " * High total RSS: This instance has a memory fragmentation and RSS overhead "
         "greater than 1.4 (this means that the Resident Set Size of the Redis process is "
         "much larger than the sum of the logical allocations Redis performed). This problem "
         "is usually due either to a large peak memory (check if there is a peak memory "
         "entry above in the report) or may result from a workload that causes the "
         "allocator to fragment memory a lot. If the problem is a large peak memory, then "
         "there is no issue. Otherwise, make sure you are using the Jemalloc allocator and "
         "not the default libc malloc. Note: The currently used allocator is \"mimalloc\".\n\n";
  }
  if (high_allocator_rss) {
    s += " * High allocator RSS overhead: This instance has an RSS memory overhead is greater "
         "than 1.1 (this means that the Resident Set Size of the allocator is much larger "
         "than the sum what the allocator actually holds). This problem is usually due to a "
         "large peak memory (check if there is a peak memory entry above in the report), you "
         "can try the MEMORY PURGE command to reclaim it.\n\n";
  }
  if (many_scripts) {
    s += " * Many scripts: There seem to be many cached scripts in this instance (more than "
         "1000). This may be because scripts are generated and `EVAL`ed, instead of being "
         "parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless "
         "`SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming "
         "most of your memory.\n\n";
  }
  s += "I'm here to keep you safe, Sam. I want to help you.\n";
  return s;
}

// mimalloc's statistics report, as MALLOC-STATS gives jemalloc's.
std::string MallocStats() {
  std::string out;
  mi_stats_print_out(
      [](const char* msg, void* arg) { static_cast<std::string*>(arg)->append(msg); }, &out);
  return out;
}

void CmdMemory(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  const std::string_view sub = args[1];  // validated by the dispatcher
  if (ArgIs(sub, "STATS")) return MemoryStats(rb);
  if (ArgIs(sub, "DOCTOR")) return rb->SendVerbatim(MemoryDoctor());
  if (ArgIs(sub, "MALLOC-STATS")) return rb->SendVerbatim(MallocStats());
  if (ArgIs(sub, "PURGE")) {
    // Every thread's heaps give their free pages back to the system.
    shard_set->pool()->AwaitOnAll([](unsigned, helio::io::Proactor*) { mi_collect(true); });
    return rb->SendOk();
  }
  if (ArgIs(sub, "HELP")) {
    static constexpr std::string_view kHelp[] = {
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP",
        "    Prints this help.",
    };
    return rb->SendSimpleStringArray(kHelp);
  }
  // USAGE key [SAMPLES count], on the key's shard.
  if (args.size() != 3 && !(args.size() == 5 && ArgIs(args[3], "SAMPLES"))) {
    return rb->SendError(facade::kSyntaxErr);
  }
  if (args.size() == 5 && !ParseInt64(args[4])) return rb->SendError(facade::kInvalidIntErr);
  size_t bytes = EngineShard::tlocal()->db_slice().MemoryUsage(cntx->db_index, args[2]);
  bytes ? rb->SendLong(bytes) : rb->SendNull();
}

}  // namespace

void MemoryFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  registry->Add("MEMORY", -2, kCmdReadOnly, Keys(2), kAclSlow, CmdMemory,
                {{"USAGE", -3, kAclRead | kAclSlow},
                 {"STATS", 2, kAclSlow},
                 {"DOCTOR", 2, kAclSlow},
                 {"PURGE", 2, kAclSlow},
                 {"MALLOC-STATS", 2, kAclSlow},
                 {"HELP", 2, kAclSlow}});
}

}  // namespace damselfly
