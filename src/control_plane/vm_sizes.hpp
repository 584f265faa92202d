// The VM size table (vCPUs, GPUs, usage family) and the vCPU quotas list-usages reports.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace batchai::control_plane {

struct VmSize {
  std::string name;    // canonical spelling, e.g. "Standard_NC6"
  std::string family;  // usage family, e.g. "NC" ("Standard NC Family")
  int vcpus = 1;
  int gpus = 0;
};
// Case-insensitive lookup; unknown sizes get 1 vCPU and a family derived from the name.
VmSize vm_size_info(const std::string& vm_size);
// Every family of the table, in a stable order (for list-usages).
const std::vector<std::string>& vm_families();

// The vCPU quotas list-usages reports. The regional ones ("Total Cluster Dedicated Regional
// vCPUs", and the same for low priority) are enforced wherever a node count enters: cluster
// create, resize and auto-scale. The per-family ones are reported only.
inline constexpr int kRegionalVcpuQuota = 100;
inline constexpr int kFamilyVcpuQuota = 24;

// Throws Conflict (code "OperationNotAllowed", Azure's quota wording) when `requested` more vCPUs
// on top of `in_use` would pass kRegionalVcpuQuota in `location`.
void check_regional_vcpu_quota(const std::string& location, bool low_priority, std::int64_t in_use,
                               std::int64_t requested);
// The most nodes of `vm_size` a cluster can ever have under the regional quota.
std::int64_t max_nodes_within_quota(const std::string& vm_size);

}  // namespace batchai::control_plane
