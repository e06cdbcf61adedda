// Fuzzes MemcacheParser (src/facade/memcache_parser.h): classic text commands, their
// data blocks, and meta commands.
//
// Input: one control byte, then the bytes a client sends. The control byte picks tight
// limits (so the item and line bounds are reached with small inputs), strict keys, and
// the size of the reads that deliver the stream.
//
// Besides the sanitizers, two oracles:
//  - the parser's contract: *consumed within the input, 0 on kNeedMore and on closing
//    errors, every view of a command readable (ASAN checks them);
//  - reads of any size give the same commands and errors as the whole stream at once,
//    ignoring kSkipped (how a swallowed block is dropped depends on the reads), except
//    that small reads may end earlier with a closing error: memcached closes a
//    connection once it buffers an over-long line without its '\n'.
// The buffer is reallocated between reads, so a parser that kept a pointer into it
// instead of an offset is caught by ASAN.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "src/facade/memcache_parser.h"

namespace {

using damselfly::facade::MemcacheCommand;
using damselfly::facade::MemcacheParser;

void Check(bool condition) {
  if (!condition) abort();
}

void Append(std::string* out, std::string_view bytes) {
  *out += std::to_string(bytes.size()) + ":";
  *out += bytes;
}

std::string Describe(const MemcacheCommand& cmd) {
  std::string out = "C" + std::to_string(int(cmd.type));
  for (std::string_view key : cmd.keys) Append(&out, key);
  Append(&out, cmd.data);
  for (uint64_t n : {uint64_t(cmd.flags), uint64_t(cmd.exptime), cmd.cas_unique, cmd.delta,
                     uint64_t(cmd.delay), uint64_t(cmd.verbosity), uint64_t(cmd.noreply)}) {
    out += " " + std::to_string(n);
  }
  const damselfly::facade::MetaArgs& meta = cmd.meta;
  for (const damselfly::facade::MetaFlag& flag : meta.flags) {
    out += flag.letter;
    Append(&out, flag.token);
    Check(meta.Has(flag.letter));
  }
  for (uint64_t n : {meta.letters, uint64_t(meta.ttl), uint64_t(meta.vivify_ttl),
                     uint64_t(meta.recache_ttl), meta.compare_cas, meta.delta, meta.initial,
                     uint64_t(meta.client_flags), uint64_t(meta.mode)}) {
    out += " " + std::to_string(n);
  }
  Append(&out, meta.opaque);
  Append(&out, meta.encoded_key);
  out += damselfly::facade::MemcacheCommandName(cmd.type);
  return out;
}

// The outcomes of parsing `stream` delivered `read_size` bytes at a time: "C..." for a
// command (Describe), "E<close><noreply>reply|unlink_key" for an error.
std::vector<std::string> ParseStream(std::string_view stream, const MemcacheParser::Limits& limits,
                                     size_t read_size) {
  MemcacheParser parser(limits);
  std::vector<std::string> outcomes;
  std::string buffer;
  size_t delivered = 0;
  MemcacheCommand cmd;
  while (true) {
    size_t consumed = 12345;
    const MemcacheParser::Result result = parser.Parse(buffer, &consumed, &cmd);
    Check(consumed <= buffer.size());
    switch (result) {
      case MemcacheParser::Result::kCommand:
        Check(consumed > 0);
        outcomes.push_back(Describe(cmd));
        buffer.erase(0, consumed);
        continue;
      case MemcacheParser::Result::kSkipped:
        Check(consumed > 0);
        buffer.erase(0, consumed);
        continue;
      case MemcacheParser::Result::kError: {
        const MemcacheParser::Error& error = parser.error();
        std::string outcome = "E";
        outcome += error.close_connection ? '1' : '0';
        outcome += error.noreply ? '1' : '0';
        outcome += error.reply;
        outcome += "|";
        outcome += error.unlink_key;
        outcomes.push_back(std::move(outcome));
        if (error.close_connection) {
          Check(consumed == 0);
          return outcomes;
        }
        Check(consumed > 0);
        buffer.erase(0, consumed);
        continue;
      }
      case MemcacheParser::Result::kNeedMore:
        Check(consumed == 0);
        break;
    }
    if (delivered == stream.size()) return outcomes;
    std::string moved;  // a new allocation for every read: offsets must survive the move
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
  MemcacheParser::Limits limits;
  if (control & 1) {
    limits.max_item_size = 64;
    limits.max_line_length = 96;
    limits.max_get_line_length = 256;
  }
  limits.strict_keys = control & 2;
  const size_t read_size = (control >> 2) + 1;  // 1 to 64 bytes per read

  const std::vector<std::string> whole = ParseStream(stream, limits, stream.size() + 1);
  const std::vector<std::string> pieces = ParseStream(stream, limits, read_size);
  for (size_t i = 0; i < whole.size() && i < pieces.size(); ++i) {
    if (whole[i] == pieces[i]) continue;
    Check(pieces[i].starts_with("E1"));
    return 0;
  }
  Check(whole.size() == pieces.size());
  return 0;
}
