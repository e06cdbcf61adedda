// Replacing a file's contents so that a crash leaves either the old or the new contents:
// written to "temp-<name>" beside it, fsynced, renamed over it, the directory fsynced.
//
// Thread-safety: a blocking function; callers keep it off fibers that must not block
// for long (the AOF's writer thread, an admin command).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace damselfly::core {

// 0, or the errno of the step that failed (the temporary file is then removed). The new
// file gets `mode`.
int ReplaceFileContents(const std::string& path, std::string_view data, mode_t mode = 0644);

}  // namespace damselfly::core
