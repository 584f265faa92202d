#include "node_mounts.hpp"
#include "slurm_runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <thread>

#include "batchai/common/log.hpp"
#include "batchai/common/process.hpp"
#include "batchai/common/process_tree.hpp"
#include "node_folders.hpp"
#include "batchai/runtime/job.hpp"
#include "batchai/runtime/supervisor.hpp"
#include "batchai/slurm/parsers.hpp"
#include "batchai/slurm/srun_step.hpp"
#include "jobs/job_launcher.hpp"
#include "jobs/job_processes.hpp"
#include "run_claim.hpp"
#include "slurm_jobs.hpp"
#include "storage_paths.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

using namespace detail;

namespace {

// The submitting command stores the Slurm job id when its transaction commits, which may come
// after Slurm has started the batch script.
constexpr auto kJobIdWait = std::chrono::seconds(30);
// How long stopped tasks get between SIGTERM and SIGKILL (Slurm's KillWait is longer by default).
constexpr auto kStopGrace = std::chrono::seconds(1);

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
    if (!job || job->state == "succeeded" || job->state == "failed") return std::nullopt;
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

int run_in_slurm_allocation(const SlurmEnv& env, const std::string& job_key) {
  if (!is_job_key(job_key)) throw InvalidArgument("The job key '" + job_key + "' is not a job key (a lower-case UUID).");
  const std::string sid = env_text("SLURM_JOB_ID");
  const std::string node_list = env_text("SLURM_JOB_NODELIST");
  const std::string here = env_text("SLURMD_NODENAME");
  if (sid.empty() || node_list.empty() || here.empty())
    throw InvalidArgument("batchai _slurm-run runs only as the batch script of a job's Slurm job "
                          "(SLURM_JOB_ID, SLURM_JOB_NODELIST and SLURMD_NODENAME must be set).");
  // SIGTERM (scancel, Slurm's time limit) is taken by the watcher below, in every thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, s);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Store& store = env.store();
  const NodeLayout& layout = env.layout();
  auto job = wait_for_own_row(store, job_key, slurm::parse_job_id(sid));
  if (!job) return 0;
  // The run is claimed once, by the job's key, under the lock this runner holds while it runs: a
  // batch script Slurm starts again (a restarted controller) runs nothing (run_claim.hpp).
  RunLock run_lock(layout, job_key);
  const bool first = run_lock.try_take() && store.write([&] {
    if (!claim_run(store, job_key, "Slurm job " + sid + " on " + here + ", pid " + std::to_string(::getpid())))
      return false;
    auto j = load_job_by_key(store, job_key);
    if (j && j->state == "queued") {
      const std::int64_t now = to_us(env.clock().now());
      set_state(*j, "running", now);
      j->doc["executionInfo"] = {{"endTime", nullptr}, {"errors", nullptr}, {"exitCode", nullptr}, {"startTime", iso_us(now)}};
      save_job(store, *j);
    }
    return true;
  });
  if (!first) return follow_claimed_run(store, run_lock, job_key, stop_signals);
  auto cluster = store.read([&] { return job->cluster_id ? load_cluster(store, *job->cluster_id) : std::nullopt; });

  runtime::LaunchPlan plan;
  runtime::Job typed;
  std::vector<std::string> names;
  try {
    if (!cluster) throw InvalidArgument("The job's cluster is gone.");
    names = slurm::expand_hostlist(node_list, 1000);
    for (const auto& n : names) check_node_name(n);
    // The batch host is the master node, whatever order Slurm lists the allocation in.
    auto self = std::find(names.begin(), names.end(), here);
    if (self == names.end()) throw SystemError("This node (" + here + ") is not in the allocation " + node_list + ".");
    std::rotate(names.begin(), self, self + 1);
    if (static_cast<int>(names.size()) < job->node_count)
      throw SystemError("Slurm allocated " + std::to_string(names.size()) + " node(s), the job needs " +
                        std::to_string(job->node_count) + ".");
    names.resize(static_cast<std::size_t>(job->node_count));
    runtime::LaunchContext ctx;
    // The GPUs sbatch asked each node for (--gres): Slurm gives each task them in CUDA_VISIBLE_DEVICES.
    const Json& entry = job->private_data["slurm"];
    const int gpus_per_node = entry.is_object() && entry.value("gpusPerNode", Json(0)).is_number_integer()
                                  ? std::clamp(entry.value("gpusPerNode", 0), 0, 1024)
                                  : 0;
    for (const auto& name : names) {
      const fs::path dir = layout.node(cluster->resource_group, cluster->workspace, cluster->name, name);
      ensure_node_folder(layout, cluster->doc, dir);
      ctx.nodes.push_back({name, dir, name, gpus_per_node});
    }
    ctx.as_root = ::geteuid() == 0;
    ctx.mpi_map_by_node = true;
    ctx.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    ctx.self_executable = self_executable();
    ctx.base_env = node_base_environment();
    for (const auto& [name, value] : allocation_environment(false)) ctx.base_env[name] = value;
    if (job->private_data.contains("secrets"))
      ctx.secrets = job->private_data["secrets"].get<std::map<std::string, std::string>>();
    typed = runtime::parse_job(job->doc);
    ctx.job_mounts = mount_links(layout, typed.mount_volumes);
    plan = runtime::make_launch_plan(typed, ctx);
    runtime::make_node_mounts(plan);
    route_tasks_through_srun(plan, names, here, allocation_environment(true));
  } catch (const std::exception& e) {
    runtime::JobOutcome failed;
    failed.errors = job_error("JobFailed", std::string("The job cannot be launched: ") + e.what());
    record_outcome(store, job_key, failed);
    return 1;
  }

  // Where `job file list` looks and which nodes the job has, recorded before anything runs.
  store.write([&] {
    auto j = load_job_by_key(store, job_key);
    if (!j) return;
    const std::int64_t now = to_us(env.clock().now());
    if (j->state == "queued") {
      set_state(*j, "running", now);
      j->doc["executionInfo"] = {{"endTime", nullptr}, {"errors", nullptr}, {"exitCode", nullptr}, {"startTime", iso_us(now)}};
    }
    Json outputs = Json::object();
    for (const auto& [id, path] : plan.output_directories) outputs[id] = path.string();
    j->private_data["folders"] = {{"stdouterr", plan.stdouterr_dir.string()}, {"outputs", outputs}};
    j->private_data["nodes"] = names;
    save_job(store, *j);
  });
  std::error_code ec;
  fs::create_directories(plan.stdouterr_dir, ec);
  for (auto& t : plan.tasks) t.process.append = true;

  const JobProcesses procs = JobProcesses::contain(job_key, env.settings().containment);
  std::ofstream(plan.execution_log, std::ios::app)
      << format_iso(env.clock().now()) << " Slurm job " << sid << " on " << node_list << "; process containment: "
      << procs.describe() << "\n";
  JobLauncher launcher(env.launcher(), procs);
  std::atomic<bool> done{false};
  // Stops the job's tasks on SIGTERM/SIGINT/SIGHUP and when the job is terminated or deleted.
  std::thread watcher([&] {
    std::optional<std::chrono::steady_clock::time_point> kill_at;
    bool stopping = false;
    for (int tick = 1; !done; ++tick) {
      const timespec wait{0, 100 * 1000 * 1000};
      const bool signalled = sigtimedwait(&stop_signals, nullptr, &wait) > 0;
      if (tick % 10 == 0) launcher.reap_orphans();
      bool stop = signalled;
      if (!stopping && !stop && tick % 5 == 0) {
        try {
          stop = store.read([&] {  // terminated, deleted, or recorded ended while Slurm could not be asked
            auto j = load_job_by_key(store, job_key);
            return !j || (j->state != "running" && j->state != "queued");
          });
        } catch (const std::exception& e) {
          log::warning(std::string("slurm runner: cannot read the job's state: ") + e.what());
        }
      }
      if (stop && !stopping) {
        stopping = true;
        launcher.signal_all(SIGTERM);
        kill_at = std::chrono::steady_clock::now() + kStopGrace;
      } else if (kill_at && std::chrono::steady_clock::now() >= *kill_at) {
        launcher.signal_all(SIGKILL);
        kill_at.reset();
      }
    }
  });
  runtime::SupervisorOptions options;
  if (auto wall = parse_duration(typed.max_wall_clock_time))
    options.max_wall_clock = std::chrono::duration_cast<std::chrono::milliseconds>(*wall);
  options.kill_grace = std::chrono::milliseconds(1000);
  options.signal_job = [&](int signal) { launcher.signal_all(signal); };
  runtime::JobOutcome outcome;
  try {
    outcome = runtime::supervise_job(plan, launcher, options);
  } catch (const std::exception& e) {
    outcome.errors = job_error("JobFailed", std::string("The runner could not run the job: ") + e.what());
  }
  done = true;
  watcher.join();
  if (auto left = procs.kill_all(std::chrono::seconds(10), launcher.tasks()); !left.empty())
    log::warning("slurm runner: " + std::to_string(left.size()) + " process(es) of the job survived SIGKILL");
  if (!outcome.succeeded && outcome.exit_code && outcome.errors.is_array() && !outcome.errors.empty() &&
      value_or<std::string>(outcome.errors[0], "code", "") == "JobFailed")
    outcome.errors[0]["message"] = "Job failed with non-zero exit code";
  record_outcome(store, job_key, outcome);
  return exit_status(outcome);
}

}  // namespace batchai::control_plane::jobs_detail
