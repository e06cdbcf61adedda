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

namespace damselfly::facade {

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

  ConnectionContext(RespConnection* owner, uint64_t id) : owner_(owner), id_(id) {}

  uint64_t id() const { return id_; }
  RespConnection* owner() const { return owner_; }
  ReplyBuilder* reply_builder() { return &reply_builder_; }

  // Connection fiber only: sends the replies built so far; false when the socket failed.
  bool Flush();

  DbIndex db_index = 0;
  bool authenticated = false;
  bool close_after_reply = false;  // QUIT, protocol errors, CLIENT KILL of itself
  std::string name;                // CLIENT SETNAME
  const CommandId* last_command = nullptr;        // for CLIENT LIST's cmd=
  const SubcommandSpec* last_subcommand = nullptr;
  std::unique_ptr<TransactionState> transaction_state;  // null until MULTI or WATCH
  std::unique_ptr<MonitorState> monitor_state;          // non-null while it monitors

 private:
  RespConnection* const owner_;
  const uint64_t id_;
  ReplyBuilder reply_builder_;
};

}  // namespace damselfly::facade
