// AcceptServer: listens on one or more TCP addresses and serves every accepted socket
// with a Connection in a fiber of some proactor.
//
// 1. AddListener() binds and listens at once, so a busy port fails at start-up.
// 2. Run() starts one accept fiber per listener (listeners spread over the proactors).
// 3. For each accepted fd the accept fiber asks the listener's factory for a Connection
//    (so the factory sees the server as it was when the connection was accepted, in
//    accept order; it must not touch its thread's state), then hands both to the next
//    proactor round-robin, which wraps the fd in a socket and runs HandleRequests() in a
//    new fiber. Live connections sit in a per-proactor list owned by that proactor's thread.
//    A connection that parks (see connection.h) stays in the list without a fiber until
//    its socket is readable, then runs HandleRequests() again in a new fiber.
// 4. Stop() closes the listeners, then shuts down and cancels the I/O of every live
//    connection on its own thread (which also wakes the parked ones), and waits until
//    every connection has closed.
//
// Thread-safety: AddListener, Run and Stop from one controlling thread or fiber (not a
// proactor task); num_connections() from anywhere.
#pragma once

#include <atomic>
#include <boost/intrusive/list.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "helio/fibers/sync.h"
#include "helio/io/proactor_pool.h"
#include "helio/net/connection.h"

namespace helio::net {

class AcceptServer {
 public:
  using ConnectionFactory = std::function<std::unique_ptr<Connection>()>;

  struct ListenOptions {
    std::string bind_address = "0.0.0.0";  // "::" for IPv6, a name resolves once
    uint16_t port = 0;                     // 0: an ephemeral port
    int backlog = 511;
  };

  explicit AcceptServer(io::ProactorPool* pool);
  ~AcceptServer();  // Stop()s
  AcceptServer(const AcceptServer&) = delete;
  AcceptServer& operator=(const AcceptServer&) = delete;

  // Binds and listens; returns the bound port. Call before Run().
  absl::StatusOr<uint16_t> AddListener(const ListenOptions& options, ConnectionFactory factory);

  // Every `interval`, each proactor calls Connection::OnIdleSweep on its live
  // connections, from a fiber of its own. Off unless called, before Run().
  void EnableIdleSweep(std::chrono::milliseconds interval);

  void Run();
  void Stop();

  // Connections being served now.
  int64_t num_connections() { return live_connections_.count(); }
  // Connections accepted since Run().
  uint64_t total_accepted() const { return total_accepted_.load(std::memory_order_relaxed); }

 private:
  struct Listener {
    io::Proactor* proactor = nullptr;
    int fd = -1;  // owned by `socket` once Run() wrapped it
    std::unique_ptr<FiberSocket> socket;
    ConnectionFactory factory;
  };
  using ConnectionList = boost::intrusive::list<
      Connection,
      boost::intrusive::member_hook<Connection, decltype(Connection::live_hook_),
                                    &Connection::live_hook_>,
      boost::intrusive::constant_time_size<false>>;

  void AcceptLoop(Listener* listener);
  void ServeConnection(int fd, Connection* connection);
  // Runs HandleRequests in the calling fiber; parks or destroys the connection after.
  void RunConnection(Connection* connection);
  void IdleSweepLoop(unsigned proactor_index);

  io::ProactorPool* pool_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<ConnectionList> live_by_proactor_;  // [i] touched only by proactor i
  std::atomic<bool> stopping_{false};
  bool running_ = false;
  fibers::BlockingCounter accept_fibers_;
  std::chrono::milliseconds idle_sweep_interval_{0};
  fibers::Done stop_sweeps_;
  fibers::BlockingCounter sweep_fibers_;
  fibers::BlockingCounter live_connections_;
  std::atomic<uint64_t> total_accepted_{0};
};

}  // namespace helio::net
