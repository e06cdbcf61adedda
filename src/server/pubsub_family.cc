#include "src/server/pubsub_family.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "helio/base/strings.h"
#include "src/facade/error.h"
#include "src/facade/resp_connection.h"
#include "src/server/channel_store.h"
#include "src/server/conn_tx_state.h"
#include "src/server/monitor.h"
#include "src/server/tracking.h"
#include "src/server/replication.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

using NameSet = absl::flat_hash_set<std::string, helio::StringViewHash, helio::StringViewEq>;

constexpr ChannelKind kKinds[] = {ChannelKind::kChannel, ChannelKind::kPattern,
                                  ChannelKind::kShard};

// What a subscribed connection subscribes to, and its push queue (owned by the connection).
struct PubSubSession final : ConnectionContext::PubSubState {
  NameSet names[3];  // by ChannelKind
  facade::PushQueue* queue = nullptr;

  NameSet& of(ChannelKind kind) { return names[size_t(kind)]; }
  // The count confirmations carry: channels and patterns together, shard channels alone.
  size_t ConfirmedCount(ChannelKind kind) const {
    if (kind == ChannelKind::kShard) return names[2].size();
    return names[0].size() + names[1].size();
  }
  bool empty() const { return names[0].empty() && names[1].empty() && names[2].empty(); }
};

PubSubSession* SessionOf(ConnectionContext* cntx) {
  return static_cast<PubSubSession*>(cntx->pubsub_state.get());
}

PubSubSession* StartSession(ConnectionContext* cntx) {
  if (PubSubSession* session = SessionOf(cntx)) return session;
  auto session = std::make_unique<PubSubSession>();
  session->queue = cntx->owner()->StartPushes(facade::ClientClass::kPubSub, 0);
  session->queue->set_client_class(facade::ClientClass::kPubSub);  // also if it monitors
  session->queue->set_resp3(cntx->reply_builder()->protocol() == facade::RespVersion::kResp3);
  cntx->pubsub_state = std::move(session);
  SyncPushes(cntx);  // a redirect of client tracking may now reach it
  return SessionOf(cntx);
}

// Called once the session holds nothing and the store no longer knows its queue.
void EndSession(ConnectionContext* cntx) {
  PubSubSession* session = SessionOf(cntx);
  // Kept for MONITOR or tracking, the queue is a normal client's again.
  session->queue->set_client_class(facade::ClientClass::kNormal);
  cntx->pubsub_state.reset();
  SyncPushes(cntx);
}

std::string_view ConfirmationName(ChannelKind kind, bool subscribe) {
  switch (kind) {
    case ChannelKind::kChannel:
      return subscribe ? "subscribe" : "unsubscribe";
    case ChannelKind::kPattern:
      return subscribe ? "psubscribe" : "punsubscribe";
    case ChannelKind::kShard:
      return subscribe ? "ssubscribe" : "sunsubscribe";
  }
  return "";
}

void SendConfirmation(ReplyBuilder* rb, std::string_view what, const std::string_view* name,
                      size_t count) {
  rb->StartPush(3);
  rb->SendBulk(what);
  name ? rb->SendBulk(*name) : rb->SendNull();
  rb->SendLong(count);
}

// Inside EXEC (Redis's DENY BLOCKING client) only SUBSCRIBE and PSUBSCRIBE are allowed.
bool RefusedInExec(ChannelKind kind, ConnectionContext* cntx) {
  if (kind != ChannelKind::kShard) return false;
  ConnTxState* tx = ConnTxState::Find(cntx);
  if (!tx || !tx->executing) return false;
  cntx->reply_builder()->SendError("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
  return true;
}

void Subscribe(ChannelKind kind, CmdArgList args, ConnectionContext* cntx) {
  if (RefusedInExec(kind, cntx)) return;
  PubSubSession* session = StartSession(cntx);
  std::vector<std::string> added;
  ReplyBuilder* rb = cntx->reply_builder();
  for (size_t i = 1; i < args.size(); ++i) {
    if (session->of(kind).emplace(args[i]).second) added.emplace_back(args[i]);
    SendConfirmation(rb, ConfirmationName(kind, true), &args[i], session->ConfirmedCount(kind));
  }
  // The confirmations go before any message, and past CLIENT REPLY OFF (Redis sends
  // every pub/sub push regardless of it).
  ChangeSubscriptions(kind, session->queue, true, added, [cntx] { cntx->Flush(); });
}

void Unsubscribe(ChannelKind kind, CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view what = ConfirmationName(kind, false);
  PubSubSession* session = SessionOf(cntx);
  if (session == nullptr) {  // counts stay 0; Redis answers each name, or a null one
    for (size_t i = 1; i < args.size(); ++i) SendConfirmation(rb, what, &args[i], 0);
    if (args.size() == 1) SendConfirmation(rb, what, nullptr, 0);
    cntx->Flush();  // past CLIENT REPLY OFF, as all pub/sub pushes
    return;
  }
  NameSet& names = session->of(kind);
  std::vector<std::string> removed;
  if (args.size() == 1) {
    removed.assign(names.begin(), names.end());
  } else {
    for (size_t i = 1; i < args.size(); ++i) {
      if (names.contains(args[i])) removed.emplace_back(args[i]);
    }
  }
  // Out of the store first, so no message follows its confirmation.
  ChangeSubscriptions(kind, session->queue, false, removed);
  if (args.size() == 1) {
    if (removed.empty()) SendConfirmation(rb, what, nullptr, session->ConfirmedCount(kind));
    for (const std::string& name : removed) {
      names.erase(name);
      std::string_view view = name;
      SendConfirmation(rb, what, &view, session->ConfirmedCount(kind));
    }
  } else {
    for (size_t i = 1; i < args.size(); ++i) {
      names.erase(args[i]);
      SendConfirmation(rb, what, &args[i], session->ConfirmedCount(kind));
    }
  }
  cntx->Flush();  // past CLIENT REPLY OFF, as all pub/sub pushes
  if (session->empty()) EndSession(cntx);
}

void CmdPublish(CmdArgList args, ConnectionContext* cntx) {
  cntx->reply_builder()->SendLong(Publish(args[1], args[2]));
  PropagateToReplicas(args, cntx->db_index);  // their subscribers get it too, as in Redis
}

void CmdSPublish(CmdArgList args, ConnectionContext* cntx) {
  cntx->reply_builder()->SendLong(SPublish(args[1], args[2]));
}

void SendNames(ReplyBuilder* rb, const std::vector<std::string>& names) {
  rb->SendBulkArray(names);
}

void SendNumSub(ChannelKind kind, CmdArgList args, ReplyBuilder* rb) {
  rb->StartMap(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    rb->SendBulk(args[i]);
    rb->SendLong(NumSubscribers(kind, args[i]));
  }
}

// PUBSUB CHANNELS [pattern] | NUMSUB [channel ...] | NUMPAT | SHARDCHANNELS [pattern] |
// SHARDNUMSUB [channel ...] | HELP; subcommands and arities checked by the dispatcher.
void CmdPubSub(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];
  std::string_view pattern = args.size() > 2 ? args[2] : std::string_view();
  if ((helio::EqualsIgnoreCase(sub, "CHANNELS") || helio::EqualsIgnoreCase(sub, "SHARDCHANNELS")) &&
      args.size() > 3) {
    return rb->SendError(helio::StrCat("ERR unknown subcommand or wrong number of arguments for '",
                                       sub, "'. Try PUBSUB HELP."));
  }
  if (helio::EqualsIgnoreCase(sub, "CHANNELS")) {
    return SendNames(rb, ActiveChannels(ChannelKind::kChannel, pattern));
  }
  if (helio::EqualsIgnoreCase(sub, "SHARDCHANNELS")) {
    return SendNames(rb, ActiveChannels(ChannelKind::kShard, pattern));
  }
  if (helio::EqualsIgnoreCase(sub, "NUMSUB")) return SendNumSub(ChannelKind::kChannel, args, rb);
  if (helio::EqualsIgnoreCase(sub, "SHARDNUMSUB")) {
    return SendNumSub(ChannelKind::kShard, args, rb);
  }
  if (helio::EqualsIgnoreCase(sub, "NUMPAT")) return rb->SendLong(NumActive(ChannelKind::kPattern));
  static constexpr std::string_view kHelp[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: "
      "'*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

}  // namespace

SubscriptionCounts CountSubscriptions(const ConnectionContext* cntx) {
  auto* session = static_cast<const PubSubSession*>(cntx->pubsub_state.get());
  if (session == nullptr) return {};
  return {session->names[0].size(), session->names[1].size(), session->names[2].size()};
}

bool SubscriptionsPass(const ConnectionContext* cntx,
                       absl::FunctionRef<bool(std::string_view name, bool is_pattern)> allowed) {
  auto* session = static_cast<const PubSubSession*>(cntx->pubsub_state.get());
  if (session == nullptr) return true;
  for (ChannelKind kind : kKinds) {
    for (const auto& name : session->names[size_t(kind)]) {
      if (!allowed(name, kind == ChannelKind::kPattern)) return false;
    }
  }
  return true;
}

void UnsubscribeAll(ConnectionContext* cntx) {
  PubSubSession* session = SessionOf(cntx);
  if (session == nullptr) return;
  for (ChannelKind kind : kKinds) {
    NameSet& names = session->of(kind);
    ChangeSubscriptions(kind, session->queue, false, {names.begin(), names.end()});
    names.clear();
  }
  EndSession(cntx);
}

std::string SubscribedModeError(const ConnectionContext* cntx, const facade::CommandId* cid,
                                const facade::SubcommandSpec* sub) {
  static constexpr std::string_view kAllowed[] = {"SUBSCRIBE",   "PSUBSCRIBE",   "SSUBSCRIBE",
                                                  "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE",
                                                  "PING",        "QUIT",         "RESET"};
  for (std::string_view name : kAllowed) {
    if (cid->name == name) return "";
  }
  std::string full = helio::AsciiStrToLower(cid->name);
  if (sub) helio::StrAppend(&full, "|", helio::AsciiStrToLower(sub->name));
  return helio::StrCat("ERR Can't execute '", full,
                       "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                       "allowed in this context");
}

void PubSubFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  constexpr uint32_t kSub = kCmdPubSub | kCmdNoScript | kCmdLoading | kCmdStale;
  constexpr uint32_t kPub = kCmdPubSub | kCmdLoading | kCmdStale | kCmdFast | kCmdMayReplicate;
  auto subscribe = [](ChannelKind kind) {
    return [kind](CmdArgList args, ConnectionContext* cntx) { Subscribe(kind, args, cntx); };
  };
  auto unsubscribe = [](ChannelKind kind) {
    return [kind](CmdArgList args, ConnectionContext* cntx) { Unsubscribe(kind, args, cntx); };
  };
  r.Add("SUBSCRIBE", -2, kSub, kNoKeys, kAclPubSub | kAclSlow, subscribe(ChannelKind::kChannel));
  r.Add("UNSUBSCRIBE", -1, kSub, kNoKeys, kAclPubSub | kAclSlow,
        unsubscribe(ChannelKind::kChannel));
  r.Add("PSUBSCRIBE", -2, kSub, kNoKeys, kAclPubSub | kAclSlow, subscribe(ChannelKind::kPattern));
  r.Add("PUNSUBSCRIBE", -1, kSub, kNoKeys, kAclPubSub | kAclSlow,
        unsubscribe(ChannelKind::kPattern));
  r.Add("SSUBSCRIBE", -2, kSub, kNoKeys, kAclPubSub | kAclSlow, subscribe(ChannelKind::kShard));
  r.Add("SUNSUBSCRIBE", -1, kSub, kNoKeys, kAclPubSub | kAclSlow, unsubscribe(ChannelKind::kShard));
  r.Add("PUBLISH", 3, kPub, kNoKeys, kAclPubSub | kAclFast, CmdPublish);
  r.Add("SPUBLISH", 3, kPub, kNoKeys, kAclPubSub | kAclFast, CmdSPublish);
  // As in Redis, the container has no flags of its own (its subcommands are pubsub).
  r.Add("PUBSUB", -2, 0, kNoKeys, kAclSlow, CmdPubSub,
        {{"CHANNELS", -2, kAclPubSub | kAclSlow},
         {"NUMSUB", -2, kAclPubSub | kAclSlow},
         {"NUMPAT", 2, kAclPubSub | kAclSlow},
         {"SHARDCHANNELS", -2, kAclPubSub | kAclSlow},
         {"SHARDNUMSUB", -2, kAclPubSub | kAclSlow},
         {"HELP", 2, kAclSlow}});
}

}  // namespace damselfly
