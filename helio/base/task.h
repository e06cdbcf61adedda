// Task: a move-only `void()` callable stored inline.
//
// Cross-thread task queues hold Tasks in fixed cells, so a closure that fits in
// kInlineBytes costs no allocation to post (Await's closure is one pointer; typical
// Dispatch closures are a few pointers). Larger closures fall back to one heap allocation.
// Not thread-safe: a Task is moved between threads through the queue, never shared.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace helio {

class Task {
 public:
  static constexpr size_t kInlineBytes = 48;

  Task() = default;

  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Task>>>
  Task(F&& f) {  // NOLINT: implicit on purpose, so Dispatch(lambda) reads naturally.
    using Fn = std::decay_t<F>;
    if constexpr (sizeof(Fn) <= kInlineBytes && alignof(Fn) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<Fn>) {
      new (storage_) Fn(std::forward<F>(f));
      ops_ = &kInlineOps<Fn>;
    } else {
      *reinterpret_cast<Fn**>(storage_) = new Fn(std::forward<F>(f));
      ops_ = &kHeapOps<Fn>;
    }
  }

  Task(Task&& other) noexcept : ops_(other.ops_) {
    if (ops_) {
      ops_->move(other.storage_, storage_);
      other.ops_ = nullptr;
    }
  }
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      Reset();
      ops_ = other.ops_;
      if (ops_) {
        ops_->move(other.storage_, storage_);
        other.ops_ = nullptr;
      }
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { Reset(); }

  explicit operator bool() const { return ops_ != nullptr; }

  // REQUIRES: non-empty.
  void operator()() { ops_->invoke(storage_); }

 private:
  struct Ops {
    void (*invoke)(void* storage);
    void (*move)(void* from, void* to);  // leaves `from` destroyed
    void (*destroy)(void* storage);
  };

  template <typename Fn>
  static constexpr Ops kInlineOps = {
      [](void* s) { (*static_cast<Fn*>(s))(); },
      [](void* from, void* to) {
        new (to) Fn(std::move(*static_cast<Fn*>(from)));
        static_cast<Fn*>(from)->~Fn();
      },
      [](void* s) { static_cast<Fn*>(s)->~Fn(); },
  };

  template <typename Fn>
  static constexpr Ops kHeapOps = {
      [](void* s) { (**static_cast<Fn**>(s))(); },
      [](void* from, void* to) { *static_cast<Fn**>(to) = *static_cast<Fn**>(from); },
      [](void* s) { delete *static_cast<Fn**>(s); },
  };

  void Reset() {
    if (ops_) {
      ops_->destroy(storage_);
      ops_ = nullptr;
    }
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace helio
