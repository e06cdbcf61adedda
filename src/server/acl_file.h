// Users written down: the ACL file (aclfile; ACL LOAD and SAVE) and the `user` lines of
// a configuration file, in Redis 7.0's formats and with its error texts.
//
//   user default on nopass ~* &* +@all
//   user alice on #2bb8... ~cache:* resetchannels -@all +@read
//
// Thread-safety: blocking file I/O, for start-up and admin commands; no shared state but
// the configured users, which only start-up touches.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/facade/acl_user.h"

namespace damselfly {

// The users of the ACL file `path`: the whole file or nothing. "" when every line is
// valid (a default user is added when the file has none), else Redis's list of the
// problems found, ending "WARNING: ACL errors detected, no change to the previously
// active ACL rules was performed".
std::string ReadAclFile(const std::string& path, const facade::AclRuleContext& context,
                        std::vector<facade::AclUser>* users);
// The same for the file's text; `path` names it in the errors.
std::string ParseAclFile(std::string_view text, std::string_view path,
                         const facade::AclRuleContext& context,
                         std::vector<facade::AclUser>* users);

// ACL SAVE: every user, a line each, replacing `path` atomically. 0 or the errno.
int WriteAclFile(const std::string& path, const std::vector<const facade::AclUser*>& users,
                 const facade::CommandRegistry& registry);

// A configuration file's `user name rule...` line (args without "user"): checked now,
// applied by ApplyConfiguredUsers. "" or Redis's reason for the config error
// ("Error in user declaration '<rule>': <reason>").
std::string AddConfiguredUser(const std::vector<std::string>& args,
                              const facade::AclRuleContext& context);
bool HasConfiguredUsers();
// The configured users over the default one (which a `user default` line resets first).
// "" or the reason start-up must stop.
std::string ApplyConfiguredUsers(const facade::AclRuleContext& context,
                                 std::vector<facade::AclUser>* users);

}  // namespace damselfly
