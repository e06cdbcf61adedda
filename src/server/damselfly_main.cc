// damselfly: the server binary. Starts the proactor pool, the shards and the listeners,
// then waits for SHUTDOWN, SIGTERM or SIGINT and stops in order: listeners and
// connections first, then the shards, then the threads.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <iostream>
#include <optional>
#include <thread>

#include "helio/base/strings.h"
#include "helio/base/init.h"
#include "helio/fibers/fiber.h"
#include "helio/fibers/sync.h"
#include "helio/io/proactor_pool.h"
#include "helio/net/accept_server.h"
#include "src/core/compact_object.h"
#include "src/core/obj_malloc.h"
#include "src/facade/memcache_connection.h"
#include "src/facade/resp_connection.h"
#include "src/server/acl_family.h"
#include "src/server/acl_users.h"
#include "src/server/aof.h"
#include "src/server/cgroup_limits.h"
#include "src/server/client_pause.h"
#include "src/server/connection_family.h"
#include "src/server/engine_shard_set.h"
#include "src/server/replica.h"
#include "src/server/replication.h"
#include "src/server/main_service.h"
#include "src/server/script_runner.h"
#include "src/server/memcache_service.h"
#include "src/server/metrics.h"
#include "src/server/open_files_limit.h"
#include "src/server/persistence_family.h"
#include "src/server/startup_config.h"

DEFINE_uint32(memcached_port, 0,
              "TCP port for memcached text-protocol clients (database 0); 0: no such port. "
              "While a password is set (requirepass), its clients must first authenticate "
              "as memcached -Y asks: a set whose data is 'default <password>'");
DEFINE_bool(memcached_noauth, false,
            "Clients of --memcached_port need no authentication even with --requirepass "
            "(for memcached clients that cannot authenticate)");
DECLARE_uint64(max_item_size);
// Defined in server_flags.cc: CONFIG GET and INFO report them too.
DECLARE_uint32(port);
DECLARE_string(bind);
DECLARE_uint32(dbnum);
DECLARE_int32(tcp_backlog);
DEFINE_uint32(proactor_threads, 0,
              "Proactor (I/O and shard) threads; 0: one per CPU the process may run on, "
              "capped by its cgroup's CPU limit (a container's --cpus) rounded up");
DEFINE_uint32(num_shards, 0, "Keyspace shards, at most one per thread; 0: one per thread");
DEFINE_uint32(hz, 10, "Active expiry cycles per second on each shard");
DEFINE_bool(primary_port_http_enabled, true,
            "Serve HTTP (/metrics, the status page) to clients of --port that speak it");
DEFINE_uint32(admin_port, 0, "A second port for RESP and HTTP, for operators; 0: none");
DEFINE_string(admin_bind, "", "Address of --admin_port (empty: every address, like --bind)");
DEFINE_bool(admin_nopass, false,
            "Commands and HTTP (/metrics, the status page) on --admin_port need no password "
            "even with --requirepass");
DEFINE_bool(metrics_nopass, false,
            "HTTP (/metrics, the status page) on --port and --admin_port needs no password even "
            "with --requirepass; otherwise it asks for HTTP Basic authentication with any user "
            "name and the password");
DEFINE_uint32(memory_release_ms, 1000,
              "Each thread hands the memory its allocator holds free back to the kernel this "
              "often, so that RSS falls back after bursts of connections or large replies "
              "(mimalloc does it only when a thread allocates again); 0: never");
DEFINE_string(replicaof, "",
              "\"host port\": follow that master (Redis's replicaof), once the snapshot in dir "
              "is loaded; REPLICAOF changes it at run time");
DEFINE_string(masterauth, "", "The password sent to the master (Redis's masterauth)");
DEFINE_bool(compress_values, true,
            "Keep strings of 512 B to 64 KiB LZF-compressed when that saves an allocation size "
            "class: less memory for text-like values, some CPU on every write and read of them");

namespace {

// Listens on `port` at each address of `bind` (or on 0.0.0.0 and ::); false when none
// could be bound, or when an address given explicitly could not. An address prefixed
// with '-' is optional, as in Redis 7 ("bind 127.0.0.1 -::1"): skipped when unavailable;
// "*" and "::*" are every IPv4 and IPv6 address.
bool AddListeners(helio::net::AcceptServer* server, std::string_view bind, uint16_t port,
                  const helio::net::AcceptServer::ConnectionFactory& factory) {
  std::vector<std::string_view> addresses = helio::SplitAny(bind, " ,");
  if (addresses.empty()) addresses = {"0.0.0.0", "-::"};
  int bound = 0;
  for (std::string_view address : addresses) {
    const bool optional = address.size() > 1 && address[0] == '-';
    if (optional) address.remove_prefix(1);
    if (address == "*") address = "0.0.0.0";  // Redis's names for every address
    if (address == "::*") address = "::";
    auto bound_port = server->AddListener(
        {.bind_address = std::string(address), .port = port, .backlog = FLAGS_tcp_backlog},
        factory);
    if (bound_port.ok()) {
      ++bound;
    } else if (optional) {
      LOG(WARNING) << "no listener on " << address << " port " << port << ": "
                   << bound_port.status().message();
    } else {
      LOG(ERROR) << bound_port.status().message();
      return false;
    }
  }
  return bound > 0;
}

// The RESP port (which also answers HTTP unless --primary_port_http_enabled=false), the
// admin port (RESP and HTTP) when --admin_port is set, and the memcached port when
// --memcached_port is set.
// --proactor_threads, or its default: see CpusWithinLimit. A container with --cpus=1 on
// a many-core host would otherwise run one busy thread per host CPU and be throttled for
// most of every scheduling period.
unsigned ProactorThreads() {
  if (FLAGS_proactor_threads != 0) return FLAGS_proactor_threads;
  const unsigned allowed = helio::io::AllowedCpus().size();
  const std::optional<double> limit = damselfly::CgroupCpuLimit();
  const unsigned threads = damselfly::CpusWithinLimit(allowed, limit);
  if (threads < allowed) {
    LOG(INFO) << "cgroup CPU limit " << *limit << ": " << threads << " proactor threads for "
              << allowed << " CPUs";
  }
  return threads;
}

// HTTP Basic authentication against the password in force (none set: every request):
// any user name goes, as only "default" exists and scrape configurations must name one.
bool HttpPasswordAccepted(const std::optional<damselfly::facade::HttpCredentials>& credentials) {
  std::string password = damselfly::RequirePass();
  return password.empty() || (credentials && credentials->password == password);
}

bool AddAllListeners(helio::net::AcceptServer* server, damselfly::Service* service,
                     damselfly::MemcacheService* memcache_service,
                     const damselfly::facade::HttpRouter* http,
                     const damselfly::facade::HttpRouter* admin_http) {
  using damselfly::facade::RespConnection;
  // The password can change at run time (CONFIG SET requirepass): each new connection
  // looks at the one in force.
  const damselfly::facade::HttpRouter* main_http = FLAGS_primary_port_http_enabled ? http : nullptr;
  if (!AddListeners(server, FLAGS_bind, FLAGS_port, [=] {
        bool requires_auth = damselfly::DefaultUserNeedsAuth();
        return std::make_unique<RespConnection>(service, requires_auth, main_http);
      })) {
    return false;
  }
  if (FLAGS_admin_port != 0) {
    if (!AddListeners(server, FLAGS_admin_bind, FLAGS_admin_port, [=] {
          bool requires_auth = !FLAGS_admin_nopass && damselfly::DefaultUserNeedsAuth();
          auto connection = std::make_unique<RespConnection>(service, requires_auth, admin_http);
          connection->set_maxclients_exempt(true);  // operators can always get in
          return connection;
        })) {
      return false;
    }
  }
  if (FLAGS_memcached_port == 0) return true;
  damselfly::facade::MemcacheParser::Limits limits{.max_item_size = FLAGS_max_item_size};
  return AddListeners(server, FLAGS_bind, FLAGS_memcached_port, [memcache_service, limits] {
    std::string password = FLAGS_memcached_noauth ? "" : damselfly::RequirePass();
    return std::make_unique<damselfly::facade::MemcacheConnection>(memcache_service, limits,
                                                                   std::move(password));
  });
}

// A fiber per proactor thread that calls core::ReleaseFreeMemory every
// --memory_release_ms, from Start until Stop.
class MemoryReleaser {
 public:
  explicit MemoryReleaser(helio::io::ProactorPool* pool) : pool_(pool), threads_(pool->size()) {}

  void Start() {
    if (FLAGS_memory_release_ms == 0) return;
    const auto interval = std::chrono::milliseconds(FLAGS_memory_release_ms);
    pool_->AwaitOnAll([&](unsigned i, helio::io::Proactor*) {
      PerThread& t = threads_[i];
      t.fiber = helio::fibers::Launch(
          [&t, interval] {
            while (!t.stop.WaitFor(interval)) damselfly::core::ReleaseFreeMemory();
          },
          helio::fibers::kSmallStackBytes);
    });
  }

  void Stop() {
    pool_->AwaitFiberOnAll([&](unsigned i, helio::io::Proactor*) {
      PerThread& t = threads_[i];
      if (!t.fiber.joinable()) return;
      t.stop.Notify();
      t.fiber.join();
    });
  }

 private:
  struct PerThread {
    helio::fibers::Done stop;
    boost::fibers::fiber fiber;
  };
  helio::io::ProactorPool* const pool_;
  std::vector<PerThread> threads_;
};

}  // namespace

int main(int argc, char** argv) {
  gflags::SetVersionString(helio::StrCat(damselfly::kDamselflyVersion, " (Redis ",
                                        damselfly::kRedisCompatVersion, " compatible)"));
  gflags::SetUsageMessage(
      "damselfly [/path/to/redis.conf] [--flag=value ...] [--redis-option value ...]: a Redis "
      "and Memcached compatible store");
  damselfly::StartupConfig startup = damselfly::StartupConfig::TakeArgs(&argc, &argv);
  helio::MainInitGuard init(&argc, &argv, "DAMSELFLY_");
  if (argc > 1) {
    std::cerr << "unexpected argument '" << argv[1] << "' (a configuration file comes first)\n";
    return 1;
  }
  if (!startup.Load() || !startup.Detach()) return 1;

  // Signals go to one thread that turns them into a shutdown request; every other thread
  // inherits the blocked mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::optional<std::pair<std::string, uint16_t>> master;  // --replicaof
  if (!FLAGS_replicaof.empty()) {
    std::vector<std::string_view> words = helio::SplitAny(FLAGS_replicaof, " ");
    uint32_t port = 0;
    if (words.size() != 2 || !helio::SimpleAtoi(words[1], &port) || port > 65535) {
      LOG(ERROR) << "--replicaof must be \"host port\", not '" << FLAGS_replicaof << "'";
      return 1;
    }
    master.emplace(std::string(words[0]), uint16_t(port));
  }
  damselfly::SetMasterAuth(FLAGS_masterauth);
  damselfly::core::CompactObj::SetCompression(FLAGS_compress_values);  // before any key exists
  helio::io::ProactorPool pool(ProactorThreads());
  if (!damselfly::FitMaxClientsAtStartup(pool.size())) return 1;
  pool.Run();
  unsigned num_shards = FLAGS_num_shards ? std::min(FLAGS_num_shards, pool.size()) : pool.size();
  damselfly::EngineShardSet shards(&pool);
  damselfly::shard_set = &shards;
  shards.Init(num_shards, FLAGS_dbnum, FLAGS_hz);

  damselfly::Service service(&pool);
  service.RegisterCommands();
  if (!startup.Apply(service.mutable_registry())) {
    shards.Shutdown();
    pool.Stop();
    return 1;
  }
  if (std::string error = damselfly::LoadAclUsersAtStartup(); !error.empty()) {
    LOG(ERROR) << error;
    shards.Shutdown();
    pool.Stop();
    return 1;
  }
  if (!damselfly::ConfigurePersistence()) {
    shards.Shutdown();
    pool.Stop();
    return 1;
  }
  damselfly::MemcacheService memcache_service(&pool);
  damselfly::facade::HttpRouter http_router;
  damselfly::RegisterHttpRoutes(&service, &http_router);
  damselfly::facade::HttpRouter admin_http_router = http_router;
  if (!FLAGS_metrics_nopass) http_router.set_authenticator(HttpPasswordAccepted);
  if (!FLAGS_metrics_nopass && !FLAGS_admin_nopass) {
    admin_http_router.set_authenticator(HttpPasswordAccepted);
  }
  helio::net::AcceptServer server(&pool);
  server.EnableIdleSweep(damselfly::facade::ClientConnection::IdleSweepInterval());
  if (!AddAllListeners(&server, &service, &memcache_service, &http_router, &admin_http_router)) {
    shards.Shutdown();
    pool.Stop();
    return 1;
  }
  server.Run();
  MemoryReleaser memory_releaser(&pool);
  memory_releaser.Start();
  LOG(INFO) << "damselfly " << damselfly::kDamselflyVersion << " serving on port " << FLAGS_port
            << (FLAGS_memcached_port ? helio::StrCat(" (memcached: ", FLAGS_memcached_port, ")") : "")
            << " with " << pool.size() << " " << helio::io::ProactorKindName(pool.kind())
            << " threads and " << num_shards << " shards";

  std::atomic<bool> waking_waiter{false};
  std::thread signal_waiter([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    if (!waking_waiter.load()) {
      LOG(INFO) << "received " << strsignal(signal_number) << ", shutting down";
    }
    damselfly::AbortLoading();
    service.RequestShutdown();
  });
  // Clients connected meanwhile get -LOADING.
  damselfly::LoadAtStartup();
  if (master) damselfly::StartReplicaOf(master->first, master->second);
  damselfly::StartupConfig::NotifyReady();

  service.WaitForShutdownRequest();
  waking_waiter.store(true);
  pthread_kill(signal_waiter.native_handle(), SIGTERM);  // wakes it if SHUTDOWN came first
  signal_waiter.join();

  damselfly::ClientPause::Unpause();  // parked connections must see their sockets close
  damselfly::StopAllScripts();         // a busy script's connection must end too
  server.Stop();
  damselfly::StopReplicaOf();    // the master's commands stop before the shards do
  damselfly::StopAof();          // every write reached the AOF, fsynced
  damselfly::StopReplication();  // the replicas' connections are closed
  // SIGTERM with save rules set saves (SHUTDOWN did already, or was told not to).
  if (!damselfly::SaveBeforeShutdown("")) LOG(ERROR) << "the snapshot at shutdown failed";
  damselfly::StopPersistence();
  shards.Shutdown();
  damselfly::shard_set = nullptr;
  memory_releaser.Stop();
  pool.Stop();
  damselfly::StartupConfig::Cleanup();
  LOG(INFO) << "damselfly stopped";
  return 0;
}
