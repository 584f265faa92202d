// The slurm_cancels table (store/slurm.hpp).
#include "store/slurm.hpp"

namespace batchai::control_plane::detail {

std::vector<QueuedCancel> queued_cancels(Store& store, const std::string& controller) {
  auto st = store.prepare(
      "SELECT slurm_job_id, coalesce(job_key, '') FROM slurm_cancels WHERE controller = ? ORDER BY since_us");
  st.bind(1, controller);
  std::vector<QueuedCancel> out;
  while (st.step()) out.push_back({st.integer(0), st.text(1)});
  return out;
}

void queue_cancel(Store& store, const std::string& controller, const QueuedCancel& cancel, std::int64_t since_us) {
  store.prepare("INSERT OR IGNORE INTO slurm_cancels(controller, slurm_job_id, since_us, job_key) VALUES (?, ?, ?, ?)")
      .bind(1, controller)
      .bind(2, cancel.slurm_job_id)
      .bind(3, since_us)
      .bind(4, cancel.job_key)
      .run();
}

void forget_cancel(Store& store, const std::string& controller, std::int64_t slurm_job_id) {
  store.prepare("DELETE FROM slurm_cancels WHERE controller = ? AND slurm_job_id = ?")
      .bind(1, controller)
      .bind(2, slurm_job_id)
      .run();
}

}  // namespace batchai::control_plane::detail
