// Batch AI jobs over the control plane: create/show/list/delete/terminate, job files and nodes,
// the scheduler (run by every reconcile: gang scheduling by priority then age, auto-scale demand,
// dead-supervisor detection) and the body of the detached per-job supervisor process.
// The runtime (launch plans, supervise_job) does the running; this is the store-side glue.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class Context;
class Reconciler;
class Engines;
class ClusterDocs;
class Scheduler;

// Names one job: its workspace, experiment and name.
// A job key as job create makes them (a lower-case version-4 UUID): the only text that may
// name a job's folder under $BATCHAI_HOME/jobs.
inline bool is_job_key(const std::string& text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f'))) return false;
  }
  return true;
}

struct JobRef {
  WorkspaceRef where;
  std::string experiment;
  std::string name;
};

// Owned by the ControlPlane (ControlPlane::jobs()): made with it, so the scheduler runs on every
// reconcile and every delete ends the jobs under it, whichever command runs.
class Jobs {
 public:
  Jobs(const Context& cx, Reconciler& reconciler, const Engines& engines, const ClusterDocs& docs, Scheduler& scheduler)
      : cx_(cx), reconciler_(reconciler), engines_(engines), docs_(docs), scheduler_(scheduler) {}

  // docs/behaviour.md §4.4; the job is stored queued and its supervisor process started.
  Json create(const JobCreateOptions& options);
  Json show(const JobRef& job);
  // With `fields` (top-level keys), each document holds only those keys, read by SQLite's JSON
  // functions without parsing whole documents: what a table of 10,000 jobs needs.
  Json list(const WorkspaceRef& where, const std::string& experiment, const std::vector<std::string>& fields = {});
  // One page of list() (list_page.hpp), keyed by the job row id.
  Page list_page(const WorkspaceRef& where, const std::string& experiment, const PageRequest& page);
  // The same page (same reconcile, rows and next) with each document's stored text unparsed.
  TextPage list_page_text(const WorkspaceRef& where, const std::string& experiment, const PageRequest& page);
  // Terminates (if running) then removes the job and its bookkeeping folder.
  void remove(const JobRef& job);
  // queued -> failed; running -> terminating -> failed; finished: no change.
  void terminate(const JobRef& job);

  // `job file list`: immediate children of {output dir}/{path}, name order (docs/output.md §2.2.6).
  Json file_list(const JobRef& job, const std::string& directory_id, const std::string& path, int expiry_minutes);
  // The folder `job file list/stream` reads, opened as a confined root (nothing the job planted
  // in it leads out); nullopt while the job has not produced it yet.
  std::optional<ConfinedDir> output_folder(const JobRef& job, const std::string& directory_id, const std::string& path);
  Json node_list(const JobRef& job);
  void node_exec(const JobRef& job, const NodeExecOptions& options);

 private:
  // queued -> failed; running -> terminating, then waits for the supervisor to record failed
  // (ends the job's processes itself after 10 s). No reconcile: the entry points do that.
  void end(const JobRef& job);

  const Context& cx_;
  Reconciler& reconciler_;
  const Engines& engines_;
  const ClusterDocs& docs_;
  Scheduler& scheduler_;
};

}  // namespace batchai::control_plane
