// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP):
// the waiters parked on keys, and how a write serves them.
//
//  1. Blocking. The command's transaction looks at its keys (locks held); when none can
//     serve it, it registers a Waiter on every shard that holds one of its keys, in the
//     same transaction, so no push can fall between the look and the registration. Then
//     the transaction ends and the connection's fiber sleeps (WaitForServe) until the
//     waiter is served, its timeout passes, CLIENT UNBLOCK, or the client hangs up. No
//     lock is held while it sleeps.
//  2. Ready keys. Each shard's BlockingController listens to its DbSlice's writes while
//     it has waiters and notes the waited keys that changed (a push, a RENAME or MOVE
//     into the key, SWAPDB) as ready: one branch per write when nobody waits.
//  3. Serving. Right after the command, or the last hop of the transaction, that made a
//     key ready finishes on the shard (ServeReady: called by the dispatcher's fast path
//     after each command and by transactions after their last hop, so pushes inside
//     MULTI serve only after EXEC), the shard serves the key's waiters in the order they
//     blocked: while the key holds what the first waiter wants, that waiter is claimed
//     (an atomic state: waiting -> claimed; the timeout, CLIENT UNBLOCK and a hang-up
//     race for the same transition, so exactly one party wins), its pop runs here, on
//     the shard's thread, its result is stored in the waiter and its fiber is woken. No
//     other command runs on the shard between the push and that pop: no other client
//     can take the element the waiter was woken for, and waiters are served FIFO.
//  4. A waiter on keys of several shards is in each shard's queue; the claim decides
//     which shard serves it; the fiber then removes it from every queue (Deregister).
//  A waiter a shard cannot serve from the key (another type: Redis keeps such clients
//  blocked) is passed over and keeps its place. Deletions and flushes make waited keys
//  ready too, but only for waiters that serve missing keys (XREADGROUP's error).
//
// Thread-safety: a BlockingController belongs to its shard's thread. A Waiter is shared
// by its connection's fiber and the shards it is registered on: its state is atomic, its
// result is written only by the party that claimed it, before it notifies the fiber.
#pragma once

#include <atomic>
#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "helio/base/strings.h"
#include "helio/fibers/sync.h"
#include "src/facade/conn_context.h"
#include "src/server/db_slice.h"

namespace damselfly {

class EngineShard;

class Waiter : public boost::intrusive_ref_counter<Waiter, boost::thread_safe_counter> {
 public:
  // How the wait ended.
  enum class State : uint8_t {
    kWaiting,
    kClaimed,       // a shard is serving it (transient: then kServed)
    kServed,        // result() holds what was taken
    kTimedOut,      // its timeout passed, or CLIENT UNBLOCK id TIMEOUT
    kUnblocked,     // CLIENT UNBLOCK id ERROR
    kDisconnected,  // the client hung up
  };

  // Called on the shard's thread with a ready `key` of `db`: returns false, changing
  // nothing, when the key cannot serve this waiter (missing, empty, another type);
  // otherwise calls Claim(), and if that succeeds takes what the waiter wants into its
  // result and returns true. Runs on any shard the waiter is registered on, possibly on
  // two at once: it must only read what it captured until Claim() succeeded.
  using ServeFn = std::function<bool(Waiter* waiter, DbIndex db, std::string_view key)>;

  // What a serve took, for the command's reply.
  struct Result {
    std::string key;
    std::vector<std::string> values;                    // list elements
    std::vector<std::pair<std::string, double>> pairs;  // sorted-set members
    bool wrong_type = false;                            // BLMOVE's destination was not a list
    // BLMOVE whose destination could not be pushed on the serving shard: the fiber
    // pushes values[0] in a transaction of its own.
    bool push_pending = false;
    // An error the command replies instead (XREADGROUP whose group or key went away).
    std::string error;
  };

  // `serves_missing`: the serve is also called for a key that was deleted (XREADGROUP,
  // which Redis then unblocks with an error); other waiters are only offered keys that
  // hold a value.
  Waiter(DbIndex db, ServeFn serve, bool serves_missing = false)
      : db_(db), serve_(std::move(serve)), serves_missing_(serves_missing) {}

  DbIndex db() const { return db_; }
  bool serves_missing() const { return serves_missing_; }
  State state() const { return state_.load(std::memory_order_acquire); }
  // Shard thread, from ServeFn: waiting -> claimed. False when another party won.
  bool Claim() { return Transition(State::kClaimed); }
  // Ends a wait from outside: the timeout, CLIENT UNBLOCK, a hang-up. False when the
  // waiter is no longer waiting (served, or ended by another party).
  bool Cancel(State why);
  // Ends the wait as served by something other than a key (WAIT, by the replicas'
  // acknowledgements): waiting -> served, with an empty result. False when another party
  // won. Any thread.
  bool Settle() {
    if (!Claim()) return false;
    MarkServed();
    return true;
  }

  // The claiming party's result; read it once state() is kServed.
  Result& result() { return result_; }

  // Connection fiber: sleeps until the waiter leaves kWaiting and is settled, or until
  // `deadline` (then cancels it as kTimedOut, unless a shard claimed it first).
  // Returns the final state.
  State WaitUntil(std::chrono::steady_clock::time_point deadline);
  // Connection fiber: sleeps until the waiter is settled (true) or `until` (false,
  // changing nothing: the wait goes on).
  bool SettledBy(std::chrono::steady_clock::time_point until) {
    return settled_.WaitFor(until - std::chrono::steady_clock::now());
  }

 private:
  friend class BlockingController;
  bool Transition(State to) {
    State expected = State::kWaiting;
    return state_.compare_exchange_strong(expected, to, std::memory_order_acq_rel);
  }
  // Shard thread: after a successful ServeFn.
  void MarkServed();

  const DbIndex db_;
  const ServeFn serve_;
  const bool serves_missing_;
  std::atomic<State> state_{State::kWaiting};
  Result result_;
  helio::fibers::Done settled_;
};

using WaiterPtr = boost::intrusive_ptr<Waiter>;

class BlockingController {
 public:
  explicit BlockingController(DbSlice* slice) : slice_(slice) {}
  ~BlockingController();
  BlockingController(const BlockingController&) = delete;
  BlockingController& operator=(const BlockingController&) = delete;

  // Queues `waiter` on `key` of its database (behind the waiters already there).
  void Register(const WaiterPtr& waiter, std::string_view key);
  // Removes `waiter` from the queues of those of `keys` it waits on here.
  void Deregister(const Waiter* waiter, absl::Span<const std::string_view> keys);
  // Serves the waiters of the keys that became ready since the last call (step 3).
  // One branch when no key is ready.
  void ServeReady() {
    if (!ready_.empty()) ServeReadySlow();
  }
  // Waiters queued on this shard (counting a waiter once per key).
  size_t size() const { return count_; }

 private:
  struct Queue {
    std::deque<WaiterPtr> waiters;
    uint32_t serve_missing = 0;  // waiters that serve missing keys
    bool ready = false;
  };
  using KeyMap =
      absl::flat_hash_map<std::string, Queue, helio::StringViewHash, helio::StringViewEq>;

  void OnChange(const KeyChange& change);
  void MarkReady(DbIndex db, std::string_view key);
  void ServeReadySlow();
  // Serves the waiters of one key while it can; drops the ones no longer waiting.
  void ServeKey(DbIndex db, const std::string& key, Queue& queue);
  void Subscribe();
  void Unsubscribe();

  DbSlice* const slice_;
  std::vector<KeyMap> by_db_;  // indexed by DbIndex, grown on demand
  std::vector<std::pair<DbIndex, std::string>> ready_;
  size_t count_ = 0;
  uint64_t listener_id_ = 0;  // non-zero while subscribed
  bool serving_ = false;
};

// The connection side, for the families' blocking handlers.
namespace blocking {

// "timeout is not a float or out of range", "timeout is negative"... as Redis 7.0 parses
// a blocking command's timeout (seconds, fractions allowed). On success, the deadline;
// time_point::max() for 0 (forever).
std::optional<std::chrono::steady_clock::time_point> ParseTimeout(std::string_view arg,
                                                                  std::string* error);

// Whether the command may block: not inside MULTI/EXEC (there it acts as if its timeout
// had passed at once, as in Redis).
bool MayBlock(facade::ConnectionContext* cntx);

// A blocking command's start: parses `timeout` (replying Redis's error and returning
// nullopt when it is bad) and, when the client may block (MayBlock), sets *waiter to a
// new waiter that `make_serve()` serves; otherwise *waiter stays null. Returns the
// deadline.
std::optional<std::chrono::steady_clock::time_point> Start(
    facade::ConnectionContext* cntx, std::string_view timeout,
    absl::FunctionRef<Waiter::ServeFn()> make_serve, WaiterPtr* waiter);

// Connection fiber: waits for `waiter`, registered on the shards of `keys`, until it is
// served or `deadline` passes, also ending on CLIENT UNBLOCK and when the client hangs up
// (then the connection closes after this command). Counts the client as blocked
// meanwhile (INFO blocked_clients, CLIENT LIST flag b), then sends every shard of the keys
// a task that removes the waiter from its queues (without waiting for them), and returns
// the final state.
Waiter::State Wait(facade::ConnectionContext* cntx, const WaiterPtr& waiter,
                   absl::Span<const std::string_view> keys,
                   std::chrono::steady_clock::time_point deadline);

// CLIENT UNBLOCK: ends the wait of client `id` if it is blocked (as timed out, or with
// the UNBLOCKED error). Thread-safe (visits every thread). False when not blocked.
bool Unblock(uint64_t id, bool with_error);
// Whether the connection is blocked now. Its own thread.
bool IsBlocked(const facade::ConnectionContext* cntx);
// Blocked clients on this thread.
size_t BlockedClientsHere();

constexpr char kUnblockedErr[] = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

}  // namespace blocking

}  // namespace damselfly
