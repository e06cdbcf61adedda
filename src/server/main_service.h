// Service: the command pipeline behind every client connection.
//
// For each command of a pipelined batch, on the connection's fiber:
//  1. Validate: look the command up, check its arity, then authentication, replying with
//     Redis's error texts (in Redis's order) when one fails.
//  2. Route: a command without keys runs right here (connection and server commands).
//     A command whose keys all live on one shard runs on that shard's thread: inline
//     when the connection shares the thread, else after a hop (Proactor::Await) — at
//     once when no transaction holds its keys (the fast path), else queued behind those
//     transactions. Keys spread over several shards go to the command's cross-shard
//     handler, which runs here as a VLL transaction (transaction.h). Inside MULTI,
//     commands are queued instead (multi_exec.h).
//  3. Squash: consecutive commands bound for the same remote shard travel in one hop,
//     so a deep pipeline costs a few hops, not one per command.
// Replies are written straight into the connection's reply builder (on the shard thread
// during a hop, while the connection's fiber waits), and flushed when they pile up.
//
// Thread-safety: DispatchMany runs on connection fibers of every thread; the registry
// is read-only once serving starts.
#pragma once

#include <atomic>
#include <string>

#include "helio/fibers/sync.h"
#include "helio/io/proactor_pool.h"
#include "src/facade/command_registry.h"
#include "src/facade/service_interface.h"

namespace damselfly {

class Service final : public facade::ServiceInterface {
 public:
  explicit Service(helio::io::ProactorPool* pool);

  // Registers every command family. Call once before serving.
  void RegisterCommands();

  const facade::CommandRegistry& registry() const { return registry_; }
  // For rename-command, after RegisterCommands and before serving.
  facade::CommandRegistry* mutable_registry() { return &registry_; }
  helio::io::ProactorPool* pool() const { return pool_; }

  void DispatchMany(absl::Span<const facade::CmdArgList> commands,
                    facade::ConnectionContext* cntx) override;
  void OnConnectionOpen(facade::ConnectionContext* cntx) override;
  void OnConnectionClose(facade::ConnectionContext* cntx) override;

  // Thread-safe: asks main() to shut the server down (SHUTDOWN, signals).
  void RequestShutdown() { shutdown_requested_.Notify(); }
  // Blocks the calling thread until RequestShutdown().
  void WaitForShutdownRequest() { shutdown_requested_.Wait(); }

 private:
  // Where a validated command runs.
  struct Route {
    enum Kind { kHere, kShard, kCrossShard } kind = kHere;
    uint16_t shard = 0;
  };

  // Step 1; nullptr after replying with an error.
  const facade::CommandId* Validate(facade::CmdArgList args, facade::ConnectionContext* cntx);
  static Route RouteOf(const facade::CommandId* cid, facade::CmdArgList args);
  // DispatchMany's body. `durable` (the AOF holds replies, for a batch that may write):
  // replies flushed before the batch ends wait for the AOF first.
  void DispatchBatch(absl::Span<const facade::CmdArgList> commands,
                     facade::ConnectionContext* cntx, bool durable);
  // While the AOF holds replies (aof.h: appendfsync always, or a writer behind by more
  // than aof-buffer-limit): the batch's replies leave once the AOF caught up with what it
  // may have written.
  void DispatchDurably(absl::Span<const facade::CmdArgList> commands,
                       facade::ConnectionContext* cntx);
  // Runs commands [first, last) of `run` (all for `shard`) on the shard's thread;
  // returns how many ran: fewer when the reply buffer filled up, or when the next one's
  // keys are locked by a transaction (then *locked is set; see transaction.h).
  size_t RunOnShard(uint16_t shard, absl::Span<const facade::CmdArgList> run,
                    absl::Span<const facade::CommandId* const> cids,
                    facade::ConnectionContext* cntx, bool* locked);

  helio::io::ProactorPool* pool_;
  facade::CommandRegistry registry_;
  helio::fibers::Done shutdown_requested_;
};

}  // namespace damselfly
