// LatencyHistogram: the durations of one command on one thread, for INFO latencystats
// (Redis 7's latency_percentiles_usec_<command> lines) and LATENCY HISTOGRAM.
//
// Buckets are log-linear over nanoseconds, as in HdrHistogram: durations below 64 ns
// each have a bucket of their own, and each power of two above is split into 32 equal
// buckets, so a percentile is reported within 1/32 (3%) of the true duration. Redis
// keeps two significant digits (1%); 3% is finer than the noise of a single command's
// duration. Durations from 2^40 ns (18 minutes) on share the last bucket. Recording is a
// bit_width, a shift and an increment.
//
// Thread-safety: none; each thread records into its own histograms, and INFO merges
// copies of them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace damselfly {

class LatencyHistogram {
 public:
  void Record(uint64_t duration_ns) {
    ++counts_[BucketOf(duration_ns)];
    ++total_;
    sum_ns_ += duration_ns;
  }

  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return total_; }
  uint64_t sum_ns() const { return sum_ns_; }

  // How many recorded durations are at most `ns`, counting whole buckets: the bucket
  // that straddles `ns` (at most 1/32 of it wide) counts as above it. For Prometheus's
  // cumulative `le` buckets.
  uint64_t CountAtMost(uint64_t ns) const;

  // LATENCY HISTOGRAM's cumulative distribution, as Redis 7 reports its HdrHistogram
  // (2 significant digits, durations clamped to 1 s) iterated in powers of two from
  // 1024 ns: for each power L = 2^10 .. 2^30, (label, count) where the label is the
  // highest duration in microseconds Redis's bucket of L holds (L + L/128 - 1 ns, so
  // 1, 2, 4, 8, 16, 33, 66, ...) and count the durations below L (all of them at 2^30);
  // only the powers where the count grows, up to the one that counts them all.
  std::vector<std::pair<uint64_t, uint64_t>> CumulativeUsec() const;

  // The duration, in microseconds, that `percentile` percent (0 < percentile <= 100) of
  // the recorded ones do not exceed: the highest duration of the bucket that holds that
  // rank, as HdrHistogram reports it. 0 when nothing was recorded.
  double PercentileUs(double percentile) const;

 private:
  static constexpr int kSubBucketBits = 5;  // 32 buckets per power of two
  static constexpr uint64_t kExactBelow = uint64_t{2} << kSubBucketBits;  // 64 ns
  static constexpr int kMaxBits = 40;
  // 64 exact buckets, then 32 for each power of two from 2^6 to 2^39.
  static constexpr size_t kBuckets = (kMaxBits - kSubBucketBits + 1) << kSubBucketBits;

  static size_t BucketOf(uint64_t ns);
  static uint64_t HighestInBucket(size_t bucket);

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t total_ = 0;
  uint64_t sum_ns_ = 0;
};

}  // namespace damselfly
