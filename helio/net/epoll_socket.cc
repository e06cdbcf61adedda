#include "helio/net/epoll_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <glog/logging.h>
#include <poll.h>
#include <sys/socket.h>

#include <boost/fiber/operations.hpp>
#include <cerrno>
#include <utility>

namespace helio::net {

EpollSocket::EpollSocket(io::EpollProactor* proactor, int fd) : FiberSocket(proactor, fd) {
  waiters_.socket = this;
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && !(flags & O_NONBLOCK)) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  absl::Status status = epoll()->Register(fd, &waiters_);
  LOG_IF(ERROR, !status.ok()) << status;
}

void EpollSocket::OnClose() {
  epoll()->WakeAll(&waiters_);
  epoll()->Unregister(fd());
}

template <typename Op>
auto EpollSocket::Retry(bool reading, Op&& op) -> decltype(op()) {
  while (true) {
    if (cancelled_ || (reading && std::exchange(recv_interrupted_, false))) {
      errno = ECANCELED;
      return -1;
    }
    auto res = op();
    if (res >= 0 || (errno != EAGAIN && errno != EINTR)) {
      if (reading) recv_interrupted_ = false;  // it has its bytes (or error) after all
      if (++ops_without_parking_ >= kOpsPerYield) {
        ops_without_parking_ = 0;
        const int saved_errno = errno;
        boost::this_fiber::yield();
        errno = saved_errno;
      }
      return res;
    }
    if (errno == EAGAIN) {
      ops_without_parking_ = 0;
      if (reading) {
        epoll()->WaitReadable(&waiters_);
      } else {
        epoll()->WaitWritable(&waiters_);
      }
    }
  }
}

Result<size_t> EpollSocket::Recv(absl::Span<uint8_t> buf) {
  ssize_t n = Retry(true, [&] { return recv(fd(), buf.data(), buf.size(), 0); });
  if (n < 0) return ErrnoCode(errno);
  return size_t(n);
}

Result<size_t> EpollSocket::WriteSome(const iovec* iov, size_t iov_count) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = iov_count;
  ssize_t n = Retry(false, [&] { return sendmsg(fd(), &msg, MSG_NOSIGNAL); });
  if (n < 0) return ErrnoCode(errno);
  return size_t(n);
}

Result<int> EpollSocket::AcceptFd() {
  int fd_accepted =
      Retry(true, [&] { return accept4(fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC); });
  if (fd_accepted < 0) return ErrnoCode(errno);
  return fd_accepted;
}

std::error_code EpollSocket::Connect(const SocketAddress& address) {
  if (cancelled_) return ErrnoCode(ECANCELED);
  if (connect(fd(), address.sockaddr_ptr(), address.length()) == 0) return {};
  if (errno != EINPROGRESS) return ErrnoCode(errno);
  // Writable means connected or failed; a readiness edge from before connect() is not
  // proof of either, hence the getpeername check.
  while (true) {
    epoll()->WaitWritable(&waiters_);
    if (cancelled_) return ErrnoCode(ECANCELED);
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return ErrnoCode(errno);
    if (err) return ErrnoCode(err);
    sockaddr_storage peer;
    socklen_t peer_len = sizeof(peer);
    if (getpeername(fd(), reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0) return {};
    if (errno != ENOTCONN) return ErrnoCode(errno);
  }
}

bool EpollSocket::WaitHangup() {
  hangup_wait_cancelled_ = false;
  while (true) {
    if (cancelled_) return true;
    pollfd p{fd(), POLLRDHUP, 0};
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) {
      return true;
    }
    if (hangup_wait_cancelled_) return false;
    // Edge-triggered: data arriving wakes this too; the poll above tells them apart.
    epoll()->WaitReadable(&waiters_);
  }
}

void EpollSocket::CancelHangupWait() {
  hangup_wait_cancelled_ = true;
  epoll()->WakeAll(&waiters_);
}

void EpollSocket::CancelIo() {
  cancelled_ = true;
  epoll()->WakeAll(&waiters_);
}

void EpollSocket::InterruptRecv() {
  recv_interrupted_ = true;
  if (waiters_.reader) epoll()->WakeAll(&waiters_);
}

void EpollSocket::NotifyWhenReadable(std::function<void()> on_readable) {
  on_readable_ = std::move(on_readable);
  epoll()->NotifyReadable(&waiters_, &EpollSocket::OnReadable);
  // Edges are only reported once: bytes that came before the wait was armed (or a
  // CancelIo before it) would otherwise never call it.
  pollfd pfd{fd(), POLLIN | POLLRDHUP, 0};
  if (cancelled_ || poll(&pfd, 1, 0) != 0) epoll()->WakeAll(&waiters_);
}

void EpollSocket::OnReadable(io::EpollProactor::Waiters* waiters) {
  EpollSocket* socket = static_cast<SocketWaiters*>(waiters)->socket;
  std::exchange(socket->on_readable_, nullptr)();
}

}  // namespace helio::net
