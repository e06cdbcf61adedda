#include "helio/net/fiber_socket.h"

#include <glog/logging.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "helio/net/epoll_socket.h"
#include "helio/net/uring_socket.h"

namespace helio::net {

FiberSocket::~FiberSocket() { Close(); }

void FiberSocket::Close() {
  if (fd_ < 0) return;
  OnClose();
  close(fd_);
  fd_ = -1;
}

std::error_code FiberSocket::Shutdown(int how) {
  if (fd_ < 0) return ErrnoCode(EBADF);
  if (shutdown(fd_, how) != 0 && errno != ENOTCONN) return ErrnoCode(errno);
  return {};
}

std::error_code FiberSocket::Send(absl::Span<const uint8_t> buf) {
  iovec iov{const_cast<uint8_t*>(buf.data()), buf.size()};
  return Writev(&iov, 1);
}

std::error_code FiberSocket::Writev(const iovec* iov, size_t iov_count) {
  // Partial writes advance through a private copy of the vector; the common case (the
  // whole vector leaves in one call) copies nothing.
  Result<size_t> written = WriteSome(iov, iov_count);
  if (!written.ok()) return written.error();
  size_t total = 0;
  for (size_t i = 0; i < iov_count; ++i) total += iov[i].iov_len;
  if (*written == total) return {};

  absl::InlinedVector<iovec, 16> rest(iov, iov + iov_count);
  size_t first = 0;
  size_t done = *written;
  while (true) {
    while (first < rest.size() && done >= rest[first].iov_len) done -= rest[first++].iov_len;
    if (first == rest.size()) return {};
    rest[first].iov_base = static_cast<uint8_t*>(rest[first].iov_base) + done;
    rest[first].iov_len -= done;
    written = WriteSome(&rest[first], rest.size() - first);
    if (!written.ok()) return written.error();
    done = *written;
  }
}

std::error_code FiberSocket::RecvExact(absl::Span<uint8_t> buf) {
  while (!buf.empty()) {
    Result<size_t> n = Recv(buf);
    if (!n.ok()) return n.error();
    if (*n == 0) return ErrnoCode(ECONNRESET);
    buf.remove_prefix(*n);
  }
  return {};
}

std::unique_ptr<FiberSocket> CreateSocket(io::Proactor* proactor, int fd) {
  DCHECK(proactor->InMyThread());
  if (proactor->kind() == io::ProactorKind::kUring) {
    return std::make_unique<UringSocket>(static_cast<io::UringProactor*>(proactor), fd);
  }
  return std::make_unique<EpollSocket>(static_cast<io::EpollProactor*>(proactor), fd);
}

Result<std::unique_ptr<FiberSocket>> ConnectTcp(const SocketAddress& address) {
  io::Proactor* proactor = io::Proactor::me();
  CHECK(proactor) << "ConnectTcp outside a proactor thread";
  int fd = socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoCode(errno);
  std::unique_ptr<FiberSocket> sock = CreateSocket(proactor, fd);
  if (std::error_code ec = sock->Connect(address)) return ec;
  return sock;
}

absl::StatusOr<std::unique_ptr<FiberSocket>> ListenOn(const SocketAddress& address,
                                                      int backlog) {
  io::Proactor* proactor = io::Proactor::me();
  CHECK(proactor) << "ListenOn outside a proactor thread";
  absl::StatusOr<int> fd = ListenTcp(address, backlog);
  if (!fd.ok()) return fd.status();
  return CreateSocket(proactor, *fd);
}

}  // namespace helio::net
