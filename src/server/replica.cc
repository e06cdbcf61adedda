#include "src/server/replica.h"

#include <fcntl.h>
#include <string.h>
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/fiber/mutex.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "helio/base/strings.h"
#include "helio/fibers/fiber.h"
#include "helio/fibers/sync.h"
#include "helio/io/file.h"
#include "helio/net/fiber_socket.h"
#include "helio/net/socket_address.h"
#include "src/facade/resp_connection.h"
#include "src/facade/resp_parser.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard_set.h"
#include "src/server/multi_exec.h"
#include "src/server/persistence_family.h"

DECLARE_uint32(port);

namespace damselfly {

namespace {

using Clock = std::chrono::steady_clock;
using facade::CmdArgList;
using facade::RespParser;

constexpr size_t kReadChunk = 64 << 10;
constexpr size_t kMaxLineBytes = 64 << 10;  // a handshake reply, a bulk's header
constexpr size_t kMaxBatch = 256;           // commands run as one DispatchMany
constexpr size_t kEofMarkBytes = 40;        // Redis's RDB_EOF_MARK_SIZE

std::atomic<bool> read_only_config{true};
std::atomic<bool> serve_stale_config{true};
std::atomic<bool> following{false};
std::atomic<bool> link_up{false};  // the stream flows
std::atomic<bool> too_few_good_replicas{false};
// ReplicaRefusals(), recomputed from the five above whenever one changes.
std::atomic<uint8_t> refusals{0};
std::atomic<int64_t> repl_timeout_s{60};
std::mutex config_mu;  // guards the strings below, and orders UpdateRefusals' stores
std::string masterauth, masteruser, replicaof_config;
facade::ServiceInterface* service = nullptr;

std::atomic<int> aof_write_errno{0};
std::atomic<bool> bgsave_write_error{false};

void UpdateRefusals() {
  std::lock_guard lock(config_mu);  // two updates do not interleave their loads and store
  uint8_t now = aof_write_errno.load(std::memory_order_relaxed) != 0 ||
                        bgsave_write_error.load(std::memory_order_relaxed)
                    ? kRefuseDiskError
                    : 0;
  if (following.load(std::memory_order_relaxed)) {
    if (read_only_config.load(std::memory_order_relaxed)) now |= kRefuseWrites;
    if (!link_up.load(std::memory_order_relaxed) &&
        !serve_stale_config.load(std::memory_order_relaxed)) {
      now |= kRefuseStale;
    }
  } else if (too_few_good_replicas.load(std::memory_order_relaxed)) {
    now |= kRefuseNoReplicas;
  }
  refusals.store(now, std::memory_order_relaxed);
}

void SetLinkUp(bool up) {
  link_up.store(up, std::memory_order_relaxed);
  UpdateRefusals();
}

// One command in RESP, as a client sends it.
std::string Resp(std::initializer_list<std::string_view> args) {
  std::string out = helio::StrCat("*", args.size(), "\r\n");
  for (std::string_view arg : args) helio::StrAppend(&out, "$", arg.size(), "\r\n", arg, "\r\n");
  return out;
}

int64_t SecondsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - t).count();
}

// The link to one master (REPLICAOF host port), on proactor 0's thread: Start and Stop
// from fibers there; the state is read there.
class MasterLink {
 public:
  MasterLink(std::string host, uint16_t port) : host_(std::move(host)), port_(port) {}

  void Start() {
    fiber_ = helio::fibers::Launch([this] { Run(); });
  }

  void Stop() {
    stopping_ = true;
    retry_.Notify();
    CancelSocket();
    fiber_.join();
  }

  bool Is(std::string_view host, uint16_t port) const {
    return helio::EqualsIgnoreCase(host, host_) && port == port_;
  }

  MasterLinkStatus Status() const {
    MasterLinkStatus out;
    out.following = true;
    out.host = host_;
    out.port = port_;
    static constexpr const char* kStateNames[] = {"connect", "connecting", "handshake", "sync",
                                                  "connected"};
    out.state = kStateNames[int(state_)];
    out.last_io_s = state_ >= State::kHandshake ? SecondsSince(last_io_) : -1;
    out.link_down_since_s =
        state_ != State::kConnected && down_since_ ? SecondsSince(*down_since_) : -1;
    out.syncing = state_ == State::kSync;
    out.sync_total_bytes = sync_total_;
    out.sync_read_bytes = sync_read_;
    out.master_replid = master_replid_;
    out.offset = offset_;
    return out;
  }

 private:
  enum class State { kConnect, kConnecting, kHandshake, kSync, kConnected };

  void Run() {
    while (!stopping_) {
      FollowOnce();
      CloseLink();
      if (!stopping_) retry_.WaitFor(std::chrono::seconds(1));  // Redis's cron retries
    }
  }

  // One connection: the handshake, a resync, then the stream until the link drops.
  void FollowOnce() {
    state_ = State::kConnecting;
    absl::StatusOr<helio::net::SocketAddress> address =
        helio::net::SocketAddress::Resolve(host_, port_);
    if (!address.ok()) {
      LOG(WARNING) << "Unable to connect to MASTER " << host_ << ":" << port_ << ": "
                   << address.status().message();
      return;
    }
    int fd = socket(address->family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    sock_ = helio::net::CreateSocket(helio::io::Proactor::me(), fd);
    last_io_ = Clock::now();
    boost::fibers::fiber watchdog = helio::fibers::Launch([this] { Watch(); },
                                                          helio::fibers::kSmallStackBytes);
    absl::Cleanup stop_watch = [&] {
      link_over_ = true;
      CancelSocket();  // a Send of the watchdog's must end too
      tick_.Notify();
      watchdog.join();
      link_over_ = false;
    };
    if (stopping_) return;
    LOG(INFO) << "Connecting to MASTER " << host_ << ":" << port_;
    if (std::error_code ec = sock_->Connect(*address)) {
      LOG(WARNING) << "Error condition on socket for SYNC: " << ec.message();
      return;
    }
    state_ = State::kHandshake;
    last_io_ = Clock::now();
    if (std::string error = Handshake(); !error.empty()) {
      LOG(WARNING) << "Replication with MASTER " << host_ << ":" << port_ << ": " << error;
      return;
    }
    Follow();
  }

  // While the link lasts: the ACK every second once the stream flows (and at once when
  // tick_ is notified: GETACK, the stream's start); the link dropped when the master was
  // silent for repl-timeout seconds (not while the file loads: the master waits then), or
  // when CLIENT KILL killed the master client (which has no socket of its own to close).
  void Watch() {
    while (true) {
      tick_.WaitFor(std::chrono::seconds(1));
      if (link_over_) return;
      if (client_ && client_->killed()) {
        LOG(INFO) << "The master client was killed: reconnecting";
        CancelSocket();
        return;
      }
      if (state_ == State::kConnected) {
        const int64_t offset = getack_offset_.value_or(offset_);
        getack_offset_.reset();
        std::string ack = Resp({"REPLCONF", "ACK", helio::StrCat(offset)});
        if (sock_->Send({reinterpret_cast<const uint8_t*>(ack.data()), ack.size()})) {
          CancelSocket();
          return;
        }
      }
      if (!loading_ && SecondsSince(last_io_) > repl_timeout_s.load(std::memory_order_relaxed)) {
        LOG(WARNING) << "MASTER timeout: no data nor PING received";
        CancelSocket();
        return;
      }
    }
  }

  void CancelSocket() {
    if (sock_ && sock_->is_open()) {
      sock_->Shutdown(SHUT_RDWR);
      sock_->CancelIo();
    }
  }

  void CloseLink() {
    if (state_ == State::kConnected) {
      down_since_ = Clock::now();
      SetLinkUp(false);
    }
    in_multi_bytes_ = 0;  // the transaction is discarded with the master client
    state_ = State::kConnect;
    if (client_) {
      service->OnConnectionClose(client_->context());
      client_.reset();
    }
    if (sock_) sock_->Close();
    sock_.reset();
    buf_.clear();
    start_ = end_ = 0;
  }

  // PING, AUTH, REPLCONF, PSYNC and the resync it starts; "" once the stream flows.
  std::string Handshake() {
    std::optional<std::string> reply = Ask({"PING"});
    if (!reply) return "the master closed the link";
    if ((*reply)[0] == '-' && !reply->starts_with("-NOAUTH") && !reply->starts_with("-NOPERM") &&
        !reply->starts_with("-ERR operation not permitted")) {
      return helio::StrCat("Error reply to PING from master: '", *reply, "'");
    }
    std::string user, password;
    {
      std::lock_guard lock(config_mu);
      user = masteruser;
      password = masterauth;
    }
    if (!password.empty()) {
      reply = user.empty() ? Ask({"AUTH", password}) : Ask({"AUTH", user, password});
      if (!reply) return "the master closed the link";
      if ((*reply)[0] == '-') return helio::StrCat("Unable to AUTH to MASTER: ", *reply);
    }
    // Refusals of these are only logged, as Redis does: old masters lack them.
    reply = Ask({"REPLCONF", "listening-port", helio::StrCat(FLAGS_port)});
    if (!reply) return "the master closed the link";
    if ((*reply)[0] == '-') LOG(INFO) << "Master does not understand REPLCONF listening-port";
    reply = Ask({"REPLCONF", "capa", "eof", "capa", "psync2"});
    if (!reply) return "the master closed the link";
    const bool continuing = !master_replid_.empty();
    reply = continuing ? Ask({"PSYNC", master_replid_, helio::StrCat(offset_ + 1)})
                       : Ask({"PSYNC", "?", "-1"});
    if (!reply) return "the master closed the link";
    std::vector<std::string_view> words = helio::SplitAny(*reply, " ");
    if (words.empty()) words.emplace_back();
    if (words[0] == "+CONTINUE" && continuing) {
      if (words.size() > 1 && words[1].size() == 40) master_replid_ = std::string(words[1]);
      LOG(INFO) << "Successful partial resynchronization with master";
      return "";
    }
    if (words[0] != "+FULLRESYNC" || words.size() != 3 || words[1].size() != 40 ||
        !ParseInt64(words[2])) {
      return helio::StrCat("Unexpected reply to PSYNC from master: ", *reply);
    }
    const std::string replid(words[1]);
    const int64_t offset = *ParseInt64(words[2]);
    LOG(INFO) << "Full resync from master: " << replid << ":" << offset;
    db_before_continue_ = 0;
    return FullResync(replid, offset);
  }

  // The file after +FULLRESYNC, loaded in place of every database.
  std::string FullResync(const std::string& replid, int64_t offset) {
    state_ = State::kSync;
    sync_total_ = -1;
    sync_read_ = 0;
    const std::string path =
        helio::StrCat("temp-", getpid(), ".", Clock::now().time_since_epoch().count(), ".rdb");
    absl::Cleanup remove_file = [&path] { unlink(path.c_str()); };
    std::string error;
    const int64_t size = ReceiveFile(path, &error);
    if (size < 0) return error;
    LOG(INFO) << "MASTER <-> REPLICA sync: received " << size << " bytes, loading";
    loading_ = true;
    error = LoadFromMaster(path, uint64_t(size));
    loading_ = false;
    last_io_ = Clock::now();
    if (!error.empty()) {
      // The data is partial now: a new full resync must replace it.
      master_replid_.clear();
      return helio::StrCat("Failed trying to load the MASTER synchronization DB: ", error);
    }
    master_replid_ = replid;
    offset_ = offset;
    LOG(INFO) << "MASTER <-> REPLICA sync: finished with success";
    return "";
  }

  // Reads the bulk `$<size>` or `$EOF:<mark>` into `path`; its size, or -1 with *error.
  int64_t ReceiveFile(const std::string& path, std::string* error) {
    std::optional<std::string> header = ReadLine();
    if (!header) {
      *error = "I/O error reading bulk count from MASTER";
      return -1;
    }
    std::string mark;
    if (header->starts_with("$EOF:") && header->size() == 5 + kEofMarkBytes) {
      mark = header->substr(5);
    } else if (std::optional<int64_t> size = ParseInt64(std::string_view(*header).substr(1));
               (*header)[0] == '$' && size && *size >= 0) {
      sync_total_ = *size;
    } else {
      *error = helio::StrCat("Bad protocol from MASTER, the first byte is not '$' (we received '",
                             *header, "')");
      return -1;
    }
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      *error = helio::StrCat(
          "Opening the temp file needed for MASTER <-> REPLICA synchronization: ",
          strerror(errno));
      return -1;
    }
    absl::Cleanup close_file = [fd] { close(fd); };
    std::string tail;  // the EOF form: the last bytes received, to find the mark
    uint64_t written = 0;
    while (true) {
      size_t take = end_ - start_;
      if (mark.empty()) take = std::min<uint64_t>(take, uint64_t(sync_total_) - written);
      std::string_view chunk(buf_.data() + start_, take);
      if (absl::Status status = helio::io::WriteAt(fd, chunk, written); !status.ok()) {
        *error = helio::StrCat("Write error writing to the DB dump file needed for MASTER <-> "
                               "REPLICA synchronization: ", std::string(status.message()));
        return -1;
      }
      start_ += take;
      written += take;
      sync_read_ = int64_t(written);
      if (mark.empty() && written == uint64_t(sync_total_)) break;
      if (!mark.empty() && take > 0) {
        tail.append(chunk.substr(chunk.size() - std::min(chunk.size(), kEofMarkBytes)));
        if (tail.size() > kEofMarkBytes) tail.erase(0, tail.size() - kEofMarkBytes);
        if (tail == mark) {
          written -= kEofMarkBytes;
          if (ftruncate(fd, off_t(written)) != 0) {
            *error = helio::StrCat("Truncating the DB dump file: ", strerror(errno));
            return -1;
          }
          break;
        }
      }
      if (!Fill(kReadChunk)) {
        *error = "I/O error trying to sync with MASTER: connection lost";
        return -1;
      }
    }
    return int64_t(written);
  }

  // The stream: commands run on the master client until the link drops.
  void Follow() {
    client_ = std::make_unique<facade::RespConnection>(service, false);
    facade::ConnectionContext* cntx = client_->context();
    cntx->master_link = true;
    cntx->db_index = db_before_continue_;
    client_->OpenWithoutSocket(sock_->fd());
    service->OnConnectionOpen(cntx);
    absl::Cleanup keep_db = [&] { db_before_continue_ = cntx->db_index; };
    state_ = State::kConnected;
    SetLinkUp(true);
    tick_.Notify();  // Redis's replicas ACK as soon as they are online
    RespParser parser;
    std::vector<std::string_view> args;
    std::vector<std::pair<size_t, size_t>> ranges;
    std::vector<CmdArgList> batch;
    while (!stopping_ && !client_->killed()) {
      size_t at = start_;
      int64_t counted = 0;  // bytes of the commands parsed, run once the batch ran
      args.clear();
      ranges.clear();
      bool need_more = false;
      while (ranges.size() < kMaxBatch) {
        size_t consumed = 0;
        RespParser::Result result =
            parser.Parse(std::string_view(buf_.data() + at, end_ - at), &consumed);
        if (result == RespParser::Result::kNeedMore) {
          need_more = true;
          break;
        }
        if (result == RespParser::Result::kError) {
          // Where the stream stands is not known: the next sync is a full one, as Redis's.
          LOG(WARNING) << "Protocol error from MASTER: " << parser.error();
          master_replid_.clear();
          return;
        }
        // GETACK's ACK must count the batch, which runs first; a MULTI starts a batch, so
        // that one that ends inside the transaction holds none of the bytes before it.
        if (result == RespParser::Result::kCommand && !ranges.empty() &&
            (ArgIs(parser.args()[0], "REPLCONF") || ArgIs(parser.args()[0], "MULTI"))) {
          break;
        }
        at += consumed;
        counted += int64_t(consumed);
        if (result == RespParser::Result::kSkipped) continue;
        CmdArgList command = parser.args();
        if (ArgIs(command[0], "PING")) continue;  // only counted, as in Redis
        if (ArgIs(command[0], "REPLCONF")) {
          if (command.size() > 1 && ArgIs(command[1], "GETACK")) {
            // What ran before it, as Redis's replicas answer.
            getack_offset_ = offset_ + counted - int64_t(consumed);
            tick_.Notify();
          }
          continue;
        }
        ranges.emplace_back(args.size(), args.size() + command.size());
        args.insert(args.end(), command.begin(), command.end());
      }
      if (!ranges.empty()) {
        batch.clear();
        for (auto [begin, end] : ranges) batch.emplace_back(args.data() + begin, end - begin);
        client_->MarkActive();
        service->DispatchMany(batch, cntx);
        cntx->reply_builder()->ClearOutput();
      }
      // Inside MULTI the offset stays at the MULTI, as Redis's does: a link that drops
      // before EXEC continues from there, and the master sends the transaction again.
      if (MultiExec::InMulti(cntx)) {
        in_multi_bytes_ += counted;
      } else {
        offset_ += in_multi_bytes_ + counted;
        in_multi_bytes_ = 0;
      }
      start_ = at;
      if (need_more && !Fill(std::max(kReadChunk, parser.bytes_needed()))) {
        LOG(INFO) << "Connection with master lost";
        break;
      }
    }
  }

  // Sends one command and reads its one-line reply; nullopt when the link failed.
  std::optional<std::string> Ask(std::initializer_list<std::string_view> args) {
    std::string request = Resp(args);
    if (sock_->Send({reinterpret_cast<const uint8_t*>(request.data()), request.size()})) {
      return std::nullopt;
    }
    return ReadLine();
  }

  // The next line, without its CRLF, skipping the bare newlines a master sends as
  // keep-alives while it prepares the file; nullopt when the link failed.
  std::optional<std::string> ReadLine() {
    while (true) {
      size_t newline = std::string_view(buf_.data(), end_).find('\n', start_);
      if (newline != std::string_view::npos) {
        std::string line(buf_.data() + start_, newline - start_);
        start_ = newline + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) return line;
        continue;
      }
      if (end_ - start_ > kMaxLineBytes || !Fill(kReadChunk)) return std::nullopt;
    }
  }

  // Reads what the socket has (at least a byte) after what buf_ holds unconsumed,
  // with room for `want` bytes; false when the link failed or closed.
  bool Fill(size_t want) {
    if (start_ == end_) {
      start_ = end_ = 0;
    } else if (start_ > 0 && buf_.size() - end_ < want) {
      std::memmove(buf_.data(), buf_.data() + start_, end_ - start_);
      end_ -= start_;
      start_ = 0;
    }
    if (buf_.size() - end_ < want) buf_.resize(end_ + want);
    helio::net::Result<size_t> read = sock_->Recv(
        {reinterpret_cast<uint8_t*>(buf_.data() + end_), buf_.size() - end_});
    if (!read.ok() || *read == 0) return false;
    end_ += *read;
    last_io_ = Clock::now();
    return true;
  }

  const std::string host_;
  const uint16_t port_;
  boost::fibers::fiber fiber_;
  bool stopping_ = false;
  helio::fibers::Wakeup retry_;
  helio::fibers::Wakeup tick_;  // Watch's: ACK now, or the link is over
  bool link_over_ = false;

  State state_ = State::kConnect;
  std::unique_ptr<helio::net::FiberSocket> sock_;
  std::string buf_;  // what the master sent; [start_, end_) is not consumed yet
  size_t start_ = 0, end_ = 0;
  Clock::time_point last_io_ = Clock::now();
  std::optional<Clock::time_point> down_since_;  // since the stream last stopped
  bool loading_ = false;
  int64_t sync_total_ = -1, sync_read_ = 0;
  std::unique_ptr<facade::RespConnection> client_;  // the master client, while connected

  // What was followed, to continue with PSYNC after the link dropped.
  std::string master_replid_;
  int64_t offset_ = -1;
  int64_t in_multi_bytes_ = 0;  // run since the master client's MULTI, not in offset_
  std::optional<int64_t> getack_offset_;  // the offset the ACK GETACK asked for reports
  facade::DbIndex db_before_continue_ = 0;
};

// The link in force, on proactor 0 (REPLICAOF's calls are serialized by `link_mu`).
boost::fibers::mutex link_mu;
MasterLink* link = nullptr;

// Runs fn on a fiber of proactor 0 and waits for it.
template <typename Fn>
auto OnLinkThread(Fn&& fn) {
  helio::fibers::Done done;
  decltype(fn()) result{};
  shard_set->pool()->at(0)->LaunchFiber([&] {
    result = fn();
    done.Notify();
  });
  done.Wait();
  return result;
}

void SetFollowing(const MasterLink* now, std::string config) {
  following.store(now != nullptr, std::memory_order_relaxed);
  UpdateRefusals();
  std::lock_guard lock(config_mu);
  replicaof_config = std::move(config);
}

}  // namespace

void SetReplicaService(facade::ServiceInterface* s) { service = s; }

bool StartReplicaOf(std::string_view host, uint16_t port) {
  return OnLinkThread([&] {
    std::lock_guard lock(link_mu);
    if (link != nullptr && link->Is(host, port)) return false;
    if (link != nullptr) {
      link->Stop();
      delete link;
    }
    link = new MasterLink(std::string(host), port);
    SetFollowing(link, helio::StrCat(host, " ", port));
    link->Start();
    return true;
  });
}

void StopReplicaOf() {
  OnLinkThread([] {
    std::lock_guard lock(link_mu);
    if (link != nullptr) {
      link->Stop();
      delete link;
      link = nullptr;
      SetFollowing(nullptr, "");
    }
    return true;
  });
}

uint8_t ReplicaRefusals() { return refusals.load(std::memory_order_relaxed); }

void SetAofWriteError(int error_number) {
  if (aof_write_errno.exchange(error_number, std::memory_order_relaxed) != error_number) {
    UpdateRefusals();
  }
}

void SetBgsaveWriteError(bool refuse) {
  if (bgsave_write_error.exchange(refuse, std::memory_order_relaxed) != refuse) UpdateRefusals();
}

std::string DiskErrorRefusal() {
  if (bgsave_write_error.load(std::memory_order_relaxed)) {
    return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
           "persist to disk. Commands that may modify the data set are disabled, because this "
           "instance is configured to report errors during writes if RDB snapshotting fails "
           "(stop-writes-on-bgsave-error option). Please check the Redis logs for details "
           "about the RDB error.";
  }
  const char* text = strerrordesc_np(aof_write_errno.load(std::memory_order_relaxed));
  return helio::StrCat("MISCONF Errors writing to the AOF file: ", text ? text : "Unknown error");
}

void SetTooFewGoodReplicas(bool too_few) {
  if (too_few_good_replicas.exchange(too_few, std::memory_order_relaxed) != too_few) {
    UpdateRefusals();
  }
}

bool ReplicaReadOnlyConfig() { return read_only_config.load(std::memory_order_relaxed); }

void SetReplicaReadOnlyConfig(bool on) {
  read_only_config.store(on, std::memory_order_relaxed);
  UpdateRefusals();
}

bool ReplicaServeStaleConfig() { return serve_stale_config.load(std::memory_order_relaxed); }

void SetReplicaServeStaleConfig(bool on) {
  serve_stale_config.store(on, std::memory_order_relaxed);
  UpdateRefusals();
}

std::string MasterAuth() {
  std::lock_guard lock(config_mu);
  return masterauth;
}

void SetMasterAuth(std::string_view password) {
  std::lock_guard lock(config_mu);
  masterauth = std::string(password);
}

std::string MasterUser() {
  std::lock_guard lock(config_mu);
  return masteruser;
}

void SetMasterUser(std::string_view user) {
  std::lock_guard lock(config_mu);
  masteruser = std::string(user);
}

int64_t ReplTimeoutS() { return repl_timeout_s.load(std::memory_order_relaxed); }
void SetReplTimeoutS(int64_t seconds) { repl_timeout_s.store(seconds, std::memory_order_relaxed); }

std::string ReplicaOfConfig() {
  std::lock_guard lock(config_mu);
  return replicaof_config;
}

MasterLinkStatus GetMasterLinkStatus() {
  if (!following.load(std::memory_order_relaxed)) return {};
  return shard_set->pool()->at(0)->Await([] {
    return link != nullptr ? link->Status() : MasterLinkStatus{};
  });
}

}  // namespace damselfly
