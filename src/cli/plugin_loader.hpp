// Loading the executable's plugins (libbatchai_trainer.so, libbatchai_serve.so) from the paths the
// composition root located: dlopen, dlsym of the one entry, and the error a plugin reports
// turned back into a batchai::Error (exceptions never cross a plugin's boundary).
#pragma once
#include <filesystem>
#include <string>

#include "batchai/common/errors.hpp"

namespace batchai::cli {

// An error raised inside a plugin, with the exit code it would have had here.
class PluginError : public Error {
 public:
  PluginError(const std::string& message, std::string code, int exit_code)
      : Error(message, std::move(code)), exit_code_(exit_code) {}
  int exit_code() const override { return exit_code_; }

 private:
  int exit_code_;
};

// The entry `entry` of the plugin at `path`, loaded and never closed. A missing or
// broken file throws SystemError naming it and the build target that writes it.
void* load_plugin_entry(const std::filesystem::path& path, const char* entry, int dlopen_flags,
                        const std::string& build_target);

// What to say when a plugin is missing, broken or from another build.
std::string plugin_rebuild_hint(const std::filesystem::path& path, const std::string& build_target);

}  // namespace batchai::cli
