// The Slurm part of a reconcile, kept in its lane (docs/slurm.md, "When the controller does not
// answer"): only the Slurm clusters a command shows or changes are asked, within one short budget,
// and not at all while their controller is backing off. The back-off lives in the store, so every
// process of the home (CLI commands, `batchai serve`) shares it.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/slurm/client.hpp"
#include "store/rows.hpp"
#include "slurm_env.hpp"

namespace batchai::control_plane::detail {

// All the Slurm commands one batchai command runs on its way (a reconcile, a cancel, a create's
// probe) share this much time: past it the controller counts as silent.
inline constexpr std::chrono::milliseconds kSlurmBudget{1500};
// A silent controller is not asked again for this long, by any process of the home.
inline constexpr std::int64_t kSilentControllerBackoffUs = 10LL * 1000 * 1000;

// What is left of one command's time for Slurm (real time: Slurm's commands are real processes).
class SlurmBudget {
 public:
  explicit SlurmBudget(std::chrono::milliseconds total = kSlurmBudget);
  // Client options whose per-command bound is the time left.
  slurm::ClientOptions options() const;
  // Too little left to start another command (one that could only time out).
  bool spent() const;

 private:
  std::chrono::steady_clock::time_point deadline_;
};

// True for the client's "the controller does not answer" (a refused connection or the bound).
bool is_silent_controller(const Error& e);

// The errors entry the controller's silence put on its clusters and jobs while it backs off;
// nullopt when it is not backing off at `now_us`.
std::optional<Json> silent_controller_entry(const SlurmEnv& env, std::int64_t now_us);
// Throws SlurmControllerUnreachable when the controller is backing off (a command that cannot do
// its work without Slurm, such as a cluster create, says so at once).
void refuse_while_silent(const SlurmEnv& env);
// The controller did not answer: every process backs off, every Slurm cluster and unfinished job
// gets an `errors` entry saying its state is the last known one.
void record_silent_controller(const SlurmEnv& env, const Error& e);

// A Slurm job to cancel once its controller answers again (a terminate or delete it missed); it
// is cancelled only while the id still names the job `job_key` submitted (slurm::is_same_job).
void queue_slurm_cancel(const SlurmEnv& env, std::uint64_t slurm_job_id, const std::string& job_key);

// Brings the named Slurm clusters (row ids) and their jobs up to date from Slurm: nodes (sinfo),
// job states (squeue), submissions (sbatch), missed cancels; within kSlurmBudget, and nothing at
// all while the controller backs off. An empty list asks nothing and costs nothing.
void reconcile_slurm(const SlurmEnv& env, const std::vector<std::int64_t>& clusters);

}  // namespace batchai::control_plane::detail
