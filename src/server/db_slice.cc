#include "src/server/db_slice.h"

#include <glog/logging.h>

#include <algorithm>

namespace damselfly {

using core::CompactObj;

DbSlice::DbSlice(unsigned dbnum) : base_ms_(UnixTimeMs()), dbs_(dbnum) {}

DbSlice::~DbSlice() = default;

DbSlice::Db& DbSlice::EnsureDb(DbIndex index) {
  if (!dbs_[index]) dbs_[index] = std::make_unique<Db>();
  return *dbs_[index];
}

DbSlice::MainTable::Handle DbSlice::FindLive(Db& d, std::string_view key, uint64_t hash) {
  MainTable::Handle handle = d.main.Find(key, hash);
  if (!handle || !handle.value().has_expire()) return handle;
  ExpireTable::Handle deadline = d.expire.Find(key);
  DCHECK(deadline);
  if (base_ms_ + deadline.value() > UnixTimeMs()) return handle;
  d.expire.Erase(deadline);
  EraseMain(d, handle, key);
  ++stats_.expired_keys;
  if (!d.watched.empty()) MarkWatchers(d, key);
  return {};
}

void DbSlice::EraseEntry(Db& d, MainTable::Handle handle, std::string_view key) {
  if (handle.value().has_expire()) d.expire.Erase(key);
  EraseMain(d, handle, key);
}

void DbSlice::EraseMain(Db& d, MainTable::Handle handle, std::string_view key) {
  if (!d.mc_meta.empty()) d.mc_meta.erase(key);
  d.inline_keys -= handle.key().IsInline();
  d.main.Erase(handle);
}

PrimeValue* DbSlice::Find(DbIndex index, std::string_view key) {
  Db* d = db(index);
  if (!d) return nullptr;
  MainTable::Handle handle = FindLive(*d, key, core::HashKey(key));
  return handle ? &handle.value() : nullptr;
}

PrimeValue* DbSlice::FindRead(DbIndex index, std::string_view key) {
  PrimeValue* value = Find(index, key);
  ++(value ? stats_.keyspace_hits : stats_.keyspace_misses);
  return value;
}

std::pair<PrimeValue*, bool> DbSlice::FindOrInsert(DbIndex index, std::string_view key) {
  Db& d = EnsureDb(index);
  const uint64_t hash = core::HashKey(key);
  if (MainTable::Handle handle = FindLive(d, key, hash)) return {&handle.value(), false};
  MainTable::Handle handle = d.main.InsertNew(CompactObj(key), PrimeValue(), hash);
  d.inline_keys += handle.key().IsInline();
  return {&handle.value(), true};
}

bool DbSlice::Erase(DbIndex index, std::string_view key) {
  Db* d = db(index);
  if (!d) return false;
  MainTable::Handle handle = FindLive(*d, key, core::HashKey(key));
  if (!handle) return false;
  EraseEntry(*d, handle, key);
  return true;
}

int64_t DbSlice::GetExpire(DbIndex index, std::string_view key) const {
  const Db* d = db(index);
  if (!d) return 0;
  ExpireTable::Handle deadline = d->expire.Find(key);
  return deadline ? base_ms_ + deadline.value() : 0;
}

void DbSlice::SetExpire(DbIndex index, std::string_view key, int64_t at_ms) {
  Db* d = db(index);
  MainTable::Handle handle = d ? d->main.Find(key) : MainTable::Handle();
  DCHECK(handle);
  if (!handle) return;
  if (at_ms > 0) {
    int64_t relative = at_ms - base_ms_;
    if (ExpireTable::Handle deadline = d->expire.Find(key)) {
      deadline.value() = relative;
    } else {
      d->expire.InsertNew(CompactObj(key), relative, core::HashKey(key));
    }
    handle.value().set_has_expire(true);
  } else if (handle.value().has_expire()) {
    d->expire.Erase(key);
    handle.value().set_has_expire(false);
  }
}

const McMeta* DbSlice::FindMcMeta(DbIndex index, std::string_view key,
                                  const PrimeValue& value) const {
  if (!value.has_mc_meta()) return nullptr;
  const Db* d = db(index);
  auto it = d->mc_meta.find(key);
  DCHECK(it != d->mc_meta.end());
  return it == d->mc_meta.end() ? nullptr : &it->second;
}

void DbSlice::SetMcMeta(DbIndex index, std::string_view key, PrimeValue* value, McMeta meta) {
  Db* d = db(index);
  DCHECK(d);
  d->mc_meta.insert_or_assign(key, meta);
  value->set_has_mc_meta(true);
}

size_t DbSlice::DbSize(DbIndex index) const {
  const Db* d = db(index);
  return d ? d->main.size() : 0;
}

size_t DbSlice::ExpireSize(DbIndex index) const {
  const Db* d = db(index);
  return d ? d->expire.size() : 0;
}

void DbSlice::FlushDb(DbIndex index) {
  Db* d = db(index);
  if (!d || d->watched.empty()) return dbs_[index].reset();
  // Redis invalidates the watches of the keys that existed; the watches themselves stay.
  for (auto& [key, flags] : d->watched) {
    if (FindLive(*d, key, core::HashKey(key))) MarkWatchers(*d, key);
  }
  WatchMap watched = std::move(d->watched);
  dbs_[index] = std::make_unique<Db>();
  dbs_[index]->watched = std::move(watched);
}

void DbSlice::Watch(DbIndex index, std::string_view key, std::atomic<bool>* flag) {
  EnsureDb(index).watched[key].push_back(flag);
  ++watch_count_;
}

void DbSlice::Unwatch(DbIndex index, std::string_view key, std::atomic<bool>* flag) {
  Db* d = db(index);
  if (!d) return;
  auto it = d->watched.find(key);
  if (it == d->watched.end()) return;
  auto& flags = it->second;
  auto removed = std::remove(flags.begin(), flags.end(), flag);
  watch_count_ -= flags.end() - removed;
  flags.erase(removed, flags.end());
  if (flags.empty()) d->watched.erase(it);
}

void DbSlice::MarkWatchers(Db& d, std::string_view key) {
  auto it = d.watched.find(key);
  if (it == d.watched.end()) return;
  for (std::atomic<bool>* flag : it->second) flag->store(true, std::memory_order_relaxed);
}

uint64_t DbSlice::Scan(DbIndex index, uint64_t cursor, size_t count,
                       absl::FunctionRef<void(std::string_view, const PrimeValue&)> cb) {
  Db* d = db(index);
  if (!d) return 0;
  const int64_t now_ms = UnixTimeMs();
  std::string scratch;
  size_t seen = 0;
  do {
    cursor = d->main.TraverseStep(cursor, [&](MainTable::Handle handle) {
      std::string_view key = handle.key().GetSlice(&scratch);
      if (handle.value().has_expire() && base_ms_ + d->expire.Find(key).value() <= now_ms) return;
      cb(key, handle.value());
      ++seen;
    });
  } while (cursor != 0 && seen < count);
  return cursor;
}

void DbSlice::ForEach(DbIndex index,
                      absl::FunctionRef<void(std::string_view, const PrimeValue&)> cb) {
  Db* d = db(index);
  if (!d) return;
  const int64_t now_ms = UnixTimeMs();
  std::string scratch;
  d->main.ForEach([&](MainTable::Handle handle) {
    std::string_view key = handle.key().GetSlice(&scratch);
    if (handle.value().has_expire() && base_ms_ + d->expire.Find(key).value() <= now_ms) return;
    cb(key, handle.value());
  });
}

size_t DbSlice::MemoryUsage(DbIndex index, std::string_view key) {
  Db* d = db(index);
  if (!d) return 0;
  MainTable::Handle handle = FindLive(*d, key, core::HashKey(key));
  if (!handle) return 0;
  size_t bytes = sizeof(core::CompactObj) + sizeof(PrimeValue) + handle.key().MallocUsed() +
                 handle.value().MallocUsed();
  if (handle.value().has_expire()) bytes += sizeof(core::CompactObj) + sizeof(int64_t);
  return bytes;
}

std::optional<std::string> DbSlice::RandomKey(DbIndex index, absl::BitGen* rng) {
  Db* d = db(index);
  if (!d) return std::nullopt;
  auto random = [rng] { return absl::Uniform<uint64_t>(*rng); };
  for (int attempt = 0; attempt < 100; ++attempt) {
    MainTable::Handle handle = d->main.RandomEntry(random);
    if (!handle) return std::nullopt;
    std::string key;
    handle.key().GetString(&key);
    if (FindLive(*d, key, core::HashKey(key))) return key;  // else it had expired and is gone now
  }
  return std::nullopt;
}

std::pair<size_t, size_t> DbSlice::ActiveExpire(size_t samples) {
  const int64_t now_ms = UnixTimeMs();
  size_t checked = 0, deleted = 0;
  std::vector<std::string> expired;
  for (auto& db_ptr : dbs_) {
    if (!db_ptr || db_ptr->expire.empty()) continue;
    Db& d = *db_ptr;
    size_t db_checked = 0;
    expired.clear();
    do {
      d.expire_cursor = d.expire.TraverseStep(d.expire_cursor, [&](ExpireTable::Handle handle) {
        ++db_checked;
        if (base_ms_ + handle.value() <= now_ms) handle.key().GetString(&expired.emplace_back());
      });
    } while (d.expire_cursor != 0 && db_checked < samples);
    for (const std::string& key : expired) {
      MainTable::Handle handle = d.main.Find(key);
      DCHECK(handle);
      if (handle) EraseEntry(d, handle, key);
      if (!d.watched.empty()) MarkWatchers(d, key);
    }
    checked += db_checked;
    deleted += expired.size();
    stats_.expired_keys += expired.size();
  }
  return {checked, deleted};
}

DbSlice::TableStats DbSlice::table_stats() const {
  TableStats stats;
  stats.table_bytes = sizeof(*this) + dbs_.capacity() * sizeof(dbs_[0]);
  for (const auto& d : dbs_) {
    if (!d) continue;
    stats.table_bytes += sizeof(Db) + d->main.mem_usage() + d->expire.mem_usage();
    stats.buckets += d->main.bucket_count() + d->expire.bucket_count();
    stats.entries += d->main.size();
    stats.inline_keys += d->inline_keys;
  }
  return stats;
}

}  // namespace damselfly
