#include "src/server/db_slice.h"

#include <glog/logging.h>

#include <algorithm>

#include "src/core/obj_malloc.h"

namespace damselfly {

using core::CompactObj;

thread_local int64_t DbSlice::frozen_now_ms_ = 0;

DbSlice::DbSlice(unsigned dbnum) : base_ms_(UnixTimeMs()), dbs_(dbnum) {}

DbSlice::~DbSlice() = default;

DbSlice::Db& DbSlice::CreateDb(DbIndex index) {
  dbs_[index] = std::make_unique<Db>(index);
  dbs_end_ = std::max<size_t>(dbs_end_, index + 1);
  if (pre_update_hook_) InstallHook(*dbs_[index]);
  return *dbs_[index];
}

void DbSlice::InstallHook(Db& d) {
  if (!pre_update_hook_) return d.main.SetPreChangeHook(nullptr);
  d.main.SetPreChangeHook([this, db = &d](BucketRef bucket) { pre_update_hook_(db->index, bucket); });
}

void DbSlice::SetPreUpdateHook(PreUpdateHook hook) {
  pre_update_hook_ = std::move(hook);
  for (auto& d : dbs_) {
    if (d) InstallHook(*d);
  }
}

DbSlice::MainTable::Handle DbSlice::FindLive(Db& d, std::string_view key, uint64_t hash,
                                             bool for_insert) {
  MainTable::Handle handle = d.main.Find(key, hash);
  if (!handle || !handle.value().has_expire()) return handle;
  ExpireTable::Handle deadline = d.expire.Find(key);
  DCHECK(deadline);
  const int64_t now_ms = ExpiryNowMs();
  if (base_ms_ + deadline.value() > now_ms) return handle;
  if (now_ms < keep_expired_until_ms_ && !for_insert) return {};
  d.main.BeforeChange(handle);  // a snapshot reads the deadline we are about to erase
  d.expire.Erase(deadline);
  if (lazy_free_.expire) MaybeDetach(handle.value());
  EraseMain(d, handle, key);
  ++stats_.expired_keys;
  Report(KeyChangeKind::kExpired, d.index, key, "expired");
  return {};
}

void DbSlice::EraseEntry(Db& d, MainTable::Handle handle, std::string_view key, bool detach) {
  ++changes_;
  d.main.BeforeChange(handle);  // a snapshot reads the deadline and metadata erased here
  if (handle.value().has_expire()) d.expire.Erase(key);
  if (detach) MaybeDetach(handle.value());
  EraseMain(d, handle, key);
}

void DbSlice::MaybeDetach(PrimeValue& value) {
  // As Redis (LAZYFREE_THRESHOLD): what takes a few frees goes at once. Strings, and
  // listpacks held without an object, are one free.
  constexpr size_t kLazyFreeThreshold = 64;
  const core::TypedObject* object = value.GetObject();
  if (object == nullptr || object->FreeEffort() <= kLazyFreeThreshold) return;
  detached_values_.push_back(std::move(value));
  if (detach_listener_) detach_listener_();
}

void DbSlice::EraseMain(Db& d, MainTable::Handle handle, std::string_view key) {
  if (!d.mc_meta.empty()) d.mc_meta.erase(key);
  d.inline_keys -= handle.key().IsInline();
  d.main.Erase(handle);
}

const PrimeValue* DbSlice::Find(DbIndex index, std::string_view key) {
  Db* d = db(index);
  if (!d) return nullptr;
  MainTable::Handle handle = FindLive(*d, key, core::HashKey(key));
  return handle ? &handle.value() : nullptr;
}

const PrimeValue* DbSlice::Peek(DbIndex index, std::string_view key) const {
  const Db* d = db(index);
  if (!d) return nullptr;
  MainTable::Handle handle = d->main.Find(key, core::HashKey(key));
  return handle ? &handle.value() : nullptr;
}

const PrimeValue* DbSlice::FindRead(DbIndex index, std::string_view key, bool touch) {
  Db* d = db(index);
  const uint64_t hash = core::HashKey(key);
  MainTable::Handle handle = d ? FindLive(*d, key, hash) : MainTable::Handle();
  if (!handle) {
    // Cache mode counts misses too: a key asked for again is worth keeping once stored.
    if (stamp_mode_ == StampMode::kCacheMode && touch) [[unlikely]]
      CountCacheMiss(hash);
    CountMiss(index, key);
    return nullptr;
  }
  ++stats_.keyspace_hits;
  if (touch) Touch(handle, hash);
  return &handle.value();
}

std::optional<uint32_t> DbSlice::IdleSeconds(DbIndex index, std::string_view key) {
  Db* d = db(index);
  MainTable::Handle handle = d ? FindLive(*d, key, core::HashKey(key)) : MainTable::Handle();
  if (!handle) return std::nullopt;
  if (stamp_mode_ == StampMode::kCacheMode) {
    return cache_clock_.IdleSeconds(StampOf(handle), clock_s_);
  }
  return core::AccessStamp::IdleSeconds(StampOf(handle), clock_s_);
}

void DbSlice::AgeAccessStamps(size_t samples) {
  clock_s_ = NowSeconds();
  lfu_minutes_ = NowMinutes();
  if (stamp_mode_ == StampMode::kCacheMode && cache_clock_.Second(clock_s_)) OnCacheTick();
  SweepStamps(samples);
}

void DbSlice::SweepStamps(size_t samples) {
  for (auto& d : dbs_) {
    if (!d || d->main.empty()) continue;
    size_t seen = 0;
    do {
      d->stamp_cursor = d->main.TraverseStep(d->stamp_cursor, [&](MainTable::Handle handle) {
        ++seen;
        const uint16_t stamp = StampOf(handle);
        uint16_t aged = stamp;
        switch (stamp_mode_) {
          case StampMode::kStamp:
            aged = core::AccessStamp::Age(stamp, clock_s_);
            break;
          case StampMode::kLfu:
            aged = LfuBits::Aged(stamp, lfu_minutes_, eviction_.lfu_decay_minutes);
            break;
          case StampMode::kCacheMode:
            aged = cache_clock_.Clamped(stamp);
            break;
        }
        if (aged != stamp) SetStamp(handle, aged);
      });
    } while (d->stamp_cursor != 0 && seen < samples);
  }
}

DbSlice::Update DbSlice::FindMutable(DbIndex index, std::string_view key) {
  Db* d = db(index);
  if (!d) return Update();
  const uint64_t hash = core::HashKey(key);
  MainTable::Handle handle = FindLive(*d, key, hash);
  if (!handle) return Update();
  d->main.BeforeChange(handle);
  Touch(handle, hash);
  return Update(this, d, key, handle, false);
}

OpResult<DbSlice::Update> DbSlice::FindMutableTyped(DbIndex index, std::string_view key,
                                                    ObjType type) {
  Update update = FindMutable(index, key);
  if (!update) return OpStatus::kKeyNotFound;
  if (update->type() != type) return OpStatus::kWrongType;
  return update;
}

DbSlice::Update DbSlice::AddOrFind(DbIndex index, std::string_view key) {
  Db& d = EnsureDb(index);
  const uint64_t hash = core::HashKey(key);
  if (eviction_.limit_bytes != 0) [[unlikely]] {
    EvictBeforeWrite(d, hash);
  } else if (report_step_ != 0) [[unlikely]] {  // noeviction with a maxmemory
    // O(1): the tables as of the last report or cycle (their growth shows there).
    ReportMemory(core::ThreadObjHeapUsedBytes() + reported_tables_);
  }
  if (MainTable::Handle handle = FindLive(d, key, hash, true)) {
    d.main.BeforeChange(handle);
    Touch(handle, hash);
    return Update(this, &d, key, handle, false);
  }
  MainTable::Handle handle = d.main.InsertNew(CompactObj(key), PrimeValue(), hash);
  d.inline_keys += handle.key().IsInline();
  TouchNew(handle);
  return Update(this, &d, key, handle, true);
}

bool DbSlice::Erase(DbIndex index, std::string_view key, std::string_view event,
                    KeyChangeKind kind) {
  Db* d = db(index);
  if (!d) return false;
  MainTable::Handle handle = FindLive(*d, key, core::HashKey(key));
  if (!handle) return false;
  EraseEntry(*d, handle, key);
  Report(kind, index, key, event);
  return true;
}

std::pair<PrimeValue, int64_t> DbSlice::TakeOut(Db& d, MainTable::Handle source,
                                                std::string_view key) {
  d.main.BeforeChange(source);  // the value moves out: a snapshot takes it first
  const int64_t deadline_ms = source.value().has_expire() ? GetExpire(d.index, key) : 0;
  PrimeValue value = std::move(source.value());
  value.set_has_expire(false);
  value.set_has_mc_meta(false);  // the metadata described the item under its old key
  if (deadline_ms != 0) d.expire.Erase(key);  // the moved-from value no longer says so
  EraseMain(d, source, key);
  return {std::move(value), deadline_ms};
}

void DbSlice::PutValue(DbIndex index, std::string_view key, PrimeValue value, int64_t deadline_ms) {
  Update target = AddOrFind(index, key);
  if (target->has_expire()) target.SetExpire(0);
  if (target->has_mc_meta()) dbs_[index]->mc_meta.erase(key);
  // The spare bits are the access stamp's high half (SetStamp), not the moved value's.
  const uint8_t stamp_high = target->spare_bits();
  target.value() = std::move(value);
  target.value().set_spare_bits(stamp_high);
  target.SetExpire(deadline_ms);
  target.EndSilently();
}

OpStatus DbSlice::Rename(DbIndex index, std::string_view from, std::string_view to,
                         bool only_if_new) {
  DCHECK(from != to);
  Db* d = db(index);
  MainTable::Handle source = d ? FindLive(*d, from, core::HashKey(from)) : MainTable::Handle();
  if (!source) return OpStatus::kKeyNotFound;
  if (only_if_new && FindLive(*d, to, core::HashKey(to))) return OpStatus::kSkipped;
  // Take the value out before inserting `to`: the insert may move entries.
  auto [value, deadline_ms] = TakeOut(*d, source, from);
  PutValue(index, to, std::move(value), deadline_ms);
  // Redis deletes a replaced `to` and adds it anew, so it is always "new".
  Report(KeyChangeKind::kSet, index, to, "new");
  Report(KeyChangeKind::kRenamedFrom, index, from, "rename_from");
  Report(KeyChangeKind::kRenamedTo, index, to, "rename_to");
  return OpStatus::kOk;
}

OpStatus DbSlice::MoveToDb(DbIndex from_db, DbIndex to_db, std::string_view key) {
  DCHECK_NE(from_db, to_db);
  Db* from = db(from_db);
  MainTable::Handle source = from ? FindLive(*from, key, core::HashKey(key)) : MainTable::Handle();
  if (!source) return OpStatus::kKeyNotFound;
  if (Find(to_db, key)) return OpStatus::kSkipped;
  auto [value, deadline_ms] = TakeOut(*from, source, key);
  PutValue(to_db, key, std::move(value), deadline_ms);
  Report(KeyChangeKind::kSet, to_db, key, "new");
  Report(KeyChangeKind::kRenamedFrom, from_db, key, "move_from");
  Report(KeyChangeKind::kRenamedTo, to_db, key, "move_to");
  return OpStatus::kOk;
}

bool DbSlice::PutSerialized(DbIndex index, std::string_view key, std::string_view form,
                            int64_t deadline_ms, std::string_view event) {
  PrimeValue value;
  if (!value.Deserialize(form)) return false;
  PutValue(index, key, std::move(value), deadline_ms);
  Report(KeyChangeKind::kSet, index, key, "new");
  Report(KeyChangeKind::kRenamedTo, index, key, event);
  return true;
}

void DbSlice::PutRestored(DbIndex index, std::string_view key, PrimeValue value,
                          int64_t deadline_ms, std::string_view event) {
  PutValue(index, key, std::move(value), deadline_ms);
  Report(KeyChangeKind::kSet, index, key, "new");
  Report(KeyChangeKind::kSet, index, key, event);
}

void DbSlice::SetIdleSeconds(DbIndex index, std::string_view key, uint32_t idle_s) {
  Db* d = db(index);
  MainTable::Handle handle = d ? FindLive(*d, key, core::HashKey(key)) : MainTable::Handle();
  if (!handle || stamp_mode_ == StampMode::kLfu) return;
  SetStamp(handle, stamp_mode_ == StampMode::kCacheMode
                       ? cache_clock_.Backdated(idle_s, clock_s_)
                       : core::AccessStamp::Backdated(idle_s, clock_s_));
}

int64_t DbSlice::GetExpire(DbIndex index, std::string_view key) const {
  const Db* d = db(index);
  if (!d) return 0;
  ExpireTable::Handle deadline = d->expire.Find(key);
  return deadline ? base_ms_ + deadline.value() : 0;
}

void DbSlice::SetExpireOf(Db& d, MainTable::Handle handle, std::string_view key, int64_t at_ms) {
  if (at_ms > 0) {
    int64_t relative = at_ms - base_ms_;
    if (ExpireTable::Handle deadline = d.expire.Find(key)) {
      deadline.value() = relative;
    } else {
      d.expire.InsertNew(CompactObj(key), relative, core::HashKey(key));
    }
    handle.value().set_has_expire(true);
  } else if (handle.value().has_expire()) {
    d.expire.Erase(key);
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

void DbSlice::HookEveryBucket(DbIndex index) {
  if (!pre_update_hook_ || !dbs_[index]) return;
  uint64_t cursor = 0;
  do {
    cursor = dbs_[index]->main.TraverseBuckets(
        cursor, [&](BucketRef bucket) { pre_update_hook_(index, bucket); });
  } while (cursor != 0);
}

uint64_t DbSlice::TraverseBuckets(DbIndex index, uint64_t cursor,
                                  absl::FunctionRef<void(BucketRef)> fn) {
  Db* d = db(index);
  return d ? d->main.TraverseBlocks(cursor, fn) : 0;
}

void DbSlice::ForEachInBucket(
    DbIndex index, BucketRef bucket,
    absl::FunctionRef<void(std::string_view, const PrimeValue&, int64_t, const McMeta*)> fn) {
  Db* d = db(index);
  std::string scratch;
  bucket.ForEachEntry([&](const CompactObj& key_obj, const PrimeValue& value) {
    std::string_view key = key_obj.GetSlice(&scratch);
    int64_t expire_ms = 0;
    if (value.has_expire()) {
      ExpireTable::Handle deadline = d->expire.Find(key);
      DCHECK(deadline);
      expire_ms = base_ms_ + deadline.value();
    }
    fn(key, value, expire_ms, FindMcMeta(index, key, value));
  });
}

void DbSlice::FlushAll(bool lazily) {
  for (DbIndex index = 0; index < dbnum(); ++index) FlushDb(index, lazily);
}

void DbSlice::FlushDb(DbIndex index, bool lazily) {
  if (!dbs_[index]) return;
  HookEveryBucket(index);
  Report(KeyChangeKind::kFlushDb, index, {}, "flushdb");
  if (!lazily || dbs_[index]->main.empty()) return dbs_[index].reset();
  dbs_[index]->main.SetPreChangeHook(nullptr);  // nobody reads it any more
  detached_dbs_.push_back(std::move(dbs_[index]));
  if (detach_listener_) detach_listener_();
}

bool DbSlice::Unlink(DbIndex index, std::string_view key) {
  Db* d = db(index);
  if (!d) return false;
  MainTable::Handle handle = FindLive(*d, key, core::HashKey(key));
  if (!handle) return false;
  EraseEntry(*d, handle, key, /*detach=*/true);
  Report(KeyChangeKind::kDel, index, key, "del");
  return true;
}

bool DbSlice::FreeDetached(std::chrono::nanoseconds budget) {
  // A table block holds up to ~800 entries.
  constexpr size_t kBlocksPerStep = 1;
  constexpr size_t kElementsPerStep = 4096;
  const auto end = std::chrono::steady_clock::now() + budget;
  auto more = [this] { return !detached_values_.empty() || !detached_dbs_.empty(); };
  while (more()) {
    if (!detached_values_.empty()) {
      // A large collection's elements go a few thousand per step (~25 ns each).
      core::TypedObject* object = detached_values_.back().GetObject();
      if (object == nullptr || !object->FreeSome(kElementsPerStep)) {
        detached_values_.pop_back();
        ++lazyfreed_;
      }
    } else {
      Db& d = *detached_dbs_.back();
      const size_t freed = d.main.DestroySomeBlocks(kBlocksPerStep);
      d.expire.DestroySomeBlocks(kBlocksPerStep);
      lazyfreed_ += freed;
      if (d.main.segment_count() == 0 && d.expire.segment_count() == 0) detached_dbs_.pop_back();
    }
    if (std::chrono::steady_clock::now() >= end) break;
  }
  return more();
}

void DbSlice::SwapDb(DbIndex a, DbIndex b) {
  if (a == b) return;
  HookEveryBucket(a);
  HookEveryBucket(b);
  Report(KeyChangeKind::kSwapDb, a, {}, "swapdb", b);
  Report(KeyChangeKind::kSwapDb, b, {}, "swapdb", a);
  std::swap(dbs_[a], dbs_[b]);
  if (dbs_[a]) dbs_[a]->index = a;
  if (dbs_[b]) dbs_[b]->index = b;
  if (dbs_[a] || dbs_[b]) dbs_end_ = std::max<size_t>(dbs_end_, std::max(a, b) + 1);
}

uint64_t DbSlice::AddChangeListener(ChangeListener listener) {
  listeners_.emplace_back(next_listener_id_, std::move(listener));
  return next_listener_id_++;
}

void DbSlice::RemoveChangeListener(uint64_t id) {
  std::erase_if(listeners_, [id](const auto& entry) { return entry.first == id; });
}

void DbSlice::ReportToListeners(const KeyChange& change) {
  for (const auto& [id, listener] : listeners_) listener(change);
}

uint64_t DbSlice::Scan(DbIndex index, uint64_t cursor, size_t count,
                       absl::FunctionRef<void(std::string_view, const PrimeValue&)> cb,
                       std::vector<std::string>* expired) {
  Db* d = db(index);
  if (!d) return 0;
  const int64_t now_ms = ExpiryNowMs();
  std::string scratch;
  size_t seen = 0;
  do {
    cursor = d->main.TraverseStep(cursor, [&](MainTable::Handle handle) {
      std::string_view key = handle.key().GetSlice(&scratch);
      if (handle.value().has_expire() && base_ms_ + d->expire.Find(key).value() <= now_ms) {
        if (expired != nullptr) expired->emplace_back(key);
        return;
      }
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
  const int64_t now_ms = ExpiryNowMs();
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

std::pair<size_t, size_t> DbSlice::ActiveExpire(
    size_t samples, absl::FunctionRef<bool(std::string_view key)> may_delete) {
  const int64_t now_ms = UnixTimeMs();
  size_t checked = 0, deleted = 0;
  if (now_ms < keep_expired_until_ms_) return {checked, deleted};
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
    size_t db_deleted = 0;
    for (const std::string& key : expired) {
      if (!may_delete(key)) continue;
      MainTable::Handle handle = d.main.Find(key);
      DCHECK(handle);
      if (!handle) continue;
      EraseEntry(d, handle, key, lazy_free_.expire);
      Report(KeyChangeKind::kExpired, d.index, key, "expired");
      ++db_deleted;
    }
    checked += db_checked;
    deleted += db_deleted;
    stats_.expired_keys += db_deleted;
  }
  return {checked, deleted};
}

DbSlice::TableStats DbSlice::table_stats() const {
  TableStats stats;
  stats.table_bytes = TableBytes();
  for (const auto& d : dbs_) {
    if (!d) continue;
    stats.buckets += d->main.bucket_count() + d->expire.bucket_count();
    stats.entries += d->main.size();
    stats.inline_keys += d->inline_keys;
  }
  return stats;
}

// --- Update

DbSlice::Update& DbSlice::Update::operator=(Update&& other) noexcept {
  if (this != &other) {
    Finish();
    slice_ = std::exchange(other.slice_, nullptr);
    db_state_ = other.db_state_;
    db_ = other.db_;
    key_ = other.key_;
    handle_ = other.handle_;
    value_ = std::exchange(other.value_, nullptr);
    inserted_ = other.inserted_;
    num_events_ = std::exchange(other.num_events_, 0);
    events_ = other.events_;
  }
  return *this;
}

int64_t DbSlice::Update::expire() const {
  return value_->has_expire() ? slice_->GetExpire(db_, key_) : 0;
}

void DbSlice::Update::SetExpire(int64_t at_ms) {
  DCHECK(&db_state_->main.Find(key_).value() == value_) << "the entry moved under its Update";
  slice_->SetExpireOf(*db_state_, handle_, key_, at_ms);
}

void DbSlice::Update::Erase(std::string_view event) {
  DCHECK(value_);
  DCHECK(&db_state_->main.Find(key_).value() == value_) << "the entry moved under its Update";
  slice_->EraseEntry(*db_state_, handle_, key_);
  if (!inserted_) {
    ReportEvents();
    slice_->Report(KeyChangeKind::kDel, db_, key_, event);
  }
  EndSilently();
}

void DbSlice::Update::ReportEvents() {
  if (inserted_ && num_events_ != 0) slice_->Report(KeyChangeKind::kSet, db_, key_, "new");
  for (uint8_t i = 0; i < num_events_; ++i) {
    slice_->Report(events_[i].kind, db_, key_, events_[i].name);
  }
  num_events_ = 0;
}

void DbSlice::Update::FinishSlow() {
  if (num_events_ == 0 && inserted_) return Erase();  // inserted and never set: it never existed
  ReportEvents();
  EndSilently();
}

}  // namespace damselfly
