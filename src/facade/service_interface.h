// ServiceInterface: what a protocol connection needs from the server behind it.
#pragma once

#include "absl/types/span.h"
#include "src/facade/conn_context.h"
#include "src/facade/resp_parser.h"

namespace damselfly::facade {

class ServiceInterface {
 public:
  virtual ~ServiceInterface() = default;

  // Connection fiber. Executes the pipelined commands in order, writing one reply each
  // into cntx's reply builder, and stops early once cntx->close_after_reply is set. It
  // may flush replies itself to bound the output buffer.
  virtual void DispatchMany(absl::Span<const CmdArgList> commands, ConnectionContext* cntx) = 0;

  // Connection fiber, once each: a connection started / is about to end.
  virtual void OnConnectionOpen(ConnectionContext* cntx) = 0;
  virtual void OnConnectionClose(ConnectionContext* cntx) = 0;
};

}  // namespace damselfly::facade
