#include "src/server/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace damselfly {

size_t LatencyHistogram::BucketOf(uint64_t ns) {
  if (ns < kExactBelow) return ns;
  ns = std::min(ns, (uint64_t{1} << kMaxBits) - 1);
  // Keep the top kSubBucketBits + 1 bits: (ns >> shift) is in [32, 64).
  const int shift = std::bit_width(ns) - (kSubBucketBits + 1);
  return (size_t(shift) << kSubBucketBits) + (ns >> shift);
}

uint64_t LatencyHistogram::HighestInBucket(size_t bucket) {
  if (bucket < kExactBelow) return bucket;
  const int shift = int(bucket >> kSubBucketBits) - 1;
  const uint64_t top = (bucket & ((size_t{1} << kSubBucketBits) - 1)) + (uint64_t{1} << kSubBucketBits);
  return ((top + 1) << shift) - 1;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
  sum_ns_ += other.sum_ns_;
}

uint64_t LatencyHistogram::CountAtMost(uint64_t ns) const {
  uint64_t count = 0;
  for (size_t i = 0; i < kBuckets && HighestInBucket(i) <= ns; ++i) count += counts_[i];
  return count;
}

std::vector<std::pair<uint64_t, uint64_t>> LatencyHistogram::CumulativeUsec() const {
  // Redis counts the durations up to the end of its bucket of L (1/128 of L wide); ours
  // are 1/32 wide, so the durations below L are the closest whole-bucket count.
  constexpr int kFirstPower = 10, kLastPower = 30;
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t previous = 0;
  for (int power = kFirstPower; power <= kLastPower && previous < total_; ++power) {
    const uint64_t level = uint64_t{1} << power;
    const uint64_t count = power == kLastPower ? total_ : CountAtMost(level - 1);
    if (count > previous) out.emplace_back((level + (level >> 7) - 1) / 1000, count);
    previous = count;
  }
  return out;
}

double LatencyHistogram::PercentileUs(double percentile) const {
  if (total_ == 0) return 0;
  const uint64_t rank = std::max<uint64_t>(1, uint64_t(std::ceil(percentile / 100 * total_)));
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return HighestInBucket(i) / 1000.0;
  }
  return HighestInBucket(kBuckets - 1) / 1000.0;
}

}  // namespace damselfly
