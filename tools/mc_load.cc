// Pipelined multi-get load generator for the memcached text protocol
// (tools/memcache-bench.sh): one thread, epoll.
//
// First stores --keys items "key:<i>" of --size bytes (set, pipelined). Then opens --conns
// connections; each keeps --pipeline requests "get key:a key:b ..." of --mget random keys in
// flight and sends a new one as soon as one has completed (a closed loop). After --warmup
// seconds it counts completed requests for --seconds and prints one line on stdout:
//
//   keys_per_sec=N requests_per_sec=N conns=C pipeline=P mget=K size=S seconds=D cpu_sec=T
//
// A request completes at its "END\r\n"; every reply is checked to hold exactly --mget
// VALUE blocks of --size bytes (all keys exist), so a server that drops or mangles items
// fails the run. cpu_sec is this process's own CPU time, so the driver can tell it from
// the server's. Exits non-zero, with the reason on stderr, on a failure or a 5 s stall.
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tools/load_socket.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "11211";
  int conns = 16;
  int pipeline = 8;
  int mget = 100;
  int keys = 100000;
  int size = 32;
  double seconds = 5;
  double warmup = 1;
};

[[noreturn]] void Die(const std::string& why) {
  fprintf(stderr, "mc_load: %s\n", why.c_str());
  exit(1);
}

int Connect(const Options& o) { return load_tools::ConnectOrDie(o.host, o.port, Die); }
void SendAll(int fd, std::string_view data) { load_tools::SendAllOrDie(fd, data, Die); }

// Stores every key over one blocking connection, 1,000 sets per write.
void Preload(const Options& o) {
  int fd = Connect(o);
  const std::string value(o.size, 'x');
  std::string batch, reply;
  char buf[65536];
  for (int first = 0; first < o.keys; first += 1000) {
    int count = std::min(1000, o.keys - first);
    batch.clear();
    for (int i = first; i < first + count; ++i) {
      batch += "set key:" + std::to_string(i) + " 0 0 " + std::to_string(o.size) + "\r\n" + value + "\r\n";
    }
    SendAll(fd, batch);
    size_t stored = 0;
    reply.clear();
    while (stored < size_t(count)) {
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) Die("preload: connection lost");
      reply.append(buf, n);
      for (size_t pos; (pos = reply.find("\r\n")) != std::string::npos; reply.erase(0, pos + 2)) {
        if (reply.compare(0, pos, "STORED") != 0) Die("preload: " + reply.substr(0, pos));
        ++stored;
      }
    }
  }
  close(fd);
}

struct Conn {
  int fd = -1;
  int in_flight = 0;
  std::string out;     // requests not sent yet
  std::string reply;   // the reply being parsed
  int values = 0;      // VALUE blocks of the reply being parsed
};

class Load {
 public:
  explicit Load(const Options& o) : o_(o), rng_(42), pick_(0, o.keys - 1) {}

  void Run() {
    int ep = epoll_create1(0);
    conns_.resize(o_.conns);
    for (size_t i = 0; i < conns_.size(); ++i) {
      Conn& c = conns_[i];
      c.fd = Connect(o_);
      epoll_event ev{.events = EPOLLIN, .data = {.u64 = i}};
      epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
      while (c.in_flight < o_.pipeline) Enqueue(&c);
      Flush(&c);
    }
    const auto start = Clock::now();
    const auto measure_from = start + std::chrono::duration<double>(o_.warmup);
    const auto end = measure_from + std::chrono::duration<double>(o_.seconds);
    auto last_progress = start;
    uint64_t counted = 0;
    bool measuring = false;
    epoll_event events[64];
    while (true) {
      auto now = Clock::now();
      if (!measuring && now >= measure_from) {
        measuring = true;
        completed_ = 0;
      }
      if (now >= end) break;
      if (now - last_progress > std::chrono::seconds(5)) Die("no reply for 5 s");
      int n = epoll_wait(ep, events, 64, 100);
      for (int e = 0; e < n; ++e) {
        Conn& c = conns_[events[e].data.u64];
        if (!load_tools::RecvSomeOrDie(c.fd, &c.reply, Die)) continue;
        if (Parse(&c)) last_progress = Clock::now();
        while (c.in_flight < o_.pipeline) Enqueue(&c);
        Flush(&c);
      }
    }
    counted = completed_;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    double cpu = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
                 (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    double rps = counted / o_.seconds;
    printf("keys_per_sec=%.0f requests_per_sec=%.0f conns=%d pipeline=%d mget=%d size=%d seconds=%g cpu_sec=%.2f\n",
           rps * o_.mget, rps, o_.conns, o_.pipeline, o_.mget, o_.size, o_.seconds, cpu);
  }

 private:
  void Enqueue(Conn* c) {
    c->out += "get";
    for (int k = 0; k < o_.mget; ++k) c->out += " key:" + std::to_string(pick_(rng_));
    c->out += "\r\n";
    ++c->in_flight;
  }

  void Flush(Conn* c) {
    SendAll(c->fd, c->out);  // small requests: the socket buffer takes them
    c->out.clear();
  }

  // Consumes the complete lines and value blocks of c->reply; true when a request
  // completed.
  bool Parse(Conn* c) {
    bool progress = false;
    size_t pos = 0;
    const size_t block = size_t(o_.size) + 2;
    while (true) {
      size_t eol = c->reply.find("\r\n", pos);
      if (eol == std::string::npos) break;
      std::string_view line(c->reply.data() + pos, eol - pos);
      if (line == "END") {
        if (c->values != o_.mget) Die("a reply had " + std::to_string(c->values) + " values");
        c->values = 0;
        --c->in_flight;
        ++completed_;
        progress = true;
        pos = eol + 2;
      } else if (line.substr(0, 6) == "VALUE ") {
        if (c->reply.size() < eol + 2 + block) break;  // the value block is incomplete
        ++c->values;
        pos = eol + 2 + block;
      } else {
        Die("unexpected reply: " + std::string(line));
      }
    }
    c->reply.erase(0, pos);
    return progress;
  }

  const Options o_;
  std::mt19937 rng_;
  std::uniform_int_distribution<int> pick_;
  std::vector<Conn> conns_;
  uint64_t completed_ = 0;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view name) { return load_tools::FlagValue(argv[i], name); };
    if (const char* v = value("--host")) o.host = v;
    else if (const char* v = value("--port")) o.port = v;
    else if (const char* v = value("--conns")) o.conns = atoi(v);
    else if (const char* v = value("--pipeline")) o.pipeline = atoi(v);
    else if (const char* v = value("--mget")) o.mget = atoi(v);
    else if (const char* v = value("--keys")) o.keys = atoi(v);
    else if (const char* v = value("--size")) o.size = atoi(v);
    else if (const char* v = value("--seconds")) o.seconds = atof(v);
    else if (const char* v = value("--warmup")) o.warmup = atof(v);
    else Die("unknown argument " + std::string(arg));
  }
  if (o.conns < 1 || o.pipeline < 1 || o.mget < 1 || o.keys < 1 || o.size < 1) Die("bad options");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  Preload(o);
  Load(o).Run();
  return 0;
}
