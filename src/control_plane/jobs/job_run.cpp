// One run of a job, shared by every engine's runner (job_run.hpp).
#include "job_run.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <ctime>
#include <fstream>
#include <memory>
#include <thread>

#include "batchai/common/confined_path.hpp"
#include "batchai/common/log.hpp"
#include "batchai/common/process.hpp"
#include "batchai/runtime/container_plan.hpp"
#include "batchai/runtime/podman.hpp"
#include "context.hpp"
#include "job_containers.hpp"
#include "job_launcher.hpp"
#include "job_processes.hpp"
#include "node_mounts.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::jobs_detail {

using namespace detail;

namespace {

constexpr auto kTick = std::chrono::milliseconds(100);
// How long stopped tasks get between SIGTERM and SIGKILL.
constexpr auto kStopGrace = std::chrono::seconds(1);
constexpr int kReapEveryTicks = 10;

// What the watcher's ticks sleep on: the run's end (an eventfd the runner writes once the tasks are
// over) and the stop signals when there are any (a signalfd), so neither waits for a tick to pass.
class TickWait {
 public:
  explicit TickWait(const sigset_t* signals)
      : signals_(signals), ended_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        signal_fd_(signals ? ::signalfd(-1, signals, SFD_CLOEXEC | SFD_NONBLOCK) : -1) {}

  // Waits one tick at most; kSignalled when one of the signals came meanwhile.
  StopReason wait() {
    pollfd fds[2] = {{ended_.get(), POLLIN, 0}, {signal_fd_.get(), POLLIN, 0}};  // poll skips a -1
    (void)::poll(fds, 2, static_cast<int>(kTick.count()));
    if (signals_ == nullptr) return StopReason::kNone;
    if (signal_fd_) {
      signalfd_siginfo info{};
      return ::read(signal_fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info) ? StopReason::kSignalled
                                                                                              : StopReason::kNone;
    }
    const timespec now{0, 0};  // no signalfd (no descriptor left): take a pending signal
    return ::sigtimedwait(signals_, nullptr, &now) > 0 ? StopReason::kSignalled : StopReason::kNone;
  }

  // The run is over: the tick in progress ends now.
  void end() {
    const std::uint64_t one = 1;
    (void)!::write(ended_.get(), &one, sizeof one);
  }

 private:
  const sigset_t* signals_;
  UniqueFd ended_;
  UniqueFd signal_fd_;
};

// The watcher thread's loop: until `done`, stops the job's processes (SIGTERM, then SIGKILL after
// the grace) once a signal or options.should_stop says so, and reaps orphans.
// Orphans are reaped only once `reap` is set (podman's commands before it are waited for by pid).
void watch(JobLauncher& launcher, const RunOptions& options, TickWait& ticks, const std::atomic<bool>& done,
           const std::atomic<bool>& reap, std::atomic<StopReason>& reason) {
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  for (int tick = 1; !done; ++tick) {
    StopReason seen = ticks.wait();
    if (done) break;
    if (reap && tick % kReapEveryTicks == 0) launcher.reap_orphans();
    if (reason == StopReason::kNone) {
      if (seen == StopReason::kNone && options.should_stop) {
        try {
          seen = options.should_stop(tick);
        } catch (const std::exception& e) {
          log::warning(options.who + ": cannot read the job's state: " + e.what());
        }
      }
      if (seen != StopReason::kNone) {
        reason = seen;
        launcher.signal_all(SIGTERM);
        kill_at = std::chrono::steady_clock::now() + kStopGrace;
      }
    } else if (kill_at && std::chrono::steady_clock::now() >= *kill_at) {
      launcher.signal_all(SIGKILL);
      kill_at.reset();
    }
  }
}

runtime::JobOutcome supervise(const PlacedRun& run, JobLauncher& launcher, const RunOptions& options) {
  runtime::SupervisorOptions supervision;
  if (auto wall = parse_duration(run.typed.max_wall_clock_time))
    supervision.max_wall_clock = std::chrono::duration_cast<std::chrono::milliseconds>(*wall);
  supervision.kill_grace = std::chrono::milliseconds(1000);
  supervision.signal_job = [&](int signal) { launcher.signal_all(signal); };
  runtime::JobOutcome outcome;
  try {
    outcome = runtime::supervise_job(run.plan, launcher, supervision);
  } catch (const std::exception& e) {
    outcome.errors = job_error("JobFailed", "The " + options.runner + " could not run the job: " + e.what());
  }
  return outcome;
}

}  // namespace

PlacedRun place_run(const NodeLayout& layout, const JobRow& job, Placement placement) {
  PlacedRun run;
  for (const auto& node : placement.nodes) run.node_ids.push_back(node.id);
  runtime::LaunchContext ctx;
  ctx.nodes = std::move(placement.nodes);
  ctx.as_root = ::geteuid() == 0;
  ctx.mpi_map_by_node = placement.mpi_map_by_node;
  ctx.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ctx.self_executable = self_executable();
  ctx.base_env = node_base_environment();  // not the environment of whoever ran `job create`
  for (const auto& [name, value] : placement.extra_env) ctx.base_env[name] = value;
  if (job.private_data.contains("secrets"))
    ctx.secrets = job.private_data["secrets"].get<std::map<std::string, std::string>>();
  run.typed = runtime::parse_job(job.doc);
  // The mount rules are the control plane's: the links go down in the plan.
  ctx.job_mounts = mount_links(layout, run.typed.mount_volumes);
  run.plan = runtime::make_launch_plan(run.typed, ctx);
  runtime::make_node_mounts(run.plan);
  if (run.typed.container_settings) {  // every task enters its node's container (job_containers.hpp)
    runtime::containerize_plan(run.plan, runtime::podman_base(), job.key, ctx.self_executable);
    run.registry_password = job.private_data.value("registryPassword", std::string());
  }
  return run;
}

void start_if_queued(JobRow& job, std::int64_t now_us) {
  if (job.state != JobState::kQueued) return;
  set_state(job, JobState::kRunning, now_us);
  job.doc["executionInfo"] = {{"endTime", nullptr}, {"errors", nullptr}, {"exitCode", nullptr}, {"startTime", iso_us(now_us)}};
}

Json run_folders(const runtime::LaunchPlan& plan) {
  Json outputs = Json::object();
  for (const auto& [id, path] : plan.output_directories) outputs[id] = path.string();
  return {{"stdouterr", plan.stdouterr_dir.string()}, {"outputs", outputs}};
}

void record_run_place(Store& store, const std::string& job_key, PlacedRun& run,
                      std::optional<std::int64_t> start_queued_at_us) {
  store.write([&] {
    auto j = load_job_by_key(store, job_key);
    if (!j) return;
    if (start_queued_at_us) start_if_queued(*j, *start_queued_at_us);
    j->private_data["folders"] = run_folders(run.plan);
    j->private_data["nodes"] = run.node_ids;
    save_job(store, *j);
  });
  prepare_run_folders(run);
}

void prepare_run_folders(PlacedRun& run) {
  std::error_code ec;
  fs::create_directories(run.plan.stdouterr_dir, ec);
  for (auto& t : run.plan.tasks) t.process.append = true;  // keep what is written there before them
}

RunHost run_host(const Context& cx, const std::string& job_key) {
  return {cx.clock(), cx.launcher(), cx.settings().containment, state_dir(cx.layout(), job_key),
          cx.layout().shared(), containers_record(cx.layout(), job_key), {}};
}

RunResult run_contained(const RunHost& host, const std::string& job_key, const PlacedRun& run, const RunOptions& options) {
  const JobProcesses procs = JobProcesses::contain(job_key, host.containment);
  if (options.on_contained) options.on_contained(procs);
  std::ofstream(run.plan.execution_log, std::ios::app)
      << format_iso(host.clock.now()) << " " << options.log_note << "process containment: " << procs.describe() << "\n";
  JobLauncher launcher(host.launcher, procs);
  std::atomic<bool> done{false};
  std::atomic<StopReason> reason{StopReason::kNone};
  TickWait ticks(options.stop_signals);
  RunResult result;
  std::atomic<bool> reap{false};
  std::thread watcher([&] { watch(launcher, options, ticks, done, reap, reason); });
  // The containers start while the watcher listens: a stop ends a pull. Their processes are
  // marked: the kill below reaches them; the containers go once the caller stored the outcome.
  std::optional<JobContainers> containers;
  std::optional<Json> container_error;
  if (run.typed.container_settings) {
    containers.emplace(host.launcher, host.state_folder, host.shared_root, host.containers_record, job_key, run,
                       run.registry_password, host.container_routes);
    std::ofstream log(run.plan.execution_log, std::ios::app);
    try {
      container_error = containers->start(log, [&] { return reason != StopReason::kNone; });
    } catch (const std::exception& e) {
      container_error = job_error("ContainerStartFailed", std::string("The job's containers did not start: ") + e.what());
    }
  }
  reap = true;
  std::unique_ptr<runtime::ContainerGateway> gateway;  // mpirun's way into the other containers
  if (containers && !container_error && !run.plan.rank_nodes_contents.empty()) {
    try {
      gateway = std::make_unique<runtime::ContainerGateway>(launcher, containers->gateway_options());
    } catch (const std::exception& e) {
      container_error = job_error("ContainerStartFailed", std::string("The job's container gateway did not start: ") + e.what());
    }
  }
  if (container_error) result.outcome.errors = *container_error;
  else if (reason == StopReason::kNone) result.outcome = supervise(run, launcher, options);
  gateway.reset();
  done = true;
  ticks.end();
  watcher.join();
  // Nothing of the job outlives it: what is in its cgroup, below this process or carries its
  // marker is killed and confirmed gone.
  const auto left = procs.kill_all(std::chrono::seconds(10), launcher.tasks());
  if (!left.empty())
    log::warning(options.who + ": " + std::to_string(left.size()) + " process(es) of the job survived SIGKILL");
  result.processes_gone = left.empty();
  result.stopped = reason;
  return result;
}

}  // namespace batchai::control_plane::jobs_detail
