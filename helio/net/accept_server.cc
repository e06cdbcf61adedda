#include "helio/net/accept_server.h"

#include <glog/logging.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace helio::net {

AcceptServer::AcceptServer(io::ProactorPool* pool)
    : pool_(pool), live_by_proactor_(pool->size()) {}

AcceptServer::~AcceptServer() {
  Stop();
  for (auto& listener : listeners_) {
    if (!listener->socket && listener->fd >= 0) close(listener->fd);
  }
}

absl::StatusOr<uint16_t> AcceptServer::AddListener(const ListenOptions& options,
                                                   ConnectionFactory factory) {
  CHECK(!running_) << "AddListener after Run";
  absl::StatusOr<SocketAddress> address = SocketAddress::Resolve(options.bind_address, options.port);
  if (!address.ok()) return address.status();
  absl::StatusOr<int> fd = ListenTcp(*address, options.backlog);
  if (!fd.ok()) return fd.status();
  absl::StatusOr<SocketAddress> bound = SocketAddress::OfSocket(*fd);
  if (!bound.ok()) {
    close(*fd);
    return bound.status();
  }
  auto listener = std::make_unique<Listener>();
  listener->proactor = pool_->at(listeners_.size() % pool_->size());
  listener->fd = *fd;
  listener->factory = std::move(factory);
  listeners_.push_back(std::move(listener));
  VLOG(1) << "listening on " << bound->ToString();
  return bound->port();
}

void AcceptServer::EnableIdleSweep(std::chrono::milliseconds interval) {
  CHECK(!running_) << "EnableIdleSweep after Run";
  idle_sweep_interval_ = interval;
}

void AcceptServer::Run() {
  CHECK(!running_);
  running_ = true;
  if (idle_sweep_interval_.count() > 0) {
    for (unsigned i = 0; i < pool_->size(); ++i) {
      sweep_fibers_.Add();
      pool_->at(i)->LaunchFiber([this, i] {
        IdleSweepLoop(i);
        sweep_fibers_.Dec();
      });
    }
  }
  for (auto& listener : listeners_) {
    Listener* l = listener.get();
    accept_fibers_.Add();
    l->proactor->LaunchFiber([this, l] {
      l->socket = CreateSocket(l->proactor, l->fd);
      AcceptLoop(l);
      accept_fibers_.Dec();
    });
  }
}

void AcceptServer::AcceptLoop(Listener* listener) {
  while (!stopping_.load(std::memory_order_acquire)) {
    Result<int> fd = listener->socket->AcceptFd();
    if (!fd.ok()) {
      if (stopping_.load(std::memory_order_acquire)) break;
      // Out of fds or memory, or an aborted handshake: keep serving the others.
      LOG_EVERY_N(WARNING, 100) << "accept: " << fd.error().message();
      if (fd.error().value() == EMFILE || fd.error().value() == ENFILE) {
        boost::this_fiber::sleep_for(std::chrono::milliseconds(10));
      }
      continue;
    }
    live_connections_.Add();
    total_accepted_.fetch_add(1, std::memory_order_relaxed);
    int conn_fd = *fd;
    // Request/response protocols: a reply's last segment must not wait for the ACK of the
    // previous one (Nagle), which stalls pipelines behind the peer's delayed ACKs.
    int one = 1;
    setsockopt(conn_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    Connection* connection = listener->factory().release();
    pool_->NextProactor()->LaunchFiber([this, conn_fd, connection] {
      ServeConnection(conn_fd, connection);
    });
  }
}

void AcceptServer::ServeConnection(int fd, Connection* connection) {
  io::Proactor* proactor = io::Proactor::me();
  connection->socket_ = CreateSocket(proactor, fd);
  ConnectionList& live = live_by_proactor_[proactor->index()];
  live.push_back(*connection);
  // Stop() may have swept this proactor's list before we joined it.
  if (stopping_.load(std::memory_order_acquire)) {
    connection->socket_->Shutdown(SHUT_RDWR);
    connection->socket_->CancelIo();
  }
  RunConnection(connection);
}

void AcceptServer::RunConnection(Connection* connection) {
  if (connection->HandleRequests() == Connection::Next::kResumeWhenReadable) {
    // This fiber ends and frees its stack; the connection waits in its socket alone.
    connection->socket_->NotifyWhenReadable([this, connection] {
      fibers::Launch([this, connection] { RunConnection(connection); }).detach();
    });
    return;
  }
  delete connection;  // unlinks from the live list and closes the socket
  live_connections_.Dec();
}

void AcceptServer::IdleSweepLoop(unsigned proactor_index) {
  while (!stop_sweeps_.WaitFor(idle_sweep_interval_)) {
    for (Connection& connection : live_by_proactor_[proactor_index]) connection.OnIdleSweep();
  }
}

void AcceptServer::Stop() {
  if (!running_ || stopping_.exchange(true)) return;
  stop_sweeps_.Notify();
  sweep_fibers_.Wait();
  for (auto& listener : listeners_) {
    Listener* l = listener.get();
    l->proactor->Await([l] {
      if (l->socket) {
        l->socket->Shutdown(SHUT_RDWR);
        l->socket->CancelIo();
      }
    });
  }
  accept_fibers_.Wait();
  pool_->AwaitOnAll([this](unsigned index, io::Proactor*) {
    for (Connection& connection : live_by_proactor_[index]) {
      connection.socket_->Shutdown(SHUT_RDWR);
      connection.socket_->CancelIo();
    }
  });
  live_connections_.Wait();
  for (auto& listener : listeners_) {
    Listener* l = listener.get();
    l->proactor->Await([l] { l->socket.reset(); });
  }
  VLOG(1) << "accept server stopped";
}

}  // namespace helio::net
