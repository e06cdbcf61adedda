#include "src/facade/client_connection.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "helio/base/time.h"
#include "helio/fibers/fiber.h"
#include "helio/net/socket_address.h"
#include "src/facade/facade_stats.h"

DEFINE_uint64(max_client_query_buffer, 1ull << 30,
              "A client whose unprocessed input grows past this many bytes is disconnected "
              "(Redis's client-query-buffer-limit, which CONFIG SET changes); it bounds the "
              "size of one request");
DEFINE_uint64(conn_park_idle_ms, 1000,
              "A client connection idle this long with nothing buffered gives back its read "
              "buffer, reply buffer and fiber stack until its next request (0: never)");

DEFINE_uint32(timeout, 0,
              "Close a client connection that waited this many seconds for its next request "
              "(Redis's timeout; 0: never). Subscribers and monitors are spared, as in Redis");

namespace damselfly::facade {

namespace {

std::atomic<int64_t> idle_timeout_s{-1};  // -1: --timeout until CONFIG SET
std::atomic<int64_t> query_buffer_limit{-1};  // -1: --max_client_query_buffer until CONFIG SET
std::atomic<int64_t> tcp_keepalive_s{300};     // Redis's default

constexpr size_t kMinReadBytes = 4 << 10;

// Read buffers are page-aligned, so that their pages can be handed back to the kernel
// (madvise) whole. A parked connection does that and keeps its buffer: it costs no
// resident memory while parked, and no allocation when the connection wakes up.
// Buffers of the initial size are never freed either: freeing one would bring back a
// page (mimalloc writes its free list into the block), and mimalloc keeps freed pages
// resident until the heap is used again, so closing 10,000 connections would leave
// 40 MB behind. They go to a per-thread pool instead, without their pages, and the next
// connections take them from there; the pool holds the address space of the thread's
// peak of connections, not memory.
constexpr size_t kPageBytes = 4096;

class BufferPool {
 public:
  ~BufferPool() {
    for (char* buffer : free_) ::operator delete[](buffer, std::align_val_t(kPageBytes));
  }
  char* Take() {
    if (free_.empty()) return nullptr;
    char* buffer = free_.back();
    free_.pop_back();
    return buffer;
  }
  void Give(char* buffer) { free_.push_back(buffer); }

 private:
  std::vector<char*> free_;
};

thread_local BufferPool initial_buffers;

// As Redis's anetKeepAlive: probes after `seconds` of silence, then every third of it;
// the peer is dead after three unanswered. Best effort.
void EnableKeepalive(int fd, int64_t seconds) {
  int yes = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof(yes)) != 0) return;
  int idle = int(std::min<int64_t>(seconds, 32767));
  int interval = std::max(1, idle / 3);
  int count = 3;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

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

ClientConnection::~ClientConnection() {
  if (admitted_) ClientAdmission::Release();
}

bool ClientConnection::Admit() {
  if (maxclients_exempt_) return true;
  admitted_ = ClientAdmission::Admit(protocol());
  if (!admitted_) SendRefusal(ClientAdmission::RefusalReply(protocol()));
  return admitted_;
}

void ClientConnection::SendRefusal(std::string_view reply) {
  // Best effort, as Redis: the refused client may have gone already.
  (void)socket()->Send({reinterpret_cast<const uint8_t*>(reply.data()), reply.size()});
  // What the client sent already is read and dropped: closing a socket with unread bytes
  // sends a reset, and the client's kernel may then drop the reply before it is read.
  const int fd = socket()->fd();
  shutdown(fd, SHUT_WR);
  char sink[4096];
  for (int i = 0; i < 16 && recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; ++i) {
  }
}

void ClientConnection::OpenWithoutSocket(int link_fd) {
  peer_address_ = AddressOf(link_fd, true);
  local_address_ = AddressOf(link_fd, false);
  created_at_ms_ = last_active_ms_ = helio::UnixTimeMs();
}

void ClientConnection::MarkActive() { last_active_ms_ = helio::UnixTimeMs(); }

ClientConnection::Next ClientConnection::HandleRequests() {
  parked_ = false;
  if (!std::exchange(opened_, true)) {
    if (!Admit()) return Next::kClose;
    if (protocol() == ClientProtocol::kResp && ClientAdmission::LoopbackOnly() &&
        !ClientAdmission::PeerIsLoopback(socket()->fd())) {
      SendRefusal(ClientAdmission::ProtectedModeReply());
      return Next::kClose;
    }
    if (protocol() == ClientProtocol::kResp) {
      const int64_t keepalive_s = TcpKeepaliveSeconds();
      if (keepalive_s > 0) EnableKeepalive(socket()->fd(), keepalive_s);
    }
    peer_address_ = AddressOf(socket()->fd(), true);
    local_address_ = AddressOf(socket()->fd(), false);
    created_at_ms_ = last_active_ms_ = helio::UnixTimeMs();
    OnOpen();
  }

  while (!killed_) {
    StartReceive();
    receiving_ = true;
    auto received = socket()->FinishRecv();
    receiving_ = false;
    receive_started_ = false;
    if (!received.ok() && Interrupted(received.error())) {
      if (end_ != start_ || !MayPark()) continue;  // stale: it is not idle any more
      Park();
      return Next::kResumeWhenReadable;
    }
    if (!received.ok() || *received == 0) break;
    end_ += *received;
    FacadeStats::tlocal()->net_input_bytes += *received;
    last_active_ms_ = helio::UnixTimeMs();
    batch_start_ = start_;
    in_batch_ = true;
    bool keep_open = ProcessInput();
    in_batch_ = false;
    CompactBuffer();
    // The next receive is armed before the replies leave, so that a client's answer to
    // them is read in its order of arrival with this thread's other connections (see
    // FiberSocket::StartRecv): a client that gets this reply, sends here and then to
    // another connection on this thread has its commands run in that order, as on a
    // single-threaded server.
    if (keep_open && !killed_) StartReceive();
    if (!Flush() || !keep_open) break;
    if (end_ - start_ + ParserBytes() > QueryBufferLimit()) {
      // Redis's words, so that operators' log searches keep working.
      constexpr size_t kShownBytes = 64;
      LOG(WARNING) << "Closing client that reached max query buffer length: addr=" << peer_address_
                   << " laddr=" << local_address_ << " qbuf=" << end_ - start_
                   << " (qbuf initial bytes: \""
                   << absl::CHexEscape(
                          absl::string_view(input().data(), std::min(input().size(), kShownBytes)))
                   << "\")";
      break;
    }
  }
  if (receive_started_) {  // its buffer must not go before the receive ends
    socket()->InterruptRecv();
    (void)socket()->FinishRecv();
    receive_started_ = false;
  }
  OnClose();
  StopPushes();  // the services stopped theirs in OnClose; this joins a writer left over
  JoinHangupWatch();
  return Next::kClose;
}

void ClientConnection::StartReceive() {
  if (receive_started_) return;
  // Room for the rest of a big request, but at most as much again as has arrived: a
  // client must send the bytes it declares before we hold memory for them, and doubling
  // keeps the total copying linear. Nor more than the query-buffer limit allows: the
  // check in HandleRequests closes a client just past it.
  const uint64_t limit = QueryBufferLimit();
  size_t used = end_ - start_, needed = BytesNeeded();
  size_t missing = needed > used ? needed - used : 0;
  size_t allowed = used <= limit ? limit - used + 1 : 1;
  EnsureSpace(std::max(kMinReadBytes, std::min({missing, used, allowed})));
  socket()->StartRecv({reinterpret_cast<uint8_t*>(&buffer_[end_]), capacity_ - end_});
  receive_started_ = true;
}

std::chrono::milliseconds ClientConnection::IdleSweepInterval() {
  // A connection parks between one and one and a half times the flag's value after its
  // last request; `timeout` closes it within a second of its deadline.
  constexpr uint64_t kMaxIntervalMs = 1000;
  if (FLAGS_conn_park_idle_ms == 0) return std::chrono::milliseconds(kMaxIntervalMs);
  return std::chrono::milliseconds(
      std::clamp<uint64_t>(FLAGS_conn_park_idle_ms / 2, 1, kMaxIntervalMs));
}

void ClientConnection::SetIdleTimeoutSeconds(int64_t seconds) {
  idle_timeout_s.store(seconds, std::memory_order_relaxed);
}

int64_t ClientConnection::IdleTimeoutSeconds() {
  int64_t seconds = idle_timeout_s.load(std::memory_order_relaxed);
  return seconds < 0 ? int64_t(FLAGS_timeout) : seconds;
}

void ClientConnection::SetTcpKeepaliveSeconds(int64_t seconds) {
  tcp_keepalive_s.store(seconds, std::memory_order_relaxed);
}

int64_t ClientConnection::TcpKeepaliveSeconds() {
  return tcp_keepalive_s.load(std::memory_order_relaxed);
}

void ClientConnection::SetQueryBufferLimit(uint64_t bytes) {
  query_buffer_limit.store(int64_t(bytes), std::memory_order_relaxed);
}

uint64_t ClientConnection::QueryBufferLimit() {
  int64_t bytes = query_buffer_limit.load(std::memory_order_relaxed);
  return bytes < 0 ? FLAGS_max_client_query_buffer : uint64_t(bytes);
}

void ClientConnection::OnIdleSweep() {
  const int64_t now_ms = helio::UnixTimeMs();
  const int64_t timeout_s = IdleTimeoutSeconds();
  if (timeout_s > 0 && (receiving_ || parked_) && MayTimeOut() &&
      now_ms - last_active_ms_ >= timeout_s * 1000) {
    return Kill();
  }
  if (!receiving_ || end_ != start_ || FLAGS_conn_park_idle_ms == 0 || !MayPark()) return;
  if (now_ms - last_active_ms_ >= int64_t(FLAGS_conn_park_idle_ms)) {
    socket()->InterruptRecv();
  }
}

bool ClientConnection::Interrupted(std::error_code error) const {
  // Only the sweep interrupts a Recv and leaves the socket's I/O working.
  return error.value() == ECANCELED && !killed_ && !socket()->io_cancelled();
}

void ClientConnection::Park() {
  JoinHangupWatch();
  start_ = end_ = 0;
  if (capacity_ == kInitialBufferBytes) {
    madvise(buffer_.get(), capacity_, MADV_DONTNEED);
  } else {
    buffer_.reset();
    capacity_ = 0;
  }
  ReleaseIdleMemory();
  parked_ = true;
}

void ClientConnection::BufferDelete::operator()(char* buffer) const {
  if (bytes == kInitialBufferBytes) {
    madvise(buffer, bytes, MADV_DONTNEED);
    initial_buffers.Give(buffer);
  } else {
    ::operator delete[](buffer, std::align_val_t(kPageBytes));
  }
}

ClientConnection::Buffer ClientConnection::NewBuffer(size_t bytes) {
  static_assert(kInitialBufferBytes % kPageBytes == 0);
  char* buffer = bytes == kInitialBufferBytes ? initial_buffers.Take() : nullptr;
  if (buffer == nullptr) {
    buffer = static_cast<char*>(::operator new[](bytes, std::align_val_t(kPageBytes)));
  }
  return Buffer(buffer, BufferDelete{bytes});
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
  if (writer_waiting_for_send_) [[unlikely]] {
    boost::fibers::context::active()->schedule(std::exchange(writer_waiting_for_send_, nullptr));
  }
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
  return CreatePushQueue(cls, default_hard_bytes);
}

PushQueue* ClientConnection::StartPushesFromTask(ClientClass cls) {
  if (push_queue_) return push_queue_.get();
  return CreatePushQueue(cls, 0);
}

PushQueue* ClientConnection::CreatePushQueue(ClientClass cls, uint64_t default_hard_bytes) {
  push_queue_ =
      std::make_unique<PushQueue>(cls, default_hard_bytes, socket() ? socket()->fd() : -1);
  if (socket() != nullptr) {
    push_writer_ = helio::fibers::Launch([this] {
      if (unsent_output_bytes_ != 0) {  // Flush is sending: see StartPushesFromTask
        writer_waiting_for_send_ = boost::fibers::context::active();
        writer_waiting_for_send_->suspend();
      }
      push_queue_->SendLoop(this);
    });
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
  JoinHangupWatch();
  // Waiting costs one poll request; the stack only has to hold that wait.
  hangup_watch_stopping_ = false;
  hangup_watch_ = helio::fibers::Launch(
      [this, on_hangup = std::move(on_hangup)] {
        // Stop may come before this fiber first runs.
        if (!hangup_watch_stopping_ && socket()->WaitHangup() && !hangup_watch_stopping_) {
          on_hangup();
        }
      },
      helio::fibers::kSmallStackBytes);
}

void ClientConnection::StopHangupWatch() {
  if (!hangup_watch_.joinable() || hangup_watch_stopping_) return;
  hangup_watch_stopping_ = true;
  // Not joined here: the cancellation completes in the loop's next round, with the
  // send of the reply that follows, instead of costing a round of its own before it.
  socket()->CancelHangupWait();
}

void ClientConnection::JoinHangupWatch() {
  if (!hangup_watch_.joinable()) return;
  StopHangupWatch();
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
  auto bigger = NewBuffer(capacity);
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
    buffer_ = NewBuffer(kInitialBufferBytes);
    capacity_ = kInitialBufferBytes;
  }
}

}  // namespace damselfly::facade
