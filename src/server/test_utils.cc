#include "src/server/test_utils.h"

#include <glog/logging.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>

#include "helio/base/strings.h"
#include "helio/fibers/sync.h"
#include "helio/io/proactor_pool.h"
#include "src/facade/resp_connection.h"
#include "src/server/connection_family.h"
#include "src/server/engine_shard_set.h"
#include "src/server/main_service.h"
#include "src/server/replica.h"
#include "src/server/replication.h"

namespace damselfly {

namespace {

using Type = RespValue::Type;

// Longer than any command of a unit test takes, even under ASAN on a loaded machine; a
// command still running then is stuck (a lost wake-up, a lock never released), and
// failing beats waiting for ctest's timeout without saying which command it was.
constexpr auto kCommandTimeout = std::chrono::seconds(60);
constexpr unsigned kDatabases = 16;  // --dbnum's default
constexpr unsigned kExpiryHz = 10;   // --hz's default

// Runs fn() in a new fiber on `proactor`'s thread and waits for it. `what` names the
// work in the failure message.
void RunInFiber(helio::io::Proactor* proactor, const std::function<void()>& fn,
                std::string_view what) {
  helio::fibers::Done done;
  proactor->LaunchFiber([&] {
    fn();
    done.Notify();
  });
  if (!done.WaitFor(kCommandTimeout)) {
    LOG(FATAL) << what << " on thread " << proactor->index() << " did not finish in "
               << kCommandTimeout.count() << " s";
  }
}

// The server of the running suite: pool, shards and Service, started and stopped as
// damselfly_main.cc does (minus listeners). Main thread only.
class TestServer {
 public:
  explicit TestServer(unsigned num_shards)
      : num_shards_(num_shards), pool_(num_shards), shards_(&pool_), service_(&pool_) {
    pool_.Run();
    shard_set = &shards_;
    shards_.Init(num_shards, kDatabases, kExpiryHz);
    service_.RegisterCommands();
  }

  ~TestServer() {
    StopReplicaOf();
    StopReplication();
    shards_.Shutdown();
    shard_set = nullptr;
    pool_.Stop();
  }

  unsigned num_shards() const { return num_shards_; }
  helio::io::ProactorPool* pool() { return &pool_; }
  Service* service() { return &service_; }

 private:
  const unsigned num_shards_;
  helio::io::ProactorPool pool_;
  EngineShardSet shards_;
  Service service_;
};

std::unique_ptr<TestServer> server;

// ------------------------------------------------------------------ reply parsing

// A command as a failure message shows it: "set k v".
std::string Quoted(absl::Span<const std::string_view> args) {
  std::string out = "\"";
  for (size_t i = 0; i < args.size(); ++i)
    helio::StrAppend(&out, i ? " " : "", helio::CEscape(args[i]));
  return out + "\"";
}

bool ReadLine(std::string_view* in, std::string_view* line) {
  size_t end = in->find("\r\n");
  if (end == std::string_view::npos) return false;
  *line = in->substr(0, end);
  in->remove_prefix(end + 2);
  return true;
}

// Parses the reply at the front of *in into *out and drops it from *in; false when it is
// malformed or incomplete.
bool ParseOne(std::string_view* in, RespValue* out) {
  if (in->empty()) return false;
  const char marker = in->front();
  in->remove_prefix(1);
  std::string_view line;
  if (!ReadLine(in, &line)) return false;
  switch (marker) {
    case '+':
      out->type = Type::kStatus;
      out->str = line;
      return true;
    case '-':
      out->type = Type::kError;
      out->str = line;
      return true;
    case ':':
      out->type = Type::kInt;
      return helio::SimpleAtoi(line, &out->integer);
    case ',':
      out->type = Type::kDouble;
      out->str = line;
      return !line.empty();
    case '(':
      out->type = Type::kBigNumber;
      out->str = line;
      return !line.empty();
    case '#':
      out->type = Type::kBool;
      out->integer = line == "t";
      return line == "t" || line == "f";
    case '_':
      out->type = Type::kNull;
      return line.empty();
    case '$':
    case '=': {
      int64_t length;
      if (!helio::SimpleAtoi(line, &length)) return false;
      if (length == -1 && marker == '$') {
        out->type = Type::kNull;
        return true;
      }
      if (length < 0 || in->size() < size_t(length) + 2) return false;
      std::string_view text = in->substr(0, length);
      if (in->substr(length, 2) != "\r\n") return false;
      in->remove_prefix(length + 2);
      if (marker == '$') {
        out->type = Type::kBulk;
        out->str = text;
        return true;
      }
      out->type = Type::kVerbatim;  // "txt:" or "mkd:" before the text
      if (text.size() < 4 || text[3] != ':') return false;
      out->str = text.substr(4);
      return true;
    }
    case '*':
    case '%':
    case '~':
    case '>': {
      int64_t length;
      if (!helio::SimpleAtoi(line, &length)) return false;
      if (length == -1 && marker == '*') {
        out->type = Type::kNullArray;
        return true;
      }
      if (length < 0) return false;
      out->type = marker == '*'   ? Type::kArray
                  : marker == '%' ? Type::kMap
                  : marker == '~' ? Type::kSet
                                  : Type::kPush;
      const int64_t count = marker == '%' ? 2 * length : length;
      for (int64_t i = 0; i < count; ++i) {
        if (!ParseOne(in, &out->elements.emplace_back())) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

bool IsText(Type type) {
  return type == Type::kStatus || type == Type::kBulk || type == Type::kVerbatim ||
         type == Type::kDouble || type == Type::kBigNumber;
}

bool IsAggregate(Type type) {
  return type == Type::kArray || type == Type::kMap || type == Type::kSet || type == Type::kPush;
}

// A matcher from a predicate: what most reply matchers are.
class PredicateMatcher : public testing::MatcherInterface<const RespValue&> {
 public:
  PredicateMatcher(std::string description, std::function<bool(const RespValue&)> predicate)
      : description_(std::move(description)), predicate_(std::move(predicate)) {}

  bool MatchAndExplain(const RespValue& value, testing::MatchResultListener*) const override {
    return predicate_(value);
  }
  void DescribeTo(std::ostream* os) const override { *os << description_; }

 private:
  std::string description_;
  std::function<bool(const RespValue&)> predicate_;
};

testing::Matcher<const RespValue&> Predicate(std::string description,
                                             std::function<bool(const RespValue&)> predicate) {
  return testing::MakeMatcher(new PredicateMatcher(std::move(description), std::move(predicate)));
}

class ElementsMatcher : public testing::MatcherInterface<const RespValue&> {
 public:
  explicit ElementsMatcher(testing::Matcher<const std::vector<RespValue>&> elements)
      : elements_(std::move(elements)) {}

  bool MatchAndExplain(const RespValue& value,
                       testing::MatchResultListener* listener) const override {
    if (!IsAggregate(value.type)) {
      *listener << "which is no array";
      return false;
    }
    return elements_.MatchAndExplain(value.elements, listener);
  }
  void DescribeTo(std::ostream* os) const override {
    *os << "an array whose elements ";
    elements_.DescribeTo(os);
  }

 private:
  testing::Matcher<const std::vector<RespValue>&> elements_;
};

}  // namespace

std::vector<RespValue> ParseReplies(std::string_view data) {
  std::vector<RespValue> replies;
  std::string_view rest = data;
  while (!rest.empty()) {
    const size_t offset = data.size() - rest.size();
    if (!ParseOne(&rest, &replies.emplace_back())) {
      ADD_FAILURE() << "malformed reply at byte " << offset << " of \"" << helio::CEscape(data)
                    << "\"";
      replies.pop_back();
      break;
    }
  }
  return replies;
}

bool operator==(const RespValue& value, std::string_view text) {
  return IsText(value.type) && value.str == text;
}

bool operator==(const RespValue& value, int64_t integer) {
  return value.type == Type::kInt && value.integer == integer;
}

std::ostream& operator<<(std::ostream& os, const RespValue& value) {
  auto elements = [&](const char* open, const char* close) -> std::ostream& {
    os << open;
    for (size_t i = 0; i < value.elements.size(); ++i) {
      if (i > 0) os << (value.type == Type::kMap && i % 2 == 1 ? ": " : ", ");
      os << value.elements[i];
    }
    return os << close;
  };
  switch (value.type) {
    case Type::kStatus:
      return os << value.str;
    case Type::kError:
      return os << "(error) " << value.str;
    case Type::kInt:
      return os << "(integer) " << value.integer;
    case Type::kBulk:
      return os << '"' << helio::CEscape(value.str) << '"';
    case Type::kNull:
      return os << "(nil)";
    case Type::kNullArray:
      return os << "(nil array)";
    case Type::kArray:
      return elements("[", "]");
    case Type::kMap:
      return elements("{", "}");
    case Type::kSet:
      return elements("(set) [", "]");
    case Type::kPush:
      return elements("(push) [", "]");
    case Type::kDouble:
      return os << "(double) " << value.str;
    case Type::kBool:
      return os << (value.integer ? "(true)" : "(false)");
    case Type::kBigNumber:
      return os << "(big number) " << value.str;
    case Type::kVerbatim:
      return os << "(verbatim) \"" << helio::CEscape(value.str) << '"';
  }
  return os;
}

testing::Matcher<const RespValue&> ErrArg(std::string_view text) {
  return Predicate(helio::StrCat("an error containing \"", text, "\""),
                   [text = std::string(text)](const RespValue& value) {
                     return value.type == Type::kError && value.str.find(text) != std::string::npos;
                   });
}

testing::Matcher<const RespValue&> IntArg(int64_t integer) {
  return Predicate(helio::StrCat("(integer) ", integer),
                   [integer](const RespValue& value) { return value == integer; });
}

testing::Matcher<const RespValue&> IsNil() {
  return Predicate("(nil)", [](const RespValue& value) {
    return value.type == Type::kNull || value.type == Type::kNullArray;
  });
}

testing::Matcher<const RespValue&> ArrLen(size_t length) {
  return Predicate(helio::StrCat("an array of ", length, " elements"),
                   [length](const RespValue& value) {
                     return IsAggregate(value.type) && value.elements.size() == length;
                   });
}

testing::Matcher<const RespValue&> RespArray(
    testing::Matcher<const std::vector<RespValue>&> elements) {
  return testing::MakeMatcher(new ElementsMatcher(std::move(elements)));
}

// ------------------------------------------------------------------ TestConnection

// The connection state is a RespConnection's that never had a socket: commands that
// look at their connection (CLIENT LIST/KILL, SLOWLOG's client address) see a real one,
// with no peer address. It is made, used and destroyed on its proactor's thread.
class TestConnection::Impl {
 public:
  Impl(Service* service, helio::io::Proactor* proactor) : service_(service), proactor_(proactor) {
    RunInFiber(
        proactor_,
        [this] {
          // As damselfly_main's listener does: the password in force when it connects.
          connection_ = std::make_unique<facade::RespConnection>(service_, !RequirePass().empty());
          service_->OnConnectionOpen(connection_->context());
        },
        "opening a connection");
  }

  ~Impl() {
    RunInFiber(
        proactor_,
        [this] {
          service_->OnConnectionClose(connection_->context());
          connection_.reset();
        },
        "closing a connection");
  }

  std::vector<RespValue> RunPipeline(absl::Span<const std::vector<std::string_view>> commands) {
    std::string output;
    RunInFiber(
        proactor_,
        [&] {
          std::vector<facade::CmdArgList> batch(commands.begin(), commands.end());
          facade::ConnectionContext* context = connection_->context();
          service_->DispatchMany(batch, context);
          output = context->reply_builder()->output();
          context->reply_builder()->ClearOutput();
        },
        helio::StrCat(Quoted(commands.front()), commands.size() > 1 ? " and what follows" : ""));
    return ParseReplies(output);
  }

  std::vector<RespValue> TakePushes() {
    std::string pushes;
    RunInFiber(
        proactor_,
        [&] {
          if (facade::PushQueue* queue = connection_->push_queue()) pushes = queue->TakeQueued();
        },
        "taking pushes");
    return ParseReplies(pushes);
  }

  void Start(std::vector<std::string> command) {
    started_ = std::make_unique<Started>();
    started_->command = std::move(command);
    proactor_->LaunchFiber([this, started = started_.get()] {
      std::vector<std::string_view> args(started->command.begin(), started->command.end());
      facade::CmdArgList batch[] = {args};
      facade::ConnectionContext* context = connection_->context();
      service_->DispatchMany(batch, context);
      started->output = context->reply_builder()->output();
      context->reply_builder()->ClearOutput();
      started->done.Notify();
    });
  }

  std::vector<RespValue> Finish() {
    if (!started_->done.WaitFor(kCommandTimeout)) {
      std::vector<std::string_view> args(started_->command.begin(), started_->command.end());
      LOG(FATAL) << Quoted(args) << " started on thread " << proactor_->index()
                 << " did not finish in " << kCommandTimeout.count() << " s";
    }
    std::vector<RespValue> replies = ParseReplies(started_->output);
    started_.reset();
    return replies;
  }

  helio::io::Proactor* proactor() const { return proactor_; }
  facade::ConnectionContext* context() { return connection_->context(); }

 private:
  // A command run by Start: its arguments (which must outlive it) and its reply.
  struct Started {
    std::vector<std::string> command;
    std::string output;
    helio::fibers::Done done;
  };

  Service* const service_;
  helio::io::Proactor* const proactor_;
  std::unique_ptr<facade::RespConnection> connection_;
  std::unique_ptr<Started> started_;
};

TestConnection::TestConnection(Service* service, helio::io::Proactor* proactor)
    : impl_(std::make_unique<Impl>(service, proactor)) {}

TestConnection::~TestConnection() = default;

std::vector<RespValue> TestConnection::TakePushes() { return impl_->TakePushes(); }

RespValue TestConnection::Run(facade::CmdArgList args) {
  std::vector<std::string_view> command(args.begin(), args.end());
  std::vector<RespValue> replies = RunPipeline({command});
  if (replies.size() != 1) {
    ADD_FAILURE() << replies.size() << " replies to " << Quoted(command);
    return RespValue{.type = Type::kError, .str = "(no reply)"};
  }
  return std::move(replies.front());
}

std::vector<RespValue> TestConnection::RunPipeline(
    absl::Span<const std::vector<std::string_view>> commands) {
  if (commands.empty()) return {};
  return impl_->RunPipeline(commands);
}

void TestConnection::Start(std::vector<std::string> command) {
  impl_->Start(std::move(command));
}

RespValue TestConnection::Finish() {
  std::vector<RespValue> replies = impl_->Finish();
  if (replies.size() != 1) {
    ADD_FAILURE() << replies.size() << " replies to a started command";
    return RespValue{.type = Type::kError, .str = "(no reply)"};
  }
  return std::move(replies.front());
}

unsigned TestConnection::thread() const { return impl_->proactor()->index(); }

facade::ConnectionContext* TestConnection::context() { return impl_->context(); }

// ------------------------------------------------------------------ ServiceTest

void ServiceTest::SetUp() {
  if (server == nullptr || server->num_shards() != GetParam()) {
    server.reset();
    server = std::make_unique<TestServer>(GetParam());
  }
  connections_.resize(GetParam());
  FlushAll();
}

void ServiceTest::TearDown() { connections_.clear(); }

void ServiceTest::TearDownTestSuite() { server.reset(); }

Service* ServiceTest::service() const { return server->service(); }

RespValue ServiceTest::RunOnThread(unsigned thread, facade::CmdArgList args) {
  CHECK_LT(thread, connections_.size());
  if (connections_[thread] == nullptr) connections_[thread] = Connect(thread);
  return connections_[thread]->Run(args);
}

std::unique_ptr<TestConnection> ServiceTest::Connect(unsigned thread) {
  CHECK_LT(thread, server->pool()->size());
  return std::make_unique<TestConnection>(server->service(), server->pool()->at(thread));
}

void ServiceTest::FlushAll() { EXPECT_EQ(Run({"flushall"}), "OK"); }

int ServiceTest::BlockedClients() {
  RespValue info = Run({"info", "clients"});
  std::string_view text = info.str;
  size_t at = text.find("blocked_clients:");
  if (at == std::string_view::npos) return -1;
  text.remove_prefix(at + strlen("blocked_clients:"));
  return std::atoi(std::string(text.substr(0, text.find('\r'))).c_str());
}

void ServiceTest::WaitBlocked(int count) {
  for (int i = 0; i < 5000 && BlockedClients() != count; ++i) usleep(1000);
  ASSERT_EQ(BlockedClients(), count);
}

std::string ServiceTest::KeyOnShard(ShardId shard, std::string_view prefix) const {
  CHECK_LT(shard, num_shards());
  for (int i = 0;; ++i) {
    std::string key = helio::StrCat(prefix, ":", i);
    if (shard_set->ShardOf(key) == shard) return key;
  }
}

std::string ArityError(std::string_view command) {
  return helio::StrCat("ERR wrong number of arguments for '", command, "' command");
}

}  // namespace damselfly
