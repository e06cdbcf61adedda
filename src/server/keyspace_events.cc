#include "src/server/keyspace_events.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <atomic>
#include <iostream>

#include "absl/container/flat_hash_map.h"
#include "helio/base/strings.h"
#include "src/server/channel_store.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"

DEFINE_string(notify_keyspace_events, "",
              "Keyspace notifications to publish, as Redis's notify-keyspace-events: K "
              "(__keyspace@<db>__ channels) and/or E (__keyevent@<db>__), with classes g $ l s "
              "h z x e t d n m, or A for g$lshzxetd; empty: none");

namespace damselfly {

namespace {

using namespace keyspace_events;

// The classes by character, in the order CONFIG GET prints them (after A's members: K E
// m, as Redis does).
constexpr std::pair<char, uint32_t> kClassChars[] = {
    {'g', kGeneric}, {'$', kString},   {'l', kList},     {'s', kSet},     {'h', kHash},
    {'z', kZSet},    {'x', kExpired},  {'e', kEvicted},  {'t', kStream},  {'d', kModule},
    {'n', kNew},     {'K', kKeyspace}, {'E', kKeyevent}, {'m', kKeyMiss},
};

bool ValidateFlag(const char* flag, const std::string& value) {
  if (ParseKeyspaceEventFlags(value)) return true;
  std::cerr << "--" << flag << ": invalid event class character in '" << value
            << "'; use 'Ag$lshzxeKEtmdn'\n";
  return false;
}
DEFINE_validator(notify_keyspace_events, ValidateFlag);

std::atomic<uint32_t>& FlagsCell() {
  static std::atomic<uint32_t> flags{
      ParseKeyspaceEventFlags(FLAGS_notify_keyspace_events).value_or(0)};
  return flags;
}

}  // namespace

std::optional<uint32_t> ParseKeyspaceEventFlags(std::string_view classes) {
  uint32_t flags = 0;
  for (char c : classes) {
    if (c == 'A') {
      flags |= kAll;
      continue;
    }
    auto it = std::find_if(std::begin(kClassChars), std::end(kClassChars),
                           [c](const auto& entry) { return entry.first == c; });
    if (it == std::end(kClassChars)) return std::nullopt;
    flags |= it->second;
  }
  return flags;
}

std::string KeyspaceEventFlagsString(uint32_t flags) {
  std::string out;
  const bool all = (flags & kAll) == kAll;
  if (all) out += 'A';
  for (const auto& [c, bit] : kClassChars) {
    // With A, n is not printed either (Redis prints A or the classes, never both).
    const bool in_a = bit & (kAll | kNew);
    if ((flags & bit) && !(all && in_a)) out += c;
  }
  return out;
}

uint32_t KeyspaceEventClass(std::string_view event) {
  static const auto* classes = new absl::flat_hash_map<std::string_view, uint32_t>{
      {"new", kNew},
      {"del", kGeneric},
      {"expire", kGeneric},
      {"persist", kGeneric},
      {"rename_from", kGeneric},
      {"rename_to", kGeneric},
      {"move_from", kGeneric},
      {"move_to", kGeneric},
      {"copy_to", kGeneric},
      {"expired", kExpired},
      {"evicted", kEvicted},
      {"set", kString},
      {"setrange", kString},
      {"incrby", kString},
      {"incrbyfloat", kString},
      {"append", kString},
      {"pfadd", kString},
      {"setbit", kString},
      {"lpush", kList},
      {"rpush", kList},
      {"lpop", kList},
      {"rpop", kList},
      {"linsert", kList},
      {"lset", kList},
      {"ltrim", kList},
      {"lrem", kList},
      {"sortstore", kList},
      {"sadd", kSet},
      {"srem", kSet},
      {"spop", kSet},
      {"sinterstore", kSet},
      {"sunionstore", kSet},
      {"sdiffstore", kSet},
      {"xadd", kStream},
      {"xtrim", kStream},
      {"xdel", kStream},
      {"xsetid", kStream},
      {"xgroup-create", kStream},
      {"xgroup-setid", kStream},
      {"xgroup-destroy", kStream},
      {"xgroup-createconsumer", kStream},
      {"xgroup-delconsumer", kStream},
      {"hset", kHash},
      {"hdel", kHash},
      {"hincrby", kHash},
      {"hincrbyfloat", kHash},
      {"zadd", kZSet},
      {"zincr", kZSet},
      {"zrem", kZSet},
      {"zremrangebyscore", kZSet},
      {"zremrangebyrank", kZSet},
      {"zremrangebylex", kZSet},
      {"zpopmin", kZSet},
      {"zpopmax", kZSet},
      {"zunionstore", kZSet},
      {"zinterstore", kZSet},
      {"zdiffstore", kZSet},
      {"zrangestore", kZSet},
      {"georadiusstore", kZSet},
      {"geosearchstore", kZSet},
  };
  auto it = classes->find(event);
  return it == classes->end() ? 0 : it->second;
}

uint32_t KeyspaceEventFlags() { return FlagsCell().load(std::memory_order_relaxed); }

void SetKeyspaceEventFlags(uint32_t flags) {
  FlagsCell().store(flags, std::memory_order_relaxed);
  // Each shard reads the cell when its task runs, so of two racing CONFIG SETs every
  // shard ends with the one stored last.
  shard_set->RunOnAll(
      [](EngineShard* shard) { shard->keyspace_events().SetFlags(KeyspaceEventFlags()); });
}

KeyspaceNotifier::KeyspaceNotifier(DbSlice* slice) : slice_(slice), publish_(&Publish) {}

KeyspaceNotifier::~KeyspaceNotifier() { SetFlags(0); }

void KeyspaceNotifier::set_publisher(Publisher publisher) {
  publish_ = publisher ? publisher : &Publish;
}

void KeyspaceNotifier::SetFlags(uint32_t flags) {
  flags_ = flags;
  const bool channels = flags & (kKeyspace | kKeyevent);
  const bool writes = channels && (flags & (kAll | kNew));
  if (writes && listener_id_ == 0) {
    listener_id_ = slice_->AddChangeListener([this](const KeyChange& change) { OnChange(change); });
  } else if (!writes && listener_id_ != 0) {
    slice_->RemoveChangeListener(listener_id_);
    listener_id_ = 0;
  }
  if (channels && (flags & kKeyMiss)) {
    slice_->SetMissListener(
        [this](DbIndex db, std::string_view key) { Notify(kKeyMiss, "keymiss", db, key); });
  } else {
    slice_->SetMissListener(nullptr);
  }
}

void KeyspaceNotifier::OnChange(const KeyChange& change) {
  if (change.kind == KeyChangeKind::kGroupState) return;
  Notify(KeyspaceEventClass(change.event), change.event, change.db, change.key);
}

void KeyspaceNotifier::Notify(uint32_t event_class, std::string_view event, DbIndex db,
                              std::string_view key) {
  if (!(flags_ & event_class)) return;
  if (flags_ & kKeyspace) {
    channel_.clear();
    helio::StrAppend(&channel_, "__keyspace@", db, "__:", key);
    publish_(channel_, event);
  }
  if (flags_ & kKeyevent) {
    channel_.clear();
    helio::StrAppend(&channel_, "__keyevent@", db, "__:", event);
    publish_(channel_, key);
  }
}

}  // namespace damselfly
