// The list handles' encodings and conversions, at and around each threshold, without a
// server.
#include "src/server/list_object.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/core/obj_malloc.h"

namespace damselfly {
namespace {

using End = ListView::End;

std::vector<std::string> Contents(const PrimeValue& value) {
  std::vector<std::string> out;
  std::string text;
  const ListView list(value);
  for (ListView::Cursor c = list.Begin(End::kHead); c.Valid(); c.Next()) {
    core::ListpackValueTo(c.Get(), &text);
    out.push_back(text);
  }
  return out;
}

// A PrimeValue holding an empty list, and a handle on it.
struct TestList {
  TestList() { ListRef::MakeEmpty(&value); }
  ListRef Ref() { return ListRef(&value); }
  ObjEncoding encoding() const { return ListView(value).encoding(); }
  size_t Size() const { return ListView(value).Size(); }
  PrimeValue value;
};

void PushAll(TestList* list, const std::vector<std::string>& values, int fill, unsigned depth) {
  size_t bytes = 0;
  for (const std::string& v : values) bytes += v.size();
  ListRef ref = list->Ref();
  ref.PrepareAdd(bytes, values.size(), fill, depth);
  for (const std::string& v : values) ref.Push(End::kTail, v);
}

void PopTail(TestList* list) {
  std::string out;
  list->Ref().Pop(End::kTail, &out);
}

TEST(ListObjectTest, CountFillConvertsBothWays) {
  TestList list;
  PushAll(&list, {"1", "2", "3", "4"}, 4, 0);
  EXPECT_EQ(list.encoding(), ObjEncoding::kListpack) << "at the limit";
  EXPECT_TRUE(list.value.holds_block());
  PushAll(&list, {"5"}, 4, 0);
  EXPECT_EQ(list.encoding(), ObjEncoding::kQuicklist) << "past it";
  EXPECT_FALSE(list.value.holds_block());
  EXPECT_EQ(list.value.object_encoding(), ObjEncoding::kQuicklist) << "OBJECT ENCODING's";
  PopTail(&list);
  PopTail(&list);
  list.Ref().TryShrink(4);
  EXPECT_EQ(list.encoding(), ObjEncoding::kQuicklist) << "3 > half of 4";
  PopTail(&list);
  list.Ref().TryShrink(4);
  EXPECT_EQ(list.encoding(), ObjEncoding::kListpack) << "2 = half of 4";
  EXPECT_TRUE(list.value.holds_block());
  EXPECT_EQ(list.value.object_encoding(), ObjEncoding::kQuicklist) << "OBJECT ENCODING's";
  EXPECT_EQ(Contents(list.value), (std::vector<std::string>{"1", "2"}));
  // A batch that crosses the limit converts before it is added.
  TestList batch;
  PushAll(&batch, {"a", "b", "c", "d", "e", "f"}, 4, 0);
  EXPECT_EQ(batch.encoding(), ObjEncoding::kQuicklist);
  EXPECT_EQ(batch.Size(), 6u);
}

TEST(ListObjectTest, ByteFillConvertsBothWays) {
  // -1: 4 KiB. A 100-byte string costs 103 bytes in a listpack (2 of header, 1 of
  // backlen); the listpack's frame 7.
  TestList list;
  std::string value(100, 'v');
  int pushed = 0;
  while (list.encoding() == ObjEncoding::kListpack) {
    PushAll(&list, {value}, -1, 0);
    ++pushed;
  }
  // The conversion happens when the listpack plus the value's bytes pass 4096:
  // 7 + 39 * 103 + 100 > 4096.
  EXPECT_EQ(pushed, 40);
  while (list.Size() > 20) PopTail(&list);
  list.Ref().TryShrink(-1);
  EXPECT_EQ(list.encoding(), ObjEncoding::kQuicklist) << "20 * 103 + 7 > 2048";
  PopTail(&list);
  list.Ref().TryShrink(-1);
  EXPECT_EQ(list.encoding(), ObjEncoding::kListpack) << "19 * 103 + 7 <= 2048";
  EXPECT_EQ(list.Size(), 19u);
}

TEST(ListObjectTest, SerializeBothEncodings) {
  for (int n : {3, 500}) {
    TestList list;
    std::vector<std::string> values;
    for (int i = 0; i < n; ++i)
      values.push_back(i % 2 ? absl::StrCat(i) : std::string(30, 'a' + i % 26));
    PushAll(&list, values, 16, 1);
    std::string form;
    list.value.Serialize(&form);  // type, encoding, the encoding's form
    const ObjEncoding encoding = ObjEncoding(form[1]);
    EXPECT_EQ(encoding, list.encoding());
    const std::string_view body = std::string_view(form).substr(2);
    PrimeValue copy;
    ASSERT_TRUE(MakeListFromForm(encoding, body, &copy));
    EXPECT_EQ(ListView(copy).encoding(), list.encoding());
    EXPECT_EQ(copy.object_encoding(), ObjEncoding::kQuicklist);
    EXPECT_EQ(Contents(copy), values);
    // Malformed forms are refused, and leave the value as it was.
    PrimeValue refused;
    EXPECT_FALSE(MakeListFromForm(encoding, "", &refused));
    EXPECT_FALSE(MakeListFromForm(encoding, body.substr(0, body.size() - 1), &refused));
    EXPECT_FALSE(MakeListFromForm(ObjEncoding::kHashtable, body, &refused));
    EXPECT_EQ(refused.type(), ObjType::kString);
  }
}

TEST(ListObjectTest, CursorEditsBothEncodings) {
  for (int fill : {100, 2}) {
    TestList list;
    PushAll(&list, {"a", "x", "b", "x", "c"}, fill, 1);
    ListRef ref = list.Ref();
    // Erase from the tail, one match.
    for (ListView::Cursor c = ref.Begin(End::kTail); c.Valid();) {
      if (c.Get().Equals("x")) {
        c.Erase();
        break;
      }
      c.Next();
    }
    EXPECT_EQ(Contents(list.value), (std::vector<std::string>{"a", "x", "b", "c"}))
        << "the value follows a change through a cursor";
    ref.At(-1).Replace(std::string(200, 'C'));  // grows the block: it moves
    ref.At(1).Insert("y", core::Listpack::Where::kBefore);
    ref.DeleteRange(0, 1);
    EXPECT_EQ(Contents(list.value),
              (std::vector<std::string>{"y", "x", "b", std::string(200, 'C')}));
    EXPECT_FALSE(ref.At(4).Valid());
    EXPECT_FALSE(ref.At(-5).Valid());
  }
}

TEST(ListObjectTest, MallocUsedCountsEveryBlock) {
  const size_t baseline = core::ThreadObjHeapUsedBytes();
  {
    TestList small;
    PushAll(&small, {"a", "b"}, 128, 0);
    EXPECT_EQ(small.value.MallocUsed(), core::ObjUsableSize(small.value.block().data))
        << "a small list is its listpack block alone";
    EXPECT_EQ(core::ThreadObjHeapUsedBytes() - baseline, small.value.MallocUsed());
    TestList big;
    for (int i = 0; i < 100; ++i) PushAll(&big, {std::string(100, 'x')}, 8, 0);
    EXPECT_GT(big.value.MallocUsed(), 100 * 100 + 13 * 48) << "13 nodes of 8 and their listpacks";
    EXPECT_EQ(core::ThreadObjHeapUsedBytes() - baseline,
              small.value.MallocUsed() + big.value.MallocUsed());
  }
  EXPECT_EQ(core::ThreadObjHeapUsedBytes(), baseline);
}

}  // namespace
}  // namespace damselfly
