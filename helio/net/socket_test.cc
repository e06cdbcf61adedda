// FiberSocket tests, each over io_uring and over epoll: the client and the server are
// fibers on different proactor threads of one pool.
#include "helio/net/fiber_socket.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/fiber/operations.hpp>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "helio/io/proactor_pool.h"
#include "helio/io/uring_proactor.h"

namespace helio::net {
namespace {

using namespace std::chrono_literals;
using io::Proactor;
using io::ProactorKind;

uint8_t PatternByte(size_t i) { return uint8_t((i * 131) ^ (i >> 13)); }

// io_uring with a multishot receive per socket (Linux 6.0+), io_uring with one receive
// per call (the path of older kernels), and epoll.
enum class Variant { kUring, kUringSingleShot, kEpoll };

class SocketTest : public testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    io::UringProactor::SetRecvBuffersEnabled(GetParam() != Variant::kUringSingleShot);
    pool_ = std::make_unique<io::ProactorPool>(
        2, GetParam() == Variant::kEpoll ? ProactorKind::kEpoll : ProactorKind::kUring);
    pool_->Run();
    server_ = pool_->at(0);
    client_ = pool_->at(1);
    server_->Await([this] {
      auto address = SocketAddress::Resolve("127.0.0.1", 0);
      ASSERT_TRUE(address.ok());
      auto listener = ListenOn(*address, 128);
      ASSERT_TRUE(listener.ok()) << listener.status();
      listener_ = std::move(*listener);
      port_ = SocketAddress::OfSocket(listener_->fd())->port();
    });
  }

  void TearDown() override {
    server_->Await([this] { listener_.reset(); });
    pool_->Stop();
    io::UringProactor::SetRecvBuffersEnabled(true);
  }

  // Runs `server_side(accepted socket)` on the server thread and
  // `client_side(connected socket)` on the client thread, concurrently; waits for both.
  template <typename ServerFn, typename ClientFn>
  void RunPair(ServerFn server_side, ClientFn client_side) {
    fibers::BlockingCounter done(2);
    server_->LaunchFiber([&] {
      Result<int> fd = listener_->AcceptFd();
      EXPECT_TRUE(fd.ok()) << fd.error().message();
      if (fd.ok()) {
        std::unique_ptr<FiberSocket> sock = CreateSocket(server_, *fd);
        server_side(sock.get());
      }
      done.Dec();
    });
    client_->LaunchFiber([&] {
      auto sock = ConnectTcp(*SocketAddress::Resolve("127.0.0.1", port_));
      EXPECT_TRUE(sock.ok()) << sock.error().message();
      if (sock.ok()) client_side(sock->get());
      done.Dec();
    });
    done.Wait();
  }

  std::unique_ptr<io::ProactorPool> pool_;
  Proactor* server_ = nullptr;
  Proactor* client_ = nullptr;
  std::unique_ptr<FiberSocket> listener_;
  uint16_t port_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Kinds, SocketTest,
                         testing::Values(Variant::kUring, Variant::kUringSingleShot,
                                         Variant::kEpoll),
                         [](const auto& info) -> std::string {
                           switch (info.param) {
                             case Variant::kUring: return "io_uring";
                             case Variant::kUringSingleShot: return "io_uring_single_shot";
                             case Variant::kEpoll: return "epoll";
                           }
                           return "";
                         });

TEST_P(SocketTest, EchoRoundTrip) {
  RunPair(
      [](FiberSocket* sock) {
        uint8_t buf[64];
        while (true) {
          Result<size_t> n = sock->Recv(absl::MakeSpan(buf));
          ASSERT_TRUE(n.ok());
          if (*n == 0) return;
          ASSERT_FALSE(sock->Send({buf, *n}));
        }
      },
      [](FiberSocket* sock) {
        for (std::string msg : {"hello", "binary\0data", "x"}) {
          ASSERT_FALSE(sock->Send({reinterpret_cast<const uint8_t*>(msg.data()), msg.size()}));
          std::string back(msg.size(), '?');
          ASSERT_FALSE(sock->RecvExact({reinterpret_cast<uint8_t*>(back.data()), back.size()}));
          EXPECT_EQ(back, msg);
        }
        ASSERT_FALSE(sock->Shutdown(SHUT_WR));
      });
}

// 64 MiB through a send buffer far smaller than each write: the kernel takes a part at a time, so Writev
// must resume mid-vector many times. The receiver checks every byte.
TEST_P(SocketTest, LargePayloadWithPartialWrites) {
  constexpr size_t kTotal = 64 << 20;
  std::vector<uint8_t> payload(kTotal);
  for (size_t i = 0; i < kTotal; ++i) payload[i] = PatternByte(i);
  size_t received = 0;
  size_t partial_writes = 0;
  RunPair(
      [&](FiberSocket* sock) {
        std::vector<uint8_t> buf(1 << 16);
        while (true) {
          Result<size_t> n = sock->Recv(absl::MakeSpan(buf));
          ASSERT_TRUE(n.ok()) << n.error().message();
          if (*n == 0) break;
          ASSERT_LE(received + *n, kTotal);
          ASSERT_EQ(memcmp(buf.data(), payload.data() + received, *n), 0)
              << "bytes differ in [" << received << ", " << received + *n << ")";
          received += *n;
        }
      },
      [&](FiberSocket* sock) {
        int sndbuf = 256 << 10;  // much smaller than a write, big enough to dodge delayed-ACK stalls
        setsockopt(sock->fd(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        // One raw WriteSome shows the kernel does split the write here.
        iovec first{payload.data(), 8 << 20};
        Result<size_t> n = sock->WriteSome(&first, 1);
        ASSERT_TRUE(n.ok());
        if (*n < first.iov_len) ++partial_writes;
        // The rest as three iovecs of uneven sizes.
        size_t sent = *n, left = kTotal - sent;
        iovec rest[3] = {{payload.data() + sent, left / 3},
                         {payload.data() + sent + left / 3, left / 3 + 7},
                         {payload.data() + sent + 2 * (left / 3) + 7, left - 2 * (left / 3) - 7}};
        ASSERT_FALSE(sock->Writev(rest, 3));
        ASSERT_FALSE(sock->Shutdown(SHUT_WR));
      });
  EXPECT_EQ(received, kTotal);
  EXPECT_EQ(partial_writes, 1u);
}

// The peer sends part of what we expect and closes: Recv returns the bytes, then 0;
// RecvExact reports the short read.
TEST_P(SocketTest, PeerClosesMidRead) {
  RunPair(
      [](FiberSocket* sock) {
        uint8_t buf[200];
        std::error_code ec = sock->RecvExact(absl::MakeSpan(buf));
        EXPECT_EQ(ec.value(), ECONNRESET);
        Result<size_t> n = sock->Recv(absl::MakeSpan(buf));
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(*n, 0u);
      },
      [](FiberSocket* sock) {
        uint8_t buf[100] = {};
        ASSERT_FALSE(sock->Send(absl::MakeSpan(buf)));
        sock->Close();
      });
}

// The peer reads a little and closes while we stream: the write fails with EPIPE or
// ECONNRESET (no SIGPIPE), within bounded time.
TEST_P(SocketTest, PeerClosesMidWrite) {
  RunPair(
      [](FiberSocket* sock) {
        std::vector<uint8_t> chunk(1 << 20, 'x');
        std::error_code ec;
        auto start = std::chrono::steady_clock::now();
        while (!ec && std::chrono::steady_clock::now() - start < 10s) {
          ec = sock->Send(absl::MakeSpan(chunk));
        }
        EXPECT_TRUE(ec.value() == EPIPE || ec.value() == ECONNRESET) << ec.message();
      },
      [](FiberSocket* sock) {
        uint8_t buf[1 << 16];
        ASSERT_FALSE(sock->RecvExact(absl::MakeSpan(buf)));
        // SO_LINGER 0 makes close send a reset, as a crashed client would.
        linger hard{1, 0};
        setsockopt(sock->fd(), SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
        sock->Close();
      });
}

// A fiber blocked in Recv on a silent peer is released by CancelIo from a task on its
// thread (how a server stops connections), and later I/O fails the same way.
TEST_P(SocketTest, CancelIoReleasesBlockedRecv) {
  fibers::Done client_may_close;
  RunPair(
      [&](FiberSocket* sock) {
        server_->LaunchFiber([this, sock] {
          boost::this_fiber::sleep_for(20ms);
          pool_->at(1)->Await([] {});  // a cross-thread hop, as a real stop request makes
          server_->Dispatch([sock] { sock->CancelIo(); });
        });
        uint8_t buf[16];
        auto start = std::chrono::steady_clock::now();
        Result<size_t> n = sock->Recv(absl::MakeSpan(buf));
        ASSERT_FALSE(n.ok());
        EXPECT_EQ(n.error().value(), ECANCELED);
        EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
        Result<size_t> again = sock->Recv(absl::MakeSpan(buf));
        EXPECT_EQ(again.error().value(), ECANCELED);
        EXPECT_EQ(sock->Send(absl::MakeSpan(buf)).value(), ECANCELED);
        client_may_close.Notify();
      },
      [&](FiberSocket* sock) { client_may_close.Wait(); });
}

// shutdown(2) from a task wakes a blocked Recv with end-of-stream.
TEST_P(SocketTest, ShutdownReleasesBlockedRecv) {
  fibers::Done client_may_close;
  RunPair(
      [&](FiberSocket* sock) {
        server_->LaunchFiber([this, sock] {
          boost::this_fiber::sleep_for(20ms);
          server_->Dispatch([sock] { ASSERT_FALSE(sock->Shutdown(SHUT_RDWR)); });
        });
        uint8_t buf[16];
        Result<size_t> n = sock->Recv(absl::MakeSpan(buf));
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(*n, 0u);
        client_may_close.Notify();
      },
      [&](FiberSocket* sock) { client_may_close.Wait(); });
}

TEST_P(SocketTest, ConnectToClosedPortIsRefused) {
  // A bound socket that never listens: connections to its port are refused.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  uint16_t port = SocketAddress::OfSocket(fd)->port();
  fibers::Done done;
  client_->LaunchFiber([&] {
    auto sock = ConnectTcp(*SocketAddress::Resolve("127.0.0.1", port));
    EXPECT_FALSE(sock.ok());
    EXPECT_EQ(sock.error().value(), ECONNREFUSED);
    done.Notify();
  });
  done.Wait();
  close(fd);
}

TEST(SocketAddressTest, ParsesAndPrints) {
  EXPECT_EQ(SocketAddress::Resolve("127.0.0.1", 6379)->ToString(), "127.0.0.1:6379");
  EXPECT_EQ(SocketAddress::Resolve("::1", 6379)->ToString(), "[::1]:6379");
  EXPECT_EQ(SocketAddress::Resolve("[::]", 1)->ToString(), "[::]:1");
  EXPECT_EQ(SocketAddress::Resolve("localhost", 7)->port(), 7);
  EXPECT_FALSE(SocketAddress::Resolve("no.such.host.invalid", 1).ok());
}

// InterruptRecv fails one Recv with ECANCELED, pending or next, and later I/O works;
// NotifyWhenReadable calls back (without a fiber) once bytes are there, at once if they
// already are, and on CancelIo, also one that came before it.
TEST_P(SocketTest, InterruptRecvAndNotifyWhenReadable) {
  RunPair(
      [](FiberSocket* sock) {
        uint8_t buf[16];
        sock->InterruptRecv();  // none pending: the next Recv fails
        Result<size_t> n = sock->Recv(absl::MakeSpan(buf));
        ASSERT_FALSE(n.ok());
        EXPECT_EQ(n.error().value(), ECANCELED);
        EXPECT_FALSE(sock->io_cancelled());

        // One pending: interrupted from another fiber while the peer stays silent.
        boost::fibers::fiber interrupter([sock] {
          boost::this_fiber::sleep_for(20ms);
          sock->InterruptRecv();
        });
        n = sock->Recv(absl::MakeSpan(buf));
        interrupter.join();
        ASSERT_FALSE(n.ok());
        EXPECT_EQ(n.error().value(), ECANCELED);
        ASSERT_FALSE(sock->Send({reinterpret_cast<const uint8_t*>("go"), 2}));

        // Readable later: the callback runs once the peer's bytes arrive.
        fibers::Done readable;
        sock->NotifyWhenReadable([&readable] { readable.Notify(); });
        readable.Wait();
        n = sock->Recv(absl::MakeSpan(buf));
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), *n), "ab");

        // Readable already (the peer's "cd" came before we armed the wait).
        boost::this_fiber::sleep_for(50ms);
        fibers::Done ready_now;
        sock->NotifyWhenReadable([&ready_now] { ready_now.Notify(); });
        ready_now.Wait();
        ASSERT_FALSE(sock->RecvExact({buf, 2}));

        // Cancelled while waiting, and cancelled before arming: both call back.
        fibers::Done cancelled;
        sock->NotifyWhenReadable([&cancelled] { cancelled.Notify(); });
        sock->CancelIo();
        cancelled.Wait();
        fibers::Done after_cancel;
        sock->NotifyWhenReadable([&after_cancel] { after_cancel.Notify(); });
        after_cancel.Wait();
        n = sock->Recv(absl::MakeSpan(buf));
        ASSERT_FALSE(n.ok());
        EXPECT_EQ(n.error().value(), ECANCELED);
      },
      [](FiberSocket* sock) {
        uint8_t go[2];
        ASSERT_FALSE(sock->RecvExact({go, 2}));
        boost::this_fiber::sleep_for(20ms);
        ASSERT_FALSE(sock->Send({reinterpret_cast<const uint8_t*>("ab"), 2}));
        boost::this_fiber::sleep_for(20ms);
        ASSERT_FALSE(sock->Send({reinterpret_cast<const uint8_t*>("cd"), 2}));
        uint8_t buf[1];
        Result<size_t> n = sock->Recv(absl::MakeSpan(buf));  // until the server closes
        EXPECT_TRUE(!n.ok() || *n == 0);
      });
}

// A receive armed by StartRecv before a reply is sent takes the peer's answer in its
// order of arrival with the thread's other sockets, however long the fiber is busy after
// sending: the peer answers on A and then writes to B while the server thread spins, and
// A's fiber must resume first (over io_uring, a receive armed only after the spin came
// second: B's armed receive had completed meanwhile).
TEST_P(SocketTest, StartedRecvKeepsArrivalOrderAcrossSockets) {
  auto connect_plain = [this] {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  };
  auto accept_one = [this] {
    int accepted = -1;
    fibers::Done done;
    server_->LaunchFiber([&] {
      Result<int> fd = listener_->AcceptFd();
      EXPECT_TRUE(fd.ok());
      if (fd.ok()) accepted = *fd;
      done.Notify();
    });
    done.Wait();
    return accepted;
  };
  const int client_a = connect_plain();
  const int fd_a = accept_one();
  const int client_b = connect_plain();
  const int fd_b = accept_one();
  ASSERT_GE(fd_a, 0);
  ASSERT_GE(fd_b, 0);

  std::atomic<bool> client_sent{false};
  std::string order;  // server thread only
  fibers::BlockingCounter done(2);
  std::unique_ptr<FiberSocket> sock_a, sock_b;
  server_->Await([&] {
    sock_a = CreateSocket(server_, fd_a);
    sock_b = CreateSocket(server_, fd_b);
  });
  server_->LaunchFiber([&] {  // B: waits with an armed receive all along
    uint8_t buf[8];
    Result<size_t> n = sock_b->Recv(absl::MakeSpan(buf));
    EXPECT_TRUE(n.ok() && *n == 1);
    order += 'B';
    done.Dec();
  });
  server_->LaunchFiber([&] {  // A: arms, replies, then keeps the thread busy
    uint8_t buf[8];
    sock_a->StartRecv(absl::MakeSpan(buf));
    EXPECT_FALSE(sock_a->Send({reinterpret_cast<const uint8_t*>("r"), 1}));
    // Long enough for the kernel to complete B's receive while this thread runs.
    auto until = std::chrono::steady_clock::now() + 50ms;
    while (!client_sent.load() || std::chrono::steady_clock::now() < until) {
    }
    Result<size_t> n = sock_a->FinishRecv();
    EXPECT_TRUE(n.ok() && *n == 1);
    order += 'A';
    done.Dec();
  });
  char reply;
  ASSERT_EQ(::recv(client_a, &reply, 1, MSG_WAITALL), 1);
  ASSERT_EQ(::send(client_a, "a", 1, 0), 1);
  ASSERT_EQ(::send(client_b, "b", 1, 0), 1);
  client_sent.store(true);
  done.Wait();
  server_->Await([&] {
    EXPECT_EQ(order, "AB");
    sock_a.reset();
    sock_b.reset();
  });
  ::close(client_a);
  ::close(client_b);
}

// An armed receive ends as a pending Recv does: InterruptRecv fails it once with
// ECANCELED and later receives work; bytes that came first are returned; after
// CancelIo it fails at once.
TEST_P(SocketTest, StartedRecvInterruptAndCancel) {
  RunPair(
      [](FiberSocket* sock) {
        uint8_t buf[16];
        sock->StartRecv(absl::MakeSpan(buf));
        sock->InterruptRecv();
        Result<size_t> n = sock->FinishRecv();
        ASSERT_FALSE(n.ok());
        EXPECT_EQ(n.error().value(), ECANCELED);
        ASSERT_FALSE(sock->Send({reinterpret_cast<const uint8_t*>("go"), 2}));
        sock->StartRecv(absl::MakeSpan(buf));
        n = sock->FinishRecv();
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), *n), "ab");
        sock->CancelIo();
        sock->StartRecv(absl::MakeSpan(buf));
        n = sock->FinishRecv();
        ASSERT_FALSE(n.ok());
        EXPECT_EQ(n.error().value(), ECANCELED);
      },
      [](FiberSocket* sock) {
        uint8_t go[2];
        ASSERT_FALSE(sock->RecvExact({go, 2}));
        ASSERT_FALSE(sock->Send({reinterpret_cast<const uint8_t*>("ab"), 2}));
        uint8_t buf[1];
        Result<size_t> n = sock->Recv(absl::MakeSpan(buf));  // until the server closes
        EXPECT_TRUE(!n.ok() || *n == 0);
      });
}

// A stream of small messages and big bursts, read through small and big buffers by a
// reader that now and then stops for a while: every byte arrives, in order. Over io_uring
// this crosses the multishot receive's inbox, its bound and its switches to plain
// receives for big reads (uring_multishot_recv.h).
TEST_P(SocketTest, MixedSizesKeepTheirOrder) {
  std::vector<size_t> pieces;
  for (int i = 0; i < 40; ++i) {
    pieces.push_back(i % 10 == 9 ? 300000 : 10 + i);
  }
  size_t total = 0;
  for (size_t piece : pieces) total += piece;
  size_t received = 0;
  RunPair(
      [&](FiberSocket* sock) {
        std::vector<uint8_t> buf(256 << 10);
        for (int round = 0;; ++round) {
          // Small buffers mostly, a big one every fifth read; a pause every seventh.
          size_t room = round % 5 == 4 ? buf.size() : 4096;
          if (round % 7 == 6) boost::this_fiber::sleep_for(5ms);
          sock->StartRecv({buf.data(), room});
          Result<size_t> n = sock->FinishRecv();
          ASSERT_TRUE(n.ok()) << n.error().message();
          if (*n == 0) break;
          for (size_t i = 0; i < *n; ++i) {
            ASSERT_EQ(buf[i], PatternByte(received + i)) << "at byte " << received + i;
          }
          received += *n;
        }
      },
      [&](FiberSocket* sock) {
        size_t sent = 0;
        for (size_t piece : pieces) {
          std::vector<uint8_t> bytes(piece);
          for (size_t i = 0; i < piece; ++i) bytes[i] = PatternByte(sent + i);
          ASSERT_FALSE(sock->Send(absl::MakeSpan(bytes)));
          sent += piece;
          if (piece < 100) boost::this_fiber::sleep_for(1ms);  // one message per arrival
        }
        ASSERT_FALSE(sock->Shutdown(SHUT_WR));
      });
  EXPECT_EQ(received, total);
}

// A reader that stops reading leaves the backlog in the kernel: a peer that keeps
// sending is held back by TCP's window, not absorbed by this process. The server reads
// once (which, over io_uring, arms a multishot receive), then nothing for 300 ms while
// the client sends without blocking; then it drains and counts.
TEST_P(SocketTest, StalledReaderHoldsBackThePeer) {
  std::atomic<size_t> accepted{0};
  fibers::Done sender_done;
  size_t drained = 0;
  RunPair(
      [&](FiberSocket* sock) {
        uint8_t first;
        ASSERT_FALSE(sock->RecvExact({&first, 1}));
        sender_done.Wait();
        std::vector<uint8_t> buf(1 << 16);
        while (drained < accepted.load()) {
          Result<size_t> n = sock->Recv(absl::MakeSpan(buf));
          ASSERT_TRUE(n.ok() && *n > 0);
          drained += *n;
        }
      },
      [&](FiberSocket* sock) {
        ASSERT_FALSE(sock->Send({reinterpret_cast<const uint8_t*>("x"), 1}));
        std::vector<uint8_t> chunk(1 << 16, 'y');
        auto until = std::chrono::steady_clock::now() + 300ms;
        while (std::chrono::steady_clock::now() < until) {
          ssize_t n = ::send(sock->fd(), chunk.data(), chunk.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
          if (n > 0) {
            accepted += size_t(n);
          } else {
            boost::this_fiber::sleep_for(5ms);
          }
        }
        sender_done.Notify();
      });
  // Loopback's socket buffers take a few MiB (tcp_wmem's 4 MiB at most on the sender);
  // without the bound the reader would have taken everything sent in 300 ms.
  EXPECT_LT(accepted.load(), size_t(16) << 20);
  EXPECT_EQ(drained, accepted.load());
}

// A socket closed by its owner while its receive is armed ends the connection: the peer
// reads end-of-stream (over io_uring the ring's registered file and the multishot
// receive must both let go of the socket).
TEST_P(SocketTest, CloseWithArmedReceiveEndsThePeer) {
  RunPair(
      [](FiberSocket* sock) {
        uint8_t buf[16];
        Result<size_t> n = sock->Recv(absl::MakeSpan(buf));
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(*n, 2u);
        sock->StartRecv(absl::MakeSpan(buf));  // armed, and abandoned
        sock->InterruptRecv();
        EXPECT_FALSE(sock->FinishRecv().ok());
        sock->Close();
      },
      [](FiberSocket* sock) {
        ASSERT_FALSE(sock->Send({reinterpret_cast<const uint8_t*>("hi"), 2}));
        uint8_t buf[1];
        auto start = std::chrono::steady_clock::now();
        Result<size_t> n = sock->Recv(absl::MakeSpan(buf));
        ASSERT_TRUE(n.ok()) << n.error().message();
        EXPECT_EQ(*n, 0u);
        EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
      });
}

}  // namespace
}  // namespace helio::net
