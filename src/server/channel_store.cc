#include "src/server/channel_store.h"

#include <algorithm>
#include <atomic>
#include <boost/fiber/mutex.hpp>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "helio/base/strings.h"
#include "src/core/glob_matcher.h"
#include "src/server/engine_shard_set.h"

namespace damselfly {

namespace {

using facade::PushQueue;
using Subscribers = std::vector<PushQueue*>;
using ChannelMap =
    absl::flat_hash_map<std::string, Subscribers, helio::StringViewHash, helio::StringViewEq>;

// One immutable snapshot (see the header): a map per kind.
struct Snapshot {
  ChannelMap maps[3];
  const ChannelMap& of(ChannelKind kind) const { return maps[size_t(kind)]; }
};

const Snapshot empty_snapshot;
std::atomic<const Snapshot*> current{&empty_snapshot};

boost::fibers::mutex& WritersMutex() {
  static boost::fibers::mutex mutex;
  return mutex;
}

const Snapshot& Current() { return *current.load(std::memory_order_acquire); }

// A message as one subscriber protocol frames it: RESP2 "*n" array or RESP3 ">n" push of
// bulk strings. Made at most once per protocol per publish.
class Framed {
 public:
  Framed(std::string_view kind, std::string_view channel, std::string_view message)
      : parts_{kind, channel, message}, count_(3) {}
  Framed(std::string_view kind, std::string_view pattern, std::string_view channel,
         std::string_view message)
      : parts_{kind, pattern, channel, message}, count_(4) {}

  std::string_view For(const PushQueue* queue) {
    bool resp3 = queue->resp3();
    std::string& bytes = resp3 ? resp3_ : resp2_;
    if (bytes.empty()) {
      helio::StrAppend(&bytes, resp3 ? ">" : "*", count_, "\r\n");
      for (size_t i = 0; i < count_; ++i) {
        helio::StrAppend(&bytes, "$", parts_[i].size(), "\r\n", parts_[i], "\r\n");
      }
    }
    return bytes;
  }

 private:
  std::string_view parts_[4];
  size_t count_;
  std::string resp2_, resp3_;
};

size_t Deliver(const Subscribers& subscribers, Framed* message) {
  for (PushQueue* queue : subscribers) queue->Push(message->For(queue));
  return subscribers.size();
}

}  // namespace

size_t Publish(std::string_view channel, std::string_view message) {
  const Snapshot& snapshot = Current();
  size_t receivers = 0;
  const ChannelMap& channels = snapshot.of(ChannelKind::kChannel);
  if (auto it = channels.find(channel); it != channels.end()) {
    Framed framed{"message", channel, message};
    receivers += Deliver(it->second, &framed);
  }
  for (const auto& [pattern, subscribers] : snapshot.of(ChannelKind::kPattern)) {
    if (!core::GlobMatch(pattern, channel)) continue;
    Framed framed{"pmessage", pattern, channel, message};
    receivers += Deliver(subscribers, &framed);
  }
  return receivers;
}

size_t SPublish(std::string_view channel, std::string_view message) {
  const ChannelMap& channels = Current().of(ChannelKind::kShard);
  auto it = channels.find(channel);
  if (it == channels.end()) return 0;
  Framed framed{"smessage", channel, message};
  return Deliver(it->second, &framed);
}

void ChangeSubscriptions(ChannelKind kind, PushQueue* queue, bool subscribe,
                         const std::vector<std::string>& names) {
  if (names.empty()) return;
  std::lock_guard guard(WritersMutex());
  const Snapshot* old = current.load(std::memory_order_relaxed);
  auto* next = new Snapshot(*old);
  ChannelMap& map = next->maps[size_t(kind)];
  for (const std::string& name : names) {
    if (subscribe) {
      map[name].push_back(queue);
      continue;
    }
    auto it = map.find(name);
    if (it == map.end()) continue;
    Subscribers& subscribers = it->second;
    subscribers.erase(std::remove(subscribers.begin(), subscribers.end(), queue),
                      subscribers.end());
    if (subscribers.empty()) map.erase(it);
  }
  current.store(next, std::memory_order_release);
  // Every thread passes a point where no publisher holds `old` (see the header).
  shard_set->pool()->AwaitOnAll([](unsigned, helio::io::Proactor*) {});
  if (old != &empty_snapshot) delete old;
}

std::vector<std::string> ActiveChannels(ChannelKind kind, std::string_view pattern) {
  std::vector<std::string> names;
  for (const auto& [name, subscribers] : Current().of(kind)) {
    if (pattern.empty() || core::GlobMatch(pattern, name)) names.push_back(name);
  }
  return names;
}

size_t NumSubscribers(ChannelKind kind, std::string_view channel) {
  const ChannelMap& map = Current().of(kind);
  auto it = map.find(channel);
  return it == map.end() ? 0 : it->second.size();
}

size_t NumActive(ChannelKind kind) { return Current().of(kind).size(); }

}  // namespace damselfly
