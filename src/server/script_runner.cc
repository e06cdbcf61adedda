#include "src/server/script_runner.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "boost/fiber/operations.hpp"
#include "src/facade/error.h"
#include "src/facade/facade_stats.h"
#include "src/server/acl_family.h"
#include "src/server/acl_users.h"
#include "src/server/command_accounting.h"
#include "src/server/config_family.h"
#include "src/server/replica.h"
#include "src/server/conn_tx_state.h"
#include "src/server/engine_shard_set.h"
#include "src/server/journal.h"
#include "src/server/multi_exec.h"
#include "src/server/server_state.h"
#include "src/server/transaction.h"

namespace damselfly {

using facade::CmdArgList;
using facade::CommandId;
using facade::ConnectionContext;
using facade::ReplyBuilder;
using facade::RespVersion;

namespace {

std::atomic<int64_t> busy_threshold_ms{5000};
std::atomic<bool> stopping{false};  // StopAllScripts

// --- Busy runs: past the threshold, registered here until they end.

struct BusyRun {
  std::atomic<bool> kill{false};
  std::atomic<bool> wrote{false};
  bool is_function = false;
};

std::mutex busy_mu;                  // guards busy_runs; taken only by busy runs and KILL
std::vector<BusyRun*> busy_runs;     // NOLINT: the slow path only
std::atomic<uint32_t> busy_count{0};  // busy_runs.size(), read by every dispatch

// Replies from a Lua script to the client's ReplyBuilder.
class BuilderWriter final : public ScriptReplyWriter {
 public:
  explicit BuilderWriter(ReplyBuilder* rb) : rb_(rb) {}
  void Nil() override { rb_->SendNull(); }
  void Integer(int64_t value) override { rb_->SendLong(value); }
  void Bulk(std::string_view value) override { rb_->SendBulk(value); }
  void Status(std::string_view value) override { rb_->SendSimpleString(value); }
  void Error(std::string_view message) override { rb_->SendError(message); }
  void CommandError(std::string_view message) override { rb_->SendErrorCountedBefore(message); }
  void Array(size_t length) override { rb_->StartArray(length); }
  void Map(size_t pairs) override { rb_->StartMap(pairs); }
  void Set(size_t length) override { rb_->StartSet(length); }
  void Double(double value) override { rb_->SendDouble(value); }
  void Bool(bool value) override { rb_->SendBool(value); }
  void BigNumber(std::string_view digits) override { rb_->SendBigNumber(digits); }
  void Verbatim(std::string_view text, std::string_view format) override {
    rb_->SendVerbatim(text, format);
  }

 private:
  ReplyBuilder* rb_;
};

// Interpreters of this thread not in use. A run takes one for its duration.
thread_local std::vector<std::unique_ptr<Interpreter>>* free_interpreters = nullptr;

class InterpreterLease {
 public:
  InterpreterLease() {
    if (free_interpreters == nullptr) free_interpreters = new std::vector<std::unique_ptr<Interpreter>>;
    if (free_interpreters->empty()) {
      lua_ = std::make_unique<Interpreter>();
    } else {
      lua_ = std::move(free_interpreters->back());
      free_interpreters->pop_back();
    }
  }
  ~InterpreterLease() {
    lua_->set_call(nullptr);
    lua_->set_log(nullptr);
    lua_->set_interrupt(nullptr);
    free_interpreters->push_back(std::move(lua_));
  }
  Interpreter* get() { return lua_.get(); }

 private:
  std::unique_ptr<Interpreter> lua_;
};

enum class Mode { kLocal, kTransaction, kWholeShard };

// One run of a script (a second one when the first must restart whole-shard).
class Run {
 public:
  Run(const facade::CommandRegistry& registry, const ScriptCall& call, ConnectionContext* cntx,
      ConnTxState* state, Mode mode)
      : registry_(registry), call_(call), cntx_(cntx), state_(state), mode_(mode) {}
  ~Run() { EndBusy(); }

  // Runs the script; false when it must run again whole-shard (nothing was written and
  // nothing replied).
  bool Execute(Interpreter* lua,
               absl::FunctionRef<void(Interpreter* lua, ScriptReplyWriter* out)> body);

 private:
  void Call(CmdArgList args, bool resp3, std::string* reply);
  // Checks what the command needs against what the run holds, taking what it can; ""
  // when the command may run, else the error it fails with.
  std::string Cover(const CommandId* cid, CmdArgList args);
  std::string CoverKey(std::string_view key, LockMode mode);
  bool Declared(std::string_view key) const;
  // A local run becomes a transaction (see script_runner.h).
  void LeaveLocal();
  // Hands over the part of the run's group written while local.
  void EndLocalGroup() {
    local_group_.reset();
    if (journal_group_ != 0) ShardJournal::EndGroup(journal_group_, 1);
  }
  void RunCommandHere(const CommandId* cid, CmdArgList args);
  bool Interrupt();
  void EndBusy();
  LockMode ModeOf(uint32_t key_flags) const {
    return call_.read_only || (key_flags & facade::kKeyRO) ? LockMode::kShared
                                                           : LockMode::kExclusive;
  }

  const facade::CommandRegistry& registry_;
  const ScriptCall& call_;
  ConnectionContext* const cntx_;
  ConnTxState* const state_;
  Mode mode_;
  std::optional<ShardLocalScope> local_scope_;
  std::optional<DbSlice::FrozenClock> local_clock_;  // while local
  // What the run writes reaches the replicas as one unit (journal.h); the part written
  // while local is handed over when the run leaves this thread's shard or ends.
  uint64_t journal_group_ = 0;
  std::optional<JournalGroupScope> local_group_;  // while local
  std::optional<Transaction> own_tx_;
  Transaction* tx_ = nullptr;
  // Undeclared keys this run uses: locked late, or (local runs) used while free.
  std::vector<std::string> undeclared_;
  // The run reached a key it did not declare, or a command that needs every shard.
  bool reached_undeclared_ = false;
  // ... and one of those was not on the shard of all its declared keys (or it has none).
  bool reached_other_shard_ = false;
  bool wrote_ = false;
  bool restart_ = false;  // abandon the run: the script runs again whole-shard
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  const int64_t clock_ms_ = UnixTimeMs();  // the time its keys expire by
  std::optional<BusyRun> busy_;
};

bool Run::Declared(std::string_view key) const {
  for (std::string_view declared : call_.keys) {
    if (declared == key) return true;
  }
  for (const std::string& late : undeclared_) {
    if (late == key) return true;
  }
  return false;
}

bool Run::Execute(Interpreter* lua,
                  absl::FunctionRef<void(Interpreter* lua, ScriptReplyWriter* out)> body) {
  ReplyBuilder* rb = cntx_->reply_builder();
  const size_t output_before = rb->output_size();
  // Inside EXEC, the run's writes are EXEC's, in EXEC's group.
  if (!call_.read_only && state_->exec_tx == nullptr) journal_group_ = NewJournalGroup();
  switch (mode_) {
    case Mode::kLocal:
      local_scope_.emplace();
      local_clock_.emplace(clock_ms_);
      local_group_.emplace(journal_group_);
      break;
    case Mode::kTransaction:
      if (state_->exec_tx != nullptr) {
        tx_ = state_->exec_tx;
        wrote_ = true;  // EXEC's commands before it may have written: never restart
        break;
      }
      own_tx_.emplace(cntx_->db_index);
      own_tx_->set_journal_group(journal_group_);
      for (std::string_view key : call_.keys) own_tx_->AddLock(key, ModeOf(0));
      own_tx_->Schedule();
      tx_ = &*own_tx_;
      break;
    case Mode::kWholeShard:
      own_tx_.emplace(Transaction::WholeShards{}, cntx_->db_index, /*multi=*/true);
      own_tx_->set_journal_group(journal_group_);
      own_tx_->Schedule();
      tx_ = &*own_tx_;
      break;
  }
  Transaction* const saved_exec_tx = state_->exec_tx;
  const bool saved_executing = state_->executing;
  const CommandId* const saved_command = cntx_->last_command;
  const DbIndex saved_db = cntx_->db_index;
  const int64_t saved_clock = state_->script_clock_ms;
  const bool saved_in_script = state_->in_script;
  const CmdArgList saved_script_keys = state_->script_keys;
  state_->exec_tx = tx_;
  state_->script_clock_ms = clock_ms_;
  state_->in_script = true;
  state_->script_keys = call_.keys;
  state_->executing = true;

  lua->set_call([this](CmdArgList args, bool resp3, std::string* reply) {
    Call(args, resp3, reply);
  });
  lua->set_interrupt([this] { return Interrupt(); });
  BuilderWriter writer(rb);
  body(lua, &writer);

  // Selected databases and the command shown by CLIENT LIST are the caller's again.
  cntx_->db_index = saved_db;
  cntx_->last_command = saved_command;
  state_->executing = saved_executing;
  state_->exec_tx = saved_exec_tx;
  state_->script_clock_ms = saved_clock;
  state_->in_script = saved_in_script;
  state_->script_keys = saved_script_keys;
  if (mode_ == Mode::kLocal) {
    EndLocalGroup();
    local_clock_.reset();
    local_scope_.reset();
    // Clients blocked on keys the script filled are served now, as after a command (a
    // transaction serves them after its last hop).
    EngineShard::tlocal()->blocking().ServeReady();
  }
  if (own_tx_) own_tx_->Conclude();
  if (restart_) {
    rb->TruncateOutput(output_before);
    return false;
  }
  if (reached_undeclared_) ++ServerState::tlocal()->stats.scripts_undeclared_keys;
  if (call_.shape != nullptr) {
    // Learned for the next runs (ScriptShape): a script that reached undeclared keys
    // runs whole-shard from the start, unless they were all on its declared keys' shard;
    // one whose first run did not, with its declared keys only.
    if (reached_undeclared_) {
      if (reached_other_shard_) {
        call_.shape->store(ScriptShape::kUndeclared, std::memory_order_relaxed);
      } else {
        // Never over a concurrent run's kUndeclared: that one is final.
        ScriptShape seen = call_.shape->load(std::memory_order_relaxed);
        while (seen != ScriptShape::kUndeclared &&
               !call_.shape->compare_exchange_weak(seen, ScriptShape::kUndeclaredOneShard,
                                                   std::memory_order_relaxed)) {
        }
      }
    } else {
      ScriptShape unknown = ScriptShape::kUnknown;
      call_.shape->compare_exchange_strong(unknown, ScriptShape::kDeclaredOnly,
                                           std::memory_order_relaxed);
    }
  }
  return true;
}

void Run::LeaveLocal() {
  DCHECK(mode_ == Mode::kLocal);
  // Nothing ran on this thread since the run began: its keys are still free, and the
  // one-shard schedule takes them without waiting. What it wrote so far goes to the
  // stream now, and the rest as a group of its own: the unit splits in two there.
  EndLocalGroup();
  if (journal_group_ != 0) journal_group_ = NewJournalGroup();
  own_tx_.emplace(cntx_->db_index);
  own_tx_->set_journal_group(journal_group_);
  for (std::string_view key : call_.keys) own_tx_->AddLock(key, ModeOf(0));
  for (const std::string& key : undeclared_) own_tx_->AddLock(key, ModeOf(0));
  own_tx_->Schedule();
  tx_ = &*own_tx_;
  state_->exec_tx = tx_;
  local_clock_.reset();
  local_scope_.reset();
  mode_ = Mode::kTransaction;
}

std::string Run::CoverKey(std::string_view key, LockMode mode) {
  if (Declared(key)) return "";
  reached_undeclared_ = true;
  reached_other_shard_ |= call_.keys.empty() || !OnOneShard(call_.keys, 0, call_.keys.size()) ||
                          shard_set->ShardOf(key) != shard_set->ShardOf(call_.keys[0]);
  if (mode_ == Mode::kWholeShard || (tx_ != nullptr && tx_->whole_shard())) return "";
  if (mode_ == Mode::kLocal) {
    EngineShard* shard = EngineShard::tlocal();
    if (shard_set->ShardOf(key) == shard->shard_id() && shard->tx_queue().IsFree(key, mode)) {
      undeclared_.emplace_back(key);
      return "";
    }
    LeaveLocal();
  }
  while (true) {
    const LateLock lock = tx_->LockLate(key, mode);
    if (lock == LateLock::kTaken) {
      undeclared_.emplace_back(key);
      return "";
    }
    if (!wrote_) {
      restart_ = true;
      return "ERR script restarted";  // never seen: the run's reply is dropped
    }
    if (lock == LateLock::kConflict) {
      return "ERR the script reached a key it did not declare while another transaction "
             "held it, after writing: declare the key in KEYS";
    }
    boost::this_fiber::sleep_for(std::chrono::microseconds(100));
  }
}

std::string Run::Cover(const CommandId* cid, CmdArgList args) {
  if (cid->IsWholeShard(args)) reached_undeclared_ = reached_other_shard_ = true;
  if (cid->IsWholeShard(args) && mode_ != Mode::kWholeShard &&
      !(tx_ != nullptr && tx_->whole_shard())) {
    if (!wrote_) {
      restart_ = true;
      return "ERR script restarted";
    }
    return "ERR this command needs every shard; run it before the script's first write";
  }
  if (mode_ == Mode::kLocal && !cid->takes_keys()) {
    LeaveLocal();  // a command without keys may hop, and the fiber may suspend
    return "";
  }
  std::string error;
  cid->ForEachKey(args, [&](size_t index, uint32_t flags) {
    if (error.empty()) error = CoverKey(args[index], ModeOf(flags));
  });
  return error;
}

void Run::RunCommandHere(const CommandId* cid, CmdArgList args) {
  cntx_->last_command = cid;
  cntx_->last_subcommand =
      cid->subcommands.empty() || args.size() < 2 ? nullptr : cid->FindSubcommand(args[1]);
  if (mode_ == Mode::kLocal) {
    RunCommand(cid, cid->handler, args, cntx_, CommandClockTicks());
  } else {
    RunInTransaction(cid, args, tx_, cntx_);
  }
}

void Run::Call(CmdArgList args, bool resp3, std::string* reply) {
  auto reply_error = [reply](std::string_view error) {
    helio::StrAppend(reply, "-", error, "\r\n");
  };
  if (restart_) return reply_error("ERR script restarted");
  const CommandId* cid = registry_.Find(args[0]);
  // A refusal counts in the error stats now, as the command's own errors do when it
  // sends them, and as a rejected call of a known command (Redis's scriptCall).
  auto fail = [&](std::string_view error) {
    facade::FacadeStats::tlocal()->CountError(error);
    if (cid != nullptr) CountRejected(cid, args);
    reply_error(error);
  };
  if (cid == nullptr) return fail("ERR Unknown Redis command called from script");
  if (!cid->IsArityValid(args.size())) {
    return fail("ERR Wrong number of args calling Redis command from script");
  }
  std::string error;
  if (!cid->subcommands.empty() && registry_.Validate(args, &error) == nullptr) return fail(error);
  if (cid->flags & facade::kCmdNoScript) {
    return fail("ERR This Redis command is not allowed from script");
  }
  if (!CurrentAclUser(cntx_).unrestricted()) [[unlikely]] {
    if (error = AclRefusal(cntx_, *cid, args, AclSite::kScript); !error.empty()) return fail(error);
  }
  // As in Redis, a may-replicate command (PUBLISH) counts as a write here, which lets a
  // read-only script run through CLIENT PAUSE WRITE.
  if ((cid->flags & (facade::kCmdWrite | facade::kCmdMayReplicate)) && call_.read_only) {
    return fail("ERR Write commands are not allowed from read-only scripts.");
  }
  if (cid->flags & facade::kCmdWrite) {
    if (std::string refusal = WriteRefusal(cntx_->master_link); !refusal.empty()) {
      return fail(refusal);
    }
    if ((cid->flags & facade::kCmdDenyOom) && !call_.flags.allow_oom && OverMaxMemory()) {
      return fail(facade::kOomErr);
    }
  }
  if ((cid->name == "XREAD" || cid->name == "XREADGROUP") &&
      std::any_of(args.begin(), args.end(),
                  [](std::string_view arg) { return helio::EqualsIgnoreCase(arg, "BLOCK"); })) {
    return fail(helio::StrCat("ERR ", helio::AsciiStrToLower(cid->name),
                              " command is not allowed with BLOCK option from scripts"));
  }
  if (error = Cover(cid, args); !error.empty()) return fail(error);
  if (cid->flags & facade::kCmdWrite) {
    wrote_ = true;
    if (busy_) busy_->wrote.store(true, std::memory_order_relaxed);
  }

  ReplyBuilder* rb = cntx_->reply_builder();
  const RespVersion protocol = rb->protocol();
  const size_t before = rb->output_size();
  const uint64_t errors_before = rb->errors_sent();
  rb->set_protocol(resp3 ? RespVersion::kResp3 : RespVersion::kResp2);
  RunCommandHere(cid, args);
  reply->append(rb->output().substr(before));
  rb->TruncateOutput(before);
  rb->TakeBackErrors(rb->errors_sent() - errors_before);
  rb->set_protocol(protocol);
}

bool Run::Interrupt() {
  if (restart_ || stopping.load(std::memory_order_relaxed)) return true;
  if (!busy_) {
    auto elapsed = std::chrono::steady_clock::now() - start_;
    if (elapsed < std::chrono::milliseconds(busy_threshold_ms.load(std::memory_order_relaxed))) {
      return false;
    }
    // The fiber yields from now on: the keys must be locked first.
    if (mode_ == Mode::kLocal) LeaveLocal();
    busy_.emplace();
    busy_->wrote.store(wrote_, std::memory_order_relaxed);
    busy_->is_function = call_.is_function;
    {
      std::lock_guard lock(busy_mu);
      busy_runs.push_back(&*busy_);
      busy_count.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (busy_->kill.load(std::memory_order_relaxed)) return true;
  // Commands waiting behind a transaction get -BUSY, as in Redis; again at every check,
  // for those that were queued after the last one.
  for (ShardId shard = 0; shard < shard_set->size(); ++shard) {
    shard_set->pool()->at(shard)->Dispatch([] {
      if (EngineShard* here = EngineShard::tlocal()) here->tx_queue().AbortWaiting();
    });
  }
  boost::this_fiber::yield();
  return busy_->kill.load(std::memory_order_relaxed);
}

void Run::EndBusy() {
  if (!busy_) return;
  std::lock_guard lock(busy_mu);
  std::erase(busy_runs, &*busy_);
  busy_count.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace

bool SetScriptFlag(std::string_view name, ScriptFlags* flags) {
  if (name == "no-writes") {
    flags->no_writes = true;
  } else if (name == "allow-oom") {
    flags->allow_oom = true;
  } else if (name == "allow-stale") {
    flags->allow_stale = true;
  } else if (name == "no-cluster") {
    flags->no_cluster = true;
  } else if (name == "allow-cross-slot-keys") {
    flags->allow_cross_slot_keys = true;
  } else {
    return false;
  }
  return true;
}

bool ParseShebang(std::string_view body, ScriptFlags* flags, std::string* error) {
  if (!body.starts_with("#!")) return true;
  std::string_view line = body.substr(0, body.find('\n'));
  flags->declared = true;
  std::vector<std::string_view> parts = helio::SplitAny(line, " ");
  if (parts[0] != "#!lua") {
    *error = helio::StrCat("ERR Unexpected engine in script shebang: ", parts[0]);
    return false;
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].starts_with("flags=")) {
      *error = helio::StrCat("ERR Unknown lua shebang option: ", parts[i]);
      return false;
    }
    for (std::string_view name : helio::SplitAny(parts[i].substr(6), ",")) {
      if (!SetScriptFlag(name, flags)) {
        *error = helio::StrCat("ERR Unexpected flag in script shebang: ", name);
        return false;
      }
    }
  }
  return true;
}

namespace {

// A script not known to keep to its declared keys runs whole-shard (with one shard,
// local is as good: nothing it reaches can be on another thread).
bool RunsWholeShard(const ScriptCall& call) {
  if (call.shape == nullptr || shard_set->size() == 1) return false;
  const ScriptShape shape = call.shape->load(std::memory_order_relaxed);
  return shape == ScriptShape::kUnknown || shape == ScriptShape::kUndeclared;
}

// A script whose undeclared keys share its declared keys' shard runs local, or else
// whole-shard: never in a transaction scheduled from the start, which may be older
// than a holder of an undeclared key it finds held after writing (script_runner.h).
bool LocalOrWholeShard(const ScriptCall& call) {
  return call.shape != nullptr && shard_set->size() > 1 &&
         call.shape->load(std::memory_order_relaxed) == ScriptShape::kUndeclaredOneShard;
}

// RunScript on the thread that runs the script.
void RunScriptHere(const facade::CommandRegistry& registry, const ScriptCall& call,
                   ConnectionContext* cntx,
                   absl::FunctionRef<void(Interpreter* lua, ScriptReplyWriter* out)> body) {
  ConnTxState* state = ConnTxState::Get(cntx);
  Mode mode = Mode::kTransaction;
  EngineShard* shard = EngineShard::tlocal();
  if (state->exec_tx == nullptr && RunsWholeShard(call)) {
    mode = Mode::kWholeShard;
  } else if (state->exec_tx == nullptr) {
    // Local when every declared key is this thread's shard's and free (script_runner.h).
    bool local = shard != nullptr;
    for (std::string_view key : call.keys) {
      if (!local) break;
      const ShardTxQueue& queue = shard->tx_queue();
      local &= shard_set->ShardOf(key) == shard->shard_id() &&
               (queue.no_locks() || queue.IsFree(key, LockMode::kExclusive));
    }
    if (local) {
      mode = Mode::kLocal;
    } else if (LocalOrWholeShard(call)) {
      mode = Mode::kWholeShard;
    }
  }
  InterpreterLease lua;
  if (mode == Mode::kWholeShard) ++ServerState::tlocal()->stats.scripts_whole_shard;
  {
    Run run(registry, call, cntx, state, mode);
    if (run.Execute(lua.get(), body)) return;
  }
  ++ServerState::tlocal()->stats.scripts_rerun_whole_shard;
  ++ServerState::tlocal()->stats.scripts_whole_shard;
  Run run(registry, call, cntx, state, Mode::kWholeShard);
  CHECK(run.Execute(lua.get(), body));
}

}  // namespace

void RunScript(const facade::CommandRegistry& registry, const ScriptCall& call,
               ConnectionContext* cntx,
               absl::FunctionRef<void(Interpreter* lua, ScriptReplyWriter* out)> body) {
  // A script whose declared keys all live on another thread's shard runs there, on a
  // fiber of that thread, where its calls need no hop (the client's fiber waits, as
  // for any hop; the script writes its reply from there).
  ConnTxState* state = ConnTxState::Find(cntx);
  if (!call.keys.empty() && !(state && state->exec_tx) && !RunsWholeShard(call) &&
      OnOneShard(call.keys, 0, call.keys.size())) {
    ShardId target = shard_set->ShardOf(call.keys[0]);
    if (!shard_set->IsLocal(target)) {
      helio::fibers::Done done;
      shard_set->pool()->at(target)->LaunchFiber([&] {
        RunScriptHere(registry, call, cntx, body);
        done.Notify();
      });
      done.Wait();
      ++ServerState::tlocal()->stats.shard_hops;
      return;
    }
  }
  RunScriptHere(registry, call, cntx, body);
}

void WithInterpreter(absl::FunctionRef<void(Interpreter* lua)> fn) {
  InterpreterLease lua;
  fn(lua.get());
}

bool ScriptsBusy() { return busy_count.load(std::memory_order_relaxed) != 0; }

std::string BusyScriptError(const CommandId* cid, CmdArgList args) {
  if (cid->flags & facade::kCmdAllowBusy) return "";
  const bool script = cid->name == "SCRIPT", function = cid->name == "FUNCTION";
  if ((script || function) && args.size() >= 2 &&
      (helio::EqualsIgnoreCase(args[1], "KILL") ||
       (function && helio::EqualsIgnoreCase(args[1], "STATS")))) {
    return "";
  }
  bool busy_function = false;
  {
    std::lock_guard lock(busy_mu);
    if (busy_runs.empty()) return "";
    busy_function = busy_runs.front()->is_function;
  }
  return helio::StrCat("BUSY Redis is busy running a script. You can only call ",
                       busy_function ? "FUNCTION KILL" : "SCRIPT KILL", " or SHUTDOWN NOSAVE.");
}

std::string KillBusyScript(bool function) {
  std::lock_guard lock(busy_mu);
  if (busy_runs.empty()) {
    return "NOTBUSY No scripts in execution right now.";
  }
  BusyRun* run = busy_runs.front();
  if (run->wrote.load(std::memory_order_relaxed)) {
    return "UNKILLABLE Sorry the script already executed write commands against the dataset. "
           "You can either wait the script termination or kill the server in a hard way using "
           "the SHUTDOWN NOSAVE command.";
  }
  if (run->is_function != function) {
    // Each KILL stops only its own kind and names the other one, as Redis.
    return function ? "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                      "SHUTDOWN NOSAVE."
                    : "BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                      "SHUTDOWN NOSAVE.";
  }
  run->kill.store(true, std::memory_order_relaxed);
  return "";
}

void StopAllScripts() { stopping.store(true, std::memory_order_relaxed); }

int64_t BusyReplyThresholdMs() { return busy_threshold_ms.load(std::memory_order_relaxed); }
void SetBusyReplyThresholdMs(int64_t ms) { busy_threshold_ms.store(ms, std::memory_order_relaxed); }

}  // namespace damselfly
