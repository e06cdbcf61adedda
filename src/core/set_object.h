// SetObject: the value of a Redis set, in one of three encodings, with Redis 7.2's rules
// for choosing between them.
//
//   intset     all members are canonical integers ("7", "-42", never "07" or "+7") and
//              there are at most intset_entries of them: Redis's sorted int array.
//   listpack   at most listpack_entries members, none longer than listpack_value bytes:
//              Redis's packed sequence, searched linearly (the counts are small).
//   hashtable  anything larger: a StringSet (dense hash set, one block per member).
//
// Why Redis 7.2's rules rather than 7.0's: 7.0 keeps small sets of strings in a hash
// table, which costs several hundred bytes for ten short members; 7.2 introduced the
// listpack for them. The small encodings keep Redis's exact bytes (intset.h,
// listpack.h), so snapshots and DUMP can carry them as they are.
//
// Conversions (as t_set.c in 7.2) go one way, towards larger encodings, whatever is
// removed later:
//  - Create picks the encoding from the first member and the number of members the
//    command brings (SADD's argument count): intset if that member is an integer and
//    the count fits an intset, else listpack if the count fits one, else hashtable.
//  - Adding a non-integer to an intset makes it a listpack when the listpack would
//    hold everything (its count below listpack_entries, the new member and the widest
//    integer within listpack_value), else a hashtable. An intset that grows past
//    intset_entries becomes a hashtable.
//  - A listpack becomes a hashtable when a member would make it exceed either limit.
//  - ReserveFor(n) converts ahead of a bulk add of n members that would not fit.
// A result built fresh (SINTERSTORE...) starts as an empty intset (CreateEmpty) and
// grows through Add, so its encoding follows from its content, as in Redis.
//
// Thread contract: not thread-safe. A SetObject lives on its shard's thread and its
// blocks come from that thread's ObjMalloc heap: every call, the destructor included,
// happens there (a value moving to another shard travels as Serialize's form).
//
// Invariants: never empty between commands (the server deletes an emptied set), though
// the object itself allows it; the members are distinct; encoding() says which
// representation holds them.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "src/core/intset.h"
#include "src/core/listpack.h"
#include "src/core/string_set.h"
#include "src/core/typed_object.h"

namespace damselfly::core {

// The thresholds of the conversions, read by the caller from its configuration
// (set-max-intset-entries, set-max-listpack-entries, set-max-listpack-value).
struct SetLimits {
  uint64_t intset_entries = 512;
  uint64_t listpack_entries = 128;
  uint64_t listpack_value = 64;
};

class SetObject final : public TypedObject {
 public:
  enum class Encoding : uint8_t { kIntset, kListpack, kHashtable };

  // Returns a new empty set for a command that is about to add `size_hint` members, the
  // first being `first_member` (see the rules above). Free with TypedObject::Destroy.
  static SetObject* Create(std::string_view first_member, size_t size_hint,
                           const SetLimits& limits);
  // Returns a new empty intset-encoded set, the start of a result built by Add.
  static SetObject* CreateEmpty();
  // Returns the set that Serialize wrote as `form` for `encoding`, or nullptr when the
  // form is malformed (never reads outside it).
  static SetObject* Deserialize(Encoding encoding, std::string_view form);

  ~SetObject() override;

  Encoding encoding() const { return Encoding(rep_.index()); }
  size_t Size() const;
  bool Empty() const { return Size() == 0; }

  bool Contains(std::string_view member) const;
  // Adds `member`; false when it was present. May convert (see above).
  bool Add(std::string_view member, const SetLimits& limits);
  // Removes `member`; false when it was absent. Never converts.
  bool Remove(std::string_view member);
  // Converts ahead of adding up to `count` members when the current encoding could not
  // hold that many (Redis's setTypeMaybeConvert), sizing the hash table for them.
  void ReserveFor(size_t count, const SetLimits& limits);

  // Returns a member chosen with the random number `rnd` (every member reachable); the
  // view points into the set or into *scratch, valid until either changes.
  // REQUIRES: !Empty().
  std::string_view Random(uint64_t rnd, std::string* scratch) const;
  // Removes and returns a member chosen with `rnd`. REQUIRES: !Empty().
  std::string Pop(uint64_t rnd);

  // Calls f(std::string_view member) for every member; the view is valid during the
  // call only. f must not change the set.
  template <typename F>
  void ForEach(F&& f) const;
  // SSCAN: calls f for some members and returns the cursor to continue with (0: done).
  // The small encodings visit everything in one call, as Redis does; the hash table
  // follows StringSet::Scan's guarantee (every member present throughout is visited).
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const;

  size_t MallocUsed() const override;
  size_t FreeEffort() const override {
    return encoding() == Encoding::kHashtable ? Size() : 1;
  }
  bool FreeSome(size_t max) override {
    StringSet* const* table = std::get_if<StringSet*>(&rep_);
    return table != nullptr && (*table)->FreeSome(max);
  }
  // intset and listpack: their Redis bytes; hashtable: each member as a 4-byte little
  // endian length and its bytes.
  void Serialize(std::string* out) const override;

 private:
  friend class TypedObject;  // Make
  using Rep = std::variant<Intset, Listpack, StringSet*>;
  explicit SetObject(Rep rep) : rep_(std::move(rep)) {}

  static StringSet* NewStringSet();
  // Replaces the representation by a hash table holding every member, with room for
  // `extra` more.
  void ConvertToHashtable(size_t extra);
  void ConvertIntsetToListpack();
  bool AddToIntset(std::string_view member, const SetLimits& limits);

  Rep rep_;
};

template <typename F>
void SetObject::ForEach(F&& f) const {
  switch (encoding()) {
    case Encoding::kIntset: {
      const Intset& is = std::get<Intset>(rep_);
      char buf[24];
      for (size_t i = 0, n = is.Size(); i < n; ++i) {
        char* end = std::to_chars(buf, buf + sizeof(buf), is.Get(i)).ptr;
        f(std::string_view(buf, end - buf));
      }
      return;
    }
    case Encoding::kListpack: {
      const Listpack& lp = std::get<Listpack>(rep_);
      char buf[24];
      for (Listpack::Pos pos = lp.First(); pos != Listpack::kNoPos; pos = lp.Next(pos)) {
        Listpack::Value value = lp.Get(pos);
        if (value.is_int) {
          char* end = std::to_chars(buf, buf + sizeof(buf), value.ival).ptr;
          f(std::string_view(buf, end - buf));
        } else {
          f(value.sval);
        }
      }
      return;
    }
    case Encoding::kHashtable:
      std::get<StringSet*>(rep_)->ForEach(f);
      return;
  }
}

template <typename F>
uint64_t SetObject::Scan(uint64_t cursor, size_t count, F&& f) const {
  if (encoding() == Encoding::kHashtable) return std::get<StringSet*>(rep_)->Scan(cursor, count, f);
  ForEach(f);
  return 0;
}

}  // namespace damselfly::core
