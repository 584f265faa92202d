// The slurm_jobs table (store/slurm.hpp).
#include "store/slurm.hpp"

namespace batchai::control_plane::detail {

std::optional<SlurmJobRow> load_slurm_job(Store& store, std::int64_t job_id) {
  auto st = store.prepare(
      "SELECT partition, submitted_us, gpus_per_node, pending_reason, node_list, final_state FROM slurm_jobs "
      "WHERE job_id = ?");
  st.bind(1, job_id);
  if (!st.step()) return std::nullopt;
  SlurmJobRow out;
  out.partition = st.text(0);
  out.submitted_us = st.optional_integer(1);
  if (auto gpus = st.optional_integer(2)) out.gpus_per_node = static_cast<int>(*gpus);
  out.pending_reason = st.text(3);
  out.node_list = st.text(4);
  out.final_state = st.text(5);
  return out;
}

void save_slurm_job(Store& store, std::int64_t job_id, const SlurmJobRow& job) {
  std::optional<std::int64_t> gpus;
  if (job.gpus_per_node) gpus = *job.gpus_per_node;
  store
      .prepare("INSERT OR REPLACE INTO slurm_jobs(job_id, partition, submitted_us, gpus_per_node, pending_reason, "
               "node_list, final_state) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .bind(1, job_id)
      .bind(2, job.partition)
      .bind(3, job.submitted_us)
      .bind(4, gpus)
      .bind(5, job.pending_reason)
      .bind(6, job.node_list)
      .bind(7, job.final_state)
      .run();
}

}  // namespace batchai::control_plane::detail
