// Persistence: SAVE, BGSAVE [SCHEDULE], LASTSAVE, Redis's save rules, the snapshot at
// shutdown and the load at start-up, over snapshot.h's fork-less snapshots; the settings
// dir, dbfilename, save, rdbcompression and rdbchecksum (flags and CONFIG), and INFO
// persistence.
//
// A background save runs on a fiber of proactor 0 and writes dir/dbfilename (dir is the
// process's working directory, as in Redis: --dir and CONFIG SET dir change it). The save
// rules ("3600 1 300 100": after 3600 s if at least 1 key changed, after 300 s if 100...)
// and the --snapshot_cron schedule are checked once a second by a fiber of proactor 0. Changes are counted by the shards'
// DbSlice::changes().
//
// Thread-safety: the state is global, behind a mutex (saves and INFO are rare); the
// commands run on connection fibers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "src/facade/command_registry.h"

namespace damselfly {

class PersistenceFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

// Start-up, from main() after the shards exist and before the listeners: applies --dir
// and the settings, and enters the loading state when dir/dbfilename exists (so that no
// client sees the dataset before it is loaded). False when --dir cannot be used.
bool ConfigurePersistence();
// Start-up, from main() once the listeners accept clients (which get -LOADING meanwhile):
// loads dir/dbfilename when it exists (exits the process on a file it cannot load, as
// Redis does) and starts the save-rules fiber. A shutdown requested during the load
// (AbortLoading) stops it: the server then exits without saving, as Redis does.
void LoadAtStartup();
// Whether a load runs (at start-up, or a replica's full resync): commands without
// kCmdLoading get -LOADING. Thread-safe.
bool Loading();
// Stops a start-up load early (SIGTERM, SHUTDOWN). Thread-safe.
void AbortLoading();
// Shutdown, from SHUTDOWN's fiber or main(): saves when `mode` asks for it ("save"), or,
// by default (""), when save rules are set; "nosave" never, and never during the start-up
// load (the dataset is partial: the load is stopped instead, as Redis does). False when the save failed
// (the server should then go on). Once it succeeded, later calls do nothing.
bool SaveBeforeShutdown(std::string_view mode);
// Stops the save-rules fiber; from main(), before the shards stop.
void StopPersistence();
// A save runs, or a BGSAVE was accepted and has yet to begin; any thread.
bool SaveInProgress();

// DEBUG RELOAD: saves (unless !save), empties every database in a whole-shard transaction
// (unless !flush) and loads dir/dbfilename (not isolated from other clients' writes, as
// Redis's is). "" or Redis's error text.
// MERGE (`merge`): with NOFLUSH, keys and libraries in the file replace those that exist
// (without it, one that exists fails the load).
std::string DebugReload(bool save, bool flush, bool merge, facade::ConnectionContext* cntx);

// A replica's full resync (replica.h): empties every database in a whole-shard hop and
// loads the master's file at `path` (`size` bytes) and its function libraries, in the
// loading state (-LOADING, INFO's loading fields) as at start-up. "" or why it failed.
std::string LoadFromMaster(const std::string& path, uint64_t size);

// What INFO persistence and /metrics show.
struct PersistenceStats {
  uint64_t changes_since_last_save = 0;
  bool bgsave_in_progress = false;
  int64_t last_save_time = 0;  // unix seconds
  bool last_bgsave_ok = true;
  int64_t last_bgsave_secs = -1, current_bgsave_secs = -1;
  uint64_t saves = 0;
  uint64_t last_load_keys = 0, last_load_expired = 0;
  bool loading = false;  // the start-up load; the fields below only while it runs
  int64_t loading_started = 0;
  uint64_t loading_total_bytes = 0, loading_loaded_bytes = 0;
  int64_t loading_eta_secs = 0;
};
PersistenceStats GetPersistenceStats();

// INFO persistence's lines ("field:value\r\n").
std::string PersistenceInfo();

// CONFIG GET/SET of dir, dbfilename, save, snapshot_cron, rdbcompression, rdbchecksum: the value, and a
// setter returning "" or Redis's error text. dir and dbfilename are protected, as in
// Redis 7: settable only with --enable_protected_configs.
std::string GetSaveRules();
std::string SetSaveRules(std::string_view rules, bool apply);
std::string GetSnapshotCron();
std::string SetSnapshotCron(std::string_view cron, bool apply);
// Redis's key-load-delay (testing): microseconds a load waits after each key.
int64_t KeyLoadDelayUs();
void SetKeyLoadDelayUs(int64_t us);
std::string GetDbFilename();
std::string SetDbFilename(std::string_view name, bool apply);
std::string SetDir(std::string_view dir, bool apply);
bool RdbCompression();
void SetRdbCompression(bool on);
// stop-writes-on-bgsave-error: writes get -MISCONF while the last background save failed
// and save rules are set (replica.h: SetBgsaveWriteError).
bool StopWritesOnBgsaveError();
void SetStopWritesOnBgsaveError(bool on);
bool RdbChecksum();
void SetRdbChecksum(bool on);

}  // namespace damselfly
