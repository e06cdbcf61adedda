// Write flood (tools/flood-bench.sh, issue #19 point 6): --conns clients write --value_size
// values as fast as they can, for --seconds (or until --passes passes over the key space
// have been answered, if that comes first), over a key space of --space times --maxmemory
// (keys "f:<n>", taken in turn, so the flood writes the whole space and then overwrites
// it), while the server's resident set size is sampled every --sample_ms from
// /proc/<--pid>/status. One thread, epoll; each connection keeps --pipeline SETs in flight.
//
// Reads must keep working: at every sample a separate connection GETs "f:0" (written first,
// while the server had room) and a key acknowledged during the last sample; an error reply
// or no reply within 5 s counts as a failed read (after a timeout the reads go on over a
// new connection). A miss is not a failure (an evicting
// server may have dropped the key); "first_key_hits" says how often f:0 was still there.
//
// Throughput while unfilled is the rate of answered writes until their values add up to half
// of --maxmemory; filled is the rate once they pass 1.5 times --maxmemory (stored or refused:
// without eviction the filled rate is the rate of OOM errors).
//
// Output (key=value, one line each):
//   writes  total=N ok=N oom=N other_errors=N per_sec=N first_error=<text>
//   throughput unfilled_per_sec=N filled_per_sec=N filled_over_unfilled=R
//   rss samples=N peak_bytes=N peak_over_maxmemory=R last_bytes=N maxmemory=N
//   reads checks=N failed=N timeouts=N first_key_hits=N max_latency_ms=R
//   timeline second=S writes_per_sec=N rss_mb=R   (one line per second)
// Exits 1 on a protocol error, a lost connection or a stall of 10 s; 0 otherwise (the
// driver judges the figures).
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tools/load_socket.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "6379";
  std::string protocol = "resp";  // resp | memcache
  int conns = 4;
  int pipeline = 16;
  int value_size = 1024;
  int64_t maxmemory = 0;
  double space = 3;
  double seconds = 60;
  int passes = 0;  // stop after this many passes over the key space (0: only --seconds)
  int sample_ms = 100;
  int pid = 0;
};

[[noreturn]] void Die(const std::string& why) {
  fprintf(stderr, "flood_load: %s\n", why.c_str());
  exit(1);
}

int Connect(const Options& o) { return load_tools::ConnectOrDie(o.host, o.port, Die); }
void SendAll(int fd, std::string_view data) { load_tools::SendAllOrDie(fd, data, Die); }

// VmRSS of `pid` in bytes; 0 when it cannot be read.
int64_t RssBytes(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return atoll(line.c_str() + 6) * 1024;
  }
  return 0;
}

struct Conn {
  int fd = -1;
  int in_flight = 0;
  std::deque<int64_t> keys;  // the key numbers of the SETs in flight, in order
  std::string out, in;
};

class Flood {
 public:
  explicit Flood(const Options& o) : o_(o), value_(load_tools::IncompressibleValue(o.value_size)) {
    resp_ = o.protocol == "resp";
    if (!resp_ && o.protocol != "memcache") Die("unknown --protocol " + o.protocol);
    space_keys_ = std::max<int64_t>(1, int64_t(o.space * o.maxmemory / o.value_size));
  }

  void Run() {
    int ep = epoll_create1(0);
    conns_.resize(o_.conns);
    for (size_t i = 0; i < conns_.size(); ++i) {
      conns_[i].fd = Connect(o_);
      epoll_event ev{.events = EPOLLIN, .data = {.u64 = i}};
      epoll_ctl(ep, EPOLL_CTL_ADD, conns_[i].fd, &ev);
    }
    ConnectReader();
    for (Conn& c : conns_) Refill(&c);
    start_ = Clock::now();
    const auto end = start_ + std::chrono::duration<double>(o_.seconds);
    auto next_sample = start_;
    auto last_progress = start_;
    epoll_event events[64];
    while (Clock::now() < end && (o_.passes == 0 || replies_ < o_.passes * space_keys_)) {
      if (Clock::now() >= next_sample) {
        Sample();
        next_sample += std::chrono::milliseconds(o_.sample_ms);
      }
      if (Clock::now() - last_progress > std::chrono::seconds(10)) Die("no reply for 10 s");
      int n = epoll_wait(ep, events, 64, std::max(1, o_.sample_ms / 4));
      for (int e = 0; e < n; ++e) {
        Conn& c = conns_[events[e].data.u64];
        if (!load_tools::RecvSomeOrDie(c.fd, &c.in, Die)) continue;
        if (ParseReplies(&c)) last_progress = Clock::now();
        Refill(&c);
      }
    }
    Sample();
    elapsed_ = std::chrono::duration<double>(Clock::now() - start_).count();
  }

  void Report() const {
    printf("writes total=%ld ok=%ld oom=%ld other_errors=%ld per_sec=%.0f first_error=%s\n",
           long(replies_), long(ok_), long(oom_), long(other_errors_), replies_ / elapsed_,
           first_error_.empty() ? "none" : first_error_.c_str());
    double unfilled = unfilled_seconds_ > 0 ? unfilled_replies_ / unfilled_seconds_ : 0;
    double filled_seconds =
        filled_since_ ? elapsed_ - std::chrono::duration<double>(*filled_since_ - start_).count()
                      : 0;
    double filled = filled_seconds > 0 ? filled_replies_ / filled_seconds : 0;
    printf("throughput unfilled_per_sec=%.0f filled_per_sec=%.0f filled_over_unfilled=%.3f\n",
           unfilled, filled, unfilled > 0 ? filled / unfilled : 0.0);
    printf(
        "rss samples=%ld peak_bytes=%ld peak_over_maxmemory=%.3f last_bytes=%ld "
        "maxmemory=%ld\n",
        long(rss_samples_), long(peak_rss_), o_.maxmemory ? double(peak_rss_) / o_.maxmemory : 0,
        long(last_rss_), long(o_.maxmemory));
    printf("reads checks=%ld failed=%ld timeouts=%ld first_key_hits=%ld max_latency_ms=%.1f\n",
           long(read_checks_), long(read_failures_), long(read_timeouts_), long(first_key_hits_),
           max_read_ms_);
    for (size_t s = 0; s < per_second_.size(); ++s) {
      printf("timeline second=%zu writes_per_sec=%ld rss_mb=%.1f\n", s + 1,
             long(per_second_[s].replies), per_second_[s].peak_rss / 1048576.0);
    }
  }

 private:
  struct Second {
    int64_t replies = 0;
    int64_t peak_rss = 0;
  };

  Second& CurrentSecond() {
    size_t s = size_t(std::chrono::duration<double>(Clock::now() - start_).count());
    if (per_second_.size() <= s) per_second_.resize(s + 1);
    return per_second_[s];
  }

  void Sample() {
    if (o_.pid > 0) {
      last_rss_ = RssBytes(o_.pid);
      if (last_rss_ == 0) Die("cannot read the RSS of pid " + std::to_string(o_.pid));
      peak_rss_ = std::max(peak_rss_, last_rss_);
      ++rss_samples_;
      Second& s = CurrentSecond();
      s.peak_rss = std::max(s.peak_rss, last_rss_);
    }
    CheckRead(0);
    if (last_acked_ > 0) CheckRead(last_acked_);
  }

  void ConnectReader() {
    reader_ = Connect(o_);
    timeval timeout{.tv_sec = kReadTimeoutSeconds, .tv_usec = 0};
    setsockopt(reader_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }

  // GETs "f:<n>" on the reader connection; a value or a miss is a working read.
  void CheckRead(int64_t n) {
    auto begin = Clock::now();
    std::string key = "f:" + std::to_string(n);
    SendAll(reader_,
            resp_ ? "*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n"
                  : "get " + key + "\r\n");
    std::string reply;
    char buf[4096];
    bool done = false, hit = false;
    while (!done) {
      ssize_t got = recv(reader_, buf, sizeof(buf), 0);
      if (got <= 0) break;  // the timeout or a lost connection
      reply.append(buf, got);
      size_t eol = reply.find("\r\n");
      if (eol == std::string::npos) continue;
      if (resp_) {
        if (reply[0] == '$' && reply.compare(0, 3, "$-1") != 0) {
          hit = true;
          done = reply.size() >= eol + 2 + size_t(o_.value_size) + 2;
        } else {
          done = true;
        }
      } else {
        hit = reply.rfind("VALUE ", 0) == 0;
        done = reply.size() >= 5 && reply.compare(reply.size() - 5, 5, "END\r\n") == 0;
        if (reply.rfind("SERVER_ERROR", 0) == 0 || reply.rfind("ERROR", 0) == 0) done = true;
      }
    }
    ++read_checks_;
    bool ok =
        done && (resp_ ? (reply[0] == '$') : (reply.rfind("VALUE ", 0) == 0 || reply == "END\r\n"));
    if (!ok) {
      if (read_failures_++ == 0) {
        fprintf(stderr, "flood_load: read failed: %s\n",
                done ? reply.substr(0, 80).c_str() : "no complete reply in time");
      }
      if (!done) {  // its reply may still come: start over on a new connection
        ++read_timeouts_;
        close(reader_);
        ConnectReader();
      }
    }
    if (n == 0 && hit) ++first_key_hits_;
    max_read_ms_ = std::max(
        max_read_ms_, std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
  }

  void Refill(Conn* c) {
    while (c->in_flight < o_.pipeline) {
      std::string key = "f:" + std::to_string(next_key_);
      c->keys.push_back(next_key_);
      next_key_ = (next_key_ + 1) % space_keys_;
      if (resp_) {
        c->out += "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$" +
                  std::to_string(o_.value_size) + "\r\n";
      } else {
        c->out += "set " + key + " 0 0 " + std::to_string(o_.value_size) + "\r\n";
      }
      c->out += value_;
      c->out += "\r\n";
      ++c->in_flight;
    }
    SendAll(c->fd, c->out);  // --pipeline values: well inside the socket buffer
    c->out.clear();
  }

  bool ParseReplies(Conn* c) {
    size_t pos = 0;
    bool progress = false;
    for (size_t eol; (eol = c->in.find("\r\n", pos)) != std::string::npos; pos = eol + 2) {
      std::string_view line(c->in.data() + pos, eol - pos);
      if (line == (resp_ ? "+OK" : "STORED")) {
        ++ok_;
        last_acked_ = c->keys.front();
      } else if (line.rfind("-OOM", 0) == 0 || line.rfind("SERVER_ERROR out of memory", 0) == 0) {
        ++oom_;
        if (first_error_.empty()) first_error_ = std::string(line);
      } else if (!line.empty() && (line[0] == '-' || line.rfind("SERVER_ERROR", 0) == 0)) {
        ++other_errors_;
        if (first_error_.empty()) first_error_ = std::string(line);
      } else {
        Die("unexpected reply: " + std::string(line.substr(0, 80)));
      }
      c->keys.pop_front();
      --c->in_flight;
      ++replies_;
      ++CurrentSecond().replies;
      CountPhase();
      progress = true;
    }
    c->in.erase(0, pos);
    return progress;
  }

  // Splits the replies into the unfilled and filled phases by the bytes the replies answer
  // for, stored or refused: without eviction nothing is stored past maxmemory.
  void CountPhase() {
    const double written = double(replies_) * o_.value_size;
    auto now = Clock::now();
    if (written <= 0.5 * o_.maxmemory) {
      ++unfilled_replies_;
      unfilled_seconds_ = std::chrono::duration<double>(now - start_).count();
    } else if (written > 1.5 * o_.maxmemory) {
      if (!filled_since_) filled_since_ = now;
      ++filled_replies_;
    }
  }

  const Options& o_;
  const std::string value_;
  bool resp_;
  int64_t space_keys_;
  std::vector<Conn> conns_;
  static constexpr int kReadTimeoutSeconds = 5;
  int reader_ = -1;
  Clock::time_point start_;
  std::optional<Clock::time_point> filled_since_;
  double elapsed_ = 0, unfilled_seconds_ = 0, max_read_ms_ = 0;
  int64_t next_key_ = 0, last_acked_ = 0;
  int64_t replies_ = 0, ok_ = 0, oom_ = 0, other_errors_ = 0;
  int64_t unfilled_replies_ = 0, filled_replies_ = 0;
  int64_t rss_samples_ = 0, peak_rss_ = 0, last_rss_ = 0;
  int64_t read_checks_ = 0, read_failures_ = 0, read_timeouts_ = 0, first_key_hits_ = 0;
  std::string first_error_;
  std::vector<Second> per_second_;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view name) { return load_tools::FlagValue(argv[i], name); };
    if (const char* v = value("--host"))
      o.host = v;
    else if (const char* v = value("--port"))
      o.port = v;
    else if (const char* v = value("--protocol"))
      o.protocol = v;
    else if (const char* v = value("--conns"))
      o.conns = atoi(v);
    else if (const char* v = value("--pipeline"))
      o.pipeline = atoi(v);
    else if (const char* v = value("--value_size"))
      o.value_size = atoi(v);
    else if (const char* v = value("--maxmemory"))
      o.maxmemory = atoll(v);
    else if (const char* v = value("--space"))
      o.space = atof(v);
    else if (const char* v = value("--seconds"))
      o.seconds = atof(v);
    else if (const char* v = value("--passes"))
      o.passes = atoi(v);
    else if (const char* v = value("--sample_ms"))
      o.sample_ms = atoi(v);
    else if (const char* v = value("--pid"))
      o.pid = atoi(v);
    else
      Die("unknown argument " + std::string(arg));
  }
  if (o.conns < 1 || o.pipeline < 1 || o.value_size < 1 || o.maxmemory < 1 || !(o.space > 0) ||
      !(o.seconds > 0) || o.sample_ms < 1 || o.passes < 0) {
    Die("bad options (--maxmemory=<bytes> is required)");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  Flood flood(o);
  flood.Run();
  flood.Report();
  return 0;
}
