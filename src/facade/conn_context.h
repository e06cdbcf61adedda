// ConnectionContext: the per-connection state commands read and change (database,
// authentication, name, protocol) plus the reply builder they write to.
//
// Owned by its RespConnection; lives on the connection's thread. A command running on a
// shard thread may read it (and write replies) while the connection fiber waits for
// that hop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "src/facade/reply_builder.h"
#include "src/facade/resp_parser.h"

namespace damselfly::facade {

class AclUser;
class RespConnection;
struct CommandId;
struct SubcommandSpec;
using DbIndex = uint16_t;

class ConnectionContext {
 public:
  // Server-side state that only some connections need (MULTI/EXEC and WATCH, see
  // src/server/conn_tx_state.h); the facade only owns it.
  struct TransactionState {
    virtual ~TransactionState() = default;
  };
  // Server-side state of a connection in MONITOR mode (src/server/monitor.h).
  struct MonitorState {
    virtual ~MonitorState() = default;
  };
  // Server-side state of a connection subscribed to channels (src/server/pubsub_family.h).
  struct PubSubState {
    virtual ~PubSubState() = default;
  };
  // Server-side state of a client with CLIENT TRACKING on (src/server/tracking.h).
  struct TrackingState {
    virtual ~TrackingState() = default;
  };
  // Server-side state of a replica's connection (src/server/replication.h).
  struct ReplicaState {
    virtual ~ReplicaState() = default;
  };

  ConnectionContext(RespConnection* owner, uint64_t id) : owner_(owner), id_(id) {}

  uint64_t id() const { return id_; }
  RespConnection* owner() const { return owner_; }
  ReplyBuilder* reply_builder() { return &reply_builder_; }

  // Connection fiber only: sends the replies built so far; false when the socket failed.
  bool Flush();
  // A command about to wait (BLPOP...): sends the replies of the commands before it now,
  // as Redis does. Not under CLIENT REPLY OFF or SKIP, whose filter needs the bytes since
  // the command began to stay in the buffer (their earlier replies are dropped anyway,
  // but for one before a SKIP, which then leaves with the waiting command's).
  bool FlushBeforeWait() { return reply_filter_ != 0 || Flush(); }

  // CLIENT REPLY. Commands build their replies as usual; the dispatcher calls FinishReply
  // after each command (also a refused one) with the output size from before it, which
  // drops the reply when replies are off or skipped and moves a SKIP on to the next
  // command. While replies are on, that is one test per command.
  enum class ReplyMode { kOn, kOff, kSkip };
  void SetReplyMode(ReplyMode mode);
  // Whether the reply of the command running now is dropped (SKIP acts on one command).
  bool skipping_reply() const { return reply_filter_ & kSkipThis; }
  void FinishReply(size_t output_before) {
    if (reply_filter_ != 0) [[unlikely]] FilterReply(output_before);
  }
  // RESET: replies on again, except for a skipped RESET itself (as in Redis).
  void ResetReplyMode() { reply_filter_ &= kSkipThis; }

  DbIndex db_index = 0;
  bool authenticated = false;
  // The ACL user (acl_user.h) the connection is authenticated as (null until its first
  // command reads the default one), and the users' epoch it was read at:
  // server/acl_users.h keeps them current.
  std::shared_ptr<const AclUser> acl_user;
  uint64_t acl_epoch = 0;
  bool close_after_reply = false;  // QUIT, protocol errors, CLIENT KILL of itself
  std::string name;                // CLIENT SETNAME
  const CommandId* last_command = nullptr;        // for CLIENT LIST's cmd=
  const SubcommandSpec* last_subcommand = nullptr;
  std::unique_ptr<TransactionState> transaction_state;  // null until MULTI or WATCH
  std::unique_ptr<MonitorState> monitor_state;          // non-null while it monitors
  std::unique_ptr<PubSubState> pubsub_state;            // non-null while it subscribes
  std::unique_ptr<TrackingState> tracking_state;        // non-null while it tracks
  std::unique_ptr<ReplicaState> replica_state;          // after REPLCONF, SYNC or PSYNC
  // A replica's link to its master (src/server/replica.h): it runs what the master sends,
  // which a read-only replica or maxmemory does not refuse.
  bool master_link = false;
  // The start-up load of the AOF (src/server/aof.h): runs while the server is loading.
  bool aof_loading = false;
  // Named by another client's CLIENT TRACKING REDIRECT: keeps its push queue for life.
  bool redirect_target = false;
  // CLIENT NO-EVICT: kept and reported (CLIENT LIST flag e); nothing evicts clients yet.
  bool no_evict = false;
  // The arguments of the command running or held back now (CLIENT LIST argv-mem); they
  // point into the connection's buffers, so only valid during DispatchMany.
  CmdArgList current_args;

 private:
  enum : uint8_t { kOff = 1, kSkipThis = 2, kSkipNext = 4 };
  void FilterReply(size_t output_before);

  RespConnection* const owner_;
  const uint64_t id_;
  ReplyBuilder reply_builder_;
  uint8_t reply_filter_ = 0;  // kOff | kSkipThis | kSkipNext
};

}  // namespace damselfly::facade
