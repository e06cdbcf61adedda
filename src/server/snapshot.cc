#include "src/server/snapshot.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/fiber/operations.hpp>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <memory>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/statusor.h"
#include "helio/base/strings.h"
#include "helio/fibers/sync.h"
#include "helio/io/file.h"
#include "src/core/crc64.h"
#include "src/core/rdb_format.h"
#include "src/server/connection_family.h"
#include "src/server/db_slice.h"
#include "src/server/engine_shard_set.h"
#include "src/server/function_family.h"
#include "src/server/rdb_save.h"
#include "src/server/transaction.h"

namespace damselfly {
namespace {

// About this much serialized data leaves a shard per write. Each shard holds two such
// buffers (one filling, one being written).
constexpr size_t kChunkBytes = 256 << 10;
// A step of the walk serializes blocks of buckets for about this long, then lets the
// thread serve (a block is about 700 entries).
constexpr auto kStepTime = std::chrono::microseconds(200);

std::atomic<bool> running{false};

// The epoch of a shard's last snapshot: bucket versions only ever reach it, so the next
// snapshot's epoch (one more) is above them all. One shard per thread.
thread_local uint64_t last_epoch = 0;

absl::Status ErrnoError(std::string_view what, std::string_view path) {
  return absl::ErrnoToStatus(errno, helio::StrCat(what, " ", path));
}

// The file the shards write into, and where each piece of it went.
class SnapshotFile {
 public:
  struct Piece {
    uint64_t offset, length, crc;
  };

  SnapshotFile(int fd, size_t shards, bool checksum)
      : fd_(fd), checksum_(checksum), pieces_(shards) {}

  int fd() const { return fd_; }

  // Writes `bytes` at offset 0 and starts the shards' part after them.
  absl::Status WriteHeader(std::string_view bytes) {
    next_offset_.store(bytes.size());
    header_crc_ = checksum_ ? core::Crc64(0, bytes) : 0;
    return helio::io::WriteAt(fd_, bytes, 0);
  }

  // A shard's chunk, at the next free offset. On the shard's thread.
  absl::Status Write(size_t shard, std::string_view chunk) {
    const uint64_t offset = next_offset_.fetch_add(chunk.size());
    pieces_[shard].push_back({offset, chunk.size(), checksum_ ? core::Crc64(0, chunk) : 0});
    return helio::io::WriteAt(fd_, chunk, offset);
  }

  // EOF and the checksum of the whole file, after every shard's last chunk. Returns the
  // file's size.
  absl::StatusOr<uint64_t> WriteEnd() {
    std::string tail(1, char(core::rdb::kOpEof));
    uint64_t crc = 0;
    if (checksum_) {
      std::vector<Piece> all;
      for (const auto& shard : pieces_) all.insert(all.end(), shard.begin(), shard.end());
      std::sort(all.begin(), all.end(),
                [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
      crc = header_crc_;
      for (const Piece& piece : all) crc = core::Crc64Combine(crc, piece.crc, piece.length);
      crc = core::Crc64Combine(crc, core::Crc64(0, tail), tail.size());
    }
    for (int i = 0; i < 8; ++i) tail.push_back(char(crc >> (8 * i)));
    const uint64_t offset = next_offset_.load();
    absl::Status status = helio::io::WriteAt(fd_, tail, offset);
    if (!status.ok()) return status;
    return offset + tail.size();
  }

 private:
  const int fd_;
  const bool checksum_;
  std::atomic<uint64_t> next_offset_{0};
  uint64_t header_crc_ = 0;
  std::vector<std::vector<Piece>> pieces_;  // by shard; each touched by its shard only
};

// One shard's part of a snapshot. Start and Run on the shard's thread.
class ShardSnapshot {
 public:
  ShardSnapshot(EngineShard* shard, SnapshotFile* file, bool compression)
      : slice_(shard->db_slice()),
        shard_id_(shard->shard_id()),
        file_(file),
        serializer_(compression) {}

  // In the cut's hop: from now on a bucket is serialized before it changes.
  void Start() {
    epoch_ = ++last_epoch;
    for (DbIndex db = 0; db < slice_.dbnum(); ++db) {
      sizes_.emplace_back(slice_.DbSize(db), slice_.ExpireSize(db));
    }
    slice_.SetPreUpdateHook(
        [this](DbIndex db, DbSlice::BucketRef bucket) { SerializeBucket(db, bucket); });
  }

  // Fiber: serializes every bucket the writes have not, then writes the rest.
  absl::Status Run() {
    absl::Status status;
    auto step_end = std::chrono::steady_clock::now() + kStepTime;
    for (DbIndex db = 0; db < slice_.dbnum() && status.ok(); ++db) {
      uint64_t cursor = 0;
      do {
        cursor = slice_.TraverseBuckets(
            db, cursor, [&](DbSlice::BucketRef bucket) { SerializeBucket(db, bucket); });
        if (serializer_.buffer().size() >= kChunkBytes) {
          status = WriteChunk();  // the fiber waits for the disk; the thread serves
          step_end = std::chrono::steady_clock::now() + kStepTime;
        } else if (std::chrono::steady_clock::now() >= step_end) {
          boost::this_fiber::yield();  // between other work
          step_end = std::chrono::steady_clock::now() + kStepTime;
        }
      } while (cursor != 0 && status.ok());
    }
    slice_.SetPreUpdateHook(nullptr);
    if (status.ok() && !serializer_.buffer().empty()) status = WriteChunk();
    return status;
  }

  uint64_t keys() const { return keys_; }

 private:
  void SerializeBucket(DbIndex db, DbSlice::BucketRef bucket) {
    if (bucket.version() >= epoch_) return;
    slice_.ForEachInBucket(
        db, bucket,
        [&](std::string_view key, const PrimeValue& value, int64_t expire_ms, const McMeta* mc) {
          if (chunk_db_ != db) {
            // Each chunk says its database: chunks land in any order.
            const auto& [keys, expires] = sizes_[db];
            serializer_.SaveSelectDb(db, keys, expires);
            chunk_db_ = db;
          }
          serializer_.SaveEntry(key, value, expire_ms, mc);
          ++keys_;
        });
    bucket.set_version(epoch_);
  }

  absl::Status WriteChunk() {
    // Taken first: while the write is in flight, the hook fills the other buffer.
    serializer_.SwapOutBuffer(&writing_);
    chunk_db_ = kNoDb;
    absl::Status status = file_->Write(shard_id_, writing_);
    // A huge value's buffer is not kept for the rest of the walk.
    if (writing_.capacity() > 4 * kChunkBytes) writing_ = std::string();
    return status;
  }

  static constexpr DbIndex kNoDb = ~DbIndex(0);

  DbSlice& slice_;
  const ShardId shard_id_;
  SnapshotFile* const file_;
  RdbSerializer serializer_;
  std::string writing_;  // the chunk being written, then the next one's buffer
  uint64_t epoch_ = 0;
  DbIndex chunk_db_ = kNoDb;  // the database of the current chunk's last SELECTDB
  std::vector<std::pair<size_t, size_t>> sizes_;  // keys and deadlines per database at the cut
  uint64_t keys_ = 0;
};

// Writes the snapshot into the open file `fd`; returns the file's size.
absl::StatusOr<uint64_t> WriteSnapshot(int fd, const SnapshotOptions& options, uint64_t* keys) {
  const size_t num_shards = shard_set->size();
  SnapshotFile file(fd, num_shards, options.checksum);
  RdbSerializer header(options.compression);
  header.SaveHeader(kRedisCompatVersion, int64_t(time(nullptr)), shard_set->UsedMemory());
  header.SaveFunctions(FunctionFamily::LibraryCodes());
  if (absl::Status status = file.WriteHeader(header.TakeBuffer()); !status.ok()) return status;

  std::vector<std::unique_ptr<ShardSnapshot>> shards(num_shards);
  {
    // The cut: one hop on every shard, ordered against every other transaction.
    Transaction cut(Transaction::WholeShards{}, 0);
    cut.Schedule();
    cut.ExecuteOnAll(
        [&](Transaction*, EngineShard* shard) {
          auto& part = shards[shard->shard_id()];
          part = std::make_unique<ShardSnapshot>(shard, &file, options.compression);
          part->Start();
          if (options.on_cut) options.on_cut(shard);
        },
        true);
  }
  std::vector<absl::Status> statuses(num_shards);
  helio::fibers::BlockingCounter pending(num_shards);
  for (ShardId id = 0; id < num_shards; ++id) {
    shard_set->pool()->at(id)->LaunchFiber([&, id] {
      statuses[id] = shards[id]->Run();
      pending.Dec();
    });
  }
  pending.Wait();
  for (ShardId id = 0; id < num_shards; ++id) {
    if (!statuses[id].ok()) return statuses[id];
    *keys += shards[id]->keys();
  }
  return file.WriteEnd();
}

}  // namespace

bool SnapshotRunning() { return running.load(std::memory_order_acquire); }

absl::Status SaveSnapshot(const SnapshotOptions& options, SnapshotResult* result) {
  if (running.exchange(true, std::memory_order_acq_rel)) {
    return absl::FailedPreconditionError("Background save already in progress");
  }
  absl::Cleanup done = [] { running.store(false, std::memory_order_release); };

  // Redis's temp-<pid>.rdb, next to the target so that the rename stays on one file system.
  const size_t slash = options.path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : options.path.substr(0, slash + 1);
  const std::string temp =
      helio::StrCat(slash == std::string::npos ? "" : dir, "temp-", getpid(), ".rdb");
  int fd = open(temp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("Failed opening the temp RDB file", temp);

  uint64_t keys = 0;
  absl::StatusOr<uint64_t> bytes = WriteSnapshot(fd, options, &keys);
  absl::Status status = bytes.ok() ? helio::io::Fsync(fd) : bytes.status();
  if (close(fd) != 0 && status.ok()) status = ErrnoError("close", temp);
  if (status.ok() && rename(temp.c_str(), options.path.c_str()) != 0) {
    status = ErrnoError("rename to", options.path);
  }
  if (!status.ok()) {
    unlink(temp.c_str());
    return status;
  }
  // The rename itself must reach the disk.
  if (int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    (void)helio::io::Fsync(dir_fd);
    close(dir_fd);
  }
  if (result != nullptr) *result = SnapshotResult{keys, *bytes};
  return absl::OkStatus();
}

}  // namespace damselfly
