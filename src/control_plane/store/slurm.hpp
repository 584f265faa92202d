// Slurm's own tables, one store/<table>.cpp each: the back-off after a controller stayed silent,
// shared by every process of the home (slurm_controllers), the Slurm jobs a terminate or delete
// could not cancel while it was (slurm_cancels), and what Slurm said of its clusters and jobs
// (slurm_clusters.cpp: slurm_clusters, slurm_cluster_nodes; slurm_jobs.cpp: slurm_jobs), whose
// rows go with the clusters and jobs rows (engine column 'slurm') they belong to, and containers
// left on a job's nodes (slurm_cleanups.cpp: slurm_cleanups).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "store/store.hpp"

namespace batchai::control_plane::detail {

// slurm_controllers: one row per controller (`controller`: the slurm.conf a process uses, '' for
// the system's) while it is silent.
struct ControllerSilence {
  std::int64_t until_us = 0;  // no process asks it before this time
  Json entry;                 // the errors entry the silence put on its clusters and jobs
};
std::optional<ControllerSilence> controller_silence(Store& store, const std::string& controller);
void record_controller_silence(Store& store, const std::string& controller, const ControllerSilence& silence);
void forget_controller_silence(Store& store, const std::string& controller);

// slurm_cancels: Slurm jobs to cancel once their controller answers, oldest first.
struct QueuedCancel {
  std::int64_t slurm_job_id = 0;
  std::string job_key;  // empty on a cancel queued before job keys were recorded
};
std::vector<QueuedCancel> queued_cancels(Store& store, const std::string& controller);
void queue_cancel(Store& store, const std::string& controller, const QueuedCancel& cancel, std::int64_t since_us);
void forget_cancel(Store& store, const std::string& controller, std::int64_t slurm_job_id);

// slurm_clusters, slurm_cluster_nodes: the partition a Slurm cluster stands on and its nodes as the
// last sinfo saw them, in sinfo's order.
struct SlurmNodeRow {
  std::string name;
  std::string address;      // Slurm's NodeAddr; empty on a node stored before addresses were read
  int gpus = 0;             // GPUs among its generic resources (gres)
  std::string state;        // the API's word: idle, running, preparing, unusable
  std::string slurm_state;  // Slurm's own (sinfo %T)
  bool operator==(const SlurmNodeRow&) const = default;
};
struct SlurmClusterRow {
  std::string partition;
  std::vector<SlurmNodeRow> nodes;
};
// nullopt: not a Slurm cluster (or gone).
std::optional<SlurmClusterRow> load_slurm_cluster(Store& store, std::int64_t cluster_id);
std::optional<std::string> slurm_partition_of(Store& store, std::int64_t cluster_id);
// Its nodes alone, in sinfo's order (none for a cluster that is not Slurm's).
std::vector<SlurmNodeRow> slurm_cluster_nodes(Store& store, std::int64_t cluster_id);
// The cluster's partition and all its nodes, replacing those stored (inside a write transaction).
void save_slurm_cluster(Store& store, std::int64_t cluster_id, const SlurmClusterRow& cluster);

// slurm_jobs: what Slurm said of a job of a Slurm cluster, from its submission on (no row before).
struct SlurmJobRow {
  std::string partition;                     // where it was submitted
  std::optional<std::int64_t> submitted_us;  // when sbatch took it
  std::optional<int> gpus_per_node;          // sbatch --gres=gpu:N
  std::string pending_reason;                // Slurm's last reason while it waited in Slurm's queue
  std::string node_list;                     // Slurm's host list of its allocation, once it had one
  std::string final_state;                   // Slurm's state once the job ended there
};
std::optional<SlurmJobRow> load_slurm_job(Store& store, std::int64_t job_id);
// Inside a write transaction: the row of job `job_id` (of the jobs table) made or replaced.
void save_slurm_job(Store& store, std::int64_t job_id, const SlurmJobRow& job);

// slurm_cleanups: a job's containers to remove through a cleanup job on its nodes (its batch step
// died with them), one row per job key until they are gone or the tries are given up.
struct SlurmCleanupRow {
  std::string job_key;
  std::string partition;
  std::string node_list;                         // Slurm's host list of the job's allocation
  std::optional<std::int64_t> cleanup_job_id;    // while a cleanup job is submitted
  std::int64_t next_try_us = 0;
  int attempts = 0;                              // cleanup jobs submitted so far
  bool operator==(const SlurmCleanupRow&) const = default;
};
// The controller's first row due at `now_us` (next_try_us <= now_us), nullopt when none is.
std::optional<SlurmCleanupRow> due_slurm_cleanup(Store& store, const std::string& controller, std::int64_t now_us);
std::optional<SlurmCleanupRow> load_slurm_cleanup(Store& store, const std::string& job_key);
// Made once per job key (a second call keeps the first row); replaced by save.
void queue_slurm_cleanup(Store& store, const std::string& controller, const SlurmCleanupRow& cleanup);
void save_slurm_cleanup(Store& store, const std::string& controller, const SlurmCleanupRow& cleanup);
void forget_slurm_cleanup(Store& store, const std::string& job_key);

}  // namespace batchai::control_plane::detail
