// ProactorPool: the process's proactor threads, one per CPU by default, each pinned to
// its CPU and running one Proactor.
//
// The pool uses io_uring unless --force_epoll is set or io_uring cannot be set up here
// (no kernel support, or a seccomp profile such as Docker's or podman's default blocks
// it); then it logs one line and uses epoll. Every proactor of a pool has the same kind.
//
// Thread-safety: Run() and Stop() from one controlling thread (not a pool thread);
// the accessors and the *OnAll helpers from anywhere once Run() has returned.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "helio/fibers/sync.h"
#include "helio/io/proactor.h"

namespace helio::io {

// The CPUs this process may run on (its affinity: a container's cpuset may allow fewer
// than exist), in increasing order; empty when the affinity cannot be read. Any thread.
std::vector<int> AllowedCpus();

class ProactorPool {
 public:
  // num_threads 0: one per CPU the process may run on. kind unset: io_uring when
  // available and --force_epoll is off, else epoll.
  explicit ProactorPool(unsigned num_threads = 0, std::optional<ProactorKind> kind = {},
                        size_t task_queue_capacity = Proactor::kDefaultTaskQueueCapacity);
  ~ProactorPool();
  ProactorPool(const ProactorPool&) = delete;
  ProactorPool& operator=(const ProactorPool&) = delete;

  // Starts the threads; returns when every proactor runs its loop.
  void Run();
  // Stops every loop and joins the threads (see Proactor::Run about live fibers).
  void Stop();

  ProactorKind kind() const { return kind_; }
  unsigned size() const { return num_threads_; }
  Proactor* at(unsigned index) const { return proactors_[index].get(); }
  // Round-robin over the proactors; thread-safe.
  Proactor* NextProactor();

  // Runs fn(index, proactor) on every proactor, in parallel, as a task (must not
  // suspend); returns when all are done. Call from a fiber or a plain thread.
  template <typename Fn>
  void AwaitOnAll(Fn&& fn);

  // Like AwaitOnAll, but each fn runs in a new fiber and may suspend.
  template <typename Fn>
  void AwaitFiberOnAll(Fn&& fn);

 private:
  const unsigned num_threads_;
  const size_t task_queue_capacity_;
  ProactorKind kind_;
  std::vector<std::unique_ptr<Proactor>> proactors_;
  std::vector<std::thread> threads_;
  std::atomic<unsigned> next_{0};
};

template <typename Fn>
void ProactorPool::AwaitOnAll(Fn&& fn) {
  fibers::BlockingCounter pending(size());
  for (unsigned i = 0; i < size(); ++i) {
    Proactor* p = at(i);
    p->Dispatch([&fn, &pending, i, p] {
      fn(i, p);
      pending.Dec();
    });
  }
  pending.Wait();
}

template <typename Fn>
void ProactorPool::AwaitFiberOnAll(Fn&& fn) {
  fibers::BlockingCounter pending(size());
  for (unsigned i = 0; i < size(); ++i) {
    Proactor* p = at(i);
    p->LaunchFiber([&fn, &pending, i, p] {
      fn(i, p);
      pending.Dec();
    });
  }
  pending.Wait();
}

}  // namespace helio::io
