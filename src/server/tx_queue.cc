#include "src/server/tx_queue.h"

#include <glog/logging.h>

namespace damselfly {

bool ShardTxQueue::Schedule(ShardTxEntry* entry, bool check_order) {
  DCHECK(!entry->queued_);
  if (check_order && entry->txid < max_scheduled_txid_) return false;
  max_scheduled_txid_ = std::max(max_scheduled_txid_, entry->txid);
  bool all_free = true;
  for (const auto& [key, mode] : entry->locks) all_free &= locks_.Acquire(key, mode);
  entry->out_of_order_ = all_free;
  entry->armed_ = false;
  entry->queued_ = true;
  entry->position_ = queue_.insert(queue_.end(), entry);
  return true;
}

void ShardTxQueue::Remove(ShardTxEntry* entry) {
  DCHECK(entry->queued_);
  for (const auto& [key, mode] : entry->locks) locks_.Release(key, mode);
  queue_.erase(entry->position_);
  entry->queued_ = false;
}

void ShardTxQueue::Cancel(ShardTxEntry* entry) {
  bool was_head = queue_.front() == entry;
  Remove(entry);
  if (was_head) RunHeads();
}

void ShardTxQueue::Arm(ShardTxEntry* entry, bool last_hop) {
  DCHECK(entry->queued_ && !entry->armed_);
  entry->armed_ = true;
  entry->last_hop_ = last_hop;
  if (queue_.front() == entry) {
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
  while (!queue_.empty() && queue_.front()->armed_) Run(queue_.front());
}

}  // namespace damselfly
