#include "src/server/acl_users.h"

#include <atomic>
#include <map>
#include <mutex>

#include "helio/base/strings.h"
#include "src/facade/resp_connection.h"
#include "src/server/client_pause.h"
#include "src/server/config_family.h"
#include "src/server/connection_family.h"
#include "src/server/engine_shard_set.h"
#include "src/server/pubsub_family.h"
#include "src/server/server_state.h"

namespace damselfly {

namespace {

using facade::AclUser;
using UserMap = std::map<std::string, AclUserPtr, std::less<>>;

struct AclState {
  std::mutex mu;
  const facade::CommandRegistry* registry = nullptr;
  bool pubsub_all_channels = false;  // acl-pubsub-default: Redis 7.0's is resetchannels
  // Sorted by name, as Redis lists users. Replaced whole, never changed in place.
  std::shared_ptr<const UserMap> users;
  std::atomic<bool> default_needs_auth{false};
  std::atomic<bool> default_nopass{true};
};

AclState& State() {
  static AclState* state = new AclState;  // never destroyed: connections read it until exit
  return *state;
}

// Publishes `users` (REQUIRES: State().mu held).
void Publish(AclState& state, UserMap users) {
  auto def = users.find("default");
  const AclUser& def_user = *def->second;
  state.default_needs_auth.store(!def_user.enabled() || !def_user.nopass(),
                                 std::memory_order_relaxed);
  state.default_nopass.store(def_user.nopass(), std::memory_order_relaxed);
  state.users = std::make_shared<const UserMap>(std::move(users));
  acl_internal::users_epoch.fetch_add(1, std::memory_order_release);
  UpdateLoopbackOnly();
}

// Closes, on every thread, the connections whose user `doomed` says so (the calling one
// after its reply).
void CloseConnections(const facade::ConnectionContext* caller,
                      const std::function<bool(const facade::ConnectionContext*)>& doomed) {
  shard_set->pool()->AwaitOnAll([&](unsigned, helio::io::Proactor*) {
    bool any = false;
    for (facade::RespConnection* conn : ServerState::tlocal()->connections) {
      facade::ConnectionContext* cntx = conn->context();
      if (!doomed(cntx)) continue;
      if (cntx == caller) {
        cntx->close_after_reply = true;
      } else {
        conn->Kill();
        any = true;
      }
    }
    if (any) ClientPause::WakeParked();  // a killed connection may be parked
  });
}

// requirepass as the default user's password: all its passwords replaced, nopass for "".
void ApplyRequirePass(std::string_view password, const facade::AclRuleContext& context,
                      AclUser* def) {
  std::string_view ignored;
  def->Apply("resetpass", context, &ignored);
  def->Apply(password.empty() ? std::string("nopass") : helio::StrCat(">", password), context,
             &ignored);
}

bool IsUserOf(const facade::ConnectionContext* cntx, std::string_view name) {
  return AclUserName(cntx) == name;
}

// Whether `after` may refuse a channel `before` allowed (Redis's test before it looks at
// the subscribers): not when `after` allows every channel, nor when it keeps every
// pattern of a `before` that did not allow them all.
bool LostChannels(const AclUser& before, const AclUser& after) {
  std::vector<std::string_view> kept;
  for (const facade::AclSelector& selector : after.selectors()) {
    if (selector.all_channels()) return false;
    for (const std::string& channel : selector.channels()) kept.push_back(channel);
  }
  for (const facade::AclSelector& selector : before.selectors()) {
    if (selector.all_channels()) return true;
    for (const std::string& channel : selector.channels()) {
      if (std::find(kept.begin(), kept.end(), channel) == kept.end()) return true;
    }
  }
  return false;
}

}  // namespace

void InitAclUsers(const facade::CommandRegistry* registry) {
  AclState& state = State();
  std::lock_guard lock(state.mu);
  state.registry = registry;
  const facade::AclRuleContext context{registry, state.pubsub_all_channels};
  AclUser def = AclUser::Default(context);
  ApplyRequirePass(RequirePass(), context, &def);
  UserMap users;
  users.emplace("default", std::make_shared<const AclUser>(std::move(def)));
  Publish(state, std::move(users));
}

const facade::CommandRegistry& AclRegistry() { return *State().registry; }

facade::AclRuleContext AclContext() {
  AclState& state = State();
  std::lock_guard lock(state.mu);
  return {state.registry, state.pubsub_all_channels};
}

AclUserPtr FindAclUser(std::string_view name) {
  AclState& state = State();
  std::lock_guard lock(state.mu);
  auto it = state.users->find(name);
  return it == state.users->end() ? nullptr : it->second;
}

std::vector<AclUserPtr> AllAclUsers() {
  AclState& state = State();
  std::lock_guard lock(state.mu);
  std::vector<AclUserPtr> users;
  for (const auto& [name, user] : *state.users) users.push_back(user);
  return users;
}

std::string SetAclUser(std::string_view name, const std::vector<std::string>& rules,
                       const facade::ConnectionContext* caller) {
  AclState& state = State();
  AclUserPtr before, after;
  {
    std::lock_guard lock(state.mu);
    const facade::AclRuleContext context{state.registry, state.pubsub_all_channels};
    auto it = state.users->find(name);
    AclUser user = it != state.users->end() ? *it->second : AclUser(std::string(name), context);
    for (const std::string& rule : rules) {
      std::string_view error;
      if (!user.Apply(rule, context, &error)) {
        return helio::StrCat("ERR Error in ACL SETUSER modifier '", rule, "': ", error);
      }
    }
    if (it != state.users->end()) before = it->second;
    after = std::make_shared<const AclUser>(std::move(user));
    UserMap users = *state.users;
    users[std::string(name)] = after;
    Publish(state, std::move(users));
  }
  if (before != nullptr && LostChannels(*before, *after)) {
    // Redis closes the user's subscribers whose subscriptions the new rules refuse.
    CloseConnections(caller, [&](const facade::ConnectionContext* cntx) {
      return IsUserOf(cntx, name) && IsSubscribed(cntx) &&
             !SubscriptionsPass(cntx, [&](std::string_view channel, bool is_pattern) {
               return after->AllowsChannel(channel, is_pattern);
             });
    });
  }
  return "";
}

size_t DeleteAclUsers(const std::vector<std::string_view>& names,
                      const facade::ConnectionContext* caller) {
  AclState& state = State();
  std::vector<std::string> deleted;
  {
    std::lock_guard lock(state.mu);
    UserMap users = *state.users;
    for (std::string_view name : names) {
      auto it = users.find(name);
      if (it == users.end()) continue;
      deleted.push_back(it->first);
      users.erase(it);
    }
    if (deleted.empty()) return 0;
    Publish(state, std::move(users));
  }
  CloseConnections(caller, [&](const facade::ConnectionContext* cntx) {
    return std::any_of(deleted.begin(), deleted.end(),
                       [&](const std::string& name) { return IsUserOf(cntx, name); });
  });
  return deleted.size();
}

void ReplaceAclUsers(std::vector<AclUser> replacement, const facade::ConnectionContext* caller) {
  AclState& state = State();
  UserMap users;
  for (AclUser& user : replacement) {
    std::string name = user.name();
    users.emplace(std::move(name), std::make_shared<const AclUser>(std::move(user)));
  }
  {
    std::lock_guard lock(state.mu);
    Publish(state, std::move(users));
  }
  // Redis frees every old user, closing their connections, but keeps the default one's.
  CloseConnections(caller, [](const facade::ConnectionContext* cntx) {
    return !IsUserOf(cntx, "default");
  });
}

void SetDefaultUserPassword(std::string_view password) {
  AclState& state = State();
  std::lock_guard lock(state.mu);
  if (state.users == nullptr) return;  // before InitAclUsers, which reads requirepass
  const facade::AclRuleContext context{state.registry, state.pubsub_all_channels};
  AclUser def = *state.users->at("default");
  ApplyRequirePass(password, context, &def);
  UserMap users = *state.users;
  users["default"] = std::make_shared<const AclUser>(std::move(def));
  Publish(state, std::move(users));
}

void SetAclPubsubDefault(bool all_channels) {
  AclState& state = State();
  std::lock_guard lock(state.mu);
  state.pubsub_all_channels = all_channels;
}

bool AclPubsubDefault() {
  AclState& state = State();
  std::lock_guard lock(state.mu);
  return state.pubsub_all_channels;
}

bool DefaultUserNopass() { return State().default_nopass.load(std::memory_order_relaxed); }

bool DefaultUserNeedsAuth() {
  return State().default_needs_auth.load(std::memory_order_relaxed);
}

namespace acl_internal {

std::atomic<uint64_t> users_epoch{1};

const facade::AclUser& RereadAclUser(facade::ConnectionContext* cntx, uint64_t epoch) {
  // What a master or the AOF sends runs whatever the users are, as in Redis (whose
  // clients for them have no user).
  if (cntx->master_link || cntx->aof_loading) {
    static const AclUserPtr superuser = [] {
      AclUser user = AclUser::Default({State().registry, true});
      user.Rename("(superuser)");
      return std::make_shared<const AclUser>(std::move(user));
    }();
    cntx->acl_user = superuser;
  } else if (AclUserPtr user = FindAclUser(AclUserName(cntx)); user != nullptr) {
    cntx->acl_user = std::move(user);
  } else {  // deleted since; DeleteAclUsers closes the connection too
    cntx->acl_user = FindAclUser("default");
    cntx->authenticated = false;
    cntx->close_after_reply = true;
  }
  cntx->acl_epoch = epoch;
  return *cntx->acl_user;
}

}  // namespace acl_internal

bool Authenticate(facade::ConnectionContext* cntx, std::string_view name,
                  std::string_view password) {
  const uint64_t epoch = acl_internal::users_epoch.load(std::memory_order_acquire);
  AclUserPtr user = FindAclUser(name);
  if (user == nullptr || !user->Authenticates(password)) return false;
  cntx->acl_user = std::move(user);
  cntx->acl_epoch = epoch;
  cntx->authenticated = true;
  return true;
}

void ResetAclUser(facade::ConnectionContext* cntx) {
  cntx->acl_user = nullptr;
  cntx->acl_epoch = 0;
  cntx->authenticated = !DefaultUserNeedsAuth();
}

std::string_view AclUserName(const facade::ConnectionContext* cntx) {
  return cntx->acl_user != nullptr ? std::string_view(cntx->acl_user->name()) : "default";
}

}  // namespace damselfly
