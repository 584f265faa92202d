// What every command handler can reach: the global options of the invocation, the control plane
// (opened lazily, so --help and argument errors never touch the store) and the process launcher.
// Built once per process by the composition root (compose.cpp); passed by reference, never global.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "batchai/common/process.hpp"
#include "batchai/control_plane/control_plane.hpp"

namespace batchai::cli {

class Command;

// The plugins `batchai train` and `batchai serve` load, as the composition root located them.
struct PluginPaths {
  std::filesystem::path trainer;  // libbatchai_trainer.so in plugin_folder() (compose.hpp)
  std::filesystem::path serve;    // libbatchai_serve.so there
  std::filesystem::path cuda;     // libbatchai_cuda.so there, or the file $BATCHAI_CUDA_PLUGIN names
  bool cuda_from_environment = false;
};

// -o/--output, --query, --verbose, --debug, --only-show-errors, --subscription.
struct GlobalOptions {
  std::string output = "json";
  std::string query;
  bool verbose = false;
  bool debug = false;
  bool only_show_errors = false;
  std::string subscription;
};

class CliContext {
 public:
  using ControlPlaneFactory = std::function<std::unique_ptr<control_plane::ControlPlane>()>;

  CliContext(ControlPlaneFactory factory, std::shared_ptr<ProcessLauncher> launcher, PluginPaths plugins);
  ~CliContext();

  control_plane::ControlPlane& control_plane();
  ProcessLauncher& launcher() { return *launcher_; }
  const std::shared_ptr<ProcessLauncher>& launcher_shared() const { return launcher_; }
  const PluginPaths& plugins() const { return plugins_; }

  GlobalOptions globals;
  Command* selected = nullptr;   // the leaf command the parser chose
  CLI::App* help_app = nullptr;  // a group named without a subcommand: print its help
  std::map<const CLI::App*, Command*> commands;  // leaf apps → their Command

  // Owns the Command objects registered by the command files.
  Command& own(std::unique_ptr<Command> command);

 private:
  ControlPlaneFactory factory_;
  std::unique_ptr<control_plane::ControlPlane> control_plane_;
  std::shared_ptr<ProcessLauncher> launcher_;
  PluginPaths plugins_;
  std::vector<std::unique_ptr<Command>> owned_;
};

// Full command path of an app, e.g. "batchai cluster create".
std::string command_path(const CLI::App* app);

}  // namespace batchai::cli
