// The stand-in Slurm commands of fake_slurm.hpp.
#include "fake_slurm.hpp"

#include <sstream>

namespace batchai::slurm_testing {

namespace {
const std::set<std::string> kSlurmCommands = {"sinfo", "squeue", "scontrol", "sbatch", "scancel", "srun"};

ProcessSpec answer(const ProcessSpec& spec, const std::string& out, int exit_code = 0, const std::string& err = "") {
  ProcessSpec fake = spec;
  fake.argv = {"/bin/sh", "-c", "printf %s \"$1\"; printf %s \"$2\" >&2; exit " + std::to_string(exit_code), "sh",
               out, err};
  return fake;
}

// The ids of squeue's -j list.
std::set<unsigned long> asked_ids(const std::vector<std::string>& argv) {
  std::set<unsigned long> ids;
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "-j") {
      std::stringstream list(argv[i + 1]);
      std::string id;
      while (std::getline(list, id, ',')) ids.insert(std::stoul(id));
    }
  return ids;
}
}  // namespace

pid_t FakeSlurm::spawn(const ProcessSpec& spec) {
  if (spec.argv.empty() || !kSlurmCommands.count(spec.argv[0])) return real_->spawn(spec);
  std::lock_guard<std::mutex> lock(mutex_);
  commands_.push_back(spec.argv);
  const std::string& cmd = spec.argv[0];
  if (silent) {
    ProcessSpec hang = spec;
    hang.argv = {"sleep", "30"};  // a controller that is gone: the client's bound ends it
    return real_->spawn(hang);
  }
  if (cmd == "sinfo")
    return real_->spawn(answer(spec, "node1|idle|2|2048|127.0.0.1|(null)\nnode2|idle|2|2048|127.0.0.1|(null)\n"));
  if (cmd == "scontrol" && spec.argv.size() > 1 && spec.argv[1] == "show" && spec.argv[2] == "config")
    return real_->spawn(answer(spec, "SLURM_VERSION = 22.05.8\nJobCompType = jobcomp/none\n"));
  if (cmd == "scontrol") return real_->spawn(answer(spec, "", 1, "slurm_load_jobs error: Invalid job id specified\n"));
  if (cmd == "sbatch") {
    const unsigned long id = next_job_id++;
    queue[id] = "PENDING";
    for (const std::string& arg : spec.argv)
      if (arg.rfind("--chdir=", 0) == 0) work_dirs[id] = arg.substr(8);
    return real_->spawn(answer(spec, std::to_string(id) + "\n"));
  }
  if (cmd == "squeue") {
    std::ostringstream out;
    const auto asked = asked_ids(spec.argv);
    for (const auto& [id, state] : queue)
      if (asked.count(id))
        out << id << "|" << state << "|1|" << (state == "RUNNING" ? "node1" : "") << "|" << work_dirs[id] << "\x1f"
            << (reasons.count(id) ? reasons[id] : "None") << "\n";
    return real_->spawn(answer(spec, out.str()));
  }
  return real_->spawn(answer(spec, ""));  // scancel, srun
}

int FakeSlurm::slurm_commands() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(commands_.size());
}

std::vector<std::vector<std::string>> FakeSlurm::commands() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return commands_;
}

}  // namespace batchai::slurm_testing
