#include "helio/net/uring_socket.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <utility>

namespace helio::net {

UringSocket::UringSocket(io::UringProactor* proactor, int fd) : FiberSocket(proactor, fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK)) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  file_slot_ = proactor->RegisterFile(fd);
}

void UringSocket::OnClose() {
  CancelIo();
  if (multishot_) MultishotRecv::Release(std::exchange(multishot_, nullptr));
  if (file_slot_ >= 0) uring()->UnregisterFile(std::exchange(file_slot_, -1));
}

void UringSocket::NameFile(io_uring_sqe* sqe) const {
  if (file_slot_ >= 0) {
    sqe->fd = file_slot_;
    sqe->flags |= IOSQE_FIXED_FILE;
  }
}

int UringSocket::Execute(io_uring_sqe* sqe, io::UringProactor::Request** slot) {
  io::UringProactor::Request request;
  *slot = &request;
  int res = uring()->Execute(sqe, &request);
  *slot = nullptr;
  return res;
}

namespace {
// IORING_RECVSEND_POLL_FIRST needs Linux 5.19; older kernels reject it with EINVAL, after
// which no receive asks for it again.
std::atomic<bool> poll_first_supported{true};
}  // namespace

bool UringSocket::PollFirst() const {
  return recv_drained_ && poll_first_supported.load(std::memory_order_relaxed);
}

MultishotRecv* UringSocket::multishot() {
  if (multishot_ == nullptr && uring()->has_recv_buffers()) {
    multishot_ = new MultishotRecv(uring(), fd(), file_slot_);
    if (cancelled_) multishot_->Cancel();
    if (std::exchange(recv_interrupted_, false)) multishot_->Interrupt();
  }
  return multishot_;
}

Result<size_t> UringSocket::Recv(absl::Span<uint8_t> buf) {
  if (MultishotRecv* recv = multishot()) {
    recv->Start(buf);
    return recv->Finish();
  }
  if (cancelled_) return ErrnoCode(ECANCELED);
  if (std::exchange(recv_interrupted_, false)) return ErrnoCode(ECANCELED);
  while (true) {
    const bool poll_first = PollFirst();
    io_uring_sqe* sqe = uring()->GetSqe();
    io_uring_prep_recv(sqe, fd(), buf.data(), buf.size(), 0);
    NameFile(sqe);
    if (poll_first) sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
    int res = Execute(sqe, &pending_read_);
    recv_interrupted_ = false;
    if (res == -EINVAL && poll_first) {
      poll_first_supported.store(false, std::memory_order_relaxed);
      continue;
    }
    if (res < 0) return ErrnoCode(-res);
    recv_drained_ = size_t(res) < buf.size();
    return size_t(res);
  }
}

void UringSocket::StartRecv(absl::Span<uint8_t> buf) {
  if (MultishotRecv* recv = multishot()) return recv->Start(buf);
  DCHECK(pending_read_ == nullptr);
  started_recv_buf_ = buf;
  started_recv_.fiber = nullptr;
  started_recv_.done = false;
  if (cancelled_ || std::exchange(recv_interrupted_, false)) {
    started_recv_.done = true;
    started_recv_.result = -ECANCELED;
    return;
  }
  started_recv_.poll_first = PollFirst();
  io_uring_sqe* sqe = uring()->GetSqe();
  io_uring_prep_recv(sqe, fd(), buf.data(), buf.size(), 0);
  NameFile(sqe);
  if (started_recv_.poll_first) sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
  started_recv_.on_complete = &UringSocket::OnStartedRecv;
  uring()->Submit(sqe, &started_recv_);
  pending_read_ = &started_recv_;
}

void UringSocket::OnStartedRecv(io::UringProactor::Request* request) {
  auto* started = static_cast<StartedRecv*>(request);
  started->done = true;
  if (started->fiber) boost::fibers::context::active()->schedule(started->fiber);
}

Result<size_t> UringSocket::FinishRecv() {
  if (multishot_) return multishot_->Finish();
  if (!started_recv_.done) {
    started_recv_.fiber = boost::fibers::context::active();
    started_recv_.fiber->suspend();
  }
  started_recv_.fiber = nullptr;
  pending_read_ = nullptr;
  recv_interrupted_ = false;
  const int res = started_recv_.result;
  if (res == -EINVAL && started_recv_.poll_first) {  // a kernel before 5.19: see Recv
    poll_first_supported.store(false, std::memory_order_relaxed);
    return Recv(started_recv_buf_);
  }
  if (res < 0) return ErrnoCode(-res);
  recv_drained_ = size_t(res) < started_recv_buf_.size();
  return size_t(res);
}

Result<size_t> UringSocket::WriteSome(const iovec* iov, size_t iov_count) {
  if (cancelled_) return ErrnoCode(ECANCELED);
  io_uring_sqe* sqe = uring()->GetSqe();
  msghdr msg{};
  if (iov_count == 1) {
    io_uring_prep_send(sqe, fd(), iov->iov_base, iov->iov_len, MSG_NOSIGNAL);
    NameFile(sqe);
  } else {
    msg.msg_iov = const_cast<iovec*>(iov);
    msg.msg_iovlen = iov_count;
    io_uring_prep_sendmsg(sqe, fd(), &msg, MSG_NOSIGNAL);
    NameFile(sqe);
  }
  int res = Execute(sqe, &pending_write_);
  if (res < 0) return ErrnoCode(-res);
  return size_t(res);
}

Result<int> UringSocket::AcceptFd() {
  if (cancelled_) return ErrnoCode(ECANCELED);
  io_uring_sqe* sqe = uring()->GetSqe();
  io_uring_prep_accept(sqe, fd(), nullptr, nullptr, SOCK_CLOEXEC);
  NameFile(sqe);
  int res = Execute(sqe, &pending_read_);
  if (res < 0) return ErrnoCode(-res);
  return res;
}

std::error_code UringSocket::Connect(const SocketAddress& address) {
  if (cancelled_) return ErrnoCode(ECANCELED);
  io_uring_sqe* sqe = uring()->GetSqe();
  io_uring_prep_connect(sqe, fd(), address.sockaddr_ptr(), address.length());
  NameFile(sqe);
  int res = Execute(sqe, &pending_write_);
  if (res < 0) return ErrnoCode(-res);
  return {};
}

void UringSocket::CancelIo() {
  cancelled_ = true;
  if (multishot_) multishot_->Cancel();
  if (pending_read_) uring()->Cancel(pending_read_);
  if (pending_write_) uring()->Cancel(pending_write_);
  if (pending_hangup_) uring()->Cancel(pending_hangup_);
  if (readable_poll_.on_complete) uring()->Cancel(&readable_poll_);
}

bool UringSocket::WaitHangup() {
  if (cancelled_) return true;
  // POLLIN is not asked for: a client's pipelined requests must not end the wait. The
  // kernel always reports POLLHUP and POLLERR.
  io_uring_sqe* sqe = uring()->GetSqe();
  io_uring_prep_poll_add(sqe, fd(), POLLRDHUP);
  NameFile(sqe);
  int res = Execute(sqe, &pending_hangup_);
  if (res == -ECANCELED) return cancelled_;
  return true;
}

void UringSocket::CancelHangupWait() {
  if (pending_hangup_) uring()->Cancel(pending_hangup_);
}

void UringSocket::InterruptRecv() {
  if (multishot_) return multishot_->Interrupt();
  recv_interrupted_ = true;
  if (pending_read_) uring()->Cancel(pending_read_);
}

void UringSocket::NotifyWhenReadable(std::function<void()> on_readable) {
  if (MultishotRecv* recv = multishot()) return recv->NotifyWhenReadable(std::move(on_readable));
  DCHECK(pending_read_ == nullptr && !readable_poll_.on_complete);
  on_readable_ = std::move(on_readable);
  if (cancelled_) {
    std::exchange(on_readable_, nullptr)();
    return;
  }
  io_uring_sqe* sqe = uring()->GetSqe();
  io_uring_prep_poll_add(sqe, fd(), POLLIN | POLLRDHUP);
  NameFile(sqe);
  readable_poll_.on_complete = &UringSocket::OnReadable;
  readable_poll_.socket = this;
  uring()->Submit(sqe, &readable_poll_);
}

void UringSocket::OnReadable(io::UringProactor::Request* request) {
  UringSocket* socket = static_cast<ReadablePoll*>(request)->socket;
  request->on_complete = nullptr;
  std::exchange(socket->on_readable_, nullptr)();
}

}  // namespace helio::net
