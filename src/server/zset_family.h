// The sorted-set commands: ZADD ZINCRBY ZREM ZSCORE ZMSCORE ZCARD ZCOUNT ZLEXCOUNT ZRANK
// ZREVRANK, the range reads (ZRANGE with BYSCORE/BYLEX/REV/LIMIT, ZRANGEBYSCORE,
// ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZREVRANGE) and removals
// (ZREMRANGEBYRANK/SCORE/LEX), the pops (ZPOPMIN, ZPOPMAX, ZMPOP), ZRANDMEMBER, ZSCAN, and
// the multi-key ones (ZRANGESTORE, ZUNION, ZINTER, ZDIFF, their *STORE forms,
// ZINTERCARD). Values are ZSetObject (zset_object.h). Single-key commands run on the
// key's shard; multi-key ones copy their inputs out in a read hop of a CommandTransaction
// and write the destination in a second hop, so they are atomic across shards.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class ZSetFamily {
 public:
  // Registers the commands and the sorted set's TypedObject factory.
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
