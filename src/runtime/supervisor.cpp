// Executes launch plans: preparation on every node, the main tasks, wall-clock limit, outcome.
#include "batchai/runtime/supervisor.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>

#include <sys/statvfs.h>
#include <unistd.h>

#include "batchai/common/clock.hpp"

namespace batchai::runtime {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Json batchai_error(const std::string& code, const std::string& message) {
  return Json::array({{{"code", code}, {"message", message}, {"details", nullptr}}});
}

std::uintmax_t statvfs_free(const fs::path& dir) {
  struct statvfs s {};
  if (::statvfs(dir.c_str(), &s) != 0) return UINTMAX_MAX;  // unknown: not reported as full
  // root may use the blocks reserved for it; others only the available ones.
  const auto blocks = ::geteuid() == 0 ? s.f_bfree : s.f_bavail;
  return static_cast<std::uintmax_t>(blocks) * s.f_frsize;
}

class Runner {
 public:
  Runner(const LaunchPlan& plan, ProcessLauncher& launcher, const SupervisorOptions& options)
      : plan_(plan), launcher_(launcher), options_(options), deadline_(Clock::now() + options.max_wall_clock) {}

  JobOutcome run() {
    JobOutcome outcome;
    try {
      prepare_files();
    } catch (const std::exception& e) {
      return finish(fail("JobFolderCreationFailed", std::string("could not create the job's folders: ") + e.what()));
    }
    log("job started");
    for (const auto& r : plan_.requirements) {
      const auto& env = plan_.tasks.empty() ? std::map<std::string, std::string>{} : plan_.tasks[0].process.env;
      if (!program_available(r.program, env)) {
        std::string message = "'" + r.program + "' was not found: " + r.reason + ".";
        append(plan_.stdouterr_dir / "stderr.txt", "batchai: " + message + "\n");
        return finish(fail("ToolkitNotFound", message));
      }
    }
    if (!plan_.preparation.empty()) {
      notify("preparing", nullptr);
      log("job preparation started on " + std::to_string(plan_.preparation.size()) + " node(s)");
      auto codes = run_group(plan_.preparation);
      if (!codes) return finish(timed_out());
      for (std::size_t i = 0; i < codes->size(); ++i) {
        if ((*codes)[i] != 0) {
          return finish(fail("JobPreparationFailed", "Job preparation failed on node " + std::to_string(i) +
                                                         " with exit code " + std::to_string((*codes)[i]) +
                                                         full_note() + "; see " +
                                                         plan_.preparation[i].process.stderr_file->filename().string()));
        }
      }
      log("job preparation succeeded");
    }
    notify("running", nullptr);
    log("main tasks started: " + std::to_string(plan_.tasks.size()));
    auto codes = run_group(plan_.tasks);
    if (!codes) return finish(timed_out());
    int exit_code = 0;
    for (std::size_t i = 0; i < codes->size(); ++i) {
      if (plan_.tasks[i].wait_for && (*codes)[i] != 0 && exit_code == 0) exit_code = (*codes)[i];
    }
    outcome.exit_code = exit_code;
    outcome.succeeded = exit_code == 0;
    if (!outcome.succeeded)
      outcome.errors = batchai_error("JobFailed", "The job process exited with code " + std::to_string(exit_code) + full_note());
    log("job finished with exit code " + std::to_string(exit_code));
    return finish(outcome);
  }

 private:
  void prepare_files() {
    for (const auto& d : plan_.directories) fs::create_directories(d);
    fs::create_directories(plan_.stdouterr_dir);
    if (!plan_.hostfile.empty()) {
      fs::create_directories(plan_.hostfile.parent_path());
      std::ofstream(plan_.hostfile) << plan_.hostfile_contents;
    }
    if (!plan_.rank_nodes_contents.empty()) {
      fs::create_directories(plan_.rank_nodes_file.parent_path());
      std::ofstream(plan_.rank_nodes_file) << plan_.rank_nodes_contents;
    }
  }

  // Starts every task, waits for the waited-for ones, then stops the rest. nullopt on timeout
  // (everything killed). Exit codes in task order (stopped tasks report their signal code).
  std::optional<std::vector<int>> run_group(const std::vector<TaskPlan>& tasks) {
    std::vector<pid_t> pids;
    std::vector<std::optional<int>> codes(tasks.size());
    for (const auto& t : tasks) {
      ProcessSpec spec = t.process;
      spec.new_session = true;
      pids.push_back(launcher_.spawn(spec));
    }
    auto pending = [&](bool waited_only) {
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (!codes[i] && (!waited_only || tasks[i].wait_for)) return true;
      }
      return false;
    };
    while (pending(true)) {
      const auto now = Clock::now();
      if (now >= deadline_) {
        stop(pids, codes);
        return std::nullopt;
      }
      std::vector<pid_t> running;
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (!codes[i]) running.push_back(pids[i]);
      }
      const auto limit = std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now) +
                                      std::chrono::milliseconds(1),
                                  options_.longest_wait);
      auto exited = launcher_.wait_any(running, limit);
      if (!exited) continue;
      const auto i = static_cast<std::size_t>(std::find(pids.begin(), pids.end(), exited->first) - pids.begin());
      codes[i] = exited->second.exit_code;
      // Whatever the task left behind in its group (e.g. orphaned MPI ranks) goes too.
      launcher_.signal_group(pids[i], SIGKILL);
    }
    stop(pids, codes);
    std::vector<int> out;
    for (const auto& c : codes) out.push_back(c.value_or(-1));
    return out;
  }

  void stop(const std::vector<pid_t>& pids, std::vector<std::optional<int>>& codes) {
    if (std::all_of(codes.begin(), codes.end(), [](const auto& c) { return c.has_value(); })) return;  // the caller kills what is left
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (!codes[i]) launcher_.signal_group(pids[i], SIGTERM);
    }
    if (options_.signal_job) options_.signal_job(SIGTERM);
    const auto grace_end = Clock::now() + options_.kill_grace;
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (codes[i]) continue;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(grace_end - Clock::now());
      auto e = launcher_.wait(pids[i], std::max(left, std::chrono::milliseconds(0)));
      launcher_.signal_group(pids[i], SIGKILL);
      if (options_.signal_job) options_.signal_job(SIGKILL);
      if (!e) e = launcher_.wait(pids[i], std::nullopt);
      codes[i] = e->exit_code;
    }
  }

  // ": the filesystem holding <dir> is full ..." when one of the job's folders has no space
  // left: a job that filled the disk fails saying so, not with a bare exit code.
  std::string full_note() const {
    std::vector<fs::path> dirs = {plan_.stdouterr_dir};
    dirs.insert(dirs.end(), plan_.directories.begin(), plan_.directories.end());
    for (const auto& d : dirs) {
      const std::uintmax_t free = options_.free_space ? options_.free_space(d) : statvfs_free(d);
      if (free < kFullFilesystemBytes)
        return "; the filesystem holding " + d.string() + " is full (no space left on device): free space there "
               "and submit the job again";
    }
    return {};
  }

  JobOutcome timed_out() {
    return fail("JobTimedOut", "The job ran longer than its maxWallClockTime (" +
                                   format_timedelta(std::chrono::duration_cast<Micros>(options_.max_wall_clock)) +
                                   ") and was stopped");
  }

  JobOutcome fail(const std::string& code, const std::string& message) {
    JobOutcome o;
    o.errors = batchai_error(code, message);
    log("error " + code + ": " + message);
    return o;
  }

  JobOutcome finish(JobOutcome o) {
    notify(o.succeeded ? "succeeded" : "failed", &o);
    return o;
  }

  void notify(const std::string& state, const JobOutcome* o) {
    if (options_.record) options_.record(state, o);
  }

  static void append(const fs::path& file, const std::string& text) {
    std::ofstream(file, std::ios::app) << text;
  }

  void log(const std::string& line) {
    std::error_code ec;
    if (!fs::is_directory(plan_.stdouterr_dir, ec)) return;
    append(plan_.execution_log, format_iso(SystemClock().now()) + " " + line + "\n");
  }

  const LaunchPlan& plan_;
  ProcessLauncher& launcher_;
  const SupervisorOptions& options_;
  Clock::time_point deadline_;
};

}  // namespace

bool program_available(const std::string& program, const std::map<std::string, std::string>& env) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  std::string path;
  if (auto it = env.find("PATH"); it != env.end()) path = it->second;
  else if (const char* p = std::getenv("PATH")) path = p;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    fs::path candidate = fs::path(end > start ? path.substr(start, end - start) : ".") / program;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return true;
    start = end + 1;
  }
  return false;
}

JobOutcome supervise_job(const LaunchPlan& plan, ProcessLauncher& launcher, const SupervisorOptions& options) {
  return Runner(plan, launcher, options).run();
}

}  // namespace batchai::runtime
