// A plain single-threaded epoll echo server: the baseline that helio's echo_server
// (helio/examples/echo_server.cc) is measured against in tools/echo-bench.sh.
//
// Deliberately ordinary: level-triggered epoll, non-blocking sockets, a 16 KiB buffer per
// connection. Whatever a read returns is written straight back; if the write is partial the
// rest is kept and the connection waits for EPOLLOUT (and stops reading) until it drains.
// Socket options match helio's AcceptServer defaults (SO_REUSEADDR, no TCP_NODELAY), so
// the two differ only in the event loop.
//
// Usage: plain_epoll_echo [--port=6390] [--bind=127.0.0.1]
// Exits cleanly on SIGINT/SIGTERM.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace {

constexpr size_t kBufferSize = 16 * 1024;
constexpr int kMaxEvents = 256;

volatile sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

struct Connection {
  int fd = -1;
  size_t pending_off = 0;  // unsent bytes are buf[pending_off, pending_end)
  size_t pending_end = 0;
  char buf[kBufferSize];
};

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "plain_epoll_echo: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

int ListenTcp(const std::string& bind_addr, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) Die("socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  if (inet_pton(AF_INET, bind_addr.c_str(), &addr.sin_addr) != 1) {
    std::fprintf(stderr, "plain_epoll_echo: bad --bind address '%s'\n", bind_addr.c_str());
    std::exit(2);
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Die("bind");
  if (listen(fd, SOMAXCONN) != 0) Die("listen");
  return fd;
}

void SetInterest(int epfd, Connection* c, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = c;
  if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) Die("epoll_ctl(MOD)");
}

void Close(Connection* c) {
  close(c->fd);  // also removes it from the epoll set
  delete c;
}

// Writes out the pending bytes. Returns false if the connection failed and was closed.
// Afterwards either everything is sent, or the socket buffer is full (EAGAIN).
bool Flush(Connection* c) {
  while (c->pending_off < c->pending_end) {
    ssize_t n = write(c->fd, c->buf + c->pending_off, c->pending_end - c->pending_off);
    if (n > 0) {
      c->pending_off += size_t(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return true;
    } else {
      return false;
    }
  }
  c->pending_off = c->pending_end = 0;
  return true;
}

// EPOLLIN: read once and echo it. Level-triggered, so leftover input wakes us again.
void OnReadable(int epfd, Connection* c) {
  ssize_t n;
  do {
    n = read(c->fd, c->buf, kBufferSize);
  } while (n < 0 && errno == EINTR);
  if (n == 0 || (n < 0 && errno != EAGAIN)) return Close(c);
  if (n < 0) return;  // spurious wake-up

  c->pending_off = 0;
  c->pending_end = size_t(n);
  if (!Flush(c)) return Close(c);
  if (c->pending_end != 0) SetInterest(epfd, c, EPOLLOUT);  // stop reading until drained
}

// EPOLLOUT: finish a partial write, then go back to reading.
void OnWritable(int epfd, Connection* c) {
  if (!Flush(c)) return Close(c);
  if (c->pending_end == 0) SetInterest(epfd, c, EPOLLIN);
}

void AcceptAll(int epfd, int listen_fd) {
  while (true) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN) std::fprintf(stderr, "accept: %s\n", std::strerror(errno));
      return;
    }
    auto* c = new Connection;
    c->fd = fd;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = c;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) Die("epoll_ctl(ADD)");
  }
}

bool ParseFlag(std::string_view arg, std::string_view name, std::string* value) {
  if (arg.substr(0, name.size()) != name || arg.size() <= name.size() ||
      arg[name.size()] != '=')
    return false;
  *value = std::string(arg.substr(name.size() + 1));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 6390;
  std::string bind_addr = "127.0.0.1";
  for (int i = 1; i < argc; ++i) {
    std::string value;
    if (ParseFlag(argv[i], "--port", &value)) {
      port = std::atoi(value.c_str());
    } else if (ParseFlag(argv[i], "--bind", &value)) {
      bind_addr = value;
    } else {
      std::fprintf(stderr, "usage: %s [--port=N] [--bind=ADDR]\n", argv[0]);
      return 2;
    }
  }

  // No SA_RESTART: epoll_wait returns EINTR and the loop sees g_stop.
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  int listen_fd = ListenTcp(bind_addr, port);
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) Die("epoll_create1");
  epoll_event lev{};
  lev.events = EPOLLIN;
  lev.data.ptr = nullptr;  // nullptr marks the listening socket
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &lev) != 0) Die("epoll_ctl(ADD listen)");
  std::fprintf(stderr, "plain epoll echo server on %s:%d\n", bind_addr.c_str(), port);

  epoll_event events[kMaxEvents];
  while (!g_stop) {
    int n = epoll_wait(epfd, events, kMaxEvents, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      Die("epoll_wait");
    }
    for (int i = 0; i < n; ++i) {
      auto* c = static_cast<Connection*>(events[i].data.ptr);
      if (c == nullptr) {
        AcceptAll(epfd, listen_fd);
      } else if (c->pending_end != 0) {
        OnWritable(epfd, c);  // only EPOLLOUT (or an error) is armed while draining
      } else {
        OnReadable(epfd, c);  // EPOLLIN, or EPOLLERR/EPOLLHUP which the read reports
      }
    }
  }
  // Open connections are left to the kernel to close at exit.
  close(epfd);
  close(listen_fd);
  return 0;
}
