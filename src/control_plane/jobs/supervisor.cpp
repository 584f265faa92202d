// The detached per-job supervisor (`batchai _supervise --job-key K`): holds the job's lock for
// its lifetime, waits until the scheduler gives the job its nodes, links the job-level mounts,
// runs the launch plan with runtime::supervise_job inside the job's containment (cgroup or
// child subreaper, marker variable) while a watcher thread stops every job process on
// terminate/delete/lost nodes, kills what is left, records the outcome (even on a full disk),
// frees the nodes and places the cluster's queue on them in the same transaction. Then it lets
// the job's lock go and, up to a bound, supervises one of the jobs it placed itself.
#include "supervisor.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "batchai/common/ids.hpp"
#include "batchai/common/log.hpp"
#include "batchai/common/process.hpp"
#include "batchai/common/process_tree.hpp"
#include "jobs/idle_supervisors.hpp"
#include "jobs/job_wake.hpp"
#include "cluster_docs.hpp"
#include "context.hpp"
#include "reconciler.hpp"
#include "job_containers.hpp"
#include "job_processes.hpp"
#include "scheduler.hpp"
#include "store/jobs.hpp"
#include "job_run.hpp"
#include "vm_sizes.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane {

using namespace detail;
using namespace jobs_detail;

namespace {

// What the supervisor's steps work with, as the control plane handed them to it.
struct SupervisorDeps {
  const Context& cx;
  Reconciler& reconciler;
  Scheduler& scheduler;
  const ClusterDocs& docs;
  Store& store() const { return cx.store(); }
  const NodeLayout& layout() const { return cx.layout(); }
  const Clock& clock() const { return cx.clock(); }
  void reconcile() const { reconciler.reconcile(); }
};

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
  const auto head = queue_head(store, *job.cluster_id);
  return !head || *head == job.key;
}

// The job's supervisor lock, held while this process supervises the job (a supervisor whose job
// has ended lets it go before it takes the next job's).
class JobLock {
 public:
  // Takes the lock in `dir` and writes this process's pid into it; held() is false when another
  // supervisor has it.
  explicit JobLock(const fs::path& dir) {
    fd_ = ::open((dir / "supervisor.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
    if (fd_ < 0) return;
    const std::string pid_text = std::to_string(::getpid()) + "\n";  // for people and tests
    if (::ftruncate(fd_, 0) != 0 || ::write(fd_, pid_text.data(), pid_text.size()) < 0)
      log::warning("supervisor: cannot write its pid into the lock file");
  }
  ~JobLock() { release(); }
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  JobLock(const JobLock&) = delete;
  JobLock& operator=(const JobLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Points this process's output and working folder at the job's bookkeeping folder, as
// spawn_supervisor does for a new process: a supervisor that takes another job logs into that one's.
void move_into(const fs::path& dir) {
  const int fd = ::open((dir / "supervisor.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  if (::chdir(dir.c_str()) != 0) log::warning("supervisor: cannot enter " + dir.string());
}

// False when the job is gone.
bool record_supervisor_pid(Store& store, const std::string& job_key) {
  return store.write([&] {
    auto j = load_job_by_key(store, job_key);
    if (!j) return false;
    j->sup_pid = ::getpid();
    save_job(store, *j);
    return true;
  });
}

// Waits until the scheduler gives the job its nodes (it runs in every reconcile and wakes us when
// it does); nullopt when the job is gone or has ended. Only the head of the cluster's queue keeps
// reconciling (for what no command announces: provisioning that ends as time passes); the others
// read their state and, as a safety net, reconcile rarely: hundreds of waiting supervisors
// reconciling every second kept the store's write lock from the commands that submit jobs.
std::optional<JobRow> wait_for_nodes(const SupervisorDeps& cp, const std::string& job_key, JobWake& wake) {
  Store& store = cp.store();
  auto last_reconcile = std::chrono::steady_clock::time_point{};
  bool reconciled = false;  // since the last read: read again before waiting
  for (int round = 0;;) {
    auto job = store.read([&] { return load_job_by_key(store, job_key); });
    if (!job || job->state == JobState::kSucceeded || job->state == JobState::kFailed) return std::nullopt;
    if (job->state == JobState::kRunning) return job;  // the command that made it usually started it
    const bool head = store.read([&] { return heads_its_queue(store, *job); });
    const auto now = std::chrono::steady_clock::now();
    if (!reconciled && (head || now - last_reconcile >= kWaitingReconcileEvery)) {
      cp.reconcile();
      last_reconcile = now;
      reconciled = true;
      continue;
    }
    reconciled = false;
    wake.wait(std::chrono::milliseconds(std::min(20 + round++ * 10, 1000)));
  }
}

// The nodes the scheduler gave the job, all on this machine; nullopt when they or the cluster are gone.
std::optional<Placement> nodes_from_store(const SupervisorDeps& cp, const JobRow& job) {
  Store& store = cp.store();
  auto [nodes, cluster] = store.read([&] {
    return std::make_pair(job_nodes(store, job.key), job.cluster_id ? load_cluster(store, *job.cluster_id) : std::nullopt);
  });
  if (!cluster || nodes.empty()) return std::nullopt;
  Placement placement;
  const int gpus = vm_size_info(value_or<std::string>(cluster->doc, "vmSize", "")).gpus;
  for (const auto& [node_id, ordinal] : nodes)
    placement.nodes.push_back(
        {node_id, cp.layout().node(cluster->resource_group, cluster->workspace, cluster->name, node_id), "localhost", gpus});
  return placement;
}

// The plan over the job's nodes. When there is none, the job fails, its nodes are freed and the
// scheduler runs (nullopt).
std::optional<PlacedRun> place_or_fail(const SupervisorDeps& cp, const JobRow& job) {
  std::string plan_error = "The job's cluster or nodes are gone.";
  if (auto placement = nodes_from_store(cp, job)) {
    try {
      return place_run(cp.layout(), job, std::move(*placement));
    } catch (const std::exception& e) {
      plan_error = std::string("The job cannot be launched: ") + e.what();
    }
  }
  Store& store = cp.store();
  store.write([&] {
    auto j = load_job_by_key(store, job.key);
    if (!j) return;
    finish_job(*j, false, std::nullopt, job_error("JobFailed", plan_error), to_us(cp.clock().now()));
    save_job(store, *j);
    for (auto c : release_nodes(store, job.key)) cp.docs.refresh(c);
  });
  cp.reconcile();
  return std::nullopt;
}

// What stops the running job: terminate, delete, or fewer running nodes than it needs (requeued
// or ended as the cluster's nodeDeallocationOption says; waitforjobcompletion lets it run).
StopReason stop_reason(Store& store, const std::string& job_key) {
  return store.read([&] {
    auto j = load_job_by_key(store, job_key);
    if (!j) return StopReason::kDeleted;
    if (j->state == JobState::kTerminating) return StopReason::kTerminated;
    const int held = running_node_count(store, job_key);
    if (held >= j->node_count) return StopReason::kNone;
    std::string option = "requeue";
    if (auto c = j->cluster_id ? load_cluster(store, *j->cluster_id) : std::nullopt)
      option = value_or<std::string>(c->doc["scaleSettings"].value("manual", Json()), "nodeDeallocationOption", "requeue");
    if (option == "waitforjobcompletion") return StopReason::kNone;
    return option == "terminate" ? StopReason::kNodesLost : StopReason::kRequeue;
  });
}

// Marks the job's task started before anything of it runs (store/jobs.hpp, TaskStart): kMarked
// when this process may start it. A job whose task was started before by a supervisor now dead (this
// one holds the job's lock) ends failed, its processes stopped and its nodes freed.
TaskStart mark_or_fail(const SupervisorDeps& cp, const std::string& job_key) {
  Store& store = cp.store();
  const std::string me = "pid " + std::to_string(::getpid());
  const TaskStart mark = store.write([&] {
    const TaskStart marked = mark_task_started(store, job_key, me);
    if (marked != TaskStart::kStartedBefore) return marked;
    auto j = load_job_by_key(store, job_key);
    if (!j) return marked;
    const std::string before = task_started_by(store, job_key).value_or("");
    log::warning("supervisor: job " + job_key + ": its task was started before (" + before +
                 "), whose supervisor is gone; the job fails instead of running again");
    finish_job(*j, false, std::nullopt, supervisor_died_error(before, j->state), to_us(cp.clock().now()));
    save_job(store, *j);
    for (auto c : release_nodes(store, job_key)) cp.docs.refresh(c);
    return marked;
  });
  if (mark == TaskStart::kStartedBefore) cp.reconcile();
  return mark;
}

// Runs the plan inside the job's containment, watching the store for terminate/delete/lost nodes.
RunResult run_on_nodes(const SupervisorDeps& cp, const std::string& job_key, const fs::path& dir, const PlacedRun& run) {
  RunOptions options;
  options.who = "supervisor";
  options.runner = "supervisor";
  options.should_stop = [&](int) { return stop_reason(cp.store(), job_key); };
  options.on_contained = [&](const JobProcesses& procs) {
    // The cgroup is recorded first, so whoever finds this supervisor dead can end the job.
    std::error_code ec;
    if (procs.mode() == JobProcesses::Mode::kCgroup) std::ofstream(dir / "cgroup") << procs.cgroup().string() << "\n";
    else fs::remove(dir / "cgroup", ec);
    make_reserve(dir / "reserve");
  };
  // Nothing of the job outlives it (confirmed gone, else release_nodes keeps its nodes).
  return run_contained(run_host(cp.cx, job_key), job_key, run, options);
}

// A run that ended by itself: succeeded, or failed with the runtime's errors in the SDK's words.
void finish_from_outcome(JobRow& job, const runtime::JobOutcome& outcome, std::int64_t now_us) {
  if (outcome.succeeded) {
    finish_job(job, true, outcome.exit_code, nullptr, now_us);
    return;
  }
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
  finish_job(job, false, code, errors, now_us);
}

// How the run ended, in the job's document: terminated, its nodes lost, or its own outcome.
void record_outcome(JobRow& job, const RunResult& result, std::int64_t now) {
  if (result.stopped == StopReason::kTerminated || job.state == JobState::kTerminating) {
    finish_job(job, false, std::nullopt, job_error("JobTerminated", "The job was terminated by the user."), now);
  } else if (result.stopped == StopReason::kNodesLost) {
    finish_job(job, false, std::nullopt,
               job_error("NodesDeallocated",
                         "The cluster was resized below the job's node count (nodeDeallocationOption terminate)."),
               now);
  } else {
    finish_from_outcome(job, result.outcome, now);
  }
}

// The cluster whose nodes a job's end freed and the jobs placed on them.
struct Freed {
  std::int64_t cluster = 0;
  std::vector<std::string> placed;
};

// Inside a write transaction: records how the job's run ended, frees its nodes and gives them to
// the cluster's queue. True when the job was requeued (its supervisor waits for nodes again).
bool record_end(const SupervisorDeps& cp, const std::string& job_key, const RunResult& result, Freed& freed) {
  Store& store = cp.store();
  auto j = load_job_by_key(store, job_key);
  const std::int64_t now = to_us(cp.clock().now());
  const bool requeued = j && result.stopped == StopReason::kRequeue;
  if (j) {
    if (requeued) {
      set_state(*j, JobState::kQueued, now);
      j->doc["executionInfo"] = nullptr;
      forget_task_start(store, job_key);  // this live supervisor runs it again once it has nodes
    } else {
      record_outcome(*j, result, now);
    }
    save_job(store, *j);
  }
  for (auto c : result.processes_gone ? free_nodes(store, job_key) : release_nodes(store, job_key)) {
    cp.docs.refresh(c);
    freed.cluster = c;  // a job's nodes are all of one cluster
    for (auto& key : cp.scheduler.place_queued(c, now)) freed.placed.push_back(std::move(key));
  }
  return requeued;
}

// The first of the jobs just placed that has no supervisor, claimed for this process to run next
// (removed from `placed`); nullopt when none or when this process is not to take one.
std::optional<std::string> take_one(const SupervisorDeps& cp, std::vector<std::string>& placed, bool adopt) {
  if (!adopt) return std::nullopt;
  for (auto it = placed.begin(); it != placed.end(); ++it) {
    if (supervisor_alive(cp.layout(), *it) || !claim_supervisor_start(cp.layout(), *it)) continue;
    std::string key = std::move(*it);
    placed.erase(it);
    return key;
  }
  return std::nullopt;
}

// The running jobs of the cluster that no supervisor ever took (placed, their supervisor not yet
// there); one of them claimed for this process (removed from the list), the others left to
// start_placed. A running job whose supervisor died is never among them: the scheduler fails it.
std::optional<std::string> claim_unsupervised(const SupervisorDeps& cp, std::int64_t cluster,
                                              std::vector<std::string>& others) {
  Store& store = cp.store();
  std::vector<std::string> running = store.read([&] { return never_supervised_running_jobs(store, cluster); });
  std::optional<std::string> mine;
  for (auto& key : running) {
    if (supervisor_alive(cp.layout(), key)) continue;
    if (!mine && claim_supervisor_start(cp.layout(), key)) {
      mine = std::move(key);
      continue;
    }
    others.push_back(std::move(key));
  }
  return mine;
}

// A supervisor with nothing placed on the nodes it freed waits a moment for the cluster's next
// job (idle_supervisors.hpp), then claims a running job of the cluster without a supervisor.
std::optional<std::string> wait_for_next_job(const SupervisorDeps& cp, std::int64_t cluster) {
  IdleSupervisorPlace place(cp.layout(), cluster);
  if (!place.held()) return std::nullopt;
  place.wait_then_leave(kIdleSupervisorWait);
  std::vector<std::string> others;
  auto mine = claim_unsupervised(cp, cluster, others);
  if (!others.empty()) cp.scheduler.start_placed(cluster, others, cp.cx.now_us());
  return mine;
}

// How many jobs one supervisor process runs, one after another, before it leaves the next start
// to a fresh process: a bound on whatever a long life could gather (memory, a leaked descriptor).
constexpr int kMaxJobsPerSupervisor = 32;

// Supervises one job from its lock to its end (requeues included). With `adopt`, one of the jobs
// placed on the nodes it freed is returned instead of a new supervisor process starting for it:
// this process supervises it next, saving a process start per job on a busy cluster.
std::optional<std::string> supervise_one(const SupervisorDeps& cp, const std::string& job_key, bool adopted,
                                         bool adopt) {
  Store& store = cp.store();
  const fs::path dir = state_dir(cp.layout(), job_key);
  fs::create_directories(dir);
  if (adopted) move_into(dir);
  JobLock lock(dir);
  if (!lock.held()) return std::nullopt;  // another supervisor has it
  leave_job_cgroup();  // started from inside another job: it must not end with that job
  std::error_code not_there;
  fs::remove(dir / kSupervisorStartingFile, not_there);  // the lock says it from now on
  if (!record_supervisor_pid(store, job_key)) return std::nullopt;
  JobWake wake(dir / kJobWakeFile);  // made before the first read below: no wake-up is lost
  for (;;) {
    // 1. wait for nodes; 2. the plan over them
    const auto job = wait_for_nodes(cp, job_key, wake);
    if (!job) return std::nullopt;
    auto run = place_or_fail(cp, *job);
    if (!run) return std::nullopt;
    record_run_place(store, job_key, *run);  // where `job file list` looks, before anything runs
    // 3. mark its task started, run it; 4. record the outcome, free the nodes and place the queue on them
    const TaskStart mark = mark_or_fail(cp, job_key);
    if (mark == TaskStart::kNotRunning) continue;  // ended (the wait returns) or queued again meanwhile
    if (mark == TaskStart::kStartedBefore) return std::nullopt;
    const RunResult result = run_on_nodes(cp, job_key, dir, *run);
    Freed freed;
    const bool again = write_despite_full_disk(dir / "reserve", [&] {
      freed = Freed{};
      return store.write([&] { return record_end(cp, job_key, result, freed); });
    });
    std::error_code ec;
    fs::remove(dir / "reserve", ec);
    remove_job_containers(containers_record(cp.layout(), job_key), job_key);  // after the end is stored
    std::optional<std::string> next;
    if (!again) {
      lock.release();  // the end is stored: whoever looks now finds the job ended and its lock free
      next = take_one(cp, freed.placed, adopt);
    }
    try {
      cp.scheduler.start_placed(freed.cluster, freed.placed, cp.cx.now_us());
      cp.reconcile();
      if (!again && !next && adopt && freed.cluster != 0) next = wait_for_next_job(cp, freed.cluster);
    } catch (const Error& e) {
      log::warning(std::string("supervisor: reconcile after the job failed: ") + e.what());
    }
    if (!again) return next;
  }
}

}  // namespace


int Supervisor::run(const std::string& first_key) {
  const SupervisorDeps cp{cx_, reconciler_, scheduler_, docs_};
  ::prctl(PR_SET_NAME, "batchai-sup");  // what top and perf show: supervisors apart from commands
  std::string job_key = first_key;
  for (int served = 1;; ++served) {
    if (!is_job_key(job_key))  // the key names a folder under the home: never a path
      throw InvalidArgument("The job key '" + job_key + "' is not a job key (a lower-case UUID).");
    auto next = supervise_one(cp, job_key, served > 1, served < kMaxJobsPerSupervisor);
    if (!next) return 0;
    job_key = std::move(*next);
  }
}

}  // namespace batchai::control_plane
