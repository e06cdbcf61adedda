#include "helio/io/file.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "helio/fibers/scheduler.h"
#include "helio/io/uring_proactor.h"

namespace helio::io {

namespace {

// The calling fiber's io_uring proactor, or nullptr when the write must block.
UringProactor* RingHere() {
  Proactor* proactor = Proactor::me();
  if (proactor == nullptr || proactor->kind() != ProactorKind::kUring ||
      fibers::InDispatcherContext()) {
    return nullptr;
  }
  return static_cast<UringProactor*>(proactor);
}

absl::Status ErrnoStatus(const char* what, int error) { return absl::ErrnoToStatus(error, what); }

}  // namespace

absl::StatusOr<size_t> ReadAt(int fd, char* dst, size_t size, uint64_t offset) {
  UringProactor* ring = RingHere();
  size_t done = 0;
  while (done < size) {
    ssize_t got;
    if (ring != nullptr) {
      io_uring_sqe* sqe = ring->GetSqe();
      io_uring_prep_read(sqe, fd, dst + done, unsigned(std::min<size_t>(size - done, 1 << 30)),
                         offset + done);
      UringProactor::Request request;
      got = ring->Execute(sqe, &request);
      if (got < 0) {
        if (got == -EINTR || got == -EAGAIN) continue;
        return ErrnoStatus("read", int(-got));
      }
    } else {
      got = pread(fd, dst + done, size - done, off_t(offset + done));
      if (got < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus("pread", errno);
      }
    }
    if (got == 0) break;  // the end of the file
    done += size_t(got);
  }
  return done;
}

absl::Status WriteAt(int fd, std::string_view data, uint64_t offset) {
  UringProactor* ring = RingHere();
  while (!data.empty()) {
    ssize_t written;
    if (ring != nullptr) {
      io_uring_sqe* sqe = ring->GetSqe();
      io_uring_prep_write(sqe, fd, data.data(), unsigned(std::min<size_t>(data.size(), 1 << 30)),
                          offset);
      UringProactor::Request request;
      written = ring->Execute(sqe, &request);
      if (written < 0) {
        if (written == -EINTR || written == -EAGAIN) continue;
        return ErrnoStatus("write", int(-written));
      }
    } else {
      written = pwrite(fd, data.data(), data.size(), off_t(offset));
      if (written < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus("pwrite", errno);
      }
    }
    if (written == 0) return absl::InternalError("write: no progress");
    data.remove_prefix(size_t(written));
    offset += uint64_t(written);
  }
  return absl::OkStatus();
}

absl::Status Fsync(int fd) {
  if (UringProactor* ring = RingHere()) {
    io_uring_sqe* sqe = ring->GetSqe();
    io_uring_prep_fsync(sqe, fd, 0);
    UringProactor::Request request;
    int result = ring->Execute(sqe, &request);
    return result < 0 ? ErrnoStatus("fsync", -result) : absl::OkStatus();
  }
  return fsync(fd) == 0 ? absl::OkStatus() : ErrnoStatus("fsync", errno);
}

}  // namespace helio::io
