// Pub/sub and blocking-list load for tools/pubsub-bench.sh. redis-benchmark can publish but
// cannot subscribe, so it can neither count deliveries nor time a BLPOP wake-up.
//
// --mode=publish: --subscribers connections SUBSCRIBE to one channel; once all are
// subscribed, --publishers connections each send --messages PUBLISH commands of --size
// bytes, keeping --window of them in flight. Checked on the way: every PUBLISH reply is the
// number of subscribers (the exact receiver count), and every subscriber receives every
// message once, in each publisher's order (the payload starts with "<publisher>:<seq>:").
// The connections are spread over --threads threads, each an epoll loop, so the load can
// use more than one core. Prints one line:
//
//   publishes=N publish_seconds=S publishes_per_sec=R delivered=D deliver_seconds=S
//   delivered_per_sec=R
//
// (on one line), both times counted from the moment every subscriber is subscribed: to the
// last PUBLISH reply, and to the last message delivered.
//
// --mode=pingpong: BLPOP/LPUSH ping-pong between two connections A and B through the lists
// <prefix>ping and <prefix>pong. B waits in BLPOP ping; A sends LPUSH ping + BLPOP pong in
// one write; B, woken, sends LPUSH pong + BLPOP ping in one write; A's BLPOP returns. One
// round trip is two wake-ups of a client parked in BLPOP, timed from A's write to A's reply;
// --warmup round trips, then --iterations measured ones. Prints one line:
//
//   round_trips=N p50_us=X p90_us=X p99_us=X p999_us=X max_us=X
//
// Any failure (a wrong or error reply, a lost, duplicated or reordered message, --timeout
// seconds passed, a closed connection) prints "pubsub_load: <why>" on stderr and exits 1.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tools/load_socket.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "6379";
  std::string mode = "publish";
  std::string channel = "bench:channel";
  std::string prefix = "bench:";
  int64_t subscribers = 1;
  int64_t publishers = 1;
  int64_t messages = 100000;  // per publisher
  int64_t size = 64;
  int64_t window = 32;
  int64_t threads = 1;
  int64_t iterations = 20000;
  int64_t warmup = 1000;
  int64_t timeout_s = 120;
};

[[noreturn]] void Die(const std::string& why) {
  fprintf(stderr, "pubsub_load: %s\n", why.c_str());
  exit(1);
}

int Connect(const Options& o, bool nonblocking) {
  int fd = load_tools::ConnectOrDie(o.host, o.port, Die, nonblocking);
  if (!nonblocking) {
    timeval tv{o.timeout_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  }
  return fd;
}

void AppendCommand(std::string* out, std::initializer_list<std::string_view> args) {
  char head[32];
  out->append(head, snprintf(head, sizeof(head), "*%zu\r\n", args.size()));
  for (std::string_view a : args) {
    out->append(head, snprintf(head, sizeof(head), "$%zu\r\n", a.size()));
    out->append(a);
    out->append("\r\n");
  }
}

// One element of a reply: a bulk or simple string, an error, or an integer.
struct Part {
  char type = 0;
  std::string_view text;  // strings and errors; empty for a null bulk
  int64_t number = 0;     // integers
};

// The integer at the start of `s` (0 if there is none), without copying it.
int64_t ToInt(std::string_view s) {
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// Parses the element at in[pos...]: returns the position after it, or 0 if it is not all
// there yet.
size_t ParseElement(std::string_view in, size_t pos, Part* part) {
  size_t eol = in.find("\r\n", pos);
  if (eol == std::string_view::npos) return 0;
  part->type = in[pos];
  std::string_view head = in.substr(pos + 1, eol - pos - 1);
  if (part->type == '$') {
    int64_t n = ToInt(head);
    if (n < 0) {
      part->text = {};
      return eol + 2;
    }
    if (in.size() < eol + 2 + n + 2) return 0;
    part->text = in.substr(eol + 2, n);
    return eol + 2 + n + 2;
  }
  if (part->type == ':') {
    part->number = ToInt(head);
  } else if (part->type == '+' || part->type == '-') {
    part->text = head;
  } else {
    Die("unexpected reply type '" + std::string(in.substr(pos, 40)) + "'");
  }
  return eol + 2;
}

// Parses one reply at the start of `in`: an array of elements (one level, as pub/sub
// messages and BLPOP replies are) or one element. Returns its length, or 0 if it is not all
// there yet. The parts point into `in`.
size_t ParseReply(std::string_view in, std::vector<Part>* parts) {
  parts->clear();
  if (in.empty()) return 0;
  if (in[0] != '*') {
    Part p;
    size_t end = ParseElement(in, 0, &p);
    if (end != 0) parts->push_back(p);
    return end;
  }
  size_t eol = in.find("\r\n");
  if (eol == std::string_view::npos) return 0;
  int64_t count = ToInt(in.substr(1, eol - 1));
  size_t pos = eol + 2;
  for (int64_t i = 0; i < count; ++i) {
    Part p;
    pos = ParseElement(in, pos, &p);
    if (pos == 0) return 0;
    parts->push_back(p);
  }
  return pos;
}

// A non-blocking connection: unsent output and unparsed input.
struct Conn {
  int fd = -1;
  std::string out;
  size_t out_pos = 0;
  std::string in;
  size_t in_pos = 0;
  bool want_write = false;
};

// ----------------------------------------------------------------------------- publish mode

// What every thread shares: the start line after the subscriptions, and the results.
struct PublishShared {
  std::mutex mu;
  std::condition_variable cv;
  int64_t threads_subscribed = 0;
  Clock::time_point start;
  bool started = false;
  std::atomic<int64_t> publish_end_ns{0};  // since start; the latest over the threads
  std::atomic<int64_t> deliver_end_ns{0};
  std::atomic<int64_t> delivered{0};
};

void StoreMax(std::atomic<int64_t>* a, int64_t v) {
  int64_t cur = a->load();
  while (v > cur && !a->compare_exchange_weak(cur, v)) {
  }
}

class PublishThread {
 public:
  PublishThread(const Options& o, PublishShared* shared, int64_t index) : o_(o), shared_(shared) {
    epfd_ = epoll_create1(0);
    if (epfd_ < 0) Die("epoll_create1: " + std::string(strerror(errno)));
    for (int64_t s = index; s < o.subscribers; s += o.threads) subs_.push_back({});
    for (int64_t p = index; p < o.publishers; p += o.threads) pubs_.push_back({p, {}});
    expected_per_sub_ = o.publishers * o.messages;
  }

  void Run() {
    Subscribe();
    {
      std::unique_lock lock(shared_->mu);
      if (++shared_->threads_subscribed == o_.threads) {
        shared_->start = Clock::now();
        shared_->started = true;
        shared_->cv.notify_all();
      }
      shared_->cv.wait(lock, [&] { return shared_->started; });
      start_ = shared_->start;
    }
    for (size_t i = 0; i < pubs_.size(); ++i) FillWindow(i);
    deadline_ = Clock::now() + std::chrono::seconds(o_.timeout_s);
    while (!Done()) Poll("publishing");
    shared_->delivered += delivered_;
  }

 private:
  struct Sub {
    Conn c;
    int64_t received = 0;
    std::vector<int64_t> next_seq;  // per publisher
  };
  struct Pub {
    int64_t id;
    Conn c;
    int64_t sent = 0;
    int64_t acked = 0;
  };

  // An epoll tag: the index of a subscriber or a publisher, and which.
  static uint64_t SubTag(size_t i) { return i << 1 | 1; }
  static uint64_t PubTag(size_t i) { return i << 1; }

  void Register(Conn* c, uint64_t tag) {
    c->fd = Connect(o_, true);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, c->fd, &ev) != 0) Die("epoll_ctl add");
  }

  void Subscribe() {
    for (size_t i = 0; i < subs_.size(); ++i) {
      subs_[i].next_seq.assign(o_.publishers, 0);
      Register(&subs_[i].c, SubTag(i));
      AppendCommand(&subs_[i].c.out, {"SUBSCRIBE", o_.channel});
      Flush(&subs_[i].c, SubTag(i));
    }
    for (size_t i = 0; i < pubs_.size(); ++i) Register(&pubs_[i].c, PubTag(i));
    deadline_ = Clock::now() + std::chrono::seconds(o_.timeout_s);
    while (subscribed_ < static_cast<int64_t>(subs_.size())) Poll("subscribing");
  }

  bool Done() const {
    return pubs_done_ == static_cast<int64_t>(pubs_.size()) &&
           subs_done_ == static_cast<int64_t>(subs_.size());
  }

  int64_t SinceStartNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
  }

  void FillWindow(size_t i) {
    Pub* p = &pubs_[i];
    char payload_head[48];
    std::string payload;
    while (p->sent < o_.messages && p->sent - p->acked < o_.window) {
      int n = snprintf(payload_head, sizeof(payload_head), "%ld:%ld:", long(p->id), long(p->sent));
      payload.assign(payload_head, n);
      if (static_cast<int64_t>(payload.size()) < o_.size) payload.resize(o_.size, 'x');
      AppendCommand(&p->c.out, {"PUBLISH", o_.channel, payload});
      ++p->sent;
    }
    Flush(&p->c, PubTag(i));
  }

  // Sends what it can of c->out; asks for EPOLLOUT while some is left.
  void Flush(Conn* c, uint64_t tag) {
    while (c->out_pos < c->out.size()) {
      ssize_t n = send(c->fd, c->out.data() + c->out_pos, c->out.size() - c->out_pos, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) Die("send: " + std::string(strerror(errno)));
      c->out_pos += n;
    }
    if (c->out_pos == c->out.size()) {
      c->out.clear();
      c->out_pos = 0;
    }
    bool want_write = !c->out.empty();
    if (want_write != c->want_write) {
      epoll_event ev{};
      ev.events = EPOLLIN | (want_write ? uint32_t{EPOLLOUT} : 0u);
      ev.data.u64 = tag;
      if (epoll_ctl(epfd_, EPOLL_CTL_MOD, c->fd, &ev) != 0) Die("epoll_ctl mod");
      c->want_write = want_write;
    }
  }

  // Reads what is there; false if nothing was.
  static bool Receive(Conn* c) {
    if (c->in_pos > 0 && c->in_pos == c->in.size()) {
      c->in.clear();
      c->in_pos = 0;
    }
    return load_tools::RecvSomeOrDie(c->fd, &c->in, Die);
  }

  void Poll(const char* phase) {
    epoll_event events[64];
    int n = epoll_wait(epfd_, events, 64, 100);
    if (n < 0 && errno != EINTR) Die("epoll_wait: " + std::string(strerror(errno)));
    for (int i = 0; i < n; ++i) {
      uint64_t tag = events[i].data.u64;
      size_t index = tag >> 1;
      Conn* c = (tag & 1) ? &subs_[index].c : &pubs_[index].c;
      if (events[i].events & EPOLLOUT) Flush(c, tag);
      if (!(events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
      if (tag & 1) {
        OnSubscriberInput(&subs_[index]);
      } else {
        OnPublisherInput(index);
      }
    }
    if (Clock::now() > deadline_) {
      int64_t acked = 0, received = 0;
      for (const Pub& p : pubs_) acked += p.acked;
      for (const Sub& s : subs_) received += s.received;
      Die(std::string("timed out ") + phase + " after " + std::to_string(o_.timeout_s) +
          " s: this thread's publishers had " + std::to_string(acked) + " replies, its " +
          std::to_string(subs_.size()) + " subscribers " + std::to_string(received) +
          " messages (of " + std::to_string(expected_per_sub_) + " each)");
    }
  }

  void OnSubscriberInput(Sub* s) {
    if (!Receive(&s->c)) return;
    std::vector<Part> parts;
    while (true) {
      std::string_view in(s->c.in);
      size_t len = ParseReply(in.substr(s->c.in_pos), &parts);
      if (len == 0) break;
      s->c.in_pos += len;
      if (parts.size() == 3 && parts[0].text == "message") {
        OnMessage(s, parts[2].text);
      } else if (parts.size() == 3 && parts[0].text == "subscribe") {
        ++subscribed_;
      } else {
        Die("unexpected reply on a subscriber: '" +
            std::string(in.substr(s->c.in_pos - len, std::min<size_t>(len, 80))) + "'");
      }
    }
  }

  void OnMessage(Sub* s, std::string_view payload) {
    // "<publisher>:<seq>:..."
    const char* end = payload.data() + payload.size();
    int64_t pub = -1, seq = -1;
    auto [p, ec] = std::from_chars(payload.data(), end, pub);
    if (ec == std::errc() && p < end && *p == ':') std::from_chars(p + 1, end, seq);
    if (pub < 0 || pub >= o_.publishers || seq < 0) {
      Die("bad message payload '" + std::string(payload.substr(0, 40)) + "'");
    }
    if (seq != s->next_seq[pub]) {
      Die("publisher " + std::to_string(pub) + "'s message " + std::to_string(seq) +
          " arrived where " + std::to_string(s->next_seq[pub]) + " was due (lost or reordered)");
    }
    ++s->next_seq[pub];
    ++delivered_;
    if (++s->received == expected_per_sub_) {
      ++subs_done_;
      StoreMax(&shared_->deliver_end_ns, SinceStartNs());
    }
  }

  void OnPublisherInput(size_t i) {
    Pub* p = &pubs_[i];
    if (!Receive(&p->c)) return;
    std::vector<Part> parts;
    while (true) {
      std::string_view in(p->c.in);
      size_t len = ParseReply(in.substr(p->c.in_pos), &parts);
      if (len == 0) break;
      p->c.in_pos += len;
      if (parts.size() != 1 || parts[0].type != ':') {
        Die("PUBLISH answered '" +
            std::string(in.substr(p->c.in_pos - len, std::min<size_t>(len, 80))) + "'");
      }
      if (parts[0].number != o_.subscribers) {
        // Fewer: a confirmed subscription the publisher cannot see yet, or a subscriber
        // the server disconnected at its client-output-buffer-limit (its log says so).
        Die("PUBLISH answered " + std::to_string(parts[0].number) + " receivers, not " +
            std::to_string(o_.subscribers) +
            " (a subscription not seen yet, or a subscriber disconnected at its limit?)");
      }
      if (++p->acked == o_.messages) {
        ++pubs_done_;
        StoreMax(&shared_->publish_end_ns, SinceStartNs());
      }
    }
    FillWindow(i);
  }

  const Options& o_;
  PublishShared* shared_;
  int epfd_ = -1;
  std::vector<Sub> subs_;
  std::vector<Pub> pubs_;
  int64_t expected_per_sub_ = 0;
  int64_t subscribed_ = 0;
  int64_t subs_done_ = 0;
  int64_t pubs_done_ = 0;
  int64_t delivered_ = 0;
  Clock::time_point start_;
  Clock::time_point deadline_;
};

int RunPublish(const Options& o) {
  PublishShared shared;
  std::vector<std::unique_ptr<PublishThread>> workers;
  for (int64_t t = 0; t < o.threads; ++t) {
    workers.push_back(std::make_unique<PublishThread>(o, &shared, t));
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w->Run(); });
  for (std::thread& t : threads) t.join();

  int64_t publishes = o.publishers * o.messages;
  double publish_s = shared.publish_end_ns.load() / 1e9;
  double deliver_s = shared.deliver_end_ns.load() / 1e9;
  int64_t delivered = shared.delivered.load();
  printf(
      "publishes=%ld publish_seconds=%.3f publishes_per_sec=%.0f delivered=%ld "
      "deliver_seconds=%.3f delivered_per_sec=%.0f\n",
      long(publishes), publish_s, publish_s > 0 ? publishes / publish_s : 0.0, long(delivered),
      deliver_s, deliver_s > 0 ? delivered / deliver_s : 0.0);
  return 0;
}

// ---------------------------------------------------------------------------- pingpong mode

// A blocking connection that reads whole replies.
class BlockingConn {
 public:
  explicit BlockingConn(const Options& o) : fd_(Connect(o, false)) {}
  ~BlockingConn() { close(fd_); }

  void Send(const std::string& data) { load_tools::SendAllOrDie(fd_, data, Die); }

  // The next reply's parts (valid until the next call).
  const std::vector<Part>& Read() {
    if (pos_ > 0) {
      in_.erase(0, pos_);
      pos_ = 0;
    }
    while (true) {
      size_t len = ParseReply(in_, &parts_);
      if (len != 0) {
        pos_ = len;
        return parts_;
      }
      char buf[4096];
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) Die("no reply within --timeout");
      if (n == 0) Die("the server closed a connection");
      if (n < 0) Die("recv: " + std::string(strerror(errno)));
      in_.append(buf, n);
    }
  }

 private:
  int fd_;
  std::string in_;
  size_t pos_ = 0;
  std::vector<Part> parts_;
};

void ExpectPopped(const std::vector<Part>& r, const std::string& key, const std::string& value) {
  if (r.size() != 2 || r[0].text != key || r[1].text != value) {
    Die("BLPOP " + key + " did not return [" + key + ", " + value + "]" +
        (r.size() == 1 && r[0].type == '-' ? ": " + std::string(r[0].text) : ""));
  }
}

void ExpectInteger(const std::vector<Part>& r, const char* what) {
  if (r.size() != 1 || r[0].type != ':') {
    Die(std::string(what) + " did not answer an integer" +
        (r.size() == 1 && r[0].type == '-' ? ": " + std::string(r[0].text) : ""));
  }
}

int RunPingPong(const Options& o) {
  std::string ping = o.prefix + "ping", pong = o.prefix + "pong";
  BlockingConn a(o), b(o);
  std::string cmd;
  AppendCommand(&cmd, {"DEL", ping, pong});
  a.Send(cmd);
  ExpectInteger(a.Read(), "DEL");
  cmd.clear();
  AppendCommand(&cmd, {"BLPOP", ping, "0"});
  b.Send(cmd);

  std::vector<double> us;
  us.reserve(o.iterations);
  for (int64_t i = 0; i < o.warmup + o.iterations; ++i) {
    std::string value = std::to_string(i);
    std::string a_cmds, b_cmds;
    AppendCommand(&a_cmds, {"LPUSH", ping, value});
    AppendCommand(&a_cmds, {"BLPOP", pong, "0"});
    AppendCommand(&b_cmds, {"LPUSH", pong, value});
    AppendCommand(&b_cmds, {"BLPOP", ping, "0"});
    auto t0 = Clock::now();
    a.Send(a_cmds);
    ExpectPopped(b.Read(), ping, value);
    b.Send(b_cmds);
    ExpectInteger(a.Read(), "LPUSH");
    ExpectPopped(a.Read(), pong, value);
    auto t1 = Clock::now();
    ExpectInteger(b.Read(), "LPUSH");
    if (i >= o.warmup) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, size_t(q * us.size()))]; };
  printf("round_trips=%zu p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f\n",
         us.size(), at(0.5), at(0.9), at(0.99), at(0.999), us.back());
  return 0;  // B is still parked in BLPOP: closing it is part of the test
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view name) { return load_tools::FlagValue(argv[i], name); };
    if (const char* v = value("--host"))
      o.host = v;
    else if (const char* v = value("--port"))
      o.port = v;
    else if (const char* v = value("--mode"))
      o.mode = v;
    else if (const char* v = value("--channel"))
      o.channel = v;
    else if (const char* v = value("--prefix"))
      o.prefix = v;
    else if (const char* v = value("--subscribers"))
      o.subscribers = atoll(v);
    else if (const char* v = value("--publishers"))
      o.publishers = atoll(v);
    else if (const char* v = value("--messages"))
      o.messages = atoll(v);
    else if (const char* v = value("--size"))
      o.size = atoll(v);
    else if (const char* v = value("--window"))
      o.window = atoll(v);
    else if (const char* v = value("--threads"))
      o.threads = atoll(v);
    else if (const char* v = value("--iterations"))
      o.iterations = atoll(v);
    else if (const char* v = value("--warmup"))
      o.warmup = atoll(v);
    else if (const char* v = value("--timeout"))
      o.timeout_s = atoll(v);
    else
      Die("unknown argument " + std::string(arg));
  }
  if (o.mode != "publish" && o.mode != "pingpong") Die("unknown --mode " + o.mode);
  if (o.subscribers < 0 || o.publishers < 1 || o.messages < 1 || o.size < 0 || o.window < 1 ||
      o.threads < 1 || o.iterations < 1 || o.warmup < 0 || o.timeout_s < 1) {
    Die("--publishers, --messages, --window, --threads, --iterations and --timeout must be "
        "positive; --subscribers, --size and --warmup not negative");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  return o.mode == "publish" ? RunPublish(o) : RunPingPong(o);
}
