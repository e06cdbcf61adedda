// MemcacheAuth: memcached 1.6's text-protocol authentication (its -Y auth file), which
// the memcached port requires while a password is set (requirepass), unless
// --memcached_noauth.
//
// Until it has authenticated, a client may only send
//     set <any key> <flags> <exptime> <bytes>\r\n<user> <password>\r\n
// answered STORED (nothing is stored) when <user> is "default" and <password> the
// password in force, as Redis's AUTH default <password>; every other request line,
// meta commands and quit included, is answered CLIENT_ERROR unauthenticated. The texts,
// the tokenizing (words split at spaces only) and the limits (a line without a newline
// past 2048 bytes, or a data block and its "\r\n" past memcached's 16 KiB read buffer,
// closes the connection) are memcached 1.6.18's, observed on a live server.
//
// Not as memcached: memcached answers one request per read while unauthenticated (a
// pipeline of several gets one reply until more bytes arrive); every one is answered here.
//
// Stateless; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace damselfly::facade {

struct MemcacheAuthStep {
  enum class Kind {
    kNeedMore,       // nothing consumed: the request is incomplete
    kReply,          // *consumed bytes used; send `reply` and "\r\n", still unauthenticated
    kAuthenticated,  // *consumed bytes used; send `reply` (STORED): the client may go on
    kClose,          // close the connection without a reply
  };
  Kind kind = Kind::kNeedMore;
  size_t consumed = 0;
  std::string_view reply;  // static text
  bool attempt = false;    // an authentication attempt (memcached's auth_cmds)
};

// Handles the request at the front of `input` of a client that has not authenticated,
// against `password` (not empty).
MemcacheAuthStep ParseMemcacheAuth(std::string_view input, std::string_view password);

}  // namespace damselfly::facade
