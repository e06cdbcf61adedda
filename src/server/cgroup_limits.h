// The resources a process may use: its cgroup's limits (a container's --memory and
// --cpus) when there are any. maxmemory defaults to the memory limit, so a server in a
// 256 MiB container refuses writes before the kernel's OOM killer ends it; the default
// thread count follows the CPU limit, so a server in a --cpus=1 container does not run
// one busy thread per host CPU and spend most of each period throttled.
//
// Thread-safety: plain functions of the files they read; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace damselfly {

// The memory limit of the cgroup this process is in (cgroup v2 memory.max, or v1
// memory.limit_in_bytes), or nullopt when it has none. `root` is where cgroupfs is
// mounted and `self_cgroup` the contents of /proc/self/cgroup (parameters for tests).
std::optional<uint64_t> CgroupMemoryLimit(const std::string& root = "/sys/fs/cgroup",
                                          const std::string& self_cgroup_path = "/proc/self/cgroup");

// The CPU bandwidth limit of the cgroup this process is in, in CPUs (quota / period:
// cgroup v2 cpu.max, or v1 cpu.cfs_quota_us and cpu.cfs_period_us), or nullopt when it
// has none. Parameters as CgroupMemoryLimit.
std::optional<double> CgroupCpuLimit(const std::string& root = "/sys/fs/cgroup",
                                     const std::string& self_cgroup_path = "/proc/self/cgroup");

// The threads a server should run by default: one per CPU it may run on
// (`allowed_cpus`, its affinity), but no more than its CPU limit rounded up (a
// --cpus=1.5 container gets 2), and at least one.
unsigned CpusWithinLimit(unsigned allowed_cpus, std::optional<double> cpu_limit);

// Physical memory of the machine.
uint64_t PhysicalMemory();

}  // namespace damselfly
