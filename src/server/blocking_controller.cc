#include "src/server/blocking_controller.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

#include <boost/fiber/operations.hpp>

#include "absl/container/flat_hash_map.h"
#include "helio/base/time.h"
#include "src/facade/resp_connection.h"
#include "src/server/conn_tx_state.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"

namespace damselfly {

using std::chrono::steady_clock;

// --- Waiter

bool Waiter::Cancel(State why) {
  if (!Transition(why)) return false;
  settled_.Notify();
  return true;
}

void Waiter::MarkServed() {
  state_.store(State::kServed, std::memory_order_release);
  settled_.Notify();
}

Waiter::State Waiter::WaitUntil(steady_clock::time_point deadline) {
  if (deadline == steady_clock::time_point::max()) {
    settled_.Wait();
  } else if (!settled_.WaitFor(deadline - steady_clock::now())) {
    if (Cancel(State::kTimedOut)) return State::kTimedOut;
    settled_.Wait();  // a shard claimed it first: its result is on the way
  }
  return state();
}

// --- BlockingController

BlockingController::~BlockingController() { Unsubscribe(); }

void BlockingController::Subscribe() {
  listener_id_ = slice_->AddChangeListener([this](const KeyChange& change) { OnChange(change); });
}

void BlockingController::Unsubscribe() {
  if (listener_id_ == 0) return;
  slice_->RemoveChangeListener(listener_id_);
  listener_id_ = 0;
}

void BlockingController::Register(const WaiterPtr& waiter, std::string_view key) {
  const DbIndex db = waiter->db();
  if (by_db_.size() <= db) by_db_.resize(db + 1);
  Queue& queue = by_db_[db][key];
  queue.waiters.push_back(waiter);
  queue.serve_missing += waiter->serves_missing();
  if (count_++ == 0) Subscribe();
}

void BlockingController::Deregister(const Waiter* waiter, absl::Span<const std::string_view> keys) {
  const DbIndex db = waiter->db();
  if (by_db_.size() <= db) return;
  for (std::string_view key : keys) {
    auto it = by_db_[db].find(key);
    if (it == by_db_[db].end()) continue;
    std::deque<WaiterPtr>& waiters = it->second.waiters;
    auto removed = std::remove_if(waiters.begin(), waiters.end(),
                                  [waiter](const WaiterPtr& w) { return w.get() == waiter; });
    count_ -= waiters.end() - removed;
    if (waiter->serves_missing()) it->second.serve_missing -= waiters.end() - removed;
    waiters.erase(removed, waiters.end());
    // A ready key keeps its entry until ServeReady has looked at it.
    if (waiters.empty() && !it->second.ready) by_db_[db].erase(it);
  }
  if (count_ == 0) Unsubscribe();
}

void BlockingController::OnChange(const KeyChange& change) {
  switch (change.kind) {
    case KeyChangeKind::kGroupState:
      return;
    case KeyChangeKind::kSet:
    case KeyChangeKind::kRenamedTo:
      return MarkReady(change.db, change.key);
    case KeyChangeKind::kSwapDb:
      // Called before the swap: every waited key of either database may hold a value
      // afterwards.
      for (DbIndex db : {change.db, change.other_db}) {
        if (by_db_.size() <= db) continue;
        for (auto& [key, queue] : by_db_[db]) MarkReady(db, key);
      }
      return;
    case KeyChangeKind::kFlushDb:  // called before the flush: every waited key goes
      if (by_db_.size() <= change.db) return;
      for (auto& [key, queue] : by_db_[change.db]) MarkReady(change.db, key);
      return;
    default:  // a deletion: only waiters that serve missing keys can act on it
      return MarkReady(change.db, change.key);
  }
}

void BlockingController::MarkReady(DbIndex db, std::string_view key) {
  if (by_db_.size() <= db) return;
  auto it = by_db_[db].find(key);
  if (it == by_db_[db].end() || it->second.ready) return;
  it->second.ready = true;
  ready_.emplace_back(db, it->first);
}

void BlockingController::ServeReadySlow() {
  // A serve may make more keys ready (BLMOVE pushes to its destination): serve until
  // none is left. A serve running inside another (a shard op that calls ServeReady)
  // leaves the work to the outer loop.
  if (serving_) return;
  serving_ = true;
  std::vector<std::pair<DbIndex, std::string>> batch;
  while (!ready_.empty()) {
    batch.swap(ready_);
    for (const auto& [db, key] : batch) {
      auto it = by_db_[db].find(key);
      if (it == by_db_[db].end()) continue;
      it->second.ready = false;
      ServeKey(db, it->first, it->second);
      if (it->second.waiters.empty() && !it->second.ready) by_db_[db].erase(it);
    }
    batch.clear();
  }
  serving_ = false;
  if (count_ == 0) Unsubscribe();
}

void BlockingController::ServeKey(DbIndex db, const std::string& key, Queue& queue) {
  std::deque<WaiterPtr>& waiters = queue.waiters;
  size_t i = 0;
  while (i < waiters.size()) {
    Waiter* waiter = waiters[i].get();
    if (!waiter->serves_missing() && slice_->Find(db, key) == nullptr) {
      if (queue.serve_missing == 0) break;
      ++i;  // nothing to take; keeps its place
      continue;
    }
    bool served = false;
    if (waiter->state() == Waiter::State::kWaiting) {
      // What the serve takes is its own change, not that of a command running around it.
      JournalScope journal(nullptr, {}, db);
      served = waiter->serve_(waiter, db, key);
    }
    if (served) waiter->MarkServed();
    if (served || waiter->state() != Waiter::State::kWaiting) {
      queue.serve_missing -= waiter->serves_missing();
      waiters.erase(waiters.begin() + i);
      --count_;
    } else {
      ++i;  // cannot take from this key (another type): keeps its place
    }
  }
}

// --- the connection side

namespace blocking {

namespace {

// How long a wait goes without a hang-up watch (Wait, below).
constexpr std::chrono::milliseconds kHangupWatchDelay{1};

// This thread's blocked connections by client id.
absl::flat_hash_map<uint64_t, WaiterPtr>& BlockedHere() {
  static thread_local absl::flat_hash_map<uint64_t, WaiterPtr> blocked;
  return blocked;
}

}  // namespace

std::optional<steady_clock::time_point> ParseTimeout(std::string_view arg, std::string* error) {
  // Redis reads the seconds as a long double (no leading space, no nan), then rounds the
  // milliseconds up to an integer.
  std::string text(arg);
  char* end = nullptr;
  errno = 0;
  long double seconds = text.empty() ? 0 : std::strtold(text.c_str(), &end);
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) || *end != '\0' ||
      std::isnan(seconds) ||
      (errno == ERANGE && (seconds == HUGE_VALL || seconds == -HUGE_VALL || seconds == 0))) {
    *error = "ERR timeout is not a float or out of range";
    return std::nullopt;
  }
  const long double ms = seconds * 1000.0L;
  // Redis converts to a long long, which on x86 turns anything past its range (inf
  // too) into LLONG_MIN: a negative timeout.
  if (ms <= -1.0L || ms >= 9223372036854775808.0L) {  // (-1, 0) rounds up to 0
    *error = "ERR timeout is negative";
    return std::nullopt;
  }
  // Redis adds the clock to the milliseconds and refuses a sum that would overflow.
  const long double now_ms = static_cast<long double>(helio::UnixTimeMs());
  if (ms >= static_cast<long double>(LLONG_MAX) - now_ms) {
    *error = "ERR timeout is out of range";
    return std::nullopt;
  }
  // Up: 0.0001 waits 1 ms, where truncating would make it wait forever.
  const int64_t whole_ms = static_cast<int64_t>(std::ceil(ms));
  if (whole_ms == 0) return steady_clock::time_point::max();
  // Beyond a century the wait is forever in practice; keeps the time_point in range.
  constexpr int64_t kCenturyMs = int64_t{100} * 365 * 24 * 3600 * 1000;
  if (whole_ms > kCenturyMs) return steady_clock::time_point::max();
  return steady_clock::now() + std::chrono::milliseconds(whole_ms);
}

bool MayBlock(facade::ConnectionContext* cntx) {
  ConnTxState* state = ConnTxState::Find(cntx);
  return !(state && state->executing);
}

std::optional<steady_clock::time_point> Start(facade::ConnectionContext* cntx,
                                              std::string_view timeout,
                                              absl::FunctionRef<Waiter::ServeFn()> make_serve,
                                              WaiterPtr* waiter) {
  std::string error;
  std::optional<steady_clock::time_point> deadline = ParseTimeout(timeout, &error);
  if (!deadline) {
    cntx->reply_builder()->SendError(error);
    return std::nullopt;
  }
  if (MayBlock(cntx)) *waiter = new Waiter(cntx->db_index, make_serve());
  return deadline;
}

Waiter::State Wait(facade::ConnectionContext* cntx, const WaiterPtr& waiter,
                   absl::Span<const std::string_view> keys, steady_clock::time_point deadline) {
  facade::RespConnection* conn = cntx->owner();
  BlockedHere()[cntx->id()] = waiter;
  // The replies of the commands pipelined before this one leave before it waits, but
  // after those of the clients on this thread they served: the yield lets a BLPOP that
  // our LPUSH woke send first. Redis also writes the client it served last first. In a
  // chain (BLPOP/LPUSH ping-pong: LPUSH ping + BLPOP pong woke a BLPOP ping) the woken
  // client's reply is the one the chain waits for; sent second, it cost the clients an
  // extra wake-up (ping-pong p50 1.13x redis-server's before, docs/benchmarks.md).
  boost::this_fiber::yield();
  if (!cntx->FlushBeforeWait()) waiter->Cancel(Waiter::State::kDisconnected);
  // A client that leaves must not take an element: a hang-up cancels the wait. The
  // watch (an io_uring poll armed and cancelled, and a fiber) starts only once the wait
  // has lasted kHangupWatchDelay: a busy queue's waits mostly end sooner (a BLPOP/LPUSH
  // ping-pong waits ~80 us). A client that hangs up in that first millisecond may still
  // be served, as in Redis when the push is processed before the hang-up's read event;
  // the element is then lost with it.
  bool watching = false;
  if (conn && !waiter->SettledBy(std::min(deadline, steady_clock::now() + kHangupWatchDelay)) &&
      steady_clock::now() < deadline) {
    conn->StartHangupWatch([waiter] { waiter->Cancel(Waiter::State::kDisconnected); });
    watching = true;
  }
  Waiter::State state = waiter->WaitUntil(deadline);
  if (watching) conn->StopHangupWatch();
  BlockedHere().erase(cntx->id());
  // The waiter leaves the other queues without holding up the reply: a task per shard
  // owns a copy of the keys and a reference to the waiter.
  std::vector<bool> shards(shard_set->size(), false);
  for (std::string_view key : keys) shards[shard_set->ShardOf(key)] = true;
  for (ShardId shard = 0; shard < shards.size(); ++shard) {
    if (!shards[shard]) continue;
    std::vector<std::string> owned;
    for (std::string_view key : keys) {
      if (shard_set->ShardOf(key) == shard) owned.emplace_back(key);
    }
    auto deregister = [waiter, owned = std::move(owned)] {
      std::vector<std::string_view> views(owned.begin(), owned.end());
      if (EngineShard* shard = EngineShard::tlocal())
        shard->blocking().Deregister(waiter.get(), views);
    };
    if (shard_set->IsLocal(shard)) {
      deregister();
    } else {
      shard_set->pool()->at(shard)->Dispatch(std::move(deregister));
    }
  }
  if (state == Waiter::State::kDisconnected) cntx->close_after_reply = true;
  return state;
}

bool Unblock(uint64_t id, bool with_error) {
  std::atomic<bool> unblocked{false};
  shard_set->pool()->AwaitOnAll([&](unsigned, helio::io::Proactor*) {
    auto it = BlockedHere().find(id);
    if (it == BlockedHere().end()) return;
    if (it->second->Cancel(with_error ? Waiter::State::kUnblocked : Waiter::State::kTimedOut)) {
      unblocked.store(true, std::memory_order_relaxed);
    }
  });
  return unblocked.load(std::memory_order_relaxed);
}

bool IsBlocked(const facade::ConnectionContext* cntx) { return BlockedHere().contains(cntx->id()); }

size_t BlockedClientsHere() { return BlockedHere().size(); }

}  // namespace blocking

}  // namespace damselfly
