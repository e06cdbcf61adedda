// Connection: the protocol side of one accepted socket. AcceptServer creates one per
// accepted socket, runs HandleRequests() in a fiber of the socket's proactor, and
// destroys it (closing the socket) when that returns kClose.
//
// Parking: a connection that sits idle does not need its fiber, whose stack is most of
// what an idle connection costs (a page or more of it stays resident for good once a
// command ran deep). HandleRequests may return kResumeWhenReadable instead, once it has
// nothing buffered: its fiber ends and its stack is unmapped, AcceptServer waits for the
// socket with FiberSocket::NotifyWhenReadable, and calls HandleRequests again in a new
// fiber when bytes (or a close) arrive. AcceptServer's idle sweep (see
// AcceptServer::EnableIdleSweep) calls OnIdleSweep so a connection can decide when.
#pragma once

#include <boost/intrusive/list_hook.hpp>
#include <memory>

#include "helio/net/fiber_socket.h"

namespace helio::net {

class Connection {
 public:
  virtual ~Connection() = default;

  enum class Next { kClose, kResumeWhenReadable };

  // Serves the peer until it leaves or the socket fails (kClose), or until it parks
  // (kResumeWhenReadable, see above). Runs in the connection's own fiber. Must return
  // kClose soon after the socket's I/O starts failing: that is how AcceptServer::Stop()
  // ends connections (shutdown + CancelIo).
  virtual Next HandleRequests() = 0;

  // Called by AcceptServer's idle sweep on the connection's thread, outside the
  // connection's fiber, at the sweep's interval (parked connections included). Must not
  // suspend. A connection that wants to park interrupts its read here
  // (FiberSocket::InterruptRecv) and returns kResumeWhenReadable when Recv fails.
  virtual void OnIdleSweep() {}

  FiberSocket* socket() const { return socket_.get(); }

 private:
  friend class AcceptServer;

  std::unique_ptr<FiberSocket> socket_;
  // Links the connection into its proactor's list of live connections.
  boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>>
      live_hook_;
};

}  // namespace helio::net
