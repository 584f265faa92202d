#include "job_ending.hpp"

#include <algorithm>

#include "cluster_docs.hpp"
#include "context.hpp"
#include "engine/cluster_engine.hpp"
#include "job_processes.hpp"
#include "store/jobs.hpp"

namespace batchai::control_plane {

using namespace detail;
using namespace jobs_detail;

void JobEnding::end_jobs_under(Deleted kind, std::int64_t row_id, const std::string& why) {
  Store& store = cx_.store();
  std::vector<JobRow> affected = jobs_under(store,
                                            kind == Deleted::kCluster      ? JobParent::kCluster
                                            : kind == Deleted::kExperiment ? JobParent::kExperiment
                                                                           : JobParent::kWorkspace,
                                            row_id);
  const std::int64_t now = cx_.now_us();
  std::vector<std::int64_t> touched;
  for (auto& job : affected) {
    if (is_unfinished(job.state)) {
      engines_.of(job).stop_job(job);
      for (auto cluster : release_nodes(store, job.key)) touched.push_back(cluster);
      // Recorded even where the row goes with its experiment: a supervisor that outlived
      // SIGKILL's delivery (it cannot) would find the job ended, not running.
      finish_job(job, false, std::nullopt,
                 job_error(kind == Deleted::kCluster ? "ClusterDeleted" : "JobDeleted",
                           "The job's " + why + " while the job was " + std::string(to_string(job.state)) + "."),
                 now);
      save_job(store, job);
    }
    if (kind != Deleted::kCluster) {
      trash(store, state_dir(cx_.layout(), job.key));
      trash(store, cx_.layout().job_exchange(job.key));  // a Slurm job's, on the shared folder
    }
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (auto cluster : touched)
    if (kind != Deleted::kCluster || cluster != row_id) docs_.refresh(cluster);
}

void JobEnding::end_jobs_of_workspace(std::int64_t workspace_row_id, const std::string& workspace,
                                      const std::string& with) {
  const std::vector<std::pair<std::int64_t, std::string>> clusters = cluster_names_in(cx_.store(), workspace_row_id);
  const std::string workspace_with = with.empty() ? " with its workspace '" + workspace + "'" : with;
  for (const auto& [id, name] : clusters)
    end_jobs_under(Deleted::kCluster, id, "cluster '" + name + "' was deleted" + workspace_with);
  end_jobs_under(Deleted::kWorkspace, workspace_row_id, "workspace '" + workspace + "' was deleted" + with);
}

}  // namespace batchai::control_plane
