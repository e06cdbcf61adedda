#include "src/server/script_family.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/config_family.h"
#include "src/server/replica.h"
#include "src/server/monitor.h"
#include "src/server/script_runner.h"

namespace damselfly {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

namespace {

struct CachedScript {
  std::string body;
  ScriptFlags flags;
  mutable std::atomic<ScriptShape> shape{ScriptShape::kUnknown};  // learned by its runs
};
using ScriptMap = absl::flat_hash_map<std::string, std::shared_ptr<const CachedScript>>;

const facade::CommandRegistry* registry = nullptr;

std::mutex cache_mu;
ScriptMap* cache = new ScriptMap;  // guarded by cache_mu; never destroyed (threads may outlive main)
// Moves on SCRIPT FLUSH: thread maps and interpreters compiled before it drop everything.
std::atomic<uint64_t> cache_epoch{0};

struct ThreadScripts {
  uint64_t epoch = 0;
  ScriptMap scripts;
  absl::flat_hash_map<const Interpreter*, uint64_t> compiled_epoch;
};
thread_local ThreadScripts* thread_scripts = nullptr;

ThreadScripts* Local() {
  if (thread_scripts == nullptr) thread_scripts = new ThreadScripts;
  uint64_t epoch = cache_epoch.load(std::memory_order_acquire);
  if (thread_scripts->epoch != epoch) {
    thread_scripts->scripts.clear();
    thread_scripts->epoch = epoch;
  }
  return thread_scripts;
}

// `sha` in lowercase.
std::shared_ptr<const CachedScript> Lookup(std::string_view sha) {
  ThreadScripts* local = Local();
  const absl::string_view key(sha.data(), sha.size());
  if (auto it = local->scripts.find(key); it != local->scripts.end()) return it->second;
  std::lock_guard lock(cache_mu);
  auto it = cache->find(key);
  if (it == cache->end()) return nullptr;
  local->scripts.emplace(sha, it->second);
  return it->second;
}

// A SHA as given by the client, lowercased into `buffer`; "" when it cannot be one.
std::string_view LowerSha(std::string_view given, char (&buffer)[40]) {
  if (given.size() != sizeof(buffer)) return "";
  for (size_t i = 0; i < sizeof(buffer); ++i) buffer[i] = helio::AsciiToLower(given[i]);
  return std::string_view(buffer, sizeof(buffer));
}

// Compiles body in `lua` when it has not (since the last SCRIPT FLUSH).
bool EnsureCompiled(Interpreter* lua, std::string_view sha, std::string_view body,
                    std::string* error) {
  ThreadScripts* local = Local();
  uint64_t& compiled = local->compiled_epoch[lua];
  if (compiled != local->epoch) {
    lua->FlushScripts();
    compiled = local->epoch;
  }
  return lua->HasScript(sha) || lua->AddScript(sha, body, error);
}

// Compiles `body` and caches it; its SHA, or nullptr with the error replied.
std::shared_ptr<const CachedScript> Load(std::string_view body, std::string* sha,
                                         ReplyBuilder* rb) {
  *sha = Interpreter::Sha1Hex(body);
  if (auto script = Lookup(*sha)) return script;
  auto script = std::make_shared<CachedScript>();
  std::string error;
  if (!ParseShebang(body, &script->flags, &error)) {
    rb->SendError(error);
    return nullptr;
  }
  script->body = std::string(body);
  bool compiled = false;
  WithInterpreter([&](Interpreter* lua) { compiled = EnsureCompiled(lua, *sha, body, &error); });
  if (!compiled) {
    rb->SendError(error);
    return nullptr;
  }
  std::lock_guard lock(cache_mu);
  auto [it, added] = cache->emplace(*sha, std::move(script));
  Local()->scripts.emplace(*sha, it->second);
  return it->second;
}

// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO: script|sha numkeys key... arg...
void Eval(CmdArgList args, ConnectionContext* cntx, bool by_sha, bool read_only) {
  ReplyBuilder* rb = cntx->reply_builder();
  FeedScriptCommandToMonitors(args, cntx);
  std::optional<int64_t> numkeys = ParseInt64(args[2]);
  if (!numkeys) return rb->SendError(facade::kInvalidIntErr);
  if (*numkeys < 0) return rb->SendError("ERR Number of keys can't be negative");
  if (*numkeys > int64_t(args.size() - 3)) {
    return rb->SendError("ERR Number of keys can't be greater than number of args");
  }
  char sha_buffer[40];
  std::string_view sha;
  std::string eval_sha;
  std::shared_ptr<const CachedScript> script;
  if (by_sha) {
    sha = LowerSha(args[1], sha_buffer);
    if (!sha.empty()) script = Lookup(sha);
    if (!script) return rb->SendError("NOSCRIPT No matching script. Please use EVAL.");
  } else {
    script = Load(args[1], &eval_sha, rb);
    if (!script) return;
    sha = eval_sha;
  }
  const ScriptFlags& flags = script->flags;
  if (std::string refusal = WriteRefusal(cntx->master_link);
      flags.declared && !flags.no_writes && !refusal.empty()) {
    return rb->SendError(refusal);  // Redis's dispatcher's, from the flags
  }
  if (read_only && flags.declared && !flags.no_writes) {
    return rb->SendError("ERR Can not execute a script with write flag using *_ro command.");
  }
  if (flags.declared && !flags.no_writes && !flags.allow_oom && OverMaxMemory()) {
    return rb->SendError(facade::kOomErr);
  }
  ScriptCall call{.keys = args.subspan(3, *numkeys),
                  .flags = flags,
                  .read_only = read_only || flags.no_writes,
                  .shape = &script->shape};
  CmdArgList argv = args.subspan(3 + *numkeys);
  RunScript(*registry, call, cntx, [&](Interpreter* lua, ScriptReplyWriter* out) {
    std::string error;
    if (!EnsureCompiled(lua, sha, script->body, &error)) return out->Error(error);
    lua->RunScript(sha, call.keys, argv, out);
  });
}

void CmdScript(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (ArgIs(args[1], "LOAD")) {
    std::string sha;
    if (Load(args[2], &sha, rb)) rb->SendBulk(sha);
    return;
  }
  if (ArgIs(args[1], "EXISTS")) {
    rb->StartArray(args.size() - 2);
    for (size_t i = 2; i < args.size(); ++i) {
      char buffer[40];
      std::string_view sha = LowerSha(args[i], buffer);
      rb->SendLong(!sha.empty() && Lookup(sha) != nullptr);
    }
    return;
  }
  if (ArgIs(args[1], "FLUSH")) {
    if (args.size() > 3 || (args.size() == 3 && !ArgIs(args[2], "ASYNC") && !ArgIs(args[2], "SYNC"))) {
      return rb->SendError("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    {
      std::lock_guard lock(cache_mu);
      cache->clear();
    }
    cache_epoch.fetch_add(1, std::memory_order_acq_rel);
    return rb->SendOk();
  }
  if (ArgIs(args[1], "KILL")) {
    std::string error = KillBusyScript(false);
    return error.empty() ? rb->SendOk() : rb->SendError(error);
  }
  constexpr std::string_view kHelp[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Print this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

}  // namespace

size_t ScriptFamily::CachedScripts() {
  std::lock_guard lock(cache_mu);
  return cache->size();
}

bool ScriptFamily::DeclaresNoWrites(CmdArgList args, bool by_sha) {
  if (args.size() < 2) return false;
  if (by_sha) {
    char sha_buffer[40];
    const std::string_view sha = LowerSha(args[1], sha_buffer);
    const std::shared_ptr<const CachedScript> script = sha.empty() ? nullptr : Lookup(sha);
    return script && script->flags.no_writes;
  }
  ScriptFlags flags;
  std::string error;
  return ParseShebang(args[1], &flags, &error) && flags.no_writes;
}

void ScriptFamily::Register(facade::CommandRegistry* r) {
  using namespace facade;
  registry = r;
  constexpr uint32_t kEvalFlags =
      kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdNoMandatoryKeys | kCmdScript;
  constexpr uint32_t kMayWrite = kEvalFlags | kCmdMayReplicate;
  constexpr KeySpec kEvalKeys{.begin_index = 2, .key_step = 1, .keynum = true,
                              .keynum_index = 0, .first_key_index = 1};
  constexpr uint32_t kAcl = kAclSlow | kAclScripting;
  const KeySpec write_keys = kEvalKeys.WithFlags(kKeyRW | kKeyAccess | kKeyUpdate);
  r->Add("EVAL", -3, kMayWrite, write_keys, kAcl,
         [](CmdArgList args, ConnectionContext* cntx) { Eval(args, cntx, false, false); });
  r->Add("EVALSHA", -3, kMayWrite, write_keys, kAcl,
         [](CmdArgList args, ConnectionContext* cntx) { Eval(args, cntx, true, false); });
  r->Add("EVAL_RO", -3, kEvalFlags | kCmdReadOnly, kEvalKeys.WithFlags(kKeyRO | kKeyAccess), kAcl,
         [](CmdArgList args, ConnectionContext* cntx) { Eval(args, cntx, false, true); });
  r->Add("EVALSHA_RO", -3, kEvalFlags | kCmdReadOnly, kEvalKeys.WithFlags(kKeyRO | kKeyAccess),
         kAcl, [](CmdArgList args, ConnectionContext* cntx) { Eval(args, cntx, true, true); });
  r->Add("SCRIPT", -2, kCmdNoScript, kNoKeys, kAclSlow, CmdScript,
         {{"LOAD", 3, kAclSlow | kAclScripting},
          {"EXISTS", -3, kAclSlow | kAclScripting},
          {"FLUSH", -2, kAclSlow | kAclScripting},
          {"KILL", 2, kAclSlow | kAclScripting},
          {"HELP", 2, kAclSlow | kAclScripting}});
}

}  // namespace damselfly
