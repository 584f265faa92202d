// The engine seam: what differs between the engines a cluster can stand on. The services hold
// no engine decision; they ask the engine of the cluster (or job) in hand. docs/architecture.md,
// "Adding an engine", says what a new engine implements.
#pragma once
#include <optional>
#include <string_view>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/options.hpp"
#include "cluster_kind.hpp"

namespace batchai::control_plane::detail {
struct ClusterRow;
}
namespace batchai::control_plane::jobs_detail {
struct JobRow;
}

namespace batchai::control_plane {

using detail::ClusterRow;
using jobs_detail::JobRow;

// A cluster being created, as the service resolved it, for the engine to check and describe.
struct NewCluster {
  const ClusterCreateOptions& options;
  const Json& properties;  // the document's `properties` ({} when there is none)
  std::string vm_size;     // upper case, as stored
  int desired_nodes = 0;   // what the scale settings ask for now
};

// What an engine found out before a create made anything (a Slurm partition's nodes), opaque to
// the service, which hands it back to the engine with the new row.
struct EnginePlacement {
  virtual ~EnginePlacement() = default;
};

// A queued job's place in its engine's queue (dashboard).
struct EngineQueuePlace {
  std::optional<std::int64_t> position;  // 1-based where the engine knows one
  std::string reason;
};

// A node as the engine names it, its state in the API's words, and the job it runs (the key of an
// unfinished job, when one holds it).
struct EngineNode {
  std::string name, state;
  std::optional<std::string> job_key;
};

class ClusterEngine {
 public:
  virtual ~ClusterEngine() = default;
  virtual ClusterKind kind() const = 0;
  // The engine's name in documents and the dashboard ("simulated", "slurm").
  virtual std::string_view engine_name() const = 0;

  // ---- clusters ----
  // Whether a create asks for this engine (its own option or property names it).
  virtual bool claims(const ClusterCreateOptions& options, const Json& properties) const = 0;
  // Whether batchai provisions the cluster's nodes: then they take room in the regional vCPU
  // quota and carry the admin account. An engine whose nodes exist already (a Slurm partition's)
  // needs neither: no account is made on them and the quota is the engine's own.
  virtual bool makes_nodes() const = 0;
  // Checks of the request that need nothing looked up (before the create reconciles).
  virtual void check_request(const ClusterCreateOptions& options, const Json& properties) const = 0;
  // Before the create makes anything: asks the engine what it needs and returns what it found
  // (null: nothing), which describe_new and store_placement get back. Throws to refuse the create.
  virtual std::unique_ptr<EnginePlacement> place(const NewCluster& cluster) = 0;
  // Fills the new document's allocation state and node counts; returns whether node work is
  // pending (nodes to allocate).
  virtual bool describe_new(Json& doc, const EnginePlacement* placement, const NewCluster& cluster) = 0;
  // Inside the create's write transaction, the row inserted as `cluster_id`: the engine's own
  // rows of the cluster (its tables in store/) from what place() found.
  virtual void store_placement(std::int64_t cluster_id, const EnginePlacement* placement) = 0;
  // One reconcile step of a cluster with pending node work, at `now_us` (inside a write transaction).
  virtual void step(const ClusterRow& cluster, std::int64_t now_us) = 0;
  // After the step committed: the work that runs outside the store (mounts, setup tasks).
  virtual void start_work(std::int64_t cluster_id) = 0;
  // Node counts, errors and allocation state of the document from what the engine knows.
  virtual void refresh_counts(ClusterRow& cluster) = 0;
  // `cluster node list`.
  virtual Json list_nodes(const ClusterRow& cluster) = 0;
  // The cluster's nodes for the dashboard, at most `limit`, each with its job: from the store
  // only (what the last reconcile saw), inside the caller's read transaction.
  virtual std::vector<EngineNode> nodes_with_jobs(const ClusterRow& cluster, std::size_t limit) const = 0;
  // `cluster node exec` (job: null) and `job node exec` (options.node_id is set and is one of
  // the job's nodes).
  virtual void exec(const ClusterRow& cluster, const NodeExecOptions& options, const JobRow* job) = 0;
  // Refuses an operation the engine does not serve (`what` names it for the message).
  virtual void check_supported(const ClusterRow& cluster, const std::string& what) const = 0;
  // Inside a cluster delete's transaction: stops what runs on its nodes outside any job.
  virtual void remove(const ClusterRow& cluster) = 0;

  // ---- jobs ----
  // Whether the engine runs its own queue (batchai's scheduler leaves its jobs alone).
  virtual bool schedules_itself() const = 0;
  // After the job was stored queued: starts whatever runs or submits it.
  virtual void start_job(const std::string& job_key, const ClusterRow& cluster) = 0;
  // Whether a queued job may start any moment (a terminate then goes through `terminating`).
  virtual bool may_start_any_moment(const JobRow& job) const = 0;
  // Inside a deleting transaction: stops every process of the job, without waiting for a word.
  virtual void stop_job(const JobRow& job) = 0;
  // After `job terminate` stored the job terminating: ends it and records its end, bounded.
  virtual void terminate(const JobRow& job) = 0;
  // `job node list` of a job on `cluster` (null when the cluster is gone).
  virtual Json job_nodes(const JobRow& job, const ClusterRow* cluster) = 0;
  // The job's id in the engine's own queue (none where batchai is the queue).
  virtual std::optional<std::int64_t> engine_job_id(const JobRow& job) const = 0;
  // Where each queued job of `cluster` (an engine that schedules itself) stands and why it waits,
  // one per job, read from the store inside the caller's transaction; one pass over the cluster's
  // queue for all of them (empty where batchai schedules).
  virtual std::vector<EngineQueuePlace> queue_places(const ClusterRow& cluster, const std::vector<JobRow>& jobs) const = 0;

  // ---- reconcile ----
  // Brings the clusters named (row ids of this engine's clusters among others) and their jobs
  // up to date from the engine, bounded; nothing for an empty list.
  virtual void reconcile(const std::vector<std::int64_t>& clusters) = 0;
};

// The engines of one control plane, one per kind, made by the composition root.
class Engines {
 public:
  void add(std::unique_ptr<ClusterEngine> engine);
  ClusterEngine& of(ClusterKind kind) const;
  ClusterEngine& of(const ClusterRow& cluster) const;
  ClusterEngine& of(const JobRow& job) const;
  // The engine a create asks for: the one that claims it, else the simulation.
  ClusterEngine& for_new(const ClusterCreateOptions& options, const Json& properties) const;
  const std::vector<std::unique_ptr<ClusterEngine>>& all() const { return engines_; }

 private:
  std::vector<std::unique_ptr<ClusterEngine>> engines_;
};

}  // namespace batchai::control_plane
