#include "slurm_runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <set>
#include <thread>

#include "node_folders.hpp"
#include "node_mounts.hpp"
#include "batchai/slurm/parsers.hpp"
#include "batchai/slurm/srun_step.hpp"
#include "jobs/job_run.hpp"
#include "run_claim.hpp"
#include "slurm_jobs.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

using namespace detail;

namespace {

// The submitting command stores the Slurm job id when its transaction commits, which may come
// after Slurm has started the batch script.
constexpr auto kJobIdWait = std::chrono::seconds(30);

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// A node name as it may become a folder name and an srun --nodelist: Slurm's host names.
void check_node_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64 && name[0] != '-' && name[0] != '.';
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
      ok = false;
  if (!ok) throw SystemError("Slurm allocated a node named '" + name.substr(0, 64) + "', which batchai cannot use as a folder name.");
}

// Variables Slurm gives each node or task its own value of: a task that runs on this node gets
// this node's; one started by srun (or by mpirun's daemons) gets its own node's from Slurm.
bool per_node_variable(const std::string& name) {
  static const std::set<std::string> names = {"SLURMD_NODENAME",     "SLURM_NODEID",   "SLURM_PROCID",
                                              "SLURM_LOCALID",       "SLURM_GTIDS",    "SLURM_CPUS_ON_NODE",
                                              "SLURM_TOPOLOGY_ADDR", "SLURM_TASK_PID", "SLURM_TOPOLOGY_ADDR_PATTERN",
                                              "CUDA_VISIBLE_DEVICES"};  // the node's GPUs of the allocation
  return names.count(name) > 0;
}

// The allocation's own variables (SLURM_JOB_ID, SLURM_JOB_NODELIST, ...): tasks see them, so a
// command line may run `srun` itself, and mpirun finds the allocation it runs in. `per_node`
// selects this node's own variables, or else the allocation-wide ones.
std::map<std::string, std::string> allocation_environment(bool per_node) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos || entry.size() > 64 * 1024) continue;
    const std::string name = entry.substr(0, eq);
    if (name.rfind("SLURM_", 0) != 0 && name != "SLURMD_NODENAME" && name != "CUDA_VISIBLE_DEVICES") continue;
    if (per_node_variable(name) == per_node) env[name] = entry.substr(eq + 1);
  }
  return env;
}

void wrap_in_srun(runtime::TaskPlan& task, const std::string& node) {
  auto& p = task.process;
  if (p.argv.empty() || p.argv[0].empty() || p.argv[0][0] == '-')
    throw InvalidArgument("A task of the job has no program to run on node " + node + ".");
  // One task on exactly that node, sharing the allocation with the job's other steps; the task's
  // environment is srun's own (--export=ALL), which is the task's complete environment.
  slurm::SrunStep step;
  step.node = node;
  step.overlap = true;
  step.kill_on_bad_exit = true;
  step.cwd = p.cwd;
  step.command = p.argv;
  p.argv = slurm::srun_argv(step);
}

// Waits until the job's row carries this allocation's Slurm id. nullopt: nothing to run (the job
// was deleted or has ended meanwhile).
std::optional<JobRow> wait_for_own_row(Store& store, const std::string& job_key, slurm::JobId own) {
  const auto deadline = std::chrono::steady_clock::now() + kJobIdWait;
  for (;;) {
    auto job = store.read([&] { return load_job_by_key(store, job_key); });
    if (!job || job->state == JobState::kSucceeded || job->state == JobState::kFailed) return std::nullopt;
    const auto id = slurm_job_id(*job);
    if (id && *id == own) return job;
    if (id)
      throw InvalidArgument("Slurm job " + std::to_string(own) + " is not the allocation of job '" + job->name +
                            "' (it was submitted as Slurm job " + std::to_string(*id) + ").");
    if (std::chrono::steady_clock::now() >= deadline)
      throw SystemError("Job '" + job->name + "' never recorded its Slurm job id " + std::to_string(own) + ".");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Records the runner's word on the job's end, for finish_from_slurm.
void record_outcome(Store& store, const std::string& job_key, const runtime::JobOutcome& outcome) {
  store.write([&] {
    auto j = load_job_by_key(store, job_key);
    if (!j) return;
    j->private_data["slurm"]["outcome"] = {{"succeeded", outcome.succeeded},
                                           {"exitCode", outcome.exit_code ? Json(*outcome.exit_code) : Json()},
                                           {"errors", outcome.errors}};
    save_job(store, *j);
  });
}

int exit_status(const runtime::JobOutcome& outcome) {
  if (outcome.succeeded) return 0;
  const int code = outcome.exit_code.value_or(1);
  return code >= 1 && code <= 255 ? code : 1;
}

// The allocation this batch script runs in, from Slurm's variables.
struct Allocation {
  std::string sid;        // SLURM_JOB_ID
  std::string node_list;  // SLURM_JOB_NODELIST
  std::string here;       // SLURMD_NODENAME: the batch host
};

Allocation allocation_from_environment() {
  Allocation a{env_text("SLURM_JOB_ID"), env_text("SLURM_JOB_NODELIST"), env_text("SLURMD_NODENAME")};
  if (a.sid.empty() || a.node_list.empty() || a.here.empty())
    throw InvalidArgument("batchai _slurm-run runs only as the batch script of a job's Slurm job "
                          "(SLURM_JOB_ID, SLURM_JOB_NODELIST and SLURMD_NODENAME must be set).");
  return a;
}

// Blocks SIGTERM (scancel, Slurm's time limit), SIGINT and SIGHUP in every thread: the run's
// watcher takes them. Returns them.
sigset_t block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, s);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

// The run is claimed once, by the job's key, under the lock this runner holds while it runs: a
// batch script Slurm starts again (a restarted controller) runs nothing (run_claim.hpp). True
// when this runner has the run; a queued job becomes running then.
bool claim_the_run(const SlurmEnv& cp, RunLock& run_lock, const std::string& job_key, const Allocation& a) {
  Store& store = cp.store();
  return run_lock.try_take() && store.write([&] {
    if (!claim_run(store, job_key, "Slurm job " + a.sid + " on " + a.here + ", pid " + std::to_string(::getpid())))
      return false;
    auto j = load_job_by_key(store, job_key);
    if (j && j->state == JobState::kQueued) {
      start_if_queued(*j, to_us(cp.clock().now()));
      save_job(store, *j);
    }
    return true;
  });
}

// The allocation's nodes as the job's: the batch host first (the master node, whatever order Slurm
// lists the allocation in), as many as the job needs, each with its folder of the cluster on the
// shared home and the GPUs sbatch asked each node for (--gres: Slurm gives each task them in
// CUDA_VISIBLE_DEVICES); tasks see the allocation's variables.
Placement allocation_placement(const NodeLayout& layout, const ClusterRow& cluster, const JobRow& job, const Allocation& a) {
  std::vector<std::string> names = slurm::expand_hostlist(a.node_list, 1000);
  for (const auto& n : names) check_node_name(n);
  auto self = std::find(names.begin(), names.end(), a.here);
  if (self == names.end()) throw SystemError("This node (" + a.here + ") is not in the allocation " + a.node_list + ".");
  std::rotate(names.begin(), self, self + 1);
  if (static_cast<int>(names.size()) < job.node_count)
    throw SystemError("Slurm allocated " + std::to_string(names.size()) + " node(s), the job needs " +
                      std::to_string(job.node_count) + ".");
  names.resize(static_cast<std::size_t>(job.node_count));
  const Json& entry = job.private_data["slurm"];
  const int gpus_per_node = entry.is_object() && entry.value("gpusPerNode", Json(0)).is_number_integer()
                                ? std::clamp(entry.value("gpusPerNode", 0), 0, 1024)
                                : 0;
  Placement placement;
  for (const auto& name : names) {
    const fs::path dir = layout.node(cluster.resource_group, cluster.workspace, cluster.name, name);
    ensure_node_folder(layout, cluster.doc, dir);
    placement.nodes.push_back({name, dir, name, gpus_per_node});
  }
  placement.extra_env = allocation_environment(false);
  placement.mpi_map_by_node = true;
  return placement;
}

// The job's plan over the allocation, tasks of other nodes routed through srun; throws what stops
// the job from launching.
PlacedRun place_in_allocation(const NodeLayout& layout, const std::optional<ClusterRow>& cluster, const JobRow& job,
                              const Allocation& a) {
  if (!cluster) throw InvalidArgument("The job's cluster is gone.");
  PlacedRun run = place_run(layout, job, allocation_placement(layout, *cluster, job, a));
  route_tasks_through_srun(run.plan, run.node_ids, a.here, allocation_environment(true));
  return run;
}

// Runs the plan inside the job's containment; SIGTERM/SIGINT/SIGHUP and the job terminated,
// deleted or recorded ended (while Slurm could not be asked) stop its tasks.
runtime::JobOutcome run_in_allocation(const SlurmEnv& cp, const std::string& job_key, const PlacedRun& run,
                                      const Allocation& a, const sigset_t& stop_signals) {
  Store& store = cp.store();
  RunOptions options;
  options.who = "slurm runner";
  options.runner = "runner";
  options.log_note = "Slurm job " + a.sid + " on " + a.node_list + "; ";
  options.stop_signals = &stop_signals;
  options.should_stop = [&](int tick) {
    if (tick % 5 != 0) return StopReason::kNone;
    return store.read([&] {
      auto j = load_job_by_key(store, job_key);
      return !j || (j->state != JobState::kRunning && j->state != JobState::kQueued);
    }) ? StopReason::kTerminated : StopReason::kNone;
  };
  runtime::JobOutcome outcome = run_contained(cp.context(), job_key, run, options).outcome;
  if (!outcome.succeeded && outcome.exit_code && outcome.errors.is_array() && !outcome.errors.empty() &&
      value_or<std::string>(outcome.errors[0], "code", "") == "JobFailed")
    outcome.errors[0]["message"] = "Job failed with non-zero exit code";
  return outcome;
}

}  // namespace

void route_tasks_through_srun(runtime::LaunchPlan& plan, const std::vector<std::string>& node_names,
                              const std::string& here, const std::map<std::string, std::string>& here_env) {
  for (auto* group : {&plan.preparation, &plan.tasks}) {
    for (auto& task : *group) {
      if (task.node >= node_names.size()) throw InvalidArgument("A task of the job names a node it does not have.");
      if (node_names[task.node] != here) {
        wrap_in_srun(task, node_names[task.node]);
      } else {
        for (const auto& [name, value] : here_env) task.process.env.emplace(name, value);
      }
    }
  }
}

int run_in_slurm_allocation(const SlurmEnv& cp, const std::string& job_key) {
  if (!is_job_key(job_key)) throw InvalidArgument("The job key '" + job_key + "' is not a job key (a lower-case UUID).");
  const Allocation alloc = allocation_from_environment();
  const sigset_t stop_signals = block_stop_signals();
  Store& store = cp.store();
  auto job = wait_for_own_row(store, job_key, slurm::parse_job_id(alloc.sid));
  if (!job) return 0;
  RunLock run_lock(cp.layout(), job_key);
  if (!claim_the_run(cp, run_lock, job_key, alloc)) return follow_claimed_run(store, run_lock, job_key, stop_signals);
  auto cluster = store.read([&] { return job->cluster_id ? load_cluster(store, *job->cluster_id) : std::nullopt; });
  PlacedRun run;
  try {
    run = place_in_allocation(cp.layout(), cluster, *job, alloc);
  } catch (const std::exception& e) {
    runtime::JobOutcome failed;
    failed.errors = job_error("JobFailed", std::string("The job cannot be launched: ") + e.what());
    record_outcome(store, job_key, failed);
    return 1;
  }
  // Where `job file list` looks and which nodes the job has, recorded before anything runs.
  record_run_place(store, job_key, run, to_us(cp.clock().now()));
  const runtime::JobOutcome outcome = run_in_allocation(cp, job_key, run, alloc, stop_signals);
  record_outcome(store, job_key, outcome);
  return exit_status(outcome);
}

}  // namespace batchai::control_plane::jobs_detail
