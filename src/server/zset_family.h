// The sorted-set commands: ZADD ZINCRBY ZREM ZSCORE ZMSCORE ZCARD ZCOUNT ZLEXCOUNT ZRANK
// ZREVRANK, the range reads (ZRANGE with BYSCORE/BYLEX/REV/LIMIT, ZRANGEBYSCORE,
// ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZREVRANGE) and removals
// (ZREMRANGEBYRANK/SCORE/LEX), the pops (ZPOPMIN, ZPOPMAX, ZMPOP), ZRANDMEMBER, ZSCAN, and
// the multi-key ones (ZRANGESTORE, ZUNION, ZINTER, ZDIFF, their *STORE forms,
// ZINTERCARD). Values are sorted sets as zset_object.h keeps them. Single-key commands run on the
// key's shard; multi-key ones copy their inputs out in a read hop of a CommandTransaction
// and write the destination in a second hop, so they are atomic across shards.
#pragma once

#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "src/facade/command_registry.h"
#include "src/server/db_slice.h"
#include "src/server/op_status.h"
#include "src/server/zset_object.h"

namespace damselfly {

class ZSetFamily {
 public:
  // Registers the commands and the sorted set's TypedObject factory.
  static void Register(facade::CommandRegistry* registry);

  // Shard code the geo commands share (a geo set is a sorted set). Call on the key's
  // shard thread.
  struct AddFlags {
    bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
  };
  struct AddOutcome {
    size_t added = 0, updated = 0, processed = 0;
    double last_score = 0;  // INCR: the member's new score when processed
    bool nan = false;       // INCR made the score NaN: nothing changed
  };
  using ScoreMembers = absl::InlinedVector<std::pair<double, std::string_view>, 4>;
  // ZADD's write (Redis's zsetAdd for each pair), with its "zadd" event.
  static OpResult<AddOutcome> Add(DbIndex db, std::string_view key, const AddFlags& flags,
                                  const ScoreMembers& pairs);
  // Replaces `key` with a sorted set of `pairs` (ascending, distinct members; none:
  // deletes the key), without a deadline, reporting `event`, as the *STORE commands do.
  static void Store(DbIndex db, std::string_view key, const ZSetView::SortedPairs& pairs,
                    std::string_view event);
};

}  // namespace damselfly
