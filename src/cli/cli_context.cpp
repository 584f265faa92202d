// CliContext: lazily opened control plane and ownership of the registered commands.
#include "cli_context.hpp"

#include "command.hpp"

namespace batchai::cli {

CliContext::CliContext(ControlPlaneFactory factory, std::shared_ptr<ProcessLauncher> launcher, PluginPaths plugins)
    : factory_(std::move(factory)), launcher_(std::move(launcher)), plugins_(std::move(plugins)) {}

CliContext::~CliContext() = default;

control_plane::ControlPlane& CliContext::control_plane() {
  if (!control_plane_) control_plane_ = factory_();
  return *control_plane_;
}

Command& CliContext::own(std::unique_ptr<Command> command) {
  owned_.push_back(std::move(command));
  return *owned_.back();
}

std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    path = path.empty() ? a->get_name() : a->get_name() + " " + path;
  }
  return path;
}

}  // namespace batchai::cli
