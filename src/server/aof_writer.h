// The append-only file's disk writes (aof.h), on a thread of their own, so that proactor
// 0 (which merges the replication stream and hands its bytes here) never waits for a
// disk.
//
// Operations run in the order they were asked: appends to the open file, a switch to
// another file (OpenFile: the one before is fsynced and closed), a file replaced
// atomically (ReplaceFile: the manifest), a deletion. The policy (SetAofFsyncPolicy)
// says when the open file is fsynced: everysec once a second, no never (the kernel
// writes it), always as soon as what was appended is written; with always, `on_durable`
// then hears how many of the bytes appended so far are on disk (everything appended
// while one fsync runs shares the next: group commit).
//
// Backlog. Appends are never refused, but WaitForDrain lets a caller hear (on_drained)
// when no more than some bytes are still to write: aof.cc holds writers' replies
// meanwhile, so that a disk slower than the writes slows them down instead of growing
// the buffer (as redis-server's write() blocks its main thread).
//
// Failures. An operation that fails is retried a second later, with the ones after it
// waiting; `on_error` hears the errno, then 0 once an operation succeeds again (aof.cc
// refuses writes with MISCONF meanwhile, as Redis does). With always, a failed write or
// fsync ends the process, as Redis's does.
//
// Thread-safety: every method may be called from any thread. The callbacks run on the
// writer's thread. The lock guards the queue and is held for a move (once per merge of
// the stream), never during a disk call.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace damselfly {

enum class AofFsync : int { kNo, kEverysec, kAlways };
// appendfsync, for every writer. Any thread.
AofFsync AofFsyncPolicy();
void SetAofFsyncPolicy(AofFsync policy);
// aof-write-delay (a test knob, as Redis's key-load-delay): microseconds each append
// waits before its write, as on a slow disk.
int64_t AofWriteDelayUs();
void SetAofWriteDelayUs(int64_t us);

class AofWriter {
 public:
  struct Callbacks {
    std::function<void(uint64_t appended_on_disk)> on_durable;  // policy always only
    std::function<void(int error_number)> on_error;             // 0: recovered
    std::function<void()> on_drained;  // after WaitForDrain returned true
  };
  explicit AofWriter(Callbacks callbacks = {});
  // Does what was asked (but a failing operation), fsyncs, closes the file.
  ~AofWriter();
  AofWriter(const AofWriter&) = delete;
  AofWriter& operator=(const AofWriter&) = delete;

  // Appends to the file OpenFile opened last (dropped when none was).
  void Append(std::string_view bytes);
  // Later appends go to `path`: appended to (OpenFile), or emptied first (CreateFile: a
  // new incremental file, whose name a crashed attempt may have used before).
  void OpenFile(std::string path);
  void CreateFile(std::string path);
  // Replaces `path` with `text`: a temporary file beside it ("temp-" and its name),
  // fsynced, renamed over it, and the directory fsynced.
  void ReplaceFile(std::string path, std::string text);
  void Remove(std::string path);
  // Returns once everything asked so far was done, or tried and failed (last_write_ok),
  // and the open file fsynced. Blocks the calling thread.
  void Sync();

  // Whether more than `limit` bytes are still to write. If so, on_drained is called once
  // (on the writer's thread) when no more than `limit` are.
  bool WaitForDrain(uint64_t limit);

  bool last_write_ok() const { return last_write_ok_.load(std::memory_order_relaxed); }
  // Appended and not yet written (INFO's aof_buffer_length).
  uint64_t buffered_bytes() const { return buffered_bytes_.load(std::memory_order_relaxed); }
  // Bytes appended so far, and how many of them are written and fsynced (kept up to date
  // with the policy always only).
  uint64_t appended();
  uint64_t durable() const { return durable_.load(std::memory_order_acquire); }

 private:
  struct Op {
    enum Kind { kAppend, kOpen, kCreate, kReplace, kRemove } kind;
    std::string data;
    std::string path;
  };

  void Push(Op op);
  void Run();
  // One operation; false when it failed (it is retried from where it stopped).
  bool Do(Op* op);
  bool Failed(std::string_view what, const std::string& path);
  bool Succeeded();

  const Callbacks callbacks_;
  std::mutex mu_;
  std::condition_variable wake_, synced_;
  // Guarded by mu_.
  std::vector<Op> ops_;
  bool stopping_ = false;
  uint64_t sync_asked_ = 0, sync_done_ = 0;
  uint64_t appended_ = 0;
  // The writer's thread only.
  uint64_t sync_done_seen_ = 0;
  int fd_ = -1;
  std::string fd_path_;
  bool dirty_ = false;  // written since the last fsync
  // Any thread.
  std::atomic<uint64_t> buffered_bytes_{0};
  std::atomic<uint64_t> durable_{0};
  std::atomic<bool> last_write_ok_{true};
  std::atomic<bool> drain_wanted_{false};  // WaitForDrain's, until on_drained
  std::atomic<uint64_t> drain_limit_{0};
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace damselfly
