#include "src/server/client_pause.h"

#include <algorithm>
#include <boost/fiber/condition_variable.hpp>
#include <chrono>
#include <limits>
#include <mutex>

#include "absl/container/flat_hash_set.h"
#include "helio/base/spinlock.h"
#include "helio/base/time.h"
#include "src/facade/resp_connection.h"
#include "src/server/conn_tx_state.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"
#include "src/server/function_family.h"
#include "src/server/script_family.h"

namespace damselfly {

namespace {

using Clock = std::chrono::steady_clock;

// A deadline further than this is a pause without end in practice; the bound keeps the
// steady-clock arithmetic from overflowing on CLIENT PAUSE 9223372036854775807.
constexpr int64_t kMaxWaitMs = int64_t(10) * 365 * 24 * 3600 * 1000;

// One thread's copy of the pause. Only its thread touches it; the lock is there for the
// condition variable (fibers and tasks of one thread never hold it across a switch).
struct ThreadPause {
  PauseMode mode = PauseMode::kNone;  // mirrored in ClientPause::tl_mode
  int64_t end_ms = 0;
  // end_ms on the steady clock, computed once per change so that every fiber parked on
  // this thread sleeps until the very same time point and they wake in parking order.
  Clock::time_point deadline;
  helio::SpinLock lock;
  boost::fibers::condition_variable_any parked_cv;
  absl::flat_hash_set<const facade::ConnectionContext*> parked;
};

thread_local ThreadPause tl_pause;

// Whether a WRITE pause holds the command: a write or may-replicate command, but not a
// script command whose script declares no-writes (Redis takes a script's flags for the
// command's).
bool WritesForPause(const facade::CommandId* cid, facade::CmdArgList args) {
  if (!(cid->flags & (facade::kCmdWrite | facade::kCmdMayReplicate))) return false;
  if (!(cid->flags & facade::kCmdScript)) return true;
  if (cid->name == "FCALL") return !FunctionFamily::DeclaresNoWrites(args);
  return !ScriptFamily::DeclaresNoWrites(args, /*by_sha=*/cid->name == "EVALSHA");
}

// The same for a command about to run or be queued; EXEC counts as a write when its queue
// has one (Redis looks at the flags of the queued commands).
bool WritesForPause(const facade::CommandId* cid, facade::CmdArgList args,
                    facade::ConnectionContext* cntx) {
  if (WritesForPause(cid, args)) return true;
  ConnTxState* tx = ConnTxState::Find(cntx);
  if (tx == nullptr || !tx->in_multi || cid->name != "EXEC") return false;
  return std::any_of(tx->queued.begin(), tx->queued.end(), [](const auto& queued) {
    std::vector<std::string_view> views(queued.args.begin(), queued.args.end());
    return WritesForPause(queued.cid, views);
  });
}

bool Holds(PauseMode mode, bool writes) { return mode == PauseMode::kAll || writes; }

}  // namespace

constinit thread_local PauseMode ClientPause::tl_mode = PauseMode::kNone;

namespace {

// This thread: sets its copy (mode kNone ends the pause) and wakes the parked fibers,
// which look again: they run, or park again in the same order with the new deadline.
void SetLocal(PauseMode mode, int64_t end_ms, PauseMode* tl_mode) {
  ThreadPause& p = tl_pause;
  std::lock_guard guard(p.lock);
  p.mode = *tl_mode = mode;
  p.end_ms = mode == PauseMode::kNone ? 0 : end_ms;
  int64_t wait_ms = std::clamp<int64_t>(p.end_ms - helio::UnixTimeMs(), 0, kMaxWaitMs);
  p.deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  if (EngineShard* shard = EngineShard::tlocal()) shard->db_slice().KeepExpiredUntil(p.end_ms);
  p.parked_cv.notify_all();
}

}  // namespace

void ClientPause::Pause(PauseMode mode, int64_t end_ms) {
  shard_set->pool()->AwaitOnAll([&](unsigned, helio::io::Proactor*) {
    const ThreadPause& p = tl_pause;
    // A copy past its deadline that nobody looked at yet is over already.
    bool in_force = p.mode != PauseMode::kNone && helio::UnixTimeMs() < p.end_ms;
    SetLocal(in_force ? std::max(p.mode, mode) : mode,
             in_force ? std::max(p.end_ms, end_ms) : end_ms, &tl_mode);
  });
}

void ClientPause::Unpause() {
  shard_set->pool()->AwaitOnAll(
      [&](unsigned, helio::io::Proactor*) { SetLocal(PauseMode::kNone, 0, &tl_mode); });
}

bool ClientPause::MustWaitSlow(const facade::CommandId* cid, facade::CmdArgList args,
                               facade::ConnectionContext* cntx) {
  const ThreadPause& p = tl_pause;
  if (helio::UnixTimeMs() >= p.end_ms) {
    SetLocal(PauseMode::kNone, 0, &tl_mode);
    return false;
  }
  return p.mode == PauseMode::kAll || WritesForPause(cid, args, cntx);
}

void ClientPause::Wait(const facade::CommandId* cid, facade::CmdArgList args,
                       facade::ConnectionContext* cntx) {
  // Looked up once, outside the lock (a script's flags are in a cache under a mutex).
  const bool writes = WritesForPause(cid, args, cntx);
  ThreadPause& p = tl_pause;
  std::unique_lock guard(p.lock);
  p.parked.insert(cntx);
  while (p.mode != PauseMode::kNone && Holds(p.mode, writes) && !cntx->owner()->killed()) {
    if (Clock::now() >= p.deadline || helio::UnixTimeMs() >= p.end_ms) {
      // The first fiber to see the deadline ends this thread's copy for all.
      guard.unlock();
      SetLocal(PauseMode::kNone, 0, &tl_mode);
      guard.lock();
      break;
    }
    p.parked_cv.wait_until(guard, p.deadline);
  }
  p.parked.erase(cntx);
}

void ClientPause::WakeParked() {
  ThreadPause& p = tl_pause;
  std::lock_guard guard(p.lock);
  p.parked_cv.notify_all();
}

size_t ClientPause::ParkedHere() { return tl_pause.parked.size(); }

bool ClientPause::IsParked(const facade::ConnectionContext* cntx) {
  return tl_pause.parked.contains(cntx);
}

}  // namespace damselfly
