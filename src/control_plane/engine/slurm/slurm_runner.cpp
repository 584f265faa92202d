#include "slurm_runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <set>
#include <thread>

#include "batchai/common/log.hpp"
#include "node_folders.hpp"
#include "node_mounts.hpp"
#include "batchai/slurm/parsers.hpp"
#include "batchai/slurm/srun_step.hpp"
#include "jobs/job_containers.hpp"
#include "jobs/job_run.hpp"
#include "run_claim.hpp"
#include "run_exchange.hpp"
#include "slurm_jobs.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

using namespace detail;

namespace {

// The submitting command records the Slurm job id once sbatch answered, which may come after Slurm
// has started the batch script.
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

// Waits until the login host recorded the Slurm id it submitted the job as, and checks it is this
// allocation's: a batch script of another submission never runs the job. nullopt: the job was
// deleted meanwhile (its folder is gone), nothing to run.
std::optional<Json> wait_for_own_inputs(const RunExchange& exchange, slurm::JobId own) {
  Json inputs = exchange.inputs();  // throws, saying why, when the folder is not on this node
  const auto deadline = std::chrono::steady_clock::now() + kJobIdWait;
  for (;;) {
    if (const auto id = exchange.slurm_id()) {
      if (*id != own)
        throw InvalidArgument("Slurm job " + std::to_string(own) + " is not the allocation of job '" +
                              value_or<std::string>(inputs["job"], "name", "?") + "' (it was submitted as Slurm job " +
                              std::to_string(*id) + ").");
      return inputs;
    }
    std::error_code ec;
    if (!fs::is_directory(exchange.dir(), ec)) return std::nullopt;
    if (std::chrono::steady_clock::now() >= deadline)
      throw SystemError("The job's Slurm job id " + std::to_string(own) + " was never recorded in " +
                        exchange.dir().string() + ".");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The job and its cluster as the login host wrote them into run.json (slurm_jobs.cpp, run_inputs).
struct RunInputs {
  JobRow job;
  ClusterRow cluster;
  int gpus_per_node = 0;  // what sbatch asked each node for (--gres=gpu:N)
};

int bounded_int(const Json& value, int lo, int hi, int fallback) {
  return value.is_number_integer() ? std::clamp(value.get<int>(), lo, hi) : fallback;
}

RunInputs read_run_inputs(const Json& inputs, const std::string& job_key) {
  const Json job = inputs.value("job", Json());
  const Json cluster = inputs.value("cluster", Json());
  if (!job.is_object() || !cluster.is_object() || !job.value("doc", Json()).is_object() ||
      !cluster.value("doc", Json()).is_object())
    throw SystemError("The job's inputs are malformed (run.json has no job or cluster document).");
  RunInputs in;
  in.job.key = job_key;
  in.job.name = value_or<std::string>(job, "name", "");
  in.job.node_count = bounded_int(job.value("nodeCount", Json()), 1, 1000, 1);
  in.job.doc = job["doc"];
  in.job.private_data = Json::object();
  if (job.value("secrets", Json()).is_object()) in.job.private_data["secrets"] = job["secrets"];
  if (job.value("registryPassword", Json()).is_string()) in.job.private_data["registryPassword"] = job["registryPassword"];
  in.gpus_per_node = bounded_int(inputs.value("gpusPerNode", Json()), 0, 1024, 0);
  in.cluster.resource_group = value_or<std::string>(cluster, "resourceGroup", "");
  in.cluster.workspace = value_or<std::string>(cluster, "workspace", "");
  in.cluster.name = value_or<std::string>(cluster, "name", "");
  in.cluster.doc = cluster["doc"];
  return in;
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

// What the runner records of how the run ended (folded into the store by the login host). A run a
// signal stopped (scancel, or Slurm ending the job for a lost node or its time limit) says so:
// Slurm's reason is then the job's.
Json outcome_record(const runtime::JobOutcome& outcome, std::int64_t end_us, bool signalled = false) {
  return {{"succeeded", outcome.succeeded},
          {"exitCode", outcome.exit_code ? Json(*outcome.exit_code) : Json()},
          {"errors", outcome.errors},
          {"endUs", end_us},
          {"stoppedBySignal", signalled}};
}

// The body of a batch script that found the run claimed by another: runs nothing, waits until the
// run's lock is free (or one of `stop_signals` comes: 143), then returns the run's exit status. A
// run that ended without recording how (its runner was killed) is recorded failed, JobRunLost.
int follow_claimed_run(const RunExchange& exchange, RunLock& lock, const sigset_t& stop_signals, std::int64_t now_us) {
  log::warning("Job folder " + exchange.dir().string() + ": its run was started before (" +
               exchange.claim().value_or("?") +
               "); Slurm started its batch script again, which runs nothing and waits for that run to end.");
  while (!lock.try_take()) {
    const timespec wait{1, 0};
    if (sigtimedwait(&stop_signals, nullptr, &wait) > 0) return 143;  // scancel: nothing of ours runs here
  }
  runtime::JobOutcome lost;
  lost.errors = job_error("JobRunLost", "The job's run ended without recording how (its runner was killed); "
                                        "batchai does not start a run twice.");
  exchange.record_outcome(outcome_record(lost, now_us));  // unless the first run recorded its own
  const Json outcome = exchange.outcome().value_or(Json::object());
  if (outcome.value("succeeded", false)) return 0;
  const int code = bounded_int(outcome.value("exitCode", Json()), -1, 255, 1);
  return code >= 1 ? code : 1;
}

// The allocation's nodes as the job's: the batch host first (the master node, whatever order Slurm
// lists the allocation in), as many as the job needs, each with its folder of the cluster on the
// shared folder and the GPUs sbatch asked each node for (--gres: Slurm gives each task them in
// CUDA_VISIBLE_DEVICES); tasks see the allocation's variables.
Placement allocation_placement(const NodeLayout& layout, const RunInputs& in, const Allocation& a) {
  std::vector<std::string> names = slurm::expand_hostlist(a.node_list, 1000);
  for (const auto& n : names) check_node_name(n);
  auto self = std::find(names.begin(), names.end(), a.here);
  if (self == names.end()) throw SystemError("This node (" + a.here + ") is not in the allocation " + a.node_list + ".");
  std::rotate(names.begin(), self, self + 1);
  if (static_cast<int>(names.size()) < in.job.node_count)
    throw SystemError("Slurm allocated " + std::to_string(names.size()) + " node(s), the job needs " +
                      std::to_string(in.job.node_count) + ".");
  names.resize(static_cast<std::size_t>(in.job.node_count));
  Placement placement;
  for (const auto& name : names) {
    const fs::path dir = layout.node(in.cluster.resource_group, in.cluster.workspace, in.cluster.name, name);
    ensure_node_folder(layout, in.cluster.doc, dir);
    placement.nodes.push_back({name, dir, name, in.gpus_per_node});
  }
  placement.extra_env = allocation_environment(false);
  placement.mpi_map_by_node = true;
  return placement;
}

// The job's plan over the allocation, tasks of other nodes routed through srun; throws what stops
// the job from launching.
PlacedRun place_in_allocation(const NodeLayout& layout, const RunInputs& in, const Allocation& a) {
  PlacedRun run = place_run(layout, in.job, allocation_placement(layout, in, a));
  route_tasks_through_srun(run.plan, run.node_ids, a.here, allocation_environment(true));
  return run;
}

// Where each node's container commands run: here for the runner's node, else through a step of
// this allocation on that node (the node needs podman and runc: docs/slurm.md).
std::vector<runtime::PodmanRoute> container_routes(const std::vector<std::string>& node_names, const std::string& here) {
  std::vector<runtime::PodmanRoute> routes;
  for (const auto& node : node_names) {
    runtime::PodmanRoute r;
    if (node != here) {
      slurm::SrunStep step;
      step.node = node;
      step.overlap = true;
      step.command = {"podman"};
      r.prefix = slurm::srun_argv(step);
      r.prefix.pop_back();  // srun_argv puts the command last: podman's own argv follows
      r.env = allocation_environment(false);
    }
    routes.push_back(std::move(r));
  }
  return routes;
}

// Runs the plan inside the job's containment; SIGTERM/SIGINT/SIGHUP and the login host's stop
// request (job terminate or delete, also while Slurm cannot be asked) stop its tasks.
RunResult run_in_allocation(const RunnerHost& host, const RunExchange& exchange, const std::string& job_key,
                            const PlacedRun& run, const Allocation& a, const sigset_t& stop_signals) {
  RunOptions options;
  options.who = "slurm runner";
  options.runner = "runner";
  options.log_note = "Slurm job " + a.sid + " on " + a.node_list + "; ";
  options.stop_signals = &stop_signals;
  options.should_stop = [&](int tick) {
    return tick % 5 == 0 && exchange.stop_requested() ? StopReason::kTerminated : StopReason::kNone;
  };
  RunResult result = run_contained(RunHost{host.clock, host.launcher, host.containment, exchange.dir(),
                                           host.layout.shared(), exchange.dir() / "containers",
                                           container_routes(run.node_ids, a.here)},
                                   job_key, run, options);
  runtime::JobOutcome& outcome = result.outcome;
  if (!outcome.succeeded && outcome.exit_code && outcome.errors.is_array() && !outcome.errors.empty() &&
      value_or<std::string>(outcome.errors[0], "code", "") == "JobFailed")
    outcome.errors[0]["message"] = "Job failed with non-zero exit code";
  return result;
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

int run_in_slurm_allocation(const RunnerHost& host, const std::string& job_key) {
  if (!is_job_key(job_key)) throw InvalidArgument("The job key '" + job_key + "' is not a job key (a lower-case UUID).");
  const Allocation alloc = allocation_from_environment();
  const sigset_t stop_signals = block_stop_signals();
  const RunExchange exchange(host.layout.job_exchange(job_key));
  const auto inputs = wait_for_own_inputs(exchange, slurm::parse_job_id(alloc.sid));
  if (!inputs) return 0;  // deleted before it started: nobody waits for its word
  RunLock run_lock(exchange.lock_file());
  const std::string who = "Slurm job " + alloc.sid + " on " + alloc.here + ", pid " + std::to_string(::getpid());
  // The run is claimed once: the lock, then the exclusive create (a batch script Slurm starts
  // again finds either taken and runs nothing).
  if (!run_lock.try_take() || !exchange.try_claim(who))
    return follow_claimed_run(exchange, run_lock, stop_signals, to_us(host.clock.now()));
  const RunInputs in = read_run_inputs(*inputs, job_key);
  PlacedRun run;
  try {
    run = place_in_allocation(host.layout, in, alloc);
  } catch (const std::exception& e) {
    runtime::JobOutcome failed;
    failed.errors = job_error("JobFailed", std::string("The job cannot be launched: ") + e.what());
    exchange.record_outcome(outcome_record(failed, to_us(host.clock.now())));
    return 1;
  }
  // Where `job file list` looks and which nodes the job has, recorded before anything runs.
  exchange.record_started({{"startUs", to_us(host.clock.now())},
                           {"claim", who},
                           {"folders", run_folders(run.plan)},
                           {"nodes", run.node_ids}});
  prepare_run_folders(run);
  const RunResult result = run_in_allocation(host, exchange, job_key, run, alloc, stop_signals);
  exchange.record_outcome(
      outcome_record(result.outcome, to_us(host.clock.now()), result.stopped == StopReason::kSignalled));
  // After the outcome, on every node while the allocation holds them: the end is seen sooner.
  remove_job_containers(exchange.dir() / "containers", job_key, container_routes(run.node_ids, alloc.here));
  return exit_status(result.outcome);
}

int clean_up_slurm_run(const RunnerHost& host, const std::string& job_key) {
  if (!is_job_key(job_key)) throw InvalidArgument("The job key '" + job_key + "' is not a job key (a lower-case UUID).");
  const Allocation alloc = allocation_from_environment();
  block_stop_signals();  // a second scancel does not cut the removal short; Slurm's SIGKILL still ends it
  const RunExchange exchange(host.layout.job_exchange(job_key));
  const fs::path record = exchange.dir() / "containers";
  std::error_code ec;
  if (!fs::exists(record, ec)) return 0;  // no container was started, or the runner removed them
  // A runner that still runs (its lock is held) removes its own; a SIGKILLed one released it.
  RunLock lock(exchange.lock_file());
  if (!lock.try_take()) return 0;
  std::vector<std::string> nodes = slurm::expand_hostlist(alloc.node_list, 1000);
  for (const auto& n : nodes) check_node_name(n);
  log::warning("job " + job_key + ": its runner ended without removing its containers; removing them on " +
               alloc.node_list + ".");
  return remove_job_containers(record, job_key, container_routes(nodes, alloc.here)) ? 0 : 1;
}

}  // namespace batchai::control_plane::jobs_detail
