// Load generator for echo servers (tools/echo-bench.sh): one thread, epoll.
//
// Opens --conns connections; each keeps --pipeline messages of --size bytes in flight and
// sends a new message as soon as an old one has fully come back (a closed loop). Every
// echoed byte is verified. After --warmup seconds it counts completed messages for
// --seconds and prints one line on stdout:
//
//   msgs_per_sec=N mb_per_sec=N avg_rtt_us=N conns=C pipeline=P size=S seconds=D cpu_sec=T
//
// mb_per_sec is echoed payload in one direction, 10^6 bytes. avg_rtt_us follows from
// Little's law (C*P messages always in flight), so it is exact for this closed loop.
// cpu_sec is this process's own user+system CPU time over its whole life, so that the
// driver can tell the CPU it used from that of unrelated processes.
// Exits non-zero, with the reason on stderr, on a verification failure, a connection
// error, or when no echo arrives for kStallSeconds.
//
// Each connection's byte stream is a window into one pseudo-random pattern whose period
// is prime, starting at a different offset per connection; dropped, duplicated,
// reordered or cross-wired bytes therefore show up as a mismatch. Sends and checks work
// straight off the pattern buffer, so the generator costs little beyond its syscalls.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kPeriod = 65521;  // prime: no small shift of the stream matches itself
constexpr size_t kReadSize = 64 * 1024;
constexpr double kStallSeconds = 5.0;

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "6380";
  int conns = 32;
  int pipeline = 16;
  int size = 32;
  double seconds = 5;
  double warmup = 1;
};

struct Conn {
  int fd = -1;
  int id = 0;
  size_t base = 0;     // pattern offset of this connection's stream byte 0
  uint64_t sent = 0;   // stream bytes written
  uint64_t recvd = 0;  // stream bytes echoed back and verified
  bool want_out = false;
};

// Pattern bytes, stored twice so any window of up to kPeriod bytes is contiguous.
std::vector<unsigned char> g_pattern;

void MakePattern() {
  g_pattern.resize(2 * kPeriod);
  uint64_t x = 0x9E3779B97F4A7C15ull;  // xorshift64
  for (size_t i = 0; i < kPeriod; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    g_pattern[i] = g_pattern[kPeriod + i] = static_cast<unsigned char>(x >> 56);
  }
}

const unsigned char* PatternAt(const Conn& c, uint64_t stream_pos) {
  return &g_pattern[(c.base + stream_pos) % kPeriod];
}

[[noreturn]] void Fail(const std::string& msg) {
  std::fprintf(stderr, "echo_load: error: %s\n", msg.c_str());
  std::exit(1);
}

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

int Connect(const Options& o) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(o.host.c_str(), o.port.c_str(), &hints, &res); rc != 0)
    Fail("resolve " + o.host + ": " + gai_strerror(rc));
  int fd = -1;
  std::string last_err = "no address";
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      last_err = Errno("connect");
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) Fail(o.host + ":" + o.port + ": " + last_err);
  int one = 1;  // small pipelined writes must not wait for Nagle
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

void SetInterest(int epfd, Conn* c, bool want_out) {
  if (c->want_out == want_out) return;
  epoll_event ev{};
  ev.events = want_out ? EPOLLIN | EPOLLOUT : EPOLLIN;
  ev.data.ptr = c;
  if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) Fail(Errno("epoll_ctl(MOD)"));
  c->want_out = want_out;
}

// Sends whole messages until `pipeline` are outstanding or the socket buffer is full.
void TopUp(int epfd, Conn* c, const Options& o) {
  const uint64_t size = uint64_t(o.size);
  const uint64_t target = (c->recvd / size + uint64_t(o.pipeline)) * size;
  while (c->sent < target) {
    size_t len = size_t(std::min<uint64_t>(target - c->sent, kPeriod));
    ssize_t n = write(c->fd, PatternAt(*c, c->sent), len);
    if (n > 0) {
      c->sent += uint64_t(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      SetInterest(epfd, c, true);
      return;
    } else {
      Fail("conn " + std::to_string(c->id) + ": " + Errno("write"));
    }
  }
  SetInterest(epfd, c, false);
}

// Reads what has arrived and checks it against the stream. Returns bytes verified.
uint64_t Drain(Conn* c, unsigned char* buf) {
  ssize_t n;
  do {
    n = read(c->fd, buf, kReadSize);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return 0;
  if (n < 0) Fail("conn " + std::to_string(c->id) + ": " + Errno("read"));
  if (n == 0) Fail("conn " + std::to_string(c->id) + ": server closed the connection");
  if (c->recvd + uint64_t(n) > c->sent)
    Fail("conn " + std::to_string(c->id) + ": received " + std::to_string(c->recvd + n) +
         " bytes but sent only " + std::to_string(c->sent));

  for (size_t off = 0; off < size_t(n);) {
    size_t len = std::min(size_t(n) - off, kPeriod);
    const unsigned char* want = PatternAt(*c, c->recvd + off);
    if (std::memcmp(buf + off, want, len) != 0) {
      size_t i = 0;
      while (buf[off + i] == want[i]) ++i;
      char detail[160];
      std::snprintf(detail, sizeof(detail),
                    "conn %d: echo mismatch at stream byte %llu: got 0x%02x, expected 0x%02x",
                    c->id, static_cast<unsigned long long>(c->recvd + off + i), buf[off + i],
                    want[i]);
      Fail(detail);
    }
    off += len;
  }
  c->recvd += uint64_t(n);
  return uint64_t(n);
}

bool ParseFlag(std::string_view arg, std::string_view name, std::string* value) {
  if (arg.substr(0, name.size()) != name || arg.size() <= name.size() ||
      arg[name.size()] != '=')
    return false;
  *value = std::string(arg.substr(name.size() + 1));
  return true;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (ParseFlag(argv[i], "--host", &v)) {
      o.host = v;
    } else if (ParseFlag(argv[i], "--port", &v)) {
      o.port = v;
    } else if (ParseFlag(argv[i], "--conns", &v)) {
      o.conns = std::atoi(v.c_str());
    } else if (ParseFlag(argv[i], "--pipeline", &v)) {
      o.pipeline = std::atoi(v.c_str());
    } else if (ParseFlag(argv[i], "--size", &v)) {
      o.size = std::atoi(v.c_str());
    } else if (ParseFlag(argv[i], "--seconds", &v)) {
      o.seconds = std::atof(v.c_str());
    } else if (ParseFlag(argv[i], "--warmup", &v)) {
      o.warmup = std::atof(v.c_str());
    } else {
      std::fprintf(stderr,
                   "usage: %s [--host=H] [--port=N] [--conns=C] [--pipeline=P] [--size=S]"
                   " [--seconds=D] [--warmup=W]\n",
                   argv[0]);
      std::exit(2);
    }
  }
  if (o.conns < 1 || o.pipeline < 1 || o.size < 1 || o.seconds <= 0 || o.warmup < 0) {
    std::fprintf(stderr, "echo_load: conns, pipeline, size and seconds must be positive\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseArgs(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  MakePattern();

  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) Fail(Errno("epoll_create1"));
  std::vector<Conn> conns(size_t(o.conns));  // never resized: epoll holds pointers
  for (int i = 0; i < o.conns; ++i) {
    Conn& c = conns[size_t(i)];
    c.id = i;
    c.base = (size_t(i) * 7919) % kPeriod;
    c.fd = Connect(o);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = &c;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c.fd, &ev) != 0) Fail(Errno("epoll_ctl(ADD)"));
  }
  for (Conn& c : conns) TopUp(epfd, &c, o);

  std::vector<unsigned char> buf(kReadSize);
  std::vector<epoll_event> events(conns.size());
  // Whole messages echoed so far; half-echoed ones are not throughput yet.
  auto completed = [&] {
    uint64_t msgs = 0;
    for (const Conn& c : conns) msgs += c.recvd / uint64_t(o.size);
    return msgs;
  };

  const auto start = Clock::now();
  const auto warmup_end = start + std::chrono::duration<double>(o.warmup);
  bool measuring = false;
  Clock::time_point measure_start;
  uint64_t msgs_at_start = 0;
  auto last_progress = start;

  while (true) {
    int n = epoll_wait(epfd, events.data(), int(events.size()), 100);
    if (n < 0 && errno != EINTR) Fail(Errno("epoll_wait"));
    bool progress = false;
    for (int i = 0; i < n; ++i) {
      Conn* c = static_cast<Conn*>(events[size_t(i)].data.ptr);
      uint32_t ev = events[size_t(i)].events;
      if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) progress |= Drain(c, buf.data()) > 0;
      TopUp(epfd, c, o);
    }

    const auto now = Clock::now();
    if (progress) {
      last_progress = now;
    } else if (std::chrono::duration<double>(now - last_progress).count() > kStallSeconds) {
      Fail("no echo for " + std::to_string(int(kStallSeconds)) + "s: server stalled");
    }
    if (!measuring && now >= warmup_end) {
      measuring = true;
      measure_start = now;
      msgs_at_start = completed();
    } else if (measuring &&
               std::chrono::duration<double>(now - measure_start).count() >= o.seconds) {
      const double elapsed = std::chrono::duration<double>(now - measure_start).count();
      const uint64_t msgs = completed() - msgs_at_start;
      if (msgs == 0) Fail("no message completed during the measurement");
      const double msgs_per_sec = double(msgs) / elapsed;
      const double mb_per_sec = msgs_per_sec * o.size / 1e6;
      const double rtt_us = double(o.conns) * o.pipeline / msgs_per_sec * 1e6;
      std::printf("msgs_per_sec=%.0f mb_per_sec=%.2f avg_rtt_us=%.1f conns=%d pipeline=%d"
                  " size=%d seconds=%.2f cpu_sec=%.2f\n",
                  msgs_per_sec, mb_per_sec, rtt_us, o.conns, o.pipeline, o.size, elapsed,
                  CpuSeconds());
      break;
    }
  }

  for (Conn& c : conns) close(c.fd);
  close(epfd);
  return 0;
}
