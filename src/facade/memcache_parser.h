// MemcacheParser: an incremental parser of memcached text-protocol requests, classic
// commands and meta commands, that answers the way memcached 1.6 does byte for byte.
//
// Contract with the connection (the same as RespParser's):
//  - The connection keeps unconsumed input in one contiguous buffer and calls
//    Parse(buffer) repeatedly, dropping *consumed bytes from the front after each call.
//  - kCommand consumes one command (its line, and for storage commands its data block)
//    and fills a MemcacheCommand whose views point into the caller's buffer (zero copy),
//    valid until the buffer changes or Parse is called again. The one exception is a
//    meta command's base64 key ('b' flag): its decoded bytes live in the parser.
//  - kNeedMore consumes nothing: the caller reads more bytes, appends them and calls
//    Parse again with the same unconsumed bytes at the start. The buffer may have moved:
//    the parser remembers offsets, never pointers, and does not rescan what it has seen.
//  - kError: error() holds memcached's reply, whether memcached would suppress it
//    (noreply) and whether the connection must close. The connection stays usable unless
//    error().close_connection. An error may swallow a data block (memcached's
//    conn_swallow): *consumed then covers the command line plus whatever part of the
//    block is already in the buffer, and the parser drops the rest as it arrives,
//    returning kSkipped, before it parses the next command.
//  - kSkipped: *consumed bytes of a swallowed data block were dropped; nothing to reply.
//
// Typical loop:
//   while (true) {
//     size_t consumed = 0;
//     auto result = parser.Parse(buffer, &consumed, &cmd);
//     if (result == kCommand) Execute(cmd);           // views valid until the next line
//     if (result == kError && !parser.error().noreply && !parser.error().reply.empty())
//       Send(parser.error().reply, "\r\n");
//     buffer.remove_prefix(consumed);
//     if (result == kError && parser.error().close_connection) Close();
//     if (result == kNeedMore) ReadMore();
//   }
//
// Not thread-safe: one parser per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace damselfly::facade {

// One meta-command flag as sent: its letter and the token glued to it ("T30" -> 'T',
// "30"). Flags without a value keep whatever followed the letter ("vx" -> 'v', "x"),
// which memcached ignores.
struct MetaFlag {
  char letter;
  std::string_view token;
};

// ms modes (M token) and ma modes. kNone for mg, md, me, mn.
enum class MetaMode : uint8_t {
  kNone,
  kSet,        // ms default, "MS"
  kAdd,        // "ME"
  kAppend,     // "MA"
  kPrepend,    // "MP"
  kReplace,    // "MR"
  kIncrement,  // ma default, "MI" or "M+"
  kDecrement,  // "MD" or "M-"
};

// The flags of a meta command. Every letter appears at most once (memcached rejects
// duplicates). Numeric values are meaningful only when Has(letter).
struct MetaArgs {
  std::span<const MetaFlag> flags;  // in request order: mg echoes flags in this order
  uint64_t letters = 0;             // bit (letter - 'A') for each flag present

  bool Has(char letter) const {
    return letter >= 'A' && letter <= 'z' && ((letters >> (letter - 'A')) & 1);
  }

  int64_t ttl = 0;            // T: raw seconds, same rules as classic exptime
  int64_t vivify_ttl = 0;     // N
  int64_t recache_ttl = 0;    // R
  uint64_t compare_cas = 0;   // C
  uint64_t delta = 1;         // D, ma only
  uint64_t initial = 0;       // J, ma only
  uint32_t client_flags = 0;  // F
  std::string_view opaque;    // O: the token after the letter, at most 31 bytes
  MetaMode mode = MetaMode::kNone;
  // 'b': the key as sent (base64). MemcacheCommand::key() is the decoded key. memcached
  // answers 'k' with the decoded key re-encoded, which can differ from this ("YQ=A"
  // decodes to "a\0" and is echoed as "YQA=").
  std::string_view encoded_key;
};

struct MemcacheCommand {
  enum class Type : uint8_t {
    // Storage: key, flags, exptime, data; cas also cas_unique.
    kSet, kAdd, kReplace, kAppend, kPrepend, kCas,
    // Retrieval: keys (one or more for get/gets, zero or more for gat/gats); gat/gats
    // also exptime.
    kGet, kGets, kGat, kGats,
    kTouch,      // key, exptime
    kIncr,       // key, delta
    kDecr,       // key, delta
    kDelete,     // key
    kFlushAll,   // delay (0 if absent)
    kVersion,
    kVerbosity,  // verbosity
    kQuit,
    kStats,      // keys holds the arguments: {} or {"items"} or {"cachedump", "1", "0"}
    // Meta: key and meta; ms also data.
    kMetaGet, kMetaSet, kMetaDelete, kMetaArithmetic,
    kMetaNoop,   // no key
    kMetaDebug,  // key ('b' allowed as the only flag)
  };

  Type type = Type::kVersion;
  std::span<const std::string_view> keys;
  std::string_view data;  // storage commands and ms: the block without its "\r\n"
  uint32_t flags = 0;     // as memcached stores it: the parsed value's low 32 bits
  // Seconds as sent: relative if <= 2592000 (30 days), else absolute unix time;
  // negative means already expired. memcached keeps only the low 32 bits (it parses a
  // long into an int32), so 2147483648 acts as -2147483648: the server decides.
  int64_t exptime = 0;
  uint64_t cas_unique = 0;
  uint64_t delta = 0;
  int64_t delay = 0;       // flush_all, same encoding as exptime
  uint32_t verbosity = 0;
  bool noreply = false;    // classic commands only; meta commands use meta.Has('q')
  MetaArgs meta;

  // REQUIRES: keys is not empty.
  std::string_view key() const { return keys.front(); }
};

// Returns the command's protocol name ("set", "mg", ...).
std::string_view MemcacheCommandName(MemcacheCommand::Type type);

class MemcacheParser {
 public:
  struct Limits {
    // Largest data block (value bytes). memcached's -I (1 MiB) bounds the whole item,
    // header included, so its real limit is 1048576 - 60 - key length (- 4 more with
    // non-zero flags); we bound the value alone.
    size_t max_item_size = 1u << 20;
    // A command line may have at most this many bytes before its '\n' ('\r' included).
    // memcached closes the connection, silently, once it buffers more than 2048 bytes
    // without a '\n', except for "get "/"gets " lines.
    size_t max_line_length = 2048;
    // Bound for those get/gets lines, which memcached lets grow without limit. Longer
    // lines get "SERVER_ERROR out of memory reading request" and a close, as memcached
    // does when it cannot grow its read buffer.
    size_t max_get_line_length = 1u << 20;
    // The protocol says keys have no control characters, but memcached 1.6 accepts any
    // byte except ' ', '\n' and NUL. When true, keys with bytes <= 0x20 or 0x7f get
    // "CLIENT_ERROR bad command line format".
    bool strict_keys = false;
  };

  enum class Result {
    kCommand,   // *out holds one command; *consumed bytes were used
    kSkipped,   // *consumed bytes of a swallowed data block were dropped; no reply
    kNeedMore,  // the request is incomplete; nothing consumed
    kError,     // see error(); *consumed bytes must be dropped
  };

  struct Error {
    std::string_view reply;  // memcached's text without "\r\n"; empty: send nothing
    bool noreply = false;    // memcached would not send reply (the command had noreply)
    bool close_connection = false;
    // memcached drops the item a too-large set or ms would have replaced, so a stale
    // value does not outlive a failed update; the key to delete then (valid until the
    // next Parse), else empty.
    std::string_view unlink_key;
  };

  MemcacheParser();  // default Limits
  explicit MemcacheParser(Limits limits);

  // Parses the request at the start of `input`. Sets *consumed on every result (0 on
  // kNeedMore and on closing errors). On kCommand fills *out; other fields of *out are
  // reset to their defaults.
  Result Parse(std::string_view input, size_t* consumed, MemcacheCommand* out);

  // The last kError. Valid until the next Parse.
  const Error& error() const { return error_; }

  // Total size of the current incomplete request once known (a storage command waiting
  // for its data block), else 0. Lets the connection grow its buffer once.
  size_t bytes_needed() const { return bytes_needed_; }

  // Bytes of a swallowed data block still to be dropped.
  uint64_t skip_remaining() const { return skip_remaining_; }

  // Forgets any partial request and any pending swallow.
  void Reset();

 private:
  struct TokenRef {  // a token of the current command line, relative to its start
    uint32_t offset;
    uint32_t length;
  };
  enum class LineStatus { kFound, kNeedMore, kTooLong, kGetTooLong };
  enum class State { kLine, kData };

  LineStatus FindLine(std::string_view input, size_t* newline);
  void Tokenize(std::string_view line);
  std::string_view Token(std::string_view input, size_t i) const {
    return input.substr(tokens_[i].offset, tokens_[i].length);
  }

  Result ParseLine(std::string_view input, size_t* consumed, MemcacheCommand* out);
  Result ParseStorage(std::string_view input, size_t* consumed, MemcacheCommand* out);
  Result ParseRetrieval(std::string_view input, size_t* consumed, MemcacheCommand* out);
  Result ParseSimple(std::string_view input, size_t* consumed, MemcacheCommand* out);
  Result ParseMeta(std::string_view input, size_t* consumed, MemcacheCommand* out);
  // memcached's flag pre-parse: on failure sets *error to the mg/ms wording.
  bool ParseMetaFlags(std::string_view input, std::string_view* error);
  Result AwaitData(std::string_view input, size_t* consumed, MemcacheCommand* out);

  // Key checks shared by all commands: length, and control bytes with strict_keys.
  bool KeyOk(std::string_view key) const;

  // Fills *out from cmd_ and the token refs; views point into `input`.
  Result Emit(std::string_view input, size_t size, size_t* consumed, MemcacheCommand* out);
  // Reports an error after the current line. swallow: data bytes memcached drops.
  Result Fail(std::string_view input, std::string_view reply, bool noreply, uint64_t swallow,
              size_t* consumed);
  Result FailClose(std::string_view reply, size_t* consumed);
  void ResetRequest();

  Limits limits_;
  State state_ = State::kLine;
  size_t scan_pos_ = 0;      // kLine: bytes already searched for '\n'
  size_t line_size_ = 0;     // the command line, '\n' included
  size_t data_size_ = 0;     // kData: bytes of the data block, without "\r\n"
  size_t bytes_needed_ = 0;
  uint64_t skip_remaining_ = 0;

  std::vector<TokenRef> tokens_;  // the current command line's tokens
  MemcacheCommand cmd_;           // the command being parsed, without views
  size_t first_key_ = 0;          // keys are tokens_[first_key_, first_key_ + num_keys_)
  size_t num_keys_ = 0;
  size_t first_flag_ = 0;         // meta flags are tokens_[first_flag_, end)
  bool key_decoded_ = false;      // the key is decoded_key_ (base64 'b')
  size_t opaque_token_ = 0;       // token index of the O flag, if any
  char mode_letter_ = 0;          // the M flag's mode byte, if any

  std::vector<std::string_view> keys_;  // materialised on kCommand
  std::vector<MetaFlag> meta_flags_;
  std::string decoded_key_;
  Error error_;
};

}  // namespace damselfly::facade
