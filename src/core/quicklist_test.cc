#include "src/core/quicklist.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

using std::string;

std::vector<string> Contents(Quicklist* ql) {
  std::vector<string> out;
  string text;
  for (Quicklist::Iterator it = ql->Begin(Quicklist::End::kHead); it.Valid(); it.Next()) {
    ListpackValueTo(it.Get(), &text);
    out.push_back(text);
  }
  return out;
}

std::vector<string> Model(const std::deque<string>& model) { return {model.begin(), model.end()}; }

// Values of every listpack kind, some compressible (long repeats), some not.
string RandomValue(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return absl::StrCat(int64_t(rng() % 1000));
    case 1:
      return absl::StrCat(int64_t(rng()));
    case 2:
      return string(rng() % 300 + 50, char('a' + rng() % 3));
    case 3: {
      string s(rng() % 20, 'x');
      for (char& c : s) c = char(rng());
      return s;
    }
    case 4:
      return absl::StrCat("v", rng() % 50);
    default:
      return string(rng() % 5000, 'z');
  }
}

TEST(QuicklistTest, PushPopBothEnds) {
  Quicklist ql(4, 0);
  for (int i = 0; i < 10; ++i) ql.Push(Quicklist::End::kTail, absl::StrCat(i));
  ql.Push(Quicklist::End::kHead, "h");
  EXPECT_EQ(ql.Size(), 11u);
  EXPECT_EQ(ql.NodeCount(), 4u);  // h | 0..3 | 4..7 | 8 9: the head took a new node
  string out;
  ASSERT_TRUE(ql.Pop(Quicklist::End::kHead, &out));
  EXPECT_EQ(out, "h");
  ASSERT_TRUE(ql.Pop(Quicklist::End::kTail, &out));
  EXPECT_EQ(out, "9");
  EXPECT_TRUE(ql.CheckInvariants());
  EXPECT_EQ(Contents(&ql), (std::vector<string>{"0", "1", "2", "3", "4", "5", "6", "7", "8"}));
  while (ql.Pop(Quicklist::End::kTail, &out)) {
  }
  EXPECT_EQ(ql.Size(), 0u);
  EXPECT_EQ(ql.NodeCount(), 0u);
}

TEST(QuicklistTest, FillLimits) {
  EXPECT_TRUE(Quicklist::WithinFill(2, 100, 2));
  EXPECT_FALSE(Quicklist::WithinFill(2, 100, 3));
  EXPECT_FALSE(Quicklist::WithinFill(1000, 8193, 3));  // the safety limit
  EXPECT_TRUE(Quicklist::WithinFill(0, 10, 1));        // 0 acts as 1
  EXPECT_FALSE(Quicklist::WithinFill(0, 10, 2));
  EXPECT_TRUE(Quicklist::WithinFill(-1, 4096, 100000));
  EXPECT_FALSE(Quicklist::WithinFill(-1, 4097, 1));
  EXPECT_TRUE(Quicklist::WithinFill(-2, 8192, 1));
  EXPECT_TRUE(Quicklist::WithinFill(-5, 65536, 1));
  EXPECT_FALSE(Quicklist::WithinFill(-5, 65537, 1));
  EXPECT_FALSE(Quicklist::WithinFill(-9, 65537, 1));  // below -5 acts as -5

  // -2: 8 KiB nodes. 10-byte values take 12 bytes each.
  Quicklist ql(-2, 0);
  for (int i = 0; i < 2000; ++i) ql.Push(Quicklist::End::kTail, "0123456789");
  EXPECT_EQ(ql.NodeCount(), 3u);
  // A value bigger than any node still fits: alone in its node.
  ql.Push(Quicklist::End::kTail, string(100000, 'b'));
  EXPECT_EQ(ql.NodeCount(), 4u);
  EXPECT_TRUE(ql.CheckInvariants());
}

TEST(QuicklistTest, InteriorNodesAreCompressed) {
  Quicklist ql(-1, 1);
  for (int i = 0; i < 2000; ++i) ql.Push(Quicklist::End::kTail, string(100, 'a' + i % 3));
  ASSERT_GT(ql.NodeCount(), 10u);
  EXPECT_EQ(ql.CompressedNodeCount(), ql.NodeCount() - 2);
  EXPECT_TRUE(ql.CheckInvariants());
  size_t used = ql.MallocUsed();
  Quicklist plain(-1, 0);
  for (int i = 0; i < 2000; ++i) plain.Push(Quicklist::End::kTail, string(100, 'a' + i % 3));
  EXPECT_LT(used * 4, plain.MallocUsed());

  // Reading an interior element decompresses its node only for the access.
  {
    Quicklist::Iterator it = ql.At(1000);
    ASSERT_TRUE(it.Valid());
    string text;
    ListpackValueTo(it.Get(), &text);
    EXPECT_EQ(text, string(100, 'a' + 1000 % 3));
    EXPECT_EQ(ql.CompressedNodeCount(), ql.NodeCount() - 3);
  }
  EXPECT_EQ(ql.CompressedNodeCount(), ql.NodeCount() - 2);
  EXPECT_TRUE(ql.CheckInvariants());

  // Depth 2: two plain nodes at each end; popping an end node exposes the next one.
  Quicklist deep(-1, 2);
  for (int i = 0; i < 2000; ++i) deep.Push(Quicklist::End::kHead, string(100, 'q'));
  EXPECT_EQ(deep.CompressedNodeCount(), deep.NodeCount() - 4);
  string out;
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(deep.Pop(Quicklist::End::kHead, &out));
  EXPECT_EQ(out, string(100, 'q'));
  EXPECT_TRUE(deep.CheckInvariants());
  // Memory from ObjMalloc: freeing the list returns it.
  size_t before = ThreadObjHeapUsedBytes();
  {
    Quicklist tmp(-2, 1);
    for (int i = 0; i < 5000; ++i) tmp.Push(Quicklist::End::kTail, "abc");
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), before);
}

TEST(QuicklistTest, InsertSplitsAndMerges) {
  Quicklist ql(4, 0);
  for (int i = 0; i < 8; ++i) ql.Push(Quicklist::End::kTail, absl::StrCat(i));
  ASSERT_EQ(ql.NodeCount(), 2u);
  // Into the full first node's middle: a split, then [0 1 x] [2 3] [4..7] merge nothing.
  {
    Quicklist::Iterator it = ql.At(1);
    it.Insert("x", Listpack::Where::kAfter);
  }
  EXPECT_EQ(Contents(&ql), (std::vector<string>{"0", "1", "x", "2", "3", "4", "5", "6", "7"}));
  EXPECT_EQ(ql.NodeCount(), 3u);
  // Deleting makes small neighbours; the next split merges them where they fit.
  ql.DeleteRange(0, 2);  // [x] [2 3] [4..7]
  {
    Quicklist::Iterator it = ql.At(4);  // "5" in the full last node
    it.Insert("y", Listpack::Where::kBefore);
  }
  EXPECT_EQ(Contents(&ql), (std::vector<string>{"x", "2", "3", "4", "y", "5", "6", "7"}));
  EXPECT_TRUE(ql.CheckInvariants());
  EXPECT_EQ(ql.NodeCount(), 3u);  // [x], [2 3] merged with [4 y], [5 6 7]
}

TEST(QuicklistTest, EraseWhileIteratingBothWays) {
  for (Quicklist::End dir : {Quicklist::End::kHead, Quicklist::End::kTail}) {
    Quicklist ql(3, 1);
    std::vector<string> expect;
    for (int i = 0; i < 100; ++i) {
      string v = i % 3 == 0 ? string(60, 'r') : absl::StrCat(i);
      ql.Push(Quicklist::End::kTail, v);
      if (i % 3 != 0) expect.push_back(v);
    }
    for (Quicklist::Iterator it = ql.Begin(dir); it.Valid();) {
      if (it.Get().Equals(string(60, 'r'))) {
        it.Erase();
      } else {
        it.Next();
      }
    }
    EXPECT_TRUE(ql.CheckInvariants());
    EXPECT_EQ(Contents(&ql), expect);
  }
}

TEST(QuicklistTest, ConversionAndSerialization) {
  Listpack lp;
  for (int i = 0; i < 300; ++i) lp.Append(absl::StrCat("e", i));
  Quicklist big(100, 1, std::move(lp));
  EXPECT_EQ(big.Size(), 300u);
  EXPECT_EQ(big.NodeCount(), 3u);
  string form;
  big.SerializeNodes(&form);
  // Rebuilt from its nodes, node by node.
  Quicklist copy(100, 1);
  std::string_view rest = form;
  while (!rest.empty()) {
    uint32_t len;
    memcpy(&len, rest.data(), 4);
    ASSERT_TRUE(Listpack::Validate(rest.substr(4, len)));
    copy.AppendNode(Listpack::FromBytes(rest.substr(4, len)));
    rest.remove_prefix(4 + len);
  }
  EXPECT_EQ(Contents(&copy), Contents(&big));
  EXPECT_TRUE(copy.CheckInvariants());

  Listpack small;
  small.Append("a");
  small.Append("7");
  Quicklist one(100, 0, std::move(small));
  EXPECT_EQ(one.NodeCount(), 1u);
  Listpack back = one.TakeOnlyNode();
  EXPECT_EQ(back.Size(), 2u);
  EXPECT_EQ(one.Size(), 0u);
}

// Random operations against a std::deque, at several fills, depths and packed thresholds
// (0: the default).
class QuicklistRandomTest : public testing::TestWithParam<std::tuple<int, int, size_t>> {
 protected:
  void TearDown() override { Quicklist::SetPackedThreshold(0); }
};

TEST_P(QuicklistRandomTest, MatchesDeque) {
  const auto [fill, depth, threshold] = GetParam();
  ASSERT_TRUE(Quicklist::SetPackedThreshold(threshold));
  std::mt19937_64 rng(fill * 1000 + depth + threshold);
  Quicklist ql(fill, depth);
  std::deque<string> model;
  string out;
  for (int step = 0; step < 20000; ++step) {
    const int op = rng() % 100;
    if (op < 30) {
      string v = RandomValue(rng);
      bool head = rng() % 2;
      ql.Push(head ? Quicklist::End::kHead : Quicklist::End::kTail, v);
      head ? model.push_front(v) : model.push_back(v);
    } else if (op < 45) {
      bool head = rng() % 2;
      bool popped = ql.Pop(head ? Quicklist::End::kHead : Quicklist::End::kTail, &out);
      ASSERT_EQ(popped, !model.empty());
      if (popped) {
        ASSERT_EQ(out, head ? model.front() : model.back());
        head ? model.pop_front() : model.pop_back();
      }
    } else if (op < 55 && !model.empty()) {
      int64_t index = int64_t(rng() % model.size());
      bool negative = rng() % 2;
      Quicklist::Iterator it = ql.At(negative ? index - int64_t(model.size()) : index);
      ASSERT_TRUE(it.Valid());
      ListpackValueTo(it.Get(), &out);
      ASSERT_EQ(out, model[index]);
    } else if (op < 65 && !model.empty()) {
      size_t index = rng() % model.size();
      string v = RandomValue(rng);
      bool after = rng() % 2;
      Quicklist::Iterator it = ql.At(int64_t(index));
      it.Insert(v, after ? Listpack::Where::kAfter : Listpack::Where::kBefore);
      model.insert(model.begin() + index + after, v);
    } else if (op < 72 && !model.empty()) {
      size_t index = rng() % model.size();
      string v = RandomValue(rng);
      Quicklist::Iterator it = ql.At(int64_t(index));
      it.Replace(v);
      model[index] = v;
    } else if (op < 77 && !model.empty()) {
      size_t start = rng() % model.size();
      size_t count = rng() % 40;
      ql.DeleteRange(start, count);
      model.erase(model.begin() + start, model.begin() + std::min(model.size(), start + count));
    } else if (op < 82 && !model.empty()) {
      // LREM-like: erase values equal to a sampled one, up to a limit, from either end.
      string target = model[rng() % model.size()];
      size_t limit = rng() % 3 + 1;
      bool from_head = rng() % 2;
      size_t removed = 0;
      for (auto it = ql.Begin(from_head ? Quicklist::End::kHead : Quicklist::End::kTail);
           it.Valid() && removed < limit;) {
        if (it.Get().Equals(target)) {
          it.Erase();
          ++removed;
        } else {
          it.Next();
        }
      }
      size_t erased = 0;
      if (from_head) {
        for (auto it = model.begin(); it != model.end() && erased < limit;) {
          if (*it == target) {
            it = model.erase(it);
            ++erased;
          } else {
            ++it;
          }
        }
      } else {
        for (size_t i = model.size(); i-- > 0 && erased < limit;) {
          if (model[i] == target) {
            model.erase(model.begin() + i);
            ++erased;
          }
        }
      }
      ASSERT_EQ(removed, erased);
    } else if (op < 85 && !model.empty()) {
      size_t start = rng() % model.size();
      size_t count = std::min<size_t>(rng() % 20, model.size() - start);
      size_t i = start;
      ql.ForRange(start, count, [&](const Listpack::Value& v) {
        ASSERT_TRUE(v.Equals(model[i])) << i;
        ++i;
      });
      ASSERT_EQ(i, start + count);
    }
    ASSERT_EQ(ql.Size(), model.size());
    if (step % 50 == 0) {
      ASSERT_TRUE(ql.CheckInvariants()) << step;
      ASSERT_EQ(Contents(&ql), Model(model)) << step;
    }
  }
  ASSERT_TRUE(ql.CheckInvariants());
  ASSERT_EQ(Contents(&ql), Model(model));
}

INSTANTIATE_TEST_SUITE_P(
    Fills, QuicklistRandomTest,
    testing::Values(std::tuple{1, 0, 0}, std::tuple{2, 1, 0}, std::tuple{5, 0, 0},
                    std::tuple{5, 2, 0}, std::tuple{128, 1, 0}, std::tuple{-1, 0, 0},
                    std::tuple{-1, 1, 0}, std::tuple{-2, 3, 0}, std::tuple{-5, 1, 0},
                    // Large elements (plain nodes): many, or nearly all.
                    std::tuple{5, 1, 100}, std::tuple{-2, 2, 300}, std::tuple{128, 0, 2}));

// A large element lives in a node of its own wherever it comes in, and LSET of a small
// value over it or of a large one over a small one moves the nodes as needed.
TEST(QuicklistTest, LargeElementsHaveNodesOfTheirOwn) {
  ASSERT_TRUE(Quicklist::SetPackedThreshold(10));
  Quicklist ql(128, 0);
  for (const char* v : {"aa", "bb", "cc", "dd", "ee"}) ql.Push(Quicklist::End::kTail, v);
  EXPECT_EQ(ql.NodeCount(), 1u);
  ql.At(2).Replace(string(10, 'x'));  // split in the middle
  EXPECT_EQ(ql.NodeCount(), 3u);
  ql.At(1).Insert(string(12, 'y'), Listpack::Where::kAfter);  // at a node's edge
  ql.Push(Quicklist::End::kHead, string(20, 'z'));
  EXPECT_EQ(Contents(&ql), (std::vector<string>{string(20, 'z'), "aa", "bb", string(12, 'y'),
                                                 string(10, 'x'), "dd", "ee"}));
  EXPECT_EQ(ql.NodeCount(), 5u);  // z | aa bb | y | x | dd ee
  ql.At(4).Replace("cc");  // the large node turns small and takes neighbours no more
  ql.Push(Quicklist::End::kTail, "ff");
  EXPECT_TRUE(ql.CheckInvariants());
  EXPECT_EQ(ql.Size(), 8u);
  EXPECT_FALSE(Quicklist::SetPackedThreshold((size_t{1} << 32) - (size_t{1} << 20) + 1));
  EXPECT_TRUE(Quicklist::SetPackedThreshold(0));
  EXPECT_EQ(Quicklist::PackedThreshold(), Quicklist::kDefaultPackedThreshold);
}

}  // namespace
}  // namespace damselfly::core
