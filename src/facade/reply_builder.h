// ReplyBuilder: serialises replies in RESP2 or RESP3 into an output buffer.
//
// The connection hands the buffer to one send/writev per batch of pipelined requests
// (and earlier when it grows past a threshold, so a client that stops reading blocks its
// own fiber instead of growing memory). Commands call the Send*/Start* methods; types
// RESP2 lacks are mapped as Redis maps them: map -> flat array of 2n, set -> array,
// double / big number / verbatim -> bulk string, null -> "$-1" (or "*-1" for a null
// array), push -> array, bool -> integer 0/1.
//
// Not thread-safe. A command executing on another shard's thread may write into it while
// the connection's fiber waits for that hop (the hop's hand-off orders the accesses).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/types/span.h"

namespace damselfly::facade {

enum class RespVersion { kResp2 = 2, kResp3 = 3 };

class ReplyBuilder {
 public:
  RespVersion protocol() const { return protocol_; }
  void set_protocol(RespVersion version) { protocol_ = version; }

  void SendOk();                             // +OK
  void SendSimpleString(std::string_view s);  // +s  (REQUIRES: no \r or \n in s)
  // `message` is the full error text without '-', starting with its code:
  // "ERR syntax error", "WRONGTYPE Operation against a key ...". A \r or \n inside is
  // replaced by a space, as Redis does, so the reply stays one line.
  void SendError(std::string_view message);
  // The same reply, left out of INFO errorstats and total_error_replies: an error they
  // counted when a command sent it first (a script returning its command's error).
  void SendErrorCountedBefore(std::string_view message);
  void SendLong(int64_t value);               // :value
  void SendBulk(std::string_view value);      // $len\r\nvalue\r\n
  void SendNull();                            // RESP2 $-1, RESP3 _
  void SendNullArray();                       // RESP2 *-1, RESP3 _
  void SendDouble(double value);              // RESP3 ,value; RESP2 bulk (%.17g, inf/-inf/nan)
  void SendBigNumber(std::string_view digits);          // RESP3 (digits; RESP2 bulk
  // A double its caller formatted (GEOPOS's 17-decimal coordinates): RESP3 ,text; RESP2 bulk.
  void SendDoubleText(std::string_view text);
  void SendVerbatim(std::string_view text, std::string_view format = "txt");  // =len\r\ntxt:...
  void SendBool(bool value);                  // RESP3 #t/#f; RESP2 :1/:0

  void StartArray(size_t length);             // *length
  void StartMap(size_t pairs);                // RESP3 %pairs; RESP2 *2*pairs
  void StartSet(size_t length);               // RESP3 ~length; RESP2 *length
  void StartPush(size_t length);              // RESP3 >length; RESP2 *length
  // RESP3 |pairs: the attribute map that precedes a reply. RESP2 has no attributes:
  // REQUIRES protocol() == kResp3 (a RESP2 caller sends the reply alone).
  void StartAttribute(size_t pairs);

  void SendEmptyArray() { StartArray(0); }
  void SendBulkArray(absl::Span<const std::string_view> values);  // array of bulks
  void SendBulkArray(absl::Span<const std::string> values);
  // An array of simple strings: how Redis answers HELP subcommands.
  void SendSimpleStringArray(absl::Span<const std::string_view> lines);

  // The serialised replies not yet taken.
  std::string_view output() const { return buffer_; }
  size_t output_size() const { return buffer_.size(); }
  size_t output_capacity() const { return buffer_.capacity(); }
  // Drops the output past its first `size` bytes (replies CLIENT REPLY suppresses).
  void TruncateOutput(size_t size) {
    if (size < buffer_.size()) buffer_.resize(size);
  }
  // Drops the first `bytes` of output (they were sent).
  void ConsumeOutput(size_t bytes);
  void ClearOutput() { buffer_.clear(); }
  // Clears the output and frees the buffer's memory (an idle connection parks).
  void ReleaseOutput() { std::string().swap(buffer_); }

  // Errors sent so far (for INFO errorstats, later): counts by code are kept by the caller.
  uint64_t errors_sent() const { return errors_sent_; }
  // Takes `count` errors back from errors_sent(): replies that a script's commands wrote
  // here and the script took as values. They counted as those commands' failures, not
  // the script command's.
  void TakeBackErrors(uint64_t count) { errors_sent_ -= count; }

 private:
  void AppendLengthHeader(char type, int64_t length);  // "<type><length>\r\n"

  RespVersion protocol_ = RespVersion::kResp2;
  std::string buffer_;
  uint64_t errors_sent_ = 0;
};

}  // namespace damselfly::facade
