// ListObject's encodings and conversions, at and around each threshold, without a server.
#include "src/server/list_object.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace damselfly {
namespace {

using End = ListObject::End;

std::vector<std::string> Contents(ListObject* list) {
  std::vector<std::string> out;
  std::string text;
  for (ListObject::Cursor c = list->Begin(End::kHead); c.Valid(); c.Next()) {
    core::ListpackValueTo(c.Get(), &text);
    out.push_back(text);
  }
  return out;
}

void PushAll(ListObject* list, const std::vector<std::string>& values, int fill, unsigned depth) {
  size_t bytes = 0;
  for (const std::string& v : values) bytes += v.size();
  list->PrepareAdd(bytes, values.size(), fill, depth);
  for (const std::string& v : values) list->Push(End::kTail, v);
}

TEST(ListObjectTest, CountFillConvertsBothWays) {
  ListObject list;
  PushAll(&list, {"1", "2", "3", "4"}, 4, 0);
  EXPECT_EQ(list.encoding(), ObjEncoding::kListpack) << "at the limit";
  PushAll(&list, {"5"}, 4, 0);
  EXPECT_EQ(list.encoding(), ObjEncoding::kQuicklist) << "past it";
  std::string out;
  list.Pop(End::kTail, &out);
  list.Pop(End::kTail, &out);
  list.TryShrink(4);
  EXPECT_EQ(list.encoding(), ObjEncoding::kQuicklist) << "3 > half of 4";
  list.Pop(End::kTail, &out);
  list.TryShrink(4);
  EXPECT_EQ(list.encoding(), ObjEncoding::kListpack) << "2 = half of 4";
  EXPECT_EQ(Contents(&list), (std::vector<std::string>{"1", "2"}));
  // A batch that crosses the limit converts before it is added.
  ListObject batch;
  PushAll(&batch, {"a", "b", "c", "d", "e", "f"}, 4, 0);
  EXPECT_EQ(batch.encoding(), ObjEncoding::kQuicklist);
  EXPECT_EQ(batch.Size(), 6u);
}

TEST(ListObjectTest, ByteFillConvertsBothWays) {
  // -1: 4 KiB. A 100-byte string costs 103 bytes in a listpack (2 of header, 1 of
  // backlen); the listpack's frame 7.
  ListObject list;
  std::string value(100, 'v');
  int pushed = 0;
  while (list.encoding() == ObjEncoding::kListpack) {
    PushAll(&list, {value}, -1, 0);
    ++pushed;
  }
  // The conversion happens when the listpack plus the value's bytes pass 4096:
  // 7 + 39 * 103 + 100 > 4096.
  EXPECT_EQ(pushed, 40);
  std::string out;
  while (list.Size() > 20) list.Pop(End::kTail, &out);
  list.TryShrink(-1);
  EXPECT_EQ(list.encoding(), ObjEncoding::kQuicklist) << "20 * 103 + 7 > 2048";
  list.Pop(End::kTail, &out);
  list.TryShrink(-1);
  EXPECT_EQ(list.encoding(), ObjEncoding::kListpack) << "19 * 103 + 7 <= 2048";
  EXPECT_EQ(list.Size(), 19u);
}

TEST(ListObjectTest, SerializeBothEncodings) {
  for (int n : {3, 500}) {
    ListObject list;
    std::vector<std::string> values;
    for (int i = 0; i < n; ++i)
      values.push_back(i % 2 ? absl::StrCat(i) : std::string(30, 'a' + i % 26));
    PushAll(&list, values, 16, 1);
    std::string form;
    list.Serialize(&form);
    core::TypedObject* copy = ListObject::Deserialize(ObjEncoding::kQuicklist, form);
    ASSERT_NE(copy, nullptr);
    auto* copied = static_cast<ListObject*>(copy);
    EXPECT_EQ(copied->encoding(), list.encoding());
    EXPECT_EQ(Contents(copied), values);
    core::TypedObject::Destroy(copy);
    // Malformed forms are refused.
    EXPECT_EQ(ListObject::Deserialize(ObjEncoding::kQuicklist, ""), nullptr);
    EXPECT_EQ(ListObject::Deserialize(ObjEncoding::kQuicklist, form.substr(0, form.size() - 1)),
              nullptr);
    std::string bad = form;
    bad[0] = 7;
    EXPECT_EQ(ListObject::Deserialize(ObjEncoding::kQuicklist, bad), nullptr);
  }
}

TEST(ListObjectTest, CursorEditsBothEncodings) {
  for (int fill : {100, 2}) {
    ListObject list;
    PushAll(&list, {"a", "x", "b", "x", "c"}, fill, 1);
    // Erase from the tail, one match.
    for (ListObject::Cursor c = list.Begin(End::kTail); c.Valid();) {
      if (c.Get().Equals("x")) {
        c.Erase();
        break;
      }
      c.Next();
    }
    EXPECT_EQ(Contents(&list), (std::vector<std::string>{"a", "x", "b", "c"}));
    list.At(-1).Replace("C");
    list.At(1).Insert("y", core::Listpack::Where::kBefore);
    list.DeleteRange(0, 1);
    EXPECT_EQ(Contents(&list), (std::vector<std::string>{"y", "x", "b", "C"}));
    EXPECT_FALSE(list.At(4).Valid());
    EXPECT_FALSE(list.At(-5).Valid());
  }
}

TEST(ListObjectTest, MallocUsedCountsEveryBlock) {
  auto* small = core::TypedObject::Make<ListObject>();
  PushAll(small, {"a", "b"}, 128, 0);
  auto* big = core::TypedObject::Make<ListObject>();
  for (int i = 0; i < 100; ++i) PushAll(big, {std::string(100, 'x')}, 8, 0);
  EXPECT_GE(small->MallocUsed(), sizeof(ListObject) + 9);
  EXPECT_GT(big->MallocUsed(), 100 * 100 + 13 * 48) << "13 nodes of 8 and their listpacks";
  core::TypedObject::Destroy(small);
  core::TypedObject::Destroy(big);
}

}  // namespace
}  // namespace damselfly
