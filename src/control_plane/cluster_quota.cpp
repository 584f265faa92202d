// The regional vCPU quota checked against the stored clusters (cluster_quota.hpp).
#include "cluster_quota.hpp"

#include <algorithm>

#include "engine/cluster_kind.hpp"
#include "store/clusters.hpp"
#include "vm_sizes.hpp"

namespace batchai::control_plane {

void detail::check_vcpu_quota(Store& store, const Engines& engines, std::int64_t cluster_id,
                              const std::string& location, const std::string& vm_size, const std::string& priority,
                              std::int64_t nodes) {
  const bool low = priority == "lowpriority";  // as list-usages tells the two quotas apart
  std::int64_t others = 0, own = 0;
  for (const QuotaCluster& c : quota_clusters(store, location, low)) {
    if (!engines.of(c.engine).makes_nodes()) continue;
    const std::int64_t room = c.scale_mode == "manual" ? c.target : c.max_nodes;
    const std::int64_t vcpus = vm_size_info(c.vm_size).vcpus * std::max<std::int64_t>({c.nodes, room, 0});
    (c.id == cluster_id ? own : others) += vcpus;
  }
  const std::int64_t wanted = static_cast<std::int64_t>(vm_size_info(vm_size).vcpus) * nodes;
  check_regional_vcpu_quota(location, low, others + own, wanted - own);
}

void detail::check_vcpu_quota(Store& store, const Engines& engines, std::int64_t cluster_id, std::int64_t nodes) {
  const auto size = cluster_size(store, cluster_id);
  if (size && engines.of(size->engine).makes_nodes())
    check_vcpu_quota(store, engines, cluster_id, size->location, size->vm_size, size->vm_priority, nodes);
}

}  // namespace batchai::control_plane
