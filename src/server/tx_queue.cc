#include "src/server/tx_queue.h"

#include <glog/logging.h>

namespace damselfly {

bool ShardTxQueue::Schedule(ShardTxEntry* entry, bool check_order) {
  DCHECK(!entry->queued_);
  if (check_order && entry->txid < max_scheduled_txid_) return false;
  max_scheduled_txid_ = std::max(max_scheduled_txid_, entry->txid);
  bool all_free = true;
  for (const auto& [tag, mode] : entry->locks) all_free &= locks_.Acquire(tag, mode);
  entry->out_of_order_ = all_free && !entry->whole_shard && whole_shard_entries_ == 0;
  whole_shard_entries_ += entry->whole_shard;
  Append(entry);
  return true;
}

bool ShardTxQueue::LockLate(ShardTxEntry* entry, LockTag tag, LockMode mode) {
  // Held only by the entry itself (a shared lock it now needs exclusive): no one to wait for.
  if (!entry->whole_shard && (whole_shard_entries_ > 0 || !locks_.IsFree(tag, mode)) &&
      YoungestHolder(tag, entry) != 0) {
    return false;
  }
  locks_.Acquire(tag, mode);
  entry->locks.emplace_back(tag, mode);
  if (entry->queued_) return true;
  // Appended after younger entries: it runs out of order, so its place only matters to
  // the entries scheduled after it, which must wait for it.
  entry->out_of_order_ = true;
  Append(entry);
  return true;
}

void ShardTxQueue::AbortWaiting() {
  ShardTxEntry* entry = head_;
  while (entry != nullptr) {
    ShardTxEntry* next = entry->next_;
    if (entry->abortable && entry->armed_ && entry != head_ && !entry->out_of_order_) {
      entry->armed_ = false;
      Remove(entry);
      entry->Abort();  // last: its coordinator may destroy it once told
    }
    entry = next;
  }
}

uint64_t ShardTxQueue::YoungestHolder(LockTag tag, const ShardTxEntry* self) const {
  uint64_t youngest = 0;
  for (const ShardTxEntry* e = head_; e != nullptr; e = e->next_) {
    if (e == self) continue;
    bool holds = e->whole_shard;
    for (const auto& [held, mode] : e->locks) holds |= held == tag;
    if (holds) youngest = std::max(youngest, e->txid);
  }
  return youngest;
}

void ShardTxQueue::Append(ShardTxEntry* entry) {
  entry->armed_ = false;
  entry->queued_ = true;
  entry->prev_ = tail_;
  entry->next_ = nullptr;
  (tail_ ? tail_->next_ : head_) = entry;
  tail_ = entry;
  ++size_;
}

void ShardTxQueue::Remove(ShardTxEntry* entry) {
  DCHECK(entry->queued_);
  for (const auto& [tag, mode] : entry->locks) locks_.Release(tag, mode);
  whole_shard_entries_ -= entry->whole_shard;
  (entry->prev_ ? entry->prev_->next_ : head_) = entry->next_;
  (entry->next_ ? entry->next_->prev_ : tail_) = entry->prev_;
  entry->prev_ = entry->next_ = nullptr;
  --size_;
  entry->queued_ = false;
}

void ShardTxQueue::Cancel(ShardTxEntry* entry) {
  bool was_head = head_ == entry;
  Remove(entry);
  if (was_head) RunHeads();
}

void ShardTxQueue::Arm(ShardTxEntry* entry, bool last_hop) {
  DCHECK(entry->queued_ && !entry->armed_);
  entry->armed_ = true;
  entry->last_hop_ = last_hop;
  if (head_ == entry) {
    RunHeads();
  } else if (entry->out_of_order_) {
    Run(entry);  // leaving from the middle unblocks nobody: the head is unchanged
  }
}

void ShardTxQueue::Run(ShardTxEntry* entry) {
  entry->armed_ = false;
  const bool last = entry->last_hop_;
  // After the last hop the coordinator may destroy the entry as soon as RunHop returns
  // (it learns the hop is done from inside RunHop), so conclude first.
  if (last) Remove(entry);
  entry->RunHop();
}

void ShardTxQueue::RunHeads() {
  while (head_ && head_->armed_) Run(head_);
}

}  // namespace damselfly
