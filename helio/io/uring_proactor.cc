#include "helio/io/uring_proactor.h"

#include <glog/logging.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace helio::io {

namespace {

// user_data values that are not a Request*.
constexpr uint64_t kIgnoreCompletion = 0;  // cancellations: the cancelled request reports
constexpr uint64_t kWakeCompletion = 1;    // the eventfd read

// Tries the setup flags that cut completion overhead, then plainer ones for older kernels:
// DEFER_TASKRUN (Linux 6.1) runs completion work only when this thread enters the kernel
// for events, in one batch, instead of interrupting it (COOP_TASKRUN, 5.19). Either way
// TASKRUN_FLAG marks pending work in the SQ flags, which PollEvents checks before it
// reaps without blocking. SINGLE_ISSUER: only this proactor's thread submits.
int InitRing(unsigned entries, io_uring* ring) {
  const unsigned flag_sets[] = {
      IORING_SETUP_CQSIZE | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
          IORING_SETUP_SINGLE_ISSUER,
      IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
          IORING_SETUP_SINGLE_ISSUER,
      IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
      IORING_SETUP_CQSIZE,
  };
  int res = -EINVAL;
  for (unsigned flags : flag_sets) {
    io_uring_params params{};
    params.flags = flags;
    params.cq_entries = entries * 4;  // room for many connections' pending receives
    res = io_uring_queue_init_params(entries, ring, &params);
    if (res != -EINVAL) return res;
  }
  return res;
}

// Whether the running kernel is at least major.minor (uname's release, "6.1.0-...").
bool KernelAtLeast(int major, int minor) {
  utsname name{};
  int kernel_major = 0, kernel_minor = 0;
  if (uname(&name) != 0 || sscanf(name.release, "%d.%d", &kernel_major, &kernel_minor) != 2) {
    return false;
  }
  return kernel_major > major || (kernel_major == major && kernel_minor >= minor);
}

std::atomic<bool> recv_buffers_enabled{true};

}  // namespace

void UringProactor::SetRecvBuffersEnabled(bool enabled) { recv_buffers_enabled = enabled; }

UringProactor::UringProactor(unsigned index, size_t task_queue_capacity, unsigned ring_entries)
    : Proactor(index, task_queue_capacity), ring_entries_(ring_entries) {}

UringProactor::~UringProactor() {
  if (ring_ready_) io_uring_queue_exit(&ring_);
  if (recv_buffer_ring_) munmap(recv_buffer_ring_, kRecvBufferCount * sizeof(io_uring_buf));
  if (wake_fd_ >= 0) close(wake_fd_);
}

absl::Status UringProactor::CheckAvailable() {
  io_uring ring;
  int res = io_uring_queue_init(8, &ring, 0);
  if (res < 0) return absl::UnavailableError(absl::StrCat("io_uring_setup: ", strerror(-res)));
  io_uring_probe* probe = io_uring_get_probe_ring(&ring);
  absl::Status status;
  if (probe == nullptr) {
    status = absl::UnavailableError("io_uring cannot probe its operations (kernel too old)");
  } else {
    for (int op : {IORING_OP_RECV, IORING_OP_SEND, IORING_OP_SENDMSG, IORING_OP_ACCEPT,
                   IORING_OP_CONNECT, IORING_OP_READ, IORING_OP_ASYNC_CANCEL}) {
      if (!io_uring_opcode_supported(probe, op)) {
        status = absl::UnavailableError(absl::StrCat("io_uring lacks operation ", op));
        break;
      }
    }
    io_uring_free_probe(probe);
  }
  io_uring_queue_exit(&ring);
  return status;
}

absl::Status UringProactor::Init() {
  int res = InitRing(ring_entries_, &ring_);
  if (res < 0) return absl::UnavailableError(absl::StrCat("io_uring_setup: ", strerror(-res)));
  ring_ready_ = true;
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return absl::InternalError(absl::StrCat("eventfd: ", strerror(errno)));
  ArmWakeRead();
  InitFileTable();
  InitRecvBuffers();
  return absl::OkStatus();
}

void UringProactor::InitRecvBuffers() {
  if (!recv_buffers_enabled) return;
  // Buffer rings came in 5.19, but the multishot receive that uses them in 6.0; before
  // that it would fail with EINVAL on the first receive of every socket.
  if (!KernelAtLeast(6, 0)) {
    LOG(WARNING) << "io_uring multishot receives need Linux 6.0: sockets receive one request "
                    "at a time";
    return;
  }
  const size_t ring_bytes = kRecvBufferCount * sizeof(io_uring_buf);
  void* mem = mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) return;
  auto* ring = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(ring);
  reg.ring_entries = kRecvBufferCount;
  reg.bgid = kRecvBufferGroup;
  int res = io_uring_register_buf_ring(&ring_, &reg, 0);
  if (res < 0) {
    LOG(WARNING) << "io_uring provided buffers unavailable (" << strerror(-res)
                 << "): sockets receive one request at a time";
    munmap(mem, ring_bytes);
    return;
  }
  recv_buffer_ring_ = ring;
  recv_buffers_ = std::make_unique_for_overwrite<uint8_t[]>(size_t(kRecvBufferCount) *
                                                             kRecvBufferBytes);
  io_uring_buf_ring_init(ring);
  const int mask = io_uring_buf_ring_mask(kRecvBufferCount);
  for (unsigned id = 0; id < kRecvBufferCount; ++id) {
    io_uring_buf_ring_add(ring, recv_buffers_.get() + size_t(id) * kRecvBufferBytes,
                          kRecvBufferBytes, uint16_t(id), mask, int(id));
  }
  io_uring_buf_ring_advance(ring, kRecvBufferCount);
}

void UringProactor::ReturnRecvBuffer(uint16_t id) {
  io_uring_buf_ring_add(recv_buffer_ring_, recv_buffers_.get() + size_t(id) * kRecvBufferBytes,
                        kRecvBufferBytes, id, io_uring_buf_ring_mask(kRecvBufferCount), 0);
  io_uring_buf_ring_advance(recv_buffer_ring_, 1);
}

void UringProactor::InitFileTable() {
  // The kernel refuses a table larger than RLIMIT_NOFILE; each slot costs it a few bytes.
  constexpr rlim_t kMaxSlots = 1 << 16;
  rlimit limit{};
  rlim_t slots = kMaxSlots;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) slots = std::min(slots, limit.rlim_cur);
  int res = io_uring_register_files_sparse(&ring_, unsigned(slots));
  if (res < 0) {
    LOG(WARNING) << "io_uring registered files unavailable (" << strerror(-res)
                 << "): sockets name their fds";
    return;
  }
  file_table_size_ = unsigned(slots);
}

int UringProactor::RegisterFile(int fd) {
  DCHECK(InMyThread());
  int slot;
  if (!free_file_slots_.empty()) {
    slot = free_file_slots_.back();
    free_file_slots_.pop_back();
  } else if (next_file_slot_ < file_table_size_) {
    slot = int(next_file_slot_++);
  } else {
    return -1;
  }
  int res = io_uring_register_files_update(&ring_, unsigned(slot), &fd, 1);
  if (res != 1) {
    LOG(WARNING) << "io_uring_register_files_update: " << strerror(-res);
    free_file_slots_.push_back(slot);
    return -1;
  }
  return slot;
}

void UringProactor::UnregisterFile(int slot) {
  DCHECK(InMyThread());
  int empty = -1;
  int res = io_uring_register_files_update(&ring_, unsigned(slot), &empty, 1);
  // A slot that cannot be emptied keeps its socket open after close(2): never reuse it.
  LOG_IF(DFATAL, res != 1) << "io_uring unregister file: " << strerror(-res);
  if (res == 1) retired_file_slots_.push_back(slot);
}

io_uring_sqe* UringProactor::GetSqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

int UringProactor::Execute(io_uring_sqe* sqe, Request* request) {
  DCHECK(InMyThread());
  DCHECK(!fibers::InDispatcherContext());
  request->waiter = boost::fibers::context::active();
  io_uring_sqe_set_data(sqe, request);
  request->waiter->suspend();
  return request->result;
}

void UringProactor::Submit(io_uring_sqe* sqe, Request* request) {
  DCHECK(request->on_complete != nullptr);
  request->waiter = nullptr;
  io_uring_sqe_set_data(sqe, request);
}

void UringProactor::Cancel(Request* request) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_cancel(sqe, request, 0);
  io_uring_sqe_set_data64(sqe, kIgnoreCompletion);
}

void UringProactor::ArmWakeRead() {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_read(sqe, wake_fd_, &wake_value_, sizeof(wake_value_), 0);
  io_uring_sqe_set_data64(sqe, kWakeCompletion);
}

void UringProactor::Interrupt() {
  uint64_t one = 1;
  // EAGAIN means the counter is saturated: a wake-up is pending anyway.
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

bool UringProactor::KernelHasEvents() const {
  constexpr unsigned kNeedsEnter = IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW;
  return IO_URING_READ_ONCE(*ring_.sq.kflags) & kNeedsEnter;
}

bool UringProactor::EventsPending() {
  return io_uring_cq_ready(&ring_) > 0 || KernelHasEvents();
}

void UringProactor::SubmitPending() {
  if (io_uring_sq_ready(&ring_) > 0) io_uring_submit(&ring_);
}

void UringProactor::PollEvents(fibers::Clock::time_point deadline, bool may_block) {
  if (may_block) {
    __kernel_timespec ts{};
    __kernel_timespec* timeout = nullptr;
    if (deadline != fibers::Clock::time_point::max()) {
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    deadline - fibers::Clock::now())
                    .count();
      if (ns < 0) ns = 0;
      ts.tv_sec = ns / 1000000000;
      ts.tv_nsec = ns % 1000000000;
      timeout = &ts;
    }
    io_uring_cqe* cqe = nullptr;
    int res = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, timeout, nullptr);
    if (res < 0 && res != -ETIME && res != -EINTR && res != -EBUSY) {
      LOG(ERROR) << "io_uring wait: " << strerror(-res);
    }
  } else if (io_uring_sq_ready(&ring_) > 0 || KernelHasEvents()) {
    io_uring_submit_and_get_events(&ring_);
  }
  if (!retired_file_slots_.empty() && io_uring_sq_ready(&ring_) == 0) {
    // Everything prepared before the slots were emptied has been submitted.
    free_file_slots_.insert(free_file_slots_.end(), retired_file_slots_.begin(),
                            retired_file_slots_.end());
    retired_file_slots_.clear();
  }
  ReapCompletions();
}

void UringProactor::ReapCompletions() {
  boost::fibers::context* self = boost::fibers::context::active();
  unsigned head, seen = 0;
  io_uring_cqe* cqe;
  bool rearm_wake = false;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    ++seen;
    uint64_t data = io_uring_cqe_get_data64(cqe);
    if (data == kIgnoreCompletion) continue;
    if (data == kWakeCompletion) {
      rearm_wake = true;
      continue;
    }
    auto* request = reinterpret_cast<Request*>(data);
    request->result = cqe->res;
    request->cqe_flags = cqe->flags;
    if (request->waiter) {
      self->schedule(request->waiter);
    } else {
      request->on_complete(request);
    }
  }
  io_uring_cq_advance(&ring_, seen);
  if (rearm_wake) ArmWakeRead();
}

}  // namespace helio::io
