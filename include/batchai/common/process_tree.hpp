// Finding and ending every process of a job, wherever it went (other process groups, `setsid`
// sessions, reparented orphans): a cgroup v2 group when the machine lets us make one, else the
// descendants of a child-subreaper supervisor; plus the marker variable BATCHAI_JOB_KEY=<key>
// every job process carries, so the job's processes can be found after its supervisor died.
#pragma once
#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

#include "batchai/common/process.hpp"

namespace batchai {

inline constexpr const char* kJobKeyVariable = "BATCHAI_JOB_KEY";

// One row of /proc/<pid>/stat.
struct ProcInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t sid = 0;
  char state = '?';  // R, S, D, Z, ...
  unsigned long long start_ticks = 0;  // when it started, in clock ticks since boot
};

// Every process visible in /proc (this pid namespace), kernel threads included.
std::vector<ProcInfo> list_processes();
// True when /proc/<pid>/environ holds the entry `name=value` exactly.
bool process_has_env(pid_t pid, const std::string& name, const std::string& value);

// Where this process may make cgroup v2 groups: its own cgroup's folder when cgroup v2 is
// mounted, writable and lets a process move into a new child group; nullopt with `why` if not.
std::optional<std::filesystem::path> writable_cgroup_parent(std::string* why = nullptr);

class JobProcesses {
 public:
  enum class Mode { kCgroup, kSubreaper };

  // For the job's supervisor: makes this process a child subreaper and, unless `preference`
  // is "subreaper" or the machine does not allow it, creates batchai-job-<key>, a child group
  // of its own cgroup v2 group ("auto" or "cgroup"; both fall back, saying why in describe()).
  static JobProcesses contain(const std::string& job_key, const std::string& preference);
  // For anyone else (the reconcile that finds the supervisor dead, job delete): the job's
  // recorded cgroup (empty when none) and its marker; no descendant walk.
  JobProcesses(std::string job_key, std::filesystem::path cgroup);

  Mode mode() const { return cgroup_.empty() ? Mode::kSubreaper : Mode::kCgroup; }
  const std::filesystem::path& cgroup() const { return cgroup_; }
  // "cgroup <path>" or "subreaper (<why no cgroup>)", for the job's execution log.
  std::string describe() const;

  // What every job process gets: the marker variable and (cgroup mode) the group to join.
  void adopt(ProcessSpec& spec) const;
  // The job's live processes now, never this process: cgroup members, marked processes and,
  // for the supervisor, the subtrees below its children that are `tasks` or marked (orphans
  // reparented to it included; a child it started for something else is left alone).
  std::vector<pid_t> members(const std::set<pid_t>& tasks = {}) const;
  // Sends `signal` to members(tasks).
  void signal_all(int signal, const std::set<pid_t>& tasks = {}) const;
  // SIGKILLs members (cgroup.kill first where there is one) until none is left, reaping those
  // that are this process's children, then removes the cgroup. Returns who still lived when
  // `limit` ran out (empty: confirmed gone).
  std::vector<pid_t> kill_all(std::chrono::milliseconds limit, const std::set<pid_t>& tasks = {}) const;

 private:
  JobProcesses() = default;
  // members() in one snapshot of the process table.
  std::vector<pid_t> members(const std::set<pid_t>& tasks, const std::vector<ProcInfo>& procs) const;

  std::string key_;
  std::filesystem::path cgroup_;
  bool supervisor_ = false;  // this process is the job's subreaper
  // Only processes started since (clock ticks since boot) can carry the marker: older ones are
  // not read for it (one whose start could not be read always is). 0 for whoever did not make
  // the containment (start unknown).
  unsigned long long started_ticks_ = 0;
  std::string fallback_why_;
};

// Reaps this process's exited children that are not in `keep` (orphans a subreaper adopted),
// so they do not pile up as zombies while the job runs.
void reap_orphans(const std::set<pid_t>& keep);
// The same in a snapshot already taken.
void reap_orphans(const std::set<pid_t>& keep, const std::vector<ProcInfo>& procs);

// Moves this process out of a job's cgroup (batchai-job-*) into that group's parent, so a
// supervisor started from inside a job does not end with that job. No-op elsewhere.
void leave_job_cgroup();

}  // namespace batchai
