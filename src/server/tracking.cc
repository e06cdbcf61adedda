#include "src/server/tracking.h"

#include <atomic>
#include <boost/fiber/operations.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "helio/base/spinlock.h"
#include "helio/base/strings.h"
#include "helio/fibers/fiber.h"
#include "helio/io/proactor.h"
#include "src/facade/error.h"
#include "src/facade/resp_connection.h"
#include "src/server/arg_parsing.h"
#include "src/server/conn_tx_state.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"
#include "src/server/monitor.h"
#include "src/server/pubsub_family.h"
#include "src/server/server_state.h"
#include "src/server/transaction.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::PushQueue;
using facade::ReplyBuilder;

using IdSet = absl::flat_hash_set<uint64_t>;

// A tracking client's options, on its connection.
struct TrackingSession final : ConnectionContext::TrackingState {
  uint64_t redirect = 0;
  bool bcast = false, optin = false, optout = false, noloop = false;
  bool caching = false;  // CLIENT CACHING yes (OPTIN) / no (OPTOUT), for the next command
  std::vector<std::string> prefixes;
  // Invalidations caused by the client's own command, sent after its reply (point 5):
  // key lists; an empty one is a flush. Written on the thread running the command.
  std::vector<std::vector<std::string>> held;
};

TrackingSession* SessionOf(const ConnectionContext* cntx) {
  return static_cast<TrackingSession*>(cntx->tracking_state.get());
}

// The directory (point 4): every open connection, its push queue and, for tracking
// clients, what delivery needs.
struct ClientEntry {
  PushQueue* queue = nullptr;
  bool subscribed = false;
  bool tracking = false;
  bool bcast = false;
  bool noloop = false;
  bool redirect_broken = false;
  uint64_t redirect = 0;
};

struct Directory {
  helio::SpinLock lock;
  absl::flat_hash_map<uint64_t, ClientEntry> clients;
  // BCAST prefixes -> clients (ordered, so a key finds its prefixes by walking down).
  std::map<std::string, IdSet, std::less<>> prefixes;
};

Directory& Dir() {
  static Directory dir;
  return dir;
}

std::atomic<int64_t> tracking_clients{0};
std::atomic<int64_t> bcast_clients{0};
std::atomic<int64_t> total_keys{0};
std::atomic<int64_t> total_items{0};
std::atomic<int64_t> max_keys{1000000};

// The command running now on this thread without suspending (a hop, an inline run):
// NOLOOP and point 5 compare deliveries against it.
struct Writer {
  uint64_t id = 0;
  PushQueue* queue = nullptr;
  TrackingSession* session = nullptr;
};
thread_local Writer tl_writer;

void AppendKeys(std::string* out, const std::vector<std::string_view>& keys) {
  helio::StrAppend(out, "*", keys.size(), "\r\n");
  for (std::string_view key : keys) helio::StrAppend(out, "$", key.size(), "\r\n", key, "\r\n");
}

// Sends one invalidation of `keys` (nullptr: a flush) to client `id`. REQUIRES: dir.lock
// held, so no queue in the directory can go away meanwhile.
void DeliverLocked(Directory& dir, uint64_t id, const std::vector<std::string_view>* keys) {
  auto it = dir.clients.find(id);
  if (it == dir.clients.end() || !it->second.tracking) return;  // gone or stopped tracking
  ClientEntry& client = it->second;
  if (client.noloop && keys && id == tl_writer.id) return;
  PushQueue* dest = client.queue;
  bool subscribed = false;
  // A flush's null is in the tracking client's protocol, as Redis sends it.
  const bool client_resp3 = client.queue && client.queue->resp3();
  if (client.redirect != 0) {
    auto target = dir.clients.find(client.redirect);
    if (target == dir.clients.end()) {
      client.redirect_broken = true;  // said at each invalidation, as Redis does
      if (client_resp3) {
        client.queue->Push(
            helio::StrCat(">2\r\n$21\r\ntracking-redir-broken\r\n:", client.redirect, "\r\n"));
      }
      return;
    }
    dest = target->second.queue;
    subscribed = target->second.subscribed;
  }
  if (dest == nullptr) return;
  if (dest == tl_writer.queue && tl_writer.session != nullptr && dest->resp3()) {
    std::vector<std::string>& held = tl_writer.session->held.emplace_back();
    if (keys) held.assign(keys->begin(), keys->end());
    return;
  }
  std::string message;
  if (dest->resp3()) {
    message = ">2\r\n$10\r\ninvalidate\r\n";
  } else if (client.redirect != 0 && subscribed) {
    message = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
  } else {
    return;  // RESP2 has no pushes on the client's own connection
  }
  if (keys) {
    AppendKeys(&message, *keys);
  } else {
    message += client_resp3 ? "_\r\n" : "$-1\r\n";
  }
  dest->Push(message);
}

// A key of the default mode's table: not for a client that has turned to BCAST since
// it read the key (as Redis; its ids stay in the tables until the keys change).
void DeliverFromTable(uint64_t id, std::string_view key) {
  std::vector<std::string_view> keys{key};
  Directory& dir = Dir();
  std::lock_guard guard(dir.lock);
  if (auto it = dir.clients.find(id); it != dir.clients.end() && it->second.bcast) return;
  DeliverLocked(dir, id, &keys);
}

// One shard's part of tracking: the default mode's table and the BCAST keys waiting to
// be sent. Shard thread only.
class ShardTracking {
 public:
  explicit ShardTracking(DbSlice* slice) : slice_(slice) {
    slice_->AddChangeListener([this](const KeyChange& change) { OnChange(change); });
  }

  // The shard's instance, made on first use (its listener lives as long as the shard).
  static ShardTracking* Get() {
    thread_local std::unique_ptr<ShardTracking> instance;
    if (!instance) instance = std::make_unique<ShardTracking>(&EngineShard::tlocal()->db_slice());
    return instance.get();
  }

  void Remember(std::string_view key, uint64_t id) {
    auto [it, inserted] = keys_.try_emplace(key);
    if (inserted) total_keys.fetch_add(1, std::memory_order_relaxed);
    if (it->second.insert(id).second) total_items.fetch_add(1, std::memory_order_relaxed);
    if (inserted) EvictOverLimit();
  }

  // Evicts keys (sending their invalidations) while all tables hold more than
  // tracking-table-max-keys and this one holds any.
  void EvictOverLimit() {
    while (!keys_.empty() &&
           total_keys.load(std::memory_order_relaxed) > max_keys.load(std::memory_order_relaxed)) {
      std::string key = keys_.begin()->first;
      Invalidate(key, /*from_write=*/false);
    }
  }

  // Forgets every key (a flush sent its null to every client).
  void Clear() {
    for (const auto& [key, ids] : keys_)
      total_items.fetch_sub(ids.size(), std::memory_order_relaxed);
    total_keys.fetch_sub(keys_.size(), std::memory_order_relaxed);
    keys_.clear();
  }

 private:
  void OnChange(const KeyChange& change) {
    if (change.kind == KeyChangeKind::kFlushDb || change.kind == KeyChangeKind::kSwapDb ||
        change.kind == KeyChangeKind::kGroupState) {
      return;
    }
    // An expiry or eviction is the server's doing, not the command's that met it: NOLOOP
    // does not hold it back, as in Redis. An eviction makes room before the command (in
    // Redis it runs before the command starts), so its invalidation also goes before the
    // command's reply instead of being held until after it.
    Writer saved = tl_writer;
    if (change.kind == KeyChangeKind::kEvicted) {
      tl_writer = {};
    } else if (change.kind == KeyChangeKind::kExpired) {
      tl_writer.id = 0;
    }
    Invalidate(change.key, true);
    if (bcast_clients.load(std::memory_order_relaxed) > 0) GatherBroadcast(change.key);
    tl_writer = saved;
  }

  // Sends the invalidation of `key` to its readers and forgets it. An eviction (not a
  // write) has no writer, so NOLOOP does not hold it back.
  void Invalidate(std::string_view key, bool from_write) {
    auto it = keys_.find(key);
    if (it == keys_.end()) return;
    IdSet ids = std::move(it->second);
    keys_.erase(it);
    total_keys.fetch_sub(1, std::memory_order_relaxed);
    total_items.fetch_sub(ids.size(), std::memory_order_relaxed);
    Writer saved = tl_writer;
    if (!from_write) tl_writer = {};
    for (uint64_t id : ids) DeliverFromTable(id, key);
    tl_writer = saved;
  }

  // BCAST (point 3): notes `key` for every client with a prefix of it (NOLOOP: not for
  // the writer), to send once this thread is done with its current work. Clients have
  // few prefixes, so a scan of them all is cheap next to the message it may send.
  void GatherBroadcast(std::string_view key) {
    Directory& dir = Dir();
    std::lock_guard guard(dir.lock);
    for (const auto& [prefix, ids] : dir.prefixes) {
      if (!key.starts_with(prefix)) continue;
      for (uint64_t id : ids) {
        auto client = dir.clients.find(id);
        if (client == dir.clients.end()) continue;
        if (client->second.noloop && id == tl_writer.id) continue;
        // A command reports several events of one key in a row ("new", then "set").
        std::vector<std::string>& keys = pending_[{id, prefix}];
        if (keys.empty() || keys.back() != key) keys.emplace_back(key);
      }
    }
    if (!pending_.empty() && !flush_posted_) {
      flush_posted_ = true;
      helio::io::Proactor::me()->Dispatch([this] { FlushBroadcast(); });
    }
  }

  // A transaction still holding keys here (EXEC, a multi-shard command) may change more
  // keys in its next hops: its changes leave together once it let go, as Redis sends one
  // message per prefix for a whole EXEC.
  void FlushBroadcast() {
    if (!EngineShard::tlocal()->tx_queue().no_locks()) {
      helio::fibers::Launch([this] {
        while (!EngineShard::tlocal()->tx_queue().no_locks()) {
          boost::this_fiber::sleep_for(std::chrono::microseconds(100));
        }
        SendBroadcast();
      }).detach();
      return;
    }
    SendBroadcast();
  }

  void SendBroadcast() {
    flush_posted_ = false;
    auto pending = std::move(pending_);
    pending_.clear();
    Directory& dir = Dir();
    std::lock_guard guard(dir.lock);
    for (const auto& [client_prefix, keys] : pending) {
      std::vector<std::string_view> views(keys.begin(), keys.end());
      DeliverLocked(dir, client_prefix.first, &views);
    }
  }

  DbSlice* const slice_;
  absl::flat_hash_map<std::string, IdSet, helio::StringViewHash, helio::StringViewEq> keys_;
  std::map<std::pair<uint64_t, std::string>, std::vector<std::string>> pending_;
  bool flush_posted_ = false;
};

constexpr char kRedirectGoneErr[] = "ERR The client ID you want redirect to does not exist";

// Whether prefix a is a prefix of b or b of a.
bool Overlap(std::string_view a, std::string_view b) {
  return a.starts_with(b) || b.starts_with(a);
}

// Redis's checks of new BCAST prefixes against each other and the client's own.
bool CheckPrefixes(const std::vector<std::string>& added, const TrackingSession* session,
                   ReplyBuilder* rb) {
  for (size_t i = 0; i < added.size(); ++i) {
    if (session) {
      for (const std::string& mine : session->prefixes) {
        if (Overlap(added[i], mine)) {
          rb->SendError(helio::StrCat("ERR Prefix '", added[i],
                                      "' overlaps with an existing prefix '", mine,
                                      "'. Prefixes for a single client must not overlap."));
          return false;
        }
      }
    }
    for (size_t j = i + 1; j < added.size(); ++j) {
      if (Overlap(added[i], added[j])) {
        rb->SendError(helio::StrCat("ERR Prefix '", added[i],
                                    "' overlaps with another provided prefix '", added[j],
                                    "'. Prefixes for a single client must not overlap."));
        return false;
      }
    }
  }
  return true;
}

// Whether a client with `id` is connected (REDIRECT's check).
bool ClientExists(uint64_t id) {
  Directory& dir = Dir();
  std::lock_guard guard(dir.lock);
  return dir.clients.contains(id);
}

// Gives client `id` its push queue, on its own thread, if it has none: a redirect target
// receives invalidations as pushes (RESP3) or, once it subscribes to
// __redis__:invalidate, as messages (RESP2; HELLO may switch it later). It keeps the
// queue while it lives (SyncPushes).
void MakeRedirectTarget(uint64_t id, ConnectionContext* cntx) {
  auto start = [id](facade::RespConnection* conn, bool own_fiber) {
    ConnectionContext* target = conn->context();
    target->redirect_target = true;
    PushQueue* queue = own_fiber ? conn->StartPushes(facade::ClientClass::kNormal, 0)
                                 : conn->StartPushesFromTask(facade::ClientClass::kNormal);
    queue->set_resp3(target->reply_builder()->protocol() == facade::RespVersion::kResp3);
    Directory& dir = Dir();
    std::lock_guard guard(dir.lock);
    if (auto it = dir.clients.find(id); it != dir.clients.end()) it->second.queue = queue;
  };
  if (id == cntx->id()) return start(cntx->owner(), true);
  shard_set->pool()->AwaitOnAll([&](unsigned, helio::io::Proactor*) {
    for (facade::RespConnection* conn : ServerState::tlocal()->connections) {
      if (conn->context()->id() == id && !conn->context()->redirect_target) {
        start(conn, false);
        return;
      }
    }
  });
}

void RemovePrefixesLocked(Directory& dir, uint64_t id, const std::vector<std::string>& prefixes) {
  for (const std::string& prefix : prefixes) {
    auto it = dir.prefixes.find(prefix);
    if (it == dir.prefixes.end()) continue;
    it->second.erase(id);
    if (it->second.empty()) dir.prefixes.erase(it);
  }
}

}  // namespace

void DisableTracking(ConnectionContext* cntx) {
  TrackingSession* session = SessionOf(cntx);
  if (!session) return;
  {
    Directory& dir = Dir();
    std::lock_guard guard(dir.lock);
    RemovePrefixesLocked(dir, cntx->id(), session->prefixes);
    if (auto it = dir.clients.find(cntx->id()); it != dir.clients.end()) {
      it->second.tracking = false;
      it->second.redirect_broken = false;
    }
  }
  if (session->bcast) bcast_clients.fetch_sub(1, std::memory_order_relaxed);
  tracking_clients.fetch_sub(1, std::memory_order_relaxed);
  cntx->tracking_state.reset();
  SyncPushes(cntx);
}

void ClientTracking(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  bool on;
  if (ArgIs(args[2], "ON")) {
    on = true;
  } else if (ArgIs(args[2], "OFF")) {
    on = false;
  } else {
    return rb->SendError(facade::kSyntaxErr);
  }
  uint64_t redirect = 0;
  bool bcast = false, optin = false, optout = false, noloop = false;
  std::vector<std::string> prefixes;
  for (size_t i = 3; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (ArgIs(args[i], "REDIRECT") && more) {
      std::optional<int64_t> id = ParseInt64(args[++i]);
      if (!id) return rb->SendError(facade::kInvalidIntErr);
      if (!ClientExists(uint64_t(*id))) return rb->SendError(kRedirectGoneErr);
      redirect = uint64_t(*id);
    } else if (ArgIs(args[i], "BCAST")) {
      bcast = true;
    } else if (ArgIs(args[i], "OPTIN")) {
      optin = true;
    } else if (ArgIs(args[i], "OPTOUT")) {
      optout = true;
    } else if (ArgIs(args[i], "NOLOOP")) {
      noloop = true;
    } else if (ArgIs(args[i], "PREFIX") && more) {
      prefixes.emplace_back(args[++i]);
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  TrackingSession* session = SessionOf(cntx);
  if (!on) {
    DisableTracking(cntx);
    return rb->SendOk();
  }
  if (!bcast && !prefixes.empty()) {
    return rb->SendError("ERR PREFIX option requires BCAST mode to be enabled");
  }
  if (session && session->bcast != bcast) {
    return rb->SendError(
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
        "and then re-enabling it with a different mode.");
  }
  if (optin && optout) {
    return rb->SendError("ERR You can't specify both OPTIN mode and OPTOUT mode");
  }
  if (session && ((optin && session->optout) || (optout && session->optin))) {
    return rb->SendError(
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
        "and then re-enabling it with a different mode.");
  }
  if (bcast && (optin || optout)) {
    return rb->SendError("ERR OPTIN and OPTOUT are not compatible with BCAST");
  }
  if (bcast && prefixes.empty() && !session) prefixes.emplace_back();  // every key
  if (!CheckPrefixes(prefixes, session, rb)) return;

  if (!session) {
    auto fresh = std::make_unique<TrackingSession>();
    session = fresh.get();
    cntx->tracking_state = std::move(fresh);
    tracking_clients.fetch_add(1, std::memory_order_relaxed);
    if (bcast) {
      bcast_clients.fetch_add(1, std::memory_order_relaxed);
      // Every shard listens from now on: BCAST has no reads that would start it.
      shard_set->RunOnAll([](EngineShard*) { ShardTracking::Get(); });
    }
    PushQueue* queue = cntx->owner()->StartPushes(facade::ClientClass::kNormal, 0);
    queue->set_resp3(rb->protocol() == facade::RespVersion::kResp3);
  }
  if (redirect != 0) MakeRedirectTarget(redirect, cntx);
  session->redirect = redirect;
  session->bcast = bcast;
  session->optin = optin;
  session->optout = optout;
  session->noloop = noloop;
  session->caching = false;
  {
    Directory& dir = Dir();
    std::lock_guard guard(dir.lock);
    ClientEntry& entry = dir.clients[cntx->id()];
    entry.queue = cntx->owner()->push_queue();
    entry.tracking = true;
    entry.bcast = bcast;
    entry.noloop = noloop;
    entry.redirect = redirect;
    entry.redirect_broken = false;
    for (const std::string& prefix : prefixes) dir.prefixes[prefix].insert(cntx->id());
  }
  session->prefixes.insert(session->prefixes.end(), prefixes.begin(), prefixes.end());
  rb->SendOk();
}

void ClientCaching(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  TrackingSession* session = SessionOf(cntx);
  if (!session || !(session->optin || session->optout)) {
    return rb->SendError(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
        "or OPTOUT mode enabled");
  }
  if (ArgIs(args[2], "YES")) {
    if (!session->optin) {
      return rb->SendError(
          "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
    }
  } else if (ArgIs(args[2], "NO")) {
    if (!session->optout) {
      return rb->SendError(
          "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
    }
  } else {
    return rb->SendError(facade::kSyntaxErr);
  }
  session->caching = true;
  rb->SendOk();
}

int64_t TrackingRedirect(const ConnectionContext* cntx) {
  const TrackingSession* session = SessionOf(cntx);
  return session ? int64_t(session->redirect) : -1;
}

void ClientGetRedir(ConnectionContext* cntx) {
  cntx->reply_builder()->SendLong(TrackingRedirect(cntx));
}

namespace {
bool RedirectBroken(const ConnectionContext* cntx) {
  Directory& dir = Dir();
  std::lock_guard guard(dir.lock);
  auto it = dir.clients.find(cntx->id());
  return it != dir.clients.end() && it->second.redirect_broken;
}
}  // namespace

void ClientTrackingInfo(ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  const TrackingSession* session = SessionOf(cntx);
  std::vector<std::string_view> flags;
  if (!session) {
    flags.push_back("off");
  } else {
    flags.push_back("on");
    if (session->bcast) flags.push_back("bcast");
    if (session->optin) {
      flags.push_back("optin");
      if (session->caching) flags.push_back("caching-yes");
    }
    if (session->optout) {
      flags.push_back("optout");
      if (session->caching) flags.push_back("caching-no");
    }
    if (session->noloop) flags.push_back("noloop");
    if (session->redirect && RedirectBroken(cntx)) flags.push_back("broken_redirect");
  }
  rb->StartMap(3);
  rb->SendBulk("flags");
  rb->StartSet(flags.size());
  for (std::string_view flag : flags) rb->SendBulk(flag);
  rb->SendBulk("redirect");
  rb->SendLong(TrackingRedirect(cntx));
  rb->SendBulk("prefixes");
  size_t count = session ? session->prefixes.size() : 0;
  rb->StartArray(count);
  for (size_t i = 0; i < count; ++i) rb->SendBulk(session->prefixes[i]);
}

std::string TrackingClientFlags(const ConnectionContext* cntx) {
  const TrackingSession* session = SessionOf(cntx);
  if (!session) return "";
  std::string flags = "t";
  if (session->redirect && RedirectBroken(cntx)) flags += 'R';
  if (session->bcast) flags += 'B';
  return flags;
}

void RegisterClient(ConnectionContext* cntx) {
  Directory& dir = Dir();
  std::lock_guard guard(dir.lock);
  dir.clients.try_emplace(cntx->id());
}

void UnregisterClient(ConnectionContext* cntx) {
  if (TrackingSession* session = SessionOf(cntx)) {
    if (session->bcast) bcast_clients.fetch_sub(1, std::memory_order_relaxed);
    tracking_clients.fetch_sub(1, std::memory_order_relaxed);
  }
  {
    Directory& dir = Dir();
    std::lock_guard guard(dir.lock);
    if (TrackingSession* session = SessionOf(cntx)) {
      RemovePrefixesLocked(dir, cntx->id(), session->prefixes);
    }
    dir.clients.erase(cntx->id());
  }
  cntx->tracking_state.reset();
}

void SyncPushes(ConnectionContext* cntx) {
  if (cntx->pubsub_state == nullptr && !IsMonitoring(cntx) && !IsTracking(cntx) &&
      !cntx->redirect_target) {
    {
      Directory& dir = Dir();
      std::lock_guard guard(dir.lock);
      if (auto it = dir.clients.find(cntx->id()); it != dir.clients.end()) {
        it->second.queue = nullptr;
        it->second.subscribed = false;
      }
    }
    cntx->owner()->StopPushes();
    return;
  }
  Directory& dir = Dir();
  std::lock_guard guard(dir.lock);
  if (auto it = dir.clients.find(cntx->id()); it != dir.clients.end()) {
    it->second.queue = cntx->owner()->push_queue();
    it->second.subscribed = cntx->pubsub_state != nullptr;
  }
}

void TrackingBeforeCommand(const facade::CommandId* cid, CmdArgList args, ConnectionContext* cntx) {
  TrackingSession* session = SessionOf(cntx);
  if (ShardLocalScope::active()) tl_writer = {cntx->id(), cntx->owner()->push_queue(), session};
  // A read-only script (EVAL_RO, FCALL_RO...) tracks nothing by itself: its reads do.
  if (!(cid->flags & facade::kCmdReadOnly) || (cid->flags & facade::kCmdScript) ||
      session->bcast) {
    return;
  }
  if (session->optin && !session->caching) return;
  if (session->optout && session->caching) return;
  const uint64_t id = cntx->id();
  auto remember = [id](std::string_view key) {
    if (ShardLocalScope::active()) return ShardTracking::Get()->Remember(key, id);
    shard_set->Await(shard_set->ShardOf(key), [&] { ShardTracking::Get()->Remember(key, id); });
  };
  // A read inside a script tracks the keys the script declared, as Redis 7.0 does (it
  // remembers the keys of the calling EVAL), not those of the command itself.
  if (const ConnTxState* tx = ConnTxState::Find(cntx); tx && tx->in_script) {
    for (std::string_view key : tx->script_keys) remember(key);
    return;
  }
  cid->ForEachKey(args, [&](size_t index, uint32_t) { remember(args[index]); });
}

void TrackingAfterCommand(const facade::CommandId* cid, ConnectionContext* cntx) {
  tl_writer = {};
  TrackingSession* session = SessionOf(cntx);
  if (!session) return;  // CLIENT TRACKING off
  ConnTxState* tx = ConnTxState::Find(cntx);
  if (cid->name != "CLIENT" && !(tx && tx->executing)) session->caching = false;
  // Inside EXEC, the held messages wait for EXEC's whole reply.
  if (session->held.empty() || (tx && tx->executing)) return;
  ReplyBuilder* rb = cntx->reply_builder();
  for (const std::vector<std::string>& keys : session->held) {
    rb->StartPush(2);
    rb->SendBulk("invalidate");
    if (keys.empty()) {
      rb->SendNull();
      continue;
    }
    rb->SendBulkArray(keys);
  }
  session->held.clear();
}

TrackingWriter TrackingWriter::Of(ConnectionContext* cntx) {
  TrackingWriter writer;
  if (TrackingSession* session = SessionOf(cntx)) {
    writer.id_ = cntx->id();
    writer.queue_ = cntx->owner()->push_queue();
    writer.session_ = session;
  }
  return writer;
}

void TrackingWriter::Run(absl::FunctionRef<void()> fn) const {
  if (session_ == nullptr) return fn();
  Writer saved = tl_writer;
  tl_writer = {id_, queue_, static_cast<TrackingSession*>(session_)};
  fn();
  tl_writer = saved;
}

void TrackingFlushAll(ConnectionContext* cntx) {
  {
    Directory& dir = Dir();
    std::lock_guard guard(dir.lock);
    // The flushing client's own null follows its reply (point 5); nothing suspends here.
    if (cntx && IsTracking(cntx)) {
      tl_writer = {cntx->id(), cntx->owner()->push_queue(), SessionOf(cntx)};
    }
    for (const auto& [id, entry] : dir.clients) {
      if (entry.tracking) DeliverLocked(dir, id, nullptr);
    }
    tl_writer = {};
  }
  shard_set->RunOnAll([](EngineShard*) { ShardTracking::Get()->Clear(); });
}

int64_t TrackingTableMaxKeys() { return max_keys.load(std::memory_order_relaxed); }

void SetTrackingTableMaxKeys(int64_t keys) {
  max_keys.store(keys, std::memory_order_relaxed);
  shard_set->RunOnAll([](EngineShard*) { ShardTracking::Get()->EvictOverLimit(); });
}

TrackingCounts CountTracking() {
  TrackingCounts counts;
  counts.clients = tracking_clients.load(std::memory_order_relaxed);
  counts.keys = total_keys.load(std::memory_order_relaxed);
  counts.items = total_items.load(std::memory_order_relaxed);
  Directory& dir = Dir();
  std::lock_guard guard(dir.lock);
  counts.prefixes = dir.prefixes.size();
  return counts;
}

}  // namespace damselfly
