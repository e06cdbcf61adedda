// SocketAddress: an IPv4 or IPv6 address with a port. A value type; safe to copy
// between threads. Resolve may block on DNS for host names: call it at start-up, not
// from a proactor fiber serving clients.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace helio::net {

class SocketAddress {
 public:
  SocketAddress() = default;

  // Parses a numeric address ("127.0.0.1", "::1", "0.0.0.0", "::") or resolves a host
  // name ("localhost") to its first address. May block on DNS for names: call at start-up.
  static absl::StatusOr<SocketAddress> Resolve(std::string_view host, uint16_t port);

  // Copies what accept()/getsockname() filled in.
  static SocketAddress FromSockaddr(const sockaddr* addr, socklen_t len);

  // The local address the socket is bound to.
  static absl::StatusOr<SocketAddress> OfSocket(int fd);

  int family() const { return storage_.ss_family; }
  uint16_t port() const;
  const sockaddr* sockaddr_ptr() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t length() const { return length_; }
  // "127.0.0.1:6379", "[::1]:6379".
  std::string ToString() const;

 private:
  sockaddr_storage storage_{};
  socklen_t length_ = 0;
};

// Creates a listening TCP socket (close-on-exec, SO_REUSEADDR, IPv6 sockets IPv6-only so
// a 0.0.0.0 and a :: listener can share a port). Returns the fd.
absl::StatusOr<int> ListenTcp(const SocketAddress& address, int backlog);

}  // namespace helio::net
