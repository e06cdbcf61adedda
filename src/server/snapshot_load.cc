#include <fcntl.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/fiber/operations.hpp>
#include <cerrno>
#include <chrono>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "helio/base/strings.h"
#include "helio/fibers/sync.h"
#include "helio/io/file.h"
#include "src/server/db_slice.h"
#include "src/server/engine_shard_set.h"
#include "src/server/persistence_family.h"
#include "src/server/rdb_load.h"
#include "src/server/snapshot.h"

namespace damselfly {
namespace {

// A load yields to the thread's other fibers (connections answering -LOADING, the
// shard's hops) after this much work.
constexpr auto kLoadSlice = std::chrono::microseconds(500);
// The first shard logs progress this often.
constexpr auto kProgressLogInterval = std::chrono::seconds(5);

// An RDB file read sequentially through helio (io_uring: the fiber waits, the thread
// serves), from the shard thread that loads it.
class FileSource final : public RdbSource {
 public:
  FileSource(int fd, std::atomic<uint64_t>* published) : fd_(fd), published_(published) {}
  size_t Read(char* dst, size_t n) override {
    absl::StatusOr<size_t> got = helio::io::ReadAt(fd_, dst, n, offset_);
    if (!got.ok()) return 0;  // the loader reports a truncated file
    offset_ += *got;
    if (published_ != nullptr) published_->store(offset_, std::memory_order_relaxed);
    return *got;
  }

 private:
  const int fd_;
  std::atomic<uint64_t>* const published_;
  uint64_t offset_ = 0;
};

// One shard's pass over the file: keeps the keys it owns. `progress` is published by the
// first shard only.
absl::Status LoadShard(int fd, EngineShard* shard, bool replace, LoadProgress* progress,
                       LoadResult* result) {
  const bool reports = progress != nullptr && shard->shard_id() == 0;
  FileSource source(fd, reports ? &progress->loaded_bytes : nullptr);
  RdbLoader loader(&source);
  if (!loader.LoadHeader()) {
    return absl::InvalidArgumentError("Wrong signature or version trying to load DB from file");
  }
  DbSlice& slice = shard->db_slice();
  const ShardId me = shard->shard_id();
  const int64_t now_ms = UnixTimeMs();
  auto slice_end = std::chrono::steady_clock::now() + kLoadSlice;
  auto next_log = std::chrono::steady_clock::now() + kProgressLogInterval;
  const int64_t key_load_delay_us = KeyLoadDelayUs();
  RdbEntry entry;
  auto mine = [me](std::string_view key) { return shard_set->ShardOf(key) == me; };
  for (uint64_t n = 1; loader.Next(&entry, mine); ++n) {
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
    } else {
      slice.PutRestored(entry.db, entry.key, std::move(entry.value), entry.expire_ms, "restore");
      if (entry.mc) {
        DbSlice::Update update = slice.FindMutable(entry.db, entry.key);
        slice.SetMcMeta(entry.db, entry.key, &update.value(), *entry.mc);
      }
      ++result->keys;
      if (key_load_delay_us > 0) {
        boost::this_fiber::sleep_for(std::chrono::microseconds(key_load_delay_us));
      }
    }
    entry = RdbEntry{};
    if (n % 32 == 0 && std::chrono::steady_clock::now() >= slice_end) {
      boost::this_fiber::yield();
      const auto now = std::chrono::steady_clock::now();
      slice_end = now + kLoadSlice;
      if (progress != nullptr && progress->cancel.load(std::memory_order_relaxed)) {
        return absl::CancelledError("the load was stopped");
      }
      if (reports && now >= next_log) {
        next_log = now + kProgressLogInterval;
        const uint64_t total = std::max<uint64_t>(progress->total_bytes.load(), 1);
        const uint64_t loaded = progress->loaded_bytes.load();
        LOG(INFO) << "Loading RDB: " << loaded * 100 / total << "% (" << loaded << " of "
                  << total << " bytes), " << result->keys << " keys on shard 0";
      }
    }
  }
  if (!loader.error().empty()) return absl::DataLossError(loader.error());
  result->functions = loader.functions();
  result->rdb_bytes = loader.consumed();
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadSnapshot(const std::string& path, LoadResult* result, bool replace,
                          LoadProgress* progress) {
  const size_t num_shards = shard_set->size();
  std::vector<int> fds(num_shards, -1);
  absl::Cleanup close_all = [&fds] {
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  };
  for (int& fd : fds) {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::ErrnoToStatus(errno, helio::StrCat("open ", path));
  }
  if (progress != nullptr) {
    struct stat file;
    progress->total_bytes.store(fstat(fds[0], &file) == 0 ? uint64_t(file.st_size) : 0);
    progress->loaded_bytes.store(0);
  }
  std::vector<LoadResult> parts(num_shards);
  std::vector<absl::Status> statuses(num_shards);
  helio::fibers::BlockingCounter pending(num_shards);
  for (ShardId id = 0; id < num_shards; ++id) {
    shard_set->pool()->at(id)->LaunchFiber([&, id] {
      statuses[id] = LoadShard(fds[id], EngineShard::tlocal(), replace, progress, &parts[id]);
      if (!statuses[id].ok() && progress != nullptr) {
        progress->cancel.store(true);  // the other shards need not go on
      }
      pending.Dec();
    });
  }
  pending.Wait();
  // The first failure is the reason (the others may only say they were stopped).
  for (ShardId id = 0; id < num_shards; ++id) {
    if (!statuses[id].ok() && !absl::IsCancelled(statuses[id])) return statuses[id];
  }
  for (ShardId id = 0; id < num_shards; ++id) {
    if (!statuses[id].ok()) return statuses[id];
    result->keys += parts[id].keys;
    result->expired += parts[id].expired;
  }
  result->functions = std::move(parts[0].functions);
  result->rdb_bytes = parts[0].rdb_bytes;
  return absl::OkStatus();
}

}  // namespace damselfly
