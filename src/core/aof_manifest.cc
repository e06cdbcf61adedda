#include "src/core/aof_manifest.h"

#include <charconv>

#include "src/core/redis_args.h"

namespace damselfly::core {

namespace {

constexpr size_t kMaxLineBytes = 1024;  // Redis's AOF_MANIFEST_MAX_LINE

}  // namespace

std::string AofManifest::ManifestName(std::string_view prefix) {
  return std::string(prefix) + ".manifest";
}

std::string AofManifest::BaseName(std::string_view prefix, int64_t seq, bool rdb) {
  return std::string(prefix) + "." + std::to_string(seq) + (rdb ? ".base.rdb" : ".base.aof");
}

std::string AofManifest::IncrName(std::string_view prefix, int64_t seq) {
  return std::string(prefix) + "." + std::to_string(seq) + ".incr.aof";
}

absl::StatusOr<AofManifest> AofManifest::Parse(std::string_view text) {
  AofManifest manifest;
  int64_t max_incr_seq = 0;
  auto invalid = [](std::string_view why) { return absl::InvalidArgumentError(std::string(why)); };
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!line.empty() && line[0] == '#') continue;
    if (newline == std::string_view::npos || line.size() + 1 > kMaxLineBytes) {
      return invalid("The AOF manifest file contains too long line");
    }
    std::vector<std::string> words;
    line = TrimBlanks(line);
    if (line.empty() || !SplitRedisArgs(line, &words) || words.size() < 6 || words.size() % 2) {
      return invalid("Invalid AOF manifest file format");
    }
    AofFileInfo info;
    char type = 0;
    for (size_t i = 0; i < words.size(); i += 2) {
      const std::string& key = words[i];
      const std::string& value = words[i + 1];
      if (key == "file") {
        info.name = value;
      } else if (key == "seq") {
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), info.seq);
        if (ec != std::errc() || end != value.data() + value.size()) info.seq = 0;
      } else if (key == "type") {
        type = value.size() == 1 ? value[0] : '?';
      }  // other keys are for later versions
    }
    if (info.name.empty() || info.seq <= 0 || type == 0) {
      return invalid("Invalid AOF manifest file format");
    }
    switch (type) {
      case 'b':
        if (manifest.base_) return invalid("Found duplicate base file information");
        info.type = AofFileInfo::Type::kBase;
        manifest.base_seq_ = info.seq;
        manifest.base_ = std::move(info);
        break;
      case 'h':
        info.type = AofFileInfo::Type::kHistory;
        manifest.history_.push_back(std::move(info));
        break;
      case 'i':
        if (info.seq <= max_incr_seq) return invalid("Found a non-monotonic sequence number");
        max_incr_seq = manifest.incr_seq_ = info.seq;
        info.type = AofFileInfo::Type::kIncr;
        manifest.incrs_.push_back(std::move(info));
        break;
      default:
        return invalid("Unknown AOF file type");
    }
  }
  if (!manifest.base_ && manifest.incrs_.empty()) return invalid("Found an empty AOF manifest");
  return manifest;
}

std::string AofManifest::Serialize() const {
  std::string out;
  auto line = [&out](const AofFileInfo& info) {
    out += "file " + QuoteRedisArgIfNeeded(info.name) + " seq " +
           std::to_string(info.seq) + " type " + char(info.type) + "\n";
  };
  if (base_) line(*base_);
  for (const AofFileInfo& info : history_) line(info);
  for (const AofFileInfo& info : incrs_) line(info);
  return out;
}

AofFileInfo AofManifest::AddIncr(std::string_view prefix) {
  AofFileInfo info{IncrName(prefix, ++incr_seq_), incr_seq_, AofFileInfo::Type::kIncr};
  incrs_.push_back(info);
  return info;
}

void AofManifest::ReplaceBase(AofFileInfo base, int64_t first_kept_incr_seq) {
  if (base_) {
    base_->type = AofFileInfo::Type::kHistory;
    history_.push_back(std::move(*base_));
  }
  base.type = AofFileInfo::Type::kBase;
  base_seq_ = base.seq;
  base_ = std::move(base);
  std::vector<AofFileInfo> kept;
  for (AofFileInfo& info : incrs_) {
    if (info.seq < first_kept_incr_seq) {
      info.type = AofFileInfo::Type::kHistory;
      history_.push_back(std::move(info));
    } else {
      kept.push_back(std::move(info));
    }
  }
  incrs_ = std::move(kept);
}

}  // namespace damselfly::core
