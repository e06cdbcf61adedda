#include "src/server/slowlog_family.h"

#include <algorithm>
#include <limits>

#include "helio/base/strings.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/command_accounting.h"
#include "src/server/engine_shard_set.h"
#include "src/server/server_state.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr int64_t kDefaultGetCount = 10;

// The newest `limit` entries of all threads, newest first.
std::vector<SlowLogEntry> CollectNewest(size_t limit) {
  std::vector<std::vector<SlowLogEntry>> per_thread(shard_set->pool()->size());
  shard_set->pool()->AwaitOnAll([&](unsigned index, helio::io::Proactor*) {
    const std::deque<SlowLogEntry>& log = ServerState::tlocal()->slowlog;
    size_t n = std::min(limit, log.size());
    per_thread[index].assign(log.begin(), log.begin() + n);
  });
  std::vector<SlowLogEntry> all;
  for (auto& entries : per_thread) {
    std::move(entries.begin(), entries.end(), std::back_inserter(all));
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.id > b.id; });
  if (all.size() > limit) all.resize(limit);
  return all;
}

void SlowlogGet(CmdArgList args, ReplyBuilder* rb) {
  if (args.size() > 3) {
    return rb->SendError(helio::StrCat("ERR unknown subcommand or wrong number of arguments for '",
                                       facade::AsCString(args[1]), "'. Try SLOWLOG HELP."));
  }
  int64_t count = kDefaultGetCount;
  if (args.size() == 3) {
    std::optional<int64_t> parsed = ParseInt64(args[2]);
    if (!parsed || *parsed < -1) return rb->SendError("ERR count should be greater than or equal to -1");
    count = *parsed;
  }
  size_t limit = size_t(SlowlogMaxLen());
  if (count >= 0) limit = std::min(limit, size_t(count));
  std::vector<SlowLogEntry> entries = CollectNewest(limit);
  rb->StartArray(entries.size());
  for (const SlowLogEntry& entry : entries) {
    rb->StartArray(6);
    rb->SendLong(entry.id);
    rb->SendLong(entry.unix_time_s);
    rb->SendLong(entry.duration_us);
    rb->SendBulkArray(entry.args);
    rb->SendBulk(entry.client_addr);
    rb->SendBulk(entry.client_name);
  }
}

void CmdSlowlog(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];  // validated by the dispatcher (see Register)
  if (ArgIs(sub, "GET")) return SlowlogGet(args, rb);
  if (ArgIs(sub, "LEN")) {
    return rb->SendLong(CollectNewest(size_t(SlowlogMaxLen())).size());
  }
  if (ArgIs(sub, "RESET")) {
    shard_set->pool()->AwaitOnAll(
        [](unsigned, helio::io::Proactor*) { ServerState::tlocal()->slowlog.clear(); });
    return rb->SendOk();
  }
  static constexpr std::string_view kHelp[] = {
      "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
      "HELP",
      "    Prints this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

}  // namespace

void SlowlogFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  registry->Add("SLOWLOG", -2, kCmdAdmin | kCmdLoading | kCmdStale, kNoKeys, kAclSlow, CmdSlowlog,
                {{"GET", -2, kAclAdmin | kAclSlow | kAclDangerous},
                 {"LEN", 2, kAclAdmin | kAclSlow | kAclDangerous},
                 {"RESET", 2, kAclAdmin | kAclSlow | kAclDangerous},
                 {"HELP", 2, kAclSlow}});
}

}  // namespace damselfly
