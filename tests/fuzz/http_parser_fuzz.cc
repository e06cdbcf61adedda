// Fuzzes the HTTP side of the RESP ports (src/facade/http_parser.h): ProbeHttp on a
// connection's first bytes, then HttpRequestParser on the requests that follow.
//
// Input: one control byte, then the bytes a client sends. The control byte picks tight
// limits (header bytes, header count, body size) and the size of the reads.
//
// Oracles besides the sanitizers:
//  - ProbeHttp never changes its mind: once a prefix gives kHttp or kNotHttp, every
//    longer prefix gives the same;
//  - the parser's contract: *consumed within the input on kDone, and reads of any size
//    give the same requests as the whole stream at once, except that small reads may end
//    earlier with an error (a head is too large once more than the limit is buffered
//    without its end).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "src/facade/http_parser.h"

namespace {

using damselfly::facade::HttpProbe;
using damselfly::facade::HttpRequest;
using damselfly::facade::HttpRequestParser;

void Check(bool condition) {
  if (!condition) abort();
}

void Append(std::string* out, std::string_view bytes) {
  *out += std::to_string(bytes.size()) + ":";
  *out += bytes;
}

std::string Describe(const HttpRequest& request, size_t consumed) {
  std::string out = "R" + std::to_string(consumed);
  Append(&out, request.method);
  Append(&out, request.target);
  Append(&out, request.path());
  for (const auto& [name, value] : request.headers) {
    Append(&out, name);
    Append(&out, value);
  }
  Append(&out, request.Header("content-length"));
  out += " " + std::to_string(request.minor_version) + " " +
         std::to_string(request.content_length) + " " + std::to_string(request.keep_alive);
  return out;
}

// Outcomes of parsing `stream` delivered `read_size` bytes at a time: "R..." per
// request, "E<status>" for the error that ends the connection.
std::vector<std::string> ParseStream(std::string_view stream,
                                     const HttpRequestParser::Limits& limits, size_t read_size) {
  HttpRequestParser parser(limits);
  std::vector<std::string> outcomes;
  std::string buffer;
  size_t delivered = 0;
  while (true) {
    if (!buffer.empty()) {
      size_t consumed = 0;
      const HttpRequestParser::Result result = parser.Parse(buffer, &consumed);
      if (result == HttpRequestParser::Result::kDone) {
        Check(consumed > 0 && consumed <= buffer.size());
        outcomes.push_back(Describe(parser.request(), consumed));
        buffer.erase(0, consumed);
        continue;
      }
      if (result == HttpRequestParser::Result::kError) {
        Check(parser.error_status() >= 400 && parser.error_status() < 600);
        outcomes.push_back("E" + std::to_string(parser.error_status()));
        return outcomes;
      }
    }
    if (delivered == stream.size()) return outcomes;
    std::string moved;  // a new allocation for every read
    moved.reserve(buffer.size() + read_size);
    moved.append(buffer);
    moved.append(stream.substr(delivered, read_size));
    delivered += std::min(read_size, stream.size() - delivered);
    buffer.swap(moved);
  }
}

void CheckProbe(std::string_view stream) {
  if (stream.empty()) return;
  HttpProbe decided = HttpProbe::kNeedMore;
  for (size_t n = 1; n <= stream.size() && n <= 512; ++n) {
    const HttpProbe probe = damselfly::facade::ProbeHttp(stream.substr(0, n));
    if (decided != HttpProbe::kNeedMore) Check(probe == decided);
    decided = probe;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  CheckProbe(stream);

  HttpRequestParser::Limits limits;
  if (control & 1) {
    limits.max_header_bytes = 160;
    limits.max_headers = 4;
    limits.max_body_bytes = 32;
  }
  const size_t read_size = (control >> 1) + 1;  // 1 to 128 bytes per read
  const std::vector<std::string> whole = ParseStream(stream, limits, stream.size() + 1);
  const std::vector<std::string> pieces = ParseStream(stream, limits, read_size);
  for (size_t i = 0; i < whole.size() && i < pieces.size(); ++i) {
    if (whole[i] == pieces[i]) continue;
    Check(pieces[i].starts_with("E"));
    return 0;
  }
  Check(whole.size() == pieces.size());
  return 0;
}
