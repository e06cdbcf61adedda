#include "src/server/channel_store.h"

#include <algorithm>
#include <atomic>
#include <memory>
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

// The store is split into buckets by the channel's hash, each an immutable map behind its
// own atomic pointer, so a change copies only the buckets its names fall in (1/64 of the
// channels each), not every channel. Patterns stay one map: each publish reads them all.
constexpr size_t kBuckets = 64;

const ChannelMap empty_map;
std::atomic<const ChannelMap*> maps[3][kBuckets];  // by ChannelKind; patterns use [1][0]

// The top bits: the low ones pick the slot inside absl's table.
size_t BucketOf(ChannelKind kind, std::string_view name) {
  if (kind == ChannelKind::kPattern) return 0;
  return helio::StringViewHash{}(name) >> (64 - 6);
}
static_assert(kBuckets == 1 << 6);

const ChannelMap& Map(ChannelKind kind, size_t bucket) {
  const ChannelMap* map = maps[size_t(kind)][bucket].load(std::memory_order_acquire);
  return map ? *map : empty_map;
}

size_t NumBuckets(ChannelKind kind) { return kind == ChannelKind::kPattern ? 1 : kBuckets; }

// Maps replaced by a change, freed when the last reference goes.
struct RetiredMaps {
  std::vector<const ChannelMap*> maps;
  ~RetiredMaps() {
    for (const ChannelMap* map : maps) delete map;
  }
};

boost::fibers::mutex& WritersMutex() {
  static boost::fibers::mutex mutex;
  return mutex;
}

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
  size_t receivers = 0;
  const ChannelMap& channels = Map(ChannelKind::kChannel, BucketOf(ChannelKind::kChannel, channel));
  if (auto it = channels.find(channel); it != channels.end()) {
    Framed framed{"message", channel, message};
    receivers += Deliver(it->second, &framed);
  }
  for (const auto& [pattern, subscribers] : Map(ChannelKind::kPattern, 0)) {
    if (!core::GlobMatch(pattern, channel)) continue;
    Framed framed{"pmessage", pattern, channel, message};
    receivers += Deliver(subscribers, &framed);
  }
  return receivers;
}

size_t SPublish(std::string_view channel, std::string_view message) {
  const ChannelMap& channels = Map(ChannelKind::kShard, BucketOf(ChannelKind::kShard, channel));
  auto it = channels.find(channel);
  if (it == channels.end()) return 0;
  Framed framed{"smessage", channel, message};
  return Deliver(it->second, &framed);
}

void ChangeSubscriptions(ChannelKind kind, PushQueue* queue, bool subscribe,
                         const std::vector<std::string>& names,
                         const std::function<void()>& before_visible) {
  if (names.empty()) {
    if (before_visible) before_visible();
    return;
  }
  std::unique_lock guard(WritersMutex());  // may suspend: before anything is queued
  std::atomic<const ChannelMap*>* current = maps[size_t(kind)];
  ChannelMap* copies[kBuckets] = {};
  for (const std::string& name : names) {
    size_t bucket = BucketOf(kind, name);
    if (copies[bucket] == nullptr) copies[bucket] = new ChannelMap(Map(kind, bucket));
    ChannelMap& map = *copies[bucket];
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
  if (before_visible) before_visible();
  auto old = std::make_shared<RetiredMaps>();
  for (size_t bucket = 0; bucket < kBuckets; ++bucket) {
    if (copies[bucket] == nullptr) continue;
    old->maps.push_back(current[bucket].exchange(copies[bucket], std::memory_order_acq_rel));
  }
  // The next writer copies the new maps: only publishers may still read the old ones.
  guard.unlock();
  helio::io::ProactorPool* pool = shard_set->pool();
  if (subscribe) {
    // Nothing waits for the old maps to go: a task on every thread holds them, and the
    // last task to finish frees them (every publisher on its thread has let go of them
    // by then, see the header). The subscriber's next command runs at once.
    for (unsigned i = 0; i < pool->size(); ++i) pool->at(i)->Dispatch([old] {});
  } else {
    // The confirmation waits: after it, no publisher may still hold the queue.
    pool->AwaitOnAll([](unsigned, helio::io::Proactor*) {});
  }
}

std::vector<std::string> ActiveChannels(ChannelKind kind, std::string_view pattern) {
  std::vector<std::string> names;
  for (size_t bucket = 0; bucket < NumBuckets(kind); ++bucket) {
    for (const auto& [name, subscribers] : Map(kind, bucket)) {
      if (pattern.empty() || core::GlobMatch(pattern, name)) names.push_back(name);
    }
  }
  return names;
}

size_t NumSubscribers(ChannelKind kind, std::string_view channel) {
  const ChannelMap& map = Map(kind, BucketOf(kind, channel));
  auto it = map.find(channel);
  return it == map.end() ? 0 : it->second.size();
}

size_t NumActive(ChannelKind kind) {
  size_t active = 0;
  for (size_t bucket = 0; bucket < NumBuckets(kind); ++bucket) active += Map(kind, bucket).size();
  return active;
}

}  // namespace damselfly
