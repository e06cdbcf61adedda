// The manifest of Redis 7.0's multi-part append-only file: which files, in the AOF's
// directory, make the dataset. One line per file,
//
//   file appendonly.aof.3.base.rdb seq 3 type b
//   file appendonly.aof.7.incr.aof seq 7 type i
//
// A base file (type b, at most one: a snapshot, RDB or commands) is loaded first, then
// the incremental files (type i: commands) in the order listed, which is the order of
// their sequence numbers. History files (type h) were replaced by a rewrite and are to
// be deleted. A file name that needs it is written quoted, with C escapes, as Redis's
// sdscatrepr writes it; lines starting with '#' are comments. Redis 7.0 reads what this
// writes and the other way round.
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace damselfly::core {

struct AofFileInfo {
  enum class Type : char { kBase = 'b', kHistory = 'h', kIncr = 'i' };
  std::string name;  // in the AOF's directory
  int64_t seq = 0;
  Type type = Type::kIncr;
};

class AofManifest {
 public:
  // The manifest's file name, and the names Redis gives a base and an incremental file,
  // for appendfilename `prefix` ("appendonly.aof").
  static std::string ManifestName(std::string_view prefix);
  static std::string BaseName(std::string_view prefix, int64_t seq, bool rdb);
  static std::string IncrName(std::string_view prefix, int64_t seq);

  // Parses a manifest's text; an error (Redis's reasons: a line too long, a missing key,
  // an unknown type, a second base, decreasing incremental sequence numbers, nothing
  // listed) says what is wrong.
  static absl::StatusOr<AofManifest> Parse(std::string_view text);
  // The text Parse reads: the base, the history, then the incremental files.
  std::string Serialize() const;

  const std::optional<AofFileInfo>& base() const { return base_; }
  const std::vector<AofFileInfo>& incrs() const { return incrs_; }
  const std::vector<AofFileInfo>& history() const { return history_; }

  // A rewrite begins: a new incremental file follows the ones listed; returns its info.
  AofFileInfo AddIncr(std::string_view prefix);
  // A rewrite ended: `base` (seq the next base sequence number: NextBaseSeq) replaces the
  // base, and every incremental file before `first_kept_incr_seq` moves to the history.
  void ReplaceBase(AofFileInfo base, int64_t first_kept_incr_seq);
  int64_t NextBaseSeq() const { return base_seq_ + 1; }
  // Forgets the history (its files were deleted).
  void ClearHistory() { history_.clear(); }

 private:
  std::optional<AofFileInfo> base_;
  std::vector<AofFileInfo> incrs_;
  std::vector<AofFileInfo> history_;
  int64_t base_seq_ = 0;  // the highest sequence numbers used so far
  int64_t incr_seq_ = 0;
};

}  // namespace damselfly::core
