#include "src/server/function_family.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "helio/base/strings.h"
#include "src/core/glob_matcher.h"
#include "src/core/interpreter.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/config_family.h"
#include "src/server/engine_shard_set.h"
#include "src/server/function_payload.h"
#include "src/server/monitor.h"
#include "src/server/script_runner.h"
#include "src/server/replica.h"
#include "src/server/replication.h"

namespace damselfly {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;
using FunctionInfo = Interpreter::FunctionInfo;

namespace {

// --- The library set (function_family.h)

struct Library {
  std::string name;
  std::string code;  // as FUNCTION LOAD got it, shebang included (LIST WITHCODE, DUMP)
  std::vector<FunctionInfo> functions;
  // functions[i]'s shape (script_runner.h), learned by its calls on every thread as an
  // EVAL script's is, and forgotten with the library (a REPLACE starts again).
  std::unique_ptr<std::atomic<ScriptShape>[]> shapes;
};

struct Function {
  std::shared_ptr<const Library> library;
  const FunctionInfo* info;         // in *library
  std::atomic<ScriptShape>* shape;  // in *library
  ScriptFlags flags;
};

struct LibrarySet {
  uint64_t epoch = 0;
  std::map<std::string, std::shared_ptr<const Library>, std::less<>> libraries;
  // By lower-case name: Redis's function names are case-insensitive, library names not.
  absl::flat_hash_map<std::string, Function> functions;
};

const facade::CommandRegistry* registry = nullptr;

std::mutex set_mu;
// Guarded by set_mu; never destroyed (threads may outlive main).
std::shared_ptr<const LibrarySet>* current_set =
    new std::shared_ptr<const LibrarySet>(std::make_shared<LibrarySet>());
// (*current_set)->epoch, read by every FCALL.
std::atomic<uint64_t> set_epoch{0};

// This thread's copy of the set. A copy rather than a share of current_set: an FCALL
// holds its set while the function runs, and a reference count per call on an object
// every thread shares would bounce its cache line between the cores.
thread_local std::shared_ptr<const LibrarySet>* thread_set = nullptr;

std::shared_ptr<const LibrarySet> CurrentSet() {
  if (thread_set == nullptr) thread_set = new std::shared_ptr<const LibrarySet>;
  if (*thread_set == nullptr || (*thread_set)->epoch != set_epoch.load(std::memory_order_acquire)) {
    std::lock_guard lock(set_mu);
    *thread_set = std::make_shared<LibrarySet>(**current_set);
  }
  return *thread_set;
}

// Runs `edit` on a copy of the current set and publishes the copy when edit returns true.
// edit must not suspend (the mutex blocks the thread).
bool UpdateSet(absl::FunctionRef<bool(LibrarySet* set)> edit) {
  std::lock_guard lock(set_mu);
  auto next = std::make_shared<LibrarySet>(**current_set);
  if (!edit(next.get())) return false;
  next->epoch = (*current_set)->epoch + 1;
  *current_set = next;
  set_epoch.store(next->epoch, std::memory_order_release);
  return true;
}

ScriptFlags FlagsOf(const FunctionInfo& info) {
  ScriptFlags flags;
  for (const std::string& name : info.flags) SetScriptFlag(name, &flags);
  flags.declared = true;
  return flags;
}

// Adds `library` to `set`, which has no library of that name; false with Redis's error
// when another library has one of its function names.
bool Link(LibrarySet* set, std::shared_ptr<const Library> library, std::string* error) {
  for (const FunctionInfo& info : library->functions) {
    if (set->functions.contains(helio::AsciiStrToLower(info.name))) {
      *error = helio::StrCat("ERR Function ", info.name, " already exists");
      return false;
    }
  }
  for (size_t i = 0; i < library->functions.size(); ++i) {
    const FunctionInfo& info = library->functions[i];
    set->functions.emplace(helio::AsciiStrToLower(info.name),
                           Function{library, &info, &library->shapes[i], FlagsOf(info)});
  }
  set->libraries.emplace(library->name, std::move(library));
  return true;
}

void Unlink(LibrarySet* set, std::string_view name) {
  auto it = set->libraries.find(name);
  if (it == set->libraries.end()) return;
  for (const FunctionInfo& info : it->second->functions) {
    set->functions.erase(helio::AsciiStrToLower(info.name));
  }
  set->libraries.erase(it);
}

// --- Libraries in interpreters

// What an interpreter of the pool has loaded, at which set epoch.
struct LoadedLibraries {
  uint64_t epoch = 0;
  std::vector<std::string> names;
};
thread_local absl::flat_hash_map<const Interpreter*, LoadedLibraries>* loaded_libraries = nullptr;

// Makes `library` of `set` callable in `lua`, first dropping what lua loaded from
// another set.
bool EnsureLoaded(Interpreter* lua, const LibrarySet& set, const Library& library,
                  std::string* error) {
  if (loaded_libraries == nullptr) {
    loaded_libraries = new absl::flat_hash_map<const Interpreter*, LoadedLibraries>;
  }
  LoadedLibraries& loaded = (*loaded_libraries)[lua];
  if (loaded.epoch != set.epoch) {
    for (const std::string& name : loaded.names) lua->DropLibrary(name);
    loaded.names.clear();
    loaded.epoch = set.epoch;
  }
  if (std::find(loaded.names.begin(), loaded.names.end(), library.name) != loaded.names.end()) {
    return true;
  }
  std::vector<FunctionInfo> functions;
  if (!lua->LoadLibrary(library.name, library.code, &functions, error)) return false;
  loaded.names.push_back(library.name);
  return true;
}

// Runs a library's code in an interpreter of this thread kept for that (it holds no
// library between calls, so only the library's own names can clash there): its
// functions, or false with Redis's error.
bool CompileLibrary(const std::string& name, std::string_view code,
                    std::vector<FunctionInfo>* functions, std::string* error) {
  thread_local Interpreter* validator = nullptr;
  if (validator == nullptr) validator = new Interpreter;
  if (!validator->LoadLibrary(name, code, functions, error)) return false;
  validator->DropLibrary(name);
  return true;
}

// Splits the shebang line into words as Redis does (sdssplitargs): blanks separate
// words, "..." (with \xHH, \n, \r, \t, \b, \a escapes) and '...' (with \') quote them,
// and a closing quote must end the word. False on an unbalanced or misplaced quote.
bool SplitWords(std::string_view line, std::vector<std::string>* words) {
  auto blank = [](char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == '\0';
  };
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && blank(line[i])) ++i;
    if (i == n) return true;
    std::string word;
    char quote = 0;
    for (; i < n || quote; ++i) {
      if (i == n) return false;  // unterminated quote
      const char c = line[i];
      if (quote == '"' && c == '\\' && i + 3 < n && line[i + 1] == 'x' &&
          std::isxdigit(uint8_t(line[i + 2])) && std::isxdigit(uint8_t(line[i + 3]))) {
        word.push_back(char(std::stoi(std::string(line.substr(i + 2, 2)), nullptr, 16)));
        i += 3;
      } else if (quote == '"' && c == '\\' && i + 1 < n) {
        const char e = line[++i];
        word.push_back(e == 'n'   ? '\n'
                       : e == 'r' ? '\r'
                       : e == 't' ? '\t'
                       : e == 'b' ? '\b'
                       : e == 'a' ? '\a'
                                  : e);
      } else if (quote == '\'' && c == '\\' && i + 1 < n && line[i + 1] == '\'') {
        word.push_back('\'');
        ++i;
      } else if (quote != 0 && c == quote) {
        if (i + 1 < n && !blank(line[i + 1])) return false;
        quote = 0;
        ++i;
        break;
      } else if (quote == 0 && blank(c)) {
        break;
      } else if (quote == 0 && (c == '"' || c == '\'')) {
        quote = c;
      } else {
        word.push_back(c);
      }
    }
    words->push_back(std::move(word));
  }
}

// Parses "#!<engine> name=<library>" as FUNCTION LOAD does; Redis's error otherwise.
bool ParseLibraryHeader(std::string_view code, std::string* engine, std::string* name,
                        std::string* error) {
  if (!code.starts_with("#!")) {
    *error = "ERR Missing library metadata";
    return false;
  }
  size_t end = code.find('\n');
  std::vector<std::string> words;
  if (end == std::string_view::npos || !SplitWords(code.substr(0, end), &words) || words.empty()) {
    *error = "ERR Invalid library metadata";
    return false;
  }
  *engine = words[0].substr(2);
  bool named = false;
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i].size() >= 5 && helio::EqualsIgnoreCase(words[i].substr(0, 5), "name=")) {
      if (named) {
        *error = "ERR Invalid metadata value, name argument was given multiple times";
        return false;
      }
      *name = words[i].substr(5);
      named = true;
      continue;
    }
    *error = helio::StrCat("ERR Invalid metadata value given: ", words[i]);
    return false;
  }
  if (!named) {
    *error = "ERR Library name was not given";
    return false;
  }
  return true;
}

bool IsValidName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(),
                                      [](char c) { return std::isalnum(uint8_t(c)) || c == '_'; });
}

// Parses and compiles a library's code, checking its name (Redis's order of checks);
// `set` is only read for the "already exists" error, which UpdateSet checks again.
std::shared_ptr<const Library> MakeLibrary(std::string_view code, bool replace,
                                           const LibrarySet& set, std::string* error) {
  std::string engine;
  auto library = std::make_shared<Library>();
  if (!ParseLibraryHeader(code, &engine, &library->name, error)) return nullptr;
  if (!IsValidName(library->name)) {
    *error =
        "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
        "least one character long";
    return nullptr;
  }
  if (!helio::EqualsIgnoreCase(engine, "LUA")) {
    *error = helio::StrCat("ERR Engine '", engine, "' not found");
    return nullptr;
  }
  if (!replace && set.libraries.contains(library->name)) {
    *error = helio::StrCat("ERR Library '", library->name, "' already exists");
    return nullptr;
  }
  library->code = std::string(code);
  if (!CompileLibrary(library->name, code, &library->functions, error)) return nullptr;
  library->shapes = std::make_unique<std::atomic<ScriptShape>[]>(library->functions.size());
  for (size_t i = 0; i < library->functions.size(); ++i) library->shapes[i] = ScriptShape::kUnknown;
  return library;
}

std::string DumpPayload(const LibrarySet& set) {
  std::vector<std::string_view> codes;
  for (const auto& [name, library] : set.libraries) codes.push_back(library->code);
  return DumpFunctionPayload(codes);
}

// The libraries of a payload, compiled, in a set of their own; Redis's error otherwise.
bool ReadPayload(std::string_view payload, LibrarySet* libraries, std::string* error) {
  return ReadFunctionPayload(
      payload,
      [&](std::string code, std::string* error) {
        auto library = MakeLibrary(code, false, *libraries, error);
        return library != nullptr && Link(libraries, std::move(library), error);
      },
      error);
}

// --- FUNCTION STATS's running_script: the functions running on this thread, each
// registered by its FCALL for its duration.

struct RunningFunction {
  std::string_view name;
  CmdArgList command;
  std::chrono::steady_clock::time_point start;
};
thread_local std::vector<const RunningFunction*>* running_functions = nullptr;

class RunningScope {
 public:
  explicit RunningScope(const RunningFunction* function) : function_(function) {
    if (running_functions == nullptr) running_functions = new std::vector<const RunningFunction*>;
    running_functions->push_back(function);
  }
  ~RunningScope() { std::erase(*running_functions, function_); }

 private:
  const RunningFunction* function_;
};

// --- Commands

std::string SubcommandSyntaxError(std::string_view subcommand) {
  return helio::StrCat("ERR unknown subcommand or wrong number of arguments for '", subcommand,
                       "'. Try FUNCTION HELP.");
}

// The function named `name` (any case) in `set`, or nullptr.
const Function* FindFunction(const LibrarySet& set, std::string_view name) {
  // Lower-cased on the stack: no allocation per call for names of usual length.
  char buffer[64];
  std::string long_name;
  if (name.size() <= sizeof(buffer)) {
    for (size_t i = 0; i < name.size(); ++i) buffer[i] = helio::AsciiToLower(name[i]);
    name = std::string_view(buffer, name.size());
  } else {
    name = long_name = helio::AsciiStrToLower(name);
  }
  auto it = set.functions.find(absl::string_view(name.data(), name.size()));
  return it == set.functions.end() ? nullptr : &it->second;
}

// FCALL, FCALL_RO: function numkeys key... arg...
void FCall(CmdArgList args, ConnectionContext* cntx, bool read_only) {
  ReplyBuilder* rb = cntx->reply_builder();
  FeedScriptCommandToMonitors(args, cntx);
  std::shared_ptr<const LibrarySet> set = CurrentSet();
  const Function* found = FindFunction(*set, args[1]);
  if (found == nullptr) return rb->SendError("ERR Function not found");
  const Function& function = *found;
  const ScriptFlags& flags = function.flags;
  // Redis refuses such a call before running it (the function's flags make it a
  // deny-oom command); no-writes implies allow-oom.
  if (!flags.no_writes && !flags.allow_oom && OverMaxMemory()) {
    return rb->SendError(facade::kOomErr);
  }
  std::optional<int64_t> numkeys = ParseInt64(args[2]);
  if (!numkeys) return rb->SendError("ERR Bad number of keys provided");
  if (*numkeys > int64_t(args.size() - 3)) {
    return rb->SendError("ERR Number of keys can't be greater than number of args");
  }
  if (*numkeys < 0) return rb->SendError("ERR Number of keys can't be negative");
  if (std::string refusal = WriteRefusal(cntx->master_link);
      !flags.no_writes && !refusal.empty()) {
    return rb->SendError(refusal);  // Redis's dispatcher's, from the flags
  }
  if (read_only && !flags.no_writes) {
    return rb->SendError("ERR Can not execute a script with write flag using *_ro command.");
  }
  ScriptCall call{.keys = args.subspan(3, *numkeys),
                  .flags = flags,
                  .read_only = read_only || flags.no_writes,
                  .is_function = true,
                  .shape = function.shape};
  CmdArgList argv = args.subspan(3 + *numkeys);
  // FUNCTION STATS's duration counts from here, as the busy threshold does.
  const auto start = std::chrono::steady_clock::now();
  RunScript(*registry, call, cntx, [&](Interpreter* lua, ScriptReplyWriter* out) {
    std::string error;
    if (!EnsureLoaded(lua, *set, *function.library, &error)) return out->Error(error);
    RunningFunction running{function.info->name, args, start};
    RunningScope scope(&running);
    lua->CallFunction(function.info->name, call.keys, argv, out);
  });
}

// Sends the error; false: the libraries did not change.
bool Refused(ReplyBuilder* rb, std::string_view error) {
  rb->SendError(error);
  return false;
}

bool FunctionLoad(CmdArgList args, ReplyBuilder* rb) {
  bool replace = false;
  for (size_t i = 2; i + 1 < args.size(); ++i) {
    if (!ArgIs(args[i], "REPLACE")) {
      return Refused(rb, helio::StrCat("ERR Unknown option given: ", args[i]));
    }
    replace = true;
  }
  std::string error;
  auto library = MakeLibrary(args.back(), replace, *CurrentSet(), &error);
  if (library == nullptr) return Refused(rb, error);
  const std::string name = library->name;
  bool stored = UpdateSet([&](LibrarySet* set) {
    if (set->libraries.contains(name)) {
      if (!replace) {
        error = helio::StrCat("ERR Library '", name, "' already exists");
        return false;
      }
      Unlink(set, name);
    }
    return Link(set, std::move(library), &error);
  });
  stored ? rb->SendBulk(name) : rb->SendError(error);
  return stored;
}

void FunctionList(CmdArgList args, ReplyBuilder* rb) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (size_t i = 2; i < args.size(); ++i) {
    if (!with_code && ArgIs(args[i], "WITHCODE")) {
      with_code = true;
      continue;
    }
    if (!pattern && ArgIs(args[i], "LIBRARYNAME")) {
      if (i + 1 >= args.size()) return rb->SendError("ERR library name argument was not given");
      pattern = args[++i];
      continue;
    }
    return rb->SendError(helio::StrCat("ERR Unknown argument ", args[i]));
  }
  std::shared_ptr<const LibrarySet> set = CurrentSet();
  std::vector<const Library*> listed;
  for (const auto& [name, library] : set->libraries) {
    if (!pattern || core::GlobMatch(*pattern, name, /*nocase=*/true)) listed.push_back(&*library);
  }
  rb->StartArray(listed.size());
  for (const Library* library : listed) {
    rb->StartMap(with_code ? 4 : 3);
    rb->SendBulk("library_name");
    rb->SendBulk(library->name);
    rb->SendBulk("engine");
    rb->SendBulk("LUA");
    rb->SendBulk("functions");
    rb->StartArray(library->functions.size());
    for (const FunctionInfo& info : library->functions) {
      rb->StartMap(3);
      rb->SendBulk("name");
      rb->SendBulk(info.name);
      rb->SendBulk("description");
      info.has_description ? rb->SendBulk(info.description) : rb->SendNull();
      rb->SendBulk("flags");
      // In Redis's order, whatever the order they were given in.
      const ScriptFlags flags = FlagsOf(info);
      const std::pair<bool, std::string_view> names[] = {
          {flags.no_writes, "no-writes"},
          {flags.allow_oom, "allow-oom"},
          {flags.allow_stale, "allow-stale"},
          {flags.no_cluster, "no-cluster"},
          {flags.allow_cross_slot_keys, "allow-cross-slot-keys"}};
      rb->StartSet(std::count_if(std::begin(names), std::end(names),
                                 [](const auto& flag) { return flag.first; }));
      for (const auto& [set_flag, name] : names) {
        if (set_flag) rb->SendSimpleString(name);
      }
    }
    if (with_code) {
      rb->SendBulk("library_code");
      rb->SendBulk(library->code);
    }
  }
}

void FunctionStats(ReplyBuilder* rb) {
  struct Found {
    std::string name;
    std::vector<std::string> command;
    std::chrono::steady_clock::time_point start;
  };
  std::optional<Found> found;
  std::mutex found_mu;
  shard_set->pool()->AwaitOnAll([&](unsigned, helio::io::Proactor*) {
    if (running_functions == nullptr || running_functions->empty()) return;
    const RunningFunction* oldest = running_functions->front();
    std::lock_guard lock(found_mu);
    if (found && found->start <= oldest->start) return;
    found.emplace(Found{std::string(oldest->name),
                        std::vector<std::string>(oldest->command.begin(), oldest->command.end()),
                        oldest->start});
  });
  std::shared_ptr<const LibrarySet> set = CurrentSet();
  rb->StartMap(2);
  rb->SendBulk("running_script");
  if (found) {
    rb->StartMap(3);
    rb->SendBulk("name");
    rb->SendBulk(found->name);
    rb->SendBulk("command");
    rb->StartArray(found->command.size());
    for (const std::string& arg : found->command) rb->SendBulk(arg);
    rb->SendBulk("duration_ms");
    rb->SendLong(std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - found->start)
                     .count());
  } else {
    rb->SendNull();
  }
  rb->SendBulk("engines");
  rb->StartMap(1);
  rb->SendBulk("LUA");
  rb->StartMap(2);
  rb->SendBulk("libraries_count");
  rb->SendLong(set->libraries.size());
  rb->SendBulk("functions_count");
  rb->SendLong(set->functions.size());
}

// How libraries coming in (FUNCTION RESTORE, a snapshot) join those there are.
enum class Policy {
  kAppend,   // a library of the same name is an error
  kReplace,  // a library of the same name is replaced
  kFlush,    // the incoming ones replace all
};

// Puts `incoming`'s libraries into `set`; false with Redis's error when kAppend meets one
// that exists (nothing changed then: the caller's UpdateSet drops the edit).
bool MergeLibraries(LibrarySet* set, LibrarySet incoming, Policy policy, std::string* error) {
  if (policy == Policy::kFlush) {
    set->libraries = std::move(incoming.libraries);
    set->functions = std::move(incoming.functions);
    return true;
  }
  for (const auto& [name, library] : incoming.libraries) {
    if (!set->libraries.contains(name)) continue;
    if (policy == Policy::kAppend) {
      *error = helio::StrCat("ERR Library ", name, " already exists");
      return false;
    }
    Unlink(set, name);
  }
  for (const auto& [name, library] : incoming.libraries) {
    if (!Link(set, library, error)) return false;
  }
  return true;
}

bool FunctionRestore(CmdArgList args, ReplyBuilder* rb) {
  if (args.size() > 4) return Refused(rb, SubcommandSyntaxError(args[1]));
  Policy policy = Policy::kAppend;
  if (args.size() == 4) {
    if (ArgIs(args[3], "APPEND")) {
      policy = Policy::kAppend;
    } else if (ArgIs(args[3], "REPLACE")) {
      policy = Policy::kReplace;
    } else if (ArgIs(args[3], "FLUSH")) {
      policy = Policy::kFlush;
    } else {
      return Refused(rb, 
          "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
    }
  }
  LibrarySet restored;
  std::string error;
  if (!ReadPayload(args[2], &restored, &error)) return Refused(rb, error);
  bool stored = UpdateSet([&](LibrarySet* set) {
    return MergeLibraries(set, std::move(restored), policy, &error);
  });
  stored ? rb->SendOk() : rb->SendError(error);
  return stored;
}

void CmdFunction(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  // Redis flags these two deny-oom, and these four write (which subcommands do not say).
  if ((ArgIs(args[1], "LOAD") || ArgIs(args[1], "RESTORE")) && !cntx->master_link &&
      OverMaxMemory()) {
    return rb->SendError(facade::kOomErr);
  }
  const std::string refusal = WriteRefusal(cntx->master_link);
  if ((ArgIs(args[1], "LOAD") || ArgIs(args[1], "RESTORE") || ArgIs(args[1], "DELETE") ||
       ArgIs(args[1], "FLUSH")) &&
      !refusal.empty()) {
    return rb->SendError(refusal);
  }
  // The changes of the libraries reach the replicas as they were sent, as in Redis.
  if (ArgIs(args[1], "LOAD")) {
    if (FunctionLoad(args, rb)) PropagateToReplicas(args, cntx->db_index);
    return;
  }
  if (ArgIs(args[1], "LIST")) return FunctionList(args, rb);
  if (ArgIs(args[1], "DELETE")) {
    std::string_view name = args[2];
    bool deleted = UpdateSet([&](LibrarySet* set) {
      if (!set->libraries.contains(name)) return false;
      Unlink(set, name);
      return true;
    });
    if (!deleted) return rb->SendError("ERR Library not found");
    PropagateToReplicas(args, cntx->db_index);
    return rb->SendOk();
  }
  if (ArgIs(args[1], "FLUSH")) {
    if (args.size() > 3) return rb->SendError(SubcommandSyntaxError(args[1]));
    if (args.size() == 3 && !ArgIs(args[2], "ASYNC") && !ArgIs(args[2], "SYNC")) {
      return rb->SendError("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    }
    UpdateSet([](LibrarySet* set) {
      set->libraries.clear();
      set->functions.clear();
      return true;
    });
    PropagateToReplicas(args, cntx->db_index);
    return rb->SendOk();
  }
  if (ArgIs(args[1], "DUMP")) return rb->SendBulk(DumpPayload(*CurrentSet()));
  if (ArgIs(args[1], "RESTORE")) {
    if (FunctionRestore(args, rb)) PropagateToReplicas(args, cntx->db_index);
    return;
  }
  if (ArgIs(args[1], "STATS")) return FunctionStats(rb);
  if (ArgIs(args[1], "KILL")) {
    std::string error = KillBusyScript(true);
    return error.empty() ? rb->SendOk() : rb->SendError(error);
  }
  constexpr std::string_view kHelp[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME "
      "argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored "
      "using FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
      "HELP",
      "    Prints this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

}  // namespace

size_t FunctionFamily::FunctionCount() { return CurrentSet()->functions.size(); }

size_t FunctionFamily::LibraryCount() { return CurrentSet()->libraries.size(); }

std::vector<std::string> FunctionFamily::LibraryCodes() {
  std::vector<std::string> codes;
  for (const auto& [name, library] : CurrentSet()->libraries) codes.push_back(library->code);
  return codes;
}

std::string FunctionFamily::LoadLibraries(const std::vector<std::string>& codes,
                                          bool keep_others, bool replace) {
  LibrarySet loaded;
  std::string error;
  for (const std::string& code : codes) {
    auto library = MakeLibrary(code, false, loaded, &error);
    if (library == nullptr || !Link(&loaded, std::move(library), &error)) return error;
  }
  const Policy policy = !keep_others ? Policy::kFlush : replace ? Policy::kReplace : Policy::kAppend;
  UpdateSet([&](LibrarySet* set) { return MergeLibraries(set, std::move(loaded), policy, &error); });
  return error;
}

bool FunctionFamily::DeclaresNoWrites(CmdArgList args) {
  if (args.size() < 2) return false;
  const std::shared_ptr<const LibrarySet> set = CurrentSet();
  const Function* function = FindFunction(*set, args[1]);
  return function != nullptr && function->flags.no_writes;
}

void FunctionFamily::Register(facade::CommandRegistry* r) {
  using namespace facade;
  registry = r;
  constexpr uint32_t kFcallFlags =
      kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdNoMandatoryKeys | kCmdScript;
  constexpr KeySpec kFcallKeys{
      .begin_index = 2, .key_step = 1, .keynum = true, .keynum_index = 0, .first_key_index = 1};
  constexpr uint32_t kAcl = kAclSlow | kAclScripting;
  r->Add("FCALL", -3, kFcallFlags | kCmdMayReplicate, kFcallKeys.WithFlags(kKeyRW | kKeyAccess | kKeyUpdate), kAcl,
         [](CmdArgList args, ConnectionContext* cntx) { FCall(args, cntx, false); });
  r->Add("FCALL_RO", -3, kFcallFlags | kCmdReadOnly, kFcallKeys.WithFlags(kKeyRO | kKeyAccess),
         kAcl, [](CmdArgList args, ConnectionContext* cntx) { FCall(args, cntx, true); });
  r->Add("FUNCTION", -2, kCmdNoScript, kNoKeys, kAclSlow, CmdFunction,
         {{"LOAD", -3, kAclWrite | kAclSlow | kAclScripting},
          {"LIST", -2, kAclSlow | kAclScripting},
          {"DELETE", 3, kAclWrite | kAclSlow | kAclScripting},
          {"FLUSH", -2, kAclWrite | kAclSlow | kAclScripting},
          {"DUMP", 2, kAclSlow | kAclScripting},
          {"RESTORE", -3, kAclWrite | kAclSlow | kAclScripting},
          {"STATS", 2, kAclSlow | kAclScripting},
          {"KILL", 2, kAclSlow | kAclScripting},
          {"HELP", 2, kAclSlow | kAclScripting}});
}

}  // namespace damselfly
