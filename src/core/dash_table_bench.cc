// Micro-benchmark: DashTable configurations against absl::flat_hash_map on 64-bit keys
// and values. Prints, per table, the time per insert / hit / miss / erase and the bytes
// of table memory per entry and the load at the end of the insert phase, and the lowest
// and highest load seen during it (sampled every 65,536 inserts from 100,000 entries on).
// Then, for the server's shape (16-byte keys and values) and absl::flat_hash_map, hits one
// at a time against hits in batches whose memory is prefetched first (as the server's
// LookupPrefetcher does for pipelines and multi-key commands).
//
//   build-opt/src/core/dash_table_bench [--entries=N]
//
// Single-threaded and deterministic (fixed seed); times are the thread's CPU time. Run it
// pinned (taskset) and compare the rows of one run with each other, not with other runs.
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/core/dash_table.h"

namespace {

// The thread's CPU time: on a shared machine the benchmark is often descheduled, and wall
// time then measures the neighbours (runs of the same binary differed by 2x).
struct Clock {
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<Clock, duration>;
  static time_point now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(duration(int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec));
  }
};
using namespace damselfly::core;

struct U64Policy {
  static uint64_t Hash(uint64_t x) {  // a strong 64-bit mix, the same for every table
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
  }
  static bool Equal(uint64_t a, uint64_t b) { return a == b; }
};

struct MixHash {
  size_t operator()(uint64_t x) const { return U64Policy::Hash(x); }
};

double NsPer(Clock::duration d, size_t ops) {
  return std::chrono::duration<double, std::nano>(d).count() / ops;
}

struct Row {
  std::string name;
  double insert_ns, hit_ns, miss_ns, erase_ns, bytes_per_entry, load;
  double min_load = 1, max_load = 0;  // over the fill, sampled from 100,000 entries on
};

template <typename Table, typename Insert, typename Find, typename Erase, typename Memory>
Row Measure(const std::string& name, const std::vector<uint64_t>& keys,
            const std::vector<uint64_t>& misses, Insert insert, Find find, Erase erase,
            Memory memory_and_load) {
  Table table;
  Row row{name};
  auto t0 = Clock::now();
  size_t inserted = 0;
  for (uint64_t k : keys) {
    insert(table, k);
    if (++inserted % 65536 == 0 && inserted >= 100'000) {  // too rare to show in the time
      double load = memory_and_load(table).second;
      row.min_load = std::min(row.min_load, load);
      row.max_load = std::max(row.max_load, load);
    }
  }
  row.insert_ns = NsPer(Clock::now() - t0, keys.size());
  auto [bytes, load] = memory_and_load(table);
  row.bytes_per_entry = double(bytes) / keys.size();
  row.load = load;
  uint64_t found = 0;
  t0 = Clock::now();
  for (uint64_t k : keys) found += find(table, k);
  row.hit_ns = NsPer(Clock::now() - t0, keys.size());
  t0 = Clock::now();
  for (uint64_t k : misses) found += find(table, k);
  row.miss_ns = NsPer(Clock::now() - t0, misses.size());
  t0 = Clock::now();
  for (uint64_t k : keys) erase(table, k);
  row.erase_ns = NsPer(Clock::now() - t0, keys.size());
  if (found != keys.size()) std::fprintf(stderr, "%s: wrong lookups\n", name.c_str());
  return row;
}

// 16-byte keys and values, the shape of the server's table (CompactObj keys and values).
using Pair = std::array<uint64_t, 2>;
struct PairPolicy {
  static uint64_t Hash(const Pair& key) { return U64Policy::Hash(key[0]); }
  static bool Equal(const Pair& a, const Pair& b) { return a == b; }
};

// Entry is uint64_t or Pair; the key's first word is the benchmark's key.
template <typename Params, typename Entry = uint64_t>
Row MeasureDash(const std::string& name, const std::vector<uint64_t>& keys,
                const std::vector<uint64_t>& misses) {
  using Policy = std::conditional_t<std::is_same_v<Entry, Pair>, PairPolicy, U64Policy>;
  using Table = DashTable<Entry, Entry, Policy, Params>;
  auto entry = [](uint64_t k) {
    if constexpr (std::is_same_v<Entry, Pair>) {
      return Pair{k, 0};
    } else {
      return k;
    }
  };
  return Measure<Table>(
      name, keys, misses, [&](Table& t, uint64_t k) { t.Insert(entry(k), entry(k)); },
      [&](Table& t, uint64_t k) { return bool(t.Find(entry(k))); },
      [&](Table& t, uint64_t k) { t.Erase(entry(k)); },
      [](Table& t) { return std::pair(t.mem_usage(), double(t.size()) / t.slot_capacity()); });
}

// Lookups of present keys one at a time against batches of kBatch whose memory is
// prefetched first (the server's LookupPrefetcher: all buckets, then all matching slots,
// then each Find; absl: its prefetch(key)). The table has 16-byte keys and values, the
// server's shape; keys are looked up in a shuffled order.
struct BatchRow {
  std::string name;
  double single_ns, batched_ns;
};
constexpr size_t kBatch = 16;

BatchRow MeasureBatchedDash(const std::vector<uint64_t>& keys, std::vector<uint64_t> order) {
  using Table = DashTable<Pair, Pair, PairPolicy>;
  Table table;
  for (uint64_t k : keys) table.Insert(Pair{k, 0}, Pair{k, 1});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  order.resize(order.size() / kBatch * kBatch);
  uint64_t found = 0;
  auto t0 = Clock::now();
  for (uint64_t k : order) found += table.Find(Pair{k, 0}).value()[1];
  const double single = NsPer(Clock::now() - t0, order.size());
  t0 = Clock::now();
  for (size_t i = 0; i < order.size(); i += kBatch) {
    std::array<uint64_t, kBatch> hashes;
    for (size_t j = 0; j < kBatch; ++j) {
      hashes[j] = PairPolicy::Hash(Pair{order[i + j], 0});
      table.PrefetchBuckets(hashes[j]);
    }
    for (size_t j = 0; j < kBatch; ++j) table.PrefetchSlots(hashes[j]);
    for (size_t j = 0; j < kBatch; ++j) found += table.Find(Pair{order[i + j], 0}, hashes[j]).value()[1];
  }
  const double batched = NsPer(Clock::now() - t0, order.size());
  if (found != 2 * order.size()) std::fprintf(stderr, "dash: wrong lookups\n");
  return {"dash default, 16-byte keys and values", single, batched};
}

BatchRow MeasureBatchedFlat(const std::vector<uint64_t>& keys, std::vector<uint64_t> order) {
  absl::flat_hash_map<uint64_t, uint64_t, MixHash> table;
  for (uint64_t k : keys) table.emplace(k, 1);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  order.resize(order.size() / kBatch * kBatch);
  uint64_t found = 0;
  auto t0 = Clock::now();
  for (uint64_t k : order) found += table.find(k)->second;
  const double single = NsPer(Clock::now() - t0, order.size());
  t0 = Clock::now();
  for (size_t i = 0; i < order.size(); i += kBatch) {
    for (size_t j = 0; j < kBatch; ++j) table.prefetch(order[i + j]);
    for (size_t j = 0; j < kBatch; ++j) found += table.find(order[i + j])->second;
  }
  const double batched = NsPer(Clock::now() - t0, order.size());
  if (found != 2 * order.size()) std::fprintf(stderr, "flat: wrong lookups\n");
  return {"absl::flat_hash_map (prefetch(key))", single, batched};
}

}  // namespace

int main(int argc, char** argv) {
  size_t entries = 5'000'000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--entries=", 10) == 0) entries = std::strtoull(argv[i] + 10, nullptr, 10);
  }
  std::mt19937_64 rng(2026);
  std::vector<uint64_t> keys(entries), misses(entries);
  for (auto& k : keys) k = rng() | 1;        // odd: present
  for (auto& k : misses) k = rng() & ~1ull;  // even: absent
  std::vector<Row> rows;
  rows.push_back(MeasureDash<DashParams<>>("dash 24K blocks, stash 6, max 16 (default)", keys, misses));
  rows.push_back(MeasureDash<DashParams<14, 4, 24 * 1024, 16>>("dash stash 4", keys, misses));
  rows.push_back(MeasureDash<DashParams<14, 8, 24 * 1024, 16>>("dash stash 8", keys, misses));
  rows.push_back(MeasureDash<DashParams<14, 6, 24 * 1024, 12>>("dash max 12 blocks", keys, misses));
  rows.push_back(MeasureDash<DashParams<14, 6, 24 * 1024, 8>>("dash max 8 blocks", keys, misses));
  rows.push_back(MeasureDash<DashParams<14, 6, 12 * 1024, 16>>("dash 12K blocks", keys, misses));
  rows.push_back(MeasureDash<DashParams<16, 6, 24 * 1024, 16>>("dash 16 slots", keys, misses));
  rows.push_back(MeasureDash<DashParams<>, Pair>("dash default, 16-byte keys and values", keys, misses));
  using Flat = absl::flat_hash_map<uint64_t, uint64_t, MixHash>;
  rows.push_back(Measure<Flat>(
      "absl::flat_hash_map", keys, misses, [](Flat& t, uint64_t k) { t.emplace(k, k); },
      [](Flat& t, uint64_t k) { return t.find(k) != t.end(); },
      [](Flat& t, uint64_t k) { t.erase(k); },
      [](Flat& t) {
        return std::pair(t.capacity() * (sizeof(Flat::value_type) + 1), double(t.size()) / t.capacity());
      }));
  std::printf("| table | insert ns | hit ns | miss ns | erase ns | table bytes/entry | load | load min-max over the fill |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f-%.2f |\n", r.name.c_str(),
                r.insert_ns, r.hit_ns, r.miss_ns, r.erase_ns, r.bytes_per_entry, r.load, r.min_load,
                r.max_load);
  }
  std::printf("\n| table | hit ns, one at a time | hit ns, batches of %zu prefetched |\n", kBatch);
  std::printf("|---|---:|---:|\n");
  for (const BatchRow& r : {MeasureBatchedDash(keys, keys), MeasureBatchedFlat(keys, keys)}) {
    std::printf("| %s | %.1f | %.1f |\n", r.name.c_str(), r.single_ns, r.batched_ns);
  }
  return 0;
}
