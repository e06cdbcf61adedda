#include "src/server/watch_table.h"

#include <algorithm>

namespace damselfly {

WatchTable::~WatchTable() {
  if (listener_id_ != 0) slice_->RemoveChangeListener(listener_id_);
}

void WatchTable::Watch(DbIndex db, std::string_view key, std::atomic<bool>* flag) {
  if (by_db_.size() <= db) by_db_.resize(db + 1);
  by_db_[db][key].push_back(flag);
  if (count_++ == 0) {
    listener_id_ = slice_->AddChangeListener([this](const KeyChange& change) { OnChange(change); });
  }
}

void WatchTable::Unwatch(DbIndex db, std::string_view key, std::atomic<bool>* flag) {
  if (by_db_.size() <= db) return;
  auto it = by_db_[db].find(key);
  if (it == by_db_[db].end()) return;
  Watchers& flags = it->second;
  auto removed = std::remove(flags.begin(), flags.end(), flag);
  count_ -= flags.end() - removed;
  flags.erase(removed, flags.end());
  if (flags.empty()) by_db_[db].erase(it);
  if (count_ == 0 && listener_id_ != 0) {
    slice_->RemoveChangeListener(listener_id_);
    listener_id_ = 0;
  }
}

void WatchTable::OnChange(const KeyChange& change) {
  switch (change.kind) {
    case KeyChangeKind::kGroupState:
      return;
    case KeyChangeKind::kFlushDb:
      return MarkExisting(change.db, change.db);
    case KeyChangeKind::kSwapDb:
      return MarkExisting(change.db, change.other_db);
    default:
      return Mark(change.db, change.key);
  }
}

void WatchTable::Mark(DbIndex db, std::string_view key) {
  if (by_db_.size() <= db) return;
  auto it = by_db_[db].find(key);
  if (it == by_db_[db].end()) return;
  for (std::atomic<bool>* flag : it->second) flag->store(true, std::memory_order_relaxed);
}

void WatchTable::MarkExisting(DbIndex db, DbIndex also_in) {
  if (by_db_.size() <= db) return;
  for (const auto& [key, flags] : by_db_[db]) {
    // Find may expire the key, which reports (and marks) it on its own.
    if (!slice_->Find(db, key) && !slice_->Find(also_in, key)) continue;
    for (std::atomic<bool>* flag : flags) flag->store(true, std::memory_order_relaxed);
  }
}

}  // namespace damselfly
