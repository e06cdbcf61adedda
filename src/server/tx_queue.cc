#include "src/server/tx_queue.h"

#include <glog/logging.h>

namespace damselfly {

bool ShardTxQueue::Schedule(ShardTxEntry* entry, bool check_order) {
  DCHECK(!entry->queued_);
  if (check_order && entry->txid < max_scheduled_txid_) return false;
  max_scheduled_txid_ = std::max(max_scheduled_txid_, entry->txid);
  bool all_free = true;
  for (const auto& [tag, mode] : entry->locks) all_free &= locks_.Acquire(tag, mode);
  entry->out_of_order_ =
      all_free && !entry->whole_shard && !entry->in_order && whole_shard_entries_ == 0;
  whole_shard_entries_ += entry->whole_shard;
  Append(entry);
  return true;
}

LateLock ShardTxQueue::LockLate(ShardTxEntry* entry, LockTag tag, LockMode mode) {
  auto holds = [tag](const ShardTxEntry* e) {
    if (e->whole_shard) return true;
    for (const auto& [held, held_mode] : e->locks) {
      if (held == tag) return true;
    }
    return false;
  };
  // The first younger holder, when the entry goes ahead of younger holders (2b).
  ShardTxEntry* first_younger = nullptr;
  if (!entry->whole_shard && (whole_shard_entries_ > 0 || !locks_.IsFree(tag, mode))) {
    bool older = false, behind_entry = false;
    for (ShardTxEntry* e = head_; e != nullptr; e = e->next_) {
      if (e == entry) {
        behind_entry = true;
        continue;
      }
      if (!holds(e)) continue;
      if (e->txid < entry->txid) {
        // An older holder waiting here behind the entry would never let it go.
        if (behind_entry && !e->out_of_order_) return LateLock::kConflict;
        older = true;
      } else if (e->ran_) {
        return LateLock::kConflict;
      } else if (first_younger == nullptr) {
        first_younger = e;
      }
    }
    if (older) return LateLock::kWait;
    if (first_younger != nullptr) {
      if (entry->queued_) {
        // Already here: it must be ahead of the holders, which then wait for it.
        for (ShardTxEntry* e = first_younger; e != nullptr; e = e->prev_) {
          if (e == entry) break;
          if (e == head_) return LateLock::kConflict;
        }
      } else {
        for (ShardTxEntry* e = first_younger; e != nullptr; e = e->next_) {
          if (e->txid < entry->txid && !e->out_of_order_) return LateLock::kConflict;
        }
      }
      for (ShardTxEntry* e = first_younger; e != nullptr; e = e->next_) {
        if (holds(e)) e->out_of_order_ = false;
      }
    }
  }
  locks_.Acquire(tag, mode);
  entry->locks.emplace_back(tag, mode);
  if (entry->queued_) return LateLock::kTaken;
  // It runs out of order, so its place only matters to the entries after it, which
  // must wait for it: at the tail, or ahead of the younger holders it overtook.
  if (first_younger != nullptr) {
    InsertBefore(entry, first_younger);
  } else {
    Append(entry);
  }
  entry->out_of_order_ = true;
  return LateLock::kTaken;
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

void ShardTxQueue::Append(ShardTxEntry* entry) {
  entry->armed_ = false;
  entry->queued_ = true;
  entry->prev_ = tail_;
  entry->next_ = nullptr;
  (tail_ ? tail_->next_ : head_) = entry;
  tail_ = entry;
  ++size_;
}

void ShardTxQueue::InsertBefore(ShardTxEntry* entry, ShardTxEntry* next) {
  entry->armed_ = false;
  entry->queued_ = true;
  entry->prev_ = next->prev_;
  entry->next_ = next;
  (next->prev_ ? next->prev_->next_ : head_) = entry;
  next->prev_ = entry;
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
  entry->ran_ = false;
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
  entry->ran_ = true;
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
