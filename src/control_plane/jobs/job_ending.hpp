// Ending the jobs a delete takes away from under them (a cluster, experiment or workspace, or a
// resource group with its workspaces): shared by the services that delete, below all of them.
#pragma once
#include <cstdint>
#include <string>

namespace batchai::control_plane {

class Engines;
class ClusterDocs;
class Context;

class JobEnding {
 public:
  JobEnding(const Context& cx, const Engines& engines, const ClusterDocs& docs)
      : cx_(cx), engines_(engines), docs_(docs) {}

  // A resource a delete takes away from under its jobs.
  enum class Deleted { kCluster, kWorkspace, kExperiment };
  // Inside the deleting transaction: every queued, running or terminating job of the cluster,
  // workspace or experiment row ends (failed; its processes stopped by its engine, its nodes
  // freed). Jobs of a deleted cluster stay, with the error ClusterDeleted "The job's <why> while
  // the job was <state>."; jobs of a deleted experiment or workspace go with it (their
  // bookkeeping folders trashed).
  void end_jobs_under(Deleted kind, std::int64_t row_id, const std::string& why);
  // Inside a deleting transaction: ends the jobs on the workspace's clusters (also jobs of other
  // workspaces that run there) and in its experiments. `with` says what else went, e.g.
  // " with its resource group 'rg'" (or empty).
  void end_jobs_of_workspace(std::int64_t workspace_row_id, const std::string& workspace, const std::string& with);

 private:
  const Context& cx_;
  const Engines& engines_;
  const ClusterDocs& docs_;
};

}  // namespace batchai::control_plane
