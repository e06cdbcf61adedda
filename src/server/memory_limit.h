// The memory a process may use: its cgroup's limit (a container's --memory) when there is
// one, else the machine's physical memory. maxmemory defaults to it, so a server in a
// 256 MiB container refuses writes before the kernel's OOM killer ends it.
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

// Physical memory of the machine.
uint64_t PhysicalMemory();

}  // namespace damselfly
