#include "src/server/connection_family.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <mutex>



#include "helio/base/spinlock.h"
#include "helio/base/strings.h"
#include "src/facade/error.h"
#include "src/facade/resp_connection.h"
#include "src/server/arg_parsing.h"
#include "src/server/db_slice.h"
#include "src/server/engine_shard_set.h"
#include "src/server/monitor.h"
#include "src/server/server_state.h"

DEFINE_string(requirepass, "", "Password clients must give with AUTH or HELLO (none: empty)");
DECLARE_uint32(dbnum);

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::CommandHandler;
using facade::CommandId;
using facade::ConnectionContext;
using facade::ReplyBuilder;
using facade::RespConnection;
using facade::RespVersion;

// The password in force: --requirepass until CONFIG SET requirepass changes it.
struct PasswordState {
  helio::SpinLock lock;
  std::string value = FLAGS_requirepass;  // first used after the flags were parsed
};

PasswordState& Password() {
  static PasswordState state;
  return state;
}

// AUTH [user] password against the password in force; only the "default" user exists.
bool CheckPassword(std::string_view user, std::string_view password) {
  if (user != "default") return false;  // user names are case-sensitive
  std::string expected = RequirePass();
  return expected.empty() || password == expected;
}

void CmdPing(CmdArgList args, ConnectionContext* cntx) {
  if (args.size() > 2) {
    return cntx->reply_builder()->SendError(facade::CommandRegistry::WrongArityError("ping"));
  }
  if (args.size() == 2) return cntx->reply_builder()->SendBulk(args[1]);
  cntx->reply_builder()->SendSimpleString("PONG");
}

void CmdEcho(CmdArgList args, ConnectionContext* cntx) { cntx->reply_builder()->SendBulk(args[1]); }

void CmdQuit(CmdArgList args, ConnectionContext* cntx) {
  cntx->reply_builder()->SendOk();
  cntx->close_after_reply = true;
}

void CmdReset(CmdArgList args, ConnectionContext* cntx) {
  StopMonitor(cntx);
  cntx->db_index = 0;
  cntx->name.clear();
  cntx->authenticated = RequirePass().empty();
  cntx->reply_builder()->set_protocol(RespVersion::kResp2);
  cntx->reply_builder()->SendSimpleString("RESET");
}

void CmdAuth(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() > 3) return rb->SendError(facade::kSyntaxErr);
  if (args.size() == 2 && RequirePass().empty()) {
    return rb->SendError(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?");
  }
  std::string_view user = args.size() == 3 ? args[1] : "default";
  if (!CheckPassword(user, args.back())) return rb->SendError(facade::kWrongPassErr);
  cntx->authenticated = true;
  rb->SendOk();
}

// Client names are printable ASCII without spaces.
bool IsValidClientName(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

constexpr char kBadClientNameErr[] =
    "ERR Client names cannot contain spaces, newlines or special characters.";

// HELLO [protover [AUTH username password] [SETNAME clientname]]
void CmdHello(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  RespVersion version = rb->protocol();
  std::string_view user, password, name;
  bool has_auth = false, has_name = false;
  if (args.size() >= 2) {
    std::optional<int64_t> requested = ParseInt64(args[1]);
    if (!requested) {
      return rb->SendError("ERR Protocol version is not an integer or out of range");
    }
    for (size_t i = 2; i < args.size(); ++i) {
      size_t left = args.size() - i - 1;
      if (ArgIs(args[i], "AUTH") && left >= 2) {
        user = args[i + 1];
        password = args[i + 2];
        has_auth = true;
        i += 2;
      } else if (ArgIs(args[i], "SETNAME") && left >= 1) {
        name = args[++i];
        has_name = true;
      } else {
        return rb->SendError(
            helio::StrCat("ERR Syntax error in HELLO option '", facade::AsCString(args[i]), "'"));
      }
    }
    if (*requested != 2 && *requested != 3) return rb->SendError("NOPROTO unsupported protocol version");
    version = RespVersion(*requested);
  }
  if (has_auth) {
    if (!CheckPassword(user, password)) return rb->SendError(facade::kWrongPassErr);
    cntx->authenticated = true;
  }
  if (!cntx->authenticated) {
    return rb->SendError(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
        "the RESP protocol version at the same time");
  }
  if (has_name) {
    if (!IsValidClientName(name)) return rb->SendError(kBadClientNameErr);
    cntx->name = std::string(name);
  }
  rb->set_protocol(version);
  rb->StartMap(7);
  rb->SendBulk("server");
  rb->SendBulk("redis");
  rb->SendBulk("version");
  rb->SendBulk(kRedisCompatVersion);
  rb->SendBulk("proto");
  rb->SendLong(int(version));
  rb->SendBulk("id");
  rb->SendLong(cntx->id());
  rb->SendBulk("mode");
  rb->SendBulk("standalone");
  rb->SendBulk("role");
  rb->SendBulk("master");
  rb->SendBulk("modules");
  rb->SendEmptyArray();
}

void CmdSelect(CmdArgList args, ConnectionContext* cntx) {
  std::string_view error;
  std::optional<uint32_t> index = ParseDbIndex(args[1], FLAGS_dbnum, &error);
  if (!index) return cntx->reply_builder()->SendError(error);
  cntx->db_index = DbIndex(*index);
  cntx->reply_builder()->SendOk();
}

// One CLIENT LIST line, with Redis's fields (those we do not track are zero).
std::string DescribeClient(RespConnection* conn) {
  ConnectionContext* cntx = conn->context();
  int64_t now_ms = UnixTimeMs();
  std::string cmd = "NULL";
  if (cntx->last_command) cmd = helio::AsciiStrToLower(cntx->last_command->name);
  if (cntx->last_subcommand) helio::StrAppend(&cmd, "|", helio::AsciiStrToLower(cntx->last_subcommand->name));
  size_t qbuf = conn->query_buffer_size();
  return helio::StrCat(
      "id=", cntx->id(), " addr=", conn->peer_address(), " laddr=", conn->local_address(),
      " fd=", conn->socket() ? conn->socket()->fd() : -1, " name=", cntx->name,
      " age=", (now_ms - conn->created_at_ms()) / 1000,
      " idle=", (now_ms - conn->last_active_ms()) / 1000, " flags=N db=", cntx->db_index,
      " sub=0 psub=0 ssub=0 multi=-1 qbuf=", qbuf,
      " qbuf-free=", conn->query_buffer_capacity() - qbuf,
      " argv-mem=0 multi-mem=0 rbs=", cntx->reply_builder()->output_size(),
      " rbp=0 obl=0 oll=0 omem=0 tot-mem=", conn->query_buffer_capacity(),
      " events=r cmd=", cmd, " user=default redir=-1 resp=", int(cntx->reply_builder()->protocol()));
}

// CLIENT KILL filters: the new form (ID, ADDR, LADDR, SKIPME) or the old "ip:port".
struct KillFilter {
  std::optional<uint64_t> id;
  std::optional<std::string> addr, laddr;
  bool skip_me = true;
};

void ClientKill(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  KillFilter filter;
  bool old_form = args.size() == 3;
  if (old_form) {
    filter.addr = std::string(args[2]);
    filter.skip_me = false;
  } else {
    if (args.size() < 4 || args.size() % 2 != 0) return rb->SendError(facade::kSyntaxErr);
    for (size_t i = 2; i < args.size(); i += 2) {
      std::string_view field = args[i], value = args[i + 1];
      if (ArgIs(field, "ID")) {
        uint64_t id;
        if (!helio::SimpleAtoi(value, &id) || id == 0) {
          return rb->SendError("ERR client-id should be greater than 0");
        }
        filter.id = id;
      } else if (ArgIs(field, "ADDR")) {
        filter.addr = std::string(value);
      } else if (ArgIs(field, "LADDR")) {
        filter.laddr = std::string(value);
      } else if (ArgIs(field, "SKIPME")) {
        if (ArgIs(value, "YES")) {
          filter.skip_me = true;
        } else if (ArgIs(value, "NO")) {
          filter.skip_me = false;
        } else {
          return rb->SendError(facade::kSyntaxErr);
        }
      } else if (ArgIs(field, "TYPE") || ArgIs(field, "USER") || ArgIs(field, "MAXAGE")) {
        continue;  // accepted; every client is a normal client of the default user
      } else {
        return rb->SendError(facade::kSyntaxErr);
      }
    }
  }
  std::atomic<int64_t> killed{0};
  RespConnection* me = cntx->owner();
  shard_set->pool()->AwaitOnAll([&](unsigned, helio::io::Proactor*) {
    for (RespConnection* conn : ServerState::tlocal()->connections) {
      if (filter.skip_me && conn == me) continue;
      if (filter.id && conn->context()->id() != *filter.id) continue;
      if (filter.addr && conn->peer_address() != *filter.addr) continue;
      if (filter.laddr && conn->local_address() != *filter.laddr) continue;
      if (conn == me) {
        conn->context()->close_after_reply = true;
      } else {
        conn->Kill();
      }
      killed.fetch_add(1, std::memory_order_relaxed);
    }
  });
  if (old_form) {
    return killed ? rb->SendOk() : rb->SendError("ERR No such client");
  }
  rb->SendLong(killed);
}

// CLIENT LIST [TYPE normal|master|replica|pubsub] [ID client-id ...]
void ClientList(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::vector<uint64_t> ids;
  bool only_ids = false, none = false;
  for (size_t i = 2; i < args.size(); ++i) {
    if (ArgIs(args[i], "TYPE") && i + 1 < args.size()) {
      std::string_view type = args[++i];
      if (ArgIs(type, "NORMAL")) continue;
      if (ArgIs(type, "MASTER") || ArgIs(type, "REPLICA") || ArgIs(type, "SLAVE") ||
          ArgIs(type, "PUBSUB")) {
        none = true;  // every client here is a normal one
        continue;
      }
      return rb->SendError(helio::StrCat("ERR Unknown client type '", type, "'"));
    } else if (ArgIs(args[i], "ID") && i + 1 < args.size()) {
      only_ids = true;
      for (++i; i < args.size(); ++i) {
        uint64_t id;
        if (!helio::SimpleAtoi(args[i], &id) || id == 0) return rb->SendError("ERR Invalid client ID");
        ids.push_back(id);
      }
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  std::vector<std::string> lines(shard_set->pool()->size());
  if (!none) {
    shard_set->pool()->AwaitOnAll([&](unsigned index, helio::io::Proactor*) {
      for (RespConnection* conn : ServerState::tlocal()->connections) {
        if (only_ids && std::find(ids.begin(), ids.end(), conn->context()->id()) == ids.end()) {
          continue;
        }
        helio::StrAppend(&lines[index], DescribeClient(conn), "\n");
      }
    });
  }
  std::string all;
  for (const std::string& part : lines) all += part;
  rb->SendVerbatim(all);
}

// Subcommands and their arities are validated by the dispatcher (see Register).
void CmdClient(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];
  if (ArgIs(sub, "ID")) return rb->SendLong(cntx->id());
  if (ArgIs(sub, "GETNAME")) return cntx->name.empty() ? rb->SendNull() : rb->SendBulk(cntx->name);
  if (ArgIs(sub, "SETNAME")) {
    if (!IsValidClientName(args[2])) return rb->SendError(kBadClientNameErr);
    cntx->name = std::string(args[2]);
    return rb->SendOk();
  }
  if (ArgIs(sub, "SETINFO")) return rb->SendOk();  // redis-py 5 and others send it
  if (ArgIs(sub, "INFO")) return rb->SendVerbatim(DescribeClient(cntx->owner()) + "\n");
  if (ArgIs(sub, "LIST")) return ClientList(args, cntx);
  if (ArgIs(sub, "KILL")) return ClientKill(args, cntx);
  static constexpr std::string_view kHelp[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GETNAME", "    Return the name of the current connection.",
      "ID", "    Return the ID of the current connection.",
      "INFO", "    Return information about the current client connection.",
      "KILL <ip:port>", "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are: ID <client-id>, ADDR <ip:port>, LADDR <ip:port>,",
      "    SKIPME (YES|NO).",
      "LIST [TYPE <type>] [ID <id> [<id> ...]]",
      "    Return information about client connections.",
      "SETNAME <name>", "    Assign the name <name> to the current connection.",
      "HELP", "    Print this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

}  // namespace

std::string RequirePass() {
  PasswordState& state = Password();
  std::lock_guard guard(state.lock);
  return state.value;
}

void SetRequirePass(std::string_view password) {
  PasswordState& state = Password();
  std::lock_guard guard(state.lock);
  state.value.assign(password);
}

void ConnectionFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  auto add = [&](const char* name, const char* syntax, int arity, uint32_t flags, uint32_t acl,
                 const char* summary, const char* since, CommandHandler handler) {
    registry->Register(CommandId{.name = name, .arity = arity, .flags = flags,
                                 .acl = acl | kAclConnection, .group = "connection",
                                 .summary = summary, .since = since, .syntax = syntax,
                                 .handler = std::move(handler)});
  };
  constexpr uint32_t kAnytime = kCmdLoading | kCmdStale;
  add("PING", "[message]", -1, kCmdFast, kAclFast, "Ping the server", "1.0.0", CmdPing);
  add("ECHO", "message", 2, kCmdFast, kAclFast, "Echo the given string", "1.0.0", CmdEcho);
  add("QUIT", "", -1, kCmdAllowBusy | kCmdNoAuth | kAnytime | kCmdFast, kAclFast,
      "Close the connection", "1.0.0", CmdQuit);
  add("RESET", "", 1, kCmdNoScript | kAnytime | kCmdFast | kCmdNoAuth | kCmdAllowBusy, kAclFast,
      "Reset the connection", "6.2.0", CmdReset);
  add("HELLO", "[protover [AUTH username password] [SETNAME clientname]]", -1, kCmdNoScript | kAnytime | kCmdFast | kCmdNoAuth | kCmdAllowBusy, kAclFast,
      "Handshake with Redis", "6.0.0", CmdHello);
  add("AUTH", "[username] password", -2, kCmdNoScript | kAnytime | kCmdFast | kCmdNoAuth | kCmdAllowBusy, kAclFast,
      "Authenticate to the server", "1.0.0", CmdAuth);
  add("SELECT", "index", 2, kAnytime | kCmdFast, kAclFast, "Change the selected database for the current connection",
      "1.0.0", CmdSelect);
  registry->Register(CommandId{
      .name = "CLIENT", .arity = -2, .flags = kCmdNoScript | kAnytime,
      .acl = kAclSlow | kAclConnection, .group = "connection",
      .summary = "A container for client connection commands", .since = "2.4.0",
      .handler = CmdClient,
      .subcommands = {{"ID", 2, ""},
                      {"GETNAME", 2, ""},
                      {"SETNAME", 3, "connection-name"},
                      {"SETINFO", 4, "LIB-NAME libname | LIB-VER libver"},
                      {"INFO", 2, ""},
                      {"LIST", -2, "[TYPE NORMAL | MASTER | REPLICA | PUBSUB] [ID client-id [client-id ...]]"},
                      {"KILL", -3, "[ID client-id] [ADDR ip:port] [LADDR ip:port] [SKIPME YES | NO]"},
                      {"HELP", 2, ""}}});
}

}  // namespace damselfly
