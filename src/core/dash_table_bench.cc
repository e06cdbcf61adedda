// Micro-benchmark: DashTable configurations against absl::flat_hash_map on 64-bit keys
// and values. Prints, per table, the time per insert / hit / miss / erase and the bytes
// of table memory per entry at the end of the insert phase.
//
//   build-opt/src/core/dash_table_bench [--entries=N]
//
// Single-threaded and deterministic (fixed seed); run it pinned (taskset) and compare
// the rows of one run with each other, not with other runs.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/core/dash_table.h"

namespace {

using Clock = std::chrono::steady_clock;
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
};

template <typename Table, typename Insert, typename Find, typename Erase, typename Memory>
Row Measure(const std::string& name, const std::vector<uint64_t>& keys,
            const std::vector<uint64_t>& misses, Insert insert, Find find, Erase erase,
            Memory memory_and_load) {
  Table table;
  Row row{name};
  auto t0 = Clock::now();
  for (uint64_t k : keys) insert(table, k);
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

template <typename Params>
Row MeasureDash(const std::string& name, const std::vector<uint64_t>& keys,
                const std::vector<uint64_t>& misses) {
  using Table = DashTable<uint64_t, uint64_t, U64Policy, Params>;
  return Measure<Table>(
      name, keys, misses, [](Table& t, uint64_t k) { t.Insert(k, k); },
      [](Table& t, uint64_t k) { return bool(t.Find(k)); },
      [](Table& t, uint64_t k) { t.Erase(k); },
      [](Table& t) { return std::pair(t.mem_usage(), double(t.size()) / t.slot_capacity()); });
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
  rows.push_back(MeasureDash<DashParams<14, 55, 4>>("dash 14x(55+4) (default)", keys, misses));
  rows.push_back(MeasureDash<DashParams<14, 56, 4>>("dash 14x(56+4)", keys, misses));
  rows.push_back(MeasureDash<DashParams<14, 28, 2>>("dash 14x(28+2)", keys, misses));
  rows.push_back(MeasureDash<DashParams<14, 112, 8>>("dash 14x(112+8)", keys, misses));
  rows.push_back(MeasureDash<DashParams<14, 56, 0>>("dash 14x(56+0) no stash", keys, misses));
  rows.push_back(MeasureDash<DashParams<8, 56, 4>>("dash 8x(56+4)", keys, misses));
  rows.push_back(MeasureDash<DashParams<16, 56, 4>>("dash 16x(56+4)", keys, misses));
  using Flat = absl::flat_hash_map<uint64_t, uint64_t, MixHash>;
  rows.push_back(Measure<Flat>(
      "absl::flat_hash_map", keys, misses, [](Flat& t, uint64_t k) { t.emplace(k, k); },
      [](Flat& t, uint64_t k) { return t.find(k) != t.end(); },
      [](Flat& t, uint64_t k) { t.erase(k); },
      [](Flat& t) {
        return std::pair(t.capacity() * (sizeof(Flat::value_type) + 1), double(t.size()) / t.capacity());
      }));
  std::printf("| table | insert ns | hit ns | miss ns | erase ns | table bytes/entry | load |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |\n", r.name.c_str(), r.insert_ns,
                r.hit_ns, r.miss_ns, r.erase_ns, r.bytes_per_entry, r.load);
  }
  return 0;
}
