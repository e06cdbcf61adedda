#include "src/core/set_object.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

using Enc = SetObject::Encoding;

// Owns a SetObject for a test.
struct SetPtr {
  SetObject* set;
  explicit SetPtr(SetObject* s) : set(s) {}
  ~SetPtr() { TypedObject::Destroy(set); }
  SetObject* operator->() const { return set; }
};

std::set<std::string> Members(const SetObject& set) {
  std::set<std::string> out;
  set.ForEach([&](std::string_view m) { EXPECT_TRUE(out.emplace(m).second) << m; });
  return out;
}

bool IsInt(std::string_view s) {
  int64_t ignored;
  return ListpackStringToInt64(s, &ignored);
}

TEST(SetObjectTest, CreatePicksEncodingFromFirstMemberAndCount) {
  const SetLimits limits{.intset_entries = 4, .listpack_entries = 3, .listpack_value = 5};
  EXPECT_EQ(SetPtr(SetObject::Create("12", 4, limits))->encoding(), Enc::kIntset);
  EXPECT_EQ(SetPtr(SetObject::Create("12", 5, limits))->encoding(), Enc::kHashtable);
  EXPECT_EQ(SetPtr(SetObject::Create("012", 3, limits))->encoding(), Enc::kListpack);
  EXPECT_EQ(SetPtr(SetObject::Create("a", 3, limits))->encoding(), Enc::kListpack);
  EXPECT_EQ(SetPtr(SetObject::Create("a", 4, limits))->encoding(), Enc::kHashtable);
  EXPECT_EQ(SetPtr(SetObject::CreateEmpty())->encoding(), Enc::kIntset);
}

// An intset holds at most intset_entries integers; one more makes a hash table.
TEST(SetObjectTest, IntsetThreshold) {
  const SetLimits limits{.intset_entries = 4, .listpack_entries = 128, .listpack_value = 64};
  SetPtr set(SetObject::CreateEmpty());
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(set->Add(std::to_string(i), limits));
  EXPECT_FALSE(set->Add("3", limits));
  EXPECT_EQ(set->encoding(), Enc::kIntset);
  EXPECT_TRUE(set->Add("-9223372036854775808", limits));
  EXPECT_EQ(set->encoding(), Enc::kHashtable);
  EXPECT_EQ(set->Size(), 5u);
  EXPECT_TRUE(set->Contains("-9223372036854775808"));
  // Removals never convert back.
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(set->Remove(std::to_string(i)));
  EXPECT_EQ(set->encoding(), Enc::kHashtable);
}

// A string joining an intset: listpack when everything fits, else hash table.
TEST(SetObjectTest, IntsetToListpackOrHashtable) {
  const SetLimits limits{.intset_entries = 512, .listpack_entries = 3, .listpack_value = 5};
  {
    SetPtr set(SetObject::CreateEmpty());
    set->Add("1", limits);
    set->Add("22", limits);
    EXPECT_TRUE(set->Add("abcde", limits));
    EXPECT_EQ(set->encoding(), Enc::kListpack);
    EXPECT_EQ(Members(*set.set), (std::set<std::string>{"1", "22", "abcde"}));
    EXPECT_TRUE(set->Add("x", limits));  // a fourth member: past listpack_entries
    EXPECT_EQ(set->encoding(), Enc::kHashtable);
  }
  {
    SetPtr set(SetObject::CreateEmpty());
    set->Add("1", limits);
    EXPECT_TRUE(set->Add("abcdef", limits));  // longer than listpack_value
    EXPECT_EQ(set->encoding(), Enc::kHashtable);
  }
  {
    SetPtr set(SetObject::CreateEmpty());
    set->Add("123456", limits);  // an integer wider than listpack_value
    EXPECT_TRUE(set->Add("a", limits));
    EXPECT_EQ(set->encoding(), Enc::kHashtable);
  }
  {
    SetPtr set(SetObject::CreateEmpty());
    for (const char* m : {"1", "2", "3"}) set->Add(m, limits);
    EXPECT_TRUE(set->Add("a", limits));  // 3 integers: no room for a fourth member
    EXPECT_EQ(set->encoding(), Enc::kHashtable);
  }
}

TEST(SetObjectTest, ListpackThresholds) {
  const SetLimits limits{.intset_entries = 512, .listpack_entries = 3, .listpack_value = 5};
  SetPtr set(SetObject::Create("a", 1, limits));
  EXPECT_TRUE(set->Add("a", limits));
  EXPECT_FALSE(set->Add("a", limits));
  EXPECT_TRUE(set->Add("12345", limits));  // exactly listpack_value bytes
  EXPECT_TRUE(set->Add("7", limits));      // integers are fine in a listpack
  EXPECT_EQ(set->encoding(), Enc::kListpack);
  EXPECT_TRUE(set->Contains("7"));
  EXPECT_FALSE(set->Contains("07"));
  EXPECT_FALSE(set->Add("7", limits));  // present: no conversion although full
  EXPECT_EQ(set->encoding(), Enc::kListpack);
  EXPECT_TRUE(set->Add("b", limits));
  EXPECT_EQ(set->encoding(), Enc::kHashtable);
  EXPECT_EQ(Members(*set.set), (std::set<std::string>{"a", "12345", "7", "b"}));

  SetPtr long_member(SetObject::Create("a", 1, limits));
  EXPECT_TRUE(long_member->Add("123456x", limits));
  EXPECT_EQ(long_member->encoding(), Enc::kHashtable);
}

TEST(SetObjectTest, ReserveForConvertsAheadOfBulkAdds) {
  const SetLimits limits{.intset_entries = 4, .listpack_entries = 3, .listpack_value = 64};
  SetPtr ints(SetObject::CreateEmpty());
  ints->Add("1", limits);
  ints->ReserveFor(4, limits);
  EXPECT_EQ(ints->encoding(), Enc::kIntset);
  ints->ReserveFor(5, limits);
  EXPECT_EQ(ints->encoding(), Enc::kHashtable);
  EXPECT_TRUE(ints->Contains("1"));

  SetPtr strings(SetObject::Create("a", 1, limits));
  strings->Add("a", limits);
  strings->ReserveFor(3, limits);
  EXPECT_EQ(strings->encoding(), Enc::kListpack);
  strings->ReserveFor(4, limits);
  EXPECT_EQ(strings->encoding(), Enc::kHashtable);
  EXPECT_TRUE(strings->Contains("a"));
}

TEST(SetObjectTest, RandomAndPopReachEveryMember) {
  const SetLimits limits{.intset_entries = 8, .listpack_entries = 8, .listpack_value = 64};
  std::mt19937_64 rng(7);
  for (const std::vector<std::string>& members :
       {std::vector<std::string>{"1", "-5", "300000", "7"},
        std::vector<std::string>{"a", "2", "bb", "ccc"},
        std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}) {
    SetPtr set(SetObject::CreateEmpty());
    for (const std::string& m : members) set->Add(m, limits);
    std::set<std::string> seen;
    std::string scratch;
    for (int i = 0; i < 2000; ++i) seen.emplace(set->Random(rng(), &scratch));
    EXPECT_EQ(seen, std::set<std::string>(members.begin(), members.end()));
    std::set<std::string> popped;
    while (!set->Empty()) popped.insert(set->Pop(rng()));
    EXPECT_EQ(popped, seen);
  }
}

TEST(SetObjectTest, SerializeRoundTripsEveryEncoding) {
  const SetLimits limits{.intset_entries = 4, .listpack_entries = 4, .listpack_value = 64};
  for (const std::vector<std::string>& members :
       {std::vector<std::string>{"1", "-70000", "5"}, std::vector<std::string>{"a", "1", "\0b"},
        std::vector<std::string>{"a", "b", "c", "d", "e", std::string(300, 'x'), ""}}) {
    SetPtr set(SetObject::CreateEmpty());
    for (const std::string& m : members) set->Add(m, limits);
    std::string form;
    set->Serialize(&form);
    SetPtr copy(SetObject::Deserialize(set->encoding(), form));
    ASSERT_NE(copy.set, nullptr);
    EXPECT_EQ(copy->encoding(), set->encoding());
    EXPECT_EQ(Members(*copy.set), Members(*set.set));
    // Truncated forms are refused, never read past.
    if (set->encoding() == Enc::kHashtable) {
      EXPECT_EQ(SetObject::Deserialize(Enc::kHashtable, form.substr(0, form.size() - 1)), nullptr);
    }
    EXPECT_EQ(SetObject::Deserialize(Enc::kIntset, "\x02\x00"), nullptr);
    EXPECT_EQ(SetObject::Deserialize(Enc::kListpack, "xyz"), nullptr);
  }
}

// Random operations against std::set, with the encoding predicted by the rules of the
// header from the model alone; small limits so every conversion happens often.
TEST(SetObjectTest, RandomOperationsMatchModel) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 40; ++round) {
    const SetLimits limits{.intset_entries = 1 + rng() % 20,
                           .listpack_entries = 1 + rng() % 20,
                           .listpack_value = 1 + rng() % 8};
    std::set<std::string> model;
    Enc expected = Enc::kIntset;
    SetPtr set(SetObject::CreateEmpty());
    for (int op = 0; op < 400; ++op) {
      std::string member = rng() % 2 ? std::to_string(int64_t(rng() % 40) - 10)
                                     : std::string(1 + rng() % 10, char('a' + rng() % 3));
      switch (rng() % 4) {
        case 0:
        case 1: {
          const bool fresh = !model.count(member);
          if (fresh && expected == Enc::kIntset) {
            if (IsInt(member)) {
              if (model.size() + 1 > limits.intset_entries) expected = Enc::kHashtable;
            } else {
              size_t widest = 0;
              for (const std::string& m : model) widest = std::max(widest, m.size());
              expected = model.size() < limits.listpack_entries &&
                                 member.size() <= limits.listpack_value &&
                                 widest <= limits.listpack_value
                             ? Enc::kListpack
                             : Enc::kHashtable;
            }
          } else if (fresh && expected == Enc::kListpack) {
            if (model.size() >= limits.listpack_entries || member.size() > limits.listpack_value) {
              expected = Enc::kHashtable;
            }
          }
          EXPECT_EQ(set->Add(member, limits), fresh);
          model.insert(member);
          break;
        }
        case 2:
          EXPECT_EQ(set->Remove(member), model.erase(member) == 1);
          break;
        case 3:
          EXPECT_EQ(set->Contains(member), model.count(member) == 1);
          break;
      }
      ASSERT_EQ(set->encoding(), expected) << "round " << round << " op " << op;
      ASSERT_EQ(set->Size(), model.size());
    }
    EXPECT_EQ(Members(*set.set), model);
    std::set<std::string> scanned;
    uint64_t cursor = 0;
    do {
      cursor = set->Scan(cursor, 5, [&](std::string_view m) { scanned.emplace(m); });
    } while (cursor != 0);
    EXPECT_EQ(scanned, model);
  }
}

TEST(SetObjectTest, MallocUsedCountsTheBlocks) {
  const SetLimits limits;
  const size_t before = ThreadObjHeapUsedBytes();
  {
    SetPtr set(SetObject::CreateEmpty());
    for (int i = 0; i < 1000; ++i) set->Add(absl::StrCat("member:", i), limits);
    EXPECT_EQ(set->encoding(), Enc::kHashtable);
    EXPECT_EQ(ThreadObjHeapUsedBytes() - before, set->MallocUsed());
  }
  {
    SetPtr set(SetObject::CreateEmpty());
    for (int i = 0; i < 10; ++i) set->Add(std::to_string(i), limits);
    EXPECT_EQ(ThreadObjHeapUsedBytes() - before, set->MallocUsed());
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), before);
}

}  // namespace
}  // namespace damselfly::core
