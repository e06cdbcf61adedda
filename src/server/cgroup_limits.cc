#include "src/server/cgroup_limits.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include "helio/base/strings.h"

namespace damselfly {

namespace {

// v1 reports "no memory limit" as a huge page-rounded number (LONG_MAX rounded down).
constexpr uint64_t kNoLimitAbove = uint64_t{1} << 60;

std::optional<std::string> ReadFirstLine(const std::string& path) {
  std::ifstream file(path);
  std::string text;
  if (!file || !std::getline(file, text)) return std::nullopt;
  return text;
}

std::optional<uint64_t> ReadLimit(const std::string& path) {
  std::optional<std::string> text = ReadFirstLine(path);
  uint64_t limit = 0;
  if (!text || *text == "max" || !helio::SimpleAtoi(*text, &limit) || limit >= kNoLimitAbove) {
    return std::nullopt;
  }
  return limit;
}

// v1 lists a hierarchy's controllers separated by commas ("cpu,cpuacct").
bool HasController(std::string_view controllers, std::string_view name) {
  for (std::string_view controller : helio::SplitAny(controllers, ",")) {
    if (controller == name) return true;
  }
  return false;
}

// The directories that may hold this process's limits for a controller. Lines of
// /proc/self/cgroup are "0::/path" (v2) or "N:memory:/path" (v1). Inside a container
// with its own cgroup namespace the path is "/" and the limit sits at the root of the
// mount; on a host the process's own directory holds it. v1 mounts each hierarchy under
// its controller's name (Debian and systemd add "cpu" as a link to "cpu,cpuacct").
struct CgroupDirs {
  std::vector<std::string> v2;
  std::vector<std::string> v1;
};

CgroupDirs FindDirs(const std::string& root, const std::string& self_cgroup_path,
                    std::string_view v1_controller) {
  CgroupDirs dirs;
  const std::string v1_root = helio::StrCat(root, "/", v1_controller);
  std::ifstream self(self_cgroup_path);
  for (std::string line; std::getline(self, line);) {
    std::vector<std::string_view> fields = helio::SplitAny(line, ":");
    if (line.rfind("0::", 0) == 0) {
      dirs.v2.push_back(root + line.substr(3));
    } else if (fields.size() == 3 && HasController(fields[1], v1_controller)) {
      dirs.v1.push_back(helio::StrCat(v1_root, fields[2]));
    }
  }
  dirs.v2.push_back(root);
  dirs.v1.push_back(v1_root);
  return dirs;
}

template <typename T>
void KeepTightest(std::optional<T> limit, std::optional<T>* tightest) {
  if (limit && (!*tightest || *limit < **tightest)) *tightest = limit;
}

// cgroup v2 cpu.max: "<quota> <period>" in microseconds, or "max <period>".
std::optional<double> ReadCpuMax(const std::string& path) {
  std::optional<std::string> text = ReadFirstLine(path);
  if (!text) return std::nullopt;
  std::vector<std::string_view> fields = helio::SplitAny(*text, " ");
  uint64_t quota = 0, period = 0;
  if (fields.size() != 2 || !helio::SimpleAtoi(fields[0], &quota) ||
      !helio::SimpleAtoi(fields[1], &period) || quota == 0 || period == 0) {
    return std::nullopt;  // "max" (no limit) or unreadable
  }
  return double(quota) / double(period);
}

// cgroup v1: cpu.cfs_quota_us ("-1": no limit) over cpu.cfs_period_us.
std::optional<double> ReadCfsQuota(const std::string& dir) {
  std::optional<uint64_t> quota = ReadLimit(dir + "/cpu.cfs_quota_us");  // "-1" fails to parse
  std::optional<uint64_t> period = ReadLimit(dir + "/cpu.cfs_period_us");
  if (!quota || !period || *quota == 0 || *period == 0) return std::nullopt;
  return double(*quota) / double(*period);
}

}  // namespace

std::optional<uint64_t> CgroupMemoryLimit(const std::string& root, const std::string& self_cgroup_path) {
  // The tightest limit among the process's cgroup and the root applies.
  const CgroupDirs dirs = FindDirs(root, self_cgroup_path, "memory");
  std::optional<uint64_t> tightest;
  for (const std::string& dir : dirs.v2) KeepTightest(ReadLimit(dir + "/memory.max"), &tightest);
  for (const std::string& dir : dirs.v1) KeepTightest(ReadLimit(dir + "/memory.limit_in_bytes"), &tightest);
  return tightest;
}

std::optional<double> CgroupCpuLimit(const std::string& root, const std::string& self_cgroup_path) {
  const CgroupDirs dirs = FindDirs(root, self_cgroup_path, "cpu");
  std::optional<double> tightest;
  for (const std::string& dir : dirs.v2) KeepTightest(ReadCpuMax(dir + "/cpu.max"), &tightest);
  for (const std::string& dir : dirs.v1) KeepTightest(ReadCfsQuota(dir), &tightest);
  return tightest;
}

unsigned CpusWithinLimit(unsigned allowed_cpus, std::optional<double> cpu_limit) {
  unsigned cpus = std::max(1u, allowed_cpus);
  // A hair below an integer still rounds to it: 150000/100000 is exact, but a runtime
  // may write a quota that is not.
  if (cpu_limit) cpus = std::min<unsigned>(cpus, std::max(1.0, std::ceil(*cpu_limit - 1e-6)));
  return cpus;
}

uint64_t PhysicalMemory() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
}

}  // namespace damselfly
