// What the Slurm engine works with: the control plane's context and the controller it talks to,
// as the composition root configured it (which slurm.conf; through the context's launcher).
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "batchai/slurm/client.hpp"
#include "context.hpp"

namespace batchai::control_plane::detail {

class SlurmBudget;

class SlurmEnv {
 public:
  SlurmEnv(const Context& cx, std::optional<std::filesystem::path> slurm_conf)
      : cx_(cx), slurm_conf_(std::move(slurm_conf)) {}

  // A client whose every command is bounded by what is left of `budget`.
  slurm::SlurmClient client(const SlurmBudget& budget) const;
  // The controller as the back-off is keyed: its slurm.conf, '' for the system's.
  std::string controller_key() const { return slurm_conf_ ? slurm_conf_->string() : std::string(); }

  const Context& context() const { return cx_; }
  Store& store() const { return cx_.store(); }
  const Clock& clock() const { return cx_.clock(); }
  const NodeLayout& layout() const { return cx_.layout(); }
  const Settings& settings() const { return cx_.settings(); }
  ProcessLauncher& launcher() const { return cx_.launcher(); }

 private:
  const Context& cx_;
  std::optional<std::filesystem::path> slurm_conf_;
};

}  // namespace batchai::control_plane::detail
