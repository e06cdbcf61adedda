#include "src/facade/client_connection.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "helio/base/time.h"
#include "helio/fibers/fiber.h"
#include "helio/net/socket_address.h"
#include "src/facade/facade_stats.h"

DEFINE_uint64(max_client_query_buffer, 1ull << 30,
              "A client whose unprocessed input grows past this many bytes is disconnected");

namespace damselfly::facade {

namespace {

constexpr size_t kInitialBufferBytes = 16 << 10;
constexpr size_t kMinReadBytes = 4 << 10;

std::string AddressOf(int fd, bool peer) {
  sockaddr_storage storage{};
  socklen_t len = sizeof(storage);
  auto* addr = reinterpret_cast<sockaddr*>(&storage);
  if ((peer ? getpeername(fd, addr, &len) : getsockname(fd, addr, &len)) != 0) return "";
  std::string text = helio::net::SocketAddress::FromSockaddr(addr, len).ToString();
  // Redis prints IPv6 peers without brackets: "::1:6379".
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    text = text.substr(1, close - 1) + text.substr(close + 1);
  }
  return text;
}

}  // namespace

ClientConnection::~ClientConnection() = default;

void ClientConnection::HandleRequests() {
  peer_address_ = AddressOf(socket()->fd(), true);
  local_address_ = AddressOf(socket()->fd(), false);
  created_at_ms_ = last_active_ms_ = helio::UnixTimeMs();
  OnOpen();

  while (!killed_) {
    // Room for the rest of a big request, but at most as much again as has arrived: a
    // client must send the bytes it declares before we hold memory for them, and
    // doubling keeps the total copying linear.
    size_t used = end_ - start_, needed = BytesNeeded();
    size_t missing = needed > used ? needed - used : 0;
    EnsureSpace(std::max(kMinReadBytes, std::min(missing, used)));
    auto received = socket()->Recv({reinterpret_cast<uint8_t*>(&buffer_[end_]), capacity_ - end_});
    if (!received.ok() || *received == 0) break;
    end_ += *received;
    FacadeStats::tlocal()->net_input_bytes += *received;
    last_active_ms_ = helio::UnixTimeMs();
    batch_start_ = start_;
    in_batch_ = true;
    bool keep_open = ProcessInput();
    in_batch_ = false;
    if (!Flush() || !keep_open) break;
    CompactBuffer();
    if (end_ - start_ > FLAGS_max_client_query_buffer) {
      LOG(WARNING) << "closing client " << peer_address_ << ": query buffer over "
                   << FLAGS_max_client_query_buffer << " bytes";
      break;
    }
  }
  OnClose();
  StopPushes();  // the services stopped theirs in OnClose; this joins a writer left over
}

bool ClientConnection::Flush() {
  std::string_view out = PendingOutput();
  if (out.empty()) return true;
  unsent_output_bytes_ = out.size();
  output_capacity_ = OutputCapacity();
  // No socket: an in-process test connection (src/server/test_utils.h), whose owner
  // reads all replies from the buffer (and the pushes from the queue).
  if (socket() == nullptr) return true;
  if (push_queue_) {
    bool ok = push_queue_->Push(out);
    unsent_output_bytes_ = 0;
    ClearOutput();
    return ok;
  }
  std::error_code ec = socket()->Send({reinterpret_cast<const uint8_t*>(out.data()), out.size()});
  unsent_output_bytes_ = 0;
  FacadeStats::tlocal()->net_output_bytes += out.size();
  ClearOutput();
  return !ec;
}

PushQueue* ClientConnection::StartPushes(ClientClass cls, uint64_t default_hard_bytes) {
  if (push_queue_) {
    if (default_hard_bytes) push_queue_->set_default_hard_bytes(default_hard_bytes);
    return push_queue_.get();
  }
  Flush();  // what was answered before goes first
  push_queue_ =
      std::make_unique<PushQueue>(cls, default_hard_bytes, socket() ? socket()->fd() : -1);
  if (socket() != nullptr) {
    push_writer_ = helio::fibers::Launch([this] { push_queue_->SendLoop(this); });
  }
  return push_queue_.get();
}

void ClientConnection::StopPushes() {
  if (!push_queue_) return;
  Flush();
  push_queue_->Stop();
  if (push_writer_.joinable()) push_writer_.join();
  push_queue_.reset();
}

void ClientConnection::StartHangupWatch(std::function<void()> on_hangup) {
  if (socket() == nullptr || killed_) return;
  // Waiting costs one poll request; the stack only has to hold that wait.
  constexpr size_t kWatchStackBytes = 16 * 1024;
  hangup_watch_stopping_ = false;
  hangup_watch_ = helio::fibers::Launch(
      [this, on_hangup = std::move(on_hangup)] {
        // Stop may come before this fiber first runs.
        if (!hangup_watch_stopping_ && socket()->WaitHangup()) on_hangup();
      },
      kWatchStackBytes);
}

void ClientConnection::StopHangupWatch() {
  if (!hangup_watch_.joinable()) return;
  hangup_watch_stopping_ = true;
  socket()->CancelHangupWait();
  hangup_watch_.join();
}

void ClientConnection::Kill() {
  killed_ = true;
  if (socket() && socket()->is_open()) {
    socket()->Shutdown(SHUT_RDWR);
    socket()->CancelIo();
  }
}

void ClientConnection::EnsureSpace(size_t min_free) {
  if (capacity_ - end_ >= min_free) return;
  size_t used = end_ - start_;
  if (capacity_ - used >= min_free && start_ > 0) {  // room once compacted
    memmove(&buffer_[0], &buffer_[start_], used);
    start_ = 0;
    end_ = used;
    return;
  }
  size_t capacity = std::max(kInitialBufferBytes, capacity_ * 2);
  while (capacity - used < min_free) capacity *= 2;
  auto bigger = std::make_unique_for_overwrite<char[]>(capacity);
  if (used) memcpy(&bigger[0], &buffer_[start_], used);
  buffer_ = std::move(bigger);
  capacity_ = capacity;
  start_ = 0;
  end_ = used;
}

void ClientConnection::CompactBuffer() {
  if (end_ != start_) return;
  start_ = end_ = 0;
  // A big request grew the buffer: give the memory back once it is processed.
  if (capacity_ > 4 * kInitialBufferBytes) {
    buffer_ = std::make_unique_for_overwrite<char[]>(kInitialBufferBytes);
    capacity_ = kInitialBufferBytes;
  }
}

}  // namespace damselfly::facade
