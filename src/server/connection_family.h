// Connection commands: PING, ECHO, QUIT, RESET, HELLO, AUTH, SELECT, CLIENT.
// They run on the connection's fiber; CLIENT LIST/KILL visit every proactor thread.
#pragma once

#include <string>
#include <string_view>

#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"

namespace damselfly {

// The server's identity as clients see it (HELLO, INFO).
inline constexpr char kRedisCompatVersion[] = "7.0.15";  // the Redis we behave like
inline constexpr char kDamselflyVersion[] = "0.1.0";

// requirepass (empty: none): --requirepass, or what CONFIG SET requirepass set since,
// which is also the default ACL user's password (acl_users.h) until ACL SETUSER changes
// that. Thread-safe. Connections opened before a change keep their authentication
// state, as in Redis.
std::string RequirePass();
void SetRequirePass(std::string_view password);

// The connection's CLIENT INFO line ("" for one without a socket). Its fiber only.
std::string ClientInfoLine(facade::ConnectionContext* cntx);

class ConnectionFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
