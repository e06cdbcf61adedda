// ACL for the one user damselfly has: "default", whose password is requirepass (none:
// nopass), allowed every command, key and channel. AUTH and HELLO AUTH accept only it.
//
//   ACL WHOAMI, USERS, LIST, GETUSER   that user, as Redis 7.0 describes it (passwords as
//                                      SHA-256 hex)
//   ACL CAT [category]                 the categories, or the commands in one
//   ACL DRYRUN default command ...     OK once the command and its arity check out
//   ACL LOG [count | RESET]            failed AUTH / HELLO AUTH attempts, grouped as Redis
//                                      groups them (same user and command within 60 s);
//                                      the newest kAclLogMaxLen (Redis's acllog-max-len
//                                      default)
//   ACL GENPASS [bits]                 random hex from OpenSSL's generator
//   ACL DELUSER                        0 for other names; the default user stays
//   ACL SETUSER, LOAD, SAVE            refused: no other users, no ACL file
//
// Thread-safety: the log is shared by all threads behind a mutex (only failed
// authentications and ACL LOG touch it, never the data path).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "src/facade/command_registry.h"

namespace damselfly {

inline constexpr size_t kAclLogMaxLen = 128;

// Records a failed authentication: `command` as the client typed it (AUTH, HELLO),
// `user` the name it gave, `client_info` its CLIENT INFO line. Any thread.
void LogAuthFailure(std::string_view command, std::string_view user, std::string client_info);

class AclFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
