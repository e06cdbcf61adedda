#include "src/server/standalone_family.h"

#include <cstdint>
#include <optional>
#include <string_view>

#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/replica.h"
#include "src/server/replication.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr char kClusterDisabledErr[] = "ERR This instance has cluster support disabled";
constexpr char kNoModulesErr[] = "ERR damselfly does not load modules";

// REPLICAOF / SLAVEOF host port | NO ONE (replica.h)
void CmdReplicaOf(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (ArgIs(args[1], "NO") && ArgIs(args[2], "ONE")) {
    StopReplicaOf();
    return rb->SendOk();
  }
  if (IsReplica(cntx)) return rb->SendError("ERR Command is not valid when client is a replica.");
  std::optional<int64_t> port = ParseInt64(args[2]);
  if (!port || *port < 0 || *port > 65535) return rb->SendError("ERR Invalid master port");
  if (!StartReplicaOf(args[1], uint16_t(*port))) {
    return rb->SendSimpleString("OK Already connected to specified master");
  }
  rb->SendOk();
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]: parsed as Redis
// parses it; a master-only server has no failover to coordinate.
void CmdFailover(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() == 2 && ArgIs(args[1], "ABORT")) {
    return rb->SendError("ERR No failover in progress.");
  }
  bool has_timeout = false, has_target = false, force = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (ArgIs(args[i], "TIMEOUT") && i + 1 < args.size() && !has_timeout) {
      std::optional<int64_t> ms = ParseInt64(args[++i]);
      if (!ms) return rb->SendError(facade::kInvalidIntErr);
      if (*ms <= 0) return rb->SendError("ERR FAILOVER timeout must be greater than 0");
      has_timeout = true;
    } else if (ArgIs(args[i], "TO") && i + 2 < args.size() && !has_target) {
      if (!ParseInt64(args[i + 2])) return rb->SendError(facade::kInvalidIntErr);
      has_target = true;
      i += 2;
    } else if (ArgIs(args[i], "FORCE") && !force) {
      force = true;
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  if (GetReplicationStatus().replicas.empty()) {
    return rb->SendError("ERR FAILOVER requires connected replicas.");
  }
  rb->SendError("ERR damselfly cannot fail over: its replicas can only follow it");
}

// CLUSTER <subcommand>, READONLY, READWRITE, ASKING: cluster mode is off. The dispatcher
// has checked the subcommand and its arity first, as Redis's does.
void CmdClusterDisabled(CmdArgList, ConnectionContext* cntx) {
  cntx->reply_builder()->SendError(kClusterDisabledErr);
}

// MODULE LIST | LOAD | LOADEX | UNLOAD | HELP
void CmdModule(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];  // validated by the dispatcher
  if (ArgIs(sub, "LIST")) return rb->SendEmptyArray();
  if (ArgIs(sub, "HELP")) {
    static constexpr std::string_view kHelp[] = {
        "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and "
        "optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
        "HELP",
        "    Prints this help.",
    };
    return rb->SendSimpleStringArray(kHelp);
  }
  rb->SendError(kNoModulesErr);
}

}  // namespace

void StandaloneFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  constexpr uint32_t kAdmin = kCmdAdmin | kCmdNoScript;
  constexpr uint32_t kAclAdminCmd = kAclAdmin | kAclSlow | kAclDangerous;
  r.Add("REPLICAOF", 3, kAdmin | kCmdStale, kNoKeys, kAclAdminCmd, CmdReplicaOf);
  r.Add("SLAVEOF", 3, kAdmin | kCmdStale, kNoKeys, kAclAdminCmd, CmdReplicaOf);
  r.Add("FAILOVER", -1, kAdmin | kCmdStale, kNoKeys, kAclAdminCmd, CmdFailover);
  r.Add("READONLY", 1, kCmdLoading | kCmdStale | kCmdFast, kNoKeys, kAclFast | kAclConnection,
        CmdClusterDisabled);
  r.Add("READWRITE", 1, kCmdLoading | kCmdStale | kCmdFast, kNoKeys, kAclFast | kAclConnection,
        CmdClusterDisabled);
  r.Add("ASKING", 1, kCmdFast, kNoKeys, kAclFast | kAclConnection, CmdClusterDisabled);
  // Redis 7.0's subcommands and arities, so that a misspelt or short call gets the error
  // Redis gives before the one about cluster mode.
  r.Add("CLUSTER", -2, kCmdStale, kNoKeys, kAclSlow, CmdClusterDisabled,
        {{"ADDSLOTS", -3, kAclAdmin | kAclSlow | kAclDangerous},
         {"ADDSLOTSRANGE", -4, kAclAdmin | kAclSlow | kAclDangerous},
         {"BUMPEPOCH", 2, kAclAdmin | kAclSlow | kAclDangerous},
         {"COUNT-FAILURE-REPORTS", 3, kAclAdmin | kAclSlow | kAclDangerous},
         {"COUNTKEYSINSLOT", 3, kAclSlow},
         {"DELSLOTS", -3, kAclAdmin | kAclSlow | kAclDangerous},
         {"DELSLOTSRANGE", -4, kAclAdmin | kAclSlow | kAclDangerous},
         {"FAILOVER", -2, kAclAdmin | kAclSlow | kAclDangerous},
         {"FLUSHSLOTS", 2, kAclAdmin | kAclSlow | kAclDangerous},
         {"FORGET", 3, kAclAdmin | kAclSlow | kAclDangerous},
         {"GETKEYSINSLOT", 4, kAclSlow},
         {"HELP", 2, kAclSlow},
         {"INFO", 2, kAclSlow},
         {"KEYSLOT", 3, kAclSlow},
         {"LINKS", 2, kAclSlow},
         {"MEET", -4, kAclAdmin | kAclSlow | kAclDangerous},
         {"MYID", 2, kAclSlow},
         {"NODES", 2, kAclSlow},
         {"REPLICAS", 3, kAclAdmin | kAclSlow | kAclDangerous},
         {"REPLICATE", 3, kAclAdmin | kAclSlow | kAclDangerous},
         {"RESET", -2, kAclAdmin | kAclSlow | kAclDangerous},
         {"SAVECONFIG", 2, kAclAdmin | kAclSlow | kAclDangerous},
         {"SET-CONFIG-EPOCH", 3, kAclAdmin | kAclSlow | kAclDangerous},
         {"SETSLOT", -4, kAclAdmin | kAclSlow | kAclDangerous},
         {"SHARDS", 2, kAclSlow},
         {"SLAVES", 3, kAclAdmin | kAclSlow | kAclDangerous},
         {"SLOTS", 2, kAclSlow}});
  r.Add("MODULE", -2, kAdmin, kNoKeys, kAclSlow, CmdModule,
        {{"LIST", 2, kAclAdmin | kAclSlow | kAclDangerous},
         {"LOAD", -3, kAclAdmin | kAclSlow | kAclDangerous},
         {"LOADEX", -3, kAclAdmin | kAclSlow | kAclDangerous},
         {"UNLOAD", 3, kAclAdmin | kAclSlow | kAclDangerous},
         {"HELP", 2, kAclSlow}});
}

}  // namespace damselfly
