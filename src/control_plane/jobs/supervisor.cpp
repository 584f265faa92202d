// The detached per-job supervisor (`batchai _supervise --job-key K`): holds the job's lock for
// its lifetime, waits until the scheduler gives the job its nodes, links the job-level mounts,
// runs the launch plan with runtime::supervise_job inside the job's containment (cgroup or
// child subreaper, marker variable) while a watcher thread stops every job process on
// terminate/delete/lost nodes, kills what is left, records the outcome (even on a full disk),
// frees the nodes and reconciles.
#include "node_mounts.hpp"
#include "supervisor.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "batchai/common/process.hpp"
#include "batchai/common/process_tree.hpp"
#include "storage_paths.hpp"
#include "batchai/runtime/supervisor.hpp"
#include "jobs/job_wake.hpp"
#include "cluster_docs.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "job_launcher.hpp"
#include "job_processes.hpp"
#include "job_rows.hpp"
#include "vm_sizes.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;
using namespace jobs_detail;

namespace {

// Space a supervisor sets aside while its job runs and gives back when the job filled the disk,
// so the job's end can still be written to the store.
constexpr off_t kReserveBytes = 2 << 20;

void make_reserve(const fs::path& file) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool ok = ::posix_fallocate(fd, 0, kReserveBytes) == 0;
  ::close(fd);
  std::error_code ec;
  if (!ok) fs::remove(file, ec);  // no room even for the reserve: nothing to give back later
}

// Runs a store write; when it fails (a full disk: SQLITE_FULL, or no room for the WAL), gives
// back the reserve and retries for up to a minute while space may come back.
template <typename F>
auto write_despite_full_disk(const fs::path& reserve, F&& write) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  for (int attempt = 0;; ++attempt) {
    try {
      return write();
    } catch (const SystemError& e) {
      if (std::chrono::steady_clock::now() >= give_up) throw;
      log::warning(std::string("supervisor: cannot record the job's end (") + e.what() + "); retrying");
      std::error_code ec;
      if (fs::remove(reserve, ec)) continue;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50 << std::min(attempt, 4), 1000)));
    }
  }
}

enum class StopReason { kNone, kTerminated, kDeleted, kRequeue, kNodesLost };

std::optional<int> exit_code_in(const std::string& message) {
  auto pos = message.find("exit code ");
  if (pos == std::string::npos) return std::nullopt;
  try {
    return std::stoi(message.substr(pos + 10));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// How often a waiting supervisor that is not the head of its cluster's queue reconciles.
constexpr auto kWaitingReconcileEvery = std::chrono::seconds(5);

// Whether `job` is the first queued job of its cluster in the scheduler's order.
bool heads_its_queue(Store& store, const JobRow& job) {
  if (!job.cluster_id) return true;
  auto st = store.prepare(
      "SELECT job_key FROM jobs WHERE cluster_id = ? AND state = 'queued' ORDER BY priority DESC, created_us, id LIMIT 1");
  st.bind(1, *job.cluster_id);
  return !st.step() || st.text(0) == job.key;
}

}  // namespace

int Supervisor::run(const std::string& job_key) {
  if (!is_job_key(job_key))  // the key names a folder under the home: never a path
    throw InvalidArgument("The job key '" + job_key + "' is not a job key (a lower-case UUID).");
  Store& store = cx_.store();
  const NodeLayout& layout = cx_.layout();
  const fs::path dir = state_dir(layout, job_key);
  fs::create_directories(dir);
  int lock_fd = ::open((dir / "supervisor.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) return 0;  // another supervisor has it
  leave_job_cgroup();  // started from inside another job: it must not end with that job
  const std::string pid_text = std::to_string(::getpid()) + "\n";  // for people and tests
  if (::ftruncate(lock_fd, 0) != 0 || ::write(lock_fd, pid_text.data(), pid_text.size()) < 0)
    log::warning("supervisor: cannot write its pid into the lock file");
  const bool have_job = store.write([&] {
    auto j = load_job_by_key(store, job_key);
    if (!j) return false;
    j->sup_pid = ::getpid();
    save_job(store, *j);
    return true;
  });
  if (!have_job) return 0;
  auto now_us = [&] { return to_us(cx_.clock().now()); };
  JobWake wake(dir / kJobWakeFile);  // made before the first read below: no wake-up is lost
  for (;;) {
    // 1. wait for nodes. The scheduler runs in every reconcile and wakes us when it gives them.
    //    Only the head of the cluster's queue keeps reconciling (for what no command announces:
    //    provisioning that ends as time passes); the others read their state and, as a safety
    //    net, reconcile rarely: hundreds of waiting supervisors reconciling every second kept
    //    the store's write lock from the commands that submit jobs.
    std::optional<JobRow> job;
    bool head = true;
    auto last_reconcile = std::chrono::steady_clock::time_point{};
    for (int round = 0;; ++round) {
      const auto now = std::chrono::steady_clock::now();
      if (head || now - last_reconcile >= kWaitingReconcileEvery) {
        reconciler_.reconcile();
        last_reconcile = now;
      }
      job = store.read([&] { return load_job_by_key(store, job_key); });
      if (!job || job->state == "succeeded" || job->state == "failed") return 0;
      if (job->state == "running") break;
      head = store.read([&] { return heads_its_queue(store, *job); });
      wake.wait(std::chrono::milliseconds(std::min(20 + round * 10, 1000)));
    }
    // 2. the plan over the job's nodes
    auto [nodes, cluster] = store.read([&] {
      return std::make_pair(job_nodes(store, job_key), job->cluster_id ? load_cluster(store, *job->cluster_id) : std::nullopt);
    });
    runtime::LaunchPlan plan;
    runtime::Job typed;
    std::string plan_error;
    if (!cluster || nodes.empty()) {
      plan_error = "The job's cluster or nodes are gone.";
    } else {
      runtime::LaunchContext ctx;
      const int gpus = vm_size_info(value_or<std::string>(cluster->doc, "vmSize", "")).gpus;
      for (const auto& [node_id, ordinal] : nodes)
        ctx.nodes.push_back({node_id, layout.node(cluster->resource_group, cluster->workspace, cluster->name, node_id),
                             "localhost", gpus});
      ctx.as_root = ::geteuid() == 0;
      ctx.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      ctx.self_executable = self_executable();
      ctx.base_env = node_base_environment();  // not the environment of whoever ran `job create`
      if (job->private_data.contains("secrets"))
        ctx.secrets = job->private_data["secrets"].get<std::map<std::string, std::string>>();
      try {
        typed = runtime::parse_job(job->doc);
        // The mount rules are the control plane's: the links go down in the plan.
        ctx.job_mounts = mount_links(layout, typed.mount_volumes);
        plan = runtime::make_launch_plan(typed, ctx);
        runtime::make_node_mounts(plan);
      } catch (const std::exception& e) {
        plan_error = std::string("The job cannot be launched: ") + e.what();
      }
    }
    if (!plan_error.empty()) {
      store.write([&] {
        auto j = load_job_by_key(store, job_key);
        if (!j) return;
        finish_job(*j, false, std::nullopt, job_error("JobFailed", plan_error), now_us());
        save_job(store, *j);
        for (auto c : release_nodes(store, job_key)) docs_.refresh(c);
      });
      reconciler_.reconcile();
      return 0;
    }
    // Where `job file list` looks, recorded before anything runs.
    store.write([&] {
      auto j = load_job_by_key(store, job_key);
      if (!j) return;
      Json outputs = Json::object();
      for (const auto& [id, path] : plan.output_directories) outputs[id] = path.string();
      j->private_data["folders"] = {{"stdouterr", plan.stdouterr_dir.string()}, {"outputs", outputs}};
      Json ids = Json::array();
      for (const auto& n : nodes) ids.push_back(n.first);
      j->private_data["nodes"] = ids;
      save_job(store, *j);
    });
    std::error_code ec;
    fs::create_directories(plan.stdouterr_dir, ec);
    for (auto& t : plan.tasks) t.process.append = true;  // keep the container note below
    if (typed.container_settings) {
      std::ofstream(plan.stdouterr_dir / "stderr.txt", std::ios::app)
          << "batchai: no container engine is used locally; the job ran on the host instead of in image '"
          << typed.container_settings->image << "'.\n";
    }
    // 3. run it inside the job's containment, watching the store for terminate/delete/lost nodes.
    // The cgroup is recorded first, so whoever finds this supervisor dead can end the job.
    const JobProcesses procs = JobProcesses::contain(job_key, cx_.settings().containment);
    if (procs.mode() == JobProcesses::Mode::kCgroup) std::ofstream(dir / "cgroup") << procs.cgroup().string() << "\n";
    else fs::remove(dir / "cgroup", ec);
    std::ofstream(plan.execution_log, std::ios::app)
        << format_iso(cx_.clock().now()) << " process containment: " << procs.describe() << "\n";
    make_reserve(dir / "reserve");
    auto launcher = std::make_shared<JobLauncher>(cx_.launcher(), procs);
    std::atomic<StopReason> reason{StopReason::kNone};
    std::atomic<bool> done{false};
    std::thread watcher([&] {
      std::optional<std::chrono::steady_clock::time_point> kill_at;
      for (int tick = 1; !done; ++tick) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (tick % 10 == 0) launcher->reap_orphans();
        if (reason == StopReason::kNone) {
          StopReason seen = StopReason::kNone;
          try {
            seen = store.read([&] {
              auto j = load_job_by_key(store, job_key);
              if (!j) return StopReason::kDeleted;
              if (j->state == "terminating") return StopReason::kTerminated;
              auto st = store.prepare("SELECT count(*) FROM nodes WHERE job_key = ? AND state = 'running'");
              st.bind(1, job_key);
              const int held = st.step() ? static_cast<int>(st.integer(0)) : 0;
              if (held >= j->node_count) return StopReason::kNone;
              std::string option = "requeue";
              if (auto c = j->cluster_id ? load_cluster(store, *j->cluster_id) : std::nullopt)
                option = value_or<std::string>(c->doc["scaleSettings"].value("manual", Json()), "nodeDeallocationOption",
                                               "requeue");
              if (option == "waitforjobcompletion") return StopReason::kNone;
              return option == "terminate" ? StopReason::kNodesLost : StopReason::kRequeue;
            });
          } catch (const std::exception& e) {
            log::warning(std::string("supervisor: cannot read the job's state: ") + e.what());
          }
          if (seen != StopReason::kNone) {
            reason = seen;
            launcher->signal_all(SIGTERM);
            kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
          }
        } else if (kill_at && std::chrono::steady_clock::now() >= *kill_at) {
          launcher->signal_all(SIGKILL);
          kill_at.reset();
        }
      }
    });
    runtime::SupervisorOptions options;
    if (auto wall = parse_duration(typed.max_wall_clock_time))
      options.max_wall_clock = std::chrono::duration_cast<std::chrono::milliseconds>(*wall);
    options.kill_grace = std::chrono::milliseconds(1000);
    options.signal_job = [&](int signal) { launcher->signal_all(signal); };
    runtime::JobOutcome outcome;
    try {
      outcome = runtime::supervise_job(plan, *launcher, options);
    } catch (const std::exception& e) {
      outcome.errors = job_error("JobFailed", std::string("The supervisor could not run the job: ") + e.what());
    }
    done = true;
    watcher.join();
    // Nothing of the job outlives it: what is in its cgroup, below this supervisor or carries its
    // marker is killed and confirmed gone (release_nodes checks again before freeing the nodes).
    if (auto left = procs.kill_all(std::chrono::seconds(10), launcher->tasks()); !left.empty())
      log::warning("supervisor: " + std::to_string(left.size()) + " process(es) of the job survived SIGKILL");
    // 4. record the outcome and free the nodes
    const StopReason why = reason;
    const bool again = write_despite_full_disk(dir / "reserve", [&] { return store.write([&] {
      auto j = load_job_by_key(store, job_key);
      std::vector<std::int64_t> clusters = release_nodes(store, job_key);
      for (auto c : clusters) docs_.refresh(c);
      if (!j) return false;
      if (why == StopReason::kRequeue) {
        set_state(*j, "queued", now_us());
        j->doc["executionInfo"] = nullptr;
        save_job(store, *j);
        return true;
      }
      if (why == StopReason::kTerminated || j->state == "terminating") {
        finish_job(*j, false, std::nullopt, job_error("JobTerminated", "The job was terminated by the user."), now_us());
      } else if (why == StopReason::kNodesLost) {
        finish_job(*j, false, std::nullopt,
                   job_error("NodesDeallocated",
                             "The cluster was resized below the job's node count (nodeDeallocationOption terminate)."),
                   now_us());
      } else if (outcome.succeeded) {
        finish_job(*j, true, outcome.exit_code, nullptr, now_us());
      } else {
        Json errors = outcome.errors.is_array() ? outcome.errors : job_error("JobFailed", "Job failed");
        std::optional<int> code = outcome.exit_code;
        const std::string first = value_or<std::string>(errors[0], "code", "");
        if (first == "JobFailed" && code) {
          // The SDK's message, keeping the runtime's note about a full filesystem.
          const std::string said = value_or<std::string>(errors[0], "message", "");
          const auto note = said.find("; the filesystem holding ");
          errors[0]["message"] = "Job failed with non-zero exit code" + (note == std::string::npos ? "" : said.substr(note));
        }
        if (first == "JobPreparationFailed" && !code) code = exit_code_in(value_or<std::string>(errors[0], "message", ""));
        finish_job(*j, false, code, errors, now_us());
      }
      save_job(store, *j);
      return false;
    }); });
    fs::remove(dir / "reserve", ec);
    try {
      reconciler_.reconcile();  // the next queued job can start now
    } catch (const Error& e) {
      log::warning(std::string("supervisor: reconcile after the job failed: ") + e.what());
    }
    if (!again) return 0;
  }
}

}  // namespace batchai::control_plane
