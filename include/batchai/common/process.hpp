// Starting and stopping real processes (setup tasks, job preparation, jobs, mpirun, supervisors)
// behind one seam, so launch logic can be tested without processes and fakes can be injected.
#pragma once
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace batchai {

struct ProcessSpec {
  std::vector<std::string> argv;                  // argv[0] is looked up on PATH
  std::map<std::string, std::string> env;         // added to (and overriding) the inherited environment
  std::vector<std::string> unset_env;             // removed from the inherited environment
  bool clear_env = false;                         // inherit nothing: the child gets exactly `env`
  std::filesystem::path cwd;                      // empty = inherit
  std::optional<std::filesystem::path> stdout_file;  // nullopt = inherit
  std::optional<std::filesystem::path> stderr_file;  // nullopt = inherit; may equal stdout_file
  bool append = false;                            // append to the output files instead of truncating
  bool stdin_null = true;                         // read /dev/null instead of inheriting stdin
  bool new_session = true;                        // setsid(): own process group, killable as a tree
  // A cgroup v2 folder the child joins (writes itself into its cgroup.procs) before exec, so
  // that everything it starts can be found and killed as one; empty = stay where it is.
  std::filesystem::path cgroup;
};

struct ProcessExit {
  int exit_code = -1;   // the child's exit status, or 128 + signal when killed by a signal
  bool signaled = false;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts the process and returns its pid (the process-group id when new_session).
  virtual pid_t spawn(const ProcessSpec& spec) = 0;
  // Blocks until `pid` (a child of this process) exits; nullopt when `timeout` passed first.
  virtual std::optional<ProcessExit> wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) = 0;
  // Blocks until one of `pids` (children of this process) exits or `timeout` passes; returns the
  // one reaped with its exit, nullopt on timeout. The POSIX launcher sleeps on pidfds, so an exit
  // is seen at once; this default asks wait() of each in turn with short sleeps between rounds.
  virtual std::optional<std::pair<pid_t, ProcessExit>> wait_any(const std::vector<pid_t>& pids,
                                                                std::chrono::milliseconds timeout);
  // spawn + wait.
  ProcessExit run(const ProcessSpec& spec) { return *wait(spawn(spec), std::nullopt); }
  // Sends `signal` to the whole process group `pgid`; true when it existed.
  virtual bool signal_group(pid_t pgid, int signal) = 0;
  // Starts a fully detached process (double fork, own session, reparented to init or the
  // nearest subreaper) that survives this process; returns its pid once it has exec'd (or
  // failed to). Used for job supervisors and setup tasks.
  virtual pid_t spawn_detached(const ProcessSpec& spec) = 0;
};

std::unique_ptr<ProcessLauncher> make_posix_process_launcher();

// True when a process with this pid exists (kill(pid, 0)).
bool process_alive(pid_t pid);
// Path of the running executable (/proc/self/exe), for re-invoking hidden subcommands.
std::filesystem::path self_executable();

// The environment a (simulated) node gives the processes it starts, never the caller's own:
// PATH of the system's default folders behind the running batchai's own folder (so that a
// job's `batchai ...` is this one; docs/job-runtime.md §4.8), HOME/USER/LOGNAME/SHELL of the effective user,
// LANG/LC_ALL from the machine's locale settings (/etc/default/locale, /etc/locale.conf),
// TMPDIR when set, and batchai's own BATCHAI_* settings (BATCHAI_HOME, BATCHAI_SIM_DELAY_S...)
// that the hidden subcommands read, except a job's BATCHAI_JOB_KEY. Everything else of the
// caller (AZURE_STORAGE_KEY, LD_PRELOAD, ...) stays out. Used with ProcessSpec::clear_env.
std::map<std::string, std::string> node_base_environment();

}  // namespace batchai
