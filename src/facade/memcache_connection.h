// MemcacheConnection: serves one client speaking the memcached text protocol (classic
// and meta commands) on --memcached_port. Parses every complete request that arrived,
// hands the batch to the service, and leaves the replies for ClientConnection to send
// with one send.
//
// Runs in its own fiber on one proactor thread (see helio::net::Connection).
#pragma once

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "src/facade/client_connection.h"
#include "src/facade/memcache_parser.h"

namespace damselfly::facade {

class MemcacheConnection;

// What memcache command handlers read and write: the connection's reply text.
// Owned by its connection; a handler running on a shard thread may append replies while
// the connection fiber waits for that hop.
class MemcacheContext {
 public:
  explicit MemcacheContext(MemcacheConnection* owner) : owner_(owner) {}

  MemcacheConnection* owner() const { return owner_; }
  std::string& out() { return out_; }

  // Connection fiber only: sends the replies written so far; false when the socket failed.
  bool Flush();

  bool close_after_reply = false;  // quit

 private:
  MemcacheConnection* const owner_;
  std::string out_;
};

class MemcacheServiceInterface {
 public:
  virtual ~MemcacheServiceInterface() = default;

  // Connection fiber. Executes the pipelined commands in order, appending each reply to
  // cntx->out(), and stops early once cntx->close_after_reply is set. May flush.
  virtual void DispatchMemcache(absl::Span<const MemcacheCommand> commands,
                                MemcacheContext* cntx) = 0;

  // Connection fiber, once each: a connection started / is about to end.
  virtual void OnMemcacheOpen(MemcacheContext* cntx) = 0;
  virtual void OnMemcacheClose(MemcacheContext* cntx) = 0;
  // Connection fiber: a client tried to authenticate (memcached's auth_cmds, auth_errors).
  virtual void OnMemcacheAuth(bool success) = 0;
};

class MemcacheConnection final : public ClientConnection {
 public:
  // `password`: what the client must authenticate with before any command (see
  // memcache_auth.h); empty: none.
  MemcacheConnection(MemcacheServiceInterface* service, MemcacheParser::Limits limits,
                     std::string password = {});
  ~MemcacheConnection() override;

 private:
  ClientProtocol protocol() const override { return ClientProtocol::kMemcache; }
  bool ProcessInput() override;
  size_t BytesNeeded() const override { return parser_.bytes_needed(); }
  std::string_view PendingOutput() override { return context_.out(); }
  size_t OutputCapacity() override { return context_.out().capacity(); }
  void ClearOutput() override { context_.out().clear(); }
  void OnOpen() override { service_->OnMemcacheOpen(&context_); }
  void OnClose() override { service_->OnMemcacheClose(&context_); }
  void ReleaseIdleMemory() override;

  // Queues a parsed command; its keys and flags live in the parser until the next
  // Parse, so they are copied (as views) into the batch.
  void Enqueue(const MemcacheCommand& command);
  void DispatchBatch();
  // Answers the requests of a client that has not authenticated, until it does; false
  // when the connection must close.
  bool Authenticate();

  MemcacheServiceInterface* const service_;
  MemcacheContext context_;
  MemcacheParser parser_;
  std::vector<MemcacheCommand> batch_;
  std::vector<std::pair<size_t, size_t>> batch_offsets_;  // of its keys and flags
  std::vector<std::string_view> batch_keys_;
  std::vector<MetaFlag> batch_flags_;
  const std::string password_;
  bool authenticated_;
};

}  // namespace damselfly::facade
