// PushQueue: bytes a server sends to one client without being asked (pub/sub messages,
// MONITOR lines), in order with the client's own replies.
//
// The problem: a message published on thread B must reach a subscriber whose connection
// lives on thread A, without a hop and without suspending B (publishers may be proactor
// tasks: keyspace notifications come from shard code), while A's connection fiber keeps
// reading and answering the client's commands, and a client that stops reading must not
// grow the server's memory.
//
// The design: each connection that needs pushes owns a PushQueue, a byte string under a
// spinlock. Any thread appends (Push: one lock, one append, one wake-up); a writer fiber
// on the connection's thread swaps the string out and sends it. While the queue exists
// the connection's replies go through it too (ClientConnection::StartPushes), so the
// client sees the confirmation of SUBSCRIBE before the first message and the reply to a
// PING between the messages that surround it. The queue only exists while the
// connection subscribes or monitors: ordinary connections pay nothing.
//
// Bounds (client-output-buffer-limit, Redis's classes): queued bytes count from the
// append until their send returned, so what the server holds for a client is at most
// its class's hard limit plus one append. Past the hard limit, or over the soft limit
// for longer than its seconds, the queue drops what it holds, refuses further bytes and
// shuts the socket down at once (shutdown(2) is safe from any thread, and the socket
// cannot be closed meanwhile: the connection stops the queue first), which wakes the
// writer blocked in its send and the reader; the writer then ends the connection
// (Redis's "scheduled to be closed ASAP for overcoming of output buffer limits", logged
// once per client). A class whose limits are 0 0 0 is
// unbounded in Redis; here the queue's own `default_hard_bytes` applies then, so a
// monitor (class normal, as in Redis) keeps its 32 MiB cap.
//
// Thread-safety: Push, queued_bytes, set_client_class, set_resp3, resp3, closed are safe
// from any thread and never suspend (usable inside proactor tasks). SendLoop runs on the
// connection's fiber thread; the owner stops it with Stop and joins the fiber. The
// limits (SetOutputBufferLimit) are global, read with relaxed atomics on every push.
#pragma once

#include <atomic>
#include <boost/fiber/condition_variable.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "helio/base/spinlock.h"

namespace damselfly::facade {

class ClientConnection;

// Redis's client classes for client-output-buffer-limit.
enum class ClientClass : uint8_t { kNormal = 0, kReplica = 1, kPubSub = 2 };
inline constexpr size_t kNumClientClasses = 3;

struct OutputBufferLimit {
  uint64_t hard_bytes = 0;    // 0: none
  uint64_t soft_bytes = 0;    // 0: none
  uint64_t soft_seconds = 0;  // how long a client may stay over soft_bytes
};

// The limits in force (Redis 7.0's defaults until set). Any thread.
OutputBufferLimit GetOutputBufferLimit(ClientClass cls);
void SetOutputBufferLimit(ClientClass cls, OutputBufferLimit limit);

class PushQueue {
 public:
  // `default_hard_bytes`: the hard limit when the class has no limit at all (0 0 0);
  // 0 leaves such a queue unbounded. `socket_fd`: the connection's socket, shut down by
  // the push that overflows (-1: none).
  PushQueue(ClientClass cls, uint64_t default_hard_bytes, int socket_fd);

  // Appends `bytes` for the client. False when they were refused: the queue overflowed
  // (the connection is being closed) or was stopped.
  bool Push(std::string_view bytes);

  // Bytes appended and not yet sent (CLIENT LIST omem).
  size_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }
  bool closed() const { return closed_.load(std::memory_order_relaxed); }

  void set_client_class(ClientClass cls) { class_.store(uint8_t(cls), std::memory_order_relaxed); }
  ClientClass client_class() const { return ClientClass(class_.load(std::memory_order_relaxed)); }
  // The protocol publishers format messages in (RESP3 push or RESP2 array).
  void set_resp3(bool resp3) { resp3_.store(resp3, std::memory_order_relaxed); }
  bool resp3() const { return resp3_.load(std::memory_order_relaxed); }
  // A monitor starting on a subscriber's queue brings its own cap (see the constructor).
  void set_default_hard_bytes(uint64_t bytes) {
    default_hard_bytes_.store(bytes, std::memory_order_relaxed);
  }

  // The writer fiber's body: sends what piles up until Stop (after sending what was
  // queued before it) or until the queue overflows or a send fails, which kill `conn`.
  void SendLoop(ClientConnection* conn);
  // Refuses further bytes; SendLoop returns once the bytes queued before were sent.
  void Stop();
  // For a connection without socket (in-process tests): takes what was queued.
  std::string TakeQueued();

 private:
  void CloseOverLimit(ClientConnection* conn);
  // REQUIRES: lock_ held. Whether the limits allow `total` queued bytes.
  bool WithinLimits(uint64_t total);

  helio::SpinLock lock_;
  boost::fibers::condition_variable_any cv_;
  std::string pending_;              // guarded by lock_
  bool stopping_ = false;            // guarded by lock_
  int64_t soft_since_s_ = 0;         // guarded by lock_: when it went over the soft limit; 0: not
  std::atomic<bool> closed_{false};  // overflowed: the connection is to be closed
  std::atomic<size_t> queued_bytes_{0};
  std::atomic<uint8_t> class_;
  std::atomic<bool> resp3_{false};
  std::atomic<uint64_t> default_hard_bytes_;
  const int socket_fd_;
};

}  // namespace damselfly::facade
