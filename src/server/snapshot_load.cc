#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/db_slice.h"
#include "src/server/engine_shard_set.h"
#include "src/server/rdb_load.h"
#include "src/server/snapshot.h"

namespace damselfly {
namespace {

// An RDB file read sequentially with pread, from the shard thread that loads it.
class FileSource final : public RdbSource {
 public:
  explicit FileSource(int fd) : fd_(fd) {}
  size_t Read(char* dst, size_t n) override {
    while (true) {
      ssize_t got = pread(fd_, dst, n, off_t(offset_));
      if (got >= 0) {
        offset_ += uint64_t(got);
        return size_t(got);
      }
      if (errno != EINTR) return 0;  // the loader reports a truncated file
    }
  }

 private:
  const int fd_;
  uint64_t offset_ = 0;
};

// One shard's pass over the file: keeps the keys it owns.
absl::Status LoadShard(int fd, EngineShard* shard, bool replace, LoadResult* result) {
  FileSource source(fd);
  RdbLoader loader(&source);
  if (!loader.LoadHeader()) {
    return absl::InvalidArgumentError("Wrong signature or version trying to load DB from file");
  }
  DbSlice& slice = shard->db_slice();
  const int64_t now_ms = UnixTimeMs();
  RdbEntry entry;
  while (loader.Next(&entry)) {
    if (shard_set->ShardOf(entry.key) != shard->shard_id()) continue;
    if (entry.db >= slice.dbnum()) {
      return absl::InvalidArgumentError(
          helio::StrCat("FATAL: Data file was created with a Redis server configured to handle "
                        "more than ",
                        slice.dbnum(), " databases"));
    }
    if (!replace && slice.Find(entry.db, entry.key) != nullptr) {
      return absl::AlreadyExistsError(
          helio::StrCat("RDB has duplicated key '", entry.key, "' in DB ", entry.db));
    }
    if (entry.expire_ms != 0 && entry.expire_ms <= now_ms) {
      ++result->expired;
      continue;
    }
    slice.PutRestored(entry.db, entry.key, std::move(entry.value), entry.expire_ms, "restore");
    if (entry.mc) {
      DbSlice::Update update = slice.FindMutable(entry.db, entry.key);
      slice.SetMcMeta(entry.db, entry.key, &update.value(), *entry.mc);
    }
    ++result->keys;
    entry = RdbEntry{};
  }
  if (!loader.error().empty()) return absl::DataLossError(loader.error());
  result->functions = loader.functions();
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadSnapshot(const std::string& path, LoadResult* result, bool replace) {
  const size_t num_shards = shard_set->size();
  std::vector<int> fds(num_shards, -1);
  for (int& fd : fds) {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      absl::Status status = absl::ErrnoToStatus(errno, helio::StrCat("open ", path));
      for (int other : fds) {
        if (other >= 0) close(other);
      }
      return status;
    }
  }
  std::vector<LoadResult> parts(num_shards);
  std::vector<absl::Status> statuses(num_shards);
  shard_set->RunOnAll([&](EngineShard* shard) {
    const ShardId id = shard->shard_id();
    statuses[id] = LoadShard(fds[id], shard, replace, &parts[id]);
  });
  for (int fd : fds) close(fd);
  for (ShardId id = 0; id < num_shards; ++id) {
    if (!statuses[id].ok()) return statuses[id];
    result->keys += parts[id].keys;
    result->expired += parts[id].expired;
  }
  result->functions = std::move(parts[0].functions);
  return absl::OkStatus();
}

}  // namespace damselfly
