#include "src/facade/resp_connection.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "helio/base/time.h"
#include "helio/net/socket_address.h"

DEFINE_uint64(proto_max_bulk_len, 512ull << 20, "Largest bulk string a request may carry");
DEFINE_uint64(max_client_query_buffer, 1ull << 30,
              "A client whose unprocessed input grows past this many bytes is disconnected");

namespace damselfly::facade {

namespace {

constexpr size_t kInitialBufferBytes = 16 << 10;
constexpr size_t kMinReadBytes = 4 << 10;

std::atomic<uint64_t> next_connection_id{1};

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

bool ConnectionContext::Flush() { return owner_->Flush(); }

RespConnection::RespConnection(ServiceInterface* service, bool requires_auth)
    : service_(service),
      context_(this, next_connection_id.fetch_add(1, std::memory_order_relaxed)),
      parser_(RespParser::Limits{.max_bulk_len = FLAGS_proto_max_bulk_len}),
      requires_auth_(requires_auth) {
  context_.authenticated = !requires_auth;
}

RespConnection::~RespConnection() = default;

void RespConnection::HandleRequests() {
  peer_address_ = AddressOf(socket()->fd(), true);
  local_address_ = AddressOf(socket()->fd(), false);
  created_at_ms_ = last_active_ms_ = helio::UnixTimeMs();
  service_->OnConnectionOpen(&context_);

  while (!killed_) {
    // Room for the rest of a big argument, but at most as much again as has arrived: a
    // client must send the bytes it declares before we hold memory for them, and
    // doubling keeps the total copying linear.
    size_t used = end_ - start_, needed = parser_.bytes_needed();
    size_t missing = needed > used ? needed - used : 0;
    EnsureSpace(std::max(kMinReadBytes, std::min(missing, used)));
    auto received = socket()->Recv({reinterpret_cast<uint8_t*>(&buffer_[end_]), capacity_ - end_});
    if (!received.ok() || *received == 0) break;
    end_ += *received;
    last_active_ms_ = helio::UnixTimeMs();
    if (!ProcessInput()) break;
    if (end_ - start_ > FLAGS_max_client_query_buffer) {
      LOG(WARNING) << "closing client " << peer_address_ << ": query buffer over "
                   << FLAGS_max_client_query_buffer << " bytes";
      break;
    }
  }
  service_->OnConnectionClose(&context_);
}

bool RespConnection::ProcessInput() {
  batch_args_.clear();
  batch_.clear();
  bool keep_open = true;
  auto dispatch = [&] {
    if (batch_.empty()) return;
    batch_lists_.clear();
    for (auto [begin, end] : batch_) batch_lists_.emplace_back(&batch_args_[begin], end - begin);
    service_->DispatchMany(batch_lists_, &context_);
    batch_args_.clear();
    batch_.clear();
  };

  const char* buffer_begin = &buffer_[0];
  const char* buffer_end = &buffer_[0] + capacity_;
  while (start_ < end_ && !context_.close_after_reply) {
    // Until the client has authenticated, each command runs before the next is parsed:
    // an AUTH earlier in the same write lifts the unauthenticated limits for the rest.
    const bool unauthenticated = requires_auth_ && !context_.authenticated;
    parser_.set_unauthenticated(unauthenticated);
    size_t consumed = 0;
    RespParser::Result result =
        parser_.Parse(std::string_view(&buffer_[start_], end_ - start_), &consumed);
    if (result == RespParser::Result::kNeedMore) break;
    if (result == RespParser::Result::kError) {
      dispatch();
      context_.reply_builder()->SendError(parser_.error());
      keep_open = false;
      break;
    }
    start_ += consumed;
    if (result == RespParser::Result::kSkipped) continue;

    CmdArgList args = parser_.args();
    size_t begin = batch_args_.size();
    batch_args_.insert(batch_args_.end(), args.begin(), args.end());
    batch_.emplace_back(begin, batch_args_.size());
    // Unescaped inline arguments live in the parser and the next Parse reuses that
    // space: such a command cannot wait in the batch either.
    bool run_now = unauthenticated;
    for (std::string_view arg : args) run_now |= arg.data() < buffer_begin || arg.data() >= buffer_end;
    if (run_now) dispatch();
  }
  dispatch();
  if (!Flush()) return false;
  CompactBuffer();
  return keep_open && !context_.close_after_reply;
}

bool RespConnection::Flush() {
  ReplyBuilder* builder = context_.reply_builder();
  if (builder->output_size() == 0) return true;
  std::string_view out = builder->output();
  std::error_code ec =
      socket()->Send({reinterpret_cast<const uint8_t*>(out.data()), out.size()});
  builder->ClearOutput();
  return !ec;
}

void RespConnection::Kill() {
  killed_ = true;
  if (socket() && socket()->is_open()) {
    socket()->Shutdown(SHUT_RDWR);
    socket()->CancelIo();
  }
}

void RespConnection::EnsureSpace(size_t min_free) {
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

void RespConnection::CompactBuffer() {
  size_t used = end_ - start_;
  if (used == 0) {
    start_ = end_ = 0;
    // A big request grew the buffer: give the memory back once it is processed.
    if (capacity_ > 4 * kInitialBufferBytes) {
      buffer_ = std::make_unique_for_overwrite<char[]>(kInitialBufferBytes);
      capacity_ = kInitialBufferBytes;
    }
  }
}

}  // namespace damselfly::facade
