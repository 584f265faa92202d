// The regional vCPU quota checked against the stored clusters (cluster_quota.hpp).
#include "cluster_quota.hpp"

#include <algorithm>

#include "engine/cluster_kind.hpp"
#include "vm_sizes.hpp"

namespace batchai::control_plane {

void detail::check_vcpu_quota(Store& store, const Backends& backends, std::int64_t cluster_id,
                              const std::string& location, const std::string& vm_size, const std::string& priority,
                              std::int64_t nodes) {
  const bool low = priority == "lowpriority";  // as list-usages tells the two quotas apart
  std::int64_t others = 0, own = 0;
  auto st = store.prepare(
      "SELECT c.id, c.vm_size, c.scale_mode, c.target, c.max_nodes, "
      "(SELECT count(*) FROM nodes n WHERE n.cluster_id = c.id), c.engine FROM clusters c WHERE c.location = ? AND (c.vm_priority = 'lowpriority') = ?");
  st.bind(1, location).bind(2, low ? 1 : 0);
  while (st.step()) {
    if (!backends.of(kind_of_engine_column(st.text(6))).makes_nodes()) continue;
    const std::int64_t room = st.text(2) == "manual" ? st.integer(3) : st.integer(4);
    const std::int64_t vcpus = vm_size_info(st.text(1)).vcpus * std::max<std::int64_t>({st.integer(5), room, 0});
    (st.integer(0) == cluster_id ? own : others) += vcpus;
  }
  const std::int64_t wanted = static_cast<std::int64_t>(vm_size_info(vm_size).vcpus) * nodes;
  check_regional_vcpu_quota(location, low, others + own, wanted - own);
}

void detail::check_vcpu_quota(Store& store, const Backends& backends, std::int64_t cluster_id, std::int64_t nodes) {
  auto st = store.prepare("SELECT location, vm_size, vm_priority, engine FROM clusters WHERE id = ?");
  st.bind(1, cluster_id);
  if (st.step() && backends.of(kind_of_engine_column(st.text(3))).makes_nodes())
    check_vcpu_quota(store, backends, cluster_id, st.text(0), st.text(1), st.text(2), nodes);
}

}  // namespace batchai::control_plane
