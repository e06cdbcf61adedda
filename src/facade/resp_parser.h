// RespParser: an incremental parser of Redis requests, multibulk (RESP) and inline.
//
// Contract with the connection:
//  - The connection keeps unconsumed input in one contiguous buffer and calls
//    Parse(buffer) repeatedly. kCommand consumes one command and exposes its arguments;
//    kNeedMore consumes nothing: the caller reads more bytes, appends them, and calls
//    Parse again with the same unconsumed bytes at the start (the buffer may have moved;
//    the parser remembers offsets, never pointers, so nothing is scanned twice).
//  - Arguments are views into the caller's buffer (no copy) and stay valid until the
//    buffer is changed or Parse is called again. Inline commands with quotes are the
//    exception: their unescaped arguments live in the parser.
//  - kError: error() holds Redis's exact reply text (without the leading '-'), e.g.
//    "ERR Protocol error: invalid bulk length". The connection sends it and closes,
//    as Redis does. The parser must be Reset() before any further use.
//
// Not thread-safe: one parser per connection.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

namespace damselfly::facade {

using CmdArgList = absl::Span<const std::string_view>;

class RespParser {
 public:
  struct Limits {
    size_t max_bulk_len = 512u << 20;    // --proto_max_bulk_len
    size_t max_args = INT_MAX;           // Redis 7.0: INT_MAX (1024*1024 before 6.2)
    size_t max_inline_len = 64u << 10;   // Redis: PROTO_INLINE_MAX_SIZE
  };

  enum class Result {
    kCommand,   // args() holds one command; *consumed bytes were used
    kSkipped,   // an empty request (blank inline line, "*0", "*-1") was consumed; no reply
    kNeedMore,  // the request is incomplete; nothing consumed
    kError,     // protocol error; see error()
  };

  RespParser();  // default Limits
  explicit RespParser(Limits limits);

  // Parses the request at the start of `input`. On kCommand and kSkipped sets *consumed
  // to the bytes used; on kNeedMore and kError sets it to 0.
  Result Parse(std::string_view input, size_t* consumed);

  // The last command's arguments. REQUIRES: the last Parse returned kCommand.
  CmdArgList args() const { return {args_.data(), args_.size()}; }

  // Redis's reply text for the last kError.
  const std::string& error() const { return error_; }

  // Total size of the current incomplete request once known (e.g. after a bulk length
  // arrived), else 0. Lets the connection grow its buffer once for a big argument.
  size_t bytes_needed() const { return bytes_needed_; }

  // Memory the argument lists hold.
  size_t bytes_held() const {
    return arg_refs_.capacity() * sizeof(ArgRef) + args_.capacity() * sizeof(std::string_view);
  }

  // Clients that have not authenticated while a password is required get Redis's
  // tighter limits: at most 10 arguments of at most 16384 bytes
  // ("Protocol error: unauthenticated multibulk length" / "... bulk length"). Others may
  // send up to max_args arguments; what bounds their memory is the connection's
  // query-buffer limit on the whole request (this parser holds 32 bytes per argument
  // beside it: where each sits, and the views handed out).
  void set_unauthenticated(bool value) { unauthenticated_ = value; }

  // Forgets any partial request.
  void Reset();

  // Frees the argument lists when a command of more than kRetainedArgs arguments grew
  // them (a million-argument MSET leaves tens of MiB behind otherwise). REQUIRES: the
  // last command's args() are no longer used.
  static constexpr size_t kRetainedArgs = 1024;
  void ShrinkArgs();

 private:
  // Implementation state: offsets relative to the start of the current request.
  // (The implementation owns the details; see resp_parser.cc.)
  Result ParseMultibulk(std::string_view input, size_t* consumed);
  Result ParseInline(std::string_view input, size_t* consumed);
  Result Fail(std::string message);

  Limits limits_;
  bool unauthenticated_ = false;

  enum class State { kStart, kArrayLen, kBulkLen, kBulkData, kInline };
  enum class LineStatus { kFound, kNeedMore, kTooBig };
  LineStatus FindLine(std::string_view input, char terminator, size_t* end);
  Result FailLine(std::string_view input, const char* too_big, std::string message);
  void ResetRequest();

  State state_ = State::kStart;
  size_t pos_ = 0;             // bytes of the current request already parsed
  size_t scan_pos_ = 0;        // line states: bytes searched for the terminator so far
  bool line_blocked_ = false;  // a NUL precedes the terminator: Redis never finds it
  int64_t args_expected_ = 0;  // multibulk: the declared argument count
  int64_t bulk_len_ = 0;       // multibulk: length of the argument being read
  struct ArgRef {
    size_t offset;
    size_t length;
  };
  std::vector<ArgRef> arg_refs_;       // where each argument sits in the request
  std::vector<std::string_view> args_;  // materialised on kCommand
  std::string inline_scratch_;          // unescaped inline arguments
  std::string error_;
  size_t bytes_needed_ = 0;
};

}  // namespace damselfly::facade
