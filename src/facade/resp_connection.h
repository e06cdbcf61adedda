// RespConnection: serves one client speaking RESP: parses every complete request in what
// arrived, hands the batch to the service, and leaves the replies for ClientConnection
// to send with one send (see client_connection.h for the read loop and memory bounds).
//
// Runs in its own fiber on one proactor thread (see helio::net::Connection).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/facade/client_connection.h"
#include "src/facade/conn_context.h"
#include "src/facade/http_session.h"
#include "src/facade/resp_parser.h"
#include "src/facade/service_interface.h"

namespace damselfly::facade {

class RespConnection final : public ClientConnection {
 public:
  // `http`: the routes served when the client speaks HTTP instead (nullptr: RESP only).
  RespConnection(ServiceInterface* service, bool requires_auth, const HttpRouter* http = nullptr);
  ~RespConnection() override;

  ConnectionContext* context() { return &context_; }

 private:
  ClientProtocol protocol() const override { return ClientProtocol::kResp; }
  bool ProcessInput() override;
  size_t BytesNeeded() const override { return parser_.bytes_needed(); }
  size_t ParserBytes() const override { return parser_.bytes_held(); }
  std::string_view PendingOutput() override { return context_.reply_builder()->output(); }
  size_t OutputCapacity() override { return context_.reply_builder()->output_capacity(); }
  void ClearOutput() override { context_.reply_builder()->ClearOutput(); }
  void OnOpen() override { service_->OnConnectionOpen(&context_); }
  void OnClose() override { service_->OnConnectionClose(&context_); }
  void ReleaseIdleMemory() override;
  bool MayTimeOut() const override {
    return !context_.pubsub_state && !context_.monitor_state;
  }

  ServiceInterface* const service_;
  ConnectionContext context_;
  RespParser parser_;
  std::vector<std::string_view> batch_args_;     // the args of all parsed commands
  std::vector<std::pair<size_t, size_t>> batch_;  // [begin, end) into batch_args_
  std::vector<CmdArgList> batch_lists_;
  bool requires_auth_;
  const HttpRouter* http_;  // until the first bytes showed the protocol; then nullptr
};

}  // namespace damselfly::facade
