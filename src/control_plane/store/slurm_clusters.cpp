// The slurm_clusters and slurm_cluster_nodes tables (store/slurm.hpp).
#include "store/slurm.hpp"

namespace batchai::control_plane::detail {

std::optional<std::string> slurm_partition_of(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare("SELECT partition FROM slurm_clusters WHERE cluster_id = ?");
  st.bind(1, cluster_id);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

std::vector<SlurmNodeRow> slurm_cluster_nodes(Store& store, std::int64_t cluster_id) {
  auto st = store.prepare(
      "SELECT name, address, gpus, state, slurm_state FROM slurm_cluster_nodes WHERE cluster_id = ? ORDER BY ordinal");
  st.bind(1, cluster_id);
  std::vector<SlurmNodeRow> out;
  while (st.step()) out.push_back({st.text(0), st.text(1), static_cast<int>(st.integer(2)), st.text(3), st.text(4)});
  return out;
}

std::optional<SlurmClusterRow> load_slurm_cluster(Store& store, std::int64_t cluster_id) {
  auto partition = slurm_partition_of(store, cluster_id);
  if (!partition) return std::nullopt;
  return SlurmClusterRow{std::move(*partition), slurm_cluster_nodes(store, cluster_id)};
}

void save_slurm_cluster(Store& store, std::int64_t cluster_id, const SlurmClusterRow& cluster) {
  store.write([&] {
    store
        .prepare("INSERT INTO slurm_clusters(cluster_id, partition) VALUES (?, ?) "
                 "ON CONFLICT(cluster_id) DO UPDATE SET partition = excluded.partition")
        .bind(1, cluster_id)
        .bind(2, cluster.partition)
        .run();
    store.prepare("DELETE FROM slurm_cluster_nodes WHERE cluster_id = ?").bind(1, cluster_id).run();
    std::int64_t ordinal = 0;
    for (const SlurmNodeRow& n : cluster.nodes)
      // A name twice in one answer is Slurm's mistake: its first line counts.
      store
          .prepare("INSERT OR IGNORE INTO slurm_cluster_nodes(cluster_id, name, ordinal, address, gpus, state, "
                   "slurm_state) VALUES (?, ?, ?, ?, ?, ?, ?)")
          .bind(1, cluster_id)
          .bind(2, n.name)
          .bind(3, ordinal++)
          .bind(4, n.address)
          .bind(5, n.gpus)
          .bind(6, n.state)
          .bind(7, n.slurm_state)
          .run();
  });
}

}  // namespace batchai::control_plane::detail
