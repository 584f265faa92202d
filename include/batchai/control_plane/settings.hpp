// What the control plane is opened with: its configuration (Settings, read once from the
// environment or set by a test) and the implementations it works through (Services). Apart from
// the control_plane.hpp façade so that the parts beneath it (the context, rows, engines, rules)
// can take them without pulling in every service's header.
#pragma once
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "batchai/common/clock.hpp"

namespace batchai {
class ProcessLauncher;
}

namespace batchai::control_plane {

// Configuration, read once (from the environment by the composition root, or set by a test):
// BATCHAI_HOME (default ~/.batchai), BATCHAI_SIM_DELAY_S (default 3 s; 0 in tests),
// BATCHAI_CONTAINMENT (auto, cgroup or subreaper), BATCHAI_SUBSCRIPTION_ID, SLURM_CONF.
struct Settings {
  std::filesystem::path home;
  // What every node of a Slurm cluster mounts at the same path: storage, cluster and job folders
  // ($BATCHAI_SHARED_DIR); empty: the home. The store never goes there (docs/adr/0006).
  std::filesystem::path shared;
  const std::filesystem::path& shared_dir() const { return shared.empty() ? home : shared; }
  Micros provisioning_delay{std::chrono::seconds(3)};
  Micros node_preparation_delay{std::chrono::seconds(3)};
  // How a job's processes are contained (jobs/job_processes.hpp).
  std::string containment = "auto";
  // The slurm.conf of the controller Slurm-backed clusters use; none: the system's.
  std::optional<std::filesystem::path> slurm_conf;
  // The OS user the admin account defaults to, and the home whose ~/.ssh keys it uses.
  std::string user_name = "azureuser";
  std::filesystem::path user_home = ".";
  static Settings from_environment();
};

// The implementations the control plane works through, chosen once by the composition root
// (src/cli/compose.cpp) or by a test; passed on to the services.
struct Services {
  std::shared_ptr<Clock> clock;
  // Setup tasks, job supervisors and their processes, node exec, ssh-keygen, signals to process
  // groups, the engines' commands. Null: every operation that starts or signals a process refuses
  // (SystemError).
  std::shared_ptr<ProcessLauncher> launcher;
};

}  // namespace batchai::control_plane
