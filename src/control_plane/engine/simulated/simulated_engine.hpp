// The simulation: a cluster's nodes are folders on this machine (node_steps.hpp), its jobs are
// placed by batchai's scheduler and run by a detached supervisor per job (jobs/supervisor.hpp).
#pragma once
#include "cluster_docs.hpp"
#include "context.hpp"
#include "engine/cluster_engine.hpp"

namespace batchai::control_plane::simulated {

class SimulatedEngine final : public ClusterEngine {
 public:
  SimulatedEngine(const Context& cx, const ClusterDocs& docs) : cx_(cx), docs_(docs) {}

  ClusterKind kind() const override { return ClusterKind::kSimulated; }
  std::string_view engine_name() const override { return "simulated"; }
  bool claims(const ClusterCreateOptions&, const Json&) const override { return true; }
  bool makes_nodes() const override { return true; }
  void check_request(const ClusterCreateOptions&, const Json&) const override {}
  std::unique_ptr<EnginePlacement> place(const NewCluster&) override { return nullptr; }
  bool describe_new(Json& doc, const EnginePlacement* placement, const NewCluster& cluster) override;
  void store_placement(std::int64_t, const EnginePlacement*) override {}  // its nodes come with time
  void step(const ClusterRow& cluster, std::int64_t now_us) override;
  void start_work(std::int64_t cluster_id) override;
  void refresh_counts(ClusterRow& cluster) override;
  Json list_nodes(const ClusterRow& cluster) override;
  std::vector<EngineNode> nodes_with_jobs(const ClusterRow& cluster, std::size_t limit) const override;
  void exec(const ClusterRow& cluster, const NodeExecOptions& options, const JobRow* job) override;
  void check_supported(const ClusterRow&, const std::string&) const override {}
  void remove(const ClusterRow& cluster) override;

  bool schedules_itself() const override { return false; }
  void start_job(const std::string& job_key, const ClusterRow& cluster) override;
  bool may_start_any_moment(const JobRow&) const override { return false; }
  void stop_job(const JobRow& job) override;
  void terminate(const JobRow& job) override;
  Json job_nodes(const JobRow& job, const ClusterRow* cluster) override;
  std::optional<std::int64_t> engine_job_id(const JobRow&) const override { return std::nullopt; }
  std::vector<EngineQueuePlace> queue_places(const ClusterRow&, const std::vector<JobRow>&) const override { return {}; }

  void reconcile(const std::vector<std::int64_t>&) override {}  // the node steps need no engine

 private:
  const Context& cx_;
  const ClusterDocs& docs_;
};

}  // namespace batchai::control_plane::simulated
