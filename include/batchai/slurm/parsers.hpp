// Parsers of the Slurm commands' machine formats (docs/slurm.md, "Commands batchai runs"). Their
// input is another program's output, so every field is checked and bounded; a line that does not
// fit throws SystemError naming the command and what was wrong.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "batchai/slurm/states.hpp"

namespace batchai::slurm {

using JobId = std::uint32_t;

// One node of `sinfo -h -N -p P -o '%N|%T|%c|%m|%o'`. A line of the older 4-field format (no
// address) is refused like any other line that does not fit.
struct NodeInfo {
  std::string name;
  std::string slurm_state;  // as sinfo printed it, e.g. "down*"
  NodeState state = NodeState::unusable;
  int cpus = 0;
  std::int64_t memory_mb = 0;
  std::string address;      // Slurm's NodeAddr: 1..255 of [A-Za-z0-9.:-] (a host name, IPv4 or IPv6)
  int gpus = 0;             // GPUs among its generic resources (sinfo %G)
};
// The GPUs in a node's generic resources as sinfo %G prints them: "(null)", "gpu:4",
// "gpu:a100:2(S:0-1),nvme:1", ... (the counts of the "gpu" entries, summed; at most 1024).
int parse_gres_gpus(std::string_view gres);
std::vector<NodeInfo> parse_sinfo_nodes(std::string_view text);

// `ExitCode=a:b` of scontrol and the completion record: exit status a, killing signal b.
struct ExitStatus {
  int code = 0;
  int signal = 0;
  // The exit code Batch AI reports: the status, or 128 + the signal when one killed the job.
  int batchai_exit_code() const;
};
ExitStatus parse_exit_code(std::string_view text);

// What batchai knows of one Slurm job, from whichever source had it.
struct JobInfo {
  JobId id = 0;
  std::string slurm_state;  // first word: "CANCELLED by 0" -> "CANCELLED"
  std::string reason;       // Slurm's reason (squeue %r / scontrol Reason), may be empty
  std::optional<ExitStatus> exit;  // known once the job has ended (scontrol, completion record)
  int node_count = 0;
  std::string node_list;    // Slurm's compressed form, e.g. "node[1-2]"; empty while pending
  std::string work_dir;     // the folder it runs in (squeue %Z, WorkDir=); empty when not given
};

// False when Slurm says job `job.id` runs in a folder other than `work_dir`: the id now names
// another job (a controller that lost its state hands its ids out again). Only the last
// components are compared: a batchai job's folder is named by its unique key, and Slurm's
// Key=Value records fold repeated spaces. A record without a working folder counts as the job's.
bool is_same_job(const JobInfo& job, const std::filesystem::path& work_dir);

// The Batch AI outcome of what Slurm says of the job (map_job_state with its exit code).
JobOutcome outcome_of(const JobInfo& job);

// The squeue format parse_squeue_line reads. The working folder may hold '|' and the reason too:
// the folder ends at the last unit separator (0x1f; a reason holds no control characters, and
// the folders batchai submits none either), the reason follows it.
inline constexpr const char* kSqueueFormat = "%i|%T|%D|%N|%Z\x1f%r";
// One line of `squeue -h -t all -j ID -o kSqueueFormat`.
JobInfo parse_squeue_line(std::string_view line);

// `Key=Value Key=Value ...` as `scontrol show job -o` prints them. A word
// without '=' continues the previous value ("JobState=CANCELLED by 0"). Keys seen twice keep the
// first value.
std::map<std::string, std::string> parse_key_values(std::string_view line);

// One line of `scontrol show job -o ID`.
JobInfo parse_scontrol_job(std::string_view line);

// The sacct format parse_sacct_line reads (one line per job, -P: '|' between fields, no header).
inline constexpr const char* kSacctFormat = "JobIDRaw,State,ExitCode,NNodes,NodeList,Reason,WorkDir";
// One line of `sacct -n -P -X -j IDS -o kSacctFormat`; nullopt for a blank line.
std::optional<JobInfo> parse_sacct_line(std::string_view line);

// `scontrol show config`: "Key = Value" lines (the header and blank lines are skipped).
std::map<std::string, std::string> parse_scontrol_config(std::string_view text);

// "22.05.8" -> {22, 5}; throws SystemError when it is not a Slurm version.
struct SlurmVersion {
  int major = 0;
  int minor = 0;
  bool at_least(int want_major, int want_minor) const;
};
SlurmVersion parse_slurm_version(std::string_view text);

// The job id `sbatch --parsable` prints ("42" or "42;cluster").
JobId parse_sbatch_parsable(std::string_view text);

// A job id given by a caller or a user: decimal, 1..4294967294.
JobId parse_job_id(std::string_view text);

// Expands a Slurm host list ("node[1-3,5],gpu07") into names; bounded to `max_names`.
std::vector<std::string> expand_hostlist(std::string_view list, std::size_t max_names = 4096);

}  // namespace batchai::slurm
