// The executable's one composition function (docs/architecture.md: no global singletons).
#include "compose.hpp"

#include <cstdlib>

#include "batchai/common/clock.hpp"
#include "batchai/common/process.hpp"
#include "batchai/control_plane/control_plane.hpp"
#include "batchai/serve/serve_plugin.hpp"
#include "batchai/train/trainer_plugin.hpp"

namespace batchai::cli {

std::filesystem::path plugin_folder(const std::filesystem::path& exe_dir) {
  if (exe_dir.empty()) return {};
  std::error_code ec;
  // An install (cmake --install, the Debian package): <prefix>/bin/batchai, <prefix>/lib/batchai/.
  // One folder for every plugin, so that a build and an install never mix.
  std::filesystem::path installed = exe_dir.parent_path() / "lib" / "batchai";
  if (std::filesystem::is_directory(installed, ec)) return installed;
  return exe_dir;  // a build tree: the plugins are written beside the executable
}

PluginPaths locate_plugins() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = plugin_folder(ec ? std::filesystem::path() : exe.parent_path());
  PluginPaths p;
  if (!dir.empty()) {
    p.trainer = dir / train::kTrainerPluginFile;
    p.serve = dir / serve::kServePluginFile;
  }
  if (const char* env = std::getenv("BATCHAI_CUDA_PLUGIN"); env != nullptr && *env != '\0') {
    p.cuda = env;
    p.cuda_from_environment = true;
  } else if (!dir.empty()) {
    p.cuda = dir / train::kCudaPluginFile;
  }
  return p;
}

std::unique_ptr<CliContext> compose() {
  std::shared_ptr<Clock> clock = make_process_clock();
  std::shared_ptr<ProcessLauncher> launcher = make_posix_process_launcher();
  // Opened on first use: help and argument errors never create or lock the store.
  auto factory = [clock, launcher] {
    return control_plane::ControlPlane::open(control_plane::Settings::from_environment(),
                                             control_plane::Services{clock, launcher});
  };
  return std::make_unique<CliContext>(std::move(factory), std::move(launcher), locate_plugins());
}

}  // namespace batchai::cli
