#include "src/server/db_slice.h"

#include <glog/logging.h>
#include <time.h>

namespace damselfly {

namespace {

// The expire table (an unordered_map) is only sampled, never SCANned: a cursor into it
// is a bucket index plus a fingerprint of the bucket count it was made for; after a
// resize the walk restarts, which sampling can afford.
constexpr uint64_t kBucketBits = 40;
constexpr uint64_t kBucketMask = (uint64_t(1) << kBucketBits) - 1;

uint64_t Fingerprint(size_t bucket_count) { return bucket_count % 251 + 1; }

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

bool DbSlice::ExpireIfNeeded(Db& db, Entry* entry, int64_t now_ms) {
  if (!entry->value.has_expire) return false;
  auto deadline = db.expire.find(std::string_view(entry->key));
  DCHECK(deadline != db.expire.end());
  if (deadline->second > now_ms) return false;
  db.expire.erase(deadline);
  db.main.Erase(entry->key);
  ++stats_.expired_keys;
  return true;
}

void DbSlice::EraseEntry(Db& db, Entry* entry) {
  if (entry->value.has_expire) db.expire.erase(std::string_view(entry->key));
  db.main.Erase(entry->key);
}

PrimeValue* DbSlice::Find(DbIndex index, std::string_view key) {
  Db& d = db(index);
  Entry* entry = d.main.Find(key);
  if (entry == nullptr) return nullptr;
  if (entry->value.has_expire && ExpireIfNeeded(d, entry, UnixTimeMs())) return nullptr;
  return &entry->value;
}

PrimeValue* DbSlice::FindRead(DbIndex index, std::string_view key) {
  PrimeValue* value = Find(index, key);
  ++(value ? stats_.keyspace_hits : stats_.keyspace_misses);
  return value;
}

std::pair<PrimeValue*, bool> DbSlice::FindOrInsert(DbIndex index, std::string_view key) {
  if (PrimeValue* value = Find(index, key)) return {value, false};
  auto [entry, inserted] = db(index).main.FindOrInsert(key);
  DCHECK(inserted);
  return {&entry->value, true};
}

bool DbSlice::Erase(DbIndex index, std::string_view key) {
  Db& d = db(index);
  Entry* entry = d.main.Find(key);
  if (entry == nullptr) return false;
  if (entry->value.has_expire && ExpireIfNeeded(d, entry, UnixTimeMs())) return false;
  EraseEntry(d, entry);
  return true;
}

int64_t DbSlice::GetExpire(DbIndex index, std::string_view key) const {
  const Db& d = db(index);
  auto it = d.expire.find(key);
  return it == d.expire.end() ? 0 : it->second;
}

void DbSlice::SetExpire(DbIndex index, std::string_view key, int64_t at_ms) {
  Db& d = db(index);
  Entry* entry = d.main.Find(key);
  DCHECK(entry != nullptr);
  if (entry == nullptr) return;
  if (at_ms > 0) {
    d.expire.insert_or_assign(std::string_view(entry->key), at_ms);
    entry->value.has_expire = true;
  } else if (entry->value.has_expire) {
    d.expire.erase(std::string_view(entry->key));
    entry->value.has_expire = false;
  }
}

size_t DbSlice::DbSize(DbIndex index) const { return db(index).main.size(); }
size_t DbSlice::ExpireSize(DbIndex index) const { return db(index).expire.size(); }

void DbSlice::FlushDb(DbIndex index) {
  Db& d = db(index);
  d.expire = ExpireTable();  // first: its keys point into main
  d.main.Clear();
  d.expire_cursor = 0;
}

uint64_t DbSlice::Scan(DbIndex index, uint64_t cursor, size_t count,
                       absl::FunctionRef<void(std::string_view, const PrimeValue&)> cb) {
  Db& d = db(index);
  const int64_t now_ms = UnixTimeMs();
  size_t emitted = 0;
  do {
    cursor = d.main.ScanBucket(cursor, [&](Entry& entry) {
      if (entry.value.has_expire && d.expire.at(entry.key) <= now_ms) return;
      cb(entry.key, entry.value);
      ++emitted;
    });
  } while (cursor != 0 && emitted < count);
  return cursor;
}

void DbSlice::ForEach(DbIndex index,
                      absl::FunctionRef<void(std::string_view, const PrimeValue&)> cb) {
  Db& d = db(index);
  const int64_t now_ms = UnixTimeMs();
  d.main.ForEach([&](const Entry& entry) {
    if (entry.value.has_expire && d.expire.at(entry.key) <= now_ms) return;
    cb(entry.key, entry.value);
  });
}

std::optional<std::string> DbSlice::RandomKey(DbIndex index, absl::BitGen* rng) {
  Db& d = db(index);
  const int64_t now_ms = UnixTimeMs();
  for (int attempt = 0; attempt < 100 && !d.main.empty(); ++attempt) {
    // A random bucket, or the next non-empty one after it; then a random chain entry.
    const size_t buckets = d.main.bucket_count();
    size_t bucket = absl::Uniform<size_t>(*rng, 0, buckets);
    while (d.main.BucketHead(bucket) == nullptr) bucket = (bucket + 1) % buckets;
    size_t chain = 0;
    for (Entry* e = d.main.BucketHead(bucket); e; e = e->next) ++chain;
    Entry* entry = d.main.BucketHead(bucket);
    for (size_t skip = absl::Uniform<size_t>(*rng, 0, chain); skip > 0; --skip) entry = entry->next;
    if (entry->value.has_expire && ExpireIfNeeded(d, entry, now_ms)) continue;
    return entry->key;
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
      Entry* entry = d.main.Find(key);
      DCHECK(entry != nullptr);
      EraseEntry(d, entry);
    }
    checked += db_checked;
    deleted += expired.size();
    stats_.expired_keys += expired.size();
  }
  return {checked, deleted};
}

}  // namespace damselfly
