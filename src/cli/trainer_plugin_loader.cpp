// The executable's side of the trainer plugin: find it beside the executable, check its ABI, run.
#include "trainer_plugin_loader.hpp"

#include <dlfcn.h>

#include <string>
#include <system_error>

#include "batchai/common/errors.hpp"
#include "batchai/train/trainer_plugin.hpp"

namespace batchai::cli {
namespace {

// An error the training raised inside the plugin, with the exit code it would have had here.
class TrainerError : public Error {
 public:
  TrainerError(const std::string& message, std::string code, int exit_code)
      : Error(message, std::move(code)), exit_code_(exit_code) {}
  int exit_code() const override { return exit_code_; }

 private:
  int exit_code_;
};

std::string rebuild_hint() {
  return "rebuild batchai (cmake --build <build> --target batchai) so that " + std::string(train::kTrainerPluginFile) +
         " is written beside it";
}

train::TrainerPluginEntry load_entry() {
  const std::filesystem::path path = trainer_plugin_path();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw SystemError("The trainer plugin " + path.string() + " is missing: " + rebuild_hint() + ".");
  // RTLD_GLOBAL: Open MPI's own components, which it dlopens, resolve symbols of libmpi and
  // libopen-pal through the global scope. The plugin itself exports only its entry.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw SystemError("The trainer plugin " + path.string() + " could not be loaded (" +
                      (why != nullptr ? why : "unknown reason") + "): " + rebuild_hint() + ".");
  }
  // Never closed: the process ends after the training.
  void* symbol = ::dlsym(handle, train::kTrainerPluginEntry);
  if (symbol == nullptr)
    throw SystemError("The trainer plugin " + path.string() + " has no entry point " + train::kTrainerPluginEntry +
                      ": " + rebuild_hint() + ".");
  return reinterpret_cast<train::TrainerPluginEntry>(symbol);
}

}  // namespace

std::filesystem::path trainer_plugin_path() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty())
    throw SystemError("Cannot find the trainer plugin: the path of this executable (/proc/self/exe) is unreadable (" +
                      ec.message() + ").");
  return exe.parent_path() / train::kTrainerPluginFile;
}

int run_trainer_plugin(const train::TrainOptions& options) {
  static const train::TrainerPluginEntry entry = load_entry();
  train::TrainerPluginError error;
  const int code = entry(train::kTrainerPluginAbi, sizeof(train::TrainOptions), &options, &error);
  if (code == train::kTrainerPluginAbiMismatch)
    throw SystemError("The trainer plugin " + trainer_plugin_path().string() + " was built for another batchai: " +
                      rebuild_hint() + ".");
  if (error.thrown) throw TrainerError(error.message, error.code, error.exit_code);
  return code;
}

}  // namespace batchai::cli
