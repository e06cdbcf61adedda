// Trace-driven cache hit-rate load (tools/cache-bench.sh): replays a generated key sequence
// the way a cache client does (GET; on a miss, SET the value) over RESP or the memcache
// text protocol, and reports the hit ratio per phase. One thread, epoll, --conns
// connections each keeping --pipeline GETs in flight.
//
// The key sequence is a pure function of the options and --seed (a 64-bit Mersenne Twister
// drawn in one order, doubles made from its bits by hand), so every server sees the same
// requests in the same order. With several requests in flight a key asked for twice before
// its SET has landed misses twice; with 10M keys and 128 requests in flight that changes
// the ratios by far less than the differences between policies.
//
// Workloads (--workload), over the keys "k:<id>", id in [0, --keys):
//   zipf   Zipf(--zipf) ranks: id = rank - 1, so ids below --hot_keys are the hot set.
//   shift  a hot set of --hot_keys ids that moves every --shift_every requests to the next
//          --hot_keys ids (wrapping); --hot_fraction of the requests pick one of its ids
//          uniformly, the others any id uniformly. Phases: the first 10% of each period
//          after a move ("fresh") and the rest ("settled").
//   scan   zipf, then one scan: --scan_keys GETs (and SETs) of keys "s:<i>" that occur
//          nowhere else, sized by the driver to twice the memory limit; then zipf again.
//          After the scan the hot set's hit ratio is reported per --window requests, and
//          how many requests it took to come back within 1 point (0.01) of its ratio
//          before the scan ("recovery_requests"; also in passes over the hot set,
//          requests / --hot_keys, and in scan lengths).
// Every workload starts with --warmup requests that fill the cache and are reported
// apart; then --requests measured requests (for scan: the ones before the scan, the
// baseline), and for scan --after_scan requests after it.
//
// Every value is the same --value_size random letters and digits (damselfly compresses
// values; one repeated byte would shrink there and not in the other servers).
//
// Output, one line each, key=value after the first word:
//   phase=<name> requests=N hits=N hit_ratio=R hot_requests=N hot_hit_ratio=R
//   measured <the same fields>   (every phase but warmup and scan, together)
//   hot_timeline window=N ratios=R,R,...   (scan only: per window after the scan)
//   recovery baseline_hot_hit_ratio=R first_window_hot_hit_ratio=R
//            recovery_requests=N|never hot_set_passes=R scan_lengths=R   (scan only; N is
//            the end of the first whole window back within 0.01, so its resolution is
//            --window)
//   run seconds=S requests_per_sec=N sets=N set_errors=N [first_set_error=<text>]
// --distinct prints "distinct_keys=N" (keys of the trace, scan keys excluded) without a
// server: the driver sizes the memory limit from it. Exits non-zero with the reason on
// stderr on a bad reply, a read error or a 10 s stall; SET errors (OOM) are counted.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
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
  std::string workload = "zipf";  // zipf | shift | scan
  double zipf = 0.99;
  int64_t keys = 10'000'000;
  int64_t warmup = 10'000'000;
  int64_t requests = 10'000'000;
  int64_t hot_keys = 100'000;
  int64_t shift_every = 1'000'000;
  double hot_fraction = 0.9;
  int64_t scan_keys = 0;
  int64_t after_scan = 10'000'000;
  int64_t window = 100'000;
  int value_size = 200;
  uint64_t seed = 1;
  int conns = 4;
  int pipeline = 32;
  bool distinct = false;
};

[[noreturn]] void Die(const std::string& why) {
  fprintf(stderr, "hitrate_load: %s\n", why.c_str());
  exit(1);
}

// Zipf ranks in [1, n] with P(k) ~ k^-s, by rejection-inversion (W. Hormann, G. Derflinger,
// "Rejection-inversion to generate variates from monotone discrete distributions", 1996):
// O(1) set-up and about one uniform per draw, where the inverse-CDF table of YCSB's method
// would need 80 MB and a zeta sum for 10M keys.
class ZipfRanks {
 public:
  ZipfRanks(int64_t n, double s) : n_(n), s_(s) {
    h_integral_x1_ = HIntegral(1.5) - 1.0;
    h_integral_n_ = HIntegral(n + 0.5);
    s_cut_ = 2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0));
  }

  // `uniform` returns doubles in [0, 1).
  template <typename Uniform>
  int64_t Draw(Uniform&& uniform) const {
    while (true) {
      double u = h_integral_n_ + uniform() * (h_integral_x1_ - h_integral_n_);
      double x = HIntegralInverse(u);
      int64_t k = std::clamp<int64_t>(int64_t(x + 0.5), 1, n_);
      if (k - x <= s_cut_ || u >= HIntegral(k + 0.5) - H(double(k))) return k;
    }
  }

 private:
  double H(double x) const { return std::exp(-s_ * std::log(x)); }
  double HIntegral(double x) const {
    double log_x = std::log(x);
    return Helper2((1.0 - s_) * log_x) * log_x;
  }
  double HIntegralInverse(double x) const {
    double t = std::max(x * (1.0 - s_), -1.0);
    return std::exp(Helper1(t) * x);
  }
  // log1p(x) / x and expm1(x) / x, with their series near 0 (s close to 1).
  static double Helper1(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
  }
  static double Helper2(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x
                              : 1.0 + x * 0.5 * (1.0 + x / 3 * (1.0 + 0.25 * x));
  }

  int64_t n_;
  double s_;
  double h_integral_x1_, h_integral_n_, s_cut_;
};

struct Request {
  int64_t index;
  int64_t id;
  bool scan;  // a key "s:<id>" of the scan
  bool hot;
  int phase;
};

// The request sequence. Next() must be called in order; request i is the same for every run
// with the same options.
class Trace {
 public:
  explicit Trace(const Options& o) : o_(o), rng_(o.seed), zipf_(o.keys, o.zipf) {
    phases_ = {"warmup"};
    if (o.workload == "zipf") {
      phases_.push_back("measured_zipf");
      total_ = o.warmup + o.requests;
    } else if (o.workload == "shift") {
      phases_.insert(phases_.end(), {"fresh", "settled"});
      total_ = o.warmup + o.requests;
    } else if (o.workload == "scan") {
      phases_.insert(phases_.end(), {"before_scan", "scan", "after_scan"});
      scan_begin_ = o.warmup + o.requests;
      scan_end_ = scan_begin_ + o.scan_keys;
      total_ = scan_end_ + o.after_scan;
    } else {
      Die("unknown --workload " + o.workload + " (zipf, shift, scan)");
    }
  }

  int64_t total() const { return total_; }
  int64_t scan_end() const { return scan_end_; }
  const std::vector<std::string>& phases() const { return phases_; }

  Request Next() {
    Request r{next_++, 0, false, false, 0};
    if (o_.workload == "shift") {
      int64_t epoch = r.index / o_.shift_every;
      int64_t base = (epoch * o_.hot_keys) % o_.keys;
      if (Uniform() < o_.hot_fraction) {
        r.id = (base + UniformInt(o_.hot_keys)) % o_.keys;
      } else {
        r.id = UniformInt(o_.keys);
      }
      r.hot = (r.id - base + o_.keys) % o_.keys < o_.hot_keys;
      if (r.index >= o_.warmup) r.phase = r.index % o_.shift_every < o_.shift_every / 10 ? 1 : 2;
      return r;
    }
    if (o_.workload == "scan" && r.index >= scan_begin_ && r.index < scan_end_) {
      r.id = r.index - scan_begin_;
      r.scan = true;
      r.phase = 2;
      return r;
    }
    r.id = zipf_.Draw([this] { return Uniform(); }) - 1;
    r.hot = r.id < o_.hot_keys;
    if (r.index >= o_.warmup) r.phase = r.index < scan_begin_ || scan_begin_ == 0 ? 1 : 3;
    return r;
  }

 private:
  double Uniform() { return double(rng_() >> 11) * 0x1.0p-53; }
  int64_t UniformInt(int64_t n) { return int64_t(Uniform() * double(n)); }

  const Options& o_;
  std::mt19937_64 rng_;
  ZipfRanks zipf_;
  std::vector<std::string> phases_;
  int64_t next_ = 0, total_ = 0, scan_begin_ = 0, scan_end_ = 0;
};

struct Counts {
  int64_t requests = 0, hits = 0, hot_requests = 0, hot_hits = 0;

  void Add(const Request& r, bool hit) {
    ++requests;
    hits += hit;
    hot_requests += r.hot;
    hot_hits += r.hot && hit;
  }
  void Add(const Counts& c) {
    requests += c.requests;
    hits += c.hits;
    hot_requests += c.hot_requests;
    hot_hits += c.hot_hits;
  }
  double Ratio() const { return requests ? double(hits) / requests : 0; }
  double HotRatio() const { return hot_requests ? double(hot_hits) / hot_requests : 0; }
};

int Connect(const Options& o) { return load_tools::ConnectOrDie(o.host, o.port, Die); }
void SendAll(int fd, std::string_view data) { load_tools::SendAllOrDie(fd, data, Die); }

struct Pending {
  Request request;
  bool is_set;
};

struct Conn {
  int fd = -1;
  int gets_in_flight = 0;
  std::deque<Pending> pending;  // in the order of their replies
  std::string out;
  std::string in;
};

class Replay {
 public:
  Replay(const Options& o, Trace* trace)
      : o_(o),
        trace_(trace),
        value_(load_tools::IncompressibleValue(o.value_size)),
        phases_(trace->phases().size()) {
    resp_ = o.protocol == "resp";
    if (!resp_ && o.protocol != "memcache") Die("unknown --protocol " + o.protocol);
  }

  void Run() {
    int ep = epoll_create1(0);
    conns_.resize(o_.conns);
    const auto start = Clock::now();
    for (size_t i = 0; i < conns_.size(); ++i) {
      conns_[i].fd = Connect(o_);
      epoll_event ev{.events = EPOLLIN, .data = {.u64 = i}};
      epoll_ctl(ep, EPOLL_CTL_ADD, conns_[i].fd, &ev);
      Refill(&conns_[i]);
    }
    auto last_progress = Clock::now();
    epoll_event events[64];
    while (completed_ < trace_->total()) {
      int n = epoll_wait(ep, events, 64, 100);
      if (n == 0 && Clock::now() - last_progress > std::chrono::seconds(10)) {
        Die("no reply for 10 s");
      }
      for (int e = 0; e < n; ++e) {
        Conn& c = conns_[events[e].data.u64];
        if (!load_tools::RecvSomeOrDie(c.fd, &c.in, Die)) continue;
        if (ParseReplies(&c)) last_progress = Clock::now();
        Refill(&c);
      }
    }
    seconds_ = std::chrono::duration<double>(Clock::now() - start).count();
    for (Conn& c : conns_) close(c.fd);
    close(ep);
  }

  void Report() const {
    Counts measured;
    for (size_t p = 0; p < phases_.size(); ++p) {
      const std::string& name = trace_->phases()[p];
      PrintCounts("phase=" + name, phases_[p]);
      if (name != "warmup" && name != "scan") measured.Add(phases_[p]);
    }
    PrintCounts("measured", measured);
    if (o_.workload == "scan") ReportRecovery();
    printf("run seconds=%.1f requests_per_sec=%.0f sets=%ld set_errors=%ld", seconds_,
           trace_->total() / seconds_, long(sets_), long(set_errors_));
    if (!first_set_error_.empty()) printf(" first_set_error=%s", first_set_error_.c_str());
    printf("\n");
  }

 private:
  static void PrintCounts(const std::string& head, const Counts& c) {
    printf("%s requests=%ld hits=%ld hit_ratio=%.4f hot_requests=%ld hot_hit_ratio=%.4f\n",
           head.c_str(), long(c.requests), long(c.hits), c.Ratio(), long(c.hot_requests),
           c.HotRatio());
  }

  void ReportRecovery() const {
    const double baseline = phases_[1].HotRatio();
    std::string timeline;
    int64_t recovery = -1;
    for (size_t w = 0; w < windows_.size(); ++w) {
      char item[16];
      snprintf(item, sizeof(item), "%s%.3f", w ? "," : "", windows_[w].HotRatio());
      timeline += item;
      if (recovery < 0 && windows_[w].requests == o_.window &&
          windows_[w].HotRatio() >= baseline - 0.01) {
        recovery = int64_t(w + 1) * o_.window;
      }
    }
    printf("hot_timeline window=%ld ratios=%s\n", long(o_.window), timeline.c_str());
    printf("recovery baseline_hot_hit_ratio=%.4f first_window_hot_hit_ratio=%.4f ", baseline,
           windows_.empty() ? 0.0 : windows_[0].HotRatio());
    if (recovery < 0) {
      printf("recovery_requests=never\n");
    } else {
      printf("recovery_requests=%ld hot_set_passes=%.2f scan_lengths=%.2f\n", long(recovery),
             double(recovery) / o_.hot_keys, o_.scan_keys ? double(recovery) / o_.scan_keys : 0.0);
    }
  }

  void AppendKey(const Request& r, std::string* out) {
    char key[32];
    int n = snprintf(key, sizeof(key), "%s:%ld", r.scan ? "s" : "k", long(r.id));
    if (resp_) {
      char head[16];
      out->append(head, snprintf(head, sizeof(head), "$%d\r\n", n));
      out->append(key, n);
      out->append("\r\n");
    } else {
      out->append(key, n);
    }
  }

  void AppendGet(Conn* c, const Request& r) {
    c->out += resp_ ? "*2\r\n$3\r\nGET\r\n" : "get ";
    AppendKey(r, &c->out);
    if (!resp_) c->out += "\r\n";
    c->pending.push_back({r, false});
    ++c->gets_in_flight;
  }

  void AppendSet(Conn* c, const Request& r) {
    char head[48];
    if (resp_) {
      c->out += "*3\r\n$3\r\nSET\r\n";
      AppendKey(r, &c->out);
      c->out.append(head, snprintf(head, sizeof(head), "$%d\r\n", o_.value_size));
    } else {
      c->out += "set ";
      AppendKey(r, &c->out);
      c->out.append(head, snprintf(head, sizeof(head), " 0 0 %d\r\n", o_.value_size));
    }
    c->out += value_;
    c->out += "\r\n";
    c->pending.push_back({r, true});
    ++sets_;
  }

  void Refill(Conn* c) {
    while (c->gets_in_flight < o_.pipeline && issued_ < trace_->total()) {
      AppendGet(c, trace_->Next());
      ++issued_;
    }
    if (!c->out.empty()) SendAll(c->fd, c->out);  // bounded by the pipeline: fits the buffer
    c->out.clear();
  }

  // Consumes the complete replies at the start of c->in; true if there was one.
  bool ParseReplies(Conn* c) {
    size_t pos = 0;
    bool progress = false;
    while (!c->pending.empty()) {
      size_t eol = c->in.find("\r\n", pos);
      if (eol == std::string::npos) break;
      std::string_view line(c->in.data() + pos, eol - pos);
      Pending& p = c->pending.front();
      size_t next = eol + 2;
      if (p.is_set) {
        if (line != (resp_ ? "+OK" : "STORED")) {
          if (line.empty() || (line[0] != '-' && line.substr(0, 12) != "SERVER_ERROR")) {
            Die("unexpected SET reply: " + std::string(line.substr(0, 80)));
          }
          if (set_errors_++ == 0) first_set_error_ = std::string(line.substr(0, 80));
        }
      } else {
        int64_t value_bytes = -1;  // -1: a miss
        if (resp_) {
          if (line != "$-1") {
            if (line.empty() || line[0] != '$') Die("unexpected GET reply: " + std::string(line));
            value_bytes = atoll(std::string(line.substr(1)).c_str());
          }
        } else if (line.substr(0, 6) == "VALUE ") {
          value_bytes = atoll(std::string(line.substr(line.rfind(' ') + 1)).c_str());
        } else if (line != "END") {
          Die("unexpected get reply: " + std::string(line.substr(0, 80)));
        }
        if (value_bytes >= 0) {
          if (value_bytes != o_.value_size)
            Die("a value of " + std::to_string(value_bytes) + " bytes");
          next = eol + 2 + value_bytes + 2;
          if (!resp_) next += 5;  // END\r\n
          if (c->in.size() < next) break;
          if (!resp_ && c->in.compare(next - 5, 5, "END\r\n") != 0) Die("get: no END");
        }
        Record(p.request, value_bytes >= 0);
        --c->gets_in_flight;
        if (value_bytes < 0) AppendSet(c, p.request);
      }
      c->pending.pop_front();
      pos = next;
      progress = true;
    }
    c->in.erase(0, pos);
    return progress;
  }

  void Record(const Request& r, bool hit) {
    phases_[r.phase].Add(r, hit);
    ++completed_;
    if (o_.workload == "scan" && r.index >= trace_->scan_end()) {
      size_t w = (r.index - trace_->scan_end()) / o_.window;
      if (windows_.size() <= w) windows_.resize(w + 1);
      windows_[w].Add(r, hit);
    }
  }

  const Options& o_;
  Trace* trace_;
  const std::string value_;
  bool resp_;
  std::vector<Conn> conns_;
  std::vector<Counts> phases_;
  std::vector<Counts> windows_;  // after the scan, per --window requests
  int64_t issued_ = 0, completed_ = 0, sets_ = 0, set_errors_ = 0;
  std::string first_set_error_;
  double seconds_ = 0;
};

int64_t CountDistinct(const Options& o) {
  Trace trace(o);
  std::vector<bool> seen(o.keys);
  int64_t distinct = 0;
  for (int64_t i = 0; i < trace.total(); ++i) {
    Request r = trace.Next();
    if (r.scan || seen[r.id]) continue;
    seen[r.id] = true;
    ++distinct;
  }
  return distinct;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view name) { return load_tools::FlagValue(argv[i], name); };
    if (arg == "--distinct")
      o.distinct = true;
    else if (const char* v = value("--host"))
      o.host = v;
    else if (const char* v = value("--port"))
      o.port = v;
    else if (const char* v = value("--protocol"))
      o.protocol = v;
    else if (const char* v = value("--workload"))
      o.workload = v;
    else if (const char* v = value("--zipf"))
      o.zipf = atof(v);
    else if (const char* v = value("--keys"))
      o.keys = atoll(v);
    else if (const char* v = value("--warmup"))
      o.warmup = atoll(v);
    else if (const char* v = value("--requests"))
      o.requests = atoll(v);
    else if (const char* v = value("--hot_keys"))
      o.hot_keys = atoll(v);
    else if (const char* v = value("--shift_every"))
      o.shift_every = atoll(v);
    else if (const char* v = value("--hot_fraction"))
      o.hot_fraction = atof(v);
    else if (const char* v = value("--scan_keys"))
      o.scan_keys = atoll(v);
    else if (const char* v = value("--after_scan"))
      o.after_scan = atoll(v);
    else if (const char* v = value("--window"))
      o.window = atoll(v);
    else if (const char* v = value("--value_size"))
      o.value_size = atoi(v);
    else if (const char* v = value("--seed"))
      o.seed = strtoull(v, nullptr, 10);
    else if (const char* v = value("--conns"))
      o.conns = atoi(v);
    else if (const char* v = value("--pipeline"))
      o.pipeline = atoi(v);
    else
      Die("unknown argument " + std::string(arg));
  }
  if (o.keys < 1 || o.warmup < 0 || o.requests < 1 || o.hot_keys < 1 || o.hot_keys > o.keys ||
      o.shift_every < 10 || o.scan_keys < 0 || o.after_scan < 0 || o.window < 1 ||
      o.value_size < 1 || o.conns < 1 || o.pipeline < 1 || !(o.zipf > 0) ||
      !(o.hot_fraction >= 0 && o.hot_fraction <= 1)) {
    Die("bad options");
  }
  if (o.workload == "scan" && o.scan_keys < 1) Die("--workload=scan needs --scan_keys");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  if (o.distinct) {
    printf("distinct_keys=%ld\n", long(CountDistinct(o)));
    return 0;
  }
  Trace trace(o);
  Replay replay(o, &trace);
  replay.Run();
  replay.Report();
  return 0;
}
