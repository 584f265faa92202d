// One Slurm batch job from a plain description: the options go to sbatch as argv elements (exact,
// nothing for a shell or for sbatch's #SBATCH parser to re-read) and the script body exports the
// environment and runs the command (docs/slurm.md, "Submitting a job").
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace batchai::slurm {

struct BatchJob {
  std::string name;              // --job-name: printable, no newline, 1..200 characters
  std::string comment;           // --comment: printable, no newline, up to 1000 characters
  std::string partition;         // --partition; empty = Slurm's default partition
  int node_count = 1;            // --nodes: 1..1000
  bool exclusive = true;         // --exclusive: the job owns its nodes, as a Batch AI job does
  bool oversubscribe = false;    // --oversubscribe: may share its nodes with other jobs
  std::string node_list;         // --nodelist: Slurm's host list (letters, digits, "_.-,[]"), up to
                                 // 4096 characters; empty = where Slurm places it
  bool requeue = false;          // false: --no-requeue, a job whose node fails ends NODE_FAIL and
                                 // never runs twice (docs/slurm.md)
  std::optional<int> time_limit_minutes;  // --time in minutes, 1..525600 (a year); none = the partition's
  int nice = 0;                  // --nice: -10000..10000 (below 0 needs a Slurm operator)
  int gpus_per_node = 0;         // --gres=gpu:N when above 0: 0..1024
  std::filesystem::path work_dir;     // --chdir: absolute
  std::filesystem::path stdout_path;  // --output: absolute, no '%' or '\' (sbatch would expand them)
  std::filesystem::path stderr_path;  // --error: same rules
  std::map<std::string, std::string> environment;  // exported by the script; names [A-Za-z_][A-Za-z0-9_]*
  std::string command_line;      // run by bash -c as Batch AI's commandLine is; no NUL or control
                                 // characters other than tab and newline, up to 64 KiB
  std::string cleanup_command_line;  // when set: run by bash -c after command_line however that
                                     // ended (also SIGKILLed); the script exits with the command's
                                     // status. Same rules as command_line; empty: none
};

struct BatchSubmission {
  std::vector<std::string> sbatch_options;  // e.g. "--job-name=...", "--nodes=2", ...
  std::string script;                       // the batch script's text
};

// Checks every field (InvalidArgument naming the field and the rule) and renders the submission.
BatchSubmission render_batch_job(const BatchJob& job);

// A partition name as batchai accepts it: 1..64 letters, digits, '_', '-' and '.', no leading '-'.
void check_partition_name(const std::string& partition);

// maxWallClockTime in seconds -> Slurm's whole minutes, rounded up (Slurm's --time has minute
// granularity); at least 1.
int minutes_for_seconds(long long seconds);

// `text` as one single-quoted bash word.
std::string shell_quote(const std::string& text);

}  // namespace batchai::slurm
