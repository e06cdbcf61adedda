// Closed-loop RESP load generator (tools/types-bench.sh, LOADER=resp_load): a lighter
// stand-in for redis-benchmark where redis-benchmark's own CPU sets the pace. At -P 32
// redis-benchmark parses every reply in full and tops out near 2.5M simple replies/s, or
// 60k XREAD replies of ten entries, on one core: below what either server can answer, so
// its ratios there measure the load generator.
//
// One thread, epoll. Opens --conns connections; each keeps --pipeline copies of one command
// in flight and sends as many new ones as replies came back (a closed loop). The command is
// the remaining arguments, as redis-benchmark takes them; each "__rand_int__" in an
// argument becomes a 12-digit number below --rand (redis-benchmark's -r), drawn anew per
// request from a generator seeded anew each run (--seed=N repeats a run's draws), else
// 000000000000. Replies are skimmed, not parsed: the skimmer follows RESP2
// and RESP3 framing (lengths of bulk strings, element counts of aggregates, nested) only
// far enough to find where each top-level reply ends.
//
// After --warmup seconds it counts replies for --seconds and prints one line on stdout:
//
//   requests_per_sec=N conns=C pipeline=P seconds=D cpu_sec=T
//
// With --requests=N it sends N requests in all instead (as redis-benchmark's -n, so that a
// driver can check what they did), and the rate is over the whole run, from the first
// send to the last reply; --seconds and --warmup are then unused.
//
// cpu_sec is this process's own CPU time, so a driver can tell whether the load set the
// pace. An error reply, a malformed reply, a lost connection or 5 s without a reply print
// the reason (the error's text for an error reply) on stderr and exit 1.
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
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
constexpr std::string_view kRandToken = "__rand_int__";
constexpr size_t kRandDigits = 12;

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "6379";
  int conns = 50;
  int pipeline = 1;
  uint64_t rand = 0;
  uint64_t seed = std::random_device{}();  // a run repeated with the same draws hits no new key
  uint64_t requests = 0;  // 0: run for --warmup + --seconds
  double seconds = 5;
  double warmup = 1;
  std::vector<std::string> command;
};

[[noreturn]] void Die(const std::string& why) {
  fprintf(stderr, "resp_load: %s\n", why.c_str());
  exit(1);
}

// The command in RESP with every __rand_int__ already widened to 12 digits, and where
// those digits sit, so that a request is a copy of the template plus a few digit writes.
struct Template {
  std::string bytes;
  std::vector<size_t> rand_offsets;

  explicit Template(const std::vector<std::string>& args) {
    bytes = "*" + std::to_string(args.size()) + "\r\n";
    for (std::string arg : args) {
      std::vector<size_t> in_arg;
      for (size_t at = arg.find(kRandToken); at != std::string::npos;
           at = arg.find(kRandToken, at + kRandDigits)) {
        arg.replace(at, kRandToken.size(), std::string(kRandDigits, '0'));
        in_arg.push_back(at);
      }
      bytes += "$" + std::to_string(arg.size()) + "\r\n";
      for (size_t at : in_arg) rand_offsets.push_back(bytes.size() + at);
      bytes += arg + "\r\n";
    }
  }
};

// Finds where top-level RESP replies end, across reads. Holds no reply bytes: only the
// stack of element counts still owed by the aggregates being read.
class ReplySkimmer {
 public:
  // Consumes the complete elements at the front of `in`; returns the number of top-level
  // replies completed and sets *used to the bytes consumed (a partial element stays).
  size_t Skim(std::string_view in, size_t* used) {
    size_t pos = 0, done = 0;
    while (pos < in.size()) {
      if (bulk_left_ > 0) {  // the rest of a bulk string's payload and CRLF
        size_t take = std::min<uint64_t>(bulk_left_, in.size() - pos);
        pos += take;
        bulk_left_ -= take;
        if (bulk_left_ > 0) break;
        done += ElementDone();
        continue;
      }
      size_t eol = in.find("\r\n", pos);
      if (eol == std::string_view::npos) break;
      std::string_view line = in.substr(pos, eol - pos);
      pos = eol + 2;
      if (line.empty()) Die("malformed reply: an empty line");
      const char type = line[0];
      if (type == '-' || type == '!') {
        Die("error reply: " + std::string(line.substr(1)));
      }
      switch (type) {
        case '+': case ':': case '_': case ',': case '#': case '(':
          done += ElementDone();
          break;
        case '$': case '=': {
          int64_t len = Length(line);
          if (len < 0) {
            done += ElementDone();  // a null bulk
          } else {
            bulk_left_ = uint64_t(len) + 2;
          }
          break;
        }
        case '*': case '~': case '>': case '%': case '|': {
          int64_t n = Length(line);
          if (type == '%' || type == '|') n *= 2;
          if (type == '|') {  // an attribute precedes the reply it annotates
            if (n > 0) owed_.push_back(n);
            break;
          }
          if (n <= 0) {
            done += ElementDone();  // empty or null aggregate
          } else {
            owed_.push_back(n);
          }
          break;
        }
        default:
          Die("malformed reply: unknown type byte '" + std::string(1, type) + "'");
      }
    }
    *used = pos;
    return done;
  }

 private:
  static int64_t Length(std::string_view line) {
    std::string digits(line.substr(1));
    char* end = nullptr;
    long long v = strtoll(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0') Die("malformed reply: bad length " + digits);
    return v;
  }

  // One element ended: pays the innermost aggregate, and closes every aggregate that is
  // paid in full. Returns 1 when that finished a top-level reply.
  size_t ElementDone() {
    while (!owed_.empty()) {
      if (--owed_.back() > 0) return 0;
      owed_.pop_back();
    }
    return 1;
  }

  uint64_t bulk_left_ = 0;
  std::vector<int64_t> owed_;
};

struct Conn {
  int fd = -1;
  std::string in;  // received bytes not skimmed yet
  ReplySkimmer skimmer;
};

class Load {
 public:
  explicit Load(const Options& o) : o_(o), template_(o.command), rng_(o.seed) {}

  void Run() {
    int ep = epoll_create1(0);
    conns_.resize(o_.conns);
    for (size_t i = 0; i < conns_.size(); ++i) {
      Conn& c = conns_[i];
      c.fd = load_tools::ConnectOrDie(o_.host, o_.port, Die);
      epoll_event ev{.events = EPOLLIN, .data = {.u64 = i}};
      epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
      Send(c, o_.pipeline);
    }
    const auto start = Clock::now();
    if (o_.requests > 0) return RunCounted(ep, start);
    const auto measure_from = start + std::chrono::duration<double>(o_.warmup);
    const auto end = measure_from + std::chrono::duration<double>(o_.seconds);
    auto last_reply = start;
    uint64_t completed = 0;
    bool measuring = false;
    while (true) {
      const auto now = Clock::now();
      if (!measuring && now >= measure_from) {
        measuring = true;
        completed = 0;
      }
      if (now >= end) break;
      completed += Step(ep, &last_reply);
    }
    Report(completed, o_.seconds);
  }

 private:
  // --requests: runs until that many replies came back.
  void RunCounted(int ep, Clock::time_point start) {
    auto last_reply = start;
    uint64_t completed = 0;
    while (completed < o_.requests) completed += Step(ep, &last_reply);
    Report(completed, std::chrono::duration<double>(Clock::now() - start).count());
  }

  // One wait for replies (at most 100 ms): answers each reply with a new request and
  // returns how many came back. Dies when none has come for 5 s.
  uint64_t Step(int ep, Clock::time_point* last_reply) {
    if (Clock::now() - *last_reply > std::chrono::seconds(5)) Die("no reply for 5 s");
    epoll_event events[64];
    const int n = epoll_wait(ep, events, 64, 100);
    uint64_t completed = 0;
    for (int e = 0; e < n; ++e) {
      Conn& c = conns_[events[e].data.u64];
      const size_t replies = Receive(c);
      if (replies == 0) continue;
      completed += replies;
      *last_reply = Clock::now();
      Send(c, replies);
    }
    return completed;
  }

  // Reads what c has and returns the number of replies it completed.
  size_t Receive(Conn& c) {
    ssize_t got = recv(c.fd, buf_, sizeof(buf_), MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (got == 0) Die("the server closed a connection");
    if (got < 0) Die("recv: " + std::string(strerror(errno)));
    size_t used = 0, replies;
    if (c.in.empty()) {  // the common case: skim straight from the receive buffer
      replies = c.skimmer.Skim(std::string_view(buf_, size_t(got)), &used);
      c.in.assign(buf_ + used, size_t(got) - used);
    } else {
      c.in.append(buf_, size_t(got));
      replies = c.skimmer.Skim(c.in, &used);
      c.in.erase(0, used);
    }
    return replies;
  }

  void Report(uint64_t completed, double seconds) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double cpu = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    printf("requests_per_sec=%.0f conns=%d pipeline=%d seconds=%g cpu_sec=%.2f\n",
           double(completed) / seconds, o_.conns, o_.pipeline, seconds, cpu);
  }

  // Sends up to `count` requests on c in one write (fewer when --requests runs out).
  void Send(Conn& c, size_t count) {
    if (o_.requests > 0) {
      count = std::min<uint64_t>(count, o_.requests - sent_);
      sent_ += count;
      if (count == 0) return;
    }
    out_.clear();
    for (size_t i = 0; i < count; ++i) {
      const size_t base = out_.size();
      out_ += template_.bytes;
      for (size_t offset : template_.rand_offsets) {
        uint64_t v = o_.rand > 0 ? rng_() % o_.rand : 0;
        for (size_t d = kRandDigits; d-- > 0; v /= 10) out_[base + offset + d] = char('0' + v % 10);
      }
    }
    load_tools::SendAllOrDie(c.fd, out_, Die);  // at most --pipeline requests: the socket takes them
  }

  const Options o_;
  const Template template_;
  std::mt19937_64 rng_;
  std::vector<Conn> conns_;
  std::string out_;
  uint64_t sent_ = 0;
  char buf_[1 << 16];
};

Options ParseOptions(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc && std::string_view(argv[i]).substr(0, 2) == "--"; ++i) {
    auto value = [&](std::string_view name) { return load_tools::FlagValue(argv[i], name); };
    if (const char* v = value("--host")) o.host = v;
    else if (const char* v = value("--port")) o.port = v;
    else if (const char* v = value("--conns")) o.conns = atoi(v);
    else if (const char* v = value("--pipeline")) o.pipeline = atoi(v);
    else if (const char* v = value("--rand")) o.rand = strtoull(v, nullptr, 10);
    else if (const char* v = value("--seed")) o.seed = strtoull(v, nullptr, 10);
    else if (const char* v = value("--requests")) o.requests = strtoull(v, nullptr, 10);
    else if (const char* v = value("--seconds")) o.seconds = atof(v);
    else if (const char* v = value("--warmup")) o.warmup = atof(v);
    else Die("unknown argument " + std::string(argv[i]));
  }
  for (; i < argc; ++i) o.command.emplace_back(argv[i]);
  if (o.command.empty()) Die("usage: resp_load [--options] COMMAND [ARG ...]");
  if (o.conns < 1 || o.pipeline < 1 || o.seconds <= 0 || o.warmup < 0) Die("bad options");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Load(ParseOptions(argc, argv)).Run();
  return 0;
}
