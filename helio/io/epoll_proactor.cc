#include "helio/io/epoll_proactor.h"

#include <glog/logging.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace helio::io {

namespace {

absl::Status ErrnoStatus(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

void Wake(boost::fibers::context** slot) {
  if (*slot == nullptr) return;
  boost::fibers::context::active()->schedule(*slot);
  *slot = nullptr;
}

// Wakes the reader fiber, or runs the armed on_readable.
void WakeReader(EpollProactor::Waiters* waiters) {
  if (waiters->on_readable) {
    std::exchange(waiters->on_readable, nullptr)(waiters);
  } else {
    Wake(&waiters->reader);
  }
}

void Park(boost::fibers::context** slot) {
  DCHECK(*slot == nullptr) << "two fibers wait on one fd in the same direction";
  DCHECK(!fibers::InDispatcherContext());
  *slot = boost::fibers::context::active();
  (*slot)->suspend();
}

// epoll_pwait2 (Linux 5.11) takes a nanosecond timeout; older kernels get epoll_wait with
// the timeout rounded up to whole milliseconds, so fibers never wake before their time.
int Wait(int epoll_fd, epoll_event* events, int max_events, const timespec* timeout) {
  static std::atomic<bool> has_pwait2{true};
  if (has_pwait2.load(std::memory_order_relaxed)) {
    int n = epoll_pwait2(epoll_fd, events, max_events, timeout, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    has_pwait2.store(false, std::memory_order_relaxed);
  }
  int timeout_ms = -1;
  if (timeout) timeout_ms = int(timeout->tv_sec * 1000 + (timeout->tv_nsec + 999999) / 1000000);
  return epoll_wait(epoll_fd, events, max_events, timeout_ms);
}

}  // namespace

EpollProactor::EpollProactor(unsigned index, size_t task_queue_capacity)
    : Proactor(index, task_queue_capacity) {}

EpollProactor::~EpollProactor() {
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

absl::Status EpollProactor::Init() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return ErrnoStatus("epoll_create1");
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return ErrnoStatus("eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  ev.data.ptr = nullptr;  // marks the wake-up fd
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) return ErrnoStatus("epoll_ctl");
  return absl::OkStatus();
}

absl::Status EpollProactor::Register(int fd, Waiters* waiters) {
  DCHECK(InMyThread());
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  ev.data.ptr = waiters;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return ErrnoStatus("epoll_ctl(ADD)");
  return absl::OkStatus();
}

void EpollProactor::Unregister(int fd) {
  DCHECK(InMyThread());
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr) != 0 && errno != EBADF &&
      errno != ENOENT) {
    PLOG(WARNING) << "epoll_ctl(DEL)";
  }
}

void EpollProactor::WaitReadable(Waiters* waiters) { Park(&waiters->reader); }
void EpollProactor::WaitWritable(Waiters* waiters) { Park(&waiters->writer); }

void EpollProactor::NotifyReadable(Waiters* waiters, void (*on_readable)(Waiters* waiters)) {
  DCHECK(waiters->reader == nullptr && waiters->on_readable == nullptr);
  waiters->on_readable = on_readable;
}

void EpollProactor::WakeAll(Waiters* waiters) {
  WakeReader(waiters);
  Wake(&waiters->writer);
}

void EpollProactor::Interrupt() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

void EpollProactor::PollEvents(fibers::Clock::time_point deadline, bool may_block) {
  timespec ts{0, 0};
  timespec* timeout = &ts;
  if (may_block) {
    if (deadline == fibers::Clock::time_point::max()) {
      timeout = nullptr;
    } else {
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline -
                                                                      fibers::Clock::now())
                    .count();
      if (ns > 0) ts = {time_t(ns / 1000000000), long(ns % 1000000000)};
    }
  }
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  int n = Wait(epoll_fd_, events, kMaxEvents, timeout);
  if (n < 0) {
    if (errno != EINTR) PLOG(ERROR) << "epoll wait";
    return;
  }
  for (int i = 0; i < n; ++i) {
    auto* waiters = static_cast<Waiters*>(events[i].data.ptr);
    uint32_t ev = events[i].events;
    if (waiters == nullptr) {
      uint64_t value;
      [[maybe_unused]] ssize_t r = read(wake_fd_, &value, sizeof(value));
      continue;
    }
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) WakeReader(waiters);
    if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) Wake(&waiters->writer);
  }
}

}  // namespace helio::io
