#include "src/facade/client_admission.h"

#include <gflags/gflags.h>

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

}  // namespace damselfly::facade
