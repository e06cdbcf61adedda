// EpollSocket: FiberSocket over non-blocking syscalls and epoll readiness.
// See fiber_socket.h for the threading contract.
#pragma once

#include "helio/io/epoll_proactor.h"
#include "helio/net/fiber_socket.h"

namespace helio::net {

class EpollSocket final : public FiberSocket {
 public:
  // Takes ownership of `fd`, makes it non-blocking and registers it with the proactor.
  EpollSocket(io::EpollProactor* proactor, int fd);

  // Closes here, not in ~FiberSocket, where OnClose would no longer reach this class.
  ~EpollSocket() override { Close(); }

  Result<size_t> Recv(absl::Span<uint8_t> buf) override;
  Result<size_t> WriteSome(const iovec* iov, size_t iov_count) override;
  Result<int> AcceptFd() override;
  std::error_code Connect(const SocketAddress& address) override;
  void CancelIo() override;

 protected:
  void OnClose() override;

 private:
  io::EpollProactor* epoll() const { return static_cast<io::EpollProactor*>(proactor()); }

  // Calls `op` (a syscall returning -1/errno on failure) until it does not fail with
  // EAGAIN, parking in between until the fd is ready in that direction.
  template <typename Op>
  auto Retry(bool reading, Op&& op) -> decltype(op());

  io::EpollProactor::Waiters waiters_;
};

}  // namespace helio::net
