// Pipelined RESP loader for collections (tools/collections-bench.sh): fills a server with
// generated hashes, sets, sorted sets or lists over one connection, one thread.
//
// Python (or redis-cli --pipe fed by a generator) spends more CPU generating tens of millions
// of members than the server spends storing them, and the load generator shares CPU 1 with
// nothing else, so a fill would measure the generator. This one writes the commands straight
// into a send buffer and keeps --window commands in flight; that bound also keeps the
// replies (a few bytes each) well inside the socket buffers, so blocking send and recv
// cannot deadlock against a server that stops reading while its replies are unread.
//
// Keys are <prefix><i> for i in [--first, --first + --keys), or the one key --key. Each key
// gets --members members,
// --per-command of them per command:
//   --type hash  HSET key field value ...   --type set   SADD key member ...
//   --type zset  ZADD key score member ...  --type list  RPUSH key element ...
//   --type stream  XADD key <id> f1 v1 ... f5 v5  (one entry per command: a member is an
//                entry; the ID is "*", or with --style element <j+1>-0)
// Member j of a key is, by --style:
//   short    hash field "f<j>" with value "v<j>"; set, sorted-set and list member "m<j>";
//            sorted-set score a pseudo-random integer in [0, 1000000) (so that inserts are
//            not in score order)
//   element  "element:<j as 12 digits>", what redis-benchmark's element:__rand_int__ gives
//            for -r; hash value "xxx"; score j
//   random   streams only: values of 8-32 random printable bytes (ASCII 32-126), a
//            realistic payload that repeats nothing (the same for the same key and entry
//            on every run: the generator is seeded by them)
// On success prints one line on stdout:
//
//   commands=N members=M seconds=S
//
// Every reply must be an integer (XADD's: a bulk string, the new ID). On an error reply it stops sending, drains what is in
// flight, prints "coll_load: server error: <text>" on stderr and exits 3 (so that a server
// without the command is told apart from a broken one); any other failure exits 1.
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

#include "tools/load_socket.h"

namespace {

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "6379";
  std::string type = "hash";
  std::string style = "short";
  std::string prefix = "key:";
  std::string key;  // when set, the only key (--keys and --first do not apply)
  int64_t first = 0;
  int64_t keys = 1;
  int64_t members = 10;
  int64_t per_command = 100;
  int64_t window = 256;
};

[[noreturn]] void Die(const std::string& why) {
  fprintf(stderr, "coll_load: %s\n", why.c_str());
  exit(1);
}

int Connect(const Options& o) { return load_tools::ConnectOrDie(o.host, o.port, Die); }
void SendAll(int fd, std::string_view data) { load_tools::SendAllOrDie(fd, data, Die); }

void AppendBulk(std::string* out, std::string_view s) {
  char head[32];
  int n = snprintf(head, sizeof(head), "$%zu\r\n", s.size());
  out->append(head, n);
  out->append(s);
  out->append("\r\n");
}

class Loader {
 public:
  explicit Loader(const Options& o) : o_(o) {
    if (o.type == "hash") {
      verb_ = "HSET";
    } else if (o.type == "set") {
      verb_ = "SADD";
    } else if (o.type == "zset") {
      verb_ = "ZADD";
    } else if (o.type == "list") {
      verb_ = "RPUSH";
    } else if (o.type == "stream") {
      verb_ = "XADD";
    } else {
      Die("unknown --type " + o.type + " (hash, set, zset, list, stream)");
    }
    if (o.style != "short" && o.style != "element" && o.style != "random") {
      Die("unknown --style " + o.style);
    }
    if (o.style == "random" && o.type != "stream") Die("--style random is for --type stream");
    words_per_member_ = (o.type == "hash" || o.type == "zset") ? 2 : 1;
    per_command_ = o.type == "stream" ? 1 : o.per_command;
    commands_per_key_ = (o.members + per_command_ - 1) / per_command_;
  }

  // Sends every command and checks every reply; returns the number of commands sent.
  int64_t Run() {
    fd_ = Connect(o_);
    const int64_t total = o_.keys * commands_per_key_;
    int64_t next = 0;
    std::string out;
    while (next < total || in_flight_ > 0) {
      out.clear();
      while (next < total && in_flight_ < o_.window && out.size() < 65536 && error_.empty()) {
        AppendCommand(next++, &out);
        ++in_flight_;
      }
      if (!out.empty()) SendAll(fd_, out);
      if (!error_.empty()) next = total;  // stop sending; drain what is in flight
      // Block for replies only when nothing more may be sent; otherwise take what is there.
      bool must_wait = in_flight_ >= o_.window || next >= total;
      if (in_flight_ > 0) ReadReplies(must_wait);
    }
    close(fd_);
    return total;
  }

  const std::string& error() const { return error_; }
  int64_t members_sent() const { return members_sent_; }

 private:
  void AppendCommand(int64_t c, std::string* out) {
    int64_t key = o_.first + c / commands_per_key_;
    int64_t from = (c % commands_per_key_) * per_command_;
    int64_t to = std::min(o_.members, from + per_command_);
    if (o_.type == "stream") {
      out->append("*13\r\n");
      AppendBulk(out, verb_);
      AppendBulk(out, o_.key.empty() ? o_.prefix + std::to_string(key) : o_.key);
      AppendBulk(out, o_.style == "element" ? std::to_string(from + 1) + "-0" : "*");
      uint64_t seed = uint64_t(key) * 0x9E3779B97F4A7C15ull ^ uint64_t(from);
      for (const char* field : {"f1", "f2", "f3", "f4", "f5"}) {
        AppendBulk(out, field);
        if (o_.style == "random") {
          AppendBulk(out, RandomValue(&seed));
        } else {
          const char value[2] = {'v', field[1]};
          AppendBulk(out, std::string_view(value, 2));
        }
      }
      members_sent_ += 1;
      return;
    }
    char head[32];
    int n = snprintf(head, sizeof(head), "*%ld\r\n", long(2 + (to - from) * words_per_member_));
    out->append(head, n);
    AppendBulk(out, verb_);
    AppendBulk(out, o_.key.empty() ? o_.prefix + std::to_string(key) : o_.key);
    for (int64_t j = from; j < to; ++j) {
      char buf[64];
      if (o_.type == "zset") {
        int64_t score = o_.style == "short" ? (j * 2654435761 + key * 40503) % 1000000 : j;
        AppendBulk(out, std::string_view(buf, snprintf(buf, sizeof(buf), "%ld", long(score))));
      }
      AppendBulk(out, Member(j, buf, sizeof(buf)));
      if (o_.type == "hash") {
        AppendBulk(out, o_.style == "short"
                            ? std::string_view(buf, snprintf(buf, sizeof(buf), "v%ld", long(j)))
                            : std::string_view("xxx"));
      }
    }
    members_sent_ += to - from;
  }

  // 8-32 printable bytes from splitmix64, advancing *seed.
  std::string RandomValue(uint64_t* seed) const {
    auto next = [seed] {
      uint64_t z = (*seed += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return z ^ (z >> 31);
    };
    std::string value(8 + next() % 25, ' ');
    for (char& c : value) c = char(32 + next() % 95);
    return value;
  }

  std::string_view Member(int64_t j, char* buf, size_t size) const {
    if (o_.style == "element") {
      return std::string_view(buf, snprintf(buf, size, "element:%012ld", long(j)));
    }
    return std::string_view(buf, snprintf(buf, size, "%c%ld", o_.type == "hash" ? 'f' : 'm',
                                          long(j)));
  }

  // Reads once (waiting if `wait`) and consumes every complete reply line.
  void ReadReplies(bool wait) {
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof(buf), wait ? 0 : MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) Die(n == 0 ? "the server closed the connection" : "recv: " + std::string(strerror(errno)));
    pending_.append(buf, n);
    size_t start = 0;
    for (size_t pos; (pos = pending_.find("\r\n", start)) != std::string::npos; start = pos + 2) {
      std::string_view line(pending_.data() + start, pos - start);
      if (bulk_next_) {  // the body of a bulk reply
        bulk_next_ = false;
        --in_flight_;
        continue;
      }
      if (!line.empty() && line[0] == '$' && line != "$-1") {
        bulk_next_ = true;
        continue;
      }
      if (line.empty() || (line[0] != ':' && line[0] != '-' && line[0] != '$')) {
        Die("unexpected reply '" + std::string(line.substr(0, 80)) + "'");
      }
      if (line[0] == '-' && error_.empty()) error_ = std::string(line.substr(1));
      --in_flight_;
    }
    pending_.erase(0, start);
  }

  const Options& o_;
  std::string verb_;
  int words_per_member_;
  int64_t per_command_;
  int64_t commands_per_key_;
  bool bulk_next_ = false;  // the next line is the body of a bulk reply
  int fd_ = -1;
  int64_t in_flight_ = 0;
  int64_t members_sent_ = 0;
  std::string pending_;  // the start of a reply line not received whole yet
  std::string error_;    // the first error reply
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view name) { return load_tools::FlagValue(argv[i], name); };
    if (const char* v = value("--host")) o.host = v;
    else if (const char* v = value("--port")) o.port = v;
    else if (const char* v = value("--type")) o.type = v;
    else if (const char* v = value("--style")) o.style = v;
    else if (const char* v = value("--prefix")) o.prefix = v;
    else if (const char* v = value("--key")) o.key = v;
    else if (const char* v = value("--first")) o.first = atoll(v);
    else if (const char* v = value("--keys")) o.keys = atoll(v);
    else if (const char* v = value("--members")) o.members = atoll(v);
    else if (const char* v = value("--per-command")) o.per_command = atoll(v);
    else if (const char* v = value("--window")) o.window = atoll(v);
    else Die("unknown argument " + std::string(arg));
  }
  if (o.first < 0 || o.keys < 1 || o.members < 1 || o.per_command < 1 || o.window < 1) {
    Die("--keys, --members, --per-command and --window must be positive, --first not negative");
  }
  if (!o.key.empty()) o.keys = 1;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  Loader loader(o);
  auto start = std::chrono::steady_clock::now();
  int64_t commands = loader.Run();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!loader.error().empty()) {
    fprintf(stderr, "coll_load: server error: %s\n", loader.error().c_str());
    return 3;
  }
  printf("commands=%ld members=%ld seconds=%.2f\n", long(commands), long(loader.members_sent()),
         seconds);
  return 0;
}
