#include "src/server/db_slice.h"

#include <glog/logging.h>
#include <time.h>

namespace damselfly {

namespace {

// Scan cursors: bits 0..39 a bucket index, bits 40..47 a fingerprint of the bucket
// count it was made for (never 0, so that a non-final cursor is never 0).
constexpr uint64_t kBucketBits = 40;
constexpr uint64_t kBucketMask = (uint64_t(1) << kBucketBits) - 1;

uint64_t Fingerprint(size_t bucket_count) { return bucket_count % 251 + 1; }

// The bucket where the walk described by `cursor` resumes in a table of bucket_count
// buckets: the start when the table was resized since.
size_t ResumeBucket(uint64_t cursor, size_t bucket_count) {
  if (cursor == 0 || (cursor >> kBucketBits) != Fingerprint(bucket_count)) return 0;
  return cursor & kBucketMask;
}

uint64_t MakeCursor(size_t bucket, size_t bucket_count) {
  if (bucket >= bucket_count) return 0;
  return (Fingerprint(bucket_count) << kBucketBits) | bucket;
}

}  // namespace

int64_t UnixTimeMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

DbSlice::DbSlice(unsigned dbnum) {
  dbs_.reserve(dbnum);
  for (unsigned i = 0; i < dbnum; ++i) dbs_.push_back(std::make_unique<Db>());
}

bool DbSlice::ExpireIfNeeded(Db& db, MainTable::iterator it, int64_t now_ms) {
  if (!it->second.has_expire) return false;
  auto deadline = db.expire.find(std::string_view(it->first));
  DCHECK(deadline != db.expire.end());
  if (deadline->second > now_ms) return false;
  db.expire.erase(deadline);
  db.main.erase(it);
  ++stats_.expired_keys;
  return true;
}

void DbSlice::EraseEntry(Db& db, MainTable::iterator it) {
  if (it->second.has_expire) db.expire.erase(std::string_view(it->first));
  db.main.erase(it);
}

PrimeValue* DbSlice::Find(DbIndex index, std::string_view key) {
  Db& d = db(index);
  auto it = d.main.find(key);
  if (it == d.main.end()) return nullptr;
  if (it->second.has_expire && ExpireIfNeeded(d, it, UnixTimeMs())) return nullptr;
  return &it->second;
}

PrimeValue* DbSlice::FindRead(DbIndex index, std::string_view key) {
  PrimeValue* value = Find(index, key);
  ++(value ? stats_.keyspace_hits : stats_.keyspace_misses);
  return value;
}

std::pair<PrimeValue*, bool> DbSlice::FindOrInsert(DbIndex index, std::string_view key) {
  if (PrimeValue* value = Find(index, key)) return {value, false};
  auto [it, inserted] = db(index).main.try_emplace(std::string(key));
  DCHECK(inserted);
  return {&it->second, true};
}

bool DbSlice::Erase(DbIndex index, std::string_view key) {
  Db& d = db(index);
  auto it = d.main.find(key);
  if (it == d.main.end()) return false;
  if (it->second.has_expire && ExpireIfNeeded(d, it, UnixTimeMs())) return false;
  EraseEntry(d, it);
  return true;
}

int64_t DbSlice::GetExpire(DbIndex index, std::string_view key) const {
  const Db& d = db(index);
  auto it = d.expire.find(key);
  return it == d.expire.end() ? 0 : it->second;
}

void DbSlice::SetExpire(DbIndex index, std::string_view key, int64_t at_ms) {
  Db& d = db(index);
  auto it = d.main.find(key);
  DCHECK(it != d.main.end());
  if (it == d.main.end()) return;
  if (at_ms > 0) {
    d.expire.insert_or_assign(std::string_view(it->first), at_ms);
    it->second.has_expire = true;
  } else if (it->second.has_expire) {
    d.expire.erase(std::string_view(it->first));
    it->second.has_expire = false;
  }
}

size_t DbSlice::DbSize(DbIndex index) const { return db(index).main.size(); }
size_t DbSlice::ExpireSize(DbIndex index) const { return db(index).expire.size(); }

void DbSlice::FlushDb(DbIndex index) {
  Db& d = db(index);
  d.expire = ExpireTable();  // first: its keys point into main
  d.main = MainTable();
  d.expire_cursor = 0;
}

uint64_t DbSlice::Scan(DbIndex index, uint64_t cursor, size_t count,
                       absl::FunctionRef<void(std::string_view, const PrimeValue&)> cb) {
  Db& d = db(index);
  const size_t buckets = d.main.bucket_count();
  size_t bucket = ResumeBucket(cursor, buckets);
  const int64_t now_ms = UnixTimeMs();
  size_t emitted = 0;
  for (; bucket < buckets && emitted < count; ++bucket) {
    for (auto it = d.main.begin(bucket); it != d.main.end(bucket); ++it) {
      if (it->second.has_expire && d.expire.at(it->first) <= now_ms) continue;
      cb(it->first, it->second);
      ++emitted;
    }
  }
  return MakeCursor(bucket, buckets);
}

void DbSlice::ForEach(DbIndex index,
                      absl::FunctionRef<void(std::string_view, const PrimeValue&)> cb) {
  Db& d = db(index);
  const int64_t now_ms = UnixTimeMs();
  for (const auto& [key, value] : d.main) {
    if (value.has_expire && d.expire.at(key) <= now_ms) continue;
    cb(key, value);
  }
}

std::optional<std::string> DbSlice::RandomKey(DbIndex index, absl::BitGen* rng) {
  Db& d = db(index);
  const int64_t now_ms = UnixTimeMs();
  for (int attempt = 0; attempt < 100 && !d.main.empty(); ++attempt) {
    size_t buckets = d.main.bucket_count();
    size_t bucket = absl::Uniform<size_t>(*rng, 0, buckets);
    // Walk to a non-empty bucket; a sparse table falls back to the first entry.
    for (size_t step = 0; d.main.bucket_size(bucket) == 0 && step < 1024; ++step) {
      bucket = (bucket + 1) % buckets;
    }
    auto it = d.main.bucket_size(bucket) == 0 ? d.main.begin() : [&] {
      size_t skip = absl::Uniform<size_t>(*rng, 0, d.main.bucket_size(bucket));
      auto local = d.main.begin(bucket);
      std::advance(local, skip);
      return d.main.find(local->first);
    }();
    if (it->second.has_expire && ExpireIfNeeded(d, it, now_ms)) continue;
    return it->first;
  }
  return std::nullopt;
}

std::pair<size_t, size_t> DbSlice::ActiveExpire(size_t samples) {
  const int64_t now_ms = UnixTimeMs();
  size_t checked = 0, deleted = 0;
  std::vector<std::string_view> expired;
  for (auto& db_ptr : dbs_) {
    Db& d = *db_ptr;
    if (d.expire.empty()) continue;
    const size_t buckets = d.expire.bucket_count();
    size_t bucket = ResumeBucket(d.expire_cursor, buckets);
    size_t db_checked = 0;
    expired.clear();
    for (; bucket < buckets && db_checked < samples; ++bucket) {
      for (auto it = d.expire.begin(bucket); it != d.expire.end(bucket); ++it) {
        ++db_checked;
        if (it->second <= now_ms) expired.push_back(it->first);
      }
    }
    d.expire_cursor = MakeCursor(bucket, buckets);
    for (std::string_view key : expired) {
      auto it = d.main.find(key);
      DCHECK(it != d.main.end());
      EraseEntry(d, it);
    }
    checked += db_checked;
    deleted += expired.size();
    stats_.expired_keys += expired.size();
  }
  return {checked, deleted};
}

}  // namespace damselfly
