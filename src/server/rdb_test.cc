// The RDB codec (rdb_save.h, rdb_load.h, core/rdb_legacy.h) and DUMP / RESTORE
// (dump_family.h): exact bytes against payloads redis-server 7.0.15 produced, round
// trips of every type and encoding, Redis 6.x (RDB 9) encodings from hand-made blobs,
// refusals of malformed input, a bounded fuzz run, and the commands in-process.
#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_join.h"
#include "helio/base/strings.h"
#include "src/core/crc64.h"
#include "src/core/lzf.h"
#include "src/core/rdb_format.h"
#include "src/core/rdb_legacy.h"
#include "src/core/set_object.h"
#include "src/core/stream.h"
#include "src/server/collection_limits.h"
#include "src/server/hash_object.h"
#include "src/server/list_object.h"
#include "src/server/rdb_load.h"
#include "src/server/rdb_save.h"
#include "src/server/test_utils.h"
#include "src/server/zset_object.h"

namespace damselfly {
namespace {

namespace rdb = core::rdb;
using testing::ElementsAre;

std::string Hex(std::string_view hex) {
  return absl::HexStringToBytes(absl::string_view(hex.data(), hex.size()));
}

// A payload's value bytes with a fresh footer (version 10, CRC64), as DUMP makes them.
std::string WithFooter(std::string value) {
  value.push_back(char(rdb::kVersion));
  value.push_back(0);
  const uint64_t crc = core::Crc64(0, value);
  for (int i = 0; i < 8; ++i) value.push_back(char(crc >> (8 * i)));
  return value;
}

// The content of a value, independent of its encoding: type, then elements in the
// order that is part of the content (lists, sorted sets, streams) or sorted.
std::string Describe(const PrimeValue& value) {
  std::vector<std::string> items;
  bool sort = false;
  switch (value.type()) {
    case ObjType::kString: {
      std::string scratch;
      return helio::StrCat("string:", value.GetString(&scratch));
    }
    case ObjType::kList: {
      const ListView list(value);
      for (ListView::Cursor c = list.Begin(ListView::End::kHead); c.Valid(); c.Next()) {
        items.push_back(c.Get().ToString());
      }
      break;
    }
    case ObjType::kHash:
      HashView(value).ForEach([&](std::string_view f, std::string_view v) {
        items.push_back(helio::StrCat(f, "=", v));
      });
      sort = true;
      break;
    case ObjType::kSet:
      value.GetObjectAs<core::SetObject>()->ForEach(
          [&](std::string_view m) { items.push_back(std::string(m)); });
      sort = true;
      break;
    case ObjType::kZSet: {
      const ZSetView zset(value);
      zset.Walk(0, zset.Size(), false, [&](std::string_view m, double s) {
        char buf[core::kMaxScoreChars];
        items.push_back(helio::StrCat(m, "=", core::FormatScore(s, buf)));
        return true;
      });
      break;
    }
    case ObjType::kStream: {
      const core::Stream* s = value.GetObjectAs<core::Stream>();
      items.push_back(helio::StrCat("len=", s->Length(), " last=", s->last_id().ToString(),
                                    " first=", s->first_id().ToString(), " maxdel=",
                                    s->max_deleted_id().ToString(), " added=", s->entries_added()));
      for (const auto& e : s->Range(core::StreamID::Min(), core::StreamID::Max(), 0, false)) {
        items.push_back(helio::StrCat(e.id.ToString(), ":", absl::StrJoin(e.pairs, ",")));
      }
      if (s->groups() == nullptr) break;
      for (const auto& [name, group] : *s->groups()) {
        items.push_back(helio::StrCat("group ", name, " last=", group->last_id.ToString(),
                                      " read=", group->entries_read));
        for (const auto& [id, entry] : group->pel()) {
          items.push_back(helio::StrCat(" pel ", id.ToString(), " t=", entry.delivery_time_ms,
                                        " n=", entry.delivery_count, " ", entry.consumer->name));
        }
        for (const auto& [consumer_name, consumer] : group->consumers()) {
          std::vector<std::string> ids;
          for (const core::StreamID& id : consumer->pending) ids.push_back(id.ToString());
          items.push_back(helio::StrCat(" consumer ", consumer_name, " seen=",
                                        consumer->seen_time_ms, " ", absl::StrJoin(ids, ",")));
        }
      }
      break;
    }
  }
  if (sort) std::sort(items.begin(), items.end());
  return helio::StrCat(ObjTypeName(value.type()), ":", absl::StrJoin(items, "|"));
}

std::string Dump(const PrimeValue& value) { return MakeDumpPayload(value); }

PrimeValue Restore(std::string_view payload) {
  PrimeValue value;
  std::string error;
  EXPECT_TRUE(DecodeDumpPayload(payload, &value, &error)) << error;
  return value;
}

std::string RestoreError(std::string_view payload) {
  PrimeValue value;
  std::string error;
  EXPECT_FALSE(DecodeDumpPayload(payload, &value, &error));
  return error;
}

// Round trip through DUMP's payload: same content; returns the restored encoding.
std::string RoundTrip(const PrimeValue& value) {
  PrimeValue restored = Restore(Dump(value));
  EXPECT_EQ(Describe(restored), Describe(value));
  return restored.EncodingName();
}

PrimeValue StringValue(std::string_view s) {
  PrimeValue value;
  value.SetString(s);
  return value;
}

PrimeValue ListValue(const std::vector<std::string>& elements, int fill = -2, unsigned depth = 0) {
  PrimeValue value;
  ListRef::MakeEmpty(&value);
  ListRef list(&value);
  for (const std::string& e : elements) {
    list.PrepareAdd(e.size(), 1, fill, depth);
    list.Push(ListView::End::kTail, e);
  }
  return value;
}

PrimeValue HashValue(size_t fields, size_t value_len = 3) {
  PrimeValue value;
  HashRef::MakeEmpty(&value);
  HashRef hash(&value);
  for (size_t i = 0; i < fields; ++i) hash.Set(helio::StrCat("f", i), std::string(value_len, 'v'));
  return value;
}

PrimeValue SetValue(const std::vector<std::string>& members) {
  PrimeValue value;
  core::SetObject* set =
      core::SetObject::Create(members[0], members.size(), CollectionLimits::Sets());
  value.SetObject(ObjType::kSet, ObjEncoding::kIntset, set);
  for (const std::string& m : members) set->Add(m, CollectionLimits::Sets());
  value.set_object_encoding(
      set->encoding() == core::SetObject::Encoding::kIntset     ? ObjEncoding::kIntset
      : set->encoding() == core::SetObject::Encoding::kListpack ? ObjEncoding::kListpack
                                                                : ObjEncoding::kHashtable);
  return value;
}

PrimeValue ZSetValue(size_t members) {
  PrimeValue value;
  ZSetRef::MakeEmpty(&value);
  ZSetRef zset(&value);
  for (size_t i = 0; i < members; ++i) zset.Set(helio::StrCat("m", i), double(i) / 3);
  return value;
}

std::vector<std::string> Numbered(size_t n, std::string_view prefix) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(helio::StrCat(prefix, i));
  return out;
}

// --- exact bytes: payloads redis-server 7.0.15 made (DUMP), which damselfly must make
// byte for byte where both keep the same encoding, and read in any case.

TEST(RdbCodecTest, StringsAsRedisWritesThem) {
  EXPECT_EQ(absl::BytesToHexString(Dump(StringValue("hello"))),
            "000568656c6c6f0a006372df766534200a");
  EXPECT_EQ(absl::BytesToHexString(Dump(StringValue("12"))), "00c00c0a003c2af8515c04bcd5");
  RdbSerializer s(true);
  s.SaveString("-129");                    // int16
  s.SaveString("70000");                   // int32
  s.SaveString("2147483648");              // beyond int32: raw
  s.SaveString("012");                     // not canonical: raw
  s.SaveString("abcdefghijklmnopqrstuv");  // nothing to gain: raw
  EXPECT_EQ(absl::BytesToHexString(s.TakeBuffer()),
            "c17fff"
            "c270110100"
            "0a32313437343833363438"
            "03303132"
            "166162636465666768696a6b6c6d6e6f70717273747576");
  // 21 repeated bytes: LZF (our compressor's stream, which differs from Redis's, but
  // any valid stream loads); Redis's own stream for them loads too.
  s.SaveString(std::string(21, 'a'));
  EXPECT_EQ(s.buffer().substr(0, 1), "\xc3");
  const std::string both = s.TakeBuffer() + Hex("c30615016161e00a00");
  StringSource source(both);
  RdbLoader loader(&source);
  std::string a, b;
  ASSERT_TRUE(loader.ReadString(&a));
  ASSERT_TRUE(loader.ReadString(&b));
  EXPECT_EQ(a, std::string(21, 'a'));
  EXPECT_EQ(b, std::string(21, 'a'));
}

TEST(RdbCodecTest, RedisPayloadsLoad) {
  struct Case {
    const char* hex;
    const char* content;
  } cases[] = {
      {"00c30928013131e01b000131310a0047204c870842381c",
       "string:1111111111111111111111111111111111111111"},
      {"12010210100000000300816102010182626203ff0a00df0af310be9d9e9d", "list:a|1|bb"},
      {"1012120000000400816602817602816e020501ff0a008490939f57b4f3c2", "hash:f=v|n=5"},
      {"0b0e02000000030000000100020003000a00a5025ce26d6e4d1b", "set:1|2|3"},
      {"0202017901780a000cdf6b3db330bcf0", "set:x|y"},
      {"1114140000000400816102010181620283322e3504ff0a00d44c6ea4f644d9d7", "zset:a=1|b=2.5"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Describe(Restore(Hex(c.hex))), c.content) << c.hex;
  }
}

constexpr char kRedisStream[] =
    "130110000000000000000100000000000000013838000000160003010001010181660200010201000100018176"
    "020401020100010101817702040100010101dfff02010181670201010601ff0302000101000003000a0061f477"
    "5c45f4ae7d";

TEST(RdbCodecTest, StreamAsRedisWritesIt) {
  PrimeValue value = Restore(Hex(kRedisStream));
  EXPECT_EQ(Describe(value),
            "stream:len=3 last=2-0 first=1-1 maxdel=0-0 added=3|1-1:f,v|1-2:f,w|2-0:g,1");
  // The node's listpack is Redis's byte for byte. (Compressed, the bytes would depend on
  // the compressor: ours saves 4 bytes of this node, Redis's does not, so Redis wrote it
  // raw.)
  RdbSerializer plain(false);
  plain.SaveValue(value);
  const std::string redis_value = Hex(kRedisStream).substr(0, sizeof(kRedisStream) / 2 - 10);
  EXPECT_EQ(absl::BytesToHexString(plain.TakeBuffer()), absl::BytesToHexString(redis_value));
  RoundTrip(value);
  // The same entries added here make the same node, byte for byte.
  PrimeValue built;
  core::Stream* stream = core::Stream::Make();
  built.SetObject(ObjType::kStream, ObjEncoding::kStream, stream);
  stream->Add({1, 1}, std::vector<std::string_view>{"f", "v"}, 4096, 100);
  stream->Add({1, 2}, std::vector<std::string_view>{"f", "w"}, 4096, 100);
  stream->Add({2, 0}, std::vector<std::string_view>{"g", "1"}, 4096, 100);
  RdbSerializer ours(false);
  ours.SaveValue(built);
  EXPECT_EQ(absl::BytesToHexString(ours.TakeBuffer()), absl::BytesToHexString(redis_value));
}

TEST(RdbCodecTest, StreamCompressedNodesAreWrittenAsStored) {
  // 1000 entries: 10 nodes, the first 9 kept LZF-compressed, written as their images (the
  // RDB_ENC_LZF strings Redis writes for nodes itself), or as plain listpacks when
  // compression is off.
  PrimeValue value;
  core::Stream* stream = core::Stream::Make();
  value.SetObject(ObjType::kStream, ObjEncoding::kStream, stream);
  for (uint64_t i = 1; i <= 1000; ++i) {
    const std::string n = helio::StrCat(i % 10);
    stream->Add({i, 0}, std::vector<std::string_view>{"f1", "v1", "f2", n}, 4096, 100);
  }
  ASSERT_EQ(stream->NumCompressedNodes(), 9u);
  std::vector<std::string> images, plain_nodes;
  stream->ForEachNode([&](const core::StreamID&, std::string_view bytes, size_t raw_len) {
    if (raw_len == 0) return plain_nodes.push_back(std::string(bytes));
    images.push_back(std::string(bytes));
    std::string plain(raw_len, '\0');
    ASSERT_TRUE(core::LzfDecompress(bytes.data(), bytes.size(), plain.data(), raw_len));
    plain_nodes.push_back(plain);
  });
  const std::string payload = Dump(value);
  for (const std::string& image : images) EXPECT_NE(payload.find(image), std::string::npos);
  RoundTrip(value);
  RdbSerializer plain(false);
  plain.SaveValue(value);
  const std::string raw = plain.TakeBuffer();
  for (const std::string& node : plain_nodes) EXPECT_NE(raw.find(node), std::string::npos);
  EXPECT_GT(raw.size(), 2 * payload.size());
}

// The same stream after, in redis-server 7.0.15: XGROUP CREATE s g1 0, g2 $, g3 1-2;
// XREADGROUP GROUP g1 alice COUNT 2 and bob COUNT 1; XACK s g1 1-2; XCLAIM s g1 bob 0 1-1;
// XGROUP CREATECONSUMER s g2 carol. (g2 and g3's entries read are unknown: -1.)
constexpr char kRedisStreamGroups[] =
    "130110000000000000000100000000000000013838000000160003010001010181660200010201000100018176"
    "020401020100010101817702040100010101dfff02010181670201010601ff0302000101000003030267310200"
    "0302000000000000000100000000000000014796ec15a201000002000000000000000200000000000000001396"
    "ec15a2010000010205616c696365f795ec15a20100000003626f624796ec15a201000002000000000000000100"
    "0000000000000100000000000000020000000000000000026732020081ffffffffffffffff0001056361726f6c"
    "7b96ec15a201000000026733010281ffffffffffffffff00000a002ae58933f63ee8b6";

TEST(RdbCodecTest, StreamGroupsAsRedisWritesThem) {
  PrimeValue value = Restore(Hex(kRedisStreamGroups));
  EXPECT_EQ(Describe(value),
            "stream:len=3 last=2-0 first=1-1 maxdel=0-0 added=3|1-1:f,v|1-2:f,w|2-0:g,1|"
            "group g1 last=2-0 read=3| pel 1-1 t=1795664156231 n=2 bob|"
            " pel 2-0 t=1795664156179 n=1 bob| consumer alice seen=1795664156151 |"
            " consumer bob seen=1795664156231 1-1,2-0|group g2 last=2-0 read=-1|"
            " consumer carol seen=1795664156283 |group g3 last=1-2 read=-1");
  RdbSerializer plain(false);
  plain.SaveValue(value);
  const std::string redis_value =
      Hex(kRedisStreamGroups).substr(0, sizeof(kRedisStreamGroups) / 2 - 10);
  EXPECT_EQ(absl::BytesToHexString(plain.TakeBuffer()), absl::BytesToHexString(redis_value));
  RoundTrip(value);
}

TEST(RdbCodecTest, SmallCollectionsAsRedisWritesThem) {
  // The same listpacks and intsets as Redis's: the payloads are byte for byte Redis's.
  for (const char* hex : {"12010210100000000300816102010182626203ff0a00df0af310be9d9e9d",
                          "1012120000000400816602817602816e020501ff0a008490939f57b4f3c2",
                          "0b0e02000000030000000100020003000a00a5025ce26d6e4d1b",
                          "1114140000000400816102010181620283322e3504ff0a00d44c6ea4f644d9d7"}) {
    EXPECT_EQ(absl::BytesToHexString(Dump(Restore(Hex(hex)))), hex);
  }
}

// --- round trips of every type and encoding.

TEST(RdbCodecTest, StringRoundTrips) {
  std::mt19937_64 rng(7);
  std::string random(3000, '\0');
  for (char& c : random) c = char(rng());
  for (const std::string& s :
       {std::string(), std::string("0"), std::string("-2147483648"),
        std::string("9223372036854775807"), std::string("héllo"), std::string(100, 'x'),
        std::string(2000, 'y'), random,
        helio::StrCat(std::string(600, 'j'), "{\"k\": 1}", std::string(600, 'z'))}) {
    RoundTrip(StringValue(s));
  }
}

TEST(RdbCodecTest, CompressedStringIsWrittenAsStored) {
  // 1 KiB of repeated text is kept LZF-compressed in memory and written as that stream.
  const std::string text = helio::StrCat(std::string(512, 'a'), std::string(512, 'b'));
  PrimeValue value = StringValue(text);
  ASSERT_FALSE(value.CompressedView().empty());
  const std::string payload = Dump(value);
  EXPECT_EQ(uint8_t(payload[1]), 0xC3);
  EXPECT_NE(payload.find(value.CompressedView()), std::string::npos);
  RoundTrip(value);
  // Without compression, the same value is written raw.
  RdbSerializer plain(false);
  plain.SaveValue(value);
  EXPECT_EQ(plain.TakeBuffer().size(), 1 + 2 + text.size());
}

TEST(RdbCodecTest, ListRoundTrips) {
  EXPECT_EQ(RoundTrip(ListValue({"a", "1", "-5", std::string(300, 'q')})),
            std::string("quicklist"));
  RoundTrip(ListValue(Numbered(5000, "element-")));
  // Count fill 4 with depth 1: many nodes, the interior ones LZF-compressed, written as
  // their compressed streams.
  PrimeValue compressed = ListValue(Numbered(200, "a-long-repeating-element-value-"), 4, 1);
  ASSERT_GT(ListView(compressed).NodeCount(), 10u);
  RoundTrip(compressed);
}

TEST(RdbCodecTest, HashRoundTrips) {
  EXPECT_EQ(RoundTrip(HashValue(5)), std::string("listpack"));
  EXPECT_EQ(RoundTrip(HashValue(1000)), std::string("hashtable"));
  EXPECT_EQ(RoundTrip(HashValue(3, 100)), std::string("hashtable"));  // long value
}

TEST(RdbCodecTest, SetRoundTrips) {
  PrimeValue intset = SetValue({"3", "-1", "70000"});
  EXPECT_EQ(intset.EncodingName(), std::string("intset"));
  EXPECT_EQ(Dump(intset)[0], char(rdb::kTypeSetIntset));
  EXPECT_EQ(RoundTrip(intset), std::string("intset"));
  // A listpack set is written as a plain SET (Redis 7.0 cannot read SET_LISTPACK) and
  // comes back a listpack.
  PrimeValue small = SetValue({"x", "y", "1"});
  EXPECT_EQ(small.EncodingName(), std::string("listpack"));
  EXPECT_EQ(Dump(small)[0], char(rdb::kTypeSet));
  EXPECT_EQ(RoundTrip(small), std::string("listpack"));
  EXPECT_EQ(RoundTrip(SetValue(Numbered(1000, "m"))), std::string("hashtable"));
  EXPECT_EQ(RoundTrip(SetValue(Numbered(1000, ""))), std::string("hashtable"));  // > 512 ints
}

TEST(RdbCodecTest, ZSetRoundTrips) {
  EXPECT_EQ(RoundTrip(ZSetValue(10)), std::string("listpack"));
  PrimeValue large = ZSetValue(1000);
  EXPECT_EQ(Dump(large)[0], char(rdb::kTypeZSet2));
  EXPECT_EQ(RoundTrip(large), std::string("skiplist"));
  PrimeValue special;
  ZSetRef::MakeEmpty(&special);
  ZSetRef zset(&special);
  zset.Set("inf", INFINITY);
  zset.Set("-inf", -INFINITY);
  zset.Set("tiny", 1e-300);
  RoundTrip(special);
}

TEST(RdbCodecTest, StreamRoundTrips) {
  PrimeValue value;
  core::Stream* stream = core::Stream::Make();
  value.SetObject(ObjType::kStream, ObjEncoding::kStream, stream);
  for (uint64_t i = 1; i <= 450; ++i) {
    const std::string number = std::to_string(i);
    std::vector<std::string_view> pairs = {"field", "value", "n", "1"};
    if (i % 7 == 0) pairs = {"other", number};
    stream->Add({i * 1000, i % 3}, pairs, 4096, 100);
  }
  stream->Delete({7000, 1});
  stream->Delete({1000, 1});
  RoundTrip(value);
  // Empty streams survive too, with their metadata.
  PrimeValue empty;
  core::Stream* gone = core::Stream::Make();
  empty.SetObject(ObjType::kStream, ObjEncoding::kStream, gone);
  gone->Add({5, 5}, std::vector<std::string_view>{"a", "b"}, 4096, 100);
  gone->Delete({5, 5});
  RoundTrip(empty);
}

PrimeValue StreamWithGroups() {
  PrimeValue value;
  core::Stream* stream = core::Stream::Make();
  value.SetObject(ObjType::kStream, ObjEncoding::kStream, stream);
  for (uint64_t i = 1; i <= 300; ++i) {
    stream->Add({i, 0}, std::vector<std::string_view>{"f", "v"}, 4096, 100);
  }
  core::StreamGroup* group = stream->CreateGroup("readers", {250, 0}, 250);
  bool created;
  core::StreamConsumer* a = group->FindOrAddConsumer("a", 1700000000123, &created);
  core::StreamConsumer* b = group->FindOrAddConsumer(std::string(100, 'b'), 5, &created);
  group->FindOrAddConsumer("idle", 0, &created);
  for (uint64_t i = 1; i <= 250; ++i) group->Deliver({i, 0}, i % 3 ? a : b, 1700000000000 + i);
  group->FindPending({7, 0})->delivery_count = 1ull << 40;
  group->Ack({8, 0});
  group->AddPending({1000, 0}, b);  // XCLAIM FORCE of an ID the stream does not hold
  stream->CreateGroup("unknown", {3, 5}, core::StreamGroup::kInvalidEntriesRead);
  stream->CreateGroup("", {0, 0}, 0);
  return value;
}

TEST(RdbCodecTest, StreamGroupsRoundTrip) {
  PrimeValue value = StreamWithGroups();
  RoundTrip(value);
  // Flushed to a sink in small pieces (between PEL entries too), the bytes are the same.
  RdbSerializer whole(true), pieces(true);
  std::string sunk;
  pieces.SetSink(16, [&](std::string_view bytes) { sunk.append(bytes); });
  whole.SaveValue(value);
  pieces.SaveValue(value);
  sunk += pieces.TakeBuffer();
  EXPECT_EQ(sunk, whole.TakeBuffer());
}

// --- Redis 6.x (RDB 9) encodings, from hand-made blobs.

// A ziplist of `entries` (each: encoding and data bytes, without prevlen).
std::string Ziplist(const std::vector<std::string>& entries) {
  std::string body;
  size_t prev = 0, tail = 10;
  for (const std::string& e : entries) {
    tail = 10 + body.size();
    std::string entry(1, char(prev));
    entry += e;
    body += entry;
    prev = entry.size();
  }
  std::string zl(10, '\0');
  const uint32_t bytes = uint32_t(10 + body.size() + 1);
  for (int i = 0; i < 4; ++i) {
    zl[i] = char(bytes >> (8 * i));
    zl[4 + i] = char(uint32_t(tail) >> (8 * i));
  }
  zl[8] = char(entries.size());
  return zl + body + "\xff";
}

std::string ZlStr(std::string_view s) { return std::string(1, char(s.size())) + std::string(s); }

std::string RdbString(std::string_view s) {
  RdbSerializer ser(false);
  ser.SaveString(s);
  return ser.TakeBuffer();
}

// Hand-made consumer groups, appended to kRedisStream's value (entries 1-1 1-2 2-0).
std::string Len(uint64_t n) {
  RdbSerializer ser(false);
  ser.SaveLength(n);
  return ser.TakeBuffer();
}

std::string RawId(uint64_t ms, uint64_t seq) {
  std::string raw;
  for (uint64_t word : {ms, seq}) {
    for (int i = 7; i >= 0; --i) raw.push_back(char(word >> (8 * i)));
  }
  return raw;
}

std::string Le8(uint64_t v) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(char(v >> (8 * i)));
  return out;
}

// A PEL of `ids` (delivered at 9, once), or a consumer's list of them.
std::string Pel(const std::vector<std::pair<uint64_t, uint64_t>>& ids, bool global = true) {
  std::string out = Len(ids.size());
  for (const auto& [ms, seq] : ids) out += RawId(ms, seq) + (global ? Le8(9) + Len(1) : "");
  return out;
}

std::string Consumer(std::string_view name, const std::vector<std::pair<uint64_t, uint64_t>>& ids) {
  return RdbString(name) + Le8(7) + Pel(ids, false);
}

// A group of STREAM_LISTPACKS_2 (with entries read 3) or, with `old`, of STREAM_LISTPACKS.
std::string Group(std::string_view name, uint64_t ms, uint64_t seq, std::string pel,
                  std::string consumers, bool old = false) {
  return RdbString(name) + Len(ms) + Len(seq) + (old ? "" : Len(3)) + pel + consumers;
}

// kRedisStream's value without its group count.
std::string StreamWithoutGroups() {
  std::string value = Hex(kRedisStream);
  return value.substr(0, value.size() - 11);
}

TEST(RdbCodecTest, OldStreamGroupsEstimateEntriesRead) {
  // STREAM_LISTPACKS (Redis 6.x): no first ID, max deleted ID, entries added nor entries
  // read. Entries read is estimated as Redis 7.0 does: known at the first and last IDs.
  std::string old = StreamWithoutGroups();
  ASSERT_EQ(absl::BytesToHexString(old.substr(old.size() - 8)), "0302000101000003");
  old = char(rdb::kTypeStreamListpacks) + old.substr(1, old.size() - 6);
  old += Len(3) + Group("end", 2, 0, Pel({{1, 1}}), Len(1) + Consumer("c", {{1, 1}}), true) +
         Group("start", 0, 0, Len(0), Len(0), true) + Group("mid", 1, 2, Len(0), Len(0), true);
  PrimeValue value = Restore(WithFooter(old));
  const core::Stream* stream = value.GetObjectAs<core::Stream>();
  ASSERT_EQ(stream->NumGroups(), 3u);
  EXPECT_EQ(stream->FindGroup("end")->entries_read, 3);
  EXPECT_EQ(stream->FindGroup("start")->entries_read, 0);
  EXPECT_EQ(stream->FindGroup("mid")->entries_read, core::StreamGroup::kInvalidEntriesRead);
  EXPECT_EQ(stream->FindGroup("end")->pel().at({1, 1}).consumer->name, "c");
  EXPECT_EQ(stream->entries_added(), 3u);
}

TEST(RdbCodecTest, MalformedStreamGroupsAreRefused) {
  const std::string base = StreamWithoutGroups();
  const std::string c = Consumer("c", {{1, 1}, {1, 2}});
  const std::string good = base + Len(1) + Group("g", 2, 0, Pel({{1, 1}, {1, 2}}), Len(1) + c);
  EXPECT_NE(Describe(Restore(WithFooter(good))).find("pel 1-2 t=9 n=1 c"), std::string::npos);
  auto bad = [](const std::string& value) {
    EXPECT_EQ(RestoreError(WithFooter(value)), "ERR Bad data format")
        << absl::BytesToHexString(value);
  };
  bad(good.substr(0, good.size() - 1));
  // A consumer's ID missing from the group's PEL (Redis's deep sanitization refuses it).
  bad(base + Len(1) + Group("g", 2, 0, Pel({{1, 1}}), Len(1) + c));
  // A PEL entry no consumer owns.
  bad(base + Len(1) + Group("g", 2, 0, Pel({{1, 1}, {1, 2}, {2, 0}}), Len(1) + c));
  // Duplicates: groups, consumers, PEL entries, an ID owned twice.
  const std::string g = Group("g", 2, 0, Pel({{1, 1}, {1, 2}}), Len(1) + c);
  bad(base + Len(2) + g + g);
  bad(base + Len(1) + Group("g", 2, 0, Pel({{1, 1}, {1, 2}}), Len(2) + c + c));
  bad(base + Len(1) + Group("g", 2, 0, Pel({{1, 1}, {1, 1}}), Len(1) + Consumer("c", {{1, 1}})));
  bad(base + Len(1) +
      Group("g", 2, 0, Pel({{1, 1}}), Len(2) + Consumer("c", {{1, 1}}) + Consumer("d", {{1, 1}})));
  bad(base + Len(1) + Group("g", 2, 0, Pel({{1, 1}}), Len(1) + Consumer("c", {{1, 1}, {1, 1}})));
}

TEST(RdbCodecTest, ZiplistEntriesDecode) {
  // "ab", 7 (immediate), int8 -3, int16 300, int24 -70000, int32 1<<20, int64 1<<40.
  const std::string zl = Ziplist({ZlStr("ab"), "\xf8", Hex("fefd"), Hex("c02c01"), Hex("f090eefe"),
                                  Hex("d000001000"), Hex("e00000000000010000")});
  std::vector<std::string> seen;
  ASSERT_TRUE(core::ZiplistForEach(zl, [&](const core::ZiplistValue& v) {
    seen.push_back(v.is_int ? std::to_string(v.ival) : std::string(v.sval));
  }));
  EXPECT_THAT(seen, ElementsAre("ab", "7", "-3", "300", "-70000", "1048576", "1099511627776"));
  // A prevlen that lies, a wrong count, a truncated blob: refused.
  std::string bad = zl;
  bad[10 + 1 + 3] = 5;  // the second entry's prevlen
  EXPECT_FALSE(core::ZiplistForEach(bad, [](const core::ZiplistValue&) {}));
  bad = zl;
  bad[8] = 6;
  EXPECT_FALSE(core::ZiplistForEach(bad, [](const core::ZiplistValue&) {}));
  EXPECT_FALSE(core::ZiplistForEach(zl.substr(0, zl.size() - 2), [](const core::ZiplistValue&) {}));
}

TEST(RdbCodecTest, Rdb9TypesLoad) {
  const std::string pairs = Ziplist({ZlStr("f1"), ZlStr("v1"), ZlStr("f2"), "\xf3"});
  EXPECT_EQ(Describe(Restore(WithFooter(char(rdb::kTypeHashZiplist) + RdbString(pairs)))),
            "hash:f1=v1|f2=2");
  EXPECT_EQ(Describe(Restore(WithFooter(char(rdb::kTypeListZiplist) + RdbString(pairs)))),
            "list:f1|v1|f2|2");
  const std::string zset = Ziplist({ZlStr("a"), ZlStr("1.5"), ZlStr("b"), "\xf3"});
  EXPECT_EQ(Describe(Restore(WithFooter(char(rdb::kTypeZSetZiplist) + RdbString(zset)))),
            "zset:a=1.5|b=2");
  // A quicklist of two ziplist nodes.
  EXPECT_EQ(Describe(Restore(WithFooter(helio::StrCat(std::string(1, char(rdb::kTypeListQuicklist)),
                                                      "\x02", RdbString(pairs), RdbString(zset))))),
            "list:f1|v1|f2|2|a|1.5|b|2");
  // A zipmap: zmlen 2, "k" -> "val" (1 free byte), "x" -> "".
  const std::string zipmap = Hex("02016b0301") + "val" +
                             Hex("00"
                                 "0178"
                                 "0000"
                                 "ff");
  EXPECT_EQ(Describe(Restore(WithFooter(char(rdb::kTypeHashZipmap) + RdbString(zipmap)))),
            "hash:k=val|x=");
  // Plain LIST, HASH, ZSET with text scores (inf, -inf, "2.5").
  EXPECT_EQ(Describe(Restore(WithFooter(helio::StrCat(std::string(1, char(rdb::kTypeList)), "\x02",
                                                      RdbString("a"), RdbString("b"))))),
            "list:a|b");
  EXPECT_EQ(Describe(Restore(WithFooter(helio::StrCat(std::string(1, char(rdb::kTypeHash)), "\x01",
                                                      RdbString("f"), RdbString("v"))))),
            "hash:f=v");
  EXPECT_EQ(Describe(Restore(WithFooter(helio::StrCat(std::string(1, char(rdb::kTypeZSet)), "\x03",
                                                      RdbString("p"), "\xfe", RdbString("n"),
                                                      "\xff", RdbString("m"),
                                                      "\x03"
                                                      "2.5")))),
            "zset:n=-inf|m=2.5|p=inf");
}

// A filtered Next reads past the values of the keys it does not keep, for every type and
// encoding (each shard of a load keeps only its own keys), and still checks the file.
TEST(RdbCodecTest, NextSkipsTheValuesOfKeysNotKept) {
  RdbSerializer ser(true);
  std::vector<std::string> raw_entries;
  auto add = [&](std::string_view key, const PrimeValue& value) {
    ser.SaveEntry(key, value, 0);
    raw_entries.push_back(ser.TakeBuffer());
  };
  add("string", StringValue("v"));
  add("intstring", StringValue("12345"));
  add("lzfstring", StringValue(std::string(3000, 'z')));
  add("smalllist", ListValue({"a", "b"}));
  add("biglist", ListValue(Numbered(2000, "element")));
  add("smallhash", HashValue(3));
  add("bighash", HashValue(600));
  add("intset", SetValue({"1", "2"}));
  add("listpackset", SetValue({"x", "y"}));
  add("bigset", SetValue(Numbered(600, "m")));
  add("smallzset", ZSetValue(3));
  add("bigzset", ZSetValue(600));
  add("stream", StreamWithGroups());
  const std::string pairs = Ziplist({ZlStr("f1"), ZlStr("v1"), ZlStr("f2"), "\xf3"});
  const std::string zset = Ziplist({ZlStr("a"), ZlStr("1.5"), ZlStr("b"), "\xf3"});
  auto rdb9 = [&](uint8_t type, std::string_view key, std::string_view payload) {
    raw_entries.push_back(helio::StrCat(std::string(1, char(type)), RdbString(key), payload));
  };
  rdb9(rdb::kTypeHashZiplist, "ziphash", RdbString(pairs));
  rdb9(rdb::kTypeListQuicklist, "ziplist", helio::StrCat("\x02", RdbString(pairs), RdbString(zset)));
  rdb9(rdb::kTypeZSetZiplist, "zipzset", RdbString(zset));
  rdb9(rdb::kTypeList, "plainlist", helio::StrCat("\x02", RdbString("a"), RdbString("b")));
  rdb9(rdb::kTypeHash, "plainhash", helio::StrCat("\x01", RdbString("f"), RdbString("v")));
  rdb9(rdb::kTypeZSet, "textzset",
       helio::StrCat("\x03", RdbString("p"), "\xfe", RdbString("n"), "\xff", RdbString("m"),
                     "\x03", "2.5"));
  // Each entry twice: once kept, once skipped ("~" keys), so both paths see every kind.
  std::string file = "REDIS0009";
  for (const std::string& entry : raw_entries) {
    file += entry;
    const size_t key_at = entry[0] == char(rdb::kOpExpireTimeMs) ? 10 : 1;
    ASSERT_LT(uint8_t(entry[key_at]), 64u);  // a short key: one length byte
    file += helio::StrCat(entry.substr(0, key_at), std::string(1, char(entry[key_at] + 1)), "~",
                          entry.substr(key_at + 1));
  }
  file += char(rdb::kOpEof);
  file += std::string(8, '\0');  // no checksum
  auto load = [&](bool skip_some, std::string* error) {
    StringSource source(file);
    RdbLoader loader(&source);
    EXPECT_TRUE(loader.LoadHeader());
    std::vector<std::string> seen;
    RdbEntry entry;
    auto keep = [&](std::string_view key) { return !skip_some || key[0] != '~'; };
    while (loader.Next(&entry, keep)) seen.push_back(entry.key + "=" + Describe(entry.value));
    *error = loader.error();
    return seen;
  };
  std::string error;
  std::vector<std::string> all = load(false, &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(all.size(), 2 * raw_entries.size());
  std::vector<std::string> kept = load(true, &error);
  ASSERT_EQ(error, "");
  std::vector<std::string> expected;
  for (size_t i = 0; i < all.size(); i += 2) expected.push_back(all[i]);
  EXPECT_EQ(kept, expected);
  // A truncated skipped value is an error, not the end.
  file.resize(file.size() - 30);
  load(true, &error);
  EXPECT_NE(error, "");
}

TEST(RdbCodecTest, PlainHashOfFewFieldsBecomesListpack) {
  std::string payload(1, char(rdb::kTypeHash));
  payload += "\x05";
  for (int i = 0; i < 5; ++i) payload += RdbString(helio::StrCat("f", i)) + RdbString("v");
  EXPECT_EQ(Restore(WithFooter(payload)).EncodingName(), std::string("listpack"));
}

// --- refusals.

TEST(RdbCodecTest, MalformedPayloadsAreRefused) {
  constexpr char kBad[] = "ERR Bad data format";
  constexpr char kVersion[] = "ERR DUMP payload version or checksum are wrong";
  std::string good = Hex("000568656c6c6f0a006372df766534200a");
  EXPECT_EQ(RestoreError(std::string(good).erase(3, 1)), kVersion);
  EXPECT_EQ(RestoreError("short"), kVersion);
  std::string flipped = good;
  flipped[3] ^= 1;
  EXPECT_EQ(RestoreError(flipped), kVersion);
  std::string newer = good.substr(0, good.size() - 10);
  newer += "\x0b";
  newer += '\0';
  const uint64_t crc = core::Crc64(0, newer);
  for (int i = 0; i < 8; ++i) newer.push_back(char(crc >> (8 * i)));
  EXPECT_EQ(RestoreError(newer), kVersion);  // RDB 11

  auto bad = [&](const std::string& value) {
    EXPECT_EQ(RestoreError(WithFooter(value)), kBad) << absl::BytesToHexString(value);
  };
  bad(Hex("0009") + "hello");                          // a string shorter than its length
  bad(Hex("0005") + "hello" + "x");                    // trailing bytes
  bad(Hex("6301") + "x");                              // unknown type 99
  bad(Hex("0202") + RdbString("a") + RdbString("a"));  // duplicate member
  bad(Hex("0402") + RdbString("f") + RdbString("1") + RdbString("f") + RdbString("2"));
  bad(Hex("0501") + RdbString("m") + Hex("000000000000f87f"));  // NaN
  bad(Hex("0301") + RdbString("m") + Hex("fd"));                // NaN as text
  bad(Hex("0200"));                                             // empty set
  bad(Hex("0181000000000100000000"));                           // 16M elements and no data
  bad(Hex("00c3027fff0061"));  // LZF claiming far more than it can expand to
  // Listpacks that lie: a wrong count, a cut entry, an odd number of hash elements.
  core::Listpack lp;
  lp.Append("a");
  lp.Append("b");
  std::string blob(lp.bytes());
  std::string wrong_count = blob;
  wrong_count[4] = 3;
  bad(char(rdb::kTypeHashListpack) + RdbString(wrong_count));
  bad(char(rdb::kTypeHashListpack) + RdbString(blob.substr(0, blob.size() - 2) + "\xff"));
  lp.Append("c");
  bad(char(rdb::kTypeHashListpack) + RdbString(lp.bytes()));
  core::Listpack twice;  // the integer field 7 twice
  for (const char* s : {"7", "a", "x", "b", "7", "c"}) twice.Append(s);
  bad(char(rdb::kTypeHashListpack) + RdbString(twice.bytes()));
  bad(char(rdb::kTypeSetIntset) + RdbString(Hex("0200000002000000"
                                                "0300"
                                                "0100")));  // unsorted
  bad(char(rdb::kTypeSetIntset) + RdbString(Hex("0200000003000000"
                                                "0100"
                                                "0300")));  // short
  // A stream node whose entry count lies (the master entry's count: 3 -> 4).
  std::string stream = Hex(kRedisStream);
  stream = stream.substr(0, stream.size() - 10);
  ASSERT_EQ(stream[26], 3);
  stream[26] = 4;
  bad(stream);
}

// Random mutations of valid payloads, with their checksums fixed so that the decoder
// sees them: refused or decoded, never a crash (run it under ASAN). Bounded to ~2 s.
TEST(RdbCodecTest, FuzzMutatedPayloads) {
  std::vector<std::string> seeds;
  for (const PrimeValue& v :
       {StringValue("hello world hello world hello world"), StringValue("-77"),
        ListValue(Numbered(50, "e")), HashValue(5), HashValue(600), SetValue({"1", "2", "300"}),
        SetValue({"a", "b"}), ZSetValue(5), ZSetValue(200)}) {
    std::string payload = Dump(v);
    seeds.push_back(payload.substr(0, payload.size() - 10));
  }
  seeds.push_back(Hex(kRedisStream).substr(0, Hex(kRedisStream).size() - 10));
  seeds.push_back(Hex(kRedisStreamGroups).substr(0, Hex(kRedisStreamGroups).size() - 10));
  std::mt19937 rng(20261126);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  size_t runs = 0, accepted = 0;
  while (std::chrono::steady_clock::now() < deadline && runs < 200000) {
    std::string data = seeds[rng() % seeds.size()];
    const int mutations = 1 + rng() % 4;
    for (int m = 0; m < mutations; ++m) {
      const size_t at = rng() % data.size();
      switch (rng() % 4) {
        case 0:
          data[at] = char(rng());
          break;
        case 1:
          data[at] ^= char(1 << (rng() % 8));
          break;
        case 2:
          data.erase(at, 1 + rng() % 4);
          break;
        default:
          data.insert(at, 1 + rng() % 3, char(rng()));
          break;
      }
      if (data.empty()) data.assign(1, char(0));
    }
    PrimeValue value;
    std::string error;
    accepted += DecodeDumpPayload(WithFooter(data), &value, &error);
    ++runs;
  }
  EXPECT_GT(runs, 1000u);
  EXPECT_LT(accepted, runs);
}

// --- files.

TEST(RdbCodecTest, FileRoundTripWithMemcachedFlags) {
  RdbSerializer ser(true);
  std::string file;
  ser.SetSink(64, [&](std::string_view bytes) { file.append(bytes); });
  ser.SaveHeader("7.0.15", 1700000000, 12345);
  ser.SaveSelectDb(0, 2, 1);
  McMeta meta;
  meta.flags = 42;
  meta.cas = 7;
  ser.SaveEntry("k1", StringValue("v1"), 0, &meta);
  ser.SaveEntry("k2", HashValue(600), 4102444800000);
  ser.SaveSelectDb(3, 1, 0);
  ser.SaveEntry("k3", ListValue({"x"}), 0);
  ser.SaveEof();
  file += ser.TakeBuffer();
  ASSERT_EQ(file.substr(0, 9), "REDIS0010");

  StringSource source(file);
  RdbLoader loader(&source);
  ASSERT_TRUE(loader.LoadHeader());
  std::vector<std::string> seen;
  RdbEntry entry;
  while (loader.Next(&entry)) {
    seen.push_back(
        helio::StrCat(entry.db, "/", entry.key, "/", entry.expire_ms, "/",
                      entry.mc ? helio::StrCat(entry.mc->flags, ":", entry.mc->cas) : "-", "/",
                      Describe(entry.value).substr(0, 10)));
  }
  EXPECT_EQ(loader.error(), "");
  EXPECT_EQ(loader.Aux("redis-ver"), "7.0.15");
  EXPECT_EQ(loader.Aux("ctime"), "1700000000");
  EXPECT_THAT(seen, ElementsAre("0/k1/0/42:7/string:v1", "0/k2/4102444800000/-/hash:f0=vv",
                                "3/k3/0/-/list:x"));

  // A flipped bit anywhere is caught by the checksum at the end at the latest.
  std::string corrupt = file;
  corrupt[corrupt.size() - 20] ^= 4;
  StringSource corrupt_source(corrupt);
  RdbLoader corrupt_loader(&corrupt_source);
  ASSERT_TRUE(corrupt_loader.LoadHeader());
  while (corrupt_loader.Next(&entry)) {
  }
  EXPECT_NE(corrupt_loader.error(), "");
  // A truncated file is an error, not an end.
  StringSource truncated(std::string_view(file).substr(0, file.size() - 9));
  RdbLoader truncated_loader(&truncated);
  ASSERT_TRUE(truncated_loader.LoadHeader());
  while (truncated_loader.Next(&entry)) {
  }
  EXPECT_NE(truncated_loader.error(), "");
}

// --- DUMP and RESTORE through the server.

class DumpFamilyTest : public ServiceTest {};

TEST_P(DumpFamilyTest, DumpRestoreEveryType) {
  Run({"set", "s", "hello"});
  Run({"rpush", "l", "a", "b"});
  Run({"hset", "h", "f", "v"});
  Run({"sadd", "st", "1", "x"});
  Run({"zadd", "z", "1", "m"});
  Run({"xadd", "x", "1-1", "f", "v"});
  for (const char* key : {"s", "l", "h", "st", "z", "x"}) {
    RespValue payload = Run({"dump", key});
    ASSERT_EQ(payload.type, RespValue::Type::kBulk) << key;
    const std::string copy = helio::StrCat(key, "-copy");
    EXPECT_EQ(Run({"restore", copy, "0", payload.str}), "OK");
    EXPECT_EQ(Run({"type", copy}), Run({"type", key}).str);
    EXPECT_EQ(Run({"dump", copy}), payload.str);
  }
  EXPECT_THAT(Run({"lrange", "l-copy", "0", "-1"}), RespArray(ElementsAre("a", "b")));
  EXPECT_THAT(Run({"dump", "missing"}), IsNil());
}

TEST_P(DumpFamilyTest, DumpRestoreStreamWithGroups) {
  Run({"xadd", "s", "1-1", "f", "v"});
  Run({"xadd", "s", "1-2", "f", "w"});
  Run({"xadd", "s", "2-0", "g", "1"});
  Run({"xgroup", "create", "s", "g1", "0"});
  Run({"xgroup", "create", "s", "g2", "1-2"});
  Run({"xreadgroup", "group", "g1", "alice", "count", "2", "streams", "s", ">"});
  Run({"xreadgroup", "group", "g1", "bob", "streams", "s", ">"});
  Run({"xack", "s", "g1", "1-2"});
  Run({"xclaim", "s", "g1", "bob", "0", "1-1"});
  Run({"xgroup", "createconsumer", "s", "g2", "carol"});
  const std::string payload = Run({"dump", "s"}).str;
  EXPECT_EQ(Run({"restore", "copy", "0", payload}), "OK");
  EXPECT_EQ(Run({"dump", "copy"}), payload);
  for (const char* key : {"s", "copy"}) {
    const RespValue summary = Run({"xpending", key, "g1"});
    EXPECT_THAT(summary,
                RespArray(ElementsAre(IntArg(2), "1-1", "2-0",
                                      RespArray(ElementsAre(RespArray(ElementsAre("bob", "2")))))))
        << key;
  }
  EXPECT_EQ(testing::PrintToString(Run({"xinfo", "stream", "copy", "full"})),
            testing::PrintToString(Run({"xinfo", "stream", "s", "full"})));
  EXPECT_EQ(testing::PrintToString(Run({"xinfo", "groups", "copy"})),
            testing::PrintToString(Run({"xinfo", "groups", "s"})));
}

TEST_P(DumpFamilyTest, RestoreOptionsAndErrors) {
  Run({"set", "k", "v"});
  const std::string payload = Run({"dump", "k"}).str;
  EXPECT_THAT(Run({"restore", "k", "0", payload}),
              ErrArg("BUSYKEY Target key name already exists."));
  EXPECT_EQ(Run({"restore", "k", "0", payload, "REPLACE"}), "OK");
  EXPECT_THAT(Run({"restore", "n", "-1", payload}), ErrArg("ERR Invalid TTL value, must be >= 0"));
  EXPECT_THAT(Run({"restore", "n", "x", payload}),
              ErrArg("ERR value is not an integer or out of range"));
  EXPECT_THAT(Run({"restore", "n", "0", "garbage-garbage"}),
              ErrArg("ERR DUMP payload version or checksum are wrong"));
  EXPECT_THAT(Run({"restore", "n", "0", payload, "bogus"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"restore", "n", "0", payload, "IDLETIME"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"restore", "n", "0", payload, "IDLETIME", "-1"}),
              ErrArg("ERR Invalid IDLETIME value, must be >= 0"));
  EXPECT_THAT(Run({"restore", "n", "0", payload, "FREQ", "256"}),
              ErrArg("ERR Invalid FREQ value, must be >= 0 and <= 255"));
  EXPECT_THAT(Run({"restore", "n", "0", payload, "IDLETIME", "1", "FREQ", "1"}),
              ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"restore", "n", "0"}), ErrArg("wrong number of arguments"));
  EXPECT_THAT(Run({"dump"}), ErrArg("wrong number of arguments"));
  EXPECT_THAT(Run({"restore", "n", "0", WithFooter("\x63\x01x")}), ErrArg("ERR Bad data format"));
  // A busy key is reported before a bad TTL, as Redis does.
  EXPECT_THAT(Run({"restore", "k", "-1", payload}), ErrArg("BUSYKEY"));

  EXPECT_EQ(Run({"restore", "t", "100000", payload}), "OK");
  EXPECT_GT(Run({"pttl", "t"}).integer, 90000);
  EXPECT_EQ(Run({"restore", "a", "4102444800000", payload, "ABSTTL"}), "OK");
  EXPECT_EQ(Run({"pexpiretime", "a"}), 4102444800000);
  // A deadline in the past: OK, no key; with REPLACE the old key goes.
  EXPECT_EQ(Run({"restore", "p", "1000", payload, "ABSTTL"}), "OK");
  EXPECT_EQ(Run({"exists", "p"}), 0);
  EXPECT_EQ(Run({"restore", "k", "1000", payload, "ABSTTL", "REPLACE"}), "OK");
  EXPECT_EQ(Run({"exists", "k"}), 0);
  EXPECT_EQ(Run({"restore", "i", "0", payload, "IDLETIME", "1000"}), "OK");
  const int64_t idle = Run({"object", "idletime", "i"}).integer;
  EXPECT_GE(idle, 1000);
  EXPECT_LE(idle, 1010);
  EXPECT_EQ(Run({"restore", "f", "0", payload, "FREQ", "100"}), "OK");
}

INSTANTIATE_SHARD_COUNTS(DumpFamilyTest);

}  // namespace
}  // namespace damselfly
