#include "src/core/dense_set.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/core/obj_malloc.h"
#include "src/core/string_map.h"
#include "src/core/string_set.h"

namespace damselfly::core {
namespace {

using std::string;

// Members of all shapes: empty, binary, around the 255-byte length-prefix boundary.
string Member(std::mt19937_64& rng, size_t universe) {
  uint64_t n = rng() % universe;
  switch (n % 7) {
    case 0:
      return n == 0 ? string() : string(250 + n % 10, 'a' + n % 26) + std::to_string(n);
    case 1:
      return string("\0bin\xff", 5) + std::to_string(n);
    default:
      return absl::StrCat("m:", n);
  }
}

std::set<string> Members(const StringSet& s) {
  std::set<string> out;
  s.ForEach([&](std::string_view m) { EXPECT_TRUE(out.emplace(m).second) << m; });
  return out;
}

TEST(StringSetTest, Basics) {
  StringSet s;
  EXPECT_TRUE(s.Empty());
  EXPECT_FALSE(s.Contains("a"));
  EXPECT_FALSE(s.Remove("a"));
  EXPECT_EQ(s.Scan(0, 10, [](std::string_view) { FAIL(); }), 0u);
  EXPECT_TRUE(s.Add("a"));
  EXPECT_FALSE(s.Add("a"));
  EXPECT_TRUE(s.Add(""));
  EXPECT_TRUE(s.Add(string(300, 'x')));
  EXPECT_TRUE(s.Add(string("\0\1", 2)));
  EXPECT_EQ(s.Size(), 4u);
  EXPECT_TRUE(s.Contains(""));
  EXPECT_TRUE(s.Contains(string(300, 'x')));
  EXPECT_FALSE(s.Contains(string(299, 'x')));
  EXPECT_TRUE(s.Contains(string("\0\1", 2)));
  EXPECT_FALSE(s.Contains(string("\0", 1)));
  EXPECT_EQ(Members(s), (std::set<string>{"", "a", string(300, 'x'), string("\0\1", 2)}));
  EXPECT_TRUE(s.Remove(""));
  EXPECT_FALSE(s.Contains(""));
  EXPECT_EQ(s.Size(), 3u);
  EXPECT_GT(s.MallocUsed(), 300u);
  StringSet moved(std::move(s));
  EXPECT_EQ(moved.Size(), 3u);
  moved.Clear();
  EXPECT_EQ(moved.Size(), 0u);
  EXPECT_EQ(moved.MallocUsed(), 0u);
}

TEST(StringSetTest, RandomOperationsAgainstModel) {
  std::mt19937_64 rng(1);
  const size_t before = ThreadObjHeapUsedBytes();
  {
    StringSet s;
    std::unordered_set<string> model;
    // Phases of growth and of shrinking, so the table resizes both ways many times.
    for (int phase = 0; phase < 8; ++phase) {
      int add_pct = phase % 2 == 0 ? 80 : 20;
      for (int i = 0; i < 20000; ++i) {
        string m = Member(rng, 5000 << (phase % 3));
        int op = rng() % 100;
        if (op < add_pct) {
          ASSERT_EQ(s.Add(m), model.insert(m).second) << m;
        } else if (op < 95) {
          ASSERT_EQ(s.Remove(m), model.erase(m) == 1) << m;
        } else if (!model.empty()) {
          string popped = s.Pop(rng());
          ASSERT_EQ(model.erase(popped), 1u) << popped;
        }
        ASSERT_EQ(s.Size(), model.size());
        if (i % 97 == 0) {
          ASSERT_EQ(s.Contains(m), model.count(m) == 1);
        }
      }
      ASSERT_EQ(Members(s), std::set<string>(model.begin(), model.end()));
    }
    EXPECT_EQ(ThreadObjHeapUsedBytes() - before, s.MallocUsed());
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), before);
}

TEST(StringSetTest, ShrinksWhenSparse) {
  StringSet s;
  for (int i = 0; i < 100000; ++i) s.Add(absl::StrCat(i));
  size_t big = s.MallocUsed();
  for (int i = 0; i < 99990; ++i) s.Remove(absl::StrCat(i));
  EXPECT_LT(s.MallocUsed(), big / 1000);
  EXPECT_EQ(Members(s).size(), 10u);
}

TEST(StringSetTest, RandomReachesEveryMember) {
  std::mt19937_64 rng(7);
  for (int n : {1, 2, 7, 50, 1000}) {
    StringSet s;
    for (int i = 0; i < n; ++i) s.Add(absl::StrCat("k", i));
    std::set<string> seen;
    for (int i = 0; i < n * 200 && seen.size() < size_t(n); ++i) seen.emplace(s.Random(rng()));
    EXPECT_EQ(seen.size(), size_t(n)) << n;
  }
}

// Random draws entries about uniformly (Redis's HRANDFIELD/SRANDMEMBER tests check the
// distribution with a chi-square test).
TEST(StringSetTest, RandomIsAboutUniform) {
  std::mt19937_64 rng(5);
  StringSet s;
  for (int i = 0; i < 100; ++i) s.Add(absl::StrCat("k", i));
  std::map<string, int> counts;
  const int draws = 100000;
  for (int i = 0; i < draws; ++i) ++counts[string(s.Random(rng()))];
  double chi_square = 0;
  for (auto& [member, n] : counts) chi_square += (n - 1000.0) * (n - 1000.0) / 1000.0;
  EXPECT_EQ(counts.size(), 100u);
  EXPECT_LT(chi_square, 200.0);  // 99 degrees of freedom: ~99 expected, 200 is p < 1e-8
}

TEST(StringSetTest, PopEmptiesTheSet) {
  std::mt19937_64 rng(3);
  StringSet s;
  for (int i = 0; i < 500; ++i) s.Add(absl::StrCat(i));
  std::set<string> popped;
  while (s.Size() > 0) EXPECT_TRUE(popped.insert(s.Pop(rng())).second);
  EXPECT_EQ(popped.size(), 500u);
}

// Redis's SCAN guarantee: whatever happens between calls (inserts that grow the table,
// erases that shrink it), every member present from the first call to the last is
// visited at least once.
TEST(StringSetTest, ScanVisitsEveryStableMemberAcrossResizes) {
  std::mt19937_64 rng(11);
  int total_calls = 0;
  for (int round = 0; round < 20; ++round) {
    StringSet s;
    size_t initial = 10 + rng() % 3000;
    for (size_t i = 0; i < initial; ++i) s.Add(absl::StrCat("stable:", round, ":", i));
    std::set<string> stable = Members(s);
    std::set<string> visited;
    uint64_t cursor = 0;
    int calls = 0;
    int next_volatile = 0;
    do {
      size_t count = 1 + rng() % 60;
      size_t got = 0;
      cursor = s.Scan(cursor, count, [&](std::string_view m) {
        visited.emplace(m);
        ++got;
      });
      if (cursor != 0) {
        EXPECT_GE(got, count);
      }
      ++calls;
      // Between calls: grow a lot, shrink a lot, or churn; erase some stable members.
      int mode = rng() % 4;
      if (mode == 0) {
        size_t n = rng() % 2000;
        for (size_t i = 0; i < n; ++i) s.Add(absl::StrCat("v", next_volatile++));
      } else if (mode == 1) {
        std::vector<string> all;
        s.ForEach([&](std::string_view m) {
          if (m[0] == 'v') all.emplace_back(m);
        });
        for (const string& m : all) {
          if (rng() % 10 != 0) s.Remove(m);
        }
      } else if (mode == 2 && !stable.empty()) {
        auto it = stable.begin();
        std::advance(it, rng() % stable.size());
        s.Remove(*it);
        stable.erase(it);
      }
    } while (cursor != 0);
    for (const string& m : stable) ASSERT_TRUE(visited.count(m)) << m << " round " << round;
    total_calls += calls;
  }
  // The scans were interleaved with changes. (Not per round: a small set may be scanned
  // whole in one call, depending on where its members hash, and the hash is seeded per
  // process.)
  EXPECT_GT(total_calls, 200);
}

TEST(StringSetTest, ScanWithoutChangesVisitsEachOnce) {
  StringSet s;
  for (int i = 0; i < 10000; ++i) s.Add(absl::StrCat(i));
  std::map<string, int> visits;
  uint64_t cursor = 0;
  do {
    cursor = s.Scan(cursor, 10, [&](std::string_view m) { ++visits[string(m)]; });
  } while (cursor != 0);
  EXPECT_EQ(visits.size(), 10000u);
  for (auto& [m, n] : visits) EXPECT_EQ(n, 1) << m;
}

TEST(StringMapTest, Basics) {
  StringMap m;
  EXPECT_TRUE(m.Set("f", "v"));
  EXPECT_FALSE(m.Set("f", "v2"));
  EXPECT_EQ(m.Get("f"), "v2");
  EXPECT_FALSE(m.SetIfAbsent("f", "v3"));
  EXPECT_EQ(m.Get("f"), "v2");
  EXPECT_TRUE(m.SetIfAbsent("g", ""));
  EXPECT_EQ(m.Get("g"), "");
  EXPECT_EQ(m.Get("h"), std::nullopt);
  EXPECT_TRUE(m.Set(string(1000, 'f'), string(70000, 'v')));
  EXPECT_EQ(m.Get(string(1000, 'f'))->size(), 70000u);
  EXPECT_EQ(m.Size(), 3u);
  EXPECT_TRUE(m.Contains("g"));
  EXPECT_TRUE(m.Remove("g"));
  EXPECT_FALSE(m.Remove("g"));
  EXPECT_FALSE(m.Contains("g"));
  auto [field, value] = m.Random(5);
  EXPECT_EQ(m.Get(field), value);
}

TEST(StringMapTest, RandomOperationsAgainstModel) {
  std::mt19937_64 rng(2);
  const size_t before = ThreadObjHeapUsedBytes();
  {
    StringMap m;
    std::unordered_map<string, string> model;
    for (int phase = 0; phase < 6; ++phase) {
      int add_pct = phase % 2 == 0 ? 85 : 25;
      for (int i = 0; i < 20000; ++i) {
        string f = Member(rng, 4000 << (phase % 3));
        string v = Member(rng, 1000);
        int op = rng() % 100;
        if (op < add_pct / 2) {
          bool is_new = model.count(f) == 0;
          model[f] = v;
          ASSERT_EQ(m.Set(f, v), is_new);
        } else if (op < add_pct) {
          ASSERT_EQ(m.SetIfAbsent(f, v), model.emplace(f, v).second);
        } else {
          ASSERT_EQ(m.Remove(f), model.erase(f) == 1);
        }
        ASSERT_EQ(m.Size(), model.size());
        auto it = model.find(f);
        auto got = m.Get(f);
        ASSERT_EQ(got.has_value(), it != model.end());
        if (got) {
          ASSERT_EQ(*got, it->second);
        }
      }
      std::map<string, string> all;
      m.ForEach([&](std::string_view f, std::string_view v) { all.emplace(f, v); });
      ASSERT_EQ(all, (std::map<string, string>(model.begin(), model.end())));
    }
    EXPECT_EQ(ThreadObjHeapUsedBytes() - before, m.MallocUsed());
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), before);
}

TEST(StringMapTest, ScanVisitsEveryPair) {
  StringMap m;
  for (int i = 0; i < 5000; ++i) m.Set(absl::StrCat("f", i), absl::StrCat("v", i));
  std::map<string, string> seen;
  uint64_t cursor = 0;
  do {
    cursor = m.Scan(cursor, 100, [&](std::string_view f, std::string_view v) {
      seen.emplace(f, v);
      m.Contains(f);
    });
  } while (cursor != 0);
  ASSERT_EQ(seen.size(), 5000u);
  for (auto& [f, v] : seen) EXPECT_EQ(v, "v" + f.substr(1));
}

// Memory per member of 10-byte strings: the table's share (the 8-16 byte target)
// and the member block (mimalloc's 16-byte class for 1 + 10 bytes).
TEST(StringSetTest, MemoryPerMember) {
  for (size_t n : {size_t{10000}, size_t{1000000}, size_t{1500000}}) {
    StringSet s;
    for (size_t i = 0; i < n; ++i) {
      string member = absl::StrCat("m:", 10000000 + i);
      s.Add(member.substr(0, 10));
    }
    double table = double(s.MallocUsed()) / n - 16;
    printf("StringSet of %zu 10-byte members: %.2f bytes/member in all, %.2f of them table\n", n,
           double(s.MallocUsed()) / n, table);
    EXPECT_LE(table, 16.0);
  }
}

// A shrink must leave the table at least a quarter full, whatever size the allocator
// rounds the new table to: a freed block twice the size asked for was once reused, the
// table kept its size, and every following erase rehashed it again (SPOP emptying a big
// set ran at a tenth of its speed).
// FreeSome frees a set or map nobody reads any more in steps of `max` elements; what is
// left goes with the destructor. The heap counter says each block went exactly once.
TEST(StringSetTest, FreeSomeInSteps) {
  const size_t before = ThreadObjHeapUsedBytes();
  for (size_t left_for_destructor : {0u, 1000u}) {
    StringSet s;
    StringMap m;
    for (int i = 0; i < 5000; ++i) {
      s.Add(absl::StrCat("member:", i));
      m.Set(absl::StrCat("field:", i), string(i % 100, 'v'));
    }
    size_t steps = 0;
    while (s.FreeSome(300)) {
      ++steps;
      EXPECT_EQ(s.Size(), 5000 - 300 * steps);
      if (s.Size() <= left_for_destructor) break;
    }
    while (m.FreeSome(300) && m.Size() > left_for_destructor) {
    }
    EXPECT_LE(s.Size(), left_for_destructor);
    EXPECT_LE(m.Size(), left_for_destructor);
    EXPECT_EQ(s.FreeSome(0), s.Size() > 0);
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), before);
}

TEST(StringSetTest, ShrinkLeavesTheTableAQuarterFull) {
  std::mt19937_64 rng(3);
  StringSet s;
  for (int i = 0; i < 200000; ++i) s.Add(absl::StrCat("element:", i));
  size_t shrinks = 0;
  while (s.Size() > 0) {
    const size_t homes = s.HomeSlots();
    if (s.Size() - 1 < homes / 4) {
      // The erase below shrinks: offer the allocator a free block of the old table's size.
      void* old_sized = ObjMalloc(s.MallocUsed());
      ObjFree(old_sized);
    }
    s.Pop(rng());
    if (s.HomeSlots() < homes) ++shrinks;
    if (s.HomeSlots() > 8) {
      ASSERT_GE(s.Size(), s.HomeSlots() / 4) << "size " << s.Size();
    }
  }
  EXPECT_GT(shrinks, 5u);
}

}  // namespace
}  // namespace damselfly::core
