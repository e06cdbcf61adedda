#include "src/facade/http_parser.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace damselfly::facade {
namespace {

using Result = HttpRequestParser::Result;

HttpRequestParser::Limits SmallLimits() {
  return {.max_header_bytes = 512, .max_headers = 8, .max_body_bytes = 64};
}

// Parses `input` whole; returns the result and, on kDone, the consumed count.
Result ParseAll(HttpRequestParser* parser, std::string_view input, size_t* consumed) {
  return parser->Parse(input, consumed);
}

// Feeds `input` one growing prefix at a time, split at `split`, as a socket would.
Result ParseSplit(HttpRequestParser* parser, std::string_view input, size_t split,
                  size_t* consumed) {
  Result first = parser->Parse(input.substr(0, split), consumed);
  if (first != Result::kNeedMore) return first;
  return parser->Parse(input, consumed);
}

const std::string kGet =
    "GET /metrics?x=1 HTTP/1.1\r\nHost: localhost:6379\r\nUser-Agent: test\r\n"
    "Accept:  text/plain \r\n\r\n";

TEST(HttpParserTest, ParsesAGet) {
  HttpRequestParser parser(SmallLimits());
  size_t consumed = 0;
  ASSERT_EQ(ParseAll(&parser, kGet, &consumed), Result::kDone);
  EXPECT_EQ(consumed, kGet.size());
  const HttpRequest& request = parser.request();
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/metrics?x=1");
  EXPECT_EQ(request.path(), "/metrics");
  EXPECT_EQ(request.minor_version, 1);
  EXPECT_EQ(request.Header("host"), "localhost:6379");
  EXPECT_EQ(request.Header("ACCEPT"), "text/plain");
  EXPECT_EQ(request.Header("missing"), "");
  EXPECT_TRUE(request.keep_alive);
}

TEST(HttpParserTest, EverySplitGivesTheSameRequest) {
  const std::string with_body =
      "POST /x HTTP/1.0\nConnection: keep-alive\nContent-Length: 5\n\nhello";
  for (const std::string& input : {kGet, with_body}) {
    for (size_t split = 0; split < input.size(); ++split) {
      HttpRequestParser parser(SmallLimits());
      size_t consumed = 0;
      ASSERT_EQ(ParseSplit(&parser, input, split, &consumed), Result::kDone) << split;
      EXPECT_EQ(consumed, input.size());
      EXPECT_FALSE(parser.request().method.empty());
    }
  }
}

// Found by tests/fuzz/http_parser_fuzz: a head parsed while the body was still missing
// kept views into the caller's old buffer, which the connection shifts and regrows as the
// body arrives; kDone then handed out a request read from freed memory.
TEST(HttpParserTest, BodyInALaterReadInAMovedBuffer) {
  const std::string input =
      "POST /metrics?a=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello";
  const size_t head = input.size() - 5;
  HttpRequestParser parser(SmallLimits());
  size_t consumed = 0;
  auto first = std::make_unique<std::string>(input.substr(0, head + 2));
  ASSERT_EQ(parser.Parse(*first, &consumed), Result::kNeedMore);
  const std::string second = input;  // another allocation, as after the buffer grew
  first->assign(first->size(), 'x');
  first.reset();
  ASSERT_EQ(parser.Parse(second, &consumed), Result::kDone);
  EXPECT_EQ(consumed, input.size());
  EXPECT_EQ(parser.request().method, "POST");
  EXPECT_EQ(parser.request().path(), "/metrics");
  EXPECT_EQ(parser.request().Header("host"), "h");
  EXPECT_EQ(parser.request().content_length, 5u);
}

TEST(HttpParserTest, EveryByteAtATime) {
  HttpRequestParser parser(SmallLimits());
  size_t consumed = 0;
  for (size_t n = 1; n < kGet.size(); ++n) {
    ASSERT_EQ(parser.Parse(std::string_view(kGet).substr(0, n), &consumed), Result::kNeedMore) << n;
  }
  ASSERT_EQ(parser.Parse(kGet, &consumed), Result::kDone);
}

TEST(HttpParserTest, PipelinedRequests) {
  std::string input = kGet + "HEAD / HTTP/1.1\r\nConnection: close\r\n\r\n" + "GET /";
  HttpRequestParser parser(SmallLimits());
  std::string_view rest = input;
  size_t consumed = 0;
  ASSERT_EQ(parser.Parse(rest, &consumed), Result::kDone);
  rest.remove_prefix(consumed);
  ASSERT_EQ(parser.Parse(rest, &consumed), Result::kDone);
  EXPECT_EQ(parser.request().method, "HEAD");
  EXPECT_FALSE(parser.request().keep_alive);
  rest.remove_prefix(consumed);
  EXPECT_EQ(parser.Parse(rest, &consumed), Result::kNeedMore);
}

TEST(HttpParserTest, KeepAliveDefaults) {
  HttpRequestParser parser(SmallLimits());
  size_t consumed = 0;
  ASSERT_EQ(parser.Parse("GET / HTTP/1.0\r\n\r\n", &consumed), Result::kDone);
  EXPECT_FALSE(parser.request().keep_alive);
  ASSERT_EQ(parser.Parse("GET / HTTP/1.1\r\nConnection: Upgrade, Close\r\n\r\n", &consumed),
            Result::kDone);
  EXPECT_FALSE(parser.request().keep_alive);
}

TEST(HttpParserTest, GarbageIsA400) {
  const char* corpus[] = {
      "GET\r\n\r\n",
      "GET /\r\n\r\n",
      "GET  / HTTP/1.1\r\n\r\n",
      "GET / HTTP/1.1 \r\n\r\n",
      "GET / HTTP/1.1 extra\r\n\r\n",
      "GET / HTTX/1.1\r\n\r\n",
      "GET / HTTP/11\r\n\r\n",
      "G(T / HTTP/1.1\r\n\r\n",
      "GET /a\x01 HTTP/1.1\r\n\r\n",
      "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
      "GET / HTTP/1.1\r\n: empty-name\r\n\r\n",
      "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
      "GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
      "GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n",
      "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
      "GET / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n",
      "GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
      "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
      "\r\n\r\n",
      "\x16\x03\x01\x02\x05\x01\x05\x01\xfc\x03\x03\n\n",
  };
  for (const char* input : corpus) {
    HttpRequestParser parser(SmallLimits());
    size_t consumed = 0;
    EXPECT_EQ(parser.Parse(input, &consumed), Result::kError) << input;
    EXPECT_EQ(parser.error_status(), 400) << input;
  }
}

TEST(HttpParserTest, OtherErrors) {
  struct Case {
    std::string input;
    int status;
  } cases[] = {
      {"GET / HTTP/2.0\r\n\r\n", 505},
      {"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
      {"POST / HTTP/1.1\r\nContent-Length: 65\r\n\r\n", 413},
      {"GET / HTTP/1.1\r\n" + std::string(9, 'X') + ": 1\r\n" + std::string(600, 'a'), 431},
      {[] {
         std::string many = "GET / HTTP/1.1\r\n";
         for (int i = 0; i < 9; ++i) many += "X: 1\r\n";
         return many + "\r\n";
       }(),
       431},
  };
  for (const Case& c : cases) {
    HttpRequestParser parser(SmallLimits());
    size_t consumed = 0;
    EXPECT_EQ(parser.Parse(c.input, &consumed), Result::kError) << c.input;
    EXPECT_EQ(parser.error_status(), c.status) << c.input;
  }
}

TEST(HttpParserTest, HeaderBoundIsExact) {
  // A head of exactly max_header_bytes parses; one byte more does not.
  std::string head = "GET / HTTP/1.1\r\nX: ";
  std::string fits = head + std::string(512 - head.size() - 4, 'a') + "\r\n\r\n";
  ASSERT_EQ(fits.size(), 512u);
  HttpRequestParser parser(SmallLimits());
  size_t consumed = 0;
  EXPECT_EQ(parser.Parse(fits, &consumed), Result::kDone);
  std::string too_big = head + std::string(512 - head.size() - 3, 'a') + "\r\n\r\n";
  HttpRequestParser other(SmallLimits());
  EXPECT_EQ(other.Parse(too_big, &consumed), Result::kError);
  EXPECT_EQ(other.error_status(), 431);
}

TEST(HttpParserTest, Probe) {
  EXPECT_EQ(ProbeHttp("GET / HTTP/1.1\r\n"), HttpProbe::kHttp);
  EXPECT_EQ(ProbeHttp("PRI * HTTP/2.0\r\n"), HttpProbe::kHttp);
  EXPECT_EQ(ProbeHttp("GET /metrics HTTP/1.0\n"), HttpProbe::kHttp);
  EXPECT_EQ(ProbeHttp("G"), HttpProbe::kNeedMore);
  EXPECT_EQ(ProbeHttp("GET /metr"), HttpProbe::kNeedMore);
  EXPECT_EQ(ProbeHttp("*1\r\n$4\r\nPING\r\n"), HttpProbe::kNotHttp);
  EXPECT_EQ(ProbeHttp("PING\r\n"), HttpProbe::kNotHttp);
  EXPECT_EQ(ProbeHttp("get / HTTP/1.1\r\n"), HttpProbe::kNotHttp);
  EXPECT_EQ(ProbeHttp("GET key\r\n"), HttpProbe::kNotHttp);
  EXPECT_EQ(ProbeHttp("SET k HTTP/1.1x\r\n"), HttpProbe::kNotHttp);
  EXPECT_EQ(ProbeHttp(std::string(20, 'A')), HttpProbe::kNotHttp);
  EXPECT_EQ(ProbeHttp("GET " + std::string(9000, 'a')), HttpProbe::kNotHttp);
}

TEST(HttpParserTest, BasicCredentials) {
  // "default:secret", "Aladdin:open sesame" (RFC 7617's example), a colon in the password.
  auto c = ParseBasicCredentials("Basic ZGVmYXVsdDpzZWNyZXQ=");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->user, "default");
  EXPECT_EQ(c->password, "secret");
  c = ParseBasicCredentials("basic  QWxhZGRpbjpvcGVuIHNlc2FtZQ== ");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->user, "Aladdin");
  EXPECT_EQ(c->password, "open sesame");
  c = ParseBasicCredentials("Basic dTpwOnE=");  // u:p:q
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->user, "u");
  EXPECT_EQ(c->password, "p:q");
  c = ParseBasicCredentials("Basic OnNlY3JldA==");  // an empty user name: ":secret"
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->user, "");
  EXPECT_EQ(c->password, "secret");

  EXPECT_FALSE(ParseBasicCredentials(""));
  EXPECT_FALSE(ParseBasicCredentials("Basic"));
  EXPECT_FALSE(ParseBasicCredentials("Basic "));
  EXPECT_FALSE(ParseBasicCredentials("Bearer ZGVmYXVsdDpzZWNyZXQ="));
  EXPECT_FALSE(ParseBasicCredentials("BasicZGVmYXVsdDpzZWNyZXQ="));
  EXPECT_FALSE(ParseBasicCredentials("Basic ZGVmYXVsdA=="));  // "default": no colon
  EXPECT_FALSE(ParseBasicCredentials("Basic !!!notbase64"));
}

// Found by tests/fuzz/http_parser_fuzz: a method of exactly 16 capitals was not HTTP when
// the first read ended right after it, and HTTP when its space came in the same read.
TEST(HttpParserTest, ProbeDoesNotDependOnTheFirstReadsSize) {
  const std::string request = std::string(16, 'M') + " / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(ProbeHttp(request.substr(0, 16)), HttpProbe::kNeedMore);
  EXPECT_EQ(ProbeHttp(request), HttpProbe::kHttp);
  EXPECT_EQ(ProbeHttp(std::string(17, 'M')), HttpProbe::kNotHttp);
  EXPECT_EQ(ProbeHttp(std::string(17, 'M') + " / HTTP/1.1\r\n"), HttpProbe::kNotHttp);
}

}  // namespace
}  // namespace damselfly::facade
