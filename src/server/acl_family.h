// ACL: the commands over the server's users (acl_users.h), and the checks and log the
// dispatcher, EXEC and scripts share.
//
//   ACL SETUSER name rule...           create or change a user, all rules or none
//   ACL DELUSER name...                delete users, closing their connections
//   ACL GETUSER, LIST, USERS, WHOAMI   as Redis 7.0 describes users
//   ACL CAT [category]                 the categories, or the commands in one
//   ACL DRYRUN user command ...        whether the user may make the call
//   ACL LOG [count | RESET]            denied commands, keys, channels and failed
//                                      authentications, grouped as Redis groups them
//   ACL LOAD, SAVE                     the ACL file (aclfile)
//   ACL GENPASS [bits]                 random hex from OpenSSL's generator
//
// Thread-safety: the log is shared by all threads behind a mutex (only denials, failed
// authentications and ACL LOG touch it, never an allowed command).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"

namespace damselfly {

// acllog-max-len: how many entries ACL LOG keeps (Redis's default 128). Any thread.
size_t AclLogMaxLen();
void SetAclLogMaxLen(size_t entries);

// Where a call is checked, which decides its error text and its ACL LOG context.
enum class AclSite : uint8_t {
  kToplevel,  // run or queued by a client ("toplevel", or "multi" inside MULTI)
  kExec,      // a queued command, checked again when EXEC runs it
  kScript,    // redis.call and redis.pcall
};

// "" when the connection's user may make the call; otherwise logs the denial in ACL LOG
// and returns Redis's error for it (without the leading '-').
std::string AclRefusal(facade::ConnectionContext* cntx, const facade::CommandId& cid,
                       facade::CmdArgList args, AclSite site);

// Records a failed authentication: `command` as the client typed it (AUTH, HELLO),
// `user` the name it gave, `client_info` its CLIENT INFO line. Any thread.
void LogAuthFailure(std::string_view command, std::string_view user, bool in_multi,
                    std::string client_info);

// The ACL file's path (aclfile), "" when none.
std::string AclFile();
// At start-up, once commands are registered: the users of the configuration file or the
// ACL file. "" or the reason start-up must stop.
std::string LoadAclUsersAtStartup();

class AclFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
