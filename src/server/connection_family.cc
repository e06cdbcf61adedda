#include "src/server/connection_family.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <limits>
#include <mutex>

#include "helio/base/spinlock.h"
#include "helio/base/strings.h"
#include "src/facade/error.h"
#include "src/facade/resp_connection.h"
#include "src/server/acl_family.h"
#include "src/server/acl_users.h"
#include "src/server/arg_parsing.h"
#include "src/server/blocking_controller.h"
#include "src/server/client_pause.h"
#include "src/server/conn_tx_state.h"
#include "src/server/db_slice.h"
#include "src/server/engine_shard_set.h"
#include "src/server/monitor.h"
#include "src/server/multi_exec.h"
#include "src/server/pubsub_family.h"
#include "src/server/replication.h"
#include "src/server/server_state.h"
#include "src/server/tracking.h"

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

void CmdPing(CmdArgList args, ConnectionContext* cntx) {
  if (args.size() > 2) {
    return cntx->reply_builder()->SendError(facade::CommandRegistry::WrongArityError("ping"));
  }
  ReplyBuilder* rb = cntx->reply_builder();
  if (IsSubscribed(cntx) && rb->protocol() == RespVersion::kResp2) {  // Redis's subscribed form
    rb->StartArray(2);
    rb->SendBulk("pong");
    return rb->SendBulk(args.size() == 2 ? args[1] : "");
  }
  if (args.size() == 2) return rb->SendBulk(args[1]);
  rb->SendSimpleString("PONG");
}

void CmdEcho(CmdArgList args, ConnectionContext* cntx) { cntx->reply_builder()->SendBulk(args[1]); }

void CmdQuit(CmdArgList args, ConnectionContext* cntx) {
  cntx->reply_builder()->SendOk();
  cntx->close_after_reply = true;
}

void CmdReset(CmdArgList args, ConnectionContext* cntx) {
  DisableTracking(cntx);
  UnsubscribeAll(cntx);
  StopMonitor(cntx);
  cntx->db_index = 0;
  cntx->name.clear();
  ResetAclUser(cntx);
  cntx->ResetReplyMode();
  cntx->reply_builder()->set_protocol(RespVersion::kResp2);
  cntx->reply_builder()->SendSimpleString("RESET");
}

std::string DescribeClient(RespConnection* conn, RespConnection* me);

// WRONGPASS, and the failure in ACL LOG.
void RefuseAuth(std::string_view command, std::string_view user, ConnectionContext* cntx) {
  LogAuthFailure(command, user, MultiExec::InMulti(cntx), ClientInfoLine(cntx));
  cntx->reply_builder()->SendError(facade::kWrongPassErr);
}

void CmdAuth(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() > 3) return rb->SendError(facade::kSyntaxErr);
  if (args.size() == 2 && FindAclUser("default")->nopass()) {
    return rb->SendError(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?");
  }
  std::string_view user = args.size() == 3 ? args[1] : "default";
  if (!Authenticate(cntx, user, args.back())) return RefuseAuth(args[0], user, cntx);
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
    if (!Authenticate(cntx, user, password)) return RefuseAuth(args[0], user, cntx);
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
  if (facade::PushQueue* queue = cntx->owner()->push_queue()) {
    queue->set_resp3(version == RespVersion::kResp3);  // messages follow the protocol
  }
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

// CLIENT LIST's flags for a connection, in Redis's order; N when none applies.
std::string ClientFlags(ConnectionContext* cntx) {
  std::string flags;
  ConnTxState* tx = ConnTxState::Find(cntx);
  if (IsReplica(cntx)) flags += 'S';
  if (cntx->master_link) flags += 'M';
  if (IsSubscribed(cntx)) flags += 'P';
  if (tx && tx->in_multi) flags += 'x';
  if (ClientPause::IsParked(cntx) || blocking::IsBlocked(cntx)) flags += 'b';
  flags += TrackingClientFlags(cntx);
  if (tx && tx->watch_dirty.load(std::memory_order_relaxed)) flags += 'd';
  if (cntx->no_evict) flags += 'e';
  return flags.empty() ? "N" : flags;
}

size_t ArgsBytes(CmdArgList args) {
  size_t bytes = 0;
  for (std::string_view arg : args) bytes += arg.size();
  return bytes;
}

// One CLIENT LIST line, with Redis's fields (those we do not track are zero). Runs on
// the connection's thread, `me` being the connection asking. The buffers:
//  - qbuf: the bytes of the read buffer from the batch of commands being executed (or,
//    between batches, those of a request not complete yet); qbuf-free: what the read
//    buffer can still take without growing.
//  - Replies go into one growable buffer (Redis's reply buffer `buf`), never into a
//    reply list, so oll stays 0; omem is what the push queue of a subscriber or a
//    monitor holds and has not sent (push_queue.h). obl is what the buffer holds and has not sent;
//    for another connection, as of its last send (a shard thread may be writing to its
//    buffer during a hop), which is when it is blocked sending. rbs: the buffer's size.
//  - argv-mem: the arguments of the command running or held back by CLIENT PAUSE;
//    multi-mem: those of the commands queued by MULTI.
std::string DescribeClient(RespConnection* conn, RespConnection* me) {
  ConnectionContext* cntx = conn->context();
  int64_t now_ms = UnixTimeMs();
  std::string cmd = "NULL";
  if (cntx->last_command) cmd = helio::AsciiStrToLower(cntx->last_command->name);
  if (cntx->last_subcommand) helio::StrAppend(&cmd, "|", helio::AsciiStrToLower(cntx->last_subcommand->name));
  size_t qbuf = conn->query_buffer_size();
  size_t obl = conn == me ? cntx->reply_builder()->output_size() : conn->unsent_output_bytes();
  size_t rbs = conn == me ? cntx->reply_builder()->output_capacity() : conn->output_capacity();
  size_t argv_mem = ArgsBytes(cntx->current_args);
  int64_t multi = -1;
  size_t multi_mem = 0;
  if (ConnTxState* tx = ConnTxState::Find(cntx); tx && tx->in_multi) {
    multi = tx->queued.size();
    for (const ConnTxState::QueuedCommand& queued : tx->queued) {
      for (const std::string& arg : queued.args) multi_mem += arg.size();
    }
  }
  size_t omem = conn->push_queue() ? conn->push_queue()->queued_bytes() : 0;
  size_t tot_mem = conn->query_buffer_capacity() + rbs + argv_mem + multi_mem + omem;
  SubscriptionCounts subs = CountSubscriptions(cntx);
  return helio::StrCat(
      "id=", cntx->id(), " addr=", conn->peer_address(), " laddr=", conn->local_address(),
      " fd=", conn->socket() ? conn->socket()->fd() : -1, " name=", cntx->name,
      " age=", (now_ms - conn->created_at_ms()) / 1000,
      " idle=", (now_ms - conn->last_active_ms()) / 1000, " flags=", ClientFlags(cntx),
      " db=", cntx->db_index, " sub=", subs.channels, " psub=", subs.patterns,
      " ssub=", subs.shard_channels, " multi=", multi, " qbuf=", qbuf,
      " qbuf-free=", conn->query_buffer_capacity() - qbuf, " argv-mem=", argv_mem,
      " multi-mem=", multi_mem, " rbs=", rbs, " rbp=0 obl=", obl,
      " oll=0 omem=", omem, " tot-mem=", tot_mem, " events=r cmd=", cmd,
      " user=", AclUserName(cntx), " redir=", TrackingRedirect(cntx), " resp=", int(cntx->reply_builder()->protocol()));
}

// Redis's client types: a replica's connection (after SYNC or PSYNC) is a replica, a
// subscribed one pubsub, a replica's link to its master the master (a monitor is normal,
// as in Redis).
enum class ClientType { kNormal, kReplica, kPubSub, kMaster, kUnknown };

ClientType ClientTypeByName(std::string_view name) {
  if (ArgIs(name, "NORMAL")) return ClientType::kNormal;
  if (ArgIs(name, "PUBSUB")) return ClientType::kPubSub;
  if (ArgIs(name, "REPLICA") || ArgIs(name, "SLAVE")) return ClientType::kReplica;
  if (ArgIs(name, "MASTER")) return ClientType::kMaster;
  return ClientType::kUnknown;
}

// Whether `cntx`'s client is of `type` (a filter of CLIENT LIST and CLIENT KILL).
bool IsOfType(ConnectionContext* cntx, std::optional<ClientType> type) {
  if (!type) return true;
  switch (*type) {
    case ClientType::kNormal:
      return !IsSubscribed(cntx) && !IsReplica(cntx) && !cntx->master_link;
    case ClientType::kReplica: return IsReplica(cntx);
    case ClientType::kPubSub: return IsSubscribed(cntx);
    case ClientType::kMaster: return cntx->master_link;
    default: return false;
  }
}

std::string UnknownClientTypeError(std::string_view name) {
  return helio::StrCat("ERR Unknown client type '", name, "'");
}

// CLIENT KILL filters: the new form (ID, TYPE, ADDR, LADDR, USER, SKIPME; a repeated
// filter replaces the earlier one) or the old "ip:port".
struct KillFilter {
  std::optional<uint64_t> id;
  std::optional<std::string> addr, laddr;
  std::optional<ClientType> type;
  std::optional<std::string> user;
  bool skip_me = true;
};

// Parses the filters as Redis does, in order, failing at the first bad one.
std::optional<KillFilter> ParseKillFilter(CmdArgList args, ReplyBuilder* rb) {
  KillFilter filter;
  for (size_t i = 2; i < args.size(); i += 2) {
    std::string_view field = args[i];
    if (i + 1 == args.size()) {
      rb->SendError(facade::kSyntaxErr);
      return std::nullopt;
    }
    std::string_view value = args[i + 1];
    if (ArgIs(field, "ID")) {
      std::optional<int64_t> id = ParseInt64(value);
      if (!id || *id < 1) {
        rb->SendError("ERR client-id should be greater than 0");
        return std::nullopt;
      }
      filter.id = *id;
    } else if (ArgIs(field, "TYPE")) {
      ClientType type = ClientTypeByName(value);
      if (type == ClientType::kUnknown) {
        rb->SendError(UnknownClientTypeError(value));
        return std::nullopt;
      }
      filter.type = type;
    } else if (ArgIs(field, "ADDR")) {
      filter.addr = std::string(value);
    } else if (ArgIs(field, "LADDR")) {
      filter.laddr = std::string(value);
    } else if (ArgIs(field, "USER")) {
      if (FindAclUser(value) == nullptr) {
        rb->SendError(helio::StrCat("ERR No such user '", value, "'"));
        return std::nullopt;
      }
      filter.user = std::string(value);
    } else if (ArgIs(field, "SKIPME")) {
      if (ArgIs(value, "YES")) {
        filter.skip_me = true;
      } else if (ArgIs(value, "NO")) {
        filter.skip_me = false;
      } else {
        rb->SendError(facade::kSyntaxErr);
        return std::nullopt;
      }
    } else {
      rb->SendError(facade::kSyntaxErr);
      return std::nullopt;
    }
  }
  return filter;
}

void ClientKill(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  KillFilter filter;
  bool old_form = args.size() == 3;
  if (old_form) {
    filter.addr = std::string(args[2]);
    filter.skip_me = false;
  } else {
    std::optional<KillFilter> parsed = ParseKillFilter(args, rb);
    if (!parsed) return;
    filter = std::move(*parsed);
  }
  std::atomic<int64_t> killed{0};
  RespConnection* me = cntx->owner();
  shard_set->pool()->AwaitOnAll([&](unsigned, helio::io::Proactor*) {
    bool any = false;
    for (RespConnection* conn : ServerState::tlocal()->connections) {
      if (filter.skip_me && conn == me) continue;
      if (filter.id && conn->context()->id() != *filter.id) continue;
      if (!IsOfType(conn->context(), filter.type)) continue;
      if (filter.addr && conn->peer_address() != *filter.addr) continue;
      if (filter.laddr && conn->local_address() != *filter.laddr) continue;
      if (filter.user && AclUserName(conn->context()) != *filter.user) continue;
      if (conn == me) {
        conn->context()->close_after_reply = true;
      } else {
        conn->Kill();
        any = true;
      }
      killed.fetch_add(1, std::memory_order_relaxed);
    }
    if (any) ClientPause::WakeParked();  // a killed connection may be parked
  });
  if (old_form) {
    return killed ? rb->SendOk() : rb->SendError("ERR No such client");
  }
  rb->SendLong(killed);
}

// CLIENT LIST [TYPE normal|master|replica|pubsub] | [ID client-id ...]
void ClientList(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::vector<int64_t> ids;
  bool only_ids = false;
  std::optional<ClientType> type;
  if (args.size() == 4 && ArgIs(args[2], "TYPE")) {
    type = ClientTypeByName(args[3]);
    if (type == ClientType::kUnknown) return rb->SendError(UnknownClientTypeError(args[3]));
  } else if (args.size() > 3 && ArgIs(args[2], "ID")) {
    only_ids = true;
    for (size_t i = 3; i < args.size(); ++i) {
      std::optional<int64_t> id = ParseInt64(args[i]);
      if (!id) return rb->SendError("ERR Invalid client ID");
      ids.push_back(*id);
    }
  } else if (args.size() != 2) {
    return rb->SendError(facade::kSyntaxErr);
  }
  std::vector<std::string> lines(shard_set->pool()->size());
  RespConnection* me = cntx->owner();
  shard_set->pool()->AwaitOnAll([&](unsigned index, helio::io::Proactor*) {
    for (RespConnection* conn : ServerState::tlocal()->connections) {
      if (!IsOfType(conn->context(), type)) continue;
      if (only_ids &&
          std::find(ids.begin(), ids.end(), int64_t(conn->context()->id())) == ids.end()) {
        continue;
      }
      helio::StrAppend(&lines[index], DescribeClient(conn, me), "\n");
    }
  });
  std::string all;
  for (const std::string& part : lines) all += part;
  rb->SendVerbatim(all);
}

// CLIENT PAUSE timeout [WRITE|ALL]
void ClientPauseCmd(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() > 4) {
    return rb->SendError(helio::StrCat("ERR unknown subcommand or wrong number of arguments for '",
                                       args[1], "'. Try CLIENT HELP."));
  }
  PauseMode mode = PauseMode::kAll;
  if (args.size() == 4) {
    if (ArgIs(args[3], "WRITE")) {
      mode = PauseMode::kWrite;
    } else if (!ArgIs(args[3], "ALL")) {
      return rb->SendError("ERR CLIENT PAUSE mode must be WRITE or ALL");
    }
  }
  std::optional<int64_t> timeout_ms = ParseInt64(args[2]);
  if (!timeout_ms) return rb->SendError("ERR timeout is not an integer or out of range");
  if (*timeout_ms < 0) return rb->SendError("ERR timeout is negative");
  int64_t now_ms = UnixTimeMs();
  int64_t end_ms = *timeout_ms > std::numeric_limits<int64_t>::max() - now_ms
                       ? std::numeric_limits<int64_t>::max()
                       : now_ms + *timeout_ms;
  ClientPause::Pause(mode, end_ms);
  rb->SendOk();
}

// CLIENT REPLY ON|OFF|SKIP; only ON answers (the others suppress their own reply too).
void ClientReply(CmdArgList args, ConnectionContext* cntx) {
  using Mode = ConnectionContext::ReplyMode;
  if (ArgIs(args[2], "ON")) {
    cntx->SetReplyMode(Mode::kOn);
    return cntx->reply_builder()->SendOk();
  }
  if (ArgIs(args[2], "OFF")) return cntx->SetReplyMode(Mode::kOff);
  if (ArgIs(args[2], "SKIP")) return cntx->SetReplyMode(Mode::kSkip);
  cntx->reply_builder()->SendError(facade::kSyntaxErr);
}

void ClientNoEvict(CmdArgList args, ConnectionContext* cntx) {
  if (ArgIs(args[2], "ON")) {
    cntx->no_evict = true;
  } else if (ArgIs(args[2], "OFF")) {
    cntx->no_evict = false;
  } else {
    return cntx->reply_builder()->SendError(facade::kSyntaxErr);
  }
  cntx->reply_builder()->SendOk();
}

// CLIENT UNBLOCK id [TIMEOUT | ERROR]: ends a blocking command's wait as if its timeout
// passed, or with the UNBLOCKED error. 1 when the client was blocked.
void ClientUnblock(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() > 4) {
    return rb->SendError(helio::StrCat("ERR unknown subcommand or wrong number of arguments for '",
                                       args[1], "'. Try CLIENT HELP."));
  }
  bool with_error = false;
  if (args.size() == 4) {
    if (ArgIs(args[3], "ERROR")) {
      with_error = true;
    } else if (!ArgIs(args[3], "TIMEOUT")) {
      return rb->SendError("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    }
  }
  std::optional<int64_t> id = ParseInt64(args[2]);
  if (!id) return rb->SendError(facade::kInvalidIntErr);
  rb->SendLong(*id > 0 && blocking::Unblock(uint64_t(*id), with_error) ? 1 : 0);
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
  if (ArgIs(sub, "INFO")) {
    return rb->SendVerbatim(DescribeClient(cntx->owner(), cntx->owner()) + "\n");
  }
  if (ArgIs(sub, "LIST")) return ClientList(args, cntx);
  if (ArgIs(sub, "KILL")) return ClientKill(args, cntx);
  if (ArgIs(sub, "PAUSE")) return ClientPauseCmd(args, cntx);
  if (ArgIs(sub, "UNPAUSE")) {
    ClientPause::Unpause();
    return rb->SendOk();
  }
  if (ArgIs(sub, "REPLY")) return ClientReply(args, cntx);
  if (ArgIs(sub, "NO-EVICT")) return ClientNoEvict(args, cntx);
  if (ArgIs(sub, "UNBLOCK")) return ClientUnblock(args, cntx);
  if (ArgIs(sub, "GETREDIR")) return ClientGetRedir(cntx);
  if (ArgIs(sub, "TRACKING")) return ClientTracking(args, cntx);
  if (ArgIs(sub, "CACHING")) return ClientCaching(args, cntx);
  if (ArgIs(sub, "TRACKINGINFO")) return ClientTrackingInfo(cntx);
  // Redis 7.0's text for the subcommands we have (SETINFO is Redis 7.2's).
  static constexpr std::string_view kHelp[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made from the specified address",
      "    * LADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "SETINFO <option> <value>",
      "    Set client meta attributes. Options are LIB-NAME and LIB-VER (accepted, not kept).",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
      "HELP",
      "    Prints this help.",
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
  {
    PasswordState& state = Password();
    std::lock_guard guard(state.lock);
    state.value.assign(password);
  }
  SetDefaultUserPassword(password);  // requirepass is the default user's password
}

std::string ClientInfoLine(facade::ConnectionContext* cntx) {
  RespConnection* conn = cntx->owner();
  return conn != nullptr ? DescribeClient(conn, conn) : std::string();
}

void ConnectionFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  constexpr uint32_t kAnytime = kCmdLoading | kCmdStale;
  // Allowed before AUTH, and while the server is busy.
  constexpr uint32_t kHandshake = kCmdNoAuth | kCmdAllowBusy | kCmdNoScript | kAnytime | kCmdFast;
  constexpr uint32_t kAclFastConn = kAclFast | kAclConnection;
  r.Add("PING", -1, kCmdFast, kNoKeys, kAclFastConn, CmdPing);
  r.Add("ECHO", 2, kCmdFast, kNoKeys, kAclFastConn, CmdEcho);
  r.Add("QUIT", -1, kCmdNoAuth | kCmdAllowBusy | kAnytime | kCmdFast, kNoKeys, kAclFastConn,
        CmdQuit);
  r.Add("RESET", 1, kHandshake, kNoKeys, kAclFastConn, CmdReset);
  r.Add("HELLO", -1, kHandshake, kNoKeys, kAclFastConn, CmdHello);
  r.Add("AUTH", -2, kHandshake, kNoKeys, kAclFastConn, CmdAuth);
  r.Add("SELECT", 2, kAnytime | kCmdFast, kNoKeys, kAclFastConn, CmdSelect);
  r.Add("CLIENT", -2, kCmdNoScript | kAnytime, kNoKeys, kAclSlow, CmdClient,
        {{"ID", 2, kAclSlow | kAclConnection},
         {"GETNAME", 2, kAclSlow | kAclConnection},
         {"SETNAME", 3, kAclSlow | kAclConnection},
         {"SETINFO", 4, kAclSlow | kAclConnection},
         {"INFO", 2, kAclSlow | kAclConnection},
         {"LIST", -2, kAclAdmin | kAclSlow | kAclDangerous | kAclConnection},
         {"KILL", -3, kAclAdmin | kAclSlow | kAclDangerous | kAclConnection},
         {"PAUSE", -3, kAclAdmin | kAclSlow | kAclDangerous | kAclConnection},
         {"UNPAUSE", 2, kAclAdmin | kAclSlow | kAclDangerous | kAclConnection},
         {"REPLY", 3, kAclSlow | kAclConnection},
         {"NO-EVICT", 3, kAclAdmin | kAclSlow | kAclDangerous | kAclConnection},
         {"UNBLOCK", -3, kAclAdmin | kAclSlow | kAclDangerous | kAclConnection},
         {"GETREDIR", 2, kAclSlow | kAclConnection},
         {"TRACKING", -3, kAclSlow | kAclConnection},
         {"CACHING", 3, kAclSlow | kAclConnection},
         {"TRACKINGINFO", 2, kAclSlow | kAclConnection},
         {"HELP", 2, kAclSlow | kAclConnection}});
}

}  // namespace damselfly
