#include "batchai/slurm/batch_script.hpp"

#include <limits>

#include "batchai/common/errors.hpp"

namespace batchai::slurm {
namespace {

constexpr int kMaxNodes = 1000;
constexpr int kMaxMinutes = 525600;
constexpr int kMaxNice = 10000;
constexpr std::size_t kMaxEnv = 1000;
constexpr std::size_t kMaxEnvValue = 64 * 1024;
constexpr std::size_t kMaxCommand = 64 * 1024;
constexpr const char* kHostListCharacters =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-,[]";

[[noreturn]] void refuse(const std::string& field, const std::string& rule) {
  throw InvalidArgument("Cannot submit the Slurm job: " + field + " " + rule + ".");
}

bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

void check_text(const std::string& field, const std::string& value, std::size_t min, std::size_t max) {
  if (value.size() < min || value.size() > max)
    refuse(field, "must have " + std::to_string(min) + " to " + std::to_string(max) + " characters");
  for (char c : value)
    if (is_control(c)) refuse(field, "must not contain newlines or control characters");
}

void check_path(const std::string& field, const std::filesystem::path& path, bool slurm_pattern) {
  const std::string s = path.string();
  if (s.empty() || !path.is_absolute()) refuse(field, "must be an absolute path");
  check_text(field, s, 1, 4096);
  if (slurm_pattern && s.find_first_of("%\\") != std::string::npos)
    refuse(field, "must not contain '%' or '\\' (sbatch would read them as file name patterns)");
}

// At most 64 characters of `s` for a message, control characters shown as '?'.
std::string printable_prefix(const std::string& s) {
  std::string out = s.substr(0, 64);
  for (char& c : out)
    if (is_control(c)) c = '?';
  return out;
}

bool env_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 256 || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// A command line bash -c runs; `may_be_empty` for an optional one.
void check_command(const std::string& field, const std::string& command, bool may_be_empty) {
  if ((command.empty() && !may_be_empty) || command.size() > kMaxCommand)
    refuse(field, may_be_empty ? "must have at most 65536 characters" : "must have 1 to 65536 characters");
  for (char c : command)
    if (is_control(c) && c != '\n' && c != '\t')
      refuse(field, "must not contain control characters other than tab and newline");
}

}  // namespace

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

void check_partition_name(const std::string& partition) {
  // no leading '-': the name is an argument of sinfo/sbatch options and must never look like one
  bool ok = !partition.empty() && partition.size() <= 64 && partition[0] != '-';
  for (char c : partition)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
          c == '.'))
      ok = false;
  if (!ok)
    throw InvalidArgument("'" + printable_prefix(partition) +
                          "' is not a valid Slurm partition name: use 1 to 64 letters, digits, '_', '-' and '.', "
                          "not starting with '-'.");
}

int minutes_for_seconds(long long seconds) {
  if (seconds <= 0) return 1;
  long long minutes = (seconds + 59) / 60;
  return minutes > kMaxMinutes ? kMaxMinutes : static_cast<int>(minutes);
}

BatchSubmission render_batch_job(const BatchJob& job) {
  check_text("the job name", job.name, 1, 200);
  check_text("the comment", job.comment, 0, 1000);
  if (!job.partition.empty()) check_partition_name(job.partition);
  if (job.node_count < 1 || job.node_count > kMaxNodes)
    refuse("the node count", "must be from 1 to " + std::to_string(kMaxNodes));
  if (job.time_limit_minutes && (*job.time_limit_minutes < 1 || *job.time_limit_minutes > kMaxMinutes))
    refuse("the time limit", "must be from 1 to " + std::to_string(kMaxMinutes) + " minutes");
  if (job.node_list.size() > 4096 || job.node_list.find_first_not_of(kHostListCharacters) != std::string::npos ||
      (!job.node_list.empty() && job.node_list[0] == '-'))
    refuse("the node list", "must be a Slurm host list: up to 4096 letters, digits and '_.-,[]', no leading '-'");
  if (job.gpus_per_node < 0 || job.gpus_per_node > 1024) refuse("the GPUs per node", "must be from 0 to 1024");
  if (job.nice < -kMaxNice || job.nice > kMaxNice)
    refuse("the nice value", "must be from -" + std::to_string(kMaxNice) + " to " + std::to_string(kMaxNice));
  check_path("the working folder", job.work_dir, false);
  check_path("the stdout path", job.stdout_path, true);
  check_path("the stderr path", job.stderr_path, true);
  if (job.environment.size() > kMaxEnv)
    refuse("the environment", "must have at most " + std::to_string(kMaxEnv) + " variables");
  for (const auto& [name, value] : job.environment) {
    if (!env_name_ok(name))
      refuse("the environment variable name '" + printable_prefix(name) + "'",
             "must be 1 to 256 letters, digits and '_', not starting with a digit");
    if (value.size() > kMaxEnvValue || value.find('\0') != std::string::npos)
      refuse("the value of " + name, "must be at most 64 KiB without NUL characters");
  }
  check_command("the command line", job.command_line, false);
  check_command("the cleanup command line", job.cleanup_command_line, true);

  BatchSubmission out;
  auto& o = out.sbatch_options;
  o.push_back("--job-name=" + job.name);
  if (!job.comment.empty()) o.push_back("--comment=" + job.comment);
  if (!job.partition.empty()) o.push_back("--partition=" + job.partition);
  o.push_back("--nodes=" + std::to_string(job.node_count));
  if (job.exclusive) o.push_back("--exclusive");
  if (job.oversubscribe) o.push_back("--oversubscribe");
  if (!job.node_list.empty()) o.push_back("--nodelist=" + job.node_list);
  if (!job.requeue) o.push_back("--no-requeue");
  if (job.time_limit_minutes) o.push_back("--time=" + std::to_string(*job.time_limit_minutes));
  if (job.nice != 0) o.push_back("--nice=" + std::to_string(job.nice));
  if (job.gpus_per_node > 0) o.push_back("--gres=gpu:" + std::to_string(job.gpus_per_node));
  o.push_back("--chdir=" + job.work_dir.string());
  o.push_back("--output=" + job.stdout_path.string());
  o.push_back("--error=" + job.stderr_path.string());
  // The job's variables are exported by the script, not with --export, which splits its value at
  // every comma (docs/slurm.md).
  o.push_back("--export=ALL");

  std::string& s = out.script;
  s = "#!/bin/bash\n# Generated by batchai; the sbatch options are given on sbatch's command line.\n";
  for (const auto& [name, value] : job.environment) s += "export " + name + "=" + shell_quote(value) + "\n";
  if (job.cleanup_command_line.empty()) {
    s += "exec /bin/bash -c " + shell_quote(job.command_line) + "\n";
    return out;
  }
  // The shell outlives the command so that the cleanup runs however the command ended, also
  // SIGKILLed. A trap (not an ignored signal, which the command would inherit) keeps scancel's
  // and the time limit's SIGTERM from ending the shell first; the command gets them as well.
  s += "trap : TERM INT HUP\n";
  s += "/bin/bash -c " + shell_quote(job.command_line) + "\n";
  s += "status=$?\n";
  s += "/bin/bash -c " + shell_quote(job.cleanup_command_line) + "\n";
  s += "exit $status\n";
  return out;
}

}  // namespace batchai::slurm
