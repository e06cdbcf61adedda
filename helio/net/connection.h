// Connection: the protocol side of one accepted socket. AcceptServer creates one per
// accepted socket, runs HandleRequests() in a fiber of the socket's proactor, and
// destroys it (closing the socket) when that returns.
#pragma once

#include <boost/intrusive/list_hook.hpp>
#include <memory>

#include "helio/net/fiber_socket.h"

namespace helio::net {

class Connection {
 public:
  virtual ~Connection() = default;

  // Serves the peer until it leaves or the socket fails. Runs in the connection's own
  // fiber. Must return soon after the socket's I/O starts failing: that is how
  // AcceptServer::Stop() ends connections (shutdown + CancelIo).
  virtual void HandleRequests() = 0;

  FiberSocket* socket() const { return socket_.get(); }

 private:
  friend class AcceptServer;

  std::unique_ptr<FiberSocket> socket_;
  // Links the connection into its proactor's list of live connections.
  boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>>
      live_hook_;
};

}  // namespace helio::net
