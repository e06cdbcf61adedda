// ClientPause: CLIENT PAUSE and CLIENT UNPAUSE, with Redis 7.0's semantics.
//
// A pause holds client commands back until it ends (CLIENT UNPAUSE, or its deadline): in
// ALL mode every command, in WRITE mode the write and may-replicate commands (PUBLISH,
// PFCOUNT; EVAL, EVALSHA and FCALL unless their script declares no-writes) and an EXEC
// whose queue holds one. A command is held after validation (a wrong one is still refused at once) and
// before MULTI queues it, as Redis does. A second pause combines with the one in force:
// the stronger mode and the later deadline win. While a pause lasts the dataset stays as
// it is: keys past their deadline read as missing but are not deleted, and active expiry
// waits (DbSlice::KeepExpiredUntil).
//
// The pause is process-wide, but every proactor thread keeps its own copy so that the
// dispatch path reads a thread-local mode, with one branch and no lock, before each
// command. Pause() and Unpause() update every thread (one task each) before returning.
// A copy's deadline is checked lazily: by the dispatch path when its mode is set, by
// the fibers parked on it (they sleep until it), and by the shard's DbSlice.
//
// A held connection first sends the replies it already has, then parks its fiber on its
// thread's wait queue (no polling, the thread keeps running others). Parked fibers of a
// thread resume in the order they parked.
//
// Thread-safety: Pause and Unpause from a fiber or a plain thread, never from a proactor
// task; the rest on a proactor thread, for that thread's copy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"

namespace damselfly {

// Ordered: a stronger pause wins when two combine.
enum class PauseMode : uint8_t { kNone = 0, kWrite = 1, kAll = 2 };

class ClientPause {
 public:
  // Pauses clients until the unix time end_ms, combined with a pause in force.
  static void Pause(PauseMode mode, int64_t end_ms);
  // Ends the pause in force (if any) and resumes the parked connections.
  static void Unpause();

  // Connection fiber: whether `cid` (validated, about to run or be queued) must wait for
  // the pause to end. One branch when this thread has no pause.
  static bool MustWait(const facade::CommandId* cid, facade::CmdArgList args,
                       facade::ConnectionContext* cntx) {
    if (tl_mode == PauseMode::kNone) [[likely]]
      return false;
    return MustWaitSlow(cid, args, cntx);
  }
  // Connection fiber: parks until `cid` may run (the pause ended or became WRITE-only
  // for a read) or the connection was killed. REQUIRES: MustWait(cid, args, cntx) was
  // true.
  static void Wait(const facade::CommandId* cid, facade::CmdArgList args,
                   facade::ConnectionContext* cntx);
  // This thread (a task or a fiber): wakes its parked fibers to look at their
  // connection again; a killed one leaves, the others park again in the same order.
  static void WakeParked();
  // This thread's parked connections (INFO blocked_clients).
  static size_t ParkedHere();
  // Whether the connection is parked (CLIENT LIST flag b). Its thread only.
  static bool IsParked(const facade::ConnectionContext* cntx);

 private:
  static bool MustWaitSlow(const facade::CommandId* cid, facade::CmdArgList args,
                           facade::ConnectionContext* cntx);

  // This thread's mode, the only part the dispatch path reads.
  static constinit thread_local PauseMode tl_mode;
};

}  // namespace damselfly
