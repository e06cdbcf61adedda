#include "src/facade/client_admission.h"

#include <arpa/inet.h>
#include <gflags/gflags.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>

DEFINE_uint32(maxclients, 10000,
              "Most client connections served at once, over every port (Redis's maxclients); "
              "one more is refused with an error. Lowered at start-up, with a log line, when "
              "the open-file limit cannot hold it. Connections on --admin_port are outside "
              "the limit");

namespace damselfly::facade {

namespace {

std::atomic<int64_t> max_clients{-1};  // -1: --maxclients until SetMaxClients
std::atomic<uint64_t> connected{0};
std::atomic<bool> loopback_only{false};
std::atomic<uint64_t> rejected[2];

std::atomic<uint64_t>& RejectedOf(ClientProtocol protocol) {
  return rejected[protocol == ClientProtocol::kResp ? 0 : 1];
}

}  // namespace

uint64_t ClientAdmission::MaxClients() {
  int64_t value = max_clients.load(std::memory_order_relaxed);
  return value < 0 ? FLAGS_maxclients : uint64_t(value);
}

void ClientAdmission::SetMaxClients(uint64_t value) {
  max_clients.store(int64_t(value), std::memory_order_relaxed);
}

bool ClientAdmission::Admit(ClientProtocol protocol) {
  // Compare and swap rather than add and check: two clients racing for the last place
  // must not both be refused.
  const uint64_t limit = MaxClients();
  uint64_t count = connected.load(std::memory_order_relaxed);
  do {
    if (count >= limit) {
      RejectedOf(protocol).fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!connected.compare_exchange_weak(count, count + 1, std::memory_order_relaxed));
  return true;
}

void ClientAdmission::Release() { connected.fetch_sub(1, std::memory_order_relaxed); }

uint64_t ClientAdmission::Connected() { return connected.load(std::memory_order_relaxed); }

uint64_t ClientAdmission::Rejected(ClientProtocol protocol) {
  return RejectedOf(protocol).load(std::memory_order_relaxed);
}

void ClientAdmission::ResetRejected(ClientProtocol protocol) {
  RejectedOf(protocol).store(0, std::memory_order_relaxed);
}

std::string_view ClientAdmission::RefusalReply(ClientProtocol protocol) {
  return protocol == ClientProtocol::kResp ? "-ERR max number of clients reached\r\n"
                                           : "ERROR Too many open connections\r\n";
}

void ClientAdmission::SetLoopbackOnly(bool on) {
  loopback_only.store(on, std::memory_order_relaxed);
}

bool ClientAdmission::LoopbackOnly() { return loopback_only.load(std::memory_order_relaxed); }

bool ClientAdmission::PeerIsLoopback(int fd) {
  sockaddr_storage storage{};
  socklen_t len = sizeof(storage);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&storage), &len) != 0) return false;
  if (storage.ss_family == AF_UNIX) return true;
  if (storage.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&storage);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (storage.ss_family == AF_INET6) {
    const in6_addr& in6 = reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&in6) || (IN6_IS_ADDR_V4MAPPED(&in6) && in6.s6_addr[12] == 127);
  }
  return false;
}

std::string_view ClientAdmission::ProtectedModeReply() {
  return "-DENIED Redis is running in protected mode because protected mode is enabled and no "
         "password is set for the default user. In this mode connections are only accepted "
         "from the loopback interface. If you want to connect from external computers to Redis "
         "you may adopt one of the following solutions: 1) Just disable protected mode sending "
         "the command 'CONFIG SET protected-mode no' from the loopback interface by connecting "
         "to Redis from the same host the server is running, however MAKE SURE Redis is not "
         "publicly accessible from internet if you do so. Use CONFIG REWRITE to make this "
         "change permanent. 2) Alternatively you can just disable the protected mode by "
         "editing the Redis configuration file, and setting the protected mode option to 'no', "
         "and then restarting the server. 3) If you started the server manually just for "
         "testing, restart it with the '--protected-mode no' option. 4) Setup a an "
         "authentication password for the default user. NOTE: You only need to do one of the "
         "above things in order for the server to start accepting connections from the "
         "outside.\r\n";
}

}  // namespace damselfly::facade
