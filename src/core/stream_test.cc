#include "src/core/stream.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/core/lzf.h"

namespace damselfly::core {
namespace {

using Model = std::map<StreamID, std::vector<std::string>>;

void AddEntry(Stream* s, Model* model, StreamID id, const std::vector<std::string>& pairs,
              size_t max_entries = Stream::kDefaultNodeMaxEntries) {
  std::vector<std::string_view> views(pairs.begin(), pairs.end());
  s->Add(id, views, Stream::kDefaultNodeMaxBytes, max_entries);
  (*model)[id] = pairs;
}

void ExpectEqual(const Stream& s, const Model& model) {
  ASSERT_EQ(s.Length(), model.size());
  std::vector<Stream::Entry> all = s.Range(StreamID::Min(), StreamID::Max(), 0, false);
  ASSERT_EQ(all.size(), model.size());
  auto it = model.begin();
  for (const Stream::Entry& e : all) {
    EXPECT_EQ(e.id, it->first);
    EXPECT_EQ(e.pairs, it->second);
    ++it;
  }
  EXPECT_EQ(s.first_id(), model.empty() ? StreamID::Min() : model.begin()->first);
}

TEST(StreamTest, AddAndRange) {
  Stream* s = Stream::Make();
  Model model;
  AddEntry(s, &model, {1, 0}, {"a", "1", "b", "2"});
  AddEntry(s, &model, {1, 1}, {"a", "3", "b", "4"});
  AddEntry(s, &model, {2, 0}, {"x", "-5", "b", "4"});
  AddEntry(s, &model, {StreamID::kMax, StreamID::kMax}, {"a", "18446744073709551615"});
  ExpectEqual(*s, model);
  auto rev = s->Range({1, 1}, {2, 0}, 0, true);
  ASSERT_EQ(rev.size(), 2u);
  EXPECT_EQ(rev[0].id, (StreamID{2, 0}));
  EXPECT_EQ(rev[1].id, (StreamID{1, 1}));
  EXPECT_EQ(s->Range({1, 0}, StreamID::Max(), 1, false).size(), 1u);
  EXPECT_EQ(s->entries_added(), 4u);
  EXPECT_EQ(s->last_id(), StreamID::Max());
  TypedObject::Destroy(s);
}

TEST(StreamTest, DeleteKeepsMaxDeletedAndFirst) {
  Stream* s = Stream::Make();
  Model model;
  for (uint64_t i = 1; i <= 5; ++i) AddEntry(s, &model, {i, 0}, {"f", "v"});
  EXPECT_TRUE(s->Delete({1, 0}));
  EXPECT_FALSE(s->Delete({1, 0}));
  EXPECT_TRUE(s->Delete({3, 0}));
  model.erase({1, 0});
  model.erase({3, 0});
  ExpectEqual(*s, model);
  EXPECT_EQ(s->max_deleted_id(), (StreamID{3, 0}));
  EXPECT_EQ(s->first_id(), (StreamID{2, 0}));
  TypedObject::Destroy(s);
}

TEST(StreamTest, ApproxTrimRemovesWholeNodes) {
  Stream* s = Stream::Make();
  Model model;
  for (uint64_t i = 1; i <= 1000; ++i) AddEntry(s, &model, {i, 0}, {"f", "v"});
  EXPECT_EQ(s->TrimByMaxLen(555, true, 0), 400u);  // Redis's "~ 555" of 1000 leaves 600
  EXPECT_EQ(s->Length(), 600u);
  EXPECT_EQ(s->TrimByMaxLen(555, false, 0), 45u);
  EXPECT_EQ(s->Length(), 555u);
  // Nodes 401..500 (55 left) and 501..600 end below 700; 601..700 does not.
  EXPECT_EQ(s->TrimByMinId({700, 0}, true, 0), 155u);
  EXPECT_EQ(s->first_id(), (StreamID{601, 0}));
  EXPECT_EQ(s->TrimByMaxLen(0, true, 100), 100u);
  EXPECT_EQ(s->max_deleted_id(), StreamID::Min());
  TypedObject::Destroy(s);
}

TEST(StreamTest, RandomOperationsMatchModel) {
  std::mt19937_64 rng(7);
  Stream* s = Stream::Make();
  Model model;
  StreamID last;
  const std::vector<std::vector<std::string>> shapes = {
      {"a", "1", "b", "2"}, {"a", "x", "b", "y"}, {"c", "3"}, {"a", "1", "b", "2", "c", "3"}};
  for (int op = 0; op < 20000; ++op) {
    const int kind = rng() % 10;
    if (kind < 6) {
      last.ms += rng() % 3;
      last.seq = last.seq + 1 + rng() % 2;
      std::vector<std::string> pairs = shapes[rng() % shapes.size()];
      pairs[1] = std::to_string(rng() % 1000);
      AddEntry(s, &model, last, pairs, 1 + rng() % 20);
    } else if (kind < 8 && !model.empty()) {
      auto it = model.lower_bound({rng() % (last.ms + 1), 0});
      if (it == model.end()) continue;
      EXPECT_TRUE(s->Delete(it->first));
      model.erase(it);
    } else if (kind == 8) {
      const size_t max_len = model.size() > 50 ? model.size() - rng() % 20 : model.size();
      const bool approx = rng() % 2;
      const size_t removed = s->TrimByMaxLen(max_len, approx, 0);
      EXPECT_LE(removed, model.size() - std::min(model.size(), max_len));
      for (size_t i = 0; i < removed; ++i) model.erase(model.begin());
    } else {
      StreamID min_id{rng() % (last.ms + 1), 0};
      const size_t removed = s->TrimByMinId(min_id, rng() % 2, 0);
      for (size_t i = 0; i < removed; ++i) {
        EXPECT_LT(model.begin()->first, min_id);
        model.erase(model.begin());
      }
    }
    if (op % 500 == 0) ExpectEqual(*s, model);
    if (op % 97 == 0) {
      StreamID a{rng() % (last.ms + 1), rng() % 4}, b{rng() % (last.ms + 1), rng() % 4};
      const size_t count = rng() % 5;
      const bool reverse = rng() % 2;
      std::vector<Stream::Entry> got = s->Range(a, b, count, reverse);
      std::vector<StreamID> want;
      for (auto it = model.lower_bound(a); it != model.end() && it->first <= b; ++it) {
        want.push_back(it->first);
      }
      EXPECT_EQ(s->Contains(a), model.count(a) == 1);
      if (reverse) std::reverse(want.begin(), want.end());
      if (count != 0 && want.size() > count) want.resize(count);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].id, want[i]);
    }
  }
  ExpectEqual(*s, model);
  EXPECT_GT(s->NumCompressedNodes(), 0u);  // the model covered compressed nodes
  std::string form;
  s->Serialize(&form);
  Stream* copy = Stream::Deserialize(form);
  ASSERT_NE(copy, nullptr);
  ExpectEqual(*copy, model);
  EXPECT_EQ(copy->last_id(), s->last_id());
  EXPECT_EQ(copy->entries_added(), s->entries_added());
  EXPECT_EQ(Stream::Deserialize(form.substr(0, form.size() - 1)), nullptr);
  TypedObject::Destroy(copy);
  TypedObject::Destroy(s);
}

// --- nodes in Redis's format

// The elements of a listpack as text.
std::vector<std::string> Elements(std::string_view bytes) {
  Listpack lp = Listpack::FromBytes(bytes);
  std::vector<std::string> out;
  for (Listpack::Pos p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p)) {
    out.push_back(lp.Get(p).ToString());
  }
  return out;
}

// A node's listpack bytes as ForEachNode gives them: plain, or an LZF stream of raw_len.
std::string NodeBytes(std::string_view bytes, size_t raw_len) {
  if (raw_len == 0) return std::string(bytes);
  std::string plain(raw_len, '\0');
  EXPECT_TRUE(LzfDecompress(bytes.data(), bytes.size(), plain.data(), raw_len));
  return plain;
}

std::vector<std::string> NodeElements(std::string_view bytes, size_t raw_len) {
  return Elements(NodeBytes(bytes, raw_len));
}

Listpack MakeListpack(const std::vector<std::string>& elements) {
  Listpack lp;
  for (const std::string& e : elements) lp.Append(e);
  return lp;
}

TEST(StreamTest, NodesAreRedisNodes) {
  Stream* s = Stream::Make();
  const std::vector<std::string_view> same = {"a", "1", "b", "2"}, other = {"c", "x"};
  s->Add({10, 5}, same, Stream::kDefaultNodeMaxBytes, 2);
  s->Add({11, 0}, other, Stream::kDefaultNodeMaxBytes, 2);
  s->Add({12, 0}, same, Stream::kDefaultNodeMaxBytes, 2);  // a new node: 2 entries per node
  std::vector<std::pair<StreamID, std::vector<std::string>>> nodes;
  s->ForEachNode([&](const StreamID& master, std::string_view bytes, size_t raw_len) {
    nodes.push_back({master, NodeElements(bytes, raw_len)});
  });
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].first, (StreamID{10, 5}));
  // count deleted nfields fields 0 | flags ms-diff seq-diff values lp-count | flags ms-diff
  // seq-diff (-5: wraps as Redis's) npairs pairs lp-count
  EXPECT_EQ(nodes[0].second,
            (std::vector<std::string>{"2", "0", "2", "a", "b", "0", "2", "0", "0", "1", "2", "5",
                                      "0", "1", "-5", "1", "c", "x", "6"}));
  EXPECT_TRUE(s->Delete({10, 5}));
  nodes.clear();
  s->ForEachNode([&](const StreamID& master, std::string_view bytes, size_t raw_len) {
    nodes.push_back({master, NodeElements(bytes, raw_len)});
  });
  // The entry is gone from the node, its master entry stays; count follows, deleted stays 0.
  EXPECT_EQ(nodes[0].second, (std::vector<std::string>{"1", "0", "2", "a", "b", "0", "0", "1", "-5",
                                                       "1", "c", "x", "6"}));
  TypedObject::Destroy(s);
}

TEST(StreamTest, CheckNodeAndAppendNode) {
  const StreamID master{100, 0};
  // Entries 100-0 (deleted), 100-1, 101-0 (own fields).
  const std::vector<std::string> good = {"2", "1", "1", "f", "0", "3", "0", "0", "a", "4", "2",
                                         "0", "1", "b", "4", "0", "1", "0", "1", "g", "c", "6"};
  Stream::NodeInfo info;
  Listpack lp = MakeListpack(good);
  ASSERT_TRUE(Stream::CheckNode(master, lp, nullptr, &info));
  EXPECT_EQ(info.live, 2u);
  EXPECT_EQ(info.deleted, 1u);
  EXPECT_EQ(info.last, (StreamID{101, 0}));
  const StreamID before{99, 0}, at{100, 0};
  EXPECT_TRUE(Stream::CheckNode(master, lp, &before, &info));
  EXPECT_FALSE(Stream::CheckNode(master, lp, &at, &info));  // not above the previous node
  // Broken nodes: each change below breaks one rule.
  auto broken = [&](size_t index, std::string value) {
    std::vector<std::string> elements = good;
    elements[index] = std::move(value);
    Listpack bad = MakeListpack(elements);
    return !Stream::CheckNode(master, bad, nullptr, &info);
  };
  EXPECT_TRUE(broken(0, "3"));   // count
  EXPECT_TRUE(broken(1, "0"));   // deleted
  EXPECT_TRUE(broken(2, "0"));   // no master field
  EXPECT_TRUE(broken(4, "x"));   // master terminator
  EXPECT_TRUE(broken(5, "9"));   // unknown flag
  EXPECT_TRUE(broken(9, "5"));   // lp-count
  EXPECT_TRUE(broken(12, "0"));  // 100-0 again: IDs must ascend
  EXPECT_TRUE(broken(10, "z"));  // flags not an integer
  Listpack master_only = MakeListpack({"0", "0", "1", "f", "0"});
  EXPECT_FALSE(Stream::CheckNode(master, master_only, nullptr, &info));

  Stream* s = Stream::Make();
  ASSERT_TRUE(Stream::CheckNode(master, lp, nullptr, &info));
  s->AppendNode(master, std::move(lp), info);
  EXPECT_EQ(s->Length(), 2u);
  EXPECT_EQ(s->first_id(), (StreamID{100, 1}));
  std::vector<Stream::Entry> all = s->Range(StreamID::Min(), StreamID::Max(), 0, false);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].pairs, (std::vector<std::string>{"f", "b"}));
  EXPECT_EQ(all[1].pairs, (std::vector<std::string>{"g", "c"}));
  std::vector<std::string> kept;
  s->ForEachNode([&](const StreamID&, std::string_view bytes, size_t raw_len) {
    kept = NodeElements(bytes, raw_len);
  });
  EXPECT_EQ(kept, (std::vector<std::string>{"2", "0", "1", "f", "0", "2", "0", "1", "b", "4", "0",
                                            "1", "0", "1", "g", "c", "6"}));
  // Appending goes on in the adopted node.
  s->SetLastId({101, 0});
  s->Add({102, 0}, std::vector<std::string_view>{"f", "d"}, Stream::kDefaultNodeMaxBytes, 100);
  EXPECT_EQ(s->NumNodes(), 1u);
  EXPECT_EQ(s->Range({102, 0}, {102, 0}, 0, false).at(0).pairs,
            (std::vector<std::string>{"f", "d"}));
  TypedObject::Destroy(s);
}

// --- compressed nodes: every closed node is kept LZF-compressed, the last one plain

// 5 fields as tools/types-bench.sh adds them: a node of them compresses well.
std::vector<std::string> BenchPairs(uint64_t i) {
  return {"f1", "v1", "f2", "v2", "f3", "v3", "f4", "v4", "f5", std::to_string(i % 7)};
}

TEST(StreamTest, ClosedNodesAreCompressed) {
  Stream* s = Stream::Make();
  Model model;
  for (uint64_t i = 1; i <= 1000; ++i) AddEntry(s, &model, {i, 0}, BenchPairs(i));
  ASSERT_EQ(s->NumNodes(), 10u);
  EXPECT_EQ(s->NumCompressedNodes(), 9u);
  ExpectEqual(*s, model);
  // ForEachNode gives the images, which decompress to Redis's nodes.
  size_t compressed = 0, plain_bytes = 0;
  StreamID after;
  s->ForEachNode([&](const StreamID& master, std::string_view bytes, size_t raw_len) {
    compressed += raw_len != 0;
    plain_bytes += raw_len != 0 ? raw_len : bytes.size();
    const std::string plain = NodeBytes(bytes, raw_len);
    ASSERT_TRUE(Listpack::Validate(plain));
    Listpack lp = Listpack::FromBytes(plain);
    Stream::NodeInfo info;
    EXPECT_TRUE(Stream::CheckNode(master, lp, master.ms > 1 ? &after : nullptr, &info));
    EXPECT_EQ(info.live, 100u);
    after = info.last;
  });
  EXPECT_EQ(compressed, 9u);
  // The bytes held are mostly the images' (a plain node is ~2.9 KiB, its image ~0.8).
  EXPECT_LT(s->MallocUsed(), plain_bytes / 2);

  // Reads of one old node, then a deletion in it (the cached copy becomes the node's
  // own), then reads again: the node is compressed again after the change.
  EXPECT_EQ(s->Range({150, 0}, {152, 0}, 0, false).size(), 3u);
  EXPECT_TRUE(s->Delete({151, 0}));
  model.erase({151, 0});
  EXPECT_EQ(s->NumCompressedNodes(), 9u);
  auto got = s->Range({150, 0}, {152, 0}, 0, true);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].pairs, (model[{152, 0}]));
  EXPECT_FALSE(s->Contains({151, 0}));
  EXPECT_TRUE(s->Contains({250, 0}));
  // A deletion in a node that is not the cached one.
  EXPECT_TRUE(s->Delete({420, 0}));
  model.erase({420, 0});
  ExpectEqual(*s, model);

  // Exact trimming leaves the first node plain; "~" trimming drops whole images.
  EXPECT_EQ(s->TrimByMaxLen(990, false, 0), 8u);
  for (int i = 0; i < 8; ++i) model.erase(model.begin());
  EXPECT_EQ(s->NumCompressedNodes(), 8u);
  EXPECT_EQ(s->TrimByMinId({350, 0}, true, 0), 291u);
  for (int i = 0; i < 291; ++i) model.erase(model.begin());
  EXPECT_EQ(s->NumCompressedNodes(), 6u);
  EXPECT_EQ(s->TrimByMinId({350, 0}, false, 0), 49u);
  for (int i = 0; i < 49; ++i) model.erase(model.begin());
  ExpectEqual(*s, model);

  // The internal form carries plain nodes and comes back compressed.
  std::string form;
  s->Serialize(&form);
  Stream* copy = Stream::Deserialize(form);
  ASSERT_NE(copy, nullptr);
  ExpectEqual(*copy, model);
  EXPECT_EQ(copy->NumCompressedNodes(), copy->NumNodes() - 1);
  TypedObject::Destroy(copy);
  TypedObject::Destroy(s);
}

TEST(StreamTest, AppendsToACompressedLastNode) {
  // Deleting the last node's entries makes a compressed node the last one; when
  // stream-node-max-entries grew meanwhile, the next entry goes into it.
  Stream* s = Stream::Make();
  Model model;
  for (uint64_t i = 1; i <= 20; ++i) AddEntry(s, &model, {i, 0}, BenchPairs(i), 10);
  ASSERT_EQ(s->NumCompressedNodes(), 1u);
  for (uint64_t i = 11; i <= 20; ++i) {
    EXPECT_TRUE(s->Delete({i, 0}));
    model.erase({i, 0});
  }
  EXPECT_EQ(s->NumNodes(), 1u);
  EXPECT_EQ(s->NumCompressedNodes(), 1u);
  AddEntry(s, &model, {21, 0}, BenchPairs(21), 100);
  EXPECT_EQ(s->NumNodes(), 1u);
  EXPECT_EQ(s->NumCompressedNodes(), 0u);
  EXPECT_EQ(s->LastEntryId(), (StreamID{21, 0}));
  ExpectEqual(*s, model);
  // A full compressed last node stays as it is: the entry opens a node.
  AddEntry(s, &model, {22, 0}, BenchPairs(22), 5);
  EXPECT_EQ(s->NumCompressedNodes(), 1u);
  EXPECT_TRUE(s->Delete({22, 0}));
  model.erase({22, 0});
  AddEntry(s, &model, {23, 0}, BenchPairs(23), 5);
  EXPECT_EQ(s->NumNodes(), 2u);
  EXPECT_EQ(s->NumCompressedNodes(), 1u);
  ExpectEqual(*s, model);
  TypedObject::Destroy(s);
}

TEST(StreamTest, IncompressibleNodesAreTriedRarely) {
  // Random printable values do not compress: after two such nodes only one closed node in
  // 16 is tried, and a node that compresses again brings every node back.
  std::mt19937_64 rng(3);
  Stream* s = Stream::Make();
  Model model;
  uint64_t ms = 1;
  for (; ms <= 3000; ++ms) {
    std::vector<std::string> pairs;
    for (int f = 0; f < 5; ++f) {
      std::string value(8 + rng() % 25, ' ');
      for (char& c : value) c = char(32 + rng() % 95);
      pairs.insert(pairs.end(), {"f" + std::to_string(f), value});
    }
    AddEntry(s, &model, {ms, 0}, pairs);
  }
  const size_t random_nodes = s->NumNodes();
  EXPECT_GT(random_nodes, 50u);  // 4 KiB nodes of ~34 entries
  EXPECT_EQ(s->NumCompressedNodes(), 0u);
  for (; ms <= 6000; ++ms) AddEntry(s, &model, {ms, 0}, BenchPairs(ms));
  // At most 16 nodes go by before one is tried again.
  EXPECT_GE(s->NumCompressedNodes(), s->NumNodes() - random_nodes - 17);
  ExpectEqual(*s, model);
  TypedObject::Destroy(s);
}

// --- consumer groups against a model: the group PEL and the consumers' PELs agree

struct PelModel {
  std::map<StreamID, std::string> owner;  // id -> consumer
  std::map<StreamID, uint64_t> count;
};

void ExpectGroup(const StreamGroup& group, const PelModel& model) {
  ASSERT_EQ(group.pel().size(), model.owner.size());
  size_t in_consumers = 0;
  for (const auto& [name, consumer] : group.consumers()) {
    for (StreamID id : consumer->pending) {
      ASSERT_TRUE(model.owner.count(id));
      EXPECT_EQ(model.owner.at(id), name);
      ++in_consumers;
    }
  }
  EXPECT_EQ(in_consumers, model.owner.size());
  for (const auto& [id, entry] : group.pel()) {
    EXPECT_EQ(entry.consumer->name, model.owner.at(id));
    EXPECT_EQ(entry.delivery_count, model.count.at(id));
  }
}

TEST(StreamGroupTest, PelAgainstModel) {
  Stream* s = Stream::Make();
  StreamGroup* group = s->CreateGroup("g", StreamID::Min(), StreamGroup::kInvalidEntriesRead);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(s->CreateGroup("g", StreamID::Min(), 0), nullptr);
  PelModel model;
  std::mt19937_64 rng(7);
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  for (int op = 0; op < 20000; ++op) {
    const StreamID id{rng() % 200, 0};
    const std::string& name = names[rng() % names.size()];
    bool created;
    StreamConsumer* consumer = group->FindOrAddConsumer(name, op, &created);
    switch (rng() % 5) {
      case 0:
      case 1:  // a ">" delivery (or a re-delivery after SETID)
        group->Deliver(id, consumer, op);
        model.owner[id] = name;
        model.count[id] = 1;
        break;
      case 2:  // XCLAIM of a pending entry
        if (group->FindPending(id) != nullptr) {
          ++group->Assign(id, consumer).delivery_count;
          model.owner[id] = name;
          ++model.count[id];
        }
        break;
      case 3:
        EXPECT_EQ(group->Ack(id), model.owner.erase(id) == 1);
        model.count.erase(id);
        break;
      case 4:
        if (rng() % 20 == 0) {
          int64_t owned = 0;
          for (auto it = model.owner.begin(); it != model.owner.end();) {
            if (it->second == name) {
              model.count.erase(it->first);
              it = model.owner.erase(it);
              ++owned;
            } else {
              ++it;
            }
          }
          EXPECT_EQ(group->DeleteConsumer(name), owned);
        }
        break;
    }
    if (op % 1000 == 0) ExpectGroup(*group, model);
  }
  ExpectGroup(*group, model);
  // The serialized form carries the groups.
  std::string form;
  s->Serialize(&form);
  Stream* copy = Stream::Deserialize(form);
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(copy->FindGroup("g"), nullptr);
  ExpectGroup(*copy->FindGroup("g"), model);
  EXPECT_EQ(Stream::Deserialize(form.substr(0, form.size() - 1)), nullptr);
  EXPECT_TRUE(s->DestroyGroup("g"));
  EXPECT_FALSE(s->DestroyGroup("g"));
  TypedObject::Destroy(copy);
  TypedObject::Destroy(s);
}

// Redis 7.0's entries-read and lag rules (the cases of its stream-cgroups tests).
TEST(StreamGroupTest, LagAndEntriesRead) {
  Stream* s = Stream::Make();
  Model model;
  int64_t lag;
  StreamGroup* g = s->CreateGroup("g", StreamID::Min(), StreamGroup::kInvalidEntriesRead);
  ASSERT_TRUE(s->Lag(*g, &lag));
  EXPECT_EQ(lag, 0);
  for (uint64_t i = 1; i <= 5; ++i) AddEntry(s, &model, {i, 0}, {"d", "x"});
  ASSERT_TRUE(s->Lag(*g, &lag));
  EXPECT_EQ(lag, 5);
  s->AdvanceGroup(g, {1, 0});
  EXPECT_EQ(g->entries_read, 1);
  s->Delete({3, 0});
  EXPECT_FALSE(s->Lag(*g, &lag));  // a deletion ahead: unknown
  s->AdvanceGroup(g, {2, 0});
  s->AdvanceGroup(g, {4, 0});
  EXPECT_EQ(g->entries_read, StreamGroup::kInvalidEntriesRead);
  s->AdvanceGroup(g, {5, 0});  // the last entry: exact again
  EXPECT_EQ(g->entries_read, 5);
  ASSERT_TRUE(s->Lag(*g, &lag));
  EXPECT_EQ(lag, 0);
  EXPECT_EQ(s->EstimateEntriesRead({9, 0}), StreamGroup::kInvalidEntriesRead);
  EXPECT_EQ(s->EstimateEntriesRead({0, 5}), StreamGroup::kInvalidEntriesRead);
  s->TrimByMinId({4, 0}, false, 0);  // the deletion is now before the first entry
  EXPECT_EQ(s->EstimateEntriesRead({0, 5}), 3);
  EXPECT_EQ(s->EstimateEntriesRead({4, 0}), 4);
  EXPECT_EQ(s->LastEntryId(), (StreamID{5, 0}));
  EXPECT_TRUE(s->Contains({4, 0}));
  EXPECT_FALSE(s->Contains({3, 0}));
  TypedObject::Destroy(s);
}

}  // namespace
}  // namespace damselfly::core
