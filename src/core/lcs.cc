#include "src/core/lcs.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <new>

namespace damselfly::core {

std::optional<uint64_t> LcsTableBytes(uint64_t a_len, uint64_t b_len) {
  // Lengths are stored in 32-bit cells.
  constexpr uint64_t kMaxLen = std::numeric_limits<uint32_t>::max() - 1;
  if (a_len >= kMaxLen || b_len >= kMaxLen) return std::nullopt;
  const uint64_t cells = (a_len + 1) * (b_len + 1);  // < 2^64: both factors < 2^32
  if (cells > std::numeric_limits<uint64_t>::max() / sizeof(uint32_t)) return std::nullopt;
  return cells * sizeof(uint32_t);
}

std::optional<LcsResult> ComputeLcs(std::string_view a, std::string_view b,
                                    const LcsOptions& options) {
  const size_t rows = a.size() + 1, columns = b.size() + 1;
  std::unique_ptr<uint32_t[]> table(new (std::nothrow) uint32_t[rows * columns]);
  if (!table) return std::nullopt;
  auto cell = [&](size_t i, size_t j) -> uint32_t& { return table[i * columns + j]; };

  std::fill(&cell(0, 0), &cell(0, 0) + columns, 0);
  for (size_t i = 1; i < rows; ++i) {
    cell(i, 0) = 0;
    for (size_t j = 1; j < columns; ++j) {
      cell(i, j) =
          a[i - 1] == b[j - 1] ? cell(i - 1, j - 1) + 1 : std::max(cell(i - 1, j), cell(i, j - 1));
    }
  }

  LcsResult result;
  result.length = cell(a.size(), b.size());
  if (!options.want_subsequence && !options.want_matches) return result;
  if (options.want_subsequence) result.subsequence.resize(result.length);

  // Walk back from the corner. A run of matches stays open while the walk goes
  // diagonally; any other step, or reaching the start of a string, closes it.
  size_t i = a.size(), j = b.size(), remaining = result.length;
  std::optional<LcsMatch> run;
  while (i > 0 && j > 0) {
    bool close = false;
    if (a[i - 1] == b[j - 1]) {
      if (options.want_subsequence) result.subsequence[remaining - 1] = a[i - 1];
      if (!run) {
        run = LcsMatch{uint32_t(i - 1), uint32_t(i - 1), uint32_t(j - 1), uint32_t(j - 1)};
      } else {
        run->a_start = uint32_t(i - 1);
        run->b_start = uint32_t(j - 1);
      }
      close = i == 1 || j == 1;
      --remaining;
      --i;
      --j;
    } else {
      if (cell(i - 1, j) > cell(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      close = run.has_value();
    }
    if (close) {
      if (options.want_matches && run->length() >= options.min_match_len) {
        result.matches.push_back(*run);
      }
      run.reset();
    }
  }
  return result;
}

}  // namespace damselfly::core
