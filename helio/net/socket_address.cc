#include "helio/net/socket_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace helio::net {

absl::StatusOr<SocketAddress> SocketAddress::Resolve(std::string_view host, uint16_t port) {
  std::string host_str(host);
  if (host_str.size() > 2 && host_str.front() == '[' && host_str.back() == ']') {
    host_str = host_str.substr(1, host_str.size() - 2);
  }
  SocketAddress result;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&result.storage_);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&result.storage_);
  if (inet_pton(AF_INET, host_str.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    result.length_ = sizeof(sockaddr_in);
    return result;
  }
  if (inet_pton(AF_INET6, host_str.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    result.length_ = sizeof(sockaddr_in6);
    return result;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int err = getaddrinfo(host_str.c_str(), nullptr, &hints, &found);
  if (err != 0 || found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve '", host_str, "': ", gai_strerror(err)));
  }
  result = FromSockaddr(found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  if (result.family() == AF_INET) {
    v4->sin_port = htons(port);
  } else {
    v6->sin6_port = htons(port);
  }
  return result;
}

SocketAddress SocketAddress::FromSockaddr(const sockaddr* addr, socklen_t len) {
  SocketAddress result;
  len = std::min<socklen_t>(len, sizeof(result.storage_));
  memcpy(&result.storage_, addr, len);
  result.length_ = len;
  return result;
}

absl::StatusOr<SocketAddress> SocketAddress::OfSocket(int fd) {
  sockaddr_storage storage{};
  socklen_t len = sizeof(storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &len) != 0) {
    return absl::InternalError(absl::StrCat("getsockname: ", strerror(errno)));
  }
  return FromSockaddr(reinterpret_cast<sockaddr*>(&storage), len);
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  }
  return 0;
}

std::string SocketAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, buf,
              sizeof(buf));
    return absl::StrCat(buf, ":", port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, buf,
              sizeof(buf));
    return absl::StrCat("[", buf, "]:", port());
  }
  return "unknown";
}

absl::StatusOr<int> ListenTcp(const SocketAddress& address, int backlog) {
  int fd = socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (address.family() == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (bind(fd, address.sockaddr_ptr(), address.length()) != 0) {
    int err = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("bind ", address.ToString(), ": ", strerror(err)));
  }
  if (listen(fd, backlog) != 0) {
    int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("listen: ", strerror(err)));
  }
  return fd;
}

}  // namespace helio::net
