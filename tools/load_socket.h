// TCP and command-line helpers shared by the load generators under tools/ (coll_load,
// flood_load, hitrate_load, mc_load, pubsub_load): each program runs its connections on
// its own threads and dies on an error, so these report errors and leave the dying to the
// caller (the *OrDie forms call the program's own Die). No state: any thread.
#pragma once

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <string_view>

namespace load_tools {

// A connected TCP socket with TCP_NODELAY, or -1 with *error set. A `nonblocking` socket
// may still be connecting when it is returned (its first write or read tells).
inline int ConnectTcp(const std::string& host, const std::string& port, std::string* error,
                      bool nonblocking = false) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) {
    *error = "bad address";
    return -1;
  }
  int fd = socket(res->ai_family, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0 ||
      (connect(fd, res->ai_addr, res->ai_addrlen) != 0 && !(nonblocking && errno == EINPROGRESS))) {
    *error = "connect: " + std::string(strerror(errno));
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    return -1;
  }
  freeaddrinfo(res);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

// Sends all of `data`; false with *error set when the connection fails.
inline bool SendAll(int fd, std::string_view data, std::string* error) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = "send: " + std::string(strerror(errno));
      return false;
    }
    data.remove_prefix(size_t(n));
  }
  return true;
}

// ConnectTcp and SendAll for a program that stops at the first error: `die(error)` (the
// program's Die, which prints its name and exits) must not return.
template <typename DieFn>
int ConnectOrDie(const std::string& host, const std::string& port, DieFn die,
                 bool nonblocking = false) {
  std::string error;
  int fd = ConnectTcp(host, port, &error, nonblocking);
  if (fd < 0) die(error);
  return fd;
}
template <typename DieFn>
void SendAllOrDie(int fd, std::string_view data, DieFn die) {
  std::string error;
  if (!SendAll(fd, data, &error)) die(error);
}

// Reads what one non-blocking recv gives into *in: false when nothing was there (EAGAIN,
// EINTR); a closed connection or an error calls `die`.
template <typename DieFn>
bool RecvSomeOrDie(int fd, std::string* in, DieFn die) {
  char buf[1 << 16];
  ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n == 0) die("the server closed a connection");
  if (n < 0) die("recv: " + std::string(strerror(errno)));
  in->append(buf, size_t(n));
  return true;
}

// The value of `arg` when it is "<name>=<value>", else nullptr ("--port=6379": "6379").
inline const char* FlagValue(const char* arg, std::string_view name) {
  std::string_view a = arg;
  if (a.size() > name.size() && a.substr(0, name.size()) == name && a[name.size()] == '=') {
    return arg + name.size() + 1;
  }
  return nullptr;
}

// A value of `size` random letters and digits, the same in every program and run:
// damselfly compresses values (LZF), and a run of one byte would shrink to a few bytes
// there while redis-server and memcached store it whole.
inline std::string IncompressibleValue(int size) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::mt19937 rng(7);
  std::string value(size, ' ');
  for (char& c : value) c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return value;
}

}  // namespace load_tools
