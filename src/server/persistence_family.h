// Persistence: SAVE, BGSAVE [SCHEDULE], LASTSAVE, Redis's save rules, the snapshot at
// shutdown and the load at start-up, over snapshot.h's fork-less snapshots; the settings
// dir, dbfilename, save, rdbcompression and rdbchecksum (flags and CONFIG), and INFO
// persistence.
//
// A background save runs on a fiber of proactor 0 and writes dir/dbfilename (dir is the
// process's working directory, as in Redis: --dir and CONFIG SET dir change it). The save
// rules ("3600 1 300 100": after 3600 s if at least 1 key changed, after 300 s if 100...)
// are checked once a second by a fiber of proactor 0. Changes are counted by the shards'
// DbSlice::changes().
//
// Thread-safety: the state is global, behind a mutex (saves and INFO are rare); the
// commands run on connection fibers.
#pragma once

#include <string>
#include <string_view>

#include "src/facade/command_registry.h"

namespace damselfly {

class PersistenceFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

// Start-up, from main() after the shards exist and before clients connect: applies --dir,
// loads dir/dbfilename when it exists (exits the process on a file it cannot load, as
// Redis does) and starts the save-rules fiber. False when --dir cannot be used.
bool StartPersistence();
// Shutdown, from SHUTDOWN's fiber or main(): saves when `mode` asks for it ("save"), or,
// by default (""), when save rules are set; "nosave" never. False when the save failed
// (the server should then go on). Once it succeeded, later calls do nothing.
bool SaveBeforeShutdown(std::string_view mode);
// Stops the save-rules fiber; from main(), before the shards stop.
void StopPersistence();

// DEBUG RELOAD: saves (unless !save), empties every database in a whole-shard transaction
// (unless !flush) and loads dir/dbfilename (not isolated from other clients' writes, as
// Redis's is). "" or Redis's error text.
// MERGE (`merge`): with NOFLUSH, keys and libraries in the file replace those that exist
// (without it, one that exists fails the load).
std::string DebugReload(bool save, bool flush, bool merge, facade::ConnectionContext* cntx);

// INFO persistence's lines ("field:value\r\n").
std::string PersistenceInfo();

// CONFIG GET/SET of dir, dbfilename, save, rdbcompression, rdbchecksum: the value, and a
// setter returning "" or Redis's error text. dir and dbfilename are protected, as in
// Redis 7: settable only with --enable_protected_configs.
std::string GetSaveRules();
std::string SetSaveRules(std::string_view rules, bool apply);
std::string GetDbFilename();
std::string SetDbFilename(std::string_view name, bool apply);
std::string SetDir(std::string_view dir, bool apply);
bool RdbCompression();
void SetRdbCompression(bool on);
bool RdbChecksum();
void SetRdbChecksum(bool on);

}  // namespace damselfly
