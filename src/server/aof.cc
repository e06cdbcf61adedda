#include "src/server/aof.h"

#include <fcntl.h>
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/fiber/operations.hpp>
#include <chrono>
#include <optional>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "helio/fibers/sync.h"
#include "src/core/aof_manifest.h"
#include "src/facade/resp_connection.h"
#include "src/facade/resp_parser.h"
#include "src/server/aof_writer.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard_set.h"
#include "src/server/function_family.h"
#include "src/server/multi_exec.h"
#include "src/server/persistence_family.h"
#include "src/server/replica.h"
#include "src/server/replication.h"
#include "src/server/snapshot.h"

DEFINE_bool(appendonly, false,
            "Keep an append-only file of every write in dir/appenddirname and load it at "
            "start-up (Redis 7.0's multi-part AOF)");
DEFINE_string(appendfilename, "appendonly.aof", "The AOF files' name prefix");
DEFINE_string(appenddirname, "appendonlydir", "The AOF's directory, in dir");
DEFINE_string(appendfsync, "everysec",
              "When the AOF reaches the disk: everysec (fsync once a second) or no (when "
              "the kernel writes it)");
DEFINE_int64(auto_aof_rewrite_percentage, 100,
             "Rewrite the AOF when it grew by this percentage since the last rewrite (0: "
             "never by itself)");
DEFINE_int64(auto_aof_rewrite_min_size, 64 << 20,
             "Rewrite the AOF by itself only once it is at least this many bytes");
DEFINE_bool(aof_load_truncated, true,
            "Load an AOF whose last command was cut by a crash, without that command");
DEFINE_uint64(aof_buffer_limit, 64 << 20,
              "Bytes of the AOF's stream that may wait for the disk: past them, a client "
              "whose commands wrote gets its replies once the backlog is back under (a disk "
              "slower than the writes slows the writers, as redis-server's blocking write "
              "does, instead of growing the buffer)");

namespace damselfly {

using core::AofFileInfo;
using core::AofManifest;
using facade::CmdArgList;
using facade::ConnectionContext;

namespace {

facade::ServiceInterface* service = nullptr;
std::atomic<bool> appendonly{false};
std::atomic<int64_t> rewrite_percentage{100};
std::atomic<int64_t> rewrite_min_size{64 << 20};
std::atomic<bool> load_truncated{true};
std::atomic<uint64_t> buffer_limit{64 << 20};

constexpr size_t kReadChunk = 1 << 20;
constexpr size_t kMaxLoadBatch = 256;  // commands run as one DispatchMany

// AofAlways, after appendonly or appendfsync changed.
void UpdateAlways() {
  aof_internal::always.store(AofFsyncPolicy() == AofFsync::kAlways && appendonly.load(),
                             std::memory_order_relaxed);
}

std::string DirPath() { return FLAGS_appenddirname; }
std::string PathOf(std::string_view name) { return helio::StrCat(DirPath(), "/", name); }
std::string ManifestPath() { return PathOf(AofManifest::ManifestName(FLAGS_appendfilename)); }

int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? int64_t(st.st_size) : 0;
}

// The AOF: proactor 0's thread only (its fibers and the stream's merge).
class Aof final : public StreamFollower {
 public:
  enum class State : uint8_t { kOff, kWaitRewrite, kOn };

  // --- StreamFollower, in the merge

  void Append(std::string_view bytes) override {
    if (!writer_) return;
    writer_->Append(bytes);
    if (writer_->buffered_bytes() > buffer_limit.load(std::memory_order_relaxed)) {
      aof_internal::backlogged.store(true, std::memory_order_relaxed);
    }
  }

  void AtCut(uint64_t token) override {
    if (!writer_ || token == resume_token_) return;
    // The stream after this cut goes to a new incremental file. While the AOF is on, the
    // manifest lists it at once, after the files that hold the stream before the cut: a
    // crash before the rewrite ends loads them all.
    const AofFileInfo incr = manifest_.AddIncr(FLAGS_appendfilename);
    writer_->CreateFile(PathOf(incr.name));
    if (state_ == State::kOn) writer_->ReplaceFile(ManifestPath(), manifest_.Serialize());
    if (token == rewrite_token_) rewrite_incr_seq_ = incr.seq;
  }

  static absl::StatusOr<AofManifest> ReadManifest();

  // --- fibers of proactor 0

  // `done` is notified once the writer caught up as AwaitAofWrites says; false (nothing to
  // wait for) when it has already, or the AOF is off.
  bool AddWaiter(helio::fibers::Done* done) {
    if (!writer_) return false;
    if (AofFsyncPolicy() == AofFsync::kAlways) {
      const uint64_t appended = writer_->appended();
      if (writer_->durable() >= appended) return false;
      durable_waiters_.push_back({appended, done});
      return true;
    }
    if (!writer_->WaitForDrain(buffer_limit.load(std::memory_order_relaxed))) {
      aof_internal::backlogged.store(false, std::memory_order_relaxed);
      return false;
    }
    drain_waiters_.push_back(done);
    return true;
  }
  uint64_t BufferedBytes() const { return writer_ ? writer_->buffered_bytes() : 0; }

  // The writer's report that its backlog is back under the limit (a task on proactor 0).
  void OnDrained() {
    aof_internal::backlogged.store(false, std::memory_order_relaxed);
    for (helio::fibers::Done* done : drain_waiters_) done->Notify();
    drain_waiters_.clear();
  }
  // The writer's report (a task on proactor 0).
  void OnDurable(uint64_t durable) {
    std::erase_if(durable_waiters_, [durable](const DurableWaiter& w) {
      if (w.appended > durable) return false;
      w.done->Notify();
      return true;
    });
  }

  // Start-up: the manifest's files were loaded; the stream goes on in its last
  // incremental file (a new one when it has none), from a cut taken now, while nothing
  // else writes.
  void StartAfterLoad(AofManifest manifest) {
    manifest_ = std::move(manifest);
    NewWriter(&writer_);
    state_ = State::kOn;
    StartTicking();
    const StreamCut cut = FollowStream(this);
    if (!manifest_.incrs().empty()) {
      // Appending to the last one: the cut opens none.
      resume_token_ = cut.token;
      writer_->OpenFile(PathOf(manifest_.incrs().back().name));
    }
    shard_set->RunOnAll([cut](EngineShard* shard) { CutJournal(shard, cut); });
    if (!manifest_.history().empty()) {  // a crash came before they were deleted
      for (const AofFileInfo& old : manifest_.history()) writer_->Remove(PathOf(old.name));
      manifest_.ClearHistory();
      writer_->ReplaceFile(ManifestPath(), manifest_.Serialize());
    }
    base_size_after_rewrite_ = CurrentSize();
    base_size_ = manifest_.base() ? FileSize(PathOf(manifest_.base()->name)) : 0;
  }

  // appendonly yes: the AOF starts with a rewrite of the dataset.
  void TurnOn() {
    if (state_ != State::kOff) return;
    mkdir(DirPath().c_str(), 0755);
    // A manifest left by an earlier run is continued: the rewrite's base replaces it.
    if (absl::StatusOr<AofManifest> old = ReadManifest(); old.ok()) manifest_ = std::move(*old);
    NewWriter(&writer_);
    state_ = State::kWaitRewrite;
    StartTicking();
    ScheduleRewrite();
  }

  // appendonly no: stops following the stream; what was written stays, fsynced.
  void TurnOff() {
    if (state_ == State::kOff) return;
    UnfollowStream();
    state_ = State::kOff;
    ++epoch_;  // a rewrite running now is discarded when it ends
    writer_->Sync();
    writer_.reset();
    SetAofWriteError(0);  // nothing to fail any more
    for (DurableWaiter& w : durable_waiters_) w.done->Notify();  // nothing more will come
    durable_waiters_.clear();
    OnDrained();
  }

  // BGREWRITEAOF: false when one runs already.
  bool Rewrite() {
    if (rewrite_running_) return false;
    if (state_ == State::kOff) {
      mkdir(DirPath().c_str(), 0755);
      if (absl::StatusOr<AofManifest> old = ReadManifest(); old.ok()) manifest_ = std::move(*old);
    }
    ScheduleRewrite();
    return true;
  }

  // Once a second: the auto-aof-rewrite-* rule; the first rewrite of an AOF turned on,
  // again if it failed (or was a BGREWRITEAOF's of an AOF then off, which had no cut).
  void Tick() {
    if (state_ == State::kOff || rewrite_running_) return;
    if (state_ == State::kWaitRewrite) return ScheduleRewrite();
    const int64_t percent = rewrite_percentage.load(std::memory_order_relaxed);
    const int64_t size = CurrentSize();
    if (percent > 0 && size >= rewrite_min_size.load(std::memory_order_relaxed)) {
      const int64_t base = std::max<int64_t>(base_size_after_rewrite_, 1);
      if ((size - base) * 100 / base >= percent) {
        LOG(INFO) << "Starting automatic rewriting of AOF on " << (size - base) * 100 / base
                  << "% growth";
        ScheduleRewrite();
      }
    }
  }

  // Shutdown: writes and fsyncs everything; a rewrite running ends first (its snapshot
  // needs the shards), and is discarded; the ticks end.
  void Stop() {
    if (state_ != State::kOff) {
      FlushStream();
      TurnOff();
    }
    while (rewrite_running_) boost::this_fiber::sleep_for(std::chrono::milliseconds(5));
    if (ticking_) {
      stop_ticking_.Notify();
      ticks_stopped_.Wait();
      ticking_ = false;
    }
  }

  int64_t CurrentSize() const {
    int64_t size = base_size_;
    for (const AofFileInfo& incr : manifest_.incrs()) size += FileSize(PathOf(incr.name));
    return size;
  }

  std::string Info() {
    const int64_t now = helio::UnixTimeMs() / 1000;
    std::string out = helio::StrCat(
        "aof_enabled:", state_ != State::kOff ? 1 : 0, "\r\n",
        "aof_rewrite_in_progress:", rewrite_running_ ? 1 : 0, "\r\n",
        "aof_rewrite_scheduled:", rewrite_scheduled_ ? 1 : 0, "\r\n",
        "aof_last_rewrite_time_sec:", last_rewrite_secs_, "\r\n",
        "aof_current_rewrite_time_sec:", rewrite_running_ ? now - rewrite_started_s_ : -1, "\r\n",
        "aof_last_bgrewrite_status:", last_rewrite_ok_ ? "ok" : "err", "\r\n",
        "aof_rewrites:", rewrites_, "\r\n",
        "aof_rewrites_consecutive_failures:", consecutive_failures_, "\r\n",
        "aof_last_write_status:", !writer_ || writer_->last_write_ok() ? "ok" : "err", "\r\n",
        "aof_last_cow_size:0\r\nmodule_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n");
    if (state_ != State::kOff) {
      helio::StrAppend(&out, "aof_current_size:", CurrentSize(), "\r\n",
                       "aof_base_size:", base_size_, "\r\n",
                       "aof_pending_rewrite:", rewrite_scheduled_ ? 1 : 0, "\r\n",
                       "aof_buffer_length:", writer_->buffered_bytes(), "\r\n",
                       "aof_pending_bio_fsync:0\r\naof_delayed_fsync:0\r\n");
    }
    return out;
  }

 private:
  // Tick once a second from the first time the AOF is on (a server without one runs no
  // such fiber).
  void StartTicking() {
    if (ticking_) return;
    ticking_ = true;
    helio::fibers::Launch([this] {
      while (!stop_ticking_.WaitFor(std::chrono::seconds(1))) Tick();
      ticks_stopped_.Notify();
    }).detach();
  }

  void ScheduleRewrite() {
    if (rewrite_running_) return;
    rewrite_running_ = true;
    rewrite_scheduled_ = SnapshotRunning();  // runs once the save ends
    helio::fibers::Launch([this] { RunRewrite(); }).detach();
  }

  // A rewrite: the snapshot, whose cut opens a new incremental file, becomes the base.
  void RunRewrite() {
    const uint64_t epoch = epoch_;
    const bool following = state_ != State::kOff;
    rewrite_started_s_ = helio::UnixTimeMs() / 1000;
    const AofFileInfo base{AofManifest::BaseName(FLAGS_appendfilename, manifest_.NextBaseSeq(), true),
                           manifest_.NextBaseSeq(), AofFileInfo::Type::kBase};
    SnapshotOptions options;
    options.path = PathOf(base.name);
    options.compression = RdbCompression();
    options.checksum = RdbChecksum();
    std::optional<StreamCut> cut;
    if (following) {
      cut = FollowStream(this);
      rewrite_token_ = cut->token;
      rewrite_incr_seq_ = 0;
      options.on_cut = [cut = *cut](EngineShard* shard) { CutJournal(shard, cut); };
    }
    SnapshotResult result;
    absl::Status status;
    while (true) {
      status = SaveSnapshot(options, &result);
      if (!absl::IsFailedPrecondition(status)) break;
      rewrite_scheduled_ = true;  // another snapshot runs: wait for it
      boost::this_fiber::sleep_for(std::chrono::milliseconds(20));
    }
    rewrite_scheduled_ = false;
    // The cut reached the merge (and opened the new incremental file) before the base
    // may replace the files that hold the stream before it.
    while (status.ok() && following && epoch == epoch_ && rewrite_incr_seq_ == 0) {
      FlushStream();
      if (rewrite_incr_seq_ == 0) boost::this_fiber::sleep_for(std::chrono::milliseconds(1));
    }
    const int64_t secs = helio::UnixTimeMs() / 1000 - rewrite_started_s_;
    rewrite_running_ = false;
    if (epoch != epoch_) {  // the AOF was turned off meanwhile: the base is no one's
      unlink(options.path.c_str());
      return;
    }
    last_rewrite_secs_ = secs;
    if (!status.ok()) {
      LOG(WARNING) << "Background AOF rewrite failed: " << status.message();
      last_rewrite_ok_ = false;
      ++consecutive_failures_;
      return;
    }
    // Without the AOF on (BGREWRITEAOF with appendonly no), the base alone is the AOF.
    // As Redis: the manifest names the replaced files as history, they are deleted, and
    // the manifest is written again without them.
    manifest_.ReplaceBase(base, following ? rewrite_incr_seq_ : INT64_MAX);
    AofWriter& writer = writer_ ? *writer_ : OneOffWriter();
    writer.ReplaceFile(ManifestPath(), manifest_.Serialize());
    for (const AofFileInfo& old : manifest_.history()) writer.Remove(PathOf(old.name));
    manifest_.ClearHistory();
    writer.ReplaceFile(ManifestPath(), manifest_.Serialize());
    if (!writer_) one_off_writer_.reset();  // waits for its work
    base_size_ = base_size_after_rewrite_ = int64_t(result.bytes);
    if (state_ == State::kWaitRewrite && following) state_ = State::kOn;
    last_rewrite_ok_ = true;
    consecutive_failures_ = 0;
    ++rewrites_;
    LOG(INFO) << "Background AOF rewrite finished successfully (" << result.keys << " keys, "
              << result.bytes << " bytes)";
  }

  AofWriter& OneOffWriter() {
    if (!one_off_writer_) one_off_writer_.emplace(WriterCallbacks(false));
    return *one_off_writer_;
  }

  // A new writer's callbacks: its failures refuse writes (MISCONF); the AOF's own
  // writer (`durable`) reports with appendfsync always to OnDurable.
  static AofWriter::Callbacks WriterCallbacks(bool durable);
  static AofWriter& NewWriter(std::optional<AofWriter>* writer) {
    return writer->emplace(WriterCallbacks(true));
  }

  struct DurableWaiter {
    uint64_t appended;
    helio::fibers::Done* done;
  };
  std::vector<DurableWaiter> durable_waiters_;
  std::vector<helio::fibers::Done*> drain_waiters_;
  State state_ = State::kOff;
  AofManifest manifest_;
  std::optional<AofWriter> writer_;
  std::optional<AofWriter> one_off_writer_;  // a rewrite's files while the AOF is off
  uint64_t epoch_ = 0;
  uint64_t rewrite_token_ = 0;
  int64_t rewrite_incr_seq_ = 0;  // the incremental file the running rewrite's cut opened
  uint64_t resume_token_ = 0;  // the start-up cut, which continues the last file
  bool ticking_ = false;
  helio::fibers::Done stop_ticking_, ticks_stopped_;
  bool rewrite_running_ = false, rewrite_scheduled_ = false;
  bool last_rewrite_ok_ = true;
  int64_t rewrite_started_s_ = 0, last_rewrite_secs_ = -1;
  int64_t rewrites_ = 0, consecutive_failures_ = 0;
  int64_t base_size_ = 0, base_size_after_rewrite_ = 0;
};

}  // namespace

namespace {

Aof* aof = nullptr;  // created by the first call on proactor 0, never freed

template <typename Fn>
auto OnAof(Fn&& fn) {
  return shard_set->pool()->at(0)->Await([&] {
    if (aof == nullptr) aof = new Aof;
    return fn(*aof);
  });
}

// Runs `fn(aof)` in a fiber of proactor 0 (it may suspend) and waits for it.
template <typename Fn>
void InAofFiber(Fn&& fn) {
  helio::fibers::Done done;
  shard_set->pool()->at(0)->LaunchFiber([&] {
    if (aof == nullptr) aof = new Aof;
    fn(*aof);
    done.Notify();
  });
  done.Wait();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(strerror(errno));
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) text.append(buf, size_t(n));
  close(fd);
  if (n < 0) return absl::InternalError(strerror(errno));
  return text;
}

bool IsRdbFile(const std::string& path) {
  char magic[5] = {};
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool rdb = read(fd, magic, 5) == 5 && std::string_view(magic, 5) == "REDIS";
  close(fd);
  return rdb;
}

// Runs the commands of one AOF file from byte `from` (after an RDB preamble), on the
// client of the load. With `may_truncate`,
// an incomplete last command, or a MULTI without its EXEC, is cut from the file (Redis's
// aof-load-truncated). "" or why it cannot be loaded.
std::string LoadCommands(const std::string& path, int64_t from, bool may_truncate,
                         facade::RespConnection* client) {
  ConnectionContext* cntx = client->context();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return helio::StrCat("Can't open the append-only file ", path, ": ", strerror(errno));
  absl::Cleanup close_fd = [fd] { close(fd); };
  facade::RespParser parser;
  std::string buf;
  size_t start = 0;               // of the unparsed bytes in buf
  int64_t buf_offset = from;      // the file offset of buf[0]
  int64_t whole_end = from;       // after the last command outside MULTI
  int64_t multi_at = -1;          // the open MULTI's offset
  std::vector<std::string_view> args;
  std::vector<std::pair<size_t, size_t>> ranges;
  std::vector<CmdArgList> batch;
  bool eof = false;
  while (true) {
    args.clear();
    ranges.clear();
    while (ranges.size() < kMaxLoadBatch) {
      size_t consumed = 0;
      const auto result = parser.Parse(std::string_view(buf).substr(start), &consumed);
      if (result == facade::RespParser::Result::kNeedMore) break;
      if (result == facade::RespParser::Result::kError) {
        return helio::StrCat("Bad file format reading the append only file ", path, ": ",
                             parser.error());
      }
      const int64_t at = buf_offset + int64_t(start);
      start += consumed;
      if (result == facade::RespParser::Result::kSkipped) continue;
      CmdArgList command = parser.args();
      if (ArgIs(command[0], "MULTI")) {
        multi_at = at;
      } else if (ArgIs(command[0], "EXEC") || ArgIs(command[0], "DISCARD")) {
        multi_at = -1;
      }
      if (multi_at < 0) whole_end = buf_offset + int64_t(start);
      ranges.emplace_back(args.size(), args.size() + command.size());
      args.insert(args.end(), command.begin(), command.end());
    }
    if (!ranges.empty()) {
      batch.clear();
      for (auto [begin, end] : ranges) batch.emplace_back(args.data() + begin, end - begin);
      service->DispatchMany(batch, cntx);
      cntx->reply_builder()->ClearOutput();
      continue;
    }
    if (eof) break;
    // Refill: drop what was run, read the next chunk (more when a big argument needs it).
    buf.erase(0, start);
    buf_offset += int64_t(start);
    start = 0;
    const size_t want = std::max(kReadChunk, parser.bytes_needed());
    const size_t old_size = buf.size();
    buf.resize(old_size + want);
    ssize_t n;
    do {
      n = pread(fd, buf.data() + old_size, want, buf_offset + int64_t(old_size));
    } while (n < 0 && errno == EINTR);
    if (n < 0) return helio::StrCat("Error reading the append only file ", path, ": ", strerror(errno));
    buf.resize(old_size + size_t(n));
    eof = n == 0;
  }
  const int64_t size = buf_offset + int64_t(buf.size());
  if (whole_end == size) return "";
  // A crash cut the file: an incomplete command at its end, or a MULTI without EXEC.
  if (!may_truncate) {
    return helio::StrCat("Unexpected end of file reading the append only file ", path,
                         ". You can: 1) Make a backup of your AOF file, then use "
                         "./redis-check-aof --fix <filename.manifest>. 2) Alternatively you "
                         "can set the 'aof-load-truncated' configuration option to yes and "
                         "restart the server.");
  }
  if (MultiExec::InMulti(cntx)) {
    const std::string_view discard[] = {"DISCARD"};
    const CmdArgList command(discard, 1);
    service->DispatchMany({&command, 1}, cntx);
    cntx->reply_builder()->ClearOutput();
  }
  LOG(WARNING) << "!!! Warning: short read while loading the AOF file " << path << "!!!";
  LOG(WARNING) << "AOF " << path << " loaded anyway because aof-load-truncated is enabled; "
               << "cutting it from " << size << " to " << whole_end << " bytes";
  if (truncate(path.c_str(), whole_end) != 0) {
    return helio::StrCat("Error truncating the AOF file ", path, ": ", strerror(errno));
  }
  return "";
}

// The client that runs a file's commands: no socket, runs while the server loads, and
// is refused nothing a master's stream is not.
class LoadClient {
 public:
  LoadClient() : client_(service, false) {
    ConnectionContext* cntx = client_.context();
    cntx->master_link = true;
    cntx->aof_loading = true;
    client_.OpenWithoutSocket(-1);
    service->OnConnectionOpen(cntx);
  }
  ~LoadClient() { service->OnConnectionClose(client_.context()); }
  facade::RespConnection* get() { return &client_; }

 private:
  facade::RespConnection client_;
};

// A base file: an RDB snapshot, commands, or (Redis's aof-use-rdb-preamble in one
// file) an RDB snapshot followed by commands. "" or the error.
std::string LoadBase(const std::string& path, bool may_truncate) {
  int64_t commands_from = 0;
  if (IsRdbFile(path)) {
    LoadResult loaded;
    absl::Status status = LoadSnapshot(path, &loaded, true);
    if (!status.ok()) {
      return helio::StrCat("Failed loading ", path, ": ", std::string(status.message()));
    }
    if (std::string error = FunctionFamily::LoadLibraries(loaded.functions, false, false);
        !error.empty()) {
      return helio::StrCat("Failed loading the function libraries of ", path, ": ", error);
    }
    LOG(INFO) << "DB loaded from base file " << path << ": " << loaded.keys << " keys";
    commands_from = int64_t(loaded.rdb_bytes);
    if (commands_from >= FileSize(path)) return "";
  }
  LoadClient client;
  return LoadCommands(path, commands_from, may_truncate, client.get());
}

// Loads the files the manifest lists; "" or the error.
std::string LoadManifestFiles(const AofManifest& manifest) {
  const auto& incrs = manifest.incrs();
  if (const auto& base = manifest.base()) {
    // A base alone (an upgraded pre-7.0 file) may end where a crash cut it.
    const bool may_truncate = incrs.empty() && load_truncated.load();
    if (std::string error = LoadBase(PathOf(base->name), may_truncate); !error.empty()) {
      return error;
    }
  }
  // One client for the incremental files, as their SELECTs carry over in Redis's.
  LoadClient client;
  for (size_t i = 0; i < incrs.size(); ++i) {
    const std::string path = PathOf(incrs[i].name);
    const bool last = i + 1 == incrs.size();
    if (std::string error = LoadCommands(path, 0, last && load_truncated.load(), client.get());
        !error.empty()) {
      return error;
    }
    LOG(INFO) << "DB loaded from incr file " << incrs[i].name;
  }
  return "";
}

// Redis 7.0's upgrade of a pre-7.0 AOF: dir/appendfilename, one file (commands, perhaps
// after an RDB preamble), becomes the base of a manifest in appenddirname. The manifest
// is written first, then the file moved, so that a crash between the two loads it from
// either place on the next start (Redis's order). False (logged) when it fails.
bool UpgradeOldAof() {
  const std::string old_path = FLAGS_appendfilename;
  if (access(ManifestPath().c_str(), F_OK) == 0 || access(old_path.c_str(), F_OK) != 0) {
    return true;  // nothing to upgrade
  }
  LOG(INFO) << "Upgrading " << old_path << " (pre-7.0) to a multi-part AOF in " << DirPath();
  if (mkdir(DirPath().c_str(), 0755) != 0 && errno != EEXIST) {
    LOG(ERROR) << "Can't create the AOF directory " << DirPath() << ": " << strerror(errno);
    return false;
  }
  AofManifest manifest;
  manifest.ReplaceBase({old_path, 1, AofFileInfo::Type::kBase}, 0);
  {
    AofWriter writer;
    writer.ReplaceFile(ManifestPath(), manifest.Serialize());
    writer.Sync();
    if (!writer.last_write_ok()) return false;
  }
  if (rename(old_path.c_str(), PathOf(old_path).c_str()) != 0) {
    LOG(ERROR) << "Can't move " << old_path << " into " << DirPath() << ": " << strerror(errno);
    return false;
  }
  return true;
}

std::optional<AofManifest> loaded_manifest;  // start-up: what LoadAofAtStartup loaded
std::atomic<bool> started{false};            // AofStart ran

void CmdBgRewriteAof(CmdArgList, ConnectionContext* cntx) {
  bool scheduled = SnapshotRunning();
  if (!OnAof([](Aof& a) { return a.Rewrite(); })) {
    return cntx->reply_builder()->SendError(
        "ERR Background append only file rewriting already in progress");
  }
  cntx->reply_builder()->SendSimpleString(
      scheduled ? "Background append only file rewriting scheduled"
                : "Background append only file rewriting started");
}

}  // namespace

AofWriter::Callbacks Aof::WriterCallbacks(bool durable) {
  AofWriter::Callbacks callbacks;
  callbacks.on_error = SetAofWriteError;
  if (durable) {
    callbacks.on_durable = [](uint64_t on_disk) {
      shard_set->pool()->at(0)->Dispatch([on_disk] { aof->OnDurable(on_disk); });
    };
    callbacks.on_drained = [] { shard_set->pool()->at(0)->Dispatch([] { aof->OnDrained(); }); };
  }
  return callbacks;
}

absl::StatusOr<AofManifest> Aof::ReadManifest() {
  absl::StatusOr<std::string> text = ReadWholeFile(ManifestPath());
  if (!text.ok()) return text.status();
  return AofManifest::Parse(*text);
}

void SetAofService(facade::ServiceInterface* s) { service = s; }

bool ConfigureAof() {
  if (std::string error = SetAppendFsync(FLAGS_appendfsync, true); !error.empty()) {
    LOG(ERROR) << "Invalid --appendfsync '" << FLAGS_appendfsync << "': " << error;
    return false;
  }
  if (FLAGS_appendfilename.empty() || FLAGS_appendfilename.find('/') != std::string::npos ||
      FLAGS_appenddirname.empty() || FLAGS_appenddirname.find('/') != std::string::npos) {
    LOG(ERROR) << "--appendfilename and --appenddirname must be file names, without '/'";
    return false;
  }
  appendonly.store(FLAGS_appendonly);
  UpdateAlways();
  rewrite_percentage.store(FLAGS_auto_aof_rewrite_percentage);
  rewrite_min_size.store(FLAGS_auto_aof_rewrite_min_size);
  load_truncated.store(FLAGS_aof_load_truncated);
  buffer_limit.store(FLAGS_aof_buffer_limit);
  return true;
}

bool AofToLoad() {
  if (!FLAGS_appendonly) return false;
  return access(ManifestPath().c_str(), F_OK) == 0 ||
         access(FLAGS_appendfilename.c_str(), F_OK) == 0;  // UpgradeOldAof's
}

bool LoadAofAtStartup() {
  if (!AofToLoad()) return false;
  if (!UpgradeOldAof()) _exit(1);
  absl::StatusOr<AofManifest> manifest = Aof::ReadManifest();
  if (!manifest.ok()) {
    LOG(ERROR) << "Failed reading the AOF manifest " << ManifestPath() << ": "
               << manifest.status().message();
    _exit(1);
  }
  std::string error;
  InAofFiber([&](Aof&) { error = LoadManifestFiles(*manifest); });
  if (!error.empty()) {
    LOG(ERROR) << error;
    _exit(1);
  }
  loaded_manifest = std::move(*manifest);
  return true;
}

void AofStart() {
  started.store(true);
  if (!appendonly.load()) return;
  if (loaded_manifest) {
    AofManifest manifest = std::move(*loaded_manifest);
    loaded_manifest.reset();
    InAofFiber([&](Aof& a) { a.StartAfterLoad(std::move(manifest)); });
  } else {
    LOG(INFO) << "Creating the AOF in " << DirPath() << " from the dataset";
    InAofFiber([](Aof& a) { a.TurnOn(); });
  }
}

void StopAof() {
  if (!started.load()) return;  // a start-up load that was stopped: nothing began
  InAofFiber([](Aof& a) { a.Stop(); });
}

bool AofEnabled() { return appendonly.load(std::memory_order_relaxed); }

std::string SetAppendOnly(std::string_view value, bool apply) {
  const bool yes = helio::EqualsIgnoreCase(value, "yes");
  if (!yes && !helio::EqualsIgnoreCase(value, "no")) return "argument must be 'yes' or 'no'";
  if (!apply) return "";
  appendonly.store(yes);
  UpdateAlways();
  InAofFiber([yes](Aof& a) { yes ? a.TurnOn() : a.TurnOff(); });
  return "";
}

std::string GetAppendFsync() {
  static constexpr const char* kNames[] = {"no", "everysec", "always"};
  return kNames[int(AofFsyncPolicy())];
}

std::string SetAppendFsync(std::string_view value, bool apply) {
  AofFsync policy;
  if (helio::EqualsIgnoreCase(value, "always")) {
    policy = AofFsync::kAlways;
  } else if (helio::EqualsIgnoreCase(value, "everysec")) {
    policy = AofFsync::kEverysec;
  } else if (helio::EqualsIgnoreCase(value, "no")) {
    policy = AofFsync::kNo;
  } else {
    return "argument(s) must be one of the following: always, everysec, no";
  }
  if (apply) {
    SetAofFsyncPolicy(policy);
    UpdateAlways();
  }
  return "";
}


void AwaitAofWrites() {
  FlushStream();  // every shard's records so far reach the merge, and the writer
  helio::fibers::Done done;
  if (OnAof([&](Aof& a) { return a.AddWaiter(&done); })) done.Wait();
}

uint64_t AofBufferLimit() { return buffer_limit.load(std::memory_order_relaxed); }
void SetAofBufferLimit(uint64_t bytes) { buffer_limit.store(bytes, std::memory_order_relaxed); }

int64_t AutoAofRewritePercentage() { return rewrite_percentage.load(); }
void SetAutoAofRewritePercentage(int64_t percent) { rewrite_percentage.store(percent); }
int64_t AutoAofRewriteMinSize() { return rewrite_min_size.load(); }
void SetAutoAofRewriteMinSize(int64_t bytes) { rewrite_min_size.store(bytes); }
bool AofLoadTruncated() { return load_truncated.load(); }
void SetAofLoadTruncated(bool on) { load_truncated.store(on); }
std::string AppendFilename() { return FLAGS_appendfilename; }
std::string AppendDirname() { return FLAGS_appenddirname; }

std::string AofInfo() {
  return OnAof([](Aof& a) { return a.Info(); });
}

uint64_t AofBufferedBytes() {
  return OnAof([](Aof& a) { return a.BufferedBytes(); });
}

void AofFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  registry->Add("BGREWRITEAOF", 1, kCmdAdmin | kCmdNoScript, kNoKeys,
                kAclAdmin | kAclSlow | kAclDangerous, CmdBgRewriteAof);
}

}  // namespace damselfly
