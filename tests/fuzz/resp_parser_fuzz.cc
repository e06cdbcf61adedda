// Fuzzes RespParser (src/facade/resp_parser.h), the RESP and inline request parser.
//
// Input: one control byte, then the bytes a client sends. The control byte picks tight
// limits (so the length checks are reached with small inputs), the unauthenticated mode
// and the size of the reads that deliver the stream.
//
// Besides the sanitizers, two oracles:
//  - the parser's contract: *consumed within the input, 0 on kNeedMore and kError, at
//    least one argument per command (every byte of each is read: ASAN checks the views);
//  - reads of any size give the same requests as the whole stream at once, except that
//    small reads may stop earlier with a "too big ... request/count string" error, as
//    Redis's do (a line is too big once more than the limit is buffered without its end).
// The buffer is reallocated between reads, so a parser that kept a pointer into it
// instead of an offset is caught by ASAN.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "src/facade/resp_parser.h"

namespace {

using damselfly::facade::RespParser;

void Check(bool condition) {
  if (!condition) abort();
}

// The outcomes of parsing `stream` delivered `read_size` bytes at a time, each encoded
// as a string: "C" + length-prefixed arguments, "S" (skipped) or "E" + the error.
std::vector<std::string> ParseStream(std::string_view stream, const RespParser::Limits& limits,
                                     bool unauthenticated, size_t read_size) {
  RespParser parser(limits);
  parser.set_unauthenticated(unauthenticated);
  std::vector<std::string> outcomes;
  std::string buffer;
  size_t delivered = 0;
  while (true) {
    size_t consumed = 12345;
    const RespParser::Result result = parser.Parse(buffer, &consumed);
    switch (result) {
      case RespParser::Result::kCommand: {
        Check(consumed > 0 && consumed <= buffer.size());
        std::string outcome = "C";
        for (std::string_view arg : parser.args()) {
          outcome += std::to_string(arg.size()) + ":";
          outcome += arg;
        }
        Check(!parser.args().empty());
        outcomes.push_back(std::move(outcome));
        buffer.erase(0, consumed);
        continue;
      }
      case RespParser::Result::kSkipped:
        Check(consumed > 0 && consumed <= buffer.size());
        outcomes.push_back("S");
        buffer.erase(0, consumed);
        continue;
      case RespParser::Result::kError:
        Check(consumed == 0 && !parser.error().empty());
        outcomes.push_back("E" + parser.error());
        return outcomes;
      case RespParser::Result::kNeedMore:
        Check(consumed == 0);
        break;
    }
    if (delivered == stream.size()) return outcomes;
    // A new allocation for every read: offsets must survive the move.
    std::string moved;
    moved.reserve(buffer.size() + read_size);
    moved.append(buffer);
    moved.append(stream.substr(delivered, read_size));
    delivered += std::min(read_size, stream.size() - delivered);
    buffer.swap(moved);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  RespParser::Limits limits;
  if (control & 1) {
    limits.max_bulk_len = 64;
    limits.max_args = 8;
    limits.max_inline_len = 128;
  }
  const bool unauthenticated = control & 2;
  const size_t read_size = (control >> 2) + 1;  // 1 to 64 bytes per read

  const std::vector<std::string> whole =
      ParseStream(stream, limits, unauthenticated, stream.size() + 1);
  const std::vector<std::string> pieces = ParseStream(stream, limits, unauthenticated, read_size);
  for (size_t i = 0; i < whole.size() && i < pieces.size(); ++i) {
    if (whole[i] == pieces[i]) continue;
    Check(pieces[i].starts_with("E") && pieces[i].find("too big") != std::string::npos);
    return 0;
  }
  Check(whole.size() == pieces.size());
  return 0;
}
