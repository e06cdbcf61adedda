#include "src/server/aof.h"
#include "src/server/persistence_family.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/fiber/operations.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "helio/base/strings.h"
#include "helio/fibers/fiber.h"
#include "helio/fibers/sync.h"
#include "helio/io/proactor.h"
#include "src/core/cron_schedule.h"
#include "src/facade/error.h"
#include "src/server/engine_shard_set.h"
#include "src/server/function_family.h"
#include "src/server/replica.h"
#include "src/server/snapshot.h"
#include "src/server/transaction.h"

DEFINE_string(dir, "",
              "The directory snapshots are written to and loaded from (Redis's dir); "
              "the process changes into it at start. Empty: the current directory");
DEFINE_string(dbfilename, "dump.rdb", "The snapshot file's name, in --dir (Redis's dbfilename)");
DEFINE_string(save, "",
              "Redis's save rules: pairs of seconds and changes, \"3600 1 300 100\" saves after "
              "3600 s when at least 1 key changed or after 300 s when 100 did. Empty: no "
              "automatic snapshots (SAVE, BGSAVE and SHUTDOWN SAVE still write them)");
DEFINE_string(snapshot_cron, "",
              "Also save a snapshot on this cron schedule: five fields, minute hour "
              "day-of-month month day-of-week, in local time (\"*/30 * * * *\": every 30 "
              "minutes; \"0 3 * * *\": at 03:00). Empty: none");
DEFINE_int64(key_load_delay, 0,
             "Testing: microseconds to wait after each key loaded from a snapshot (Redis's "
             "key-load-delay), to observe a load in progress");
DEFINE_bool(rdbcompression, true, "Compress long strings with LZF in snapshots");
DEFINE_bool(rdbchecksum, true, "End snapshots with a CRC64 of their bytes");
DEFINE_bool(enable_protected_configs, false,
            "Allow CONFIG SET of dir and dbfilename (Redis 7's enable-protected-configs; off "
            "by default there too)");

namespace damselfly {
namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

struct SaveRule {
  int64_t seconds;
  int64_t changes;
};

struct State {
  std::mutex mu;
  std::string dbfilename = FLAGS_dbfilename;
  std::vector<SaveRule> rules;  // from --save, in ConfigurePersistence
  std::string cron_text;        // --snapshot_cron / CONFIG SET snapshot_cron
  std::optional<core::CronSchedule> cron;
  int64_t next_cron_s = -1;     // when cron next starts a save (-1: never)
  bool compression = FLAGS_rdbcompression;
  bool checksum = FLAGS_rdbchecksum;
  int64_t last_save_s = 0;  // unix time of the last successful save (or start)
  bool last_bgsave_ok = true;
  bool stop_writes_on_bgsave_error = true;  // Redis's stop-writes-on-bgsave-error
  int64_t last_bgsave_secs = -1;  // duration of the last background save
  int64_t bgsave_started_s = -1;  // while one runs
  bool bgsave_scheduled = false;  // BGSAVE SCHEDULE while another save ran
  uint64_t changes_at_last_save = 0;
  uint64_t saves = 0;
  uint64_t last_load_keys = 0, last_load_expired = 0;
  bool shutdown_handled = false;     // SaveBeforeShutdown ran
  int64_t loading_started_s = 0;     // while a load runs (Loading())
  LoadProgress load_progress;
  boost::fibers::fiber rules_fiber;  // SaveRulesLoop, on proactor 0
  helio::fibers::Done stop_rules;
};

// A load runs (atomic: read by every command's Validate).
std::atomic<bool> loading{false};
std::atomic<int64_t> key_load_delay_us{0};

State& state() {
  static State* s = new State;  // never destroyed: fibers may use it during shutdown
  return *s;
}

int64_t NowS() { return int64_t(time(nullptr)); }

// Writes (and PING) are refused with -MISCONF while the last background save failed, save
// rules are set and stop-writes-on-bgsave-error is on, as in Redis. Called after any of
// the three changes, without s.mu held.
void UpdateBgsaveRefusal() {
  State& s = state();
  bool refuse;
  {
    std::lock_guard lock(s.mu);
    refuse = s.stop_writes_on_bgsave_error && !s.rules.empty() && !s.last_bgsave_ok;
  }
  SetBgsaveWriteError(refuse);
}

// The keys changed or deleted on every shard since start (DbSlice::changes()).
uint64_t TotalChanges() {
  std::atomic<uint64_t> total{0};
  shard_set->RunOnAll([&](EngineShard* shard) { total += shard->db_slice().changes(); });
  return total.load();
}

std::optional<std::vector<SaveRule>> ParseSaveRules(std::string_view text) {
  std::vector<std::string_view> parts = helio::SplitAny(text, " ");
  std::vector<SaveRule> rules;
  if (parts.size() % 2 != 0) return std::nullopt;
  for (size_t i = 0; i < parts.size(); i += 2) {
    SaveRule rule;
    if (!helio::SimpleAtoi(parts[i], &rule.seconds) ||
        !helio::SimpleAtoi(parts[i + 1], &rule.changes) || rule.seconds < 1 || rule.changes < 0) {
      return std::nullopt;
    }
    rules.push_back(rule);
  }
  return rules;
}

// Writes dir/dbfilename now, from a proactor fiber; records the outcome.
absl::Status SaveNow(bool background) {
  State& s = state();
  SnapshotOptions options;
  uint64_t changes_before = TotalChanges();
  {
    std::lock_guard lock(s.mu);
    options.path = s.dbfilename;
    options.compression = s.compression;
    options.checksum = s.checksum;
  }
  const auto start = std::chrono::steady_clock::now();
  SnapshotResult result;
  absl::Status status = SaveSnapshot(options, &result);
  const int64_t secs =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
          .count();
  if (status.ok()) {
    LOG(INFO) << (background ? "Background saving" : "DB saved on disk") << ": " << result.keys
              << " keys, " << result.bytes << " bytes in " << secs << " s";
  } else if (!absl::IsFailedPrecondition(status)) {
    LOG(ERROR) << "Error saving DB on disk: " << status.message();
  }
  {
    std::lock_guard lock(s.mu);
    if (background) {
      s.bgsave_started_s = -1;
      s.last_bgsave_secs = secs;
      if (!absl::IsFailedPrecondition(status)) s.last_bgsave_ok = status.ok();
    }
    if (status.ok()) {
      s.last_bgsave_ok = true;  // a SAVE that succeeds clears the error too, as in Redis
      s.last_save_s = NowS();
      s.changes_at_last_save = changes_before;
      ++s.saves;
    }
  }
  UpdateBgsaveRefusal();
  return status;
}

// BGSAVE: the save runs on a fiber of proactor 0; false when one already runs. It counts
// as running from here, before its fiber starts: INFO says so at once, and another BGSAVE
// or SAVE sent meanwhile is refused, as Redis refuses them once it has forked.
bool StartBackgroundSave() {
  {
    std::lock_guard lock(state().mu);
    if (SnapshotRunning() || state().bgsave_started_s >= 0) return false;
    state().bgsave_started_s = NowS();
  }
  shard_set->pool()->at(0)->LaunchFiber([] { (void)SaveNow(true); });
  return true;
}

// Once a second: a save rule that is due, or a scheduled BGSAVE, starts a background save.
void SaveRulesLoop() {
  State& s = state();
  while (!s.stop_rules.WaitFor(std::chrono::seconds(1))) {
    bool due = false;
    {
      std::lock_guard lock(s.mu);
      due = s.bgsave_scheduled;
      const int64_t now = NowS();
      if (s.next_cron_s >= 0 && now >= s.next_cron_s) {
        // A save that runs at that time makes this one wait for it (scheduled).
        s.bgsave_scheduled = due = true;
        s.next_cron_s = s.cron->Next(now).value_or(-1);
      }
    }
    if (!due) {
      std::vector<SaveRule> rules;
      int64_t since;
      uint64_t at_last;
      {
        std::lock_guard lock(s.mu);
        rules = s.rules;
        since = NowS() - s.last_save_s;
        at_last = s.changes_at_last_save;
      }
      if (rules.empty()) continue;
      const uint64_t changes = TotalChanges() - at_last;
      for (const SaveRule& rule : rules) {
        due |= since >= rule.seconds && changes >= uint64_t(rule.changes);
      }
    }
    if (due && StartBackgroundSave()) {
      std::lock_guard lock(s.mu);
      s.bgsave_scheduled = false;
    }
  }
}

void CmdSave(CmdArgList, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (SaveInProgress()) return rb->SendError("ERR Background save already in progress");
  absl::Status status = SaveNow(false);
  if (absl::IsFailedPrecondition(status)) {
    return rb->SendError("ERR Background save already in progress");
  }
  if (!status.ok()) return rb->SendError("ERR");
  rb->SendOk();
}

void CmdBgSave(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  bool schedule = false;
  if (args.size() == 2) {
    if (!helio::EqualsIgnoreCase(args[1], "SCHEDULE")) return rb->SendError(facade::kSyntaxErr);
    schedule = true;
  } else if (args.size() > 2) {
    return rb->SendError(facade::kSyntaxErr);
  }
  if (StartBackgroundSave()) return rb->SendSimpleString("Background saving started");
  if (!schedule) return rb->SendError("ERR Background save already in progress");
  {
    std::lock_guard lock(state().mu);
    state().bgsave_scheduled = true;
  }
  rb->SendSimpleString("Background saving scheduled");
}

void CmdLastSave(CmdArgList, ConnectionContext* cntx) {
  std::lock_guard lock(state().mu);
  cntx->reply_builder()->SendLong(state().last_save_s);
}

}  // namespace

bool SaveInProgress() {
  std::lock_guard lock(state().mu);
  return SnapshotRunning() || state().bgsave_started_s >= 0;
}

void PersistenceFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  constexpr uint32_t kAdmin = kCmdAdmin | kCmdNoScript;
  constexpr uint32_t kAcl = kAclAdmin | kAclSlow | kAclDangerous;
  registry->Add("SAVE", 1, kAdmin | kCmdNoMulti, kNoKeys, kAcl, CmdSave);
  registry->Add("BGSAVE", -1, kAdmin, kNoKeys, kAcl, CmdBgSave);
  registry->Add("LASTSAVE", 1, kCmdLoading | kCmdStale | kCmdFast, kNoKeys,
                kAclAdmin | kAclFast | kAclDangerous, CmdLastSave);
}

bool ConfigurePersistence() {
  State& s = state();
  if (!FLAGS_dir.empty() && chdir(FLAGS_dir.c_str()) != 0) {
    LOG(ERROR) << "Can't chdir to '" << FLAGS_dir << "': " << strerror(errno);
    return false;
  }
  std::optional<std::vector<SaveRule>> rules = ParseSaveRules(FLAGS_save);
  if (!rules) {
    LOG(ERROR) << "Invalid --save rules '" << FLAGS_save << "'";
    return false;
  }
  if (std::string error = SetSnapshotCron(FLAGS_snapshot_cron, true); !error.empty()) {
    LOG(ERROR) << "Invalid --snapshot_cron '" << FLAGS_snapshot_cron << "': " << error;
    return false;
  }
  SetKeyLoadDelayUs(FLAGS_key_load_delay);
  if (!ConfigureAof()) return false;
  std::lock_guard lock(s.mu);
  // The listeners start next: from their first client on, a file to load means -LOADING.
  struct stat file;
  if (AofToLoad()) {
    s.loading_started_s = NowS();
    loading.store(true);
  } else if (stat(FLAGS_dbfilename.c_str(), &file) == 0) {
    s.loading_started_s = NowS();
    // Known before the load opens the file, so INFO's loading fields are whole from the
    // first client on.
    s.load_progress.total_bytes.store(uint64_t(file.st_size));
    loading.store(true);
  }
  s.dbfilename = FLAGS_dbfilename;
  s.rules = std::move(*rules);
  s.compression = FLAGS_rdbcompression;
  s.checksum = FLAGS_rdbchecksum;
  s.last_save_s = NowS();
  return true;
}

bool Loading() { return loading.load(std::memory_order_relaxed); }

void AbortLoading() { state().load_progress.cancel.store(true); }

void LoadAtStartup() {
  State& s = state();
  struct stat file;
  if (LoadAofAtStartup()) {
    LOG(INFO) << "DB loaded from append only file";
  } else if (stat(FLAGS_dbfilename.c_str(), &file) == 0) {
    LOG(INFO) << "Loading " << FLAGS_dbfilename << " (" << file.st_size << " bytes)";
    const auto start = std::chrono::steady_clock::now();
    LoadResult loaded;
    absl::Status status = LoadSnapshot(FLAGS_dbfilename, &loaded, true, &s.load_progress);
    if (absl::IsCancelled(status)) {
      LOG(INFO) << "The load was stopped by a shutdown request";
      std::lock_guard lock(s.mu);
      s.shutdown_handled = true;  // a partial dataset is never saved
      return;
    }
    if (!status.ok()) {
      LOG(ERROR) << "Failed loading " << FLAGS_dbfilename << ": " << status.message();
      LOG(ERROR) << "Unrecoverable error loading the snapshot, aborting now";
      _exit(1);
    }
    if (std::string error = FunctionFamily::LoadLibraries(loaded.functions, false, false);
        !error.empty()) {
      LOG(ERROR) << "Failed loading the function libraries of " << FLAGS_dbfilename << ": "
                 << error;
      _exit(1);
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    LOG(INFO) << "DB loaded from disk: " << loaded.keys << " keys (" << loaded.expired
              << " expired keys dropped) in " << secs << " s";
    std::lock_guard lock(s.mu);
    s.last_load_keys = loaded.keys;
    s.last_load_expired = loaded.expired;
  }
  s.changes_at_last_save = TotalChanges();
  AofStart();  // before any client writes
  shard_set->pool()->at(0)->Await([&s] { s.rules_fiber = helio::fibers::Launch(SaveRulesLoop); });
  loading.store(false);
}

void StopPersistence() {
  State& s = state();
  s.stop_rules.Notify();
  // Joined from a fiber (the loop's thread), and a BGSAVE still running finishes first:
  // the shards must outlive both.
  helio::fibers::Done stopped;
  shard_set->pool()->at(0)->LaunchFiber([&] {
    if (s.rules_fiber.joinable()) s.rules_fiber.join();
    while (SaveInProgress()) boost::this_fiber::sleep_for(std::chrono::milliseconds(1));
    stopped.Notify();
  });
  stopped.Wait();
}

bool SaveBeforeShutdown(std::string_view mode) {
  State& s = state();
  bool save = mode == "save";
  {
    std::lock_guard lock(s.mu);
    if (s.shutdown_handled) return true;
    if (mode.empty()) save = !s.rules.empty();
    if (Loading()) {
      AbortLoading();
      s.shutdown_handled = true;
      return true;
    }
  }
  absl::Status status;
  if (save) {
    // A save that runs is waited for, then the final one is written, on a proactor fiber.
    auto save_now = [&status] {
      while (SaveInProgress()) boost::this_fiber::sleep_for(std::chrono::milliseconds(1));
      status = SaveNow(false);
    };
    if (helio::io::Proactor::me() != nullptr) {
      save_now();
    } else {
      helio::fibers::Done done;
      shard_set->pool()->at(0)->LaunchFiber([&] {
        save_now();
        done.Notify();
      });
      done.Wait();
    }
  }
  if (!status.ok()) return false;
  std::lock_guard lock(s.mu);
  s.shutdown_handled = true;
  return true;
}

std::string DebugReload(bool save, bool flush, bool merge, facade::ConnectionContext* cntx) {
  if (save) {
    absl::Status status = SaveNow(false);
    if (absl::IsFailedPrecondition(status)) return "ERR Background save already in progress";
    if (!status.ok()) return "ERR Error trying to save the DB";
  }
  absl::Status status;
  LoadResult loaded;
  RunWholeShard(cntx, [&](EngineShard* shard) {
    // A reload of what was just saved leaves the data as it was: nothing for replicas.
    // Another file's keys reach them as their states.
    std::optional<ShardJournal::Mute> mute;
    if (save) mute.emplace();
    if (flush) {
      shard->db_slice().FlushAll();
    }
  });
  status = LoadSnapshot(GetDbFilename(), &loaded, flush || merge);
  if (!status.ok()) {
    LOG(ERROR) << "DEBUG RELOAD: " << status.message();
    return "ERR Error trying to load the RDB dump, check server logs.";
  }
  if (std::string error = FunctionFamily::LoadLibraries(loaded.functions, !flush, merge);
      !error.empty()) {
    LOG(ERROR) << "DEBUG RELOAD: " << error;
    return "ERR Error trying to load the RDB dump, check server logs.";
  }
  return "";
}

std::string LoadFromMaster(const std::string& path, uint64_t size) {
  State& s = state();
  {
    std::lock_guard lock(s.mu);
    s.loading_started_s = NowS();
    s.load_progress.total_bytes.store(size);
    s.load_progress.loaded_bytes.store(0);
    s.load_progress.cancel.store(false);
  }
  loading.store(true);
  absl::Cleanup done = [] { loading.store(false); };
  {
    Transaction tx(Transaction::WholeShards{}, 0);
    tx.Schedule();
    tx.ExecuteOnAll([](Transaction*, EngineShard* shard) { shard->db_slice().FlushAll(); }, true);
  }
  LoadResult loaded;
  absl::Status status = LoadSnapshot(path, &loaded, true, &s.load_progress);
  if (!status.ok()) return std::string(status.message());
  std::string error = FunctionFamily::LoadLibraries(loaded.functions, false, true);
  std::lock_guard lock(s.mu);
  s.last_load_keys = loaded.keys;
  s.last_load_expired = loaded.expired;
  return error;
}

PersistenceStats GetPersistenceStats() {
  PersistenceStats out;
  const uint64_t changes = TotalChanges();
  State& s = state();
  std::lock_guard lock(s.mu);
  const int64_t now = NowS();
  out.changes_since_last_save = changes - s.changes_at_last_save;
  out.bgsave_in_progress = s.bgsave_started_s >= 0;
  out.last_save_time = s.last_save_s;
  out.last_bgsave_ok = s.last_bgsave_ok;
  out.last_bgsave_secs = s.last_bgsave_secs;
  out.current_bgsave_secs = s.bgsave_started_s >= 0 ? now - s.bgsave_started_s : -1;
  out.saves = s.saves;
  out.last_load_keys = s.last_load_keys;
  out.last_load_expired = s.last_load_expired;
  out.loading = Loading();
  if (out.loading) {
    out.loading_started = s.loading_started_s;
    out.loading_total_bytes = s.load_progress.total_bytes.load();
    out.loading_loaded_bytes = std::min(s.load_progress.loaded_bytes.load(),
                                        out.loading_total_bytes);
    const uint64_t loaded = out.loading_loaded_bytes;
    // Redis's estimate: the time so far, scaled to what is left.
    out.loading_eta_secs =
        loaded == 0 ? 1
                    : int64_t(double(out.loading_total_bytes - loaded) *
                              double(now - s.loading_started_s) / double(loaded));
  }
  return out;
}

std::string PersistenceInfo() {
  const PersistenceStats p = GetPersistenceStats();
  std::string loading_lines;
  if (p.loading) {
    const double perc = p.loading_total_bytes
                            ? double(p.loading_loaded_bytes) * 100.0 / double(p.loading_total_bytes)
                            : 0;
    loading_lines = helio::StrCat(
        "loading_start_time:", p.loading_started, "\r\nloading_total_bytes:",
        p.loading_total_bytes, "\r\nloading_rdb_used_mem:0\r\nloading_loaded_bytes:",
        p.loading_loaded_bytes, "\r\nloading_loaded_perc:", absl::StrFormat("%.2f", perc),
        "\r\nloading_eta_seconds:", p.loading_eta_secs, "\r\n");
  }
  return helio::StrCat(
      "loading:", p.loading ? 1 : 0, "\r\nasync_loading:0\r\n",
      "rdb_changes_since_last_save:", p.changes_since_last_save, "\r\n",
      "rdb_bgsave_in_progress:", p.bgsave_in_progress ? 1 : 0, "\r\n",
      "rdb_last_save_time:", p.last_save_time, "\r\n",
      "rdb_last_bgsave_status:", p.last_bgsave_ok ? "ok" : "err", "\r\n",
      "rdb_last_bgsave_time_sec:", p.last_bgsave_secs, "\r\n",
      "rdb_current_bgsave_time_sec:", p.current_bgsave_secs, "\r\n",
      "rdb_saves:", p.saves, "\r\n",
      "rdb_last_load_keys_expired:", p.last_load_expired, "\r\n",
      "rdb_last_load_keys_loaded:", p.last_load_keys, "\r\n", loading_lines);
}

std::string GetSaveRules() {
  std::lock_guard lock(state().mu);
  std::string out;
  for (const SaveRule& rule : state().rules) {
    helio::StrAppend(&out, out.empty() ? "" : " ", rule.seconds, " ", rule.changes);
  }
  return out;
}

std::string SetSaveRules(std::string_view text, bool apply) {
  std::optional<std::vector<SaveRule>> rules = ParseSaveRules(text);
  if (!rules) return "Invalid save parameters";
  if (apply) {
    {
      std::lock_guard lock(state().mu);
      state().rules = std::move(*rules);
    }
    UpdateBgsaveRefusal();
  }
  return "";
}

std::string GetSnapshotCron() {
  std::lock_guard lock(state().mu);
  return state().cron_text;
}

std::string SetSnapshotCron(std::string_view text, bool apply) {
  std::optional<core::CronSchedule> cron;
  if (!text.empty()) {
    std::string error;
    cron = core::CronSchedule::Parse(text, &error);
    if (!cron) return error;
  }
  if (apply) {
    State& s = state();
    std::lock_guard lock(s.mu);
    s.cron_text = std::string(text);
    s.cron = cron;
    s.next_cron_s = cron ? cron->Next(NowS()).value_or(-1) : -1;
  }
  return "";
}

int64_t KeyLoadDelayUs() { return key_load_delay_us.load(std::memory_order_relaxed); }
void SetKeyLoadDelayUs(int64_t us) { key_load_delay_us.store(us, std::memory_order_relaxed); }

std::string GetDbFilename() {
  std::lock_guard lock(state().mu);
  return state().dbfilename;
}

std::string SetDbFilename(std::string_view name, bool apply) {
  if (name.empty() || name.find('/') != std::string_view::npos) {
    return "dbfilename can't be a path, just a filename";
  }
  if (apply) {
    std::lock_guard lock(state().mu);
    state().dbfilename = std::string(name);
  }
  return "";
}

std::string SetDir(std::string_view dir, bool apply) {
  std::string path(dir);
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return "No such file or directory";
  }
  if (apply && chdir(path.c_str()) != 0) return strerror(errno);
  return "";
}

bool StopWritesOnBgsaveError() {
  std::lock_guard lock(state().mu);
  return state().stop_writes_on_bgsave_error;
}
void SetStopWritesOnBgsaveError(bool on) {
  {
    std::lock_guard lock(state().mu);
    state().stop_writes_on_bgsave_error = on;
  }
  UpdateBgsaveRefusal();
}

bool RdbCompression() {
  std::lock_guard lock(state().mu);
  return state().compression;
}
void SetRdbCompression(bool on) {
  std::lock_guard lock(state().mu);
  state().compression = on;
}
bool RdbChecksum() {
  std::lock_guard lock(state().mu);
  return state().checksum;
}
void SetRdbChecksum(bool on) {
  std::lock_guard lock(state().mu);
  state().checksum = on;
}

}  // namespace damselfly
