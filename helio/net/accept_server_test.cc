// AcceptServer tests over io_uring and epoll. Clients are plain blocking sockets on
// ordinary threads, independent of the pool under test.
#include "helio/net/accept_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/fiber/operations.hpp>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

namespace helio::net {
namespace {

using namespace std::chrono_literals;
using io::ProactorKind;

// Echoes until the peer leaves; counts where and how often it ran. With park_on_sweep,
// it parks whenever the idle sweep finds it waiting for input.
class EchoConnection final : public Connection {
 public:
  struct Stats {
    std::atomic<int> started{0};
    std::atomic<int> finished{0};
    std::atomic<int> nodelay{0};  // connections whose socket had TCP_NODELAY set
    std::atomic<bool> park_on_sweep{false};
    std::atomic<int> parked{0};   // times a connection parked
    std::atomic<int> resumed{0};  // times a parked connection ran again
    std::vector<std::atomic<int>> per_thread;
    explicit Stats(unsigned threads) : per_thread(threads) {}
  };

  explicit EchoConnection(Stats* stats) : stats_(stats) {}

  void OnIdleSweep() override {
    if (stats_->park_on_sweep.load() && receiving_) socket()->InterruptRecv();
  }

  Next HandleRequests() override {
    if (std::exchange(opened_, true)) {
      stats_->resumed.fetch_add(1);
      return Serve();
    }
    stats_->started.fetch_add(1);
    stats_->per_thread[io::Proactor::me()->index()].fetch_add(1);
    int nodelay = 0;
    socklen_t len = sizeof(nodelay);
    if (getsockopt(socket()->fd(), IPPROTO_TCP, TCP_NODELAY, &nodelay, &len) == 0 && nodelay) {
      stats_->nodelay.fetch_add(1);
    }
    return Serve();
  }

 private:
  Next Serve() {
    uint8_t buf[4096];
    while (true) {
      receiving_ = true;
      Result<size_t> n = socket()->Recv(absl::MakeSpan(buf));
      receiving_ = false;
      if (!n.ok() && n.error().value() == ECANCELED && !socket()->io_cancelled()) {
        stats_->parked.fetch_add(1);
        return Next::kResumeWhenReadable;
      }
      if (!n.ok() || *n == 0) break;
      // "sleep" holds the handler busy outside I/O, as a slow command would.
      if (*n >= 5 && memcmp(buf, "sleep", 5) == 0) boost::this_fiber::sleep_for(300ms);
      if (socket()->Send({buf, *n})) break;
    }
    stats_->finished.fetch_add(1);
    return Next::kClose;
  }

  Stats* stats_;
  bool opened_ = false;
  bool receiving_ = false;
};

// A blocking client socket on loopback (IPv4 or IPv6).
int ConnectBlocking(const char* host, uint16_t port) {
  auto address = SocketAddress::Resolve(host, port);
  int fd = socket(address->family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect(fd, address->sockaddr_ptr(), address->length()) != 0) {
    close(fd);
    return -1;
  }
  timeval timeout{10, 0};  // a hung server fails the test instead of hanging it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return fd;
}

// Sends `msg` and reads it back; returns "" or what went wrong.
std::string EchoOnce(int fd, const std::string& msg) {
  ssize_t sent;
  do {
    sent = send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != ssize_t(msg.size())) {
    return std::string("send: ") + strerror(errno);
  }
  std::string back(msg.size(), '\0');
  size_t got = 0;
  while (got < back.size()) {
    ssize_t n = recv(fd, back.data() + got, back.size() - got, 0);
    // A timed recv is not restarted after an interruption (io_uring's task-work
    // notifications to this thread count as one): retry, as any client must.
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return "recv: connection closed";
    if (n < 0) return std::string("recv: ") + strerror(errno);
    got += n;
  }
  return back == msg ? "" : "echo differs: " + back;
}

// True when the server closed the connection: recv sees EOF or a reset in time.
bool SeesClose(int fd) {
  char buf[65536];
  while (true) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;  // timeout
  }
}

class AcceptServerTest : public testing::TestWithParam<ProactorKind> {
 protected:
  static constexpr unsigned kThreads = 3;

  void SetUp() override {
    pool_ = std::make_unique<io::ProactorPool>(kThreads, GetParam());
    pool_->Run();
    server_ = std::make_unique<AcceptServer>(pool_.get());
  }

  void TearDown() override {
    server_.reset();
    pool_->Stop();
  }

  uint16_t Listen(const std::string& address, uint16_t port = 0, int backlog = 511) {
    auto bound = server_->AddListener({.bind_address = address, .port = port, .backlog = backlog},
                                      [this] { return std::make_unique<EchoConnection>(&stats_); });
    EXPECT_TRUE(bound.ok()) << bound.status();
    return bound.ok() ? *bound : 0;
  }

  std::unique_ptr<io::ProactorPool> pool_;
  std::unique_ptr<AcceptServer> server_;
  EchoConnection::Stats stats_{kThreads};
};

INSTANTIATE_TEST_SUITE_P(Kinds, AcceptServerTest,
                         testing::Values(ProactorKind::kUring, ProactorKind::kEpoll),
                         [](const auto& info) { return io::ProactorKindName(info.param); });

// 1,000 clients connect at once (each from its own attempt, before any is served), all
// are served, spread round-robin over the threads, and all are released.
TEST_P(AcceptServerTest, ThousandConnectionsAtOnce) {
  constexpr int kClients = 1000;
  uint16_t port = Listen("127.0.0.1", 0, 2048);
  server_->Run();

  std::vector<int> fds(kClients, -1);
  std::vector<std::thread> connectors;
  for (int t = 0; t < 4; ++t) {
    connectors.emplace_back([&, t] {
      for (int i = t; i < kClients; i += 4) fds[i] = ConnectBlocking("127.0.0.1", port);
    });
  }
  for (auto& t : connectors) t.join();
  for (int i = 0; i < kClients; ++i) {
    ASSERT_GE(fds[i], 0) << "client " << i;
    ASSERT_EQ(EchoOnce(fds[i], "hello " + std::to_string(i)), "") << "client " << i;
  }
  EXPECT_EQ(server_->num_connections(), kClients);
  EXPECT_EQ(server_->total_accepted(), uint64_t(kClients));
  for (unsigned i = 0; i < kThreads; ++i) {
    int served = stats_.per_thread[i].load();
    EXPECT_NEAR(served, kClients / kThreads, 2) << "thread " << i;
  }
  for (int fd : fds) close(fd);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (server_->num_connections() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(server_->num_connections(), 0);
  EXPECT_EQ(stats_.finished.load(), kClients);
}

// Stop() with idle connections, connections streaming data, and one whose handler is
// busy outside I/O: it returns promptly, every handler has returned, and every client
// sees its connection closed.
TEST_P(AcceptServerTest, GracefulStopWithIdleAndBusyConnections) {
  uint16_t port = Listen("127.0.0.1");
  server_->Run();

  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(ConnectBlocking("127.0.0.1", port));
    ASSERT_EQ(EchoOnce(idle.back(), "hi"), "");
  }

  std::atomic<bool> streaming{true};
  std::vector<std::thread> streamers;
  std::atomic<int> streamers_saw_close{0};
  for (int i = 0; i < 4; ++i) {
    streamers.emplace_back([&] {
      int fd = ConnectBlocking("127.0.0.1", port);
      std::string chunk(16384, 's');
      char sink[65536];
      while (streaming.load()) {
        ssize_t n = send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        n = recv(fd, sink, sizeof(sink), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
      }
      if (SeesClose(fd)) streamers_saw_close.fetch_add(1);
      close(fd);
    });
  }

  int sleeper = ConnectBlocking("127.0.0.1", port);
  ASSERT_EQ(send(sleeper, "sleep", 5, MSG_NOSIGNAL), 5);

  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (stats_.started.load() < 25 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(stats_.started.load(), 25);
  std::this_thread::sleep_for(20ms);  // streamers in full flow, sleeper mid-handler

  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, 2s);
  EXPECT_EQ(server_->num_connections(), 0);
  EXPECT_EQ(stats_.finished.load(), 25);

  for (int fd : idle) {
    EXPECT_TRUE(SeesClose(fd));
    close(fd);
  }
  EXPECT_TRUE(SeesClose(sleeper));
  close(sleeper);
  streaming.store(false);
  for (auto& t : streamers) t.join();
  EXPECT_EQ(streamers_saw_close.load(), 4);

  // The listener is gone too.
  EXPECT_EQ(ConnectBlocking("127.0.0.1", port), -1);
}

// Waits up to 5 s for `counter` to reach `value`.
bool WaitFor(const std::atomic<int>& counter, int value) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (counter.load() < value && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  return counter.load() >= value;
}

// Idle connections park (their fibers end) and resume in a new fiber when bytes arrive,
// as often as they go idle; a parked connection whose peer leaves is destroyed, and
// Stop() ends the parked ones.
TEST_P(AcceptServerTest, IdleConnectionsParkAndResume) {
  constexpr int kClients = 20;
  uint16_t port = Listen("127.0.0.1");
  stats_.park_on_sweep = true;
  server_->EnableIdleSweep(5ms);
  server_->Run();

  std::vector<int> fds;
  for (int i = 0; i < kClients; ++i) {
    fds.push_back(ConnectBlocking("127.0.0.1", port));
    ASSERT_EQ(EchoOnce(fds.back(), "hello"), "");
  }
  ASSERT_TRUE(WaitFor(stats_.parked, kClients));
  for (int round = 1; round <= 2; ++round) {
    for (int i = 0; i < kClients; ++i) {
      ASSERT_EQ(EchoOnce(fds[i], "again " + std::to_string(i)), "") << "client " << i;
    }
    EXPECT_TRUE(WaitFor(stats_.resumed, round * kClients));
    EXPECT_TRUE(WaitFor(stats_.parked, (round + 1) * kClients));
  }
  EXPECT_EQ(stats_.started.load(), kClients);

  close(fds.back());  // leaves while parked
  fds.pop_back();
  ASSERT_TRUE(WaitFor(stats_.finished, 1));
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server_->num_connections() > kClients - 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(server_->num_connections(), kClients - 1);

  server_->Stop();
  EXPECT_EQ(server_->num_connections(), 0);
  EXPECT_EQ(stats_.finished.load(), kClients);
  for (int fd : fds) {
    EXPECT_TRUE(SeesClose(fd));
    close(fd);
  }
}

TEST_P(AcceptServerTest, ListensOnIpv4AndIpv6AtTheSamePort) {
  uint16_t port = Listen("127.0.0.1");
  EXPECT_EQ(Listen("::1", port), port);
  server_->Run();
  int v4 = ConnectBlocking("127.0.0.1", port);
  int v6 = ConnectBlocking("::1", port);
  ASSERT_GE(v4, 0);
  ASSERT_GE(v6, 0);
  EXPECT_EQ(EchoOnce(v4, "four"), "");
  EXPECT_EQ(EchoOnce(v6, "six"), "");
  // Replies must not wait behind Nagle for the peer's delayed ACK.
  EXPECT_EQ(stats_.nodelay.load(), 2);
  close(v4);
  close(v6);
}

TEST_P(AcceptServerTest, PortInUseIsAnError) {
  uint16_t port = Listen("127.0.0.1");
  auto again = server_->AddListener({.bind_address = "127.0.0.1", .port = port},
                                    [] { return std::unique_ptr<Connection>(); });
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("Address already in use"), std::string::npos)
      << again.status();
}

TEST_P(AcceptServerTest, StopWithoutConnectionsAndWithoutRun) {
  Listen("127.0.0.1");
  server_->Stop();  // never ran: nothing to do
  AcceptServer other(pool_.get());
  auto bound = other.AddListener({.bind_address = "127.0.0.1"},
                                 [this] { return std::make_unique<EchoConnection>(&stats_); });
  ASSERT_TRUE(bound.ok());
  other.Run();
  other.Stop();
  EXPECT_EQ(ConnectBlocking("127.0.0.1", *bound), -1);
}

}  // namespace
}  // namespace helio::net
