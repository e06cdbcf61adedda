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
  bool WaitHangup() override;
  void CancelHangupWait() override;
  void InterruptRecv() override;
  void NotifyWhenReadable(std::function<void()> on_readable) override;

 protected:
  void OnClose() override;

 private:
  io::EpollProactor* epoll() const { return static_cast<io::EpollProactor*>(proactor()); }

  // Calls `op` (a syscall returning -1/errno on failure) until it does not fail with
  // EAGAIN, parking in between until the fd is ready in that direction. After
  // kOpsPerYield operations in a row that did not have to park, yields the fiber: a
  // connection whose data keeps flowing would otherwise never let the thread's other
  // fibers and tasks (cross-thread calls, Stop) run. io_uring sockets always suspend.
  template <typename Op>
  auto Retry(bool reading, Op&& op) -> decltype(op());

  static constexpr unsigned kOpsPerYield = 32;

  struct SocketWaiters : io::EpollProactor::Waiters {
    EpollSocket* socket = nullptr;
  };
  static void OnReadable(io::EpollProactor::Waiters* waiters);

  SocketWaiters waiters_;
  unsigned ops_without_parking_ = 0;
  bool hangup_wait_cancelled_ = false;
};

}  // namespace helio::net
