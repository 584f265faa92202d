// Clusters on a Slurm partition (docs/slurm.md): the partition's nodes are the cluster's, Slurm
// schedules and runs the jobs (sbatch; `batchai _slurm-run` in the allocation), and the commands
// that touch such a cluster read its state from Slurm within a short budget (slurm_reconcile.hpp).
#pragma once
#include "cluster_docs.hpp"
#include "engine/cluster_engine.hpp"
#include "slurm_env.hpp"

namespace batchai::control_plane::detail {

class SlurmEngine final : public ClusterEngine {
 public:
  SlurmEngine(const Context& cx, std::optional<std::filesystem::path> slurm_conf) : env_(cx, std::move(slurm_conf)) {}

  ClusterKind kind() const override { return ClusterKind::kSlurm; }
  std::string_view engine_name() const override { return "slurm"; }
  bool claims(const ClusterCreateOptions& options, const Json& properties) const override;
  bool makes_nodes() const override { return false; }  // the partition's nodes are there already
  void check_request(const ClusterCreateOptions& options, const Json& properties) const override;
  std::unique_ptr<EnginePlacement> place(const NewCluster& cluster) override;
  bool describe_new(Json& doc, const EnginePlacement* placement, const NewCluster& cluster) override;
  void store_placement(std::int64_t cluster_id, const EnginePlacement* placement) override;
  void step(const ClusterRow& cluster, std::int64_t now_us) override;
  void start_work(std::int64_t) override {}
  void refresh_counts(ClusterRow&) override {}  // sinfo's, at reconcile (refresh_slurm_clusters)
  Json list_nodes(const ClusterRow& cluster) override;
  std::vector<EngineNode> nodes_with_jobs(const ClusterRow& cluster, std::size_t limit) const override;
  void exec(const ClusterRow& cluster, const NodeExecOptions& options, const JobRow* job) override;
  void check_supported(const ClusterRow& cluster, const std::string& what) const override;
  void remove(const ClusterRow&) override {}  // its jobs are cancelled as they end

  bool schedules_itself() const override { return true; }
  void start_job(const std::string& job_key, const ClusterRow& cluster) override;
  bool may_start_any_moment(const JobRow& job) const override;
  void stop_job(const JobRow& job) override;
  void terminate(const JobRow& job) override;
  Json job_nodes(const JobRow& job, const ClusterRow* cluster) override;
  std::optional<std::int64_t> engine_job_id(const JobRow& job) const override;
  std::vector<EngineQueuePlace> queue_places(const ClusterRow& cluster, const std::vector<JobRow>& jobs) const override;

  void reconcile(const std::vector<std::int64_t>& clusters) override;

  const SlurmEnv& env() const { return env_; }

 private:
  SlurmEnv env_;
};

}  // namespace batchai::control_plane::detail
