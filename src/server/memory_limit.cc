#include "src/server/memory_limit.h"

#include <unistd.h>

#include <fstream>
#include <vector>

#include "helio/base/strings.h"

namespace damselfly {

namespace {

// v1 reports "no limit" as a huge page-rounded number (LONG_MAX rounded down).
constexpr uint64_t kNoLimitAbove = uint64_t{1} << 60;

std::optional<uint64_t> ReadLimit(const std::string& path) {
  std::ifstream file(path);
  std::string text;
  if (!file || !std::getline(file, text)) return std::nullopt;
  uint64_t limit = 0;
  if (text == "max" || !helio::SimpleAtoi(text, &limit) || limit >= kNoLimitAbove) return std::nullopt;
  return limit;
}

// v1 lists a hierarchy's controllers separated by commas ("cpu,memory").
bool IsMemoryController(std::string_view controllers) {
  for (std::string_view name : helio::SplitAny(controllers, ",")) {
    if (name == "memory") return true;
  }
  return false;
}

}  // namespace

std::optional<uint64_t> CgroupMemoryLimit(const std::string& root, const std::string& self_cgroup_path) {
  // Lines of /proc/self/cgroup: "0::/path" (v2) or "N:memory:/path" (v1). Inside a
  // container with its own cgroup namespace the path is "/" and the limit sits at the
  // root of the mount; on a host the process's own directory holds it. The tightest
  // limit on the way from the process's cgroup to the root applies.
  std::vector<std::string> candidates;
  std::ifstream self(self_cgroup_path);
  for (std::string line; std::getline(self, line);) {
    std::vector<std::string_view> fields = helio::SplitAny(line, ":");
    if (line.rfind("0::", 0) == 0) {
      candidates.push_back(root + line.substr(3) + "/memory.max");
    } else if (fields.size() == 3 && IsMemoryController(fields[1])) {
      candidates.push_back(helio::StrCat(root, "/memory", fields[2], "/memory.limit_in_bytes"));
    }
  }
  candidates.push_back(root + "/memory.max");
  candidates.push_back(root + "/memory/memory.limit_in_bytes");
  std::optional<uint64_t> tightest;
  for (const std::string& path : candidates) {
    std::optional<uint64_t> limit = ReadLimit(path);
    if (limit && (!tightest || *limit < *tightest)) tightest = limit;
  }
  return tightest;
}

uint64_t PhysicalMemory() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
}

}  // namespace damselfly
