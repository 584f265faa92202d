#include "batchai/slurm/client.hpp"

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <system_error>


#include "batchai/common/errors.hpp"

namespace batchai::slurm {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxOutput = 16 * 1024 * 1024;

// A private folder for one command's output files, removed with it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "batchai-slurm-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw SystemError("Cannot create a temporary folder for Slurm's output in " +
                        fs::temp_directory_path().string() + "; check TMPDIR and free space.");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_bounded(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string text;
  char buf[65536];
  while (in && text.size() < kMaxOutput) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > kMaxOutput) text.resize(kMaxOutput);
  return text;
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 300) line.resize(300);
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return line;
}

bool contains(const std::string& text, std::string_view what) { return text.find(what) != std::string::npos; }

}  // namespace

void require_supported(const SlurmVersion& version) {
  if (!version.at_least(kOldestSupported.major, kOldestSupported.minor))
    throw Error("Slurm " + std::to_string(version.major) + "." + std::to_string(version.minor) +
                    " is too old: batchai needs Slurm " + std::to_string(kOldestSupported.major) + "." +
                    std::to_string(kOldestSupported.minor) + " or later.",
                "SlurmTooOld");
}

SlurmClient::SlurmClient(ProcessLauncher& launcher, ClientOptions options)
    : launcher_(launcher), options_(std::move(options)) {
  if (!options_.slurm_conf) {
    if (const char* env = std::getenv("SLURM_CONF"); env != nullptr && *env != '\0') options_.slurm_conf = env;
  }
  if (options_.slurm_conf) {
    const std::string s = options_.slurm_conf->string();
    bool clean = s.size() <= 4096;
    for (char c : s)
      if (static_cast<unsigned char>(c) < 0x20) clean = false;
    if (!options_.slurm_conf->is_absolute() || !clean)
      throw InvalidArgument("SLURM_CONF must be an absolute path to a slurm.conf without control characters.");
  }
  if (options_.command_timeout <= std::chrono::milliseconds(0) || options_.command_timeout > std::chrono::minutes(10))
    throw InvalidArgument("The Slurm command timeout must be between 1 ms and 10 minutes.");
}

SlurmClient::Output SlurmClient::run(const std::vector<std::string>& argv) {
  TempDir dir;
  ProcessSpec spec;
  spec.argv = argv;
  // The environment a node gives its processes, not the caller's (no secrets, no SQUEUE_FORMAT
  // or SLURM_* of an enclosing job changing what the commands print); only SLURM_CONF is added.
  spec.clear_env = true;
  spec.env = node_base_environment();
  if (options_.slurm_conf) spec.env["SLURM_CONF"] = options_.slurm_conf->string();
  spec.stdout_file = dir.path() / "out";
  spec.stderr_file = dir.path() / "err";
  pid_t pid = launcher_.spawn(spec);
  auto exit = launcher_.wait(pid, options_.command_timeout);
  if (!exit) {
    launcher_.signal_group(pid, SIGKILL);
    launcher_.wait(pid, std::nullopt);
    throw SystemError("The Slurm controller does not answer: " + argv[0] + " gave no answer within " +
                          std::to_string(options_.command_timeout.count()) + " ms (" +
                          (options_.slurm_conf ? "SLURM_CONF=" + options_.slurm_conf->string()
                                               : std::string("the system's slurm.conf")) +
                          "). Check that slurmctld runs and is reachable.",
                      "SlurmControllerUnreachable");
  }
  Output out;
  out.exit_code = exit->exit_code;
  out.out = read_bounded(dir.path() / "out");
  out.err = read_bounded(dir.path() / "err");
  return out;
}

void SlurmClient::fail(const std::string& command, const Output& result) {
  const std::string where =
      options_.slurm_conf ? "SLURM_CONF=" + options_.slurm_conf->string() : std::string("the system's slurm.conf");
  if (result.exit_code == 127)
    throw SystemError("Slurm's client commands are not installed (" + command +
                      " not found); install Slurm's client package (Debian: slurm-client).");
  if (contains(result.err, "Unable to contact slurm controller") || contains(result.err, "Connection refused") ||
      contains(result.err, "Could not establish a configuration source"))
    throw SystemError("The Slurm controller does not answer (" + where + "): " + first_line(result.err) +
                          ". Check that slurmctld runs and is reachable.",
                      "SlurmControllerUnreachable");
  throw SystemError(command + " failed with exit code " + std::to_string(result.exit_code) + " (" + where +
                    "): " + first_line(result.err.empty() ? result.out : result.err));
}

std::string SlurmClient::run_checked(const std::vector<std::string>& argv) {
  Output result = run(argv);
  if (result.exit_code != 0) fail(argv[0], result);
  return result.out;
}

const std::map<std::string, std::string>& SlurmClient::config() {
  if (!config_) config_ = parse_scontrol_config(run_checked({"scontrol", "show", "config"}));
  return *config_;
}

SlurmVersion SlurmClient::check_version() {
  auto it = config().find("SLURM_VERSION");
  if (it == config().end())
    throw SystemError("Slurm's configuration (scontrol show config) does not name its version (SLURM_VERSION).");
  SlurmVersion version = parse_slurm_version(it->second);
  require_supported(version);
  return version;
}

std::vector<NodeInfo> SlurmClient::partition_nodes(const std::string& partition) {
  check_partition_name(partition);
  auto nodes = parse_sinfo_nodes(run_checked({"sinfo", "-h", "-N", "-p", partition, "-o", "%N|%T|%c|%m|%o|%G"}));
  if (!nodes.empty()) return nodes;
  // sinfo prints nothing both for an empty partition and for one that does not exist
  Output result = run({"scontrol", "show", "partition", "-o", partition});
  if (result.exit_code != 0 && contains(result.err + result.out, "not found"))
    throw NotFound("Slurm has no partition '" + partition + "'; `sinfo -s` lists the partitions there are.",
                   "SlurmPartitionNotFound");
  if (result.exit_code != 0) fail("scontrol", result);
  return nodes;
}

JobId SlurmClient::submit(const BatchJob& job) {
  BatchSubmission submission = render_batch_job(job);
  for (const fs::path& file : {job.stdout_path, job.stderr_path}) {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec)
      throw SystemError("Cannot create the folder " + file.parent_path().string() + " for the job's output: " +
                        ec.message());
  }
  TempDir dir;
  const fs::path script = dir.path() / "job.sh";
  {
    std::ofstream out(script, std::ios::binary);
    out << submission.script;
    if (!out.flush()) throw SystemError("Cannot write the batch script to " + script.string());
  }
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), submission.sbatch_options.begin(), submission.sbatch_options.end());
  argv.push_back(script.string());  // sbatch copies the script when it submits
  return parse_sbatch_parsable(run_checked(argv));
}

namespace {
// True unless `work_dirs` names a folder for the record's id in which the record's job did not run.
bool of_the_job(const JobInfo& info, const std::map<JobId, fs::path>& work_dirs) {
  auto it = work_dirs.find(info.id);
  return it == work_dirs.end() || is_same_job(info, it->second);
}
}  // namespace

std::map<JobId, JobInfo> SlurmClient::accounting_records(const std::vector<JobId>& ids,
                                                         const std::map<JobId, fs::path>& work_dirs) {
  std::map<JobId, JobInfo> found;
  if (ids.empty()) return found;
  // Without an accounting storage sacct has nothing to say (and says so slowly on some versions).
  const auto& cfg = config();
  const auto storage = cfg.find("AccountingStorageType");
  if (storage == cfg.end() || storage->second == "accounting_storage/none") return found;
  std::string list;
  for (JobId id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  Output out = run({"sacct", "-n", "-P", "-X", "-D", "-j", list, "-o", kSacctFormat});
  if (out.exit_code != 0) return found;  // accounting unreachable: the runner's record decides
  const std::set<JobId> wanted(ids.begin(), ids.end());
  std::size_t start = 0;
  while (start < out.out.size()) {
    std::size_t end = out.out.find('\n', start);
    if (end == std::string::npos) end = out.out.size();
    const auto record = parse_sacct_line(std::string_view(out.out).substr(start, end - start));
    start = end + 1;
    // -D lists every run under an id: the last one of the job's own folder wins.
    if (record && wanted.count(record->id) && of_the_job(*record, work_dirs)) found[record->id] = *record;
  }
  return found;
}

std::optional<JobInfo> SlurmClient::scontrol_job(JobId id) {
  const std::string sid = std::to_string(id);
  Output show = run({"scontrol", "show", "job", "-o", sid});
  if (show.exit_code == 0 && !show.out.empty()) {
    JobInfo info = parse_scontrol_job(show.out.substr(0, show.out.find('\n')));
    if (info.id != id) throw SystemError("scontrol answered for job " + std::to_string(info.id) + ", not " + sid);
    return info;
  }
  if (show.exit_code != 0 && !contains(show.err, "Invalid job id")) fail("scontrol", show);
  return std::nullopt;
}

JobInfo SlurmClient::job(JobId id, const fs::path& work_dir) {
  std::map<JobId, fs::path> work_dirs;
  if (!work_dir.empty()) work_dirs[id] = work_dir;
  auto known = jobs({id}, work_dirs);
  if (known.empty())
    throw NotFound("Slurm does not know job " + std::to_string(id) +
                       (work_dir.empty() ? std::string(": it is neither queued nor running, and no completion record "
                                                       "names it.")
                                         : " as the job of its folder: the id names no job, or another one (a "
                                           "controller that lost the job gives its id out again)."),
                   "SlurmJobNotFound");
  return known.begin()->second;
}

std::map<JobId, JobInfo> SlurmClient::jobs(const std::vector<JobId>& ids, const std::map<JobId, fs::path>& work_dirs) {
  std::map<JobId, JobInfo> out;
  if (ids.empty()) return out;
  std::string list;
  for (JobId id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  Output queue = run({"squeue", "-h", "-t", "all", "-j", list, "-o", kSqueueFormat});
  if (queue.exit_code != 0 && !contains(queue.err, "Invalid job id")) fail("squeue", queue);
  const std::set<JobId> wanted(ids.begin(), ids.end());
  std::vector<JobId> ended;  // asked of the completion record, then scontrol
  std::map<JobId, JobInfo> from_queue;
  if (queue.exit_code == 0) {
    std::size_t start = 0;
    while (start < queue.out.size()) {
      std::size_t end = queue.out.find('\n', start);
      if (end == std::string::npos) end = queue.out.size();
      const std::string line = queue.out.substr(start, end - start);
      start = end + 1;
      if (line.empty()) continue;
      JobInfo info = parse_squeue_line(line);
      if (!wanted.count(info.id)) throw SystemError("squeue answered for job " + std::to_string(info.id) + ", not asked for");
      if (!of_the_job(info, work_dirs)) continue;  // another job under the id: the job's own record is sought
      if (is_final_job_state(info.slurm_state))
        from_queue[info.id] = info;  // the last resort below: it lacks the exit code
      else
        out[info.id] = info;
    }
  }
  std::vector<JobId> purged;  // asked of the accounting storage, where there is one
  for (JobId id : ids) {
    if (out.count(id)) continue;
    if (auto info = scontrol_job(id); info && of_the_job(*info, work_dirs))
      out[id] = *info;
    else
      purged.push_back(id);
  }
  auto records = accounting_records(purged, work_dirs);
  for (JobId id : purged) {
    if (auto it = records.find(id); it != records.end())
      out[id] = it->second;
    else if (auto q = from_queue.find(id); q != from_queue.end())
      out[id] = q->second;
  }
  return out;
}

void SlurmClient::cancel(JobId id, const fs::path& work_dir) {
  // NotFound for an unknown job (scancel itself reports success for those), and for an id that
  // names another job now: the queue entry checked is the job's own.
  JobInfo info = job(id, work_dir);
  if (is_final_job_state(info.slurm_state)) return;
  run_checked({"scancel", std::to_string(id)});
}

}  // namespace batchai::slurm
