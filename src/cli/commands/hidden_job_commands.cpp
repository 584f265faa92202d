// Hidden commands the job machinery runs itself (never typed by users):
//   batchai _supervise --job-key K                         the detached per-job supervisor
//   batchai _slurm-run --job-key K                         a Slurm job's batch script (docs/slurm.md)
//   batchai _slurm-cleanup --job-key K                     the script's last step, or a cleanup job's
//                                                          (container_cleanups.hpp): containers left
//   batchai _rank-exec --nodes-file F -- program args...   mpirun's per-rank wrapper
//   batchai _container-enter HOST command...               mpirun's launch agent in container jobs
// Ordinary commands of the tree, marked hidden; each returns its exit code to main.
#include "commands/hidden_job_commands.hpp"

#include <iostream>

#include "batchai/common/clock.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "batchai/control_plane/jobs.hpp"
#include "batchai/runtime/container_gateway.hpp"
#include "batchai/runtime/rank_exec.hpp"
#include "commands/common.hpp"

namespace batchai::cli {

namespace {

// Runs `body` for a job key checked before anything is opened or created; any failure is reported
// as `who` of the job with exit code 1.
template <typename Body>
CommandResult run_keyed(const std::string& key, const std::string& who, Body body) {
  int code = 0;
  try {
    if (!control_plane::is_job_key(key)) throw InvalidArgument("--job-key '" + key + "' is not a job key (a lower-case UUID).");
    code = body(key);
  } catch (const std::exception& e) {
    std::cerr << "ERROR: " << who << " of job " << key << ": " << e.what() << std::endl;
    code = 1;
  }
  return CommandResult::exit_code_only(code);
}

// A hidden command run by the job machinery with one job key (run_keyed).
void add_job_key_command(CLI::App& root, CliContext& ctx, const std::string& name, const std::string& description,
                         const std::string& who, int (control_plane::ControlPlane::*run)(const std::string&)) {
  add_command(root, ctx, name, description)
      .hidden()
      .option("--job-key", "The job's key (a lower-case UUID).", required())
      .handler([&ctx, who, run](const Args& a) -> CommandResult {
        return run_keyed(a.str("job-key"), who, [&](const std::string& key) { return (ctx.control_plane().*run)(key); });
      });
}

}  // namespace

void register_hidden_job_commands(CLI::App& root, CliContext& ctx) {
  add_job_key_command(root, ctx, "_supervise", "Run a job's supervisor (internal).", "supervisor",
                      &control_plane::ControlPlane::supervise);
  // On a compute host: the store is never opened there (docs/adr/0006), so no control plane either.
  for (const auto& [name, step] : {std::pair{"_slurm-run", control_plane::SlurmRunStep::kRun},
                                    std::pair{"_slurm-cleanup", control_plane::SlurmRunStep::kCleanUp}}) {
    add_command(root, ctx, name, step == control_plane::SlurmRunStep::kRun
                                     ? "Run a job inside its Slurm allocation (internal)."
                                     : "Remove the containers a job's Slurm runner left (internal).")
        .hidden()
        .option("--job-key", "The job's key (a lower-case UUID).", required())
        .handler([&ctx, step](const Args& a) -> CommandResult {
          return run_keyed(a.str("job-key"), "Slurm runner", [&](const std::string& key) {
            return control_plane::run_in_slurm_allocation(control_plane::Settings::from_environment(),
                                                          {make_process_clock(), ctx.launcher_shared()}, key, step);
          });
        });
  }

  // The program's own arguments must pass untouched (CLI11 would reorder what it does not
  // know), so the command takes its words verbatim and run_rank_exec reads them itself.
  add_command(root, ctx, runtime::kRankExecCommand, "Run one MPI rank in its node (internal).")
      .hidden()
      .arguments(ArgumentStyle::kVerbatim)
      .handler([](const Args& a) { return CommandResult::exit_code_only(runtime::run_rank_exec(a.verbatim())); });
  add_command(root, ctx, runtime::kContainerEnterCommand, "Run a command in a node's container of an MPI job (internal).")
      .hidden()
      .arguments(ArgumentStyle::kVerbatim)
      .handler([](const Args& a) { return CommandResult::exit_code_only(runtime::run_container_enter(a.verbatim())); });
}

}  // namespace batchai::cli
