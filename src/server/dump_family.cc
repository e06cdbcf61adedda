#include "src/server/dump_family.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/family_utils.h"
#include "src/server/journal.h"
#include "src/server/rdb_load.h"
#include "src/server/rdb_save.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr char kBusyKeyErr[] = "BUSYKEY Target key name already exists.";

void CmdDump(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  const PrimeValue* value = Slice().FindRead(cntx->db_index, args[1]);
  if (value == nullptr) return rb->SendNull();
  rb->SendBulk(MakeDumpPayload(*value));
}

struct RestoreOptions {
  bool replace = false;
  bool absttl = false;
  std::optional<int64_t> idle_s;
  std::optional<int64_t> freq;
};

// Parses RESTORE's options (args[4] on) as Redis does: IDLETIME and FREQ each need a
// value and exclude each other (the second is a syntax error). Returns the error text.
std::optional<std::string_view> ParseRestoreOptions(CmdArgList args, RestoreOptions* options) {
  for (size_t i = 4; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (ArgIs(args[i], "REPLACE")) {
      options->replace = true;
    } else if (ArgIs(args[i], "ABSTTL")) {
      options->absttl = true;
    } else if (ArgIs(args[i], "IDLETIME") && has_value && !options->freq) {
      options->idle_s = ParseInt64(args[++i]);
      if (!options->idle_s) return facade::kInvalidIntErr;
      if (*options->idle_s < 0) return "ERR Invalid IDLETIME value, must be >= 0";
    } else if (ArgIs(args[i], "FREQ") && has_value && !options->idle_s) {
      options->freq = ParseInt64(args[++i]);
      if (!options->freq) return facade::kInvalidIntErr;
      if (*options->freq < 0 || *options->freq > 255) {
        return "ERR Invalid FREQ value, must be >= 0 and <= 255";
      }
    } else {
      return facade::kSyntaxErr;
    }
  }
  return std::nullopt;
}

// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f], with Redis's checks
// in Redis's order: options, existing key, TTL, payload.
void CmdRestore(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  const DbIndex db = cntx->db_index;
  std::string_view key = args[1];
  RestoreOptions options;
  if (std::optional<std::string_view> error = ParseRestoreOptions(args, &options)) {
    return rb->SendError(*error);
  }
  if (!options.replace && Slice().Find(db, key) != nullptr) return rb->SendError(kBusyKeyErr);
  std::optional<int64_t> ttl = ParseInt64(args[2]);
  if (!ttl) return rb->SendError(facade::kInvalidIntErr);
  if (*ttl < 0) return rb->SendError("ERR Invalid TTL value, must be >= 0");

  PrimeValue value;
  std::string error;
  if (!DecodeDumpPayload(args[3], &value, &error)) return rb->SendError(error);

  const int64_t now_ms = UnixTimeMs();
  const int64_t deadline_ms = *ttl == 0 ? 0 : options.absttl ? *ttl : *ttl + now_ms;
  if (deadline_ms != 0 && deadline_ms <= now_ms) {
    // Already expired: the key is not created, and a replaced one is deleted.
    if (options.replace) Slice().Erase(db, key);
    return rb->SendOk();
  }
  Slice().PutRestored(db, key, std::move(value), deadline_ms, "restore");
  if (options.idle_s)
    Slice().SetIdleSeconds(db, key, uint32_t(std::min<int64_t>(*options.idle_s, UINT32_MAX)));
  if (options.freq) Slice().SetLfuCounter(db, key, uint8_t(*options.freq));
  // Replicas get the command as sent, with a relative TTL made absolute (as Redis sends
  // it): the payload as it came, not one made again from the value.
  if (ShardJournal::recording() != nullptr) {
    std::vector<std::string_view> command(args.begin(), args.end());
    const std::string deadline = absl::StrCat(deadline_ms);
    if (deadline_ms != 0 && !options.absttl) {
      command[2] = deadline;
      command.push_back("ABSTTL");
    }
    ShardJournal::RewriteAs(db, facade::CmdArgList(command.data(), command.size()));
  }
  rb->SendOk();
}

}  // namespace

void DumpFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  r.Add("DUMP", 2, kCmdReadOnly, Keys(1).WithFlags(kKeyRO | kKeyAccess),
        kAclKeyspace | kAclRead | kAclSlow, CmdDump);
  r.Add("RESTORE", -4, kCmdWrite | kCmdDenyOom, Keys(1).WithFlags(kKeyOW | kKeyUpdate),
        kAclKeyspace | kAclWrite | kAclSlow | kAclDangerous, CmdRestore);
}

}  // namespace damselfly
