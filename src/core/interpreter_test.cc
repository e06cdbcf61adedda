// The interpreter in-process: scripts and functions against a fake command bridge that
// returns canned replies. Every expected text below was read from redis-server 7.0.15.
#include "src/core/interpreter.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace damselfly {
namespace {

std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out.append(part);
  return out;
}

std::string BulkOf(std::string_view text) {
  return Cat({"$", std::to_string(text.size()), "\r\n", text, "\r\n"});
}

// Renders the writer calls as the bytes redis-server sends a RESP2 (or RESP3) client.
class RespWriter : public ScriptReplyWriter {
 public:
  explicit RespWriter(bool resp3 = false) : resp3_(resp3) {}
  void Nil() override { out_ += resp3_ ? "_\r\n" : "$-1\r\n"; }
  void Integer(int64_t value) override { absl::StrAppend(&out_, ":", value, "\r\n"); }
  void Bulk(std::string_view value) override {
    out_ += Cat({"$", std::to_string(value.size()), "\r\n", value, "\r\n"});
  }
  void Status(std::string_view value) override { out_ += Cat({"+", value, "\r\n"}); }
  void Error(std::string_view message) override { out_ += Cat({"-", message, "\r\n"}); }
  void CommandError(std::string_view message) override {
    ++command_errors;
    Error(message);
  }
  void Array(size_t length) override { absl::StrAppend(&out_, "*", length, "\r\n"); }
  void Map(size_t pairs) override {
    absl::StrAppend(&out_, resp3_ ? "%" : "*", resp3_ ? pairs : 2 * pairs, "\r\n");
  }
  void Set(size_t length) override { absl::StrAppend(&out_, resp3_ ? "~" : "*", length, "\r\n"); }
  void Double(double value) override {
    std::string text = absl::StrCat(value);
    if (resp3_)
      absl::StrAppend(&out_, ",", text, "\r\n");
    else
      Bulk(text);
  }
  void Bool(bool value) override {
    if (resp3_)
      out_ += value ? "#t\r\n" : "#f\r\n";
    else
      Integer(value ? 1 : 0);
  }
  void BigNumber(std::string_view digits) override {
    if (resp3_)
      out_ += Cat({"(", digits, "\r\n"});
    else
      Bulk(digits);
  }
  void Verbatim(std::string_view text, std::string_view format) override {
    if (resp3_)
      out_ += Cat({"=", std::to_string(text.size() + 4), "\r\n", format, ":", text, "\r\n"});
    else
      Bulk(text);
  }

  std::string Take() { return std::move(out_); }

  int command_errors = 0;  // errors written as a command's (CommandError)

 private:
  bool resp3_;
  std::string out_;
};

class InterpreterTest : public ::testing::Test {
 protected:
  InterpreterTest() {
    interpreter_.set_call(
        [this](absl::Span<const std::string_view> args, bool resp3, std::string* reply) {
          std::string line;
          for (std::string_view arg : args) line.append(line.empty() ? "" : " ").append(arg);
          calls_.push_back(line);
          resp3_calls_.push_back(resp3);
          auto it = replies_.find(line);
          *reply = it != replies_.end() ? it->second
                                        : "-ERR Unknown Redis command called from script\r\n";
        });
    interpreter_.set_log([this](int level, std::string_view message) {
      logs_.push_back(std::to_string(level) + ":" + std::string(message));
    });
  }

  // EVAL body 0 [argv...] as a RESP2 client sees it.
  std::string Eval(std::string_view body, std::vector<std::string_view> keys = {},
                   std::vector<std::string_view> argv = {}, bool resp3_client = false) {
    std::string sha = Interpreter::Sha1Hex(body);
    std::string error;
    if (!interpreter_.HasScript(sha) && !interpreter_.AddScript(sha, body, &error))
      return "-" + error + "\r\n";
    RespWriter writer(resp3_client);
    interpreter_.RunScript(sha, keys, argv, &writer);
    last_command_errors_ = writer.command_errors;
    return writer.Take();
  }

  std::string Suffix(std::string_view body, int line = 1) {
    return absl::StrCat(" script: ", Interpreter::Sha1Hex(body), ", on @user_script:", line,
                        ".\r\n");
  }

  std::string Load(std::string_view code, std::vector<Interpreter::FunctionInfo>* infos = nullptr) {
    std::vector<Interpreter::FunctionInfo> ignored;
    std::string error;
    size_t space = code.find("name=");
    size_t end = code.find('\n');
    std::string lib(code.substr(space + 5, end - space - 5));
    if (!interpreter_.LoadLibrary(lib, code, infos ? infos : &ignored, &error)) return error;
    return "OK";
  }

  std::string Fcall(std::string_view name, std::vector<std::string_view> keys = {},
                    std::vector<std::string_view> argv = {}) {
    RespWriter writer;
    interpreter_.CallFunction(name, keys, argv, &writer);
    return writer.Take();
  }

  Interpreter interpreter_;
  std::map<std::string, std::string> replies_;
  std::vector<std::string> calls_;
  std::vector<bool> resp3_calls_;
  std::vector<std::string> logs_;
  int last_command_errors_ = 0;  // of the last Eval
};

TEST_F(InterpreterTest, Sha1Hex) {
  EXPECT_EQ(Interpreter::Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Eval("return redis.sha1hex('Pizza & Mandolino')"),
            "$40\r\n74822d82031af7493c20eefa13bd07ec4fada82f\r\n");
  EXPECT_EQ(Eval("return redis.sha1hex(1)"), "$40\r\n356a192b7913b04c54574d18c28d46e6395428ab\r\n");
  EXPECT_EQ(Eval("return redis.sha1hex({})"),
            "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n");
  std::string body = "return redis.sha1hex()";
  EXPECT_EQ(Eval(body), "-ERR wrong number of arguments" + Suffix(body));
}

TEST_F(InterpreterTest, LuaToReply) {
  EXPECT_EQ(Eval("return {1,2,3,'ciao',{1,2}}"),
            "*5\r\n:1\r\n:2\r\n:3\r\n$4\r\nciao\r\n*2\r\n:1\r\n:2\r\n");
  EXPECT_EQ(Eval("return {1, 'x', {ok='a'}, {err='b'}, true, false, 3.5}"),
            "*7\r\n:1\r\n$1\r\nx\r\n+a\r\n-b\r\n:1\r\n$-1\r\n:3\r\n");
  EXPECT_EQ(Eval("return {1,2,nil,4}"), "*2\r\n:1\r\n:2\r\n");
  EXPECT_EQ(Eval("local t = {} t[2] = 1 return t"), "*0\r\n");
  EXPECT_EQ(Eval("return {[1]=1, [2]=2, x=3}"), "*2\r\n:1\r\n:2\r\n");
  EXPECT_EQ(Eval("return 3.99"), ":3\r\n");
  EXPECT_EQ(Eval("return -3.99"), ":-3\r\n");
  EXPECT_EQ(Eval("return true"), ":1\r\n");
  EXPECT_EQ(Eval("return false"), "$-1\r\n");
  EXPECT_EQ(Eval("return nil"), "$-1\r\n");
  EXPECT_EQ(Eval("return function() end"), "$-1\r\n");
  EXPECT_EQ(Eval("return 1e300"), ":-9223372036854775808\r\n");
  EXPECT_EQ(Eval("return 0/0"), ":-9223372036854775808\r\n");
  EXPECT_EQ(Eval("return 9007199254740993"), ":9007199254740992\r\n");
  EXPECT_EQ(Eval("return {ok='fine'}"), "+fine\r\n");
  EXPECT_EQ(Eval("return {err='bad'}"), "-bad\r\n");
  EXPECT_EQ(Eval("return {err='x', ok='y'}"), "-x\r\n");
  EXPECT_EQ(Eval("return {err=1}"), "*0\r\n");
  EXPECT_EQ(Eval("return {ok=1}"), "*0\r\n");
  EXPECT_EQ(Eval("return {err='a\\r\\nb'}"), "-a  b\r\n");
  EXPECT_EQ(Eval("return {ok='a\\nb'}"), "+a b\r\n");
  EXPECT_EQ(Eval("return {double=3.5}"), "$3\r\n3.5\r\n");
  EXPECT_EQ(Eval("return {double='x'}"), "*0\r\n");
  EXPECT_EQ(Eval("return {big_number='123'}"), "$3\r\n123\r\n");
  EXPECT_EQ(Eval("return {map={a=1}}"), "*2\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(Eval("return {set={a=true}}"), "*1\r\n$1\r\na\r\n");
  EXPECT_EQ(Eval("return {verbatim_string={format='txt', string='hi'}}"), "$2\r\nhi\r\n");
}

TEST_F(InterpreterTest, LuaToReplyResp3) {
  EXPECT_EQ(Eval("return {double=3.5}", {}, {}, true), ",3.5\r\n");
  EXPECT_EQ(Eval("return {big_number='123'}", {}, {}, true), "(123\r\n");
  EXPECT_EQ(Eval("return {big_number='123\\r\\n123'}", {}, {}, true), "(123  123\r\n");
  EXPECT_EQ(Eval("return {map={a=1}}", {}, {}, true), "%1\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(Eval("return {set={a=true}}", {}, {}, true), "~1\r\n$1\r\na\r\n");
  EXPECT_EQ(Eval("return {verbatim_string={format='txt', string='hi'}}", {}, {}, true),
            "=6\r\ntxt:hi\r\n");
  // true/false follow the script's protocol, not the client's.
  EXPECT_EQ(Eval("return true", {}, {}, true), ":1\r\n");
  EXPECT_EQ(Eval("return false", {}, {}, true), "_\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return true", {}, {}, true), "#t\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return false", {}, {}, true), "#f\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return true"), ":1\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return false"), ":0\r\n");
}

TEST_F(InterpreterTest, RecursiveTableStops) {
  std::string reply = Eval("local t = {} t[1] = t return t");
  EXPECT_TRUE(absl::EndsWith(reply, "*1\r\n-ERR reached lua stack limit\r\n")) << reply;
  EXPECT_EQ(Eval("return 1"), ":1\r\n");
}

TEST_F(InterpreterTest, ReplyToLua) {
  replies_["get k"] = "$1\r\nv\r\n";
  replies_["get none"] = "$-1\r\n";
  replies_["ping"] = "+PONG\r\n";
  replies_["incr k"] = ":12\r\n";
  replies_["lrange l 0 -1"] = "*2\r\n$1\r\na\r\n$1\r\nb\r\n";
  replies_["mget a b"] = "*2\r\n$-1\r\n$1\r\nx\r\n";
  replies_["blpop l 0"] = "*-1\r\n";
  replies_["lpush k x"] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
  EXPECT_EQ(Eval("return redis.call('get', 'k')"), "$1\r\nv\r\n");
  EXPECT_EQ(Eval("return type(redis.call('get', 'none'))"), "$7\r\nboolean\r\n");
  EXPECT_EQ(Eval("return redis.call('get', 'none')"), "$-1\r\n");
  EXPECT_EQ(Eval("return type(redis.call('ping'))"), "$5\r\ntable\r\n");
  EXPECT_EQ(Eval("return redis.call('ping').ok"), "$4\r\nPONG\r\n");
  EXPECT_EQ(Eval("return redis.call('ping')"), "+PONG\r\n");
  EXPECT_EQ(Eval("return redis.call('incr', 'k') + 1"), ":13\r\n");
  EXPECT_EQ(Eval("return redis.call('lrange', 'l', 0, -1)"), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  EXPECT_EQ(Eval("return redis.call('mget', 'a', 'b')"), "*2\r\n$-1\r\n$1\r\nx\r\n");
  EXPECT_EQ(Eval("return tostring(redis.call('blpop', 'l', 0))"), "$5\r\nfalse\r\n");
  EXPECT_EQ(Eval("local e = redis.pcall('lpush', 'k', 'x') return {type(e), e.err}"),
            "*2\r\n$5\r\ntable\r\n$65\r\nWRONGTYPE Operation against a key holding the wrong "
            "kind of value\r\n");
  EXPECT_EQ(Eval("return redis.pcall('lpush', 'k', 'x')"),
            "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
  std::string body = "return redis.call('lpush', 'k', 'x')";
  EXPECT_EQ(Eval(body),
            "-WRONGTYPE Operation against a key holding the wrong kind of value" + Suffix(body));
  EXPECT_FALSE(resp3_calls_.back());
}

TEST_F(InterpreterTest, ReplyToLuaResp3) {
  replies_["hgetall h"] = "%1\r\n$1\r\na\r\n$1\r\n1\r\n";
  replies_["smembers s"] = "~2\r\n$1\r\na\r\n$1\r\nb\r\n";
  replies_["zscore z a"] = ",1.5\r\n";
  replies_["get none"] = "_\r\n";
  replies_["bool t"] = "#t\r\n";
  replies_["bool f"] = "#f\r\n";
  replies_["big"] = "(1234567999999999999999999999999999999\r\n";
  replies_["verbatim"] = "$25\r\ntxt:This is a verbatim\nstring\r\n";
  replies_["verbatim"] = "=29\r\ntxt:This is a verbatim\nstring\r\n";
  replies_["attr"] = "|1\r\n+key\r\n:1\r\n:42\r\n";
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('hgetall', 'h').map.a"), "$1\r\n1\r\n");
  EXPECT_TRUE(resp3_calls_.back());
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('hgetall', 'h')", {}, {}, true),
            "%1\r\n$1\r\na\r\n$1\r\n1\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('hgetall', 'h')"),
            "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) local s = redis.call('smembers', 's').set "
                 "return {tostring(s.a), tostring(s.b)}"),
            "*2\r\n$4\r\ntrue\r\n$4\r\ntrue\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('zscore', 'z', 'a')", {}, {}, true),
            ",1.5\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('zscore', 'z', 'a').double"), ":1\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return type(redis.call('get', 'none'))"), "$3\r\nnil\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('bool', 't')", {}, {}, true), "#t\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('bool', 'f')", {}, {}, true), "#f\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('bool', 'f')"), ":0\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('big')", {}, {}, true),
            "(1234567999999999999999999999999999999\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('big')"),
            "$37\r\n1234567999999999999999999999999999999\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('verbatim')", {}, {}, true),
            "=29\r\ntxt:This is a verbatim\nstring\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('verbatim')"),
            "$25\r\nThis is a verbatim\nstring\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('attr')"), ":42\r\n");
  // Each run starts in RESP2 again.
  EXPECT_EQ(Eval("return redis.call('get', 'none')"), "$-1\r\n");
  EXPECT_FALSE(resp3_calls_.back());
}

TEST_F(InterpreterTest, MapAndSetKeepRedisOrder) {
  // DEBUG PROTOCOL map and set: pairs() visits the keys in the order redis-server's does.
  replies_["map"] = "%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n";
  replies_["set"] = "~3\r\n:0\r\n:1\r\n:2\r\n";
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('map')"),
            "*6\r\n:1\r\n:1\r\n:2\r\n:0\r\n:0\r\n:0\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('set')"), "*3\r\n:1\r\n:2\r\n:0\r\n");
}

TEST_F(InterpreterTest, ManyArguments) {
  std::string args;
  for (int i = 0; i < 7999; i++) args += " 1";
  replies_["lpush l" + args] = ":7999\r\n";
  EXPECT_EQ(Eval("local a = {} for i=1,7999 do a[i] = 1 end "
                 "return redis.call('lpush', 'l', unpack(a))"),
            ":7999\r\n");
}

TEST_F(InterpreterTest, CallArguments) {
  replies_["set k 1.5"] = "+OK\r\n";
  EXPECT_EQ(Eval("return redis.call('set', 'k', 1.5)"), "+OK\r\n");
  replies_["echo 0.30000000000000004"] = "$19\r\n0.30000000000000004\r\n";
  EXPECT_EQ(Eval("return redis.call('echo', 0.1+0.2)"), "$19\r\n0.30000000000000004\r\n");
  Eval("return redis.call('echo', 1e17, 1e16, 12345678901234, 1/0, 1e-7, 100)");
  EXPECT_EQ(calls_.back(),
            "echo 1e+17 10000000000000000 12345678901234 inf "
            "9.9999999999999995e-08 100");
  Eval("return redis.call('echo', -0)");
  EXPECT_EQ(calls_.back(), "echo -0");
  Eval("return redis.call('echo', KEYS[1], ARGV[2])", {"key"}, {"a1", "a2"});
  EXPECT_EQ(calls_.back(), "echo key a2");

  std::string body = "return redis.call()";
  EXPECT_EQ(Eval(body),
            "-ERR Please specify at least one argument for this redis lib call" + Suffix(body));
  EXPECT_EQ(Eval("return redis.pcall()"),
            "-ERR Please specify at least one argument for this redis lib call\r\n");
  body = "return redis.call('get', {})";
  EXPECT_EQ(Eval(body),
            "-ERR Lua redis lib command arguments must be strings or integers" + Suffix(body));
  body = "return redis.call('get', nil)";
  EXPECT_EQ(Eval(body),
            "-ERR Lua redis lib command arguments must be strings or integers" + Suffix(body));
  EXPECT_EQ(Eval("return redis.pcall('get', {})"),
            "-ERR Lua redis lib command arguments must be strings or integers\r\n");
  body = "return redis.call('nosuch')";
  EXPECT_EQ(Eval(body), "-ERR Unknown Redis command called from script" + Suffix(body));
  EXPECT_EQ(Eval("return redis.pcall('nosuch')"),
            "-ERR Unknown Redis command called from script\r\n");
  EXPECT_EQ(Eval("return {pcall(redis.call)}"),
            "*2\r\n$-1\r\n$64\r\nERR Please specify at least one argument for this redis lib "
            "call\r\n");
}

TEST_F(InterpreterTest, Errors) {
  std::string body = "return a";
  EXPECT_EQ(Eval(body),
            "-ERR user_script:1: Script attempted to access nonexistent global variable 'a'" +
                Suffix(body));
  body = "error('x')";
  EXPECT_EQ(Eval(body), "-ERR user_script:1: x" + Suffix(body));
  body = "error('MY x')";
  EXPECT_EQ(Eval(body), "-ERR user_script:1: MY x" + Suffix(body));
  body = "error({err='MY x'})";
  EXPECT_EQ(Eval(body), "-MY x" + Suffix(body));
  body = "error({err='x'})";
  EXPECT_EQ(Eval(body), "-x" + Suffix(body));
  body = "error(1)";
  EXPECT_EQ(Eval(body), "-ERR user_script:1: 1" + Suffix(body));
  body = "error(nil)";
  EXPECT_EQ(Eval(body), "-ERR nil" + Suffix(body));
  body = "error()";
  EXPECT_EQ(Eval(body), "-ERR nil" + Suffix(body));
  body = "error('x', 0)";
  EXPECT_EQ(Eval(body), "-ERR x" + Suffix(body));
  body = "error(true)";
  EXPECT_EQ(Eval(body), "-ERR true" + Suffix(body));
  body = "local function f() error('deep') end f()";
  EXPECT_EQ(Eval(body), "-ERR user_script:1: deep" + Suffix(body));
  body = "\nerror('x')";
  EXPECT_EQ(Eval(body), "-ERR user_script:2: x" + Suffix(body, 2));
  body = "return assert(false)";
  EXPECT_EQ(Eval(body), "-ERR user_script:1: assertion failed!" + Suffix(body));
  body = "return loadstring('return a')()";
  EXPECT_EQ(Eval(body),
            "-ERR [string \"return a\"]:1: Script attempted to access nonexistent global "
            "variable 'a' script: " +
                Interpreter::Sha1Hex(body) + ", on return a:1.\r\n");

  EXPECT_EQ(Eval("return redis.error_reply('MY x')"), "-MY x\r\n");
  EXPECT_EQ(Eval("return redis.error_reply('x')"), "-ERR x\r\n");
  EXPECT_EQ(Eval("return redis.error_reply('-x')"), "-ERR x\r\n");
  EXPECT_EQ(Eval("return redis.error_reply('- x')"), "- x\r\n");
  EXPECT_EQ(Eval("return redis.error_reply('')"), "-ERR \r\n");
  EXPECT_EQ(Eval("return redis.error_reply()"), "-ERR wrong number or type of arguments\r\n");
  EXPECT_EQ(Eval("return redis.error_reply(1)"), "-ERR wrong number or type of arguments\r\n");
  EXPECT_EQ(Eval("return redis.status_reply(1)"), "-ERR wrong number or type of arguments\r\n");
  EXPECT_EQ(Eval("return redis.status_reply('x')"), "+x\r\n");
  EXPECT_EQ(Eval("local e = redis.error_reply('x') return {type(e), e.err}"),
            "*2\r\n$5\r\ntable\r\n$5\r\nERR x\r\n");
  EXPECT_EQ(Eval("local e = redis.status_reply('x') return {type(e), e.ok}"),
            "*2\r\n$5\r\ntable\r\n$1\r\nx\r\n");
}

TEST_F(InterpreterTest, Pcall) {
  replies_["lpush kk x"] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
  EXPECT_EQ(Eval("local ok, e = pcall(redis.call, 'lpush', 'kk', 'x') "
                 "return {tostring(ok), type(e), e}"),
            "*3\r\n$5\r\nfalse\r\n$6\r\nstring\r\n$65\r\nWRONGTYPE Operation against a key "
            "holding the wrong kind of value\r\n");
  EXPECT_EQ(Eval("local ok, e = pcall(function() error({err='MY x'}) end) return {type(e), e}"),
            "*2\r\n$6\r\nstring\r\n$4\r\nMY x\r\n");
  EXPECT_EQ(Eval("local ok, e = pcall(error, 'x') return {tostring(ok), type(e), e}"),
            "*3\r\n$5\r\nfalse\r\n$6\r\nstring\r\n$1\r\nx\r\n");
  EXPECT_EQ(Eval("local ok, e = pcall(function() return a end) return e"),
            BulkOf("user_script:1: Script attempted to access nonexistent global variable 'a'"));
  EXPECT_EQ(Eval("local status, res = pcall(function() return 1 end); "
                 "return 'status: ' .. tostring(status) .. ' result: ' .. res"),
            BulkOf("status: true result: 1"));
  EXPECT_EQ(Eval("local ok, e = pcall(redis.error_reply, 'x') return {tostring(ok), type(e)}"),
            "*2\r\n$4\r\ntrue\r\n$5\r\ntable\r\n");
}

TEST_F(InterpreterTest, CommandErrorsAreMarked) {
  // A command's error reply, raised or returned, is written as one (the server counted it
  // when the command sent it); the script's own errors are not.
  replies_["select 99"] = "-ERR DB index is out of range\r\n";
  EXPECT_EQ(Eval("return redis.call('select', 99)"),
            "-ERR DB index is out of range" + Suffix("return redis.call('select', 99)"));
  EXPECT_EQ(last_command_errors_, 1);
  EXPECT_EQ(Eval("return redis.pcall('select', 99)"), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(last_command_errors_, 1);
  EXPECT_EQ(Eval("return redis.pcall('select', 99).ignore_error_stats_update"), ":1\r\n");
  EXPECT_EQ(Eval("return {1, redis.pcall('select', 99)}"),
            "*2\r\n:1\r\n-ERR DB index is out of range\r\n");
  EXPECT_EQ(last_command_errors_, 1);
  EXPECT_EQ(Eval("return redis.error_reply('MY own')"), "-MY own\r\n");
  EXPECT_EQ(last_command_errors_, 0);
  EXPECT_EQ(Eval("error('x')").substr(0, 6), "-ERR u");
  EXPECT_EQ(last_command_errors_, 0);
}

TEST_F(InterpreterTest, CompileErrors) {
  EXPECT_EQ(Eval("retur 1"),
            "-ERR Error compiling script (new function): user_script:1: '=' expected near "
            "'1'\r\n");
  EXPECT_EQ(Eval("return 1 +"),
            "-ERR Error compiling script (new function): user_script:1: unexpected symbol near "
            "'<eof>'\r\n");
  EXPECT_EQ(Eval("return 1 end"),
            "-ERR Error compiling script (new function): user_script:1: '<eof>' expected near "
            "'end'\r\n");
  EXPECT_EQ(Eval("#!lua flags=no-writes\nretur 1"),
            "-ERR Error compiling script (new function): user_script:2: '=' expected near "
            "'1'\r\n");
  EXPECT_EQ(Eval("#!lua\nreturn 1"), ":1\r\n");
  EXPECT_EQ(Eval("#!lua"), "$-1\r\n");
  std::string body = "#!lua\n\nerror('x')";
  EXPECT_EQ(Eval(body), "-ERR user_script:3: x" + Suffix(body, 3));
  EXPECT_EQ(Eval("return ..."), "$-1\r\n");
}

TEST_F(InterpreterTest, ScriptCache) {
  std::string sha = Interpreter::Sha1Hex("return 7");
  EXPECT_FALSE(interpreter_.HasScript(sha));
  std::string error;
  ASSERT_TRUE(interpreter_.AddScript(sha, "return 7", &error));
  EXPECT_TRUE(interpreter_.HasScript(sha));
  interpreter_.FlushScripts();
  EXPECT_FALSE(interpreter_.HasScript(sha));
  EXPECT_FALSE(interpreter_.AddScript(sha, "retur 7", &error));
  EXPECT_FALSE(interpreter_.HasScript(sha));
}

TEST_F(InterpreterTest, KeysAndArgv) {
  EXPECT_EQ(Eval("return {#KEYS, #ARGV, KEYS[1], ARGV[1], ARGV[2]}", {"k"}, {"a", "b"}),
            "*5\r\n:1\r\n:2\r\n$1\r\nk\r\n$1\r\na\r\n$1\r\nb\r\n");
  EXPECT_EQ(Eval("return #KEYS"), ":0\r\n");
  EXPECT_EQ(Eval("KEYS[1] = 'a' return KEYS[1]"), "$1\r\na\r\n");
}

TEST_F(InterpreterTest, Sandbox) {
  for (const char* name : {"os", "io", "loadfile", "dofile", "print", "require", "package", "debug",
                           "module", "getfenv", "setfenv", "newproxy"}) {
    std::string body = absl::StrCat("return type(", name, ")");
    EXPECT_EQ(Eval(body), absl::StrCat("-ERR user_script:1: Script attempted to access "
                                       "nonexistent global variable '",
                                       name, "'", Suffix(body)));
  }
  for (const char* name : {"loadstring", "load", "gcinfo", "collectgarbage", "pcall", "xpcall",
                           "unpack", "rawequal", "select"}) {
    EXPECT_EQ(Eval(absl::StrCat("return type(", name, ")")), "$8\r\nfunction\r\n") << name;
  }
  for (const char* name : {"coroutine", "_G", "cjson", "bit", "string", "math", "table", "redis"}) {
    EXPECT_EQ(Eval(absl::StrCat("return type(", name, ")")), "$5\r\ntable\r\n") << name;
  }
  EXPECT_EQ(Eval("return _VERSION"), "$7\r\nLua 5.1\r\n");
  // cmsgpack and struct (lua_libs.h) are left out: they are wired where the interpreter
  // registers them (OpenBundledLibraries) once their implementation is in the tree.
  EXPECT_EQ(Eval("local t = {} for k,v in pairs(_G) do if k ~= 'cmsgpack' and k ~= 'struct' "
                 "then table.insert(t, k) end end table.sort(t) return table.concat(t, ' ')"),
            Eval("return 'ARGV KEYS _G _VERSION __redis__err__handler assert bit cjson "
                 "collectgarbage coroutine error gcinfo getmetatable ipairs load loadstring "
                 "math next pairs pcall rawequal rawget rawset redis select setmetatable "
                 "string table tonumber tostring type unpack xpcall'"));
  EXPECT_EQ(Eval("local t = {} for k,v in pairs(redis) do table.insert(t, k) end "
                 "table.sort(t) return table.concat(t, ' ')"),
            Eval("return 'LOG_DEBUG LOG_NOTICE LOG_VERBOSE LOG_WARNING REDIS_VERSION "
                 "REDIS_VERSION_NUM REPL_ALL REPL_AOF REPL_NONE REPL_REPLICA REPL_SLAVE "
                 "acl_check_cmd breakpoint call debug error_reply log pcall replicate_commands "
                 "set_repl setresp sha1hex status_reply'"));
  EXPECT_EQ(Eval("local t = {} for k,v in pairs(string) do table.insert(t, k) end "
                 "table.sort(t) return table.concat(t, ' ')"),
            BulkOf("byte char dump find format gfind gmatch gsub len lower match rep reverse "
                   "sub upper"));
  EXPECT_EQ(Eval("local n = 0 for i, v in ipairs(_G) do n = n + 1 end return n"), ":0\r\n");
  EXPECT_EQ(Eval("return rawget(_G, 'xx')"), "$-1\r\n");
  EXPECT_EQ(Eval("return type(rawget(string, 'rep'))"), "$8\r\nfunction\r\n");
  EXPECT_EQ(Eval("return type(next(math))"), "$6\r\nstring\r\n");
  EXPECT_EQ(Eval("return ('x'):rep(3)"), "$3\r\nxxx\r\n");
  EXPECT_EQ(Eval("return cjson.encode({1,2,3})"), "$7\r\n[1,2,3]\r\n");
  EXPECT_EQ(Eval("return cjson.decode('[1,2,{\"a\":3}]')"), "*3\r\n:1\r\n:2\r\n*0\r\n");
  EXPECT_EQ(Eval("return bit.band(7, 3)"), ":3\r\n");
  EXPECT_EQ(Eval("return bit.tohex(65535)"), "$8\r\n0000ffff\r\n");
  EXPECT_EQ(Eval("return redis.REDIS_VERSION"), "$6\r\n7.0.15\r\n");
  EXPECT_EQ(Eval("return redis.REDIS_VERSION_NUM"), ":458767\r\n");
  EXPECT_EQ(Eval("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, "
                 "redis.LOG_WARNING}"),
            "*4\r\n:0\r\n:1\r\n:2\r\n:3\r\n");
  EXPECT_EQ(Eval("return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, "
                 "redis.REPL_REPLICA, redis.REPL_ALL}"),
            "*5\r\n:0\r\n:1\r\n:2\r\n:2\r\n:3\r\n");
  EXPECT_EQ(Eval("return {type(getmetatable(redis)), type(getmetatable(string)), "
                 "type(getmetatable(cjson)), type(getmetatable(_G)), type(getmetatable(''))}"),
            "*5\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n$5\r\ntable\r\n$5\r\ntable\r\n");
  EXPECT_EQ(Eval("local t = {} setmetatable(t, {__index=function() return 1 end}) return t.x"),
            ":1\r\n");
  EXPECT_EQ(Eval("local a = {}; setmetatable(a, {__index=function() foo() end}) return a"),
            "*0\r\n");
}

TEST_F(InterpreterTest, ReadonlyTables) {
  const std::string kReadonly = "Attempt to modify a readonly table";
  for (const char* body :
       {"a = 1", "redis.call = 1", "redis.x = 1", "string.x = 1", "cjson.x = 1",
        "cjson.encode = function() return 1 end", "bit.band = 1", "_G.x = 1", "KEYS = 1",
        "ARGV = {}", "redis = function() return 1 end", "_G = {}", "math.floor = nil",
        "local g = getmetatable(_G) g.__index = {}", "getmetatable(_G).__index.redis = 1",
        "getmetatable('').__index.rep = 1"}) {
    EXPECT_EQ(Eval(body), "-ERR user_script:1: " + kReadonly + Suffix(body)) << body;
  }
  for (const char* body : {"rawset(_G, 'x', 1)", "setmetatable(_G, nil)", "setmetatable(_G, {})",
                           "rawset(redis, 'call', 1)"}) {
    EXPECT_EQ(Eval(body), "-ERR " + kReadonly + Suffix(body)) << body;
  }
  // Nothing leaked into the next script.
  EXPECT_EQ(Eval("return type(redis.call)"), "$8\r\nfunction\r\n");
}

TEST_F(InterpreterTest, RedisApiChecks) {
  std::string body = "return redis.setresp(4)";
  EXPECT_EQ(Eval(body), "-ERR RESP version must be 2 or 3." + Suffix(body));
  body = "return redis.setresp()";
  EXPECT_EQ(Eval(body), "-ERR redis.setresp() requires one argument." + Suffix(body));
  body = "return redis.setresp(3, 1)";
  EXPECT_EQ(Eval(body), "-ERR redis.setresp() requires one argument." + Suffix(body));
  body = "return redis.setresp('x')";
  EXPECT_EQ(Eval(body), "-ERR RESP version must be 2 or 3." + Suffix(body));
  EXPECT_EQ(Eval("return redis.setresp('3')"), "$-1\r\n");
  body = "return redis.log()";
  EXPECT_EQ(Eval(body), "-ERR redis.log() requires two arguments or more." + Suffix(body));
  body = "return redis.log(1)";
  EXPECT_EQ(Eval(body), "-ERR redis.log() requires two arguments or more." + Suffix(body));
  body = "return redis.log(99, 'x')";
  EXPECT_EQ(Eval(body), "-ERR Invalid debug level." + Suffix(body));
  body = "return redis.log('x', 'x')";
  EXPECT_EQ(Eval(body), "-ERR First argument must be a number (log level)." + Suffix(body));
  EXPECT_EQ(Eval("return redis.log(redis.LOG_WARNING, 'a', 'b', 3, {})"), "$-1\r\n");
  EXPECT_EQ(Eval("return redis.log(redis.LOG_DEBUG, {}, 'x')"), "$-1\r\n");
  EXPECT_EQ(logs_, (std::vector<std::string>{"3:a b 3", "0: x"}));
  body = "return redis.set_repl()";
  EXPECT_EQ(Eval(body), "-ERR redis.set_repl() requires two arguments." + Suffix(body));
  body = "return redis.set_repl(99)";
  EXPECT_EQ(Eval(body),
            "-ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or "
            "REPL_NONE." +
                Suffix(body));
  EXPECT_EQ(Eval("return redis.set_repl(redis.REPL_ALL)"), "$-1\r\n");
  EXPECT_EQ(Eval("return redis.set_repl('x')"), "$-1\r\n");
  EXPECT_EQ(Eval("return redis.replicate_commands()"), ":1\r\n");
  EXPECT_EQ(Eval("return redis.breakpoint()"), "$-1\r\n");
  EXPECT_EQ(Eval("return redis.debug('x')"), "$-1\r\n");
}

TEST_F(InterpreterTest, Random) {
  // Redis's rand48 from its initial state, then seeded: the numbers redis-server gives.
  EXPECT_EQ(Eval("return tostring(math.random())"), BulkOf("0.39646477363839"));
  EXPECT_EQ(Eval("return tostring(math.random())"), BulkOf("0.84048536971234"));
  std::string seeded = "math.randomseed(ARGV[1]); return tostring(math.random())";
  EXPECT_EQ(Eval(seeded, {}, {"10"}), BulkOf("0.87885112309775"));
  EXPECT_EQ(Eval(seeded, {}, {"10"}), BulkOf("0.87885112309775"));
  EXPECT_NE(Eval(seeded, {}, {"20"}), BulkOf("0.87885112309775"));
  EXPECT_EQ(Eval("math.randomseed(1) local n = math.random(10) return n >= 1 and n <= 10"),
            ":1\r\n");
  EXPECT_EQ(Eval("math.randomseed(1) local n = math.random(5, 6) return n >= 5 and n <= 6"),
            ":1\r\n");
}

TEST_F(InterpreterTest, Loaders) {
  std::string body = "return loadstring(string.dump(function() return 1 end))()";
  EXPECT_EQ(Eval(body), "-ERR user_script:1: attempt to call a nil value" + Suffix(body));
  EXPECT_EQ(Eval("return loadstring('return 1')()"), ":1\r\n");
  EXPECT_EQ(Eval("local f = loadstring('retur 1') return tostring(f)"), BulkOf("nil"));
  EXPECT_EQ(Eval("local f, e = loadstring('retur 1') return e"),
            BulkOf("[string \"retur 1\"]:1: '=' expected near '1'"));
  EXPECT_EQ(Eval("local parts = {'return ', '4', '2'} local i = 0 "
                 "return load(function() i = i + 1 return parts[i] end)()"),
            ":42\r\n");
  EXPECT_EQ(Eval("local s = string.dump(function() return 1 end) local done = false "
                 "return tostring(load(function() if done then return nil end done = true "
                 "return s end))"),
            BulkOf("nil"));
}

TEST_F(InterpreterTest, AclCheckCmd) {
  interpreter_.set_acl_check([](absl::Span<const std::string_view> args) {
    if (args[0] == "invalid-cmd") return Interpreter::AclCheck::kUnknownCommand;
    return args[0] == "set" ? Interpreter::AclCheck::kAllowed : Interpreter::AclCheck::kDenied;
  });
  EXPECT_EQ(Eval("return redis.acl_check_cmd('set','xx',1)"), ":1\r\n");
  EXPECT_EQ(Eval("return redis.acl_check_cmd('hset','xx','f',1)"), "$-1\r\n");
  std::string body = "return redis.acl_check_cmd('invalid-cmd','arg')";
  EXPECT_EQ(Eval(body), "-ERR Invalid command passed to redis.acl_check_cmd()" + Suffix(body));
  body = "return redis.acl_check_cmd()";
  EXPECT_EQ(Eval(body),
            "-ERR Please specify at least one argument for this redis lib call" + Suffix(body));
}

TEST_F(InterpreterTest, MemoryStaysFlat) {
  replies_["incr x"] = ":1\r\n";
  std::string body = "return redis.call('incr', KEYS[1])";
  for (int i = 0; i < 10000; i++) Eval(body, {"x"});
  // Redis's test: used_memory_lua stays under 100 KiB after 10000 runs.
  EXPECT_LT(interpreter_.used_memory_bytes(), 100u * 1024);
}

TEST_F(InterpreterTest, DeepNestingFailsBeforeTheStackEnds) {
  // Each level of gsub keeps an 8 KiB buffer on the C stack: Lua's own limit (200 levels)
  // would need 1.6 MiB. The run stops at its stack budget with Lua's text instead.
  std::string body =
      "local function f(n) if n == 0 then return 'x' end "
      "return (string.gsub('a', 'a', function() return f(n-1) end)) end return f(300)";
  EXPECT_EQ(Eval(body), "-ERR C stack overflow" + Suffix(body));
  // Caught, the error leaves the script running normally.
  EXPECT_EQ(Eval("local function f(n) if n == 0 then return 'x' end local ok, v = "
                 "pcall(string.gsub, 'a', 'a', function() return f(n-1) end) return v end "
                 "return f(300)"),
            BulkOf("C stack overflow"));
  EXPECT_EQ(Eval("local d = 0 local function f() d = d + 1 local ok = pcall(f) "
                 "if d < 10000 then return f() end end f() return d"),
            ":10000\r\n");
}

TEST_F(InterpreterTest, Interrupt) {
  int checks = 0;
  interpreter_.set_interrupt([&checks] { return ++checks == 3; });
  std::string body = "local i = 0 while true do i = i + 1 end";
  EXPECT_EQ(Eval(body), "-ERR Script killed by user with SCRIPT KILL..." + Suffix(body));
  EXPECT_EQ(checks, 3);
  // pcall cannot swallow the kill.
  checks = 0;
  body = "local f = function() while 1 do end end while 1 do pcall(f) end";
  EXPECT_EQ(Eval(body), "-ERR Script killed by user with SCRIPT KILL..." + Suffix(body));
  // The next script runs normally.
  EXPECT_EQ(Eval("local i = 0 for j = 1, 1000000 do i = i + 1 end return i"), ":1000000\r\n");
}

TEST_F(InterpreterTest, Functions) {
  std::vector<Interpreter::FunctionInfo> infos;
  ASSERT_EQ(Load("#!lua name=lib1\nredis.register_function('f1', function(keys, args) "
                 "return {#keys, #args, keys[1], args[1]} end)",
                 &infos),
            "OK");
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_EQ(infos[0].name, "f1");
  EXPECT_TRUE(interpreter_.HasFunction("f1"));
  EXPECT_EQ(Fcall("f1", {"k"}, {"a"}), "*4\r\n:1\r\n:1\r\n$1\r\nk\r\n$1\r\na\r\n");

  ASSERT_EQ(Load("#!lua name=lib2\nredis.register_function{function_name='f2', "
                 "callback=function() return KEYS end, flags={'no-writes', 'allow-oom'}, "
                 "description='desc'}",
                 &infos),
            "OK");
  EXPECT_EQ(infos[0].description, "desc");
  EXPECT_TRUE(infos[0].has_description);
  EXPECT_EQ(infos[0].flags, (std::vector<std::string>{"no-writes", "allow-oom"}));
  EXPECT_EQ(Fcall("f2"),
            "-ERR user_function:2: Script attempted to access nonexistent global variable "
            "'KEYS' script: f2, on @user_function:2.\r\n");

  ASSERT_EQ(Load("#!lua name=lib3\n"
                 "redis.register_function('boom', function() error('boom') end)\n"
                 "redis.register_function('myerr', function() error({err='MY y'}) end)\n"
                 "redis.register_function('call', function() return redis.call('nosuch') end)\n"
                 "redis.register_function('reg', function() "
                 "redis.register_function('zz', function() end) end)\n"
                 "redis.register_function('api', function() local t = {} "
                 "for k in pairs(redis) do table.insert(t, k) end table.sort(t) "
                 "return table.concat(t, ' ') end)\n"
                 "redis.register_function('globals', function() local t = {} "
                 "for k in pairs(_G) do if k ~= 'cmsgpack' and k ~= 'struct' then "
                 "table.insert(t, k) end end table.sort(t) "
                 "return table.concat(t, ' ') end)\n"),
            "OK");
  EXPECT_EQ(Fcall("boom"), "-ERR user_function:2: boom script: boom, on @user_function:2.\r\n");
  EXPECT_EQ(Fcall("myerr"), "-MY y script: myerr, on @user_function:3.\r\n");
  EXPECT_EQ(Fcall("call"),
            "-ERR Unknown Redis command called from script script: call, on "
            "@user_function:4.\r\n");
  EXPECT_EQ(Fcall("reg"),
            "-ERR user_function:5: attempt to call field 'register_function' (a nil value) "
            "script: reg, on @user_function:5.\r\n");
  EXPECT_EQ(Fcall("api"),
            BulkOf("LOG_DEBUG LOG_NOTICE LOG_VERBOSE LOG_WARNING REDIS_VERSION "
                   "REDIS_VERSION_NUM REPL_ALL REPL_AOF REPL_NONE REPL_REPLICA REPL_SLAVE "
                   "acl_check_cmd call error_reply log pcall set_repl setresp sha1hex "
                   "status_reply"));
  EXPECT_EQ(Fcall("globals"),
            BulkOf("_G _VERSION assert bit cjson collectgarbage coroutine error gcinfo "
                   "getmetatable ipairs load loadstring math next pairs pcall rawequal rawget "
                   "rawset redis select setmetatable string table tonumber tostring type unpack "
                   "xpcall"));
}

TEST_F(InterpreterTest, FunctionLoadErrors) {
  const std::string kReg = "ERR Error registering functions: ERR ";
  struct Case {
    const char* body;
    std::string error;
  } cases[] = {
      {"redis.call('ping')",
       kReg + "user_function:2: Script attempted to access nonexistent global variable 'call'"},
      {"return 1", "ERR No functions registered"},
      {"", "ERR No functions registered"},
      {"redis.register_function('f6')",
       kReg + "calling redis.register_function with a single argument is only applicable to "
              "Lua table (representing named arguments)."},
      {"redis.register_function('f6', 1)",
       kReg + "second argument to redis.register_function must be a function"},
      {"redis.register_function({}, 2)",
       kReg + "first argument to redis.register_function must be a string"},
      {"redis.register_function()", kReg + "wrong number of arguments to redis.register_function"},
      {"redis.register_function('a', function() end, 3)",
       kReg + "wrong number of arguments to redis.register_function"},
      {"redis.register_function('bad name', function() end)",
       kReg + "Library names can only contain letters, numbers, or underscores(_) and must be "
              "at least one character long"},
      {"redis.register_function('', function() end)",
       kReg + "Library names can only contain letters, numbers, or underscores(_) and must be "
              "at least one character long"},
      {"redis.register_function{function_name='g', callback=function() end, "
       "flags={'no-writes', 'bad'}}",
       kReg + "unknown flag given"},
      {"redis.register_function{function_name='g', callback=function() end, flags={1}}",
       kReg + "unknown flag given"},
      {"redis.register_function{function_name='g', callback=function() end, flags='no-writes'}",
       kReg + "flags argument to redis.register_function must be a table representing "
              "function flags"},
      {"redis.register_function{function_name='g', callback=function() end, bad=1}",
       kReg + "unknown argument given to redis.register_function"},
      {"redis.register_function{[1]='x'}",
       kReg + "unknown argument given to redis.register_function"},
      {"redis.register_function('g', function() end, nil)",
       kReg + "wrong number of arguments to redis.register_function"},
      {"redis.register_function{function_name=function() end, callback=function() end}",
       kReg + "function_name argument given to redis.register_function must be a string"},
      {"redis.register_function{function_name='g', callback=function() end, "
       "description=function() end}",
       kReg + "description argument given to redis.register_function must be a string"},
      {"redis.register_function{function_name='g'}",
       kReg + "redis.register_function must get a callback argument"},
      {"redis.register_function{callback=function() end}",
       kReg + "redis.register_function must get a function name argument"},
      {"redis.register_function{function_name='g', callback=1}",
       kReg + "callback argument given to redis.register_function must be a function"},
      {"redis.register_function('a', function() end) redis.register_function('a', function() "
       "end)",
       kReg + "Function already exists in the library"},
      {"local x = KEYS",
       kReg + "user_function:2: Script attempted to access nonexistent global variable 'KEYS'"},
      {"x = 1", kReg + "user_function:2: Attempt to modify a readonly table"},
      {"redis.x = 1", kReg + "user_function:2: Attempt to modify a readonly table"},
      {"redis.register_function = 1", kReg + "user_function:2: Attempt to modify a readonly table"},
      {"error('x')",
       kReg + "user_function:2: Script attempted to access nonexistent global variable 'error'"},
      {"string.len('x')",
       kReg + "user_function:2: Script attempted to access nonexistent global variable 'string'"},
      {"redis.setresp(3)",
       kReg + "user_function:2: Script attempted to access nonexistent global variable 'setresp'"},
      {"redis.math.random()",
       kReg + "user_function:2: Script attempted to access nonexistent global variable 'math'"},
      {"retur 1", "ERR Error compiling function: user_function:2: '=' expected near '1'"},
      {"local a = 1 while 1 do a = a + 1 end", kReg + "FUNCTION LOAD timeout"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Load(absl::StrCat("#!lua name=lib\n", c.body)), c.error) << c.body;
    EXPECT_FALSE(interpreter_.HasFunction("g"));
  }
  EXPECT_EQ(Load("#!lua name=lib\nredis.log(redis.LOG_WARNING, 'loading') "
                 "local v = redis.REDIS_VERSION "
                 "redis.register_function{function_name=1, callback=function() return v end, "
                 "description=2}"),
            "OK");
  EXPECT_EQ(Fcall("1"), "$6\r\n7.0.15\r\n");
  EXPECT_EQ(logs_, (std::vector<std::string>{"3:loading"}));
}

TEST_F(InterpreterTest, FunctionLibraries) {
  ASSERT_EQ(Load("#!lua name=a\nredis.register_function('f', function() return 1 end)"), "OK");
  EXPECT_EQ(Load("#!lua name=b\nredis.register_function('f', function() return 2 end)"),
            "ERR Function f already exists");
  // Replacing a library with itself is not a collision; a failed load keeps the old one.
  EXPECT_EQ(Load("#!lua name=a\nredis.register_function('f', function() return 3 end)"), "OK");
  EXPECT_EQ(Fcall("f"), ":3\r\n");
  EXPECT_EQ(Load("#!lua name=a\nretur"),
            "ERR Error compiling function: user_function:2: '=' "
            "expected near '<eof>'");
  EXPECT_EQ(Fcall("f"), ":3\r\n");
  // Code given without its #! line keeps Redis's line numbers.
  std::vector<Interpreter::FunctionInfo> infos;
  std::string error;
  ASSERT_TRUE(interpreter_.LoadLibrary(
      "c", "redis.register_function('g', function() error('x') end)", &infos, &error));
  EXPECT_EQ(Fcall("g"), "-ERR user_function:2: x script: g, on @user_function:2.\r\n");
  interpreter_.DropLibrary("a");
  EXPECT_FALSE(interpreter_.HasFunction("f"));
  EXPECT_TRUE(interpreter_.HasFunction("g"));

  // A register_function kept from load time cannot be used later.
  ASSERT_EQ(Load("#!lua name=d\nlocal lib = redis\n"
                 "redis.register_function('f1', function() lib.redis = redis end)\n"
                 "redis.register_function('f2', function() "
                 "lib.register_function('f3', function() end) end)"),
            "OK");
  EXPECT_EQ(Fcall("f1"),
            "-ERR user_function:3: Attempt to modify a readonly table script: f1, on "
            "@user_function:3.\r\n");
  EXPECT_EQ(Fcall("f2"),
            "-ERR redis.register_function can only be called on FUNCTION LOAD command script: "
            "f2, on @user_function:4.\r\n");
  ASSERT_EQ(Load("#!lua name=f\nredis.register_function('f5', function() "
                 "return loadstring('return KEYS')() end)\n"
                 "redis.register_function{function_name='f6', callback=function() end, "
                 "flags={x='no-writes'}, description=''}",
                 &infos),
            "OK");
  EXPECT_EQ(infos[1].flags, std::vector<std::string>{"no-writes"});
  EXPECT_TRUE(infos[1].has_description);
  EXPECT_FALSE(infos[0].has_description);
  Eval("return 1", {"stale"});
  EXPECT_EQ(Fcall("f5", {"k"}),
            "-ERR [string \"return KEYS\"]:1: Script attempted to access nonexistent global "
            "variable 'KEYS' script: f5, on return KEYS:1.\r\n");
  EXPECT_EQ(Eval("return KEYS[1]", {"k"}), "$1\r\nk\r\n");
  ASSERT_EQ(Load("#!lua name=e\nredis.register_function('f4', function() "
                 "local mt = getmetatable(_G) mt.__index.redis = 1 end)"),
            "OK");
  EXPECT_EQ(Fcall("f4"),
            "-ERR user_function:2: Attempt to modify a readonly table script: f4, on "
            "@user_function:2.\r\n");
}

TEST_F(InterpreterTest, FunctionInterrupt) {
  ASSERT_EQ(Load("#!lua name=spin\nredis.register_function('spin', function() "
                 "while true do end end)"),
            "OK");
  interpreter_.set_interrupt([] { return true; });
  EXPECT_EQ(Fcall("spin"),
            "-ERR Script killed by user with SCRIPT KILL... script: spin, on "
            "@user_function:2.\r\n");
}

}  // namespace
}  // namespace damselfly
