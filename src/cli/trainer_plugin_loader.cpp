// The executable's side of the trainer plugin: load it from where compose() found it, check its ABI, run.
#include "trainer_plugin_loader.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "batchai/common/errors.hpp"
#include "batchai/train/trainer_plugin.hpp"
#include "plugin_loader.hpp"

namespace batchai::cli {

int run_trainer_plugin(const PluginPaths& plugins, train::TrainOptions options) {
  std::error_code ec;
  if (options.backend == "cuda" && plugins.cuda_from_environment && !std::filesystem::exists(plugins.cuda, ec))
    throw Error("--backend " + options.backend + ": BATCHAI_CUDA_PLUGIN names no file: " + plugins.cuda.string());
  options.cuda_plugin = plugins.cuda.string();
  // RTLD_GLOBAL: Open MPI's own components, which it dlopens, resolve symbols of libmpi and
  // libopen-pal through the global scope. The plugin itself exports only its entry.
  static const auto entry = reinterpret_cast<train::TrainerPluginEntry>(
      load_plugin_entry(plugins.trainer, train::kTrainerPluginEntry, RTLD_GLOBAL, "batchai"));
  train::TrainerPluginError error;
  const int code = entry(train::kTrainerPluginAbi, sizeof(train::TrainOptions), &options, &error);
  if (code == train::kTrainerPluginAbiMismatch)
    throw SystemError("The plugin " + plugins.trainer.string() + " was built for another batchai: " +
                      plugin_rebuild_hint(plugins.trainer, "batchai") + ".");
  if (error.thrown) throw PluginError(error.message, error.code, error.exit_code);
  return code;
}

}  // namespace batchai::cli
