// DEBUG DIGEST and DEBUG DIGEST-VALUE as redis-server 7.0 computes them, so that comparing
// a dataset (or a value) with redis-server's is one command on each side: the round trips
// of RDB files and DUMP payloads between the two servers are checked this way.
//
// Redis's arithmetic, on 20-byte SHA1 digests:
//   xor(d, bytes)   d ^= SHA1(bytes)             order does not count (set members, keys)
//   mix(d, bytes)   d = SHA1(d ^ SHA1(bytes))    order counts (list elements, stream)
// A value, from a digest d (zero for DIGEST-VALUE):
//   mix(d, Redis's type number as 4 big-endian bytes: string 0, list 1, set 2, zset 3,
//   hash 4, stream 6), then
//   string  mix(bytes); an integer-encoded string as its decimal text
//   list    mix(element) from head to tail
//   set     xor(member)
//   hash    for each pair, xor(d, mix(mix(0, field), value))
//   zset    for each member, xor(d, mix(mix(0, member), score printed with "%.17g"))
//   stream  for each entry: mix("<ms>.<seq>"), then mix(field), mix(value) per pair;
//           consumer groups do not count (Redis 7.0 leaves them out)
//   expiry  any deadline: xor("!!expire!!") (the deadline itself does not count)
// A key's digest is mix(0, key name) followed by its value's steps. The dataset's digest
// starts at zero; for each database with keys, in index order, final = mix(final, index
// as 4 big-endian bytes), then xor(final, the digest of each of its keys). (xor hashes
// the 20 bytes of a pair's or a key's digest again before it XORs them in, as Redis's
// xorDigest does for any bytes.)
//
// Across shards: the keys of a database XOR together in any order, so each shard sums
// its own (ShardDigest, in one whole-shard transaction, which is the consistent cut) and
// CombineShardDigests XORs the shards' sums per database and chains the databases in
// order. The chain is why a shard cannot simply XOR its keys into one digest: the
// database mix of database j scrambles everything summed before it.
//
// Differences from Redis: keys past their deadline that expiry has not reclaimed yet are
// left out (Redis, which walks its dictionaries, counts them, so its digest depends on
// when active expiry ran); values are digested by content, so every encoding of the same
// content gives the same digest, as in Redis.
//
// Thread contract: ValueDigest, KeyDigest and ShardDigest run on the thread of the shard
// that owns the values (they read its objects); the rest are pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "src/server/prime_value.h"

namespace damselfly {

class DbSlice;

using Digest = std::array<uint8_t, 20>;

// Redis's xorDigest and mixDigest (see the top of this file).
void XorDigest(Digest* digest, std::string_view bytes);
void MixDigest(Digest* digest, std::string_view bytes);

// DEBUG DIGEST-VALUE's digest of a value; `has_expire`: the key has a deadline.
Digest ValueDigest(const PrimeValue& value, bool has_expire);
// The digest of a key and its value, as DEBUG DIGEST sums them.
Digest KeyDigest(std::string_view key, const PrimeValue& value, bool has_expire);

// One shard's part of DEBUG DIGEST: per database index, xor of its keys' digests from
// zero, or nullopt when the shard has no live key there.
using ShardDigest = std::vector<std::optional<Digest>>;
ShardDigest DigestShard(DbSlice& slice);
// The dataset's digest from every shard's part (any order); all zeros when no shard has
// a key.
Digest CombineShardDigests(absl::Span<const ShardDigest> shards);

// 40 lower-case hex digits, as Redis prints a digest.
std::string DigestHex(const Digest& digest);

}  // namespace damselfly
