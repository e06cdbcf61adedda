// What the stream commands (stream_family.cc) and the consumer-group commands
// (stream_groups.cc) share: ID parsing, the reply shapes of entries and XREAD-style
// results, and finding a stream. Internal to the stream family.
//
// Thread-safety: FindStream and FindMutableStream use this thread's DbSlice (a shard
// thread); the rest is pure.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "src/core/stream.h"
#include "src/facade/command_registry.h"
#include "src/facade/reply_builder.h"
#include "src/server/blocking_controller.h"
#include "src/server/db_slice.h"
#include "src/server/op_status.h"

namespace damselfly::stream_internal {

inline constexpr char kInvalidIdErr[] =
    "ERR Invalid stream ID specified as stream command argument";

// An ID as Redis's streamGenericParseIDOrReply reads it: "ms-seq", or "ms" with
// `missing_seq`; "-" and "+" unless `strict`; "ms-*" only where `seq_given` is asked for
// (XADD), which it then sets to false.
std::optional<core::StreamID> ParseId(std::string_view text, uint64_t missing_seq, bool strict,
                                      bool* seq_given = nullptr);
// An interval bound as XRANGE and XPENDING read it: "(" makes it exclusive (then only an
// ID may follow). Replies Redis's error and returns nullopt when it is bad.
std::optional<core::StreamID> ParseRangeBound(facade::ReplyBuilder* rb, std::string_view text,
                                              bool start);

void SendId(facade::ReplyBuilder* rb, core::StreamID id);
// An array of [id, [field, value...]].
void SendEntries(facade::ReplyBuilder* rb, const std::vector<core::Stream::Entry>& entries);
// XREAD's reply holds `keys` streams: a map in RESP3, an array of [key, entries] in RESP2.
void StartReadReply(facade::ReplyBuilder* rb, size_t keys);
// One stream of XREAD's reply (its key is sent next, then its entries).
void StartReadKey(facade::ReplyBuilder* rb);

OpResult<const core::Stream*> FindStream(DbIndex db, std::string_view key);

// Registers XGROUP XREADGROUP XACK XPENDING XCLAIM XAUTOCLAIM XINFO (stream_groups.cc).
void RegisterGroupCommands(facade::CommandRegistry* registry);

// XREAD's and XREADGROUP's options, as Redis's xreadCommand parses both.
struct ReadArgs {
  size_t count = 0;  // 0: all
  std::optional<int64_t> block_ms;
  size_t first_key = 0;  // the keys follow STREAMS; their IDs follow them
  size_t num_keys = 0;
  std::string_view group, consumer;  // XREADGROUP
  bool noack = false;                // XREADGROUP
};
// A served waiter's result (a blocked XREAD or XREADGROUP) as the read's answer for its
// one key: entries flattened as id, field count, fields and values.
void SendServedRead(facade::ReplyBuilder* rb, const Waiter::Result& result);

// Parses XREAD's (`group_read` false) or XREADGROUP's options; "" or Redis's error text.
std::string_view ParseReadArgs(facade::CmdArgList args, bool group_read, ReadArgs* out);

}  // namespace damselfly::stream_internal
