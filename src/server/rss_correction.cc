#include "src/server/rss_correction.h"

#include <algorithm>

namespace damselfly {

uint64_t RssCorrection::Update(uint64_t maxmemory, uint64_t rss, uint64_t used) {
  if (first_rss_ == 0) first_rss_ = rss;
  const bool grew = rss > last_rss_;
  last_rss_ = rss;
  if (maxmemory == 0) return correction_ = 0;

  // `floor`: what RSS holds that is no data; `measured`: the RSS maxmemory bounds.
  const bool whole = bounds_whole_rss(maxmemory);
  const uint64_t floor = whole ? startup_rss_ : 0;
  const uint64_t measured = whole ? rss : rss - std::min(rss, first_rss_);
  uint64_t correction = std::max(correction_, floor);
  peak_used_ = std::max(peak_used_, used);
  if (grew && whole && measured > maxmemory / 2 && peak_used_ > 0) {
    // The share at which the data's RSS fills maxmemory over the floor, at the RSS per
    // byte used seen now (at least 1). The pages of what was evicted or deleted stay in
    // RSS: the bytes they held are the most the data used.
    const uint64_t data_rss = measured - std::min(measured, floor);
    const double rss_per_byte = std::max(1.0, double(data_rss) / double(peak_used_));
    correction = maxmemory - uint64_t(double(maxmemory - floor) / rss_per_byte);
  } else if (grew && !whole && measured > maxmemory) {
    correction += (measured - maxmemory) / 4;
  } else if (measured < maxmemory / 20 * 19) {
    peak_used_ = used;  // RSS gave pages back, or never held many
    const uint64_t over = correction - floor;
    correction -= over / 8 + (over < 8 ? over : 0);
  }
  return correction_ = std::min(correction, maxmemory / 2);
}

}  // namespace damselfly
