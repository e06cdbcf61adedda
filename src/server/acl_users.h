// The server's ACL users (facade/acl_user.h) and each connection's.
//
// The users form one immutable snapshot, replaced whole by every change (ACL SETUSER,
// DELUSER, LOAD, CONFIG SET requirepass or acl-pubsub-default) under a mutex that only
// changes and lookups by name take. A change also moves an epoch counter. A connection
// holds a shared_ptr to its user and the epoch it was read at; before each command the
// dispatcher calls CurrentAclUser, which rereads the user when the epoch moved (one
// relaxed load otherwise), so a change applies to connections already logged in at their
// next command, as in Redis, and no lock is on the command path.
//
// Thread-safety: every function may run on any thread, but CurrentAclUser, Authenticate
// and ResetAclUser, which change the connection's context, run on its fiber.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/facade/acl_user.h"
#include "src/facade/conn_context.h"

namespace damselfly {

using AclUserPtr = std::shared_ptr<const facade::AclUser>;

// Creates the default user (its password: requirepass), and no other, for the commands of
// `registry` (Service::RegisterCommands, once the registry is complete).
void InitAclUsers(const facade::CommandRegistry* registry);
const facade::CommandRegistry& AclRegistry();
// What ACL rules read besides themselves (the registry, acl-pubsub-default).
facade::AclRuleContext AclContext();

// nullptr when there is no such user.
AclUserPtr FindAclUser(std::string_view name);
// Every user, by name (ACL USERS, LIST, SAVE).
std::vector<AclUserPtr> AllAclUsers();

// ACL SETUSER: `rules` applied to the user `name` (created when new), all or none. "" or
// Redis's error text. Subscribed connections of the user that lose a channel are closed,
// `caller` (if one of them) after its reply.
std::string SetAclUser(std::string_view name, const std::vector<std::string>& rules,
                       const facade::ConnectionContext* caller);
// ACL DELUSER (REQUIRES: not "default"): how many existed. Their connections are closed,
// `caller` (if one) after its reply.
size_t DeleteAclUsers(const std::vector<std::string_view>& names,
                      const facade::ConnectionContext* caller);
// Replaces every user (ACL LOAD, the users configured at start-up); `users` has the
// default one. As in Redis, connections of every user but the default one are closed,
// `caller` (if one) after its reply.
void ReplaceAclUsers(std::vector<facade::AclUser> users, const facade::ConnectionContext* caller);

// CONFIG SET requirepass: the default user's password ("": nopass), as Redis does.
void SetDefaultUserPassword(std::string_view password);
// acl-pubsub-default: whether new users and selectors start with every channel.
void SetAclPubsubDefault(bool all_channels);
bool AclPubsubDefault();
// Whether a new connection must authenticate: the default user is off or has passwords.
bool DefaultUserNeedsAuth();
// Whether the default user is nopass (protected-mode's condition, as Redis's).
bool DefaultUserNopass();

namespace acl_internal {
extern std::atomic<uint64_t> users_epoch;  // moves with every change of the users
const facade::AclUser& RereadAclUser(facade::ConnectionContext* cntx, uint64_t epoch);
}  // namespace acl_internal

// The connection's user, reread when users changed since. A connection whose user was
// deleted in between is closed after this command and gets the default user,
// unauthenticated. Inline: the dispatcher calls it for every command.
inline const facade::AclUser& CurrentAclUser(facade::ConnectionContext* cntx) {
  const uint64_t epoch = acl_internal::users_epoch.load(std::memory_order_acquire);
  if (cntx->acl_epoch == epoch) [[likely]] return *cntx->acl_user;
  return acl_internal::RereadAclUser(cntx, epoch);
}
// AUTH / HELLO AUTH: whether the user exists and the password logs it in; then the
// connection is authenticated as it.
bool Authenticate(facade::ConnectionContext* cntx, std::string_view user, std::string_view password);
// RESET: the default user again, authenticated only if it needs no password.
void ResetAclUser(facade::ConnectionContext* cntx);
// The name of the connection's user (CLIENT LIST's user=, ACL WHOAMI).
std::string_view AclUserName(const facade::ConnectionContext* cntx);

}  // namespace damselfly
