// A Slurm job's exchange folder (docs/adr/0006-store-stays-on-the-login-host.md): `jobs/<key>/` in
// the shared folder that every node mounts at the same path. It is the only channel between the
// login host, whose batchai alone opens the store, and the job's runner on the allocation's first
// node, which never does:
//   run.json         the run's inputs (job document, secrets, cluster), written before sbatch (0600)
//   slurm-job-id     the Slurm job id, once sbatch answered: the runner checks its allocation by it
//   claim            made once, by exclusive create, by the runner that starts the run
//   run.lock         flocked by that runner while the run goes on
//   started.json     where the run's files are and its nodes, before any task starts
//   outcome.json     how the run ended; the first one written stays (link(2))
//   stop             the login host asks the runner to stop the tasks (terminate, delete)
//   slurm-batch.log  Slurm's own output of the batch script
// Files are written to a temporary name and renamed, or linked: NFS keeps both atomic.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace batchai::control_plane::jobs_detail {

using Json = nlohmann::json;

class RunExchange {
 public:
  explicit RunExchange(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path batch_log() const { return dir_ / "slurm-batch.log"; }
  std::filesystem::path lock_file() const { return dir_ / "run.lock"; }

  // The login host. Writes throw SystemError, "SharedFolderFull" when the disk is full.
  void write_inputs(const Json& inputs) const;
  void write_slurm_id(std::uint64_t id) const;
  void request_stop() const;
  // Once the job has ended: its inputs (and the secrets in them) are removed from the shared folder.
  void forget_inputs() const;

  // What the runner recorded: nullopt while it has not (or the file is unreadable or malformed).
  std::optional<std::string> claim() const;
  std::optional<Json> started() const;
  std::optional<Json> outcome() const;
  // The last line of Slurm's output of the batch script (bounded), '' when there is none.
  std::string batch_log_tail() const;

  // The runner. inputs() throws SystemError saying what is missing, and why that may be.
  Json inputs() const;
  std::optional<std::uint64_t> slurm_id() const;
  // True for the one runner whose exclusive create of `claim` succeeded.
  bool try_claim(const std::string& who) const;
  void record_started(const Json& started) const;
  // True when this call's outcome is the one recorded (none was before).
  bool record_outcome(const Json& outcome) const;
  bool stop_requested() const;

 private:
  std::filesystem::path dir_;
};

}  // namespace batchai::control_plane::jobs_detail
