// The slurm_cleanups table (store/slurm.hpp).
#include "store/slurm.hpp"

namespace batchai::control_plane::detail {

namespace {

constexpr const char* kColumns = "job_key, partition, node_list, cleanup_job_id, next_try_us, attempts";

SlurmCleanupRow cleanup_from(Statement& st) {
  SlurmCleanupRow out;
  out.job_key = st.text(0);
  out.partition = st.text(1);
  out.node_list = st.text(2);
  out.cleanup_job_id = st.optional_integer(3);
  out.next_try_us = st.integer(4);
  out.attempts = static_cast<int>(st.integer(5));
  return out;
}

void insert(Store& store, const char* verb, const std::string& controller, const SlurmCleanupRow& c) {
  store
      .prepare(std::string(verb) + " INTO slurm_cleanups(controller, " + kColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?)")
      .bind(1, controller)
      .bind(2, c.job_key)
      .bind(3, c.partition)
      .bind(4, c.node_list)
      .bind(5, c.cleanup_job_id)
      .bind(6, c.next_try_us)
      .bind(7, static_cast<std::int64_t>(c.attempts))
      .run();
}

}  // namespace

std::optional<SlurmCleanupRow> due_slurm_cleanup(Store& store, const std::string& controller, std::int64_t now_us) {
  auto st = store.prepare(std::string("SELECT ") + kColumns +
                          " FROM slurm_cleanups WHERE controller = ? AND next_try_us <= ?"
                          " ORDER BY next_try_us LIMIT 1");
  st.bind(1, controller).bind(2, now_us);
  if (!st.step()) return std::nullopt;
  return cleanup_from(st);
}

std::optional<SlurmCleanupRow> load_slurm_cleanup(Store& store, const std::string& job_key) {
  auto st = store.prepare(std::string("SELECT ") + kColumns + " FROM slurm_cleanups WHERE job_key = ?");
  st.bind(1, job_key);
  if (!st.step()) return std::nullopt;
  return cleanup_from(st);
}

void queue_slurm_cleanup(Store& store, const std::string& controller, const SlurmCleanupRow& cleanup) {
  insert(store, "INSERT OR IGNORE", controller, cleanup);
}

void save_slurm_cleanup(Store& store, const std::string& controller, const SlurmCleanupRow& cleanup) {
  insert(store, "INSERT OR REPLACE", controller, cleanup);
}

void forget_slurm_cleanup(Store& store, const std::string& job_key) {
  store.prepare("DELETE FROM slurm_cleanups WHERE job_key = ?").bind(1, job_key).run();
}

}  // namespace batchai::control_plane::detail
