// ClientAdmission: Redis's maxclients, one limit for every client connection of the
// process, whatever its port (RESP, HTTP on the RESP ports, memcached) and thread.
//
// One atomic count of the connections being served is taken when a connection starts,
// before it reads anything, and given back when it ends. A connection that would make
// the count pass maxclients is refused: it gets its protocol's one-line error (Redis:
// "-ERR max number of clients reached", memcached: "ERROR Too many open connections") and
// is closed; the refusal is counted (INFO rejected_connections, memcached's stats).
// Connections on --admin_port are outside the limit (neither counted nor refused), so
// that an operator can always get in to raise it or kill clients, without taking a
// client's place. A refused connection never counts as opened
// (total_connections_received), as in Redis and memcached.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace damselfly::facade {

// Who counts a refusal, and what the refused client reads.
enum class ClientProtocol { kResp, kMemcache };

class ClientAdmission {
 public:
  // maxclients: --maxclients until SetMaxClients.
  static uint64_t MaxClients();
  static void SetMaxClients(uint64_t max_clients);

  // Takes a place for a new connection. False when MaxClients() connections are served
  // already: the connection must be refused (the refusal is counted). True otherwise;
  // the caller gives the place back with Release().
  static bool Admit(ClientProtocol protocol);
  static void Release();

  // Connections holding a place now.
  static uint64_t Connected();
  // Refused connections of a protocol since start-up (or ResetRejected).
  static uint64_t Rejected(ClientProtocol protocol);
  // CONFIG RESETSTAT (kResp), memcached's `stats reset` (kMemcache).
  static void ResetRejected(ClientProtocol protocol);

  // The line a refused client receives, "\r\n" included.
  static std::string_view RefusalReply(ClientProtocol protocol);

  // Redis's protected mode: while on (protected-mode yes and no password), RESP
  // connections (HTTP on the RESP ports included) from another address than the
  // loopback get ProtectedModeReply and are closed, before they read anything.
  static void SetLoopbackOnly(bool on);
  static bool LoopbackOnly();
  // Whether `fd`'s peer is on this machine's loopback (127.0.0.0/8, ::1, a mapped 127/8).
  static bool PeerIsLoopback(int fd);
  static std::string_view ProtectedModeReply();
};

}  // namespace damselfly::facade
