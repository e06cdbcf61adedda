// BoundedMpscQueue: a fixed-capacity, lock-free queue for many producers and one consumer.
//
// The design is Dmitry Vyukov's bounded queue: every cell carries a sequence number that
// says whose turn it is (a producer's for position p when seq == p, the consumer's when
// seq == p + 1). A producer claims a position with one CAS on the tail; the consumer needs
// no atomic read-modify-write at all. No allocation after construction.
//
// Thread-safety: TryPush from any thread; TryPop and Empty only from the single consumer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace helio {

template <typename T>
class BoundedMpscQueue {
 public:
  // REQUIRES: capacity is a power of two, at least 2.
  explicit BoundedMpscQueue(size_t capacity)
      : mask_(capacity - 1), cells_(std::make_unique<Cell[]>(capacity)) {
    for (size_t i = 0; i < capacity; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  size_t capacity() const { return mask_ + 1; }

  // Moves `value` into the queue and returns true, or returns false (leaving `value`
  // untouched) when the queue is full.
  bool TryPush(T&& value) {
    size_t pos = tail_.load(std::memory_order_relaxed);
    while (true) {
      Cell& cell = cells_[pos & mask_];
      size_t seq = cell.seq.load(std::memory_order_acquire);
      intptr_t diff = intptr_t(seq) - intptr_t(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.value = std::move(value);
          cell.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // the consumer has not freed this cell yet: full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Consumer only. Moves the oldest element into *out and returns true, or returns false
  // when the queue is empty (or the next producer has claimed but not yet filled its cell).
  bool TryPop(T* out) {
    Cell& cell = cells_[head_ & mask_];
    size_t seq = cell.seq.load(std::memory_order_acquire);
    if (intptr_t(seq) - intptr_t(head_ + 1) < 0) return false;
    *out = std::move(cell.value);
    cell.seq.store(head_ + mask_ + 1, std::memory_order_release);
    ++head_;
    return true;
  }

  // Consumer only. True when TryPop would return false now.
  bool Empty() const {
    const Cell& cell = cells_[head_ & mask_];
    return intptr_t(cell.seq.load(std::memory_order_acquire)) - intptr_t(head_ + 1) < 0;
  }

 private:
  struct alignas(64) Cell {
    std::atomic<size_t> seq;
    T value;
  };

  const size_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<size_t> tail_{0};
  alignas(64) size_t head_ = 0;  // consumer-owned
};

}  // namespace helio
