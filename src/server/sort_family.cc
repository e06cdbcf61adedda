// SORT and SORT_RO.
//
// The elements of a list, set or sorted set are copied out on the key's shard, sorted on
// the connection's fiber, and (STORE) written as a list on the destination's shard.
//
// BY and GET patterns name other keys ("weight_*", "data_*->field"), which may live on
// any shard and cannot be known before the elements are read. Redis Cluster refuses
// them; damselfly runs such a SORT as a whole-shard transaction (as FLUSHALL): every
// shard is held for its hops, so the keys it reads are those of one moment, at the cost
// of running alone. A SORT without such patterns (plain, ALPHA, LIMIT, BY nosort,
// GET #, STORE) is an ordinary transaction on its one or two keys.
#include "src/server/sort_family.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "src/core/set_object.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/collection_limits.h"
#include "src/server/conn_tx_state.h"
#include "src/server/engine_shard_set.h"
#include "src/server/family_utils.h"
#include "src/server/hash_object.h"
#include "src/server/list_object.h"
#include "src/server/transaction.h"
#include "src/server/zset_object.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// --- What SORT reads from and writes to the collection types.

size_t ListLength(const PrimeValue& value) { return ListView(value).Size(); }

// `count` elements from index `start` towards the tail, or with from_tail, from index
// `start` counted from the tail towards the head.
void ListElements(const PrimeValue& value, size_t start, size_t count, bool from_tail,
                  std::vector<std::string>* out) {
  const ListView list(value);
  ListView::Cursor cursor = from_tail ? list.At(-1 - int64_t(start), ListView::End::kTail)
                                      : list.At(int64_t(start), ListView::End::kHead);
  for (; cursor.Valid() && out->size() < count; cursor.Next()) {
    out->push_back(cursor.Get().ToString());
  }
}

void SetMembers(const PrimeValue& value, std::vector<std::string>* out) {
  const auto* set = value.GetObjectAs<core::SetObject>();
  out->reserve(set->Size());
  set->ForEach([out](std::string_view member) { out->emplace_back(member); });
}

size_t ZSetLength(const PrimeValue& value) { return ZSetView(value).Size(); }

// `count` members from rank `start`, ascending, or with reverse from the highest rank.
void ZSetMembersByRank(const PrimeValue& value, size_t start, size_t count, bool reverse,
                       std::vector<std::string>* out) {
  const ZSetView zset(value);
  const size_t size = zset.Size();
  const size_t first = reverse ? size - start - count : start;
  zset.Walk(first, first + count, reverse, [out](std::string_view member, double) {
    out->emplace_back(member);
    return true;
  });
}

std::optional<std::string> HashFieldValue(const PrimeValue& value, std::string_view field) {
  std::optional<std::string_view> found =
      HashView(value).Get(field, &Scratch());
  if (!found) return std::nullopt;
  return std::string(*found);
}

// Replaces `key` (of any type, its TTL dropped) with a list of `elements`.
void StoreAsList(DbIndex db, std::string_view key, const std::vector<std::string>& elements,
                 const char* event) {
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  ListRef::MakeEmpty(&entry.value());
  ListRef list(&entry.value());
  size_t bytes = 0;
  for (const std::string& element : elements) bytes += element.size();
  list.PrepareAdd(bytes, elements.size(), CollectionLimits::ListFill(),
                  CollectionLimits::ListDepth());
  for (const std::string& element : elements) list.Push(ListView::End::kTail, element);
  entry.SetExpire(0);
  entry.Changed(event);
}

// --- SORT

struct SortOptions {
  bool desc = false;
  bool alpha = false;
  bool dontsort = false;  // a BY pattern without '*' ("BY nosort")
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::optional<std::string_view> by;  // the last BY pattern
  std::vector<std::string_view> gets;
  std::optional<std::string_view> store;
  size_t store_index = 0;
};

// Parses the options after the key as Redis does (the last of a repeated option wins;
// STORE is an option of SORT only). Returns the error to reply, or "" when valid.
std::string_view ParseSortOptions(CmdArgList args, bool read_only, SortOptions* options) {
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t left = args.size() - i - 1;
    std::string_view arg = args[i];
    if (ArgIs(arg, "ASC")) {
      options->desc = false;
    } else if (ArgIs(arg, "DESC")) {
      options->desc = true;
    } else if (ArgIs(arg, "ALPHA")) {
      options->alpha = true;
    } else if (ArgIs(arg, "LIMIT") && left >= 2) {
      std::optional<int64_t> start = ParseInt64(args[i + 1]);
      std::optional<int64_t> count = ParseInt64(args[i + 2]);
      if (!start || !count) return facade::kInvalidIntErr;
      options->limit_start = *start;
      options->limit_count = *count;
      i += 2;
    } else if (!read_only && ArgIs(arg, "STORE") && left >= 1) {
      options->store = args[++i];
      options->store_index = i;
    } else if (ArgIs(arg, "BY") && left >= 1) {
      options->by = args[++i];
      if (options->by->find('*') == std::string_view::npos) options->dontsort = true;
    } else if (ArgIs(arg, "GET") && left >= 1) {
      options->gets.push_back(args[++i]);
    } else {
      return facade::kSyntaxErr;
    }
  }
  return "";
}

// Whether the options read keys named by patterns: a BY pattern with '*' that is used
// (no constant BY came before or after it), or a GET pattern other than "#" with '*'
// (one without names no key and reads as missing).
bool ReadsPatternKeys(const SortOptions& options) {
  if (options.by && !options.dontsort) return true;
  for (std::string_view get : options.gets) {
    if (get != "#" && get.find('*') != std::string_view::npos) return true;
  }
  return false;
}

template <bool kReadOnly>
bool SortNeedsWholeShard(CmdArgList args) {
  SortOptions options;
  return ParseSortOptions(args, kReadOnly, &options).empty() && ReadsPatternKeys(options);
}

// SORT's keys for COMMAND GETKEYS and the router: the key, then the STORE destination
// (Redis's sortGetKeys: it skips LIMIT's two arguments and BY's and GET's one).
void SortKeys(CmdArgList args, absl::FunctionRef<void(size_t, uint32_t)> fn) {
  using namespace facade;
  if (args.size() < 2) return;
  fn(1, kKeyRO | kKeyAccess);
  size_t store = 0;
  for (size_t i = 2; i < args.size(); ++i) {
    if (ArgIs(args[i], "LIMIT")) {
      i += 2;
    } else if (ArgIs(args[i], "GET") || ArgIs(args[i], "BY")) {
      i += 1;
    } else if (ArgIs(args[i], "STORE") && i + 1 < args.size()) {
      store = ++i;
    }
  }
  if (store != 0) fn(store, kKeyOW | kKeyUpdate);
}

void SortRoKeys(CmdArgList args, absl::FunctionRef<void(size_t, uint32_t)> fn) {
  if (args.size() >= 2) fn(1, facade::kKeyRO | facade::kKeyAccess);
}

// The key a pattern names for `element` (its first '*' replaced), and the hash field
// after "->" when the pattern has one after the '*'. nullopt: the pattern names no key.
struct PatternKey {
  std::string key;
  std::optional<std::string> field;
};

std::optional<PatternKey> KeyOfPattern(std::string_view pattern, std::string_view element) {
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  PatternKey result;
  std::string_view rest = pattern.substr(star + 1);
  size_t arrow = rest.find("->");
  if (arrow != std::string_view::npos && arrow + 2 < rest.size()) {
    result.field = std::string(rest.substr(arrow + 2));
    rest = rest.substr(0, arrow);
  }
  result.key.reserve(star + element.size() + rest.size());
  result.key.append(pattern.substr(0, star)).append(element).append(rest);
  return result;
}

// Reads what a pattern key names on this shard: a string's value, or a hash field's;
// nullopt for a missing key, field, or another type (as Redis).
std::optional<std::string> ReadPatternKey(DbIndex db, const PatternKey& target) {
  const PrimeValue* value = Slice().FindRead(db, target.key);
  if (value == nullptr) return std::nullopt;
  if (target.field) {
    if (value->type() != ObjType::kHash) return std::nullopt;
    return HashFieldValue(*value, *target.field);
  }
  if (value->type() != ObjType::kString) return std::nullopt;
  return std::string(value->GetString(&Scratch()));
}

struct SortItem {
  std::string element;
  double score = 0;                  // numeric sort
  std::optional<std::string> by;     // ALPHA with BY: the value sorted by (missing first)
};

// The key's elements, copied: all of them, or when nothing is to be sorted only the
// LIMIT's range, in the list's or sorted set's own order (from the end with DESC).
struct Loaded {
  OpStatus status = OpStatus::kOk;
  std::vector<SortItem> items;
  size_t total = 0;  // the key's element count
};

// The LIMIT window over `total` elements, as Redis clamps it: [start, end], empty when
// end < start.
std::pair<int64_t, int64_t> LimitWindow(const SortOptions& options, int64_t total) {
  int64_t start = std::min(std::max<int64_t>(options.limit_start, 0), total);
  int64_t count = std::min(std::max<int64_t>(options.limit_count, -1), total);
  int64_t end = count < 0 ? total - 1 : start + count - 1;
  if (start >= total) {
    start = total - 1;
    end = total - 2;
  }
  if (end >= total) end = total - 1;
  return {start, end};
}

Loaded LoadElements(DbIndex db, std::string_view key, const SortOptions& options) {
  Loaded loaded;
  const PrimeValue* value = Slice().FindRead(db, key);
  if (value == nullptr) return loaded;
  const ObjType type = value->type();
  if (type != ObjType::kList && type != ObjType::kSet && type != ObjType::kZSet) {
    loaded.status = OpStatus::kWrongType;
    return loaded;
  }
  std::vector<std::string> elements;
  if (options.dontsort && type != ObjType::kSet) {
    // Only the window, in the collection's order.
    loaded.total = type == ObjType::kList ? ListLength(*value) : ZSetLength(*value);
    auto [start, end] = LimitWindow(options, int64_t(loaded.total));
    if (end >= start) {
      if (type == ObjType::kList) {
        ListElements(*value, size_t(start), size_t(end - start + 1), options.desc, &elements);
      } else {
        ZSetMembersByRank(*value, size_t(start), size_t(end - start + 1), options.desc, &elements);
      }
    }
  } else if (type == ObjType::kList) {
    loaded.total = ListLength(*value);
    ListElements(*value, 0, loaded.total, false, &elements);
  } else if (type == ObjType::kSet) {
    SetMembers(*value, &elements);
    loaded.total = elements.size();
  } else {
    loaded.total = ZSetLength(*value);
    ZSetMembersByRank(*value, 0, loaded.total, false, &elements);
  }
  loaded.items.resize(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) loaded.items[i].element = std::move(elements[i]);
  return loaded;
}

// Redis's numeric reading of an element or BY value: strtod over the whole text (a C
// string: it ends at a NUL byte), refusing overflow and NaN.
bool ParseSortScore(const std::string& text, double* score) {
  char* end = nullptr;
  errno = 0;
  *score = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*score);
}

int CompareBytes(std::string_view a, std::string_view b) {
  int cmp = a.compare(b);
  return cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
}

// Sorts as Redis's sortCompare: numbers (ties by element bytes), or ALPHA by element or
// BY value (missing BY values first); DESC reverses the comparison. Stable, so equal
// BY values keep the collection's order, as glibc's merge sort keeps them in Redis.
void SortItems(const SortOptions& options, bool use_by, std::vector<SortItem>* items) {
  auto compare = [&](const SortItem& a, const SortItem& b) {
    int cmp;
    if (!options.alpha) {
      cmp = a.score < b.score ? -1 : a.score > b.score ? 1 : CompareBytes(a.element, b.element);
    } else if (use_by) {
      if (!a.by || !b.by) {
        cmp = a.by.has_value() == b.by.has_value() ? 0 : a.by ? 1 : -1;
      } else {
        cmp = CompareBytes(*a.by, *b.by);
      }
    } else {
      cmp = CompareBytes(a.element, b.element);
    }
    return (options.desc ? -cmp : cmp) < 0;
  };
  std::stable_sort(items->begin(), items->end(), compare);
}

// Runs a hop on the shards the command needs: through CommandTransaction (inline on the
// key's shard when it owns every key) or, with pattern keys, through WholeShardHops.
class SortHops {
 public:
  SortHops(CmdArgList args, ConnectionContext* cntx, bool whole_shard) {
    if (whole_shard) {
      whole_.emplace(cntx);
    } else {
      tx_.emplace(args, cntx);
    }
  }

  // fn(shard) on every shard that may be involved; fn picks its own work by shard id.
  // `last` releases an ordinary transaction's keys (a whole-shard one is released when
  // this object goes).
  void Run(absl::FunctionRef<void(EngineShard*)> fn, bool last) {
    if (whole_) return whole_->Run(fn);
    (*tx_)->Execute([&](Transaction*, EngineShard* shard) { fn(shard); }, last);
  }

 private:
  std::optional<CommandTransaction> tx_;
  std::optional<WholeShardHops> whole_;
};

// Resolves `pattern` for every item in [first, last) with one hop: each shard reads the
// keys it owns. Missing ones stay nullopt; "#" is the element itself.
std::vector<std::optional<std::string>> LookUpPattern(std::string_view pattern,
                                                      const std::vector<SortItem>& items,
                                                      size_t first, size_t last, DbIndex db,
                                                      SortHops* hops) {
  std::vector<std::optional<std::string>> values(last - first);
  if (pattern == "#") {
    for (size_t i = first; i < last; ++i) values[i - first] = items[i].element;
    return values;
  }
  std::vector<std::optional<PatternKey>> keys(last - first);
  std::vector<ShardId> shards(last - first);
  bool any = false;
  for (size_t i = first; i < last; ++i) {
    keys[i - first] = KeyOfPattern(pattern, items[i].element);
    if (keys[i - first]) {
      shards[i - first] = shard_set->ShardOf(keys[i - first]->key);
      any = true;
    }
  }
  if (!any) return values;
  hops->Run(
      [&](EngineShard* shard) {
        for (size_t i = 0; i < keys.size(); ++i) {
          if (keys[i] && shards[i] == shard->shard_id()) values[i] = ReadPatternKey(db, *keys[i]);
        }
      },
      false);
  return values;
}

void Sort(CmdArgList args, ConnectionContext* cntx, bool read_only) {
  ReplyBuilder* rb = cntx->reply_builder();
  SortOptions options;
  if (std::string_view error = ParseSortOptions(args, read_only, &options); !error.empty()) {
    return rb->SendError(error);
  }
  const std::string_view key = args[1];
  const DbIndex db = cntx->db_index;
  const bool whole_shard = ReadsPatternKeys(options);
  SortHops hops(args, cntx, whole_shard);
  const ShardId key_shard = shard_set->ShardOf(key);
  const bool has_store = options.store.has_value();
  const ConnTxState* tx_state = ConnTxState::Find(cntx);
  const bool from_script = tx_state != nullptr && tx_state->in_script;

  Loaded loaded;
  bool is_set = false;
  hops.Run(
      [&](EngineShard* shard) {
        if (shard->shard_id() != key_shard) return;
        const PrimeValue* value = Slice().Find(db, key);
        is_set = value != nullptr && value->type() == ObjType::kSet;
        // A set has no order of its own: stored or scripted results are sorted ALPHA
        // rather than left in the set's (replica-dependent) order.
        if (is_set && options.dontsort && (has_store || from_script)) {
          options.dontsort = false;
          options.alpha = true;
          options.by.reset();
        }
        loaded = LoadElements(db, key, options);
      },
      /*last=*/!has_store);
  // (A transaction left without its last hop is concluded by its destructor.)
  if (loaded.status != OpStatus::kOk) return SendOpError(rb, loaded.status);
  std::vector<SortItem>& items = loaded.items;

  // Window over the loaded items: the loader already cut it when nothing is sorted.
  int64_t start = 0, end = int64_t(items.size()) - 1;
  const bool window_loaded = options.dontsort && !is_set;
  if (!window_loaded) std::tie(start, end) = LimitWindow(options, int64_t(items.size()));

  if (!options.dontsort) {
    const bool use_by = options.by.has_value();
    bool conversion_error = false;
    if (use_by) {
      std::vector<std::optional<std::string>> by_values =
          LookUpPattern(*options.by, items, 0, items.size(), db, &hops);
      for (size_t i = 0; i < items.size(); ++i) {
        if (!by_values[i]) continue;  // sorts as 0, or first with ALPHA
        if (options.alpha) {
          items[i].by = std::move(by_values[i]);
        } else if (!ParseSortScore(*by_values[i], &items[i].score)) {
          conversion_error = true;
        }
      }
    } else if (!options.alpha) {
      for (SortItem& item : items) conversion_error |= !ParseSortScore(item.element, &item.score);
    }
    if (conversion_error) {
      return rb->SendError("ERR One or more scores can't be converted into double");
    }
    SortItems(options, use_by, &items);
  }

  // The output: the elements in the window, or each GET pattern's value for them.
  const size_t first = size_t(start);
  const size_t last = end >= start ? size_t(end) + 1 : first;
  std::vector<std::optional<std::string>> output;
  if (options.gets.empty()) {
    output.reserve(last - first);
    for (size_t i = first; i < last; ++i) output.emplace_back(std::move(items[i].element));
  } else {
    std::vector<std::vector<std::optional<std::string>>> per_get;
    for (std::string_view get : options.gets) {
      per_get.push_back(LookUpPattern(get, items, first, last, db, &hops));
    }
    output.reserve((last - first) * per_get.size());
    for (size_t i = 0; i < last - first; ++i) {
      for (auto& values : per_get) output.push_back(std::move(values[i]));
    }
  }

  if (!has_store) {
    rb->StartArray(output.size());
    for (const std::optional<std::string>& value : output) {
      value ? rb->SendBulk(*value) : rb->SendNull();
    }
    return;
  }
  // STORE: the output as a list (missing GET values as empty strings), replacing the
  // destination; an empty result deletes it.
  const ShardId store_shard = shard_set->ShardOf(*options.store);
  hops.Run(
      [&](EngineShard* shard) {
        if (shard->shard_id() != store_shard) return;
        if (output.empty()) {
          Slice().Erase(db, *options.store);
          return;
        }
        std::vector<std::string> elements;
        elements.reserve(output.size());
        for (std::optional<std::string>& value : output) {
          elements.push_back(value ? std::move(*value) : std::string());
        }
        StoreAsList(db, *options.store, elements, "sortstore");
      },
      true);
  rb->SendLong(int64_t(output.size()));
}

void CmdSort(CmdArgList args, ConnectionContext* cntx) { Sort(args, cntx, false); }
void CmdSortRo(CmdArgList args, ConnectionContext* cntx) { Sort(args, cntx, true); }

}  // namespace

void SortFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  constexpr uint32_t kAclSort = kAclSet | kAclSortedSet | kAclList | kAclSlow | kAclDangerous;
  const KeySpec by_get = UnknownKeys(
      kKeyRO | kKeyAccess,
      "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive "
      "from the content of the key we sort");
  const KeySpec store = UnknownKeys(
      kKeyOW | kKeyUpdate,
      "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear "
      "anywhere in the argument array");
  registry
      ->Add("SORT", -2, kCmdWrite | kCmdDenyOom,
            KeySpecs({Keys(1).WithFlags(kKeyRO | kKeyAccess), by_get, store}, SortKeys),
            kAclWrite | kAclSort, CmdSort)
      .whole_shard_if = SortNeedsWholeShard<false>;
  registry
      ->Add("SORT_RO", -2, kCmdReadOnly,
            KeySpecs({Keys(1).WithFlags(kKeyRO | kKeyAccess), by_get}, SortRoKeys),
            kAclRead | kAclSort, CmdSortRo)
      .whole_shard_if = SortNeedsWholeShard<true>;
}

}  // namespace damselfly
