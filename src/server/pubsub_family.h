// Pub/sub: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE SSUBSCRIBE SUNSUBSCRIBE PUBLISH
// SPUBLISH PUBSUB, with Redis 7.0's replies in RESP2 (arrays) and RESP3 (pushes).
//
// A connection that subscribes gets a push queue (ClientConnection::StartPushes, class
// pubsub of client-output-buffer-limit) and a PubSubSession in its context with the names
// it subscribes to; the channel store (channel_store.h) maps names to queues for the
// publishers. Order on the wire:
//  - SUBSCRIBE queues its confirmations right before its queue joins the store, with no
//    suspension in between, so they come before the first message, and the client
//    cannot see them before a PUBLISH would reach it;
//  - UNSUBSCRIBE takes the queue out of the store (waiting until no publisher can still
//    push to it) before queueing its confirmations, so none follows them;
//  - the connection's other replies go through the same queue.
// Once a connection has no subscription left (and does not monitor) it drops the queue
// and sends its replies directly again. RESET, CLIENT KILL and closing unsubscribe from
// everything.
//
// Under RESP2 a subscribed connection may only run (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE,
// PING (answered ["pong", message]), QUIT and RESET, as in Redis 7.0; RESP3 has no
// restriction.
//
// Thread-safety: the handlers and the functions below run on the connection's fiber
// (CountSubscriptions also from a task on its thread); publishing is thread-free
// (channel_store.h).
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/functional/function_ref.h"

#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"

namespace damselfly {

class PubSubFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

inline bool IsSubscribed(const facade::ConnectionContext* cntx) {
  return cntx->pubsub_state != nullptr;
}

struct SubscriptionCounts {
  size_t channels = 0, patterns = 0, shard_channels = 0;
};
// CLIENT LIST's sub, psub and ssub.
SubscriptionCounts CountSubscriptions(const facade::ConnectionContext* cntx);

// Whether `allowed(name, is_pattern)` accepts every channel, pattern and shard channel
// the connection subscribes to (ACL rules that changed; true when not subscribed).
bool SubscriptionsPass(const facade::ConnectionContext* cntx,
                       absl::FunctionRef<bool(std::string_view name, bool is_pattern)> allowed);

// Unsubscribes from every channel, pattern and shard channel without replies (RESET,
// the connection closing). No-op when not subscribed.
void UnsubscribeAll(facade::ConnectionContext* cntx);

// Under RESP2, the error a subscribed connection gets for `cid` (the subcommand `sub`,
// if any), or "" when it may run it.
std::string SubscribedModeError(const facade::ConnectionContext* cntx, const facade::CommandId* cid,
                                const facade::SubcommandSpec* sub);

}  // namespace damselfly
