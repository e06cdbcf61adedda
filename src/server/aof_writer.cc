#include "src/server/aof_writer.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "src/core/replace_file.h"

namespace damselfly {

namespace {

std::atomic<int> fsync_policy{int(AofFsync::kEverysec)};
std::atomic<int64_t> write_delay_us{0};

bool FsyncAlways() {
  return fsync_policy.load(std::memory_order_relaxed) == int(AofFsync::kAlways);
}

}  // namespace

AofFsync AofFsyncPolicy() { return AofFsync(fsync_policy.load(std::memory_order_relaxed)); }
void SetAofFsyncPolicy(AofFsync policy) {
  fsync_policy.store(int(policy), std::memory_order_relaxed);
}
int64_t AofWriteDelayUs() { return write_delay_us.load(std::memory_order_relaxed); }
void SetAofWriteDelayUs(int64_t us) { write_delay_us.store(us, std::memory_order_relaxed); }

AofWriter::AofWriter(Callbacks callbacks)
    : callbacks_(std::move(callbacks)), thread_([this] { Run(); }) {}

AofWriter::~AofWriter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void AofWriter::Append(std::string_view bytes) {
  bool was_empty;
  {
    std::lock_guard lock(mu_);
    was_empty = ops_.empty();
    if (!was_empty && ops_.back().kind == Op::kAppend) {
      ops_.back().data.append(bytes);
    } else {
      ops_.push_back({Op::kAppend, std::string(bytes), {}});
    }
    appended_ += bytes.size();
  }
  buffered_bytes_.fetch_add(bytes.size(), std::memory_order_relaxed);
  if (was_empty) wake_.notify_one();
}

void AofWriter::OpenFile(std::string path) { Push({Op::kOpen, {}, std::move(path)}); }
void AofWriter::CreateFile(std::string path) { Push({Op::kCreate, {}, std::move(path)}); }

void AofWriter::ReplaceFile(std::string path, std::string text) {
  Push({Op::kReplace, std::move(text), std::move(path)});
}

void AofWriter::Remove(std::string path) { Push({Op::kRemove, {}, std::move(path)}); }

void AofWriter::Sync() {
  std::unique_lock lock(mu_);
  const uint64_t ticket = ++sync_asked_;
  wake_.notify_one();
  synced_.wait(lock, [&] { return sync_done_ >= ticket; });
}

bool AofWriter::WaitForDrain(uint64_t limit) {
  drain_limit_.store(limit);
  drain_wanted_.store(true);  // before the load below; the writer stores, then loads
  if (buffered_bytes_.load() > limit) return true;
  // Drained already: unless the writer took the request (and calls on_drained), withdraw.
  return !drain_wanted_.exchange(false);
}

uint64_t AofWriter::appended() {
  std::lock_guard lock(mu_);
  return appended_;
}

void AofWriter::Push(Op op) {
  {
    std::lock_guard lock(mu_);
    ops_.push_back(std::move(op));
  }
  wake_.notify_one();
}

void AofWriter::Run() {
  pthread_setname_np(pthread_self(), "aof-writer");
  auto last_fsync = std::chrono::steady_clock::now();
  std::vector<Op> ops;  // taken from ops_; what failed stays first
  while (true) {
    uint64_t sync_ticket, appended;
    bool stopping;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, std::chrono::seconds(1), [&] {
        return !ops_.empty() || stopping_ || sync_asked_ > sync_done_;
      });
      ops.insert(ops.end(), std::make_move_iterator(ops_.begin()),
                 std::make_move_iterator(ops_.end()));
      ops_.clear();
      sync_ticket = sync_asked_;
      appended = appended_;
      stopping = stopping_;
    }
    size_t done = 0;
    while (done < ops.size() && Do(&ops[done])) ++done;
    ops.erase(ops.begin(), ops.begin() + done);
    if (drain_wanted_.load() && buffered_bytes_.load() <= drain_limit_.load() &&
        drain_wanted_.exchange(false) && callbacks_.on_drained) {
      callbacks_.on_drained();
    }
    const auto now = std::chrono::steady_clock::now();
    const AofFsync policy = AofFsyncPolicy();
    const bool sync = sync_ticket > sync_done_seen_ || stopping;
    if (fd_ >= 0 && dirty_ &&
        (sync || policy == AofFsync::kAlways ||
         (policy == AofFsync::kEverysec && now - last_fsync >= std::chrono::seconds(1)))) {
      if (fdatasync(fd_) == 0) {
        dirty_ = false;
      } else if (policy == AofFsync::kAlways) {
        Failed("fsyncing", fd_path_);
      }
      last_fsync = now;
    }
    if (policy == AofFsync::kAlways && ops.empty() && !dirty_ &&
        durable_.load(std::memory_order_relaxed) < appended) {
      durable_.store(appended, std::memory_order_release);
      if (callbacks_.on_durable) callbacks_.on_durable(appended);
    }
    if (sync) {  // done, or tried
      std::lock_guard lock(mu_);
      sync_done_seen_ = sync_done_ = sync_ticket;
      synced_.notify_all();
    }
    if (stopping && (ops.empty() || !last_write_ok())) break;
    if (!ops.empty()) std::this_thread::sleep_for(std::chrono::seconds(1));  // then retry
  }
  if (fd_ >= 0) close(fd_);
  std::lock_guard lock(mu_);
  sync_done_ = sync_asked_;  // nobody waits for a stopped writer
  synced_.notify_all();
}

bool AofWriter::Do(Op* op) {
  switch (op->kind) {
    case Op::kAppend: {
      if (fd_ < 0) {  // no file opened yet: nowhere to go
        buffered_bytes_.fetch_sub(op->data.size(), std::memory_order_relaxed);
        return true;
      }
      if (int64_t delay = AofWriteDelayUs(); delay > 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(delay));
      }
      while (!op->data.empty()) {
        ssize_t n = write(fd_, op->data.data(), op->data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return Failed("writing", fd_path_);
        op->data.erase(0, size_t(n));
        buffered_bytes_.fetch_sub(size_t(n), std::memory_order_relaxed);
        dirty_ = true;
      }
      return Succeeded();
    }
    case Op::kOpen:
    case Op::kCreate: {
      const int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
                        (op->kind == Op::kCreate ? O_TRUNC : 0);
      int fd = open(op->path.c_str(), flags, 0644);
      if (fd < 0) return Failed("opening", op->path);
      if (fd_ >= 0) {
        if (dirty_) fdatasync(fd_);
        close(fd_);
      }
      fd_ = fd;
      fd_path_ = op->path;
      dirty_ = false;
      return Succeeded();
    }
    case Op::kReplace: {
      if (int error = core::ReplaceFileContents(op->path, op->data); error != 0) {
        errno = error;
        return Failed("writing", op->path);
      }
      return Succeeded();
    }
    case Op::kRemove:
      if (unlink(op->path.c_str()) != 0 && errno != ENOENT) {
        LOG(WARNING) << "Removing the AOF's old file " << op->path << ": " << strerror(errno);
      }
      return true;
  }
  return true;
}

bool AofWriter::Failed(std::string_view what, const std::string& path) {
  const int error = errno != 0 ? errno : EIO;
  if (FsyncAlways()) {
    LOG(ERROR) << "AOF: error " << what << " " << path << ": " << strerror(error)
               << "; can't recover from an AOF write error when the AOF fsync policy is "
                  "'always'. Exiting...";
    _exit(1);
  }
  LOG_EVERY_N(WARNING, 10) << "AOF: error " << what << " " << path << ": " << strerror(error);
  last_write_ok_.store(false, std::memory_order_relaxed);
  if (callbacks_.on_error) callbacks_.on_error(error);
  return false;
}

bool AofWriter::Succeeded() {
  if (!last_write_ok_.exchange(true, std::memory_order_relaxed) && callbacks_.on_error) {
    callbacks_.on_error(0);
  }
  return true;
}

}  // namespace damselfly
