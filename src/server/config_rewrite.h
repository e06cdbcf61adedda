// CONFIG REWRITE, as Redis 7.0's: the configuration file the server started with
// (startup_config.h) is rewritten with every parameter's current value
// (core/config_rewrite.h says where lines go): a parameter the file names gets its
// current value there; one it does not name is added when its value is not its default.
//
// The defaults are recorded at start-up: a parameter's value before the file and the
// command line set it, or for one set through its flag, the flag's default as CONFIG GET
// prints it.
//
// Thread-safety: RecordConfigDefaults on the main thread before clients connect;
// RewriteConfigFile on any thread (it blocks on the file: an admin command).
#pragma once

#include <string>

namespace damselfly {

// Before the configuration file is read: the defaults of the parameters without a flag.
void RecordDefaultsOfUnflaggedParams();
// Once the commands are registered, before any parameter is set without a flag: the
// defaults of the others (a flag left at its default gives the value it came to, as
// maxmemory from a cgroup limit).
void RecordDefaultsOfFlaggedParams();

// "" when written, else Redis's error text.
std::string RewriteConfigFile();

}  // namespace damselfly
