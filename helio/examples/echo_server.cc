// A pipelined echo server on helio: every byte a client sends comes back. The echo
// benchmark (tools/echo-bench.sh) runs it on one thread over io_uring and over epoll.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <signal.h>

#include <memory>

#include "helio/base/init.h"
#include "helio/io/proactor_pool.h"
#include "helio/net/accept_server.h"

DEFINE_uint32(port, 6380, "TCP port to listen on");
DEFINE_string(bind, "127.0.0.1", "Address to listen on");
DEFINE_uint32(proactor_threads, 1, "Proactor threads (0: one per CPU)");
DEFINE_uint32(buffer_size, 16384, "Receive buffer per connection, bytes");

namespace {

class EchoConnection final : public helio::net::Connection {
 public:
  Next HandleRequests() override {
    auto buf = std::make_unique<uint8_t[]>(FLAGS_buffer_size);
    while (true) {
      auto n = socket()->Recv({buf.get(), FLAGS_buffer_size});
      if (!n.ok() || *n == 0) return Next::kClose;
      if (socket()->Send({buf.get(), *n})) return Next::kClose;
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  helio::MainInitGuard init(&argc, &argv);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // inherited by the proactor threads

  helio::io::ProactorPool pool(FLAGS_proactor_threads);
  pool.Run();
  helio::net::AcceptServer server(&pool);
  auto port = server.AddListener({.bind_address = FLAGS_bind, .port = uint16_t(FLAGS_port)},
                                 [] { return std::make_unique<EchoConnection>(); });
  CHECK(port.ok()) << port.status();
  server.Run();
  LOG(INFO) << "echo server on " << FLAGS_bind << ":" << *port << " with " << pool.size() << " "
            << helio::io::ProactorKindName(pool.kind()) << " thread(s)";

  int sig = 0;
  sigwait(&signals, &sig);
  server.Stop();
  pool.Stop();
  return 0;
}
