// RespConnection: serves one client speaking RESP: reads, parses every complete request
// in what arrived, hands the batch to the service, and sends all the replies of the
// batch with one send.
//
// Memory bounds: the read buffer grows only as far as the request being parsed needs
// (limited by --max_client_query_buffer) and shrinks back when idle; replies are flushed
// whenever they pass a threshold, so a client that stops reading blocks its own fiber
// instead of growing the server's memory.
//
// Runs in its own fiber on one proactor thread (see helio::net::Connection).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "helio/net/connection.h"
#include "src/facade/conn_context.h"
#include "src/facade/resp_parser.h"
#include "src/facade/service_interface.h"

namespace damselfly::facade {

class RespConnection final : public helio::net::Connection {
 public:
  // Replies are flushed once this many bytes are pending, even mid-batch.
  static constexpr size_t kFlushThresholdBytes = 64 << 10;

  RespConnection(ServiceInterface* service, bool requires_auth);
  ~RespConnection() override;

  void HandleRequests() override;

  ConnectionContext* context() { return &context_; }

  // Connection fiber only: sends pending replies. False when the socket failed.
  bool Flush();

  // Any context on the connection's thread: ends the connection (CLIENT KILL, shutdown).
  void Kill();

  // For CLIENT LIST / INFO clients.
  const std::string& peer_address() const { return peer_address_; }
  const std::string& local_address() const { return local_address_; }
  int64_t created_at_ms() const { return created_at_ms_; }
  int64_t last_active_ms() const { return last_active_ms_; }
  size_t query_buffer_size() const { return end_ - start_; }
  size_t query_buffer_capacity() const { return capacity_; }

 private:
  // Parses and dispatches what the buffer holds; false when the connection must close.
  bool ProcessInput();
  void EnsureSpace(size_t min_free);
  void CompactBuffer();

  ServiceInterface* const service_;
  ConnectionContext context_;
  RespParser parser_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0, start_ = 0, end_ = 0;
  std::vector<std::string_view> batch_args_;     // the args of all parsed commands
  std::vector<std::pair<size_t, size_t>> batch_;  // [begin, end) into batch_args_
  std::vector<CmdArgList> batch_lists_;
  std::string peer_address_, local_address_;
  int64_t created_at_ms_ = 0, last_active_ms_ = 0;
  bool requires_auth_;
  bool killed_ = false;
};

}  // namespace damselfly::facade
