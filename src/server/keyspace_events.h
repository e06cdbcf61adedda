// Keyspace notifications (Redis's notify-keyspace-events): when a key changes, Redis
// publishes `__keyspace@<db>__:<key>` with the event's name as the message (class K) and
// `__keyevent@<db>__:<event>` with the key (class E), for the events of the classes the
// setting enables:
//
//   g generic (del, expire, persist, rename_*, move_*, copy_to)   $ strings    l lists
//   s sets   h hashes   z sorted sets   x expired   e evicted   t streams   d modules
//   n new keys (not in A)   m reads of missing keys, "keymiss" (not in A)   A: g$lshzxetd
//
// Where the events come from: every change of a key is reported by its shard's DbSlice
// (the write path, db_slice.h) with Redis's event name, in Redis's order. A shard's
// KeyspaceNotifier subscribes to it only while the setting can publish something (K or E
// and a class), so with notifications off (the default) writes pay nothing; reads of
// missing keys go to it only while class m is on. It finds each event's class, formats
// the two messages and publishes them (pub/sub's Publish, channel_store.h, which never
// suspends and reaches subscribers on every thread), on the shard's thread, as the command
// (or the expiry) happens: inside MULTI/EXEC, as each command runs; for active expiry,
// from the shard's expiry fiber, without suspending.
//
// Thread-safety: the flag functions are safe from any thread (SetKeyspaceEventFlags from
// a fiber); a KeyspaceNotifier belongs to its shard's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/server/db_slice.h"

namespace damselfly {

// The classes, as Redis's bits.
namespace keyspace_events {
inline constexpr uint32_t kKeyspace = 1u << 0;  // K
inline constexpr uint32_t kKeyevent = 1u << 1;  // E
inline constexpr uint32_t kGeneric = 1u << 2;   // g
inline constexpr uint32_t kString = 1u << 3;    // $
inline constexpr uint32_t kList = 1u << 4;      // l
inline constexpr uint32_t kSet = 1u << 5;       // s
inline constexpr uint32_t kHash = 1u << 6;      // h
inline constexpr uint32_t kZSet = 1u << 7;      // z
inline constexpr uint32_t kExpired = 1u << 8;   // x
inline constexpr uint32_t kEvicted = 1u << 9;   // e
inline constexpr uint32_t kStream = 1u << 10;   // t
inline constexpr uint32_t kKeyMiss = 1u << 11;  // m
inline constexpr uint32_t kModule = 1u << 13;   // d
inline constexpr uint32_t kNew = 1u << 14;      // n
// A: every class but m and n.
inline constexpr uint32_t kAll =
    kGeneric | kString | kList | kSet | kHash | kZSet | kExpired | kEvicted | kStream | kModule;
}  // namespace keyspace_events

// Parses a notify-keyspace-events value ("KEA", "Elg$"; "" turns them off); nullopt when
// a character names no class.
std::optional<uint32_t> ParseKeyspaceEventFlags(std::string_view classes);
// The value as CONFIG GET shows it, in Redis's order: "AKE" for "KEA".
std::string KeyspaceEventFlagsString(uint32_t flags);
// The class of an event name ("lpush": kList); 0 for the write path's events that Redis
// does not notify ("flushdb", "swapdb").
uint32_t KeyspaceEventClass(std::string_view event);

// The server's setting: --notify_keyspace_events at start-up, CONFIG SET later.
uint32_t KeyspaceEventFlags();
// Changes the setting and applies it on every shard before returning. Fiber context.
void SetKeyspaceEventFlags(uint32_t flags);

class KeyspaceNotifier {
 public:
  // Publishes `message` on `channel` and returns the number of receivers, as pub/sub's
  // Publish (channel_store.h) does. Called on the shard's thread as events happen; must
  // not suspend.
  using Publisher = size_t (*)(std::string_view channel, std::string_view message);

  explicit KeyspaceNotifier(DbSlice* slice);
  ~KeyspaceNotifier();
  KeyspaceNotifier(const KeyspaceNotifier&) = delete;
  KeyspaceNotifier& operator=(const KeyspaceNotifier&) = delete;

  // Notifies the events `flags` enables from now on: listens to the slice's writes only
  // while they can publish something, and to its misses only with class m.
  void SetFlags(uint32_t flags);
  // Where messages go: pub/sub's Publish, unless a test records them (nullptr: Publish).
  void set_publisher(Publisher publisher);

 private:
  void OnChange(const KeyChange& change);
  // Publishes `event` of `key` on the channels the flags enable, if they enable its class.
  void Notify(uint32_t event_class, std::string_view event, DbIndex db, std::string_view key);

  DbSlice* const slice_;
  uint32_t flags_ = 0;
  uint64_t listener_id_ = 0;  // non-zero while subscribed to the writes
  Publisher publish_;
  std::string channel_;  // reused between messages
};

}  // namespace damselfly
