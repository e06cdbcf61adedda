// File reads and writes from a proactor thread: through the thread's io_uring when it has one (the
// calling fiber waits, the thread keeps serving), with blocking pwrite/fsync otherwise
// (the epoll proactor, or a thread without a proactor), which then stall the thread for
// the write's duration.
//
// Thread-safety: the functions run on any thread; concurrent writes to one file must
// use disjoint ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace helio::io {

// Reads up to `size` bytes at `offset` of the open file `fd` into `dst`; returns how many
// (fewer only at the end of the file) or the error.
absl::StatusOr<size_t> ReadAt(int fd, char* dst, size_t size, uint64_t offset);

// Writes all of `data` at `offset` of the open file `fd`.
absl::Status WriteAt(int fd, std::string_view data, uint64_t offset);

// Flushes the file's data and metadata to the device.
absl::Status Fsync(int fd);

}  // namespace helio::io
