#include "src/facade/push_queue.h"

#include <glog/logging.h>
#include <sys/socket.h>

#include <mutex>
#include <utility>

#include "helio/base/time.h"
#include "src/facade/client_connection.h"
#include "src/facade/facade_stats.h"

namespace damselfly::facade {

namespace {

// Redis 7.0's defaults: normal 0 0 0, replica 256mb 64mb 60, pubsub 32mb 8mb 60.
struct AtomicLimit {
  std::atomic<uint64_t> hard_bytes, soft_bytes, soft_seconds;
};
AtomicLimit limits[kNumClientClasses] = {
    {0, 0, 0},
    {256ull << 20, 64ull << 20, 60},
    {32ull << 20, 8ull << 20, 60},
};

constexpr size_t kKeptBufferBytes = 4 << 10;

}  // namespace

OutputBufferLimit GetOutputBufferLimit(ClientClass cls) {
  const AtomicLimit& limit = limits[size_t(cls)];
  return {limit.hard_bytes.load(std::memory_order_relaxed),
          limit.soft_bytes.load(std::memory_order_relaxed),
          limit.soft_seconds.load(std::memory_order_relaxed)};
}

void SetOutputBufferLimit(ClientClass cls, OutputBufferLimit limit) {
  AtomicLimit& stored = limits[size_t(cls)];
  stored.hard_bytes.store(limit.hard_bytes, std::memory_order_relaxed);
  stored.soft_bytes.store(limit.soft_bytes, std::memory_order_relaxed);
  stored.soft_seconds.store(limit.soft_seconds, std::memory_order_relaxed);
}

PushQueue::PushQueue(ClientClass cls, uint64_t default_hard_bytes, int socket_fd)
    : class_(uint8_t(cls)), default_hard_bytes_(default_hard_bytes), socket_fd_(socket_fd) {}

bool PushQueue::WithinLimits(uint64_t total) {
  OutputBufferLimit limit = GetOutputBufferLimit(client_class());
  if (limit.hard_bytes == 0 && limit.soft_bytes == 0) {
    limit.hard_bytes = default_hard_bytes_.load(std::memory_order_relaxed);
  }
  if (limit.hard_bytes && total > limit.hard_bytes) return false;
  if (limit.soft_bytes == 0 || total <= limit.soft_bytes) {
    soft_since_s_ = 0;
    return true;
  }
  // Over the soft limit: only for so long, counted in whole seconds of the clock as
  // Redis counts them (its unixtime).
  int64_t now_s = helio::UnixTimeMs() / 1000;
  if (soft_since_s_ == 0) soft_since_s_ = now_s;
  return now_s - soft_since_s_ <= int64_t(limit.soft_seconds);
}

bool PushQueue::Push(std::string_view bytes) {
  std::lock_guard guard(lock_);
  if (stopping_ || closed()) return false;
  // Sends subtract outside the lock, so this may count a few bytes already sent: the
  // check errs on the safe side.
  if (!WithinLimits(queued_bytes() + bytes.size())) {
    // Give the memory back now rather than when the connection is gone.
    std::string().swap(pending_);
    closed_.store(true, std::memory_order_relaxed);
    // The writer may be blocked sending to a client that does not read.
    if (socket_fd_ >= 0) shutdown(socket_fd_, SHUT_RDWR);
    cv_.notify_one();
    return false;
  }
  // The writer waits only while nothing is pending: a wake-up (from another thread, a
  // message to its scheduler) is due only for the first bytes of a batch.
  const bool was_empty = pending_.empty();
  pending_ += bytes;
  queued_bytes_.fetch_add(bytes.size(), std::memory_order_relaxed);
  if (was_empty) cv_.notify_one();
  return true;
}

void PushQueue::Stop() {
  std::lock_guard guard(lock_);
  stopping_ = true;
  cv_.notify_one();
}

std::string PushQueue::TakeQueued() {
  std::lock_guard guard(lock_);
  queued_bytes_.store(0, std::memory_order_relaxed);
  return std::exchange(pending_, {});
}

void PushQueue::CloseOverLimit(ClientConnection* conn) {
  LOG(WARNING) << "Client addr=" << conn->peer_address()
               << " scheduled to be closed ASAP for overcoming of output buffer limits.";
  conn->Kill();
}

void PushQueue::SendLoop(ClientConnection* conn) {
  std::string sending;
  while (true) {
    bool stopping;
    {
      std::unique_lock guard(lock_);
      cv_.wait(guard, [&] { return !pending_.empty() || closed() || stopping_; });
      sending.swap(pending_);
      stopping = stopping_;
    }
    if (closed()) return CloseOverLimit(conn);
    if (sending.empty()) {
      if (stopping) return;
      continue;
    }
    size_t sent = sending.size();
    if (conn->socket()->Send({reinterpret_cast<const uint8_t*>(sending.data()), sent})) {
      return closed() ? CloseOverLimit(conn) : conn->Kill();
    }
    FacadeStats::tlocal()->net_output_bytes += sent;
    queued_bytes_.fetch_sub(sent, std::memory_order_relaxed);
    // The two buffers swap roles at each send, so an idle subscriber keeps both: past a
    // few KiB give the memory back (one allocation per send under load, beside a
    // syscall), as thousands of subscribers may sit idle after a burst.
    if (sending.capacity() > kKeptBufferBytes) {
      std::string().swap(sending);
    } else {
      sending.clear();
    }
  }
}

}  // namespace damselfly::facade
