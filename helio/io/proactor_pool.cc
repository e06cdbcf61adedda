#include "helio/io/proactor_pool.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <pthread.h>
#include <sched.h>

#include <latch>

#include "absl/strings/str_cat.h"
#include "helio/io/epoll_proactor.h"
#include "helio/io/uring_proactor.h"

DEFINE_bool(force_epoll, false, "Use epoll instead of io_uring for all network I/O");
DEFINE_uint32(proactor_idle_poll_us, 50,
              "A thread whose last idle spell was shorter than this polls for this long "
              "before it sleeps (io_uring only; 0: never): lower latency for clients in a "
              "quick exchange, paid in CPU while idle");

namespace helio::io {

namespace {

ProactorKind ChooseKind(std::optional<ProactorKind> requested) {
  if (!requested && FLAGS_force_epoll) return ProactorKind::kEpoll;
  if (requested == ProactorKind::kEpoll) return ProactorKind::kEpoll;
  // Probed once per process: the answer cannot change, and each probe is a ring set-up.
  static const absl::Status uring = UringProactor::CheckAvailable();
  if (uring.ok()) return ProactorKind::kUring;
  LOG(WARNING) << "io_uring is not available (" << uring.message()
               << "): falling back to epoll";
  return ProactorKind::kEpoll;
}

}  // namespace

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  return cpus;
}

ProactorPool::ProactorPool(unsigned num_threads, std::optional<ProactorKind> kind,
                           size_t task_queue_capacity)
    : num_threads_(num_threads ? num_threads : std::max<unsigned>(1, AllowedCpus().size())),
      task_queue_capacity_(task_queue_capacity),
      kind_(ChooseKind(kind)) {}

ProactorPool::~ProactorPool() { Stop(); }

void ProactorPool::Run() {
  CHECK(threads_.empty()) << "Run() twice";
  Proactor::SetIdlePoll(std::chrono::microseconds(FLAGS_proactor_idle_poll_us));
  std::vector<int> cpus = AllowedCpus();
  for (unsigned i = 0; i < num_threads_; ++i) {
    if (kind_ == ProactorKind::kUring) {
      proactors_.push_back(std::make_unique<UringProactor>(i, task_queue_capacity_));
    } else {
      proactors_.push_back(std::make_unique<EpollProactor>(i, task_queue_capacity_));
    }
  }
  std::latch started(num_threads_);
  for (unsigned i = 0; i < num_threads_; ++i) {
    threads_.emplace_back([this, i, &cpus, &started] {
      pthread_setname_np(pthread_self(), absl::StrCat("proactor", i).c_str());
      if (!cpus.empty()) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[i % cpus.size()], &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
          LOG(WARNING) << "could not pin proactor" << i << " to CPU " << cpus[i % cpus.size()];
        }
      }
      Proactor* proactor = proactors_[i].get();
      absl::Status status = proactor->Init();
      CHECK(status.ok()) << "proactor" << i << ": " << status;
      started.count_down();
      proactor->Run();
    });
  }
  started.wait();
  VLOG(1) << "started " << num_threads_ << " " << ProactorKindName(kind_) << " proactors";
}

void ProactorPool::Stop() {
  if (threads_.empty()) return;
  for (auto& proactor : proactors_) proactor->Stop();
  for (auto& thread : threads_) thread.join();
  threads_.clear();
  proactors_.clear();
}

Proactor* ProactorPool::NextProactor() {
  return at(next_.fetch_add(1, std::memory_order_relaxed) % num_threads_);
}

}  // namespace helio::io
