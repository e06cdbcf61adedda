// ChannelStore: who subscribes to which pub/sub channel, pattern and shard channel, read
// by publishers on every thread without a lock.
//
// Publishing must scale with threads, and it must work from anywhere, including proactor
// tasks on shard threads (keyspace notifications), where nothing may suspend. Subscribing
// is rare next to publishing. So the store is read-copy-update:
//
//  1. The store in force is a set of immutable maps, each behind an atomic pointer: the
//     channels (and the shard channels) in 64 buckets by hash, the patterns in one map.
//     PUBLISH loads the channel's bucket and the patterns (acquire), looks the channel up,
//     matches the patterns, and appends the message to each subscriber's push queue
//     (src/facade/push_queue.h), whose spinlock is the subscriber's own. No lock is
//     shared between publishers, and nothing is written to memory other publishers read.
//  2. A subscription change (SUBSCRIBE, UNSUBSCRIBE... of one connection, all names of the
//     command at once) takes the writers' fiber mutex, copies the buckets its names fall
//     in, changes the copies and swaps their pointers.
//  3. The old maps are freed once every proactor thread has passed a point where it
//     holds none: a publisher never suspends while it holds one, so after a task ran on
//     every thread no publisher can still read an old copy. A subscription change does
//     not wait for that (a task on each thread holds the old maps, the last one frees
//     them), so the subscriber's next command runs at once. An unsubscription waits
//     (AwaitOnAll): that tells the subscriber that from now on no publisher can reach
//     its queue, so UNSUBSCRIBE's reply is the last word, and the connection may then
//     drop its queue. Neither holds the writers' mutex while it waits.
//
// Costs: a change copies the buckets it touches (about 1/64 of the channels each, or the
// patterns) and sends one task to each thread (an unsubscription waits for them); a
// publish is one hash lookup plus one glob match per distinct pattern, as in Redis, and
// frames the message once per protocol (RESP2 array, RESP3 push) in use, not once per
// subscriber.
// Messages of one publisher reach each subscriber in the order published: each push
// appends to the subscriber's queue in turn.
//
// Shard channels (SSUBSCRIBE, SPUBLISH) are a namespace of their own, as in a Redis 7.0
// without cluster.
//
// Thread-safety: Publish, SPublish and the read functions from any proactor thread (fiber
// or task), never suspending. Subscribe and Unsubscribe from a fiber only (they wait).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "src/facade/push_queue.h"

namespace damselfly {

enum class ChannelKind : uint8_t { kChannel = 0, kPattern = 1, kShard = 2 };

// Delivers `message` to the subscribers of `channel` and of the patterns matching it.
// Returns the number of receivers (one per subscribing connection and per matching
// pattern a connection subscribes to), counting subscribers on every thread.
size_t Publish(std::string_view channel, std::string_view message);
// The same for a shard channel (SPUBLISH): its subscribers only, no patterns.
size_t SPublish(std::string_view channel, std::string_view message);

// Adds (subscribe) or removes `queue` as subscriber of `names` of `kind`. REQUIRES: each
// name is (subscribe) not yet / (unsubscribe) already subscribed by this queue. Returns
// once every publisher sees the change. `before_visible`, if given, runs just before
// publishers can see the change, with no suspension in between: SUBSCRIBE queues its
// confirmations there, so they precede every message and the connection's writer cannot
// send them (which lets the client publish) before the change is visible.
void ChangeSubscriptions(ChannelKind kind, facade::PushQueue* queue, bool subscribe,
                         const std::vector<std::string>& names,
                         const std::function<void()>& before_visible = nullptr);

// The active channels (with at least one subscriber) of `kind` matching glob `pattern`
// (all when empty). For kPattern: the distinct patterns.
std::vector<std::string> ActiveChannels(ChannelKind kind, std::string_view pattern);
// Subscribers of a channel (no patterns counted), as PUBSUB NUMSUB and SHARDNUMSUB.
size_t NumSubscribers(ChannelKind kind, std::string_view channel);
// Active channels, distinct patterns or shard channels (INFO, PUBSUB NUMPAT).
size_t NumActive(ChannelKind kind);

}  // namespace damselfly
